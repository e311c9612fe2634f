"""A step, not a kernel: named operations on streams with dependencies, laid out in time.

A step is written one operation a line:

    # one data-parallel step: the gradient all-reduce overlaps backward
    fwd  = gemm(M=8192, N=8192, K=8192, dtype=bf16)
    ar1  = allreduce(n=2**27, dtype=bf16, ranks=8)   on comm   after fwd

`name = DECLARATION [on STREAM] [after a, b]`; `#` starts a comment; the
stream defaults to `compute`. Each stream runs its operations in the order of
the lines; an operation starts when every operation it comes after has
finished and its stream is free. Dependencies name earlier lines only, so a
step is acyclic by construction, and a name used before its line is reported
as a cycle (when that line depends back) or as a dependency on a later line.

Each operation's time is its interval in an imported Nsight Systems trace
where one is matched to it (`match_trace`, below), else its measured median
where a run of the same declaration on the step's device exists
(workbench/runs.py: run_figures), else its time bound
(workbench/analysis.py: analyze); the source is shown. The timeline gives the
step time, the critical path, the communication exposed (running while no
computation does) and hidden, and for each operation the step time if it
were 2× faster and if it took no time (Amdahl's limit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from itertools import compress
from typing import Any, Iterable, Iterator, Mapping, Sequence

from workbench.declare import Declaration, parse
from workbench.devices.catalogue import Device
from workbench.errors import WorkbenchError
from workbench.profilers.matching import MatchRule, kernel_base_name, operation_suggester
from workbench.profilers.names import kernel_base_names
from workbench.profilers.trace import KERNEL, KIND_NAMES, Interval, Trace
from workbench.units import format_time

DEFAULT_STREAM = "compute"
# A traced model's step (a Llama-style 8B training step is about 12,000 ATen operations) fits; a hostile file
# is refused before it is parsed. docs/session-format.md states these limits.
MAX_STEP_LINES = 100_000
MAX_STEP_CHARS = 20_000_000
BOUND = "bound"
MEASURED = "measured"
TRACE = "trace"

# Module paths name traced operations (layers.3.mlp.down_proj.addmm): dots after the first character.
_NAME = r"[A-Za-z_][A-Za-z0-9_.]{0,127}"
_ASSIGN = re.compile(rf"\s*({_NAME})\s*=\s*(.*)$")
_ON = re.compile(rf"on\s+({_NAME})\s*")
_AFTER = re.compile(rf"after\s+({_NAME}(?:\s*,\s*{_NAME})*)\s*$")


class StepError(WorkbenchError):
    """A step text that cannot be laid out: the message names the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


@dataclass(frozen=True)
class StepLine:
    """One operation of a step as written: its name, declaration, stream, dependencies and comment."""

    name: str
    declaration: Declaration
    stream: str = DEFAULT_STREAM
    after: tuple[str, ...] = ()
    comment: str = ""  # a trailing '# …' comment, without the '#'
    line: int = 0  # 1-based line in the text it came from (0 when built in code)

    @property
    def communication(self) -> bool:
        """True for a collective: its bytes cross a link between chips."""
        return self.declaration.workload().link_traffic is not None


@dataclass(frozen=True)
class StepPlan:
    """A parsed step: its operations in line order, and the comment and blank lines kept for round trips.

    `layout` lists the text's lines: an int is the index of an operation, a
    str a comment or blank line kept as written.
    """

    operations: tuple[StepLine, ...]
    layout: tuple[int | str, ...] = ()

    def names(self) -> list[str]:
        return [op.name for op in self.operations]

    def __getitem__(self, name: str) -> StepLine:
        return self._by_name()[name]

    def _by_name(self) -> dict[str, StepLine]:
        """The operations by name, made on first use (a step of thousands of lines looks names up per line)."""
        found = self.__dict__.get("_names_index")
        if found is None:
            found = {op.name: op for op in self.operations}
            object.__setattr__(self, "_names_index", found)  # a cache of the frozen plan's own data
        return found

    def streams(self) -> list[str]:
        """Streams in order of first use."""
        return list(dict.fromkeys(op.stream for op in self.operations))

    def with_stream(self, names: Iterable[str], stream: str) -> "StepPlan":
        """The same step with some operations moved onto another stream."""
        moved = set(names)
        ops = tuple(
            StepLine(op.name, op.declaration, stream if op.name in moved else op.stream, op.after, op.comment, op.line)
            for op in self.operations
        )
        return StepPlan(ops, self.layout)


