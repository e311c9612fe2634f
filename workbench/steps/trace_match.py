"""An imported trace's intervals paired with a step's operations: Nsight Systems kernels by name and match
rules (`match_trace`), a PyTorch profiler trace by its ATen ops (`match_torch_trace`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import compress
from typing import Any, Iterator, Mapping, Sequence

from workbench.model.devices.catalogue import Device
from workbench.errors import WorkbenchError
from workbench.profilers.matching import MatchRule, kernel_base_name, operation_suggester
from workbench.profilers.names import kernel_base_names
from workbench.profilers.trace import KERNEL, KIND_NAMES, Interval, Trace
from workbench.steps.language import StepError, StepLine, StepPlan
from workbench.model.units import format_time
from workbench.records import record, to_plain

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
class TraceDevice:
    """The GPU a trace names (nsys's TARGET_INFO_GPU), the catalogue entry its intervals' bounds use, and the
    one line that says where that differs from the device chosen."""

    gpu: str  # as the trace names it: 'NVIDIA A100-SXM4-40GB'
    device: Device | None  # its catalogue entry, None where the catalogue knows no such GPU
    note: str = ""



def _device_key(device: Device | None) -> str | None:
    return device.key if device is not None else None


record(TraceDevice, dump={"device": _device_key})  # the device by its catalogue key


def trace_device(trace: Trace, chosen: Device | None) -> TraceDevice | None:
    """The device a trace's intervals ran on, by the GPU it names; None where it names none (the CSV export).

    The bounds of a traced step are that GPU's: a different device chosen is set aside, said in one line.
    """
    from workbench.model.devices.catalogue import match_device

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


@dataclass(frozen=True)
class TracePart:
    """One kernel of an operation made of several: its rule and the intervals it took (see the section's comment)."""

    rule: str
    kernel: str  # the name of its first interval in a combined iteration
    intervals: int  # in the combined iterations
    median_s: float  # of its own durations


record(TracePart)


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

    # by hand: times relative to the trace's origin, and the first interval's name three ways
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
            out["parts"] = to_plain(self.parts)
            out["left_out_intervals"] = self.left_out
        return out


@dataclass(frozen=True)
class Unmatched:
    """Intervals of one name that no operation took: what the step leaves out."""

    name: str
    kind: str
    count: int
    total_s: float


record(Unmatched)


@dataclass(frozen=True)
class MeasuredTrace:
    """A trace matched to a step: the intervals each operation took, and what was left over."""

    trace: Trace
    matches: Mapping[str, TraceMatch]
    unmatched: Sequence[Unmatched]  # largest total first (an UnmatchedNames from match_trace)
    unmatched_operations: tuple[str, ...]  # operations no interval was dealt to
    origin_ns: int  # the trace's first start: time zero when shown
    ran_on: "TraceDevice | None" = None  # the GPU the trace names, and the bounds' device it decided

    # by hand: the trace's summary, counts of the matches, and at most MAX_UNMATCHED_LISTED names
    def to_dict(self) -> dict[str, Any]:
        return {
            **self.trace.summary(),
            **({"ran_on": to_plain(self.ran_on)} if self.ran_on is not None else {}),
            "matched": {name: len(match.intervals) for name, match in self.matches.items()},
            "unmatched_operations": list(self.unmatched_operations),
            "unmatched": to_plain(list(self.unmatched[:MAX_UNMATCHED_LISTED])),
            "unmatched_names": len(self.unmatched),
        }



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
    import numpy as np

    groups, group_of_name, name_kinds = _kernel_groups(plan, trace, rules)
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


def _kernel_groups(plan: StepPlan, trace: Trace, rules: Sequence[MatchRule]) -> tuple[list[tuple[str, list[str]]], Any, list[int]]:
    """The groups that deal intervals (operations sharing a rule's pattern, or without a rule sharing an operation
    kind), each as its label and operations; for each of the trace's names the group it belongs to (-1: none);
    and each name's kind."""
    import numpy as np

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
    return groups, group_of_name, name_kinds


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
