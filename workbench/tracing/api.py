"""The Python API for notebooks and scripts, and the one import function the CLI and the window call.

    import torch
    from workbench.tracing import step_from_torch, analyze, compare

    with torch.device("meta"):
        model = MyModel()
        x = torch.randn(8, 1024, 768)
    step = step_from_torch(model, x, backward=True, optimizer="adamw")
    analyze(step, "h100-sxm")                  # step time, critical path, exposed communication
    compare(step, ["h100-sxm", "a100-sxm-80gb"])  # the step's time on each device

Each result shows itself as a table in Jupyter (`_repr_html_`) and as text
(`str`); the figures are those `workbench step` and the Timeline compute.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

from workbench.tracing.trace import DEFAULT_BUCKET_MIB, TracedStep, TracingError, trace_model
from workbench.model.units import format_time

TOP_OPERATIONS = 10


def step_from_torch(
    model: Any,
    *inputs: Any,
    backward: bool = False,
    optimizer: str | None = None,
    data_parallel: int = 1,
    bucket_mib: float = DEFAULT_BUCKET_MIB,
    **kwargs: Any,
) -> TracedStep:
    """Trace `model(*inputs, **kwargs)` on the meta device (parameters and inputs must be there) into a step."""
    return trace_model(model, inputs, kwargs, backward=backward, optimizer=optimizer, data_parallel=data_parallel,
                       bucket_mib=bucket_mib, description=f"Traced from {type(model).__name__} by step_from_torch")


def _plan(step: Any) -> Any:
    from workbench.steps import StepPlan, parse_step

    if isinstance(step, TracedStep):
        return step.plan()
    if isinstance(step, StepPlan):
        return step
    if isinstance(step, str):
        return parse_step(step)
    raise TracingError("a step is a TracedStep, a StepPlan or step text")


def _device(device: Any) -> Any:
    from workbench.model.devices.catalogue import Device, find_device

    return device if isinstance(device, Device) else find_device(str(device))


@dataclass(frozen=True)
class StepAnalysis:
    """A step laid out on one device: the Timeline's figures, shown as a table."""

    timeline: Any  # workbench.steps.Timeline
    device: Any

    @property
    def step_time(self) -> float:
        return float(self.timeline.step_time)

    def top(self, count: int = TOP_OPERATIONS) -> list[Any]:
        return sorted(self.timeline.placed, key=lambda p: -p.duration)[:count]

    def __str__(self) -> str:
        t = self.timeline
        lines = [f"{self.device.name}: step time {format_time(t.step_time)}, {len(t.placed):,} operations, "
                 f"critical path {len(t.critical_path):,} operations",
                 f"communication exposed {format_time(t.exposed_communication)}, hidden {format_time(t.hidden_communication)}"]
        lines += [f"  {p.name}  {format_time(p.duration)}  {t.plan[p.name].declaration}" for p in self.top()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        t = self.timeline
        rows = "".join(
            f"<tr><td>{html.escape(p.name)}</td><td>{html.escape(p.stream)}</td><td>{format_time(p.duration)}</td>"
            f"<td>{p.duration / t.step_time:.1%}</td><td><code>{html.escape(str(t.plan[p.name].declaration))}</code></td></tr>"
            for p in self.top()
        )
        return (
            f"<p><b>{html.escape(self.device.name)}</b>: step time {format_time(t.step_time)}, {len(t.placed):,} operations; "
            f"communication exposed {format_time(t.exposed_communication)}, hidden {format_time(t.hidden_communication)}</p>"
            "<table><tr><th>Operation</th><th>Stream</th><th>Time</th><th>Share</th><th>Declaration</th></tr>"
            f"{rows}</table>"
        )


def analyze(step: Any, device: Any) -> StepAnalysis:
    """The step (TracedStep, StepPlan or text) laid out on a catalogue device: its bounds, as `workbench step` lays it out."""
    from workbench.steps import step_timeline

    found = _device(device)
    return StepAnalysis(step_timeline(_plan(step), found), found)


@dataclass(frozen=True)
class StepComparison:
    """One step's analysis on each of several devices."""

    analyses: tuple[StepAnalysis, ...]

    def __str__(self) -> str:
        return "\n".join(
            f"{a.device.key:<16} step {format_time(a.step_time):>10}  exposed communication "
            f"{format_time(a.timeline.exposed_communication)}"
            for a in self.analyses
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(a.device.name)}</td><td>{format_time(a.step_time)}</td>"
            f"<td>{format_time(a.timeline.exposed_communication)}</td><td>{format_time(a.timeline.hidden_communication)}</td></tr>"
            for a in self.analyses
        )
        return ("<table><tr><th>Device</th><th>Step time</th><th>Exposed communication</th><th>Hidden communication</th></tr>"
                f"{rows}</table>")


