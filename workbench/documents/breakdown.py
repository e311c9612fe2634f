"""Where the time goes: a step's operations grouped by module and by kind, with their work, bound and time.

An operation's module is its name up to the last '.' (`layers.3.mlp.down_proj.addmm` belongs to
`layers.3.mlp.down_proj`; a name without a '.' to the step itself, shown as '(step)'). Its kind follows
its declaration's operation: the matmul family is GEMM, then attention, norm (RMS and layer norm),
softmax, pointwise (elementwise and the streaming ops), reduction, convolution, and communication (a
collective: its bytes cross a link between chips).

Each group gives its operations' count, FLOP and bytes (workbench.model.analysis.analyze, the numbers every
page shows), the sum of their bounds on the device, the sum of their times in the step (the timeline's:
a matched trace's measured time where there is one, else a run's median, else the bound), its share of
the operations' total time (so the shares of a table add up to 100 %; overlapping streams make the step
shorter than that total), how many of its times are measured, and its limiter: the limiter behind the
largest part of the group's bound time, with the others' count where they differ.

One function (`where_time_goes`) computes it for the window, the CLI (`workbench step`) and the reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from workbench.model.analysis import analyze
from workbench.model.devices.catalogue import Device
from workbench.errors import WorkbenchError
from workbench.steps import BOUND, StepLine, Timeline
from workbench.model.units import format_bytes, format_flop, format_time
from workbench.records import record

MODULE, KIND = "module", "kind"
TOP_LEVEL = "(step)"
_KINDS = {
    "gemm": "GEMM", "einsum": "GEMM", "attention": "attention", "rmsnorm": "norm", "layernorm": "norm",
    "softmax": "softmax", "elementwise": "pointwise", "copy": "pointwise", "scale": "pointwise", "add": "pointwise",
    "triad": "pointwise", "axpy": "pointwise", "reduce": "reduction", "conv2d": "convolution",
}
COLUMNS = ("group", "count", "FLOP", "bytes", "bound", "time", "share of step", "measured", "limiter")


def operation_kind(op: StepLine) -> str:
    """GEMM, attention, norm, softmax, pointwise, reduction, convolution or communication (see the module's comment)."""
    if op.communication:
        return "communication"
    return _KINDS.get(op.declaration.op, op.declaration.op)


def operation_module(name: str) -> str:
    """The module an operation belongs to: its name up to the last '.'."""
    module, dot, _ = name.rpartition(".")
    return module if dot and module else TOP_LEVEL


@dataclass(frozen=True)
class Group:
    """One row of the table: a module or a kind, and the figures of its operations."""

    name: str
    count: int
    flop: int
    bytes: int
    bound_s: float | None  # None when an operation of the group has no bound (no device)
    time_s: float
    share: float  # of the operations' total time, 0–1
    measured: int  # operations timed by a trace or a run, not by their bound
    limiter: str


record(Group)


@dataclass(frozen=True)
class Breakdown:
    """The step's operations grouped both ways; each list by time, largest first."""

    total_s: float  # the operations' summed time: what the shares divide
    by_module: tuple[Group, ...]
    by_kind: tuple[Group, ...]

    def groups(self, by: str) -> tuple[Group, ...]:
        return self.by_module if by == MODULE else self.by_kind

    def text_lines(self, by: str = KIND) -> list[str]:
        """The table as text for the CLI: one group a line."""
        groups = self.groups(by)
        width = max([len(by)] + [len(group.name) for group in groups])
        lines = [f"where the time goes, by {by} (share of the operations' summed time {format_time(self.total_s)}):"]
        for group in groups:
            bound = format_time(group.bound_s) if group.bound_s is not None else "—"
            lines.append(
                f"  {group.name.ljust(width)}  {group.count:>5} ops  {format_flop(group.flop):>11}  {format_bytes(group.bytes):>9}  "
                f"bound {bound:>10}  time {format_time(group.time_s):>10}  {group.share * 100:5.1f} %  "
                f"{group.measured}/{group.count} measured  {group.limiter}"
            )
        return lines


# what the shares are of, said in the data itself
record(Breakdown, header={"share_of": "the operations' summed time"}, keys={"total_s": "operations_total_s"})


def _limiter(bounds: Mapping[str, float], counts: Mapping[str, int]) -> str:
    if not counts:
        return "—"
    main = max(counts, key=lambda name: (bounds.get(name, 0.0), counts[name], name))
    others = sum(count for name, count in counts.items() if name != main)
    return main + (f" (+{others} other)" if others == 1 else f" (+{others} others)" if others else "")


def where_time_goes(timeline: Timeline, device: Device | None) -> Breakdown:
    """Group the timeline's operations by module and by kind (see the module's comment). The bounds are on the
    GPU a matched trace ran on where the catalogue knows it (as the timeline's are), else on `device`."""
    if timeline.measured is not None and timeline.measured.ran_on is not None and timeline.measured.ran_on.device is not None:
        device = timeline.measured.ran_on.device
    rows = []
    figures: dict[str, tuple[int, int, str]] = {}  # per declaration text: a traced model repeats its layers' ops
    durations = {placed.name: placed.duration for placed in timeline.placed}
    for op in timeline.plan.operations:
        text = str(op.declaration)
        if text not in figures:
            try:
                analysis = analyze(op.declaration, device)
            except WorkbenchError:
                figures[text] = (0, 0, "no bound")
            else:
                figures[text] = (int(analysis.flop), int(analysis.bytes), str(analysis.limiter or "no bound"))
        flop, traffic, limiter = figures[text]
        time = timeline.times[op.name]
        rows.append((op, flop, traffic, time.bound_s, durations[op.name], time.source != BOUND, limiter))
    total = sum(row[4] for row in rows)

    def grouped(key: Any) -> tuple[Group, ...]:
        found: dict[str, list[Any]] = {}
        for row in rows:
            found.setdefault(key(row[0]), []).append(row)
        groups = []
        for name, members in found.items():
            bounds = [row[3] for row in members]
            limiter_bounds: dict[str, float] = {}
            limiter_counts: dict[str, int] = {}
            for row in members:
                limiter_bounds[row[6]] = limiter_bounds.get(row[6], 0.0) + (row[3] or 0.0)
                limiter_counts[row[6]] = limiter_counts.get(row[6], 0) + 1
            time = sum(row[4] for row in members)
            groups.append(Group(
                name, len(members), sum(row[1] for row in members), sum(row[2] for row in members),
                None if any(bound is None for bound in bounds) else sum(bounds), time,
                time / total if total > 0 else 0.0, sum(1 for row in members if row[5]),
                _limiter(limiter_bounds, limiter_counts),
            ))
        groups.sort(key=lambda group: (-group.time_s, group.name))
        return tuple(groups)

    return Breakdown(total, grouped(lambda op: operation_module(op.name)), grouped(operation_kind))


__all__ = ["COLUMNS", "KIND", "MODULE", "Breakdown", "Group", "operation_kind", "operation_module", "where_time_goes"]