def _split_comment(text: str) -> tuple[str, str]:
    """Code and comment of a line: '#' outside double quotes starts the comment."""
    if '"' not in text:  # most lines (a traced step's thousands): no quotes to look past
        code, _, comment = text.partition("#")
        return code, comment.strip()
    quoted = False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            return text[:index], text[index + 1 :].strip()
    return text, ""


def _declaration_end(text: str, line: int) -> int:
    """Index just past the ')' that closes the declaration's call."""
    depth, quoted = 0, False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
            if depth < 0:
                break
    raise StepError("the declaration's parentheses do not close; expected name = op(field=value, ...)", line)


def parse_step(text: str) -> StepPlan:
    """Parse a step text; any fault raises StepError naming the line."""
    if not isinstance(text, str):
        raise StepError("a step must be text")
    if len(text) > MAX_STEP_CHARS:
        raise StepError(f"a step text is limited to {MAX_STEP_CHARS:,} characters")
    lines = text.splitlines()
    if len(lines) > MAX_STEP_LINES:
        raise StepError(f"a step is limited to {MAX_STEP_LINES:,} lines; this one has {len(lines):,}")
    operations: list[StepLine] = []
    layout: list[int | str] = []
    defined: dict[str, int] = {}
    pending: list[tuple[StepLine, int]] = []
    for number, raw in enumerate(lines, start=1):
        code, comment = _split_comment(raw)
        if not code.strip():
            layout.append(raw.rstrip())
            continue
        match = _ASSIGN.match(code)
        if match is None:
            raise StepError("expected name = declaration [on stream] [after a, b]", number)
        name, rest = match.group(1), match.group(2).strip()
        if name in defined:
            raise StepError(f"'{name}' is already defined on line {defined[name]}", number)
        end = _declaration_end(rest, number)
        try:
            declaration = parse(rest[:end])
        except WorkbenchError as exc:
            raise StepError(f"{name}: {exc}", number) from None
        tail = rest[end:].strip()
        stream = DEFAULT_STREAM
        on = _ON.match(tail)
        if on is not None:
            stream, tail = on.group(1), tail[on.end() :]
        after: tuple[str, ...] = ()
        if tail:
            found = _AFTER.match(tail)
            if found is None:
                raise StepError(f"after the declaration expected 'on STREAM' and/or 'after a, b'; got '{tail}'", number)
            after = tuple(part.strip() for part in found.group(1).split(","))
        if len(set(after)) != len(after):
            raise StepError(f"{name} names a dependency twice", number)
        op = StepLine(name, declaration, stream, after, comment, number)
        defined[name] = number
        layout.append(len(operations))
        operations.append(op)
        pending.append((op, number))
    for op, number in pending:
        for dependency in op.after:
            if dependency == op.name:
                raise StepError(f"{op.name} depends on itself (a cycle)", number)
            if dependency not in defined:
                raise StepError(f"{op.name} depends on '{dependency}', which no line defines", number)
            if defined[dependency] > number:
                cycle = _cycle(operations, op.name, dependency)
                if cycle:
                    raise StepError(f"cycle: {' → '.join(cycle)}", number)
                raise StepError(
                    f"{op.name} depends on '{dependency}', defined later on line {defined[dependency]}; "
                    "a step lists each operation after what it depends on",
                    number,
                )
    if not operations:
        raise StepError("a step needs at least one operation: name = declaration")
    return StepPlan(tuple(operations), tuple(layout))


def _cycle(operations: Sequence[StepLine], start: str, first: str) -> list[str]:
    """A dependency chain start → first → … → start, if there is one (a depth-first search with its own
    stack: a chain as long as the step, a thousand lines, is no deeper for it)."""
    by_name = {op.name: op for op in operations}
    path = [start, first]
    seen = {first}
    pending = [iter(by_name[first].after)]  # per name on the path after `start`: its dependencies not yet tried
    while pending:
        dependency = next(pending[-1], None)
        if dependency is None:
            pending.pop()
            path.pop()
            continue
        if dependency == start:
            path.append(start)
            return path
        if dependency in by_name and dependency not in seen:
            seen.add(dependency)
            path.append(dependency)
            pending.append(iter(by_name[dependency].after))
    return []


