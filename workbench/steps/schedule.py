"""A step laid out in time: each operation's time (a matched trace interval, a measured run, or its bound),
the schedule on the streams, the critical path, the communication exposed, and what-if speed-ups."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from workbench.model.devices.catalogue import Device
from workbench.profilers.matching import MatchRule, kernel_base_name
from workbench.profilers.trace import Trace
from workbench.errors import WorkbenchError
from workbench.steps.language import StepError, StepPlan, parse_step
from workbench.steps.trace_match import MAX_UNMATCHED_SHOWN, MeasuredTrace, TraceMatch, match_torch_trace, match_trace, trace_device
from workbench.model.units import format_time

BOUND = "bound"
MEASURED = "measured"
TRACE = "trace"

# -- times --------------------------------------------------------------------


@dataclass(frozen=True)
class OperationTime:
    """How long one operation takes in the step, where the figure comes from, and its bound beside it."""

    seconds: float
    source: str  # BOUND, MEASURED or TRACE
    detail: str  # 'bound on NVIDIA H100 SXM (link-limited)', 'median of 30 samples, run r3', 'trace: …'
    bound_s: float | None = None  # the time bound on the step's device (None without a device)
    trace: "TraceMatch | None" = None  # the trace intervals behind a TRACE time

    @property
    def impossible(self) -> bool:
        """A measured or traced time faster than its bound (by more than the tolerance profile import and
        runs use): the match, the declaration or the device is wrong, not the bound."""
        from workbench.model.plausibility import is_beyond_bound

        return self.source != BOUND and bool(self.bound_s) and self.seconds > 0 and is_beyond_bound(self.bound_s / self.seconds)

    def impossible_text(self) -> str:
        return (f"IMPOSSIBLE: {self.seconds / self.bound_s:.2f}× its bound, faster than the device allows; "
                "check the match rule, the declaration and the device") if self.impossible and self.bound_s else ""


def operation_times(
    plan: StepPlan,
    device: Device | None,
    runs: Sequence[Any] = (),
    context: Any = None,
    measured: "MeasuredTrace | None" = None,
) -> dict[str, OperationTime]:
    """Each operation's time: its matched trace intervals, else the latest valid run's median on the
    step's device, else its bound. The bound is kept beside a measured or traced time.

    `runs` are stored run records (Session.runs); `context` a runs.FigureContext;
    `measured` a trace matched to this plan (`match_trace`).
    """
    from workbench.model.analysis import analyze

    medians = _measured_medians(runs, context) if runs else {}
    matches = measured.matches if measured is not None else {}
    times: dict[str, OperationTime] = {}
    bounds: dict[str, tuple[float | None, str, str | None]] = {}  # per declaration text: a model repeats its layers
    for op in plan.operations:
        text = str(op.declaration)
        bound: float | None = None
        limiter = ""
        problem: str | None = None
        if device is not None:
            if text not in bounds:
                try:
                    analysis = analyze(op.declaration, device)
                except WorkbenchError as exc:
                    bounds[text] = (None, "", str(exc))
                else:
                    bounds[text] = (analysis.bound_time, str(analysis.limiter), None)
            bound, limiter, error = bounds[text]
            if error is not None:
                problem = f"{op.name}: {error}"
            elif bound is None:
                problem = f"{op.name} has no bound on {device.name}"
        match = matches.get(op.name)
        if match is not None:
            times[op.name] = OperationTime(match.median_s, TRACE, match.detail(), bound, match)
        elif text in medians:
            found = medians[text]
            times[op.name] = OperationTime(found.seconds, MEASURED, found.detail, bound)
        elif device is None:
            raise StepError(f"{op.name} has no time: choose a device (--device), measure it or import a trace", op.line or None)
        elif problem is not None or bound is None:
            raise StepError(problem or f"{op.name} has no bound", op.line or None)
        else:
            times[op.name] = OperationTime(bound, BOUND, f"bound on {device.name} ({limiter}-limited)", bound)
    return times


def _measured_medians(runs: Sequence[Any], context: Any) -> dict[str, OperationTime]:
    """Declaration text → the latest valid run's median on the session's device."""
    from workbench.measure.runs import FigureContext, all_run_figures

    found: dict[str, OperationTime] = {}
    for figures in all_run_figures(runs, context or FigureContext()):
        run = figures.run
        if run.declaration is None or not run.valid or figures.stats is None or not figures.on_session_device:
            continue
        found[str(run.declaration)] = OperationTime(
            figures.stats.median_s,
            MEASURED,
            f"median of {len(run.samples_s)} samples, run {run.id}",
        )
    return found


# -- the timeline -------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """One operation placed in time."""

    name: str
    stream: str
    start: float
    end: float
    communication: bool

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class WhatIf:
    """What the step would take if one operation were 2× faster, and if it took no time (Amdahl's limit)."""

    if_2x_faster: float
    if_free: float


@dataclass(frozen=True)
class Timeline:
    """A step laid out in time: intervals, step time, critical path, exposed and hidden communication."""

    plan: StepPlan
    times: Mapping[str, OperationTime]
    placed: tuple[Placed, ...]
    step_time: float
    critical_path: tuple[str, ...]
    exposed_communication: float
    hidden_communication: float
    what_if: Mapping[str, WhatIf] = field(default_factory=dict)
    speedups: Mapping[str, float] = field(default_factory=dict)
    measured: "MeasuredTrace | None" = None  # the imported trace the times came from, if any

    def interval(self, name: str) -> Placed:
        found = self.__dict__.get("_intervals")
        if found is None:
            found = {item.name: item for item in self.placed}
            object.__setattr__(self, "_intervals", found)  # a cache of the frozen timeline's own data
        return found[name]

    def exposed_intervals(self) -> list[tuple[float, float]]:
        """Where communication runs and no computation does."""
        comm = _union([(p.start, p.end) for p in self.placed if p.communication])
        compute = _union([(p.start, p.end) for p in self.placed if not p.communication])
        return _subtract(comm, compute)

    # by hand: each operation's entry joins its interval, its time, its declaration and the what-ifs
    def to_dict(self) -> dict[str, Any]:
        """What `workbench step --json` prints."""
        out = {
            "step_time_s": self.step_time,
            "critical_path": list(self.critical_path),
            "exposed_communication_s": self.exposed_communication,
            "hidden_communication_s": self.hidden_communication,
            "operations": [
                {
                    "name": p.name,
                    "declaration": str(self.plan[p.name].declaration),
                    "start_s": p.start,
                    "end_s": p.end,
                    "stream": p.stream,
                    "time_s": p.duration,
                    "communication": p.communication,
                    "source": self.times[p.name].source,
                    "source_detail": self.times[p.name].detail,
                    "bound_s": self.times[p.name].bound_s,
                    "impossible": self.times[p.name].impossible,
                    "speedup": self.speedups.get(p.name, 1.0),
                    "if_2x_faster_s": self.what_if[p.name].if_2x_faster if p.name in self.what_if else None,
                    "if_free_s": self.what_if[p.name].if_free if p.name in self.what_if else None,
                    **({"trace": trace.to_dict(self.measured)} if (trace := self.times[p.name].trace) and self.measured else {}),
                }
                for p in self.placed
            ],
        }
        if self.measured is not None:
            out["trace"] = self.measured.to_dict()
        return out

    def summary_text(self) -> str:
        """The step in lines of text: the CLI's plain output."""
        width = max(len(p.name) for p in self.placed)
        lines = [
            f"step time {format_time(self.step_time)}; critical path {' → '.join(self.critical_path)}",
            f"communication exposed {format_time(self.exposed_communication)}, hidden behind computation {format_time(self.hidden_communication)}",
            "",
        ]
        for p in self.placed:
            what = self.what_if.get(p.name)
            time = self.times[p.name]
            beside = f"; bound {format_time(time.bound_s)}" if time.source != BOUND and time.bound_s else ""
            beside += f"; {time.impossible_text()}" if time.impossible else ""
            lines.append(
                f"  {p.name.ljust(width)}  {p.stream:<10} {format_time(p.start):>10} → {format_time(p.end):<10} "
                f"{format_time(p.duration):>10}  [{time.detail}{beside}]"
                + (f"  2× faster: {format_time(what.if_2x_faster)}, free: {format_time(what.if_free)}" if what else "")
            )
        if self.measured is not None:
            lines += ["", *_trace_lines(self.measured, self.times)]
        return "\n".join(lines)


def _durations(plan: StepPlan, times: Mapping[str, OperationTime], speedups: Mapping[str, float]) -> dict[str, float]:
    out = {}
    for op in plan.operations:
        factor = speedups.get(op.name, 1.0)
        out[op.name] = 0.0 if factor == float("inf") else times[op.name].seconds / factor
    return out


def _schedule(plan: StepPlan, durations: Mapping[str, float]) -> tuple[dict[str, tuple[float, float]], dict[str, str | None]]:
    """Start and end of each operation, and what made it wait (a dependency or its stream's previous one)."""
    placed: dict[str, tuple[float, float]] = {}
    waited_on: dict[str, str | None] = {}
    stream_last: dict[str, str] = {}
    for op in plan.operations:
        start, cause = 0.0, None
        for dependency in op.after:  # explicit dependencies first: they win ties
            if placed[dependency][1] > start or (cause is None and placed[dependency][1] == start and start > 0):
                start, cause = placed[dependency][1], dependency
        previous = stream_last.get(op.stream)
        if previous is not None and placed[previous][1] > start:
            start, cause = placed[previous][1], previous
        placed[op.name] = (start, start + durations[op.name])
        waited_on[op.name] = cause
        stream_last[op.stream] = op.name
    return placed, waited_on


def _what_if(plan: StepPlan, durations: Mapping[str, float]) -> dict[str, WhatIf]:
    """Each operation's WhatIf: the step time with it 2× faster and with it free, every one in time linear in
    the step's operations and dependencies (n log n with the heap below), not by laying the step out again
    once per operation (quadratic: a traced model's 12,000 lines).

    The step time is the longest chain of operations (each waits for what it comes after and for its
    stream's previous one). Changing one operation i changes only the chains through it: the new step time
    is the longer of (when i starts) + (its new time) + (the longest chain after it), and the longest chain
    that avoids i. Lines are in an order every chain follows, so a chain avoiding i lies wholly before it,
    wholly after it, or jumps over it by one dependency u → v with u before i and v after it: the first two
    are running maxima, the third a sweep over the dependencies spanning i. The figures equal a fresh
    layout's to rounding (the same sums, added in another order)."""
    import heapq

    ops = plan.operations
    count = len(ops)
    index = {op.name: i for i, op in enumerate(ops)}
    spans = [durations[op.name] for op in ops]
    waits: list[list[int]] = []
    stream_last: dict[str, int] = {}
    for i, op in enumerate(ops):
        before = [index[dependency] for dependency in op.after]
        previous = stream_last.get(op.stream)
        if previous is not None:
            before.append(previous)
        waits.append(before)
        stream_last[op.stream] = i
    starts = [0.0] * count
    ends = [0.0] * count
    for i in range(count):  # as _schedule adds: each start is the latest end it waits for
        starts[i] = max([0.0, *(ends[j] for j in waits[i])])
        ends[i] = starts[i] + spans[i]
    after: list[list[int]] = [[] for _ in range(count)]
    for i, before in enumerate(waits):
        for j in before:
            after[j].append(i)
    tails = [0.0] * count  # the longest chain that follows each operation (not counting it)
    whole = [0.0] * count  # the longest chain that starts with it
    for i in range(count - 1, -1, -1):
        tails[i] = max([0.0, *(whole[k] for k in after[i])])
        whole[i] = spans[i] + tails[i]
    earlier = [0.0] * (count + 1)  # the longest chain wholly before operation i: earlier[i]
    for i in range(count):
        earlier[i + 1] = max(earlier[i], ends[i])
    later = [0.0] * (count + 1)  # wholly after operation i: later[i + 1]
    for i in range(count - 1, -1, -1):
        later[i] = max(later[i + 1], whole[i])
    spanning: list[tuple[float, int]] = []  # dependencies u → v with u before the operation and v after it
    out: dict[str, WhatIf] = {}
    for i, op in enumerate(ops):
        if i:
            for k in after[i - 1]:
                heapq.heappush(spanning, (-(ends[i - 1] + whole[k]), k))
        while spanning and spanning[0][1] <= i:
            heapq.heappop(spanning)
        avoiding = max(earlier[i], later[i + 1], -spanning[0][0] if spanning else 0.0)
        out[op.name] = WhatIf(max(avoiding, starts[i] + spans[i] / 2 + tails[i]), max(avoiding, starts[i] + tails[i]))
    return out


def lay_out(
    plan: StepPlan,
    times: Mapping[str, OperationTime],
    speedups: Mapping[str, float] | None = None,
    measured: "MeasuredTrace | None" = None,
) -> Timeline:
    """The timeline of a step with given operation times; `speedups` divides an operation's time (what-if)."""
    speedups = dict(speedups or {})
    for name, factor in speedups.items():
        if not (factor > 0):
            raise StepError(f"the speed-up of {name} must be positive; got {factor}")
    durations = _durations(plan, times, speedups)
    placed, waited_on = _schedule(plan, durations)
    step_time = max(end for _, end in placed.values())
    last = max(enumerate(plan.operations), key=lambda item: (placed[item[1].name][1], -item[0]))[1].name
    path = [last]
    while waited_on[path[-1]] is not None:
        path.append(waited_on[path[-1]])  # type: ignore[arg-type]
    intervals = tuple(
        Placed(op.name, op.stream, placed[op.name][0], placed[op.name][1], op.communication) for op in plan.operations
    )
    comm = _union([(p.start, p.end) for p in intervals if p.communication])
    compute = _union([(p.start, p.end) for p in intervals if not p.communication])
    exposed = _length(_subtract(comm, compute))
    hidden = _length(comm) - exposed
    what_if = _what_if(plan, durations)
    return Timeline(plan, dict(times), intervals, step_time, tuple(reversed(path)), exposed, max(hidden, 0.0), what_if, speedups, measured)


def step_timeline(
    plan: StepPlan | str,
    device: Device | None,
    runs: Sequence[Any] = (),
    context: Any = None,
    speedups: Mapping[str, float] | None = None,
    trace: "Trace | None" = None,
    rules: Sequence[MatchRule] = (),
) -> Timeline:
    """Parse (if text), time each operation on `device` (from a matched trace interval, a run, or the
    bound) and lay the step out. `trace` is an imported Nsight Systems trace, `rules` its match rules."""
    parsed = parse_step(plan) if isinstance(plan, str) else plan
    measured = _match_any_trace(parsed, trace, rules) if trace is not None else None
    if measured is not None:
        ran_on = trace_device(measured.trace, device)
        if ran_on is not None:
            measured = replace(measured, ran_on=ran_on)
            device = ran_on.device or device  # the intervals ran on the trace's GPU: never mixed with another's bounds
    return lay_out(parsed, operation_times(parsed, device, runs, context, measured), speedups, measured)


def _match_any_trace(plan: StepPlan, trace: Trace, rules: Sequence[MatchRule]) -> MeasuredTrace:
    """A PyTorch trace is matched by its ATen ops (`match_torch_trace`), an Nsight Systems one by kernel names."""
    if getattr(trace, "format", "") != "torch":
        return match_trace(plan, trace, rules)
    if rules:
        raise StepError("match rules pair kernel names in Nsight Systems traces; a PyTorch trace is matched by ATen op: "
                        "start each line's comment with the op ('# aten::mm')")
    return match_torch_trace(plan, trace)


# -- intervals ----------------------------------------------------------------


def _union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _subtract(base: list[tuple[float, float]], cut: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Parts of the (merged) `base` intervals not covered by the (merged) `cut` intervals."""
    out: list[tuple[float, float]] = []
    for start, end in base:
        cursor = start
        for cut_start, cut_end in cut:
            if cut_end <= cursor or cut_start >= end:
                continue
            if cut_start > cursor:
                out.append((cursor, cut_start))
            cursor = max(cursor, cut_end)
        if cursor < end:
            out.append((cursor, end))
    return out


def _length(intervals: Iterable[tuple[float, float]]) -> float:
    return sum(end - start for start, end in intervals)

def _trace_lines(measured: MeasuredTrace, times: Mapping[str, OperationTime]) -> list[str]:
    """The trace beside the bounds, for the CLI: each matched operation, then what no operation took."""
    trace = measured.trace
    lines = [f"trace {trace.source} ({trace.format}): {len(trace):,} intervals on {len(trace.streams)} streams"
             + (f", ran on {measured.ran_on.gpu}" if measured.ran_on is not None else "")]
    if measured.ran_on is not None and measured.ran_on.note:
        lines.append(f"  note: {measured.ran_on.note}")
    for name, match in measured.matches.items():
        bound = times[name].bound_s if name in times else None
        versus = f", bound {format_time(bound)} ({match.median_s / bound:.2f}× the bound)" if bound else ""
        lines.append(f"  {name}: {format_time(match.median_s)} measured{versus}  [{match.detail()}; rule {match.rule}]")
        if name in times and times[name].impossible:
            lines.append(f"      {times[name].impossible_text()}")
        if not match.parts and kernel_base_name(match.first.name) != match.first.name:
            lines.append(f"      kernel: {match.first.name}")  # the full name: a template's tile shape, the arguments
        for part in match.parts:
            lines.append(f"      {part.rule}: {part.intervals} × {kernel_base_name(part.kernel)}, median {format_time(part.median_s)}")
    if measured.unmatched_operations:
        lines.append(f"  no interval matched: {', '.join(measured.unmatched_operations)}")
    if measured.unmatched:
        lines.append(f"  unmatched kernels ({len(measured.unmatched)} names):")
        for item in measured.unmatched[:MAX_UNMATCHED_SHOWN]:
            lines.append(f"    {item.count:>8,} × {format_time(item.total_s):>10} total  {item.name}")
        if len(measured.unmatched) > MAX_UNMATCHED_SHOWN:
            lines.append(f"    … and {len(measured.unmatched) - MAX_UNMATCHED_SHOWN} more")
    return lines