def compare(step: Any, devices: Sequence[Any] | str) -> StepComparison:
    """The step on each device (keys as `workbench devices` lists them, or "h100-sxm,a100-sxm-80gb")."""
    from workbench.documents.device_compare import resolve_devices

    plan = _plan(step)
    found = resolve_devices(devices) if isinstance(devices, str) else [_device(d) for d in devices]
    return StepComparison(tuple(analyze(plan, device) for device in found))


def _traced_html(step: TracedStep) -> str:
    counts = "".join(f"<tr><td>{html.escape(op)}</td><td>{count:,}</td></tr>" for op, count in sorted(step.counts().items()))
    unmapped = "".join(f"<li>{html.escape(op.text())}</li>" for op in step.unmapped)
    return (f"<p>{html.escape(step.description)}: {step.calls:,} ATen calls, {len(step.lines):,} operations</p>"
            f"<table><tr><th>Declaration</th><th>Operations</th></tr>{counts}</table>"
            + (f"<p>Without a declaration (no bound):</p><ul>{unmapped}</ul>" if unmapped else ""))


TracedStep._repr_html_ = _traced_html  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ImportResult:
    """What `workbench import-torch` and File ▸ Import PyTorch model… produce."""

    step: TracedStep
    seconds: float  # building and tracing the model
    output: str | None = None
    analysis: StepAnalysis | None = None

    def summary_text(self) -> str:
        step = self.step
        kinds = ", ".join(f"{op} {count:,}" for op, count in sorted(step.counts().items(), key=lambda item: -item[1]))
        unmapped = sum(op.count for op in step.unmapped)
        lines = [step.description,
                 f"{step.calls:,} ATen calls traced in {self.seconds:.1f} s: {len(step.lines):,} operations ({kinds}); "
                 f"{step.free:,} views and allocations; {unmapped:,} without a declaration"]
        lines += [f"  unmapped: {op.text()}" for op in step.unmapped]
        if self.output:
            lines.append(f"wrote {self.output}")
        if self.analysis is not None:
            lines.append(str(self.analysis))
        return "\n".join(lines)

    # by hand: figures counted from the traced step, and its timeline's own dict
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "description": self.step.description,
            "aten_calls": self.step.calls,
            "operations": len(self.step.lines),
            "free": self.step.free,
            "by_declaration": self.step.counts(),
            "unmapped": [{"op": op.op, "count": op.count, "shapes": list(op.shapes), "reason": op.reason} for op in self.step.unmapped],
            "trace_seconds": self.seconds,
            "output": self.output,
        }
        if self.analysis is not None:
            out["device"] = self.analysis.device.key
            out["timeline"] = self.analysis.timeline.to_dict()
        return out


def run_import(
    source: str,
    *,
    function: str | None = None,
    batch: int = 1,
    sequence: int = 1024,
    dtype: str | None = None,
    backward: bool = False,
    optimizer: str | None = None,
    data_parallel: int = 1,
    bucket_mib: float = DEFAULT_BUCKET_MIB,
    output: str | None = None,
    device: str | None = None,
) -> ImportResult:
    """Trace the model SOURCE names, write the step to `output` if given, lay it out on `device` if given."""
    from workbench.tracing.sources import TraceRequest, trace_request

    if device is not None and output is None:
        raise TracingError("--device lays out the step written with -o/--output: give both, or neither")
    found = _device(device) if device is not None else None  # a bad key refused before minutes of tracing
    if output is not None and os.path.isdir(output):
        raise TracingError(f"{output} is a folder: -o names the step file to write")
    started = time.perf_counter()
    step = trace_request(TraceRequest(source, function, batch, sequence, backward, optimizer, data_parallel, bucket_mib, dtype))
    seconds = time.perf_counter() - started
    if output is not None:
        from workbench.documents.session import write_atomic

        write_atomic(output, step.text().encode("utf-8"), "step file")
    analysis = analyze(step, found) if found is not None else None
    return ImportResult(step, seconds, output, analysis)