def format_step(plan: StepPlan) -> str:
    """The canonical text of a step: columns aligned, declarations canonical, comments kept."""
    ops = plan.operations
    name_width = max((len(op.name) for op in ops), default=0)
    decl_width = max((len(str(op.declaration)) for op in ops), default=0)
    stream_width = max((len(f"on {op.stream}") for op in ops if op.stream != DEFAULT_STREAM), default=0)
    layout = plan.layout or tuple(range(len(ops)))
    lines: list[str] = []
    for item in layout:
        if isinstance(item, str):
            lines.append(item)
            continue
        op = ops[item]
        parts = [f"{op.name.ljust(name_width)} = {str(op.declaration).ljust(decl_width)}"]
        if stream_width:
            parts.append((f"on {op.stream}" if op.stream != DEFAULT_STREAM else "").ljust(stream_width))
        if op.after:
            parts.append("after " + ", ".join(op.after))
        line = "   ".join(parts).rstrip()
        if op.comment:
            line += f"   # {op.comment}"
        lines.append(line)
    return "\n".join(lines) + "\n"


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
        from workbench.plausibility import is_beyond_bound

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
    from workbench.analysis import analyze

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
    from workbench.runs import FigureContext, all_run_figures

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
            lines += ["", *self.measured.summary_lines(self.times)]
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


@dataclass(frozen=True)
class TraceDevice:
    """The GPU a trace names (nsys's TARGET_INFO_GPU), the catalogue entry its intervals' bounds use, and the
    one line that says where that differs from the device chosen."""

    gpu: str  # as the trace names it: 'NVIDIA A100-SXM4-40GB'
    device: Device | None  # its catalogue entry, None where the catalogue knows no such GPU
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "device": self.device.key if self.device is not None else None, "note": self.note}


def trace_device(trace: Trace, chosen: Device | None) -> TraceDevice | None:
    """The device a trace's intervals ran on, by the GPU it names; None where it names none (the CSV export).

    The bounds of a traced step are that GPU's: a different device chosen is set aside, said in one line.
    """
    from workbench.devices.catalogue import match_device

    if not trace.gpus:
        return None
    gpu = trace.gpus[0]
    others = sorted({other.name for other in trace.gpus[1:] if other.name != gpu.name})
    found = match_device(gpu.name, gpu.memory_bytes, gpu.bus)
    device = found.device if found is not None else None
    several = f" (it also names {', '.join(others)})" if others else ""
    if device is None:
        where = f"the {chosen.name} chosen" if chosen is not None else "no device: choose one with --device"
        note = f"the trace ran on GPU {gpu.device_id}, {gpu.name}{several}, which the catalogue does not know: bounds use {where}"
        return TraceDevice(gpu.name, None, note)
    if chosen is not None and chosen.key != device.key:
        note = (f"the trace ran on GPU {gpu.device_id}, {gpu.name}{several}, not on the {chosen.name} chosen: "
                f"its bounds use {device.key} ({device.name})")
    else:
        note = f"the trace names several GPUs{several}: bounds use {device.key}, the first's" if others else ""
    return TraceDevice(gpu.name, device, note)


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


# -- an imported trace --------------------------------------------------------
#
# A trace's intervals are paired with the step's operations by the kernel
# matching of workbench/profilers/matching.py, never a second matcher:
# explicit rules 'PATTERN=OPERATION' first (MatchRule, its `name` the
# operation), then, for the operations no rule names, the first guess that
# the import dialog makes (`suggest_operation`: the words each operation
# registers for its kernels' names, e.g. 'gemm', 'cutlass' for a GEMM,
# 'allreduce' for an all-reduce), asked per operation kind. Where several
# operations share a rule or a kind (three GEMMs), the intervals it selects
# are dealt to them in time order, so a trace of several iterations of the
# step gives each operation one interval per iteration. An operation's time
# is the median of its intervals; its first one is the one drawn.
#
# An operation that runs as several kernels (a split-K GEMM: the GEMM kernel
# and its reduction, `splitKreduce_kernel`) takes several rules, one per
# kernel, all naming it: `--match 'gemm*splitk*=fwd' --match
# 'splitKreduce*=fwd'`. Each rule's intervals (dealt as above where the rule
# names several operations) are one part of the operation; the first rule's
# kernel starts each iteration, and every interval of the other parts that
# starts before the next such start belongs to that iteration. An iteration
# lasts from its first kernel's start to its last kernel's end (the span),
# and the operation's time is the median span: that is how long the
# operation holds its stream in the step, gaps between its kernels included
# (a cost of splitting it), and kernels of one operation on two streams that
# overlap are not counted twice, as a sum would. The median of the summed
# kernel durations (the busy time) is shown beside it, so span − busy is
# the gap. Intervals before the first iteration's start (a trace that begins
# mid-iteration) and iterations missing a part are left out, and counted.


@dataclass(frozen=True)
class TracePart:
    """One kernel of an operation made of several: its rule and the intervals it took (see the section's comment)."""

    rule: str
    kernel: str  # the name of its first interval in a combined iteration
    intervals: int  # in the combined iterations
    median_s: float  # of its own durations


