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

Each operation's time is its measured median where a run of the same
declaration on the step's device exists (workbench/runs.py: run_figures),
else its time bound (workbench/analysis.py: analyze). The timeline gives the
step time, the critical path, the communication exposed (running while no
computation does) and hidden, and for each operation the step time if it
were 2× faster and if it took no time (Amdahl's limit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from workbench.declare import Declaration, parse
from workbench.devices.catalogue import Device
from workbench.errors import WorkbenchError
from workbench.units import format_time

DEFAULT_STREAM = "compute"
MAX_STEP_LINES = 1000
MAX_STEP_CHARS = 200_000
BOUND = "bound"
MEASURED = "measured"

_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
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
        for op in self.operations:
            if op.name == name:
                return op
        raise KeyError(name)

    def streams(self) -> list[str]:
        """Streams in order of first use."""
        seen: list[str] = []
        for op in self.operations:
            if op.stream not in seen:
                seen.append(op.stream)
        return seen

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
    """A dependency chain start → first → … → start, if there is one."""
    by_name = {op.name: op for op in operations}
    path = [start, first]
    seen = {first}

    def walk(name: str) -> bool:
        for dependency in by_name[name].after:
            if dependency == start:
                path.append(start)
                return True
            if dependency in by_name and dependency not in seen:
                seen.add(dependency)
                path.append(dependency)
                if walk(dependency):
                    return True
                path.pop()
        return False

    return path if walk(first) else []


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
    """How long one operation takes in the step and where the figure comes from."""

    seconds: float
    source: str  # BOUND or MEASURED
    detail: str  # 'bound on NVIDIA H100 SXM (link-limited)', 'median of 30 samples, run r3'


def operation_times(plan: StepPlan, device: Device | None, runs: Sequence[Any] = (), context: Any = None) -> dict[str, OperationTime]:
    """Each operation's time: the latest valid run's median on the step's device, else its bound.

    `runs` are stored run records (Session.runs); `context` a runs.FigureContext.
    """
    from workbench.analysis import analyze

    measured = _measured_medians(runs, context) if runs else {}
    times: dict[str, OperationTime] = {}
    for op in plan.operations:
        text = str(op.declaration)
        if text in measured:
            times[op.name] = measured[text]
            continue
        if device is None:
            raise StepError(f"{op.name} has no time: choose a device (--device) or measure it", op.line or None)
        try:
            analysis = analyze(op.declaration, device)
        except WorkbenchError as exc:
            raise StepError(f"{op.name}: {exc}", op.line or None) from None
        if analysis.bound_time is None:
            raise StepError(f"{op.name} has no bound on {device.name}", op.line or None)
        times[op.name] = OperationTime(analysis.bound_time, BOUND, f"bound on {device.name} ({analysis.limiter}-limited)")
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

    def interval(self, name: str) -> Placed:
        for item in self.placed:
            if item.name == name:
                return item
        raise KeyError(name)

    def exposed_intervals(self) -> list[tuple[float, float]]:
        """Where communication runs and no computation does."""
        comm = _union([(p.start, p.end) for p in self.placed if p.communication])
        compute = _union([(p.start, p.end) for p in self.placed if not p.communication])
        return _subtract(comm, compute)

    def to_dict(self) -> dict[str, Any]:
        """What `workbench step --json` prints."""
        return {
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
                    "speedup": self.speedups.get(p.name, 1.0),
                    "if_2x_faster_s": self.what_if[p.name].if_2x_faster if p.name in self.what_if else None,
                    "if_free_s": self.what_if[p.name].if_free if p.name in self.what_if else None,
                }
                for p in self.placed
            ],
        }

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
            lines.append(
                f"  {p.name.ljust(width)}  {p.stream:<10} {format_time(p.start):>10} → {format_time(p.end):<10} "
                f"{format_time(p.duration):>10}  [{self.times[p.name].detail}]"
                + (f"  2× faster: {format_time(what.if_2x_faster)}, free: {format_time(what.if_free)}" if what else "")
            )
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


def _step_time(plan: StepPlan, durations: Mapping[str, float]) -> float:
    placed, _ = _schedule(plan, durations)
    return max(end for _, end in placed.values())


def lay_out(plan: StepPlan, times: Mapping[str, OperationTime], speedups: Mapping[str, float] | None = None) -> Timeline:
    """The timeline of a step with given operation times; `speedups` divides an operation's time (what-if)."""
    speedups = dict(speedups or {})
    for name, factor in speedups.items():
        if not (factor > 0):
            raise StepError(f"the speed-up of {name} must be positive; got {factor}")
    durations = _durations(plan, times, speedups)
    placed, waited_on = _schedule(plan, durations)
    step_time = max(end for _, end in placed.values())
    last = max(plan.operations, key=lambda op: (placed[op.name][1], -plan.operations.index(op))).name
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
    what_if = {}
    for op in plan.operations:
        faster = dict(durations)
        faster[op.name] = durations[op.name] / 2
        free = dict(durations)
        free[op.name] = 0.0
        what_if[op.name] = WhatIf(_step_time(plan, faster), _step_time(plan, free))
    return Timeline(plan, dict(times), intervals, step_time, tuple(reversed(path)), exposed, max(hidden, 0.0), what_if, speedups)


def step_timeline(
    plan: StepPlan | str,
    device: Device | None,
    runs: Sequence[Any] = (),
    context: Any = None,
    speedups: Mapping[str, float] | None = None,
) -> Timeline:
    """Parse (if text), time each operation on `device` (measured where a run exists) and lay the step out."""
    parsed = parse_step(plan) if isinstance(plan, str) else plan
    return lay_out(parsed, operation_times(parsed, device, runs, context), speedups)


# -- files --------------------------------------------------------------------


@dataclass(frozen=True)
class StepSource:
    """A step read from a file: its text, and the session it came from (None for a plain step file)."""

    text: str
    name: str
    session: Any = None


def read_step_file(path: str, name: str | None = None) -> StepSource:
    """A step from a step text file, or from a session file (its step called `name`, else its first).

    A file whose first non-blank character is '{' is read as a session.
    """
    from workbench.files import FileReadError, read_bounded

    try:
        data = read_bounded(path, MAX_STEP_CHARS * 4, "step file")
    except FileReadError as exc:
        raise StepError(f"cannot open {path}: {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise StepError(f"{path}: not UTF-8 text") from None
    if text.lstrip().startswith("{"):
        from workbench.session import load

        session = load(path)
        if not session.steps:
            raise StepError(f"session file {path} holds no steps")
        if name is None:
            entry = session.steps[0]
        else:
            matches = [step for step in session.steps if step.name == name]
            if not matches:
                known = ", ".join(repr(step.name) for step in session.steps)
                raise StepError(f"session file {path} has no step named {name!r}; it has {known}")
            entry = matches[0]
        return StepSource(entry.text, entry.name, session)
    if name is not None:
        raise StepError("--name picks a step in a session file; a step file holds one step")
    try:
        parse_step(text)
    except StepError as exc:
        raise StepError(f"{path}: {exc}") from None
    return StepSource(text, path)


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


__all__ = [
    "BOUND",
    "DEFAULT_STREAM",
    "MEASURED",
    "OperationTime",
    "Placed",
    "StepError",
    "StepLine",
    "StepPlan",
    "Timeline",
    "WhatIf",
    "StepSource",
    "format_step",
    "read_step_file",
    "lay_out",
    "operation_times",
    "parse_step",
    "step_timeline",
]