@dataclass(frozen=True)
class TraceMatch:
    """The trace intervals dealt to one operation, and how they were chosen.

    For an operation of one kernel each interval is an iteration; for one made of several kernels
    (`parts`), an iteration is one interval of each part combined: its time is the span from the first
    kernel's start to the last's end, and `median_busy_s` the median sum of the kernels' durations."""

    operation: str
    rule: str  # the pattern, or 'suggested (gemm)'; the parts' patterns joined by ' + '
    intervals: Any = field(compare=False)  # row indices into the trace, by start (a NumPy array)
    median_s: float
    first: Interval  # the first iteration's first kernel
    iterations: int = 0  # combined intervals (one kernel: len(intervals))
    median_busy_s: float = 0.0
    first_rows: tuple[int, ...] = ()  # the first iteration's kernels (one kernel: the first interval's row)
    first_end_ns: int = 0  # the first iteration's last end
    parts: tuple[TracePart, ...] = ()  # two or more for an operation made of several kernels
    left_out: int = 0  # intervals of the parts outside any complete iteration

    def detail(self) -> str:
        kernel = kernel_base_name(self.first.name)
        if self.parts:
            kernels = " + ".join(kernel_base_name(part.kernel) for part in self.parts)
            count = f"median of {self.iterations} iterations" if self.iterations > 1 else "one iteration"
            left = f"; {self.left_out} interval{'s' if self.left_out > 1 else ''} outside an iteration left out" if self.left_out else ""
            return (f"trace: {count} of {kernels} on {self.first.stream}, first kernel's start to last's end "
                    f"(kernels busy {format_time(self.median_busy_s)}){left}")
        if len(self.intervals) == 1:
            return f"trace: {kernel} on {self.first.stream}"
        return f"trace: median of {len(self.intervals)} intervals of {kernel} on {self.first.stream}"

    def to_dict(self, measured: "MeasuredTrace") -> dict[str, Any]:
        origin = measured.origin_ns
        out: dict[str, Any] = {
            "kernel": self.first.name,
            "name_full": self.first.name,
            "name_short": kernel_base_name(self.first.name),
            "rule": self.rule,
            "intervals": len(self.intervals),
            "iterations": self.iterations,
            "stream": self.first.stream,
            "first_start_s": (self.first.start_ns - origin) / 1e9,
            "first_end_s": (self.first_end_ns - origin) / 1e9,
            "median_s": self.median_s,
            "median_busy_s": self.median_busy_s,
        }
        if self.parts:
            out["combined"] = "span: the first kernel's start to the last kernel's end, per iteration"
            out["parts"] = [
                {"rule": part.rule, "kernel": part.kernel, "intervals": part.intervals, "median_s": part.median_s}
                for part in self.parts
            ]
            out["left_out_intervals"] = self.left_out
        return out


@dataclass(frozen=True)
class Unmatched:
    """Intervals of one name that no operation took: what the step leaves out."""

    name: str
    kind: str
    count: int
    total_s: float


@dataclass(frozen=True)
class MeasuredTrace:
    """A trace matched to a step: the intervals each operation took, and what was left over."""

    trace: Trace
    matches: Mapping[str, TraceMatch]
    unmatched: Sequence[Unmatched]  # largest total first (an UnmatchedNames from match_trace)
    unmatched_operations: tuple[str, ...]  # operations no interval was dealt to
    origin_ns: int  # the trace's first start: time zero when shown
    ran_on: "TraceDevice | None" = None  # the GPU the trace names, and the bounds' device it decided

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.trace.summary(),
            **({"ran_on": self.ran_on.to_dict()} if self.ran_on is not None else {}),
            "matched": {name: len(match.intervals) for name, match in self.matches.items()},
            "unmatched_operations": list(self.unmatched_operations),
            "unmatched": [
                {"name": item.name, "kind": item.kind, "count": item.count, "total_s": item.total_s}
                for item in self.unmatched[:MAX_UNMATCHED_LISTED]
            ],
            "unmatched_names": len(self.unmatched),
        }

    def summary_lines(self, times: Mapping[str, OperationTime]) -> list[str]:
        """The trace beside the bounds, for the CLI: each matched operation, then what no operation took."""
        trace = self.trace
        lines = [f"trace {trace.source} ({trace.format}): {len(trace):,} intervals on {len(trace.streams)} streams"
                 + (f", ran on {self.ran_on.gpu}" if self.ran_on is not None else "")]
        if self.ran_on is not None and self.ran_on.note:
            lines.append(f"  note: {self.ran_on.note}")
        for name, match in self.matches.items():
            bound = times[name].bound_s if name in times else None
            versus = f", bound {format_time(bound)} ({match.median_s / bound:.2f}× the bound)" if bound else ""
            lines.append(f"  {name}: {format_time(match.median_s)} measured{versus}  [{match.detail()}; rule {match.rule}]")
            if name in times and times[name].impossible:
                lines.append(f"      {times[name].impossible_text()}")
            if not match.parts and kernel_base_name(match.first.name) != match.first.name:
                lines.append(f"      kernel: {match.first.name}")  # the full name: a template's tile shape, the arguments
            for part in match.parts:
                lines.append(f"      {part.rule}: {part.intervals} × {kernel_base_name(part.kernel)}, median {format_time(part.median_s)}")
        if self.unmatched_operations:
            lines.append(f"  no interval matched: {', '.join(self.unmatched_operations)}")
        if self.unmatched:
            lines.append(f"  unmatched kernels ({len(self.unmatched)} names):")
            for item in self.unmatched[:MAX_UNMATCHED_SHOWN]:
                lines.append(f"    {item.count:>8,} × {format_time(item.total_s):>10} total  {item.name}")
            if len(self.unmatched) > MAX_UNMATCHED_SHOWN:
                lines.append(f"    … and {len(self.unmatched) - MAX_UNMATCHED_SHOWN} more")
        return lines


MAX_UNMATCHED_SHOWN = 10
MAX_UNMATCHED_LISTED = 200
MAX_MATCH_RULES = 200


def parse_trace_match(text: str, plan: StepPlan) -> MatchRule:
    """'regex:gemm=fwd' → a MatchRule for the step's operation fwd; the operation follows the last '='."""
    pattern, separator, name = text.rpartition("=")
    name = name.strip()
    if not separator or not pattern.strip() or not name:
        raise StepError(f"--match wants PATTERN=OPERATION, e.g. 'regex:gemm=fwd'; got '{text}'")
    if name not in plan.names():
        raise StepError(f"--match '{text}': the step has no operation '{name}'; it has {', '.join(plan.names())}")
    try:
        return MatchRule(pattern.strip(), str(plan[name].declaration), name)
    except WorkbenchError as exc:
        raise StepError(str(exc)) from None


class UnmatchedNames(Sequence[Unmatched]):
    """The names no operation took, largest total first, then by name: made into Unmatched only as they are
    read, and put in order only as far as they are read (the first few hundred, of a trace of a million
    distinct names), at the cost of one pass over the rest."""

    def __init__(self, trace: Trace, indices: Any, counts: Any, totals_ns: Any, kinds: Sequence[int]) -> None:
        import numpy as np

        self._trace, self._kinds = trace, kinds
        self._indices = indices  # name indices, ascending
        self._counts = counts
        self._totals_ns = totals_ns
        self._totals_s = totals_ns / 1e9  # the order is that of total_s, as shown
        self._order: list[int] = []  # positions in _indices: the first len(_order) of the order
        self._by_total = np.argsort(-self._totals_s, kind="stable") if len(indices) else indices

    def __len__(self) -> int:
        return len(self._indices)

    def _first(self, count: int) -> list[int]:
        """The first `count` positions in order: those of a larger total than the count-th's, sorted whole,
        then the fewest of that total by name, as sorted() would (stable: by position among equal names)."""
        import heapq

        import numpy as np

        count = min(count, len(self))
        if count > len(self._order):
            count = min(max(count, 2 * len(self._order)), len(self))  # reading on: twice as far each time
            totals, names, indices = self._totals_s, self._trace.names, self._indices
            threshold = totals[self._by_total[count - 1]]
            above = np.flatnonzero(totals > threshold).tolist()
            head = sorted(above, key=lambda p: (-totals[p], names[indices[p]]))
            ties = np.flatnonzero(totals == threshold).tolist()
            want = count - len(head)
            # The `want` least names of the ties (a loop of C calls, no key function), then every tie holding
            # one of them (more where names repeat), sorted by name and position.
            least = set(heapq.nsmallest(want, map(names.__getitem__, indices[ties].tolist())))
            chosen = compress(ties, map(least.__contains__, map(names.__getitem__, indices[ties].tolist())))
            self._order = head + sorted(chosen, key=lambda p: (names[indices[p]], p))[:want]
        return self._order[:count]

    def _item(self, position: int) -> Unmatched:
        index = int(self._indices[position])
        return Unmatched(self._trace.names[index], KIND_NAMES[self._kinds[index]], int(self._counts[position]),
                         int(self._totals_ns[position]) / 1e9)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            order = self._first(stop if step > 0 else len(self))  # as far as the slice reaches
            return tuple(map(self._item, order[item]))
        position = range(len(self))[item]  # IndexError past either end, as a tuple's
        return self._item(self._first(position + 1)[position])

    def __iter__(self) -> Iterator[Unmatched]:
        return iter(self[:])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"UnmatchedNames({len(self)} names)"


def match_trace(plan: StepPlan, trace: Trace, rules: Sequence[MatchRule] = ()) -> MeasuredTrace:
    """Deal the trace's intervals to the step's operations (see the section's comment)."""
    if len(rules) > MAX_MATCH_RULES:
        raise StepError(f"at most {MAX_MATCH_RULES} match rules")
    known = set(plan.names())
    for rule in rules:
        if rule.name not in known:
            raise StepError(f"the match rule '{rule.pattern}' names '{rule.name}', which is not an operation of the step")
    # Groups: operations sharing a pattern, or (without a rule) sharing an operation kind.
    groups: list[tuple[str, list[str]]] = []
    by_pattern: dict[str, int] = {}
    for rule in rules:
        index = by_pattern.setdefault(rule.pattern, len(groups))
        if index == len(groups):
            groups.append((rule.pattern, []))
        if rule.name not in groups[index][1]:
            groups[index][1].append(rule.name)
    named = {rule.name for rule in rules}
    by_kind: dict[str, list[str]] = {}
    for op in plan.operations:
        if op.name not in named:
            by_kind.setdefault(op.declaration.op, []).append(op.name)
    declarations = {kind: str(plan[names[0]].declaration) for kind, names in by_kind.items()}
    import numpy as np

    kind_group: dict[str, int] = {}
    group_of_name = np.full(len(trace.names), -1, dtype=np.int64)  # −1: no group
    name_kinds = trace.name_kinds()
    bases: list[str] | None = None
    if rules:
        bases = kernel_base_names(trace.names)  # each name's base once, for every rule and the suggestion
        for name_index, name in enumerate(trace.names):
            rule = next((r for r in rules if r.matches(name, bases[name_index])), None)
            if rule is not None:
                group_of_name[name_index] = by_pattern[rule.pattern]
    # The first guess for each kernel no rule took, asked of them all at once (most of a trace of many
    # names holds no operation's word); its groups come in the order of their first name, as one by one.
    asked = np.flatnonzero((group_of_name < 0) & (np.array(name_kinds, dtype=np.int8) == KERNEL)).tolist()
    suggest = operation_suggester(declarations)  # the declarations parsed once, not once per name
    asked_bases = None if bases is None else [bases[i] for i in asked]
    for name_index, kind in zip(asked, suggest.many([trace.names[i] for i in asked], asked_bases)):
        if kind is None:
            continue
        if kind not in kind_group:
            kind_group[kind] = len(groups)
            groups.append((f"suggested ({kind})", by_kind[kind]))
        group_of_name[name_index] = kind_group[kind]

    names, starts, ends = trace.columns()
    row_groups = group_of_name[names] if len(trace) else names
    dealt: dict[str, dict[str, Any]] = {}  # operation → its parts' rows by label
    for group, (label, operations) in enumerate(groups):
        rows = np.flatnonzero(row_groups == group)
        rows = rows[np.argsort(starts[rows], kind="stable")]
        for position, name in enumerate(operations):  # the k-th operation takes every len(operations)-th interval
            if position < len(rows):
                dealt.setdefault(name, {})[label] = rows[position :: len(operations)]
    # An operation's parts in the order of its own rules: the first rule's kernel starts each iteration.
    rule_order = {(rule.name, rule.pattern): index for index, rule in reversed(list(enumerate(rules)))}
    matches: dict[str, TraceMatch] = {}
    for op in plan.operations:
        if op.name not in dealt:
            continue
        parts = sorted(dealt[op.name].items(), key=lambda item: rule_order.get((op.name, item[0]), len(rules)))
        if len(parts) == 1:
            label, rows = parts[0]
            median_ns = float(np.median(ends[rows] - starts[rows]))
            first = trace.interval(int(rows[0]))
            matches[op.name] = TraceMatch(op.name, label, rows, median_ns / 1e9, first, len(rows), median_ns / 1e9,
                                          (first.index,), first.end_ns)
            continue
        combined = _combine_parts(op.name, parts, trace, starts, ends)
        if combined is not None:
            matches[op.name] = combined
    # What no operation took: the names with intervals and no group, counted and timed by NumPy.
    counts = np.bincount(names, minlength=len(trace.names))
    totals = np.bincount(names, weights=ends - starts, minlength=len(trace.names))
    left = np.flatnonzero((counts > 0) & (group_of_name < 0))
    unmatched = UnmatchedNames(trace, left, counts[left], np.trunc(totals[left]), name_kinds)
    missing = tuple(name for name in plan.names() if name not in matches)
    return MeasuredTrace(trace, matches, unmatched, missing, trace.origin_ns())


def _combine_parts(operation: str, parts: Sequence[tuple[str, Any]], trace: Trace, starts: Any, ends: Any) -> TraceMatch | None:
    """One operation made of several kernels: each part's intervals (rows by start) grouped into iterations
    that the first part's intervals start, each timed from its first start to its last end (see the section's
    comment). None when no iteration holds every part."""
    import numpy as np

    anchor = parts[0][1]
    count = len(anchor)
    iteration_starts = starts[anchor]
    span_end = ends[anchor].copy()
    busy = (ends[anchor] - starts[anchor]).astype(np.float64)
    complete = np.ones(count, dtype=bool)
    owners = []  # per later part: the iteration of each of its intervals (−1 before the first)
    for _, rows in parts[1:]:
        owner = np.searchsorted(iteration_starts, starts[rows], side="right") - 1
        owners.append(owner)
        inside = owner >= 0
        complete &= np.bincount(owner[inside], minlength=count) > 0
        np.maximum.at(span_end, owner[inside], ends[rows][inside])
        busy += np.bincount(owner[inside], weights=(ends[rows] - starts[rows])[inside], minlength=count)
    if not complete.any():
        return None
    used = [anchor[complete]]
    part_figures = [TracePart(parts[0][0], trace.names[trace.name[int(anchor[complete][0])]], int(complete.sum()),
                              float(np.median(ends[anchor[complete]] - starts[anchor[complete]])) / 1e9)]
    first_iteration = int(np.flatnonzero(complete)[0])
    first_rows = [int(anchor[first_iteration])]
    for (label, rows), owner in zip(parts[1:], owners):
        keep = (owner >= 0) & complete[np.maximum(owner, 0)]
        taken = rows[keep]
        used.append(taken)
        first_rows += [int(row) for row in rows[owner == first_iteration]]
        part_figures.append(TracePart(label, trace.names[trace.name[int(taken[0])]], len(taken),
                                      float(np.median(ends[taken] - starts[taken])) / 1e9))
    rows = np.concatenate(used)
    rows = rows[np.argsort(starts[rows], kind="stable")]
    spans = span_end[complete] - iteration_starts[complete]
    total = sum(len(part_rows) for _, part_rows in parts)
    return TraceMatch(
        operation, " + ".join(label for label, _ in parts), rows, float(np.median(spans)) / 1e9,
        trace.interval(first_rows[0]), int(complete.sum()), float(np.median(busy[complete])) / 1e9,
        tuple(first_rows), int(span_end[first_iteration]), tuple(part_figures), total - len(rows),
    )


# -- files --------------------------------------------------------------------


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


# -- a PyTorch profiler trace -------------------------------------------------
#
# A PyTorch trace (workbench.profilers.torch_trace) names the ATen op behind
# each kernel, so its kernels are paired with a step's operations through the
# ops, not their kernels' names: an operation's ATen op is the first word of
# its line's comment (`# aten::addmm …`, as a step traced from PyTorch writes
# it; an overload suffix such as '.default' is dropped), else `aten::` and
# the last part of its name (`fc1.mm`). The i-th CPU op named X (counting the
# outermost of nested ops of one name) goes to the i-th operation whose op is
# X, and round again for the next iteration: within each ProfilerStep where
# the trace marks them, else through the whole trace, so a trace of five
# training steps gives each operation five occurrences. An occurrence's
# kernels are those launched inside the op or the ops it calls (on its
# thread); its time is the span from its first kernel's start to its last
# kernel's end, and the operation's time the median over its occurrences
# (the kernels' busy time beside it). An occurrence that launched nothing
# (a view) is not an iteration. In a trace recorded on the CPU alone the op's
# own duration is its time.

_ATEN_COMMENT = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*)")


def step_aten_op(op: StepLine) -> str:
    """The ATen op an operation stands for: its comment's first word ('aten::addmm'), else 'aten::' and the last
    part of its name."""
    found = _ATEN_COMMENT.match(op.comment)
    return found.group(1) if found else f"aten::{op.name.rsplit('.', 1)[-1]}"


def match_torch_trace(plan: StepPlan, trace: Any) -> MeasuredTrace:
    """Deal a PyTorch trace's CPU ops, and the kernels under them, to the step's operations (see the section's
    comment). `trace` is a workbench.profilers.torch_trace.TorchTrace."""
    import numpy as np

    ops = trace.ops
    wanted: dict[str, list[str]] = {}  # ATen op → the step's operations naming it, in line order
    for op in plan.operations:
        wanted.setdefault(step_aten_op(op), []).append(op.name)
    threads: dict[tuple[str, str], int] = {}
    op_thread = np.array([threads.setdefault(thread, len(threads)) for thread in ops.thread], dtype=np.int64)
    row_op = np.frombuffer(trace.row_op, dtype=f"i{trace.row_op.itemsize}").astype(np.int64) if len(trace) else np.zeros(0, np.int64)
    by_op = np.argsort(row_op, kind="stable")  # rows by the op that launched them
    sorted_ops = row_op[by_op]
    names, starts, ends = trace.columns()
    occurrences: dict[str, list[list[int]]] = {name: [] for names_ in wanted.values() for name in names_}
    counters: dict[tuple[int, str], int] = {}
    for index in range(len(ops)):
        aten = ops.op_name(index)
        takers = wanted.get(aten)
        if takers is None or (trace.steps and ops.step[index] < 0):
            continue
        parent = ops.parent[index]
        while parent >= 0 and ops.op_name(parent) != aten:
            parent = ops.parent[parent]
        if parent >= 0:  # inside an op of the same name: the outer one stands for both
            continue
        key = (ops.step[index], aten)
        position = counters.get(key, 0)
        counters[key] = position + 1
        if trace.cpu_only:
            rows = [index]
        else:
            low = int(np.searchsorted(sorted_ops, index, side="left"))
            high = int(np.searchsorted(sorted_ops, ops.last[index], side="right"))
            candidates = by_op[low:high]  # launched by this op or one started inside it (any thread)
            rows = [int(row) for row in candidates[op_thread[row_op[candidates]] == op_thread[index]]]
        if rows:
            occurrences[takers[position % len(takers)]].append(rows)
    matches: dict[str, TraceMatch] = {}
    used: set[int] = set()
    for op in plan.operations:
        found = occurrences.get(op.name) or []
        if not found:
            continue
        aten = step_aten_op(op)
        takers = wanted[aten]
        rule = aten if len(takers) == 1 else f"{aten} #{takers.index(op.name) + 1} of {len(takers)} per iteration"
        spans = [float(max(ends[rows]) - min(starts[rows])) for rows in found]
        busy = [float(np.sum(ends[rows] - starts[rows])) for rows in found]
        every = np.array(sorted((row for rows in found for row in rows), key=lambda row: (starts[row], row)), dtype=np.int64)
        used.update(int(row) for row in every)
        first_rows = sorted(found[0], key=lambda row: (starts[row], row))
        kernels: dict[int, list[int]] = {}
        for row in every:
            kernels.setdefault(int(names[row]), []).append(int(row))
        parts = tuple(
            TracePart(aten, trace.names[name], len(rows), float(np.median(ends[rows] - starts[rows])) / 1e9)
            for name, rows in kernels.items()
        ) if len(kernels) > 1 else ()
        matches[op.name] = TraceMatch(
            op.name, rule, every, float(np.median(spans)) / 1e9, trace.interval(first_rows[0]), len(found),
            float(np.median(busy)) / 1e9, tuple(first_rows), int(max(ends[first_rows])), parts,
        )
    left = np.ones(len(trace), dtype=bool)
    left[np.fromiter(used, dtype=np.int64, count=len(used))] = False
    counts = np.bincount(names[left], minlength=len(trace.names))
    totals = np.bincount(names[left], weights=(ends - starts)[left], minlength=len(trace.names))
    kinds = np.zeros(len(trace.names), dtype=np.int64)
    kinds[names] = np.frombuffer(trace.kind, dtype=np.int8)
    unmatched = sorted(
        (Unmatched(trace.names[name], KIND_NAMES[int(kinds[name])], int(counts[name]), float(totals[name]) / 1e9)
         for name in np.flatnonzero(counts)),
        key=lambda item: (-item.total_s, item.name),
    )
    missing = tuple(name for name in plan.names() if name not in matches)
    return MeasuredTrace(trace, matches, tuple(unmatched), missing, trace.origin_ns())


__all__ = [
    "BOUND",
    "TRACE",
    "MeasuredTrace",
    "TraceMatch",
    "TracePart",
    "Unmatched",
    "match_torch_trace",
    "match_trace",
    "parse_trace_match",
    "step_aten_op",
    "DEFAULT_STREAM",
    "MEASURED",
    "OperationTime",
    "Placed",
    "StepError",
    "StepLine",
    "StepPlan",
    "Timeline",
    "WhatIf",
    "format_step",
    "lay_out",
    "operation_times",
    "parse_step",
    "step_timeline",
]
