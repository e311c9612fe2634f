"""Imported profiler kernels as a session holds them, without Qt: which operation each is, how it compares, and
where it goes on the roofline.

Reading of `Session.profiles` for the window's profile tab and roofline and for the reports' roofline: each record
is rebuilt with `Profile.from_dict` (once per record object), its kernels are linked to the session's operations
through the record's match rules, and a matched kernel is compared with its operation's current analysis
(`compare()`, cached until the analysis, the device or the units change). Records are replaced, never edited in
place, so a record object's parse stays valid for as long as the object lives. `kernel_marks` places every
matched kernel on the roofline (the window adds hover texts: gui/profile_model.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Sequence

from workbench.model.devices.catalogue import Device
from workbench.errors import WorkbenchError
from workbench.profilers.records import TOOL_TITLES
from workbench.measure.runs import bound_analysis, run_device
from workbench.documents.session import OperationEntry
from workbench.identity import ByIdentity

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.profilers import Comparison, Kernel, MatchRule, Profile, RooflinePoint

KERNEL_LEGEND = "profiled kernel (ncu / nsys)"
_PARSE_CACHE_SIZE = 64  # parsed records kept; a session rarely holds more than a few
_COMPARE_CACHE_SIZE = 256


@lru_cache(maxsize=1024)
def canonical(text: str) -> str | None:
    """The canonical form of a declaration line (cached: the roofline asks on every edit)."""
    from workbench.model.declare import parse

    try:
        return str(parse(text))
    except WorkbenchError:
        return None


@dataclass(frozen=True)
class ReadRecord:
    """One entry of `Session.profiles`: the profile it holds, or why it cannot be read."""

    index: int
    profile: Profile | None
    kernels: tuple[Kernel, ...]
    error: str = ""

    @property
    def title(self) -> str:
        if self.profile is None:
            return f"profile record {self.index + 1}"
        return self.profile.source or self.profile.title


@lru_cache(maxsize=_PARSE_CACHE_SIZE)
def _parsed(record: ByIdentity) -> tuple[Profile | None, tuple[Kernel, ...], str]:
    """One saved record rebuilt: its profile and kernels, or why it cannot be read (cached per record object)."""
    from workbench.profilers import Profile  # the profile readers: imported with the first record, not at start

    try:
        profile = Profile.from_dict(record.obj)
    except WorkbenchError as exc:
        return None, (), str(exc)
    return profile, profile.kernels(), ""


def read_record(index: int, record: Any) -> ReadRecord:
    """Rebuild one saved record (cached by the record object, which the cache's key holds alive)."""
    return ReadRecord(index, *_parsed(ByIdentity(record)))


def read_records(profiles: Sequence[Any]) -> list[ReadRecord]:
    return [read_record(index, record) for index, record in enumerate(profiles)]


def linked_operation(rule: MatchRule, operations: Sequence[OperationEntry]) -> int | None:
    """The operation a match rule stands for: the one with the rule's name, else one with its declaration."""
    if rule.name:
        for index, entry in enumerate(operations):
            if entry.name == rule.name:
                return index
    wanted = canonical(rule.declaration)
    if wanted is None:
        return None
    for index, entry in enumerate(operations):
        if canonical(entry.declaration) == wanted:
            return index
    return None


@dataclass(frozen=True)
class ImportedKernel:
    """One kernel of one imported file, with the rule that matched it and the operation that rule names."""

    record_index: int
    profile: Profile
    kernel: Kernel
    rule: MatchRule | None
    operation: int | None  # index into the session's operations; None: unmatched, or its operation is gone

    @property
    def key(self) -> tuple[int, str]:
        return (self.record_index, self.kernel.name)

    @property
    def source(self) -> str:
        return self.profile.source or self.profile.title

    @property
    def tool_title(self) -> str:
        return TOOL_TITLES.get(self.profile.tool, self.profile.tool)

    @property
    def label(self) -> str:
        """'cupy_add__float32 — ncu_details.csv (Nsight Compute)': how choosers name it."""
        return f"{self.kernel.base_name} — {self.source} ({self.tool_title})"


def imported_kernels(records: Sequence[ReadRecord], operations: Sequence[OperationEntry]) -> list[ImportedKernel]:
    """Every kernel of every readable record, in file order, each with its match (if any)."""
    from workbench.profilers import match_kernels

    result = []
    for record in records:
        if record.profile is None:
            continue
        rules = list(record.profile.matches)
        matched = {kernel.name: rule for kernel, rule in match_kernels(record.kernels, rules)}
        for kernel in record.kernels:
            rule = matched.get(kernel.name)
            operation = linked_operation(rule, operations) if rule is not None else None
            result.append(ImportedKernel(record.index, record.profile, kernel, rule, operation))
    return result


@dataclass(frozen=True)
class KernelComparison:
    """A matched kernel against its operation's current analysis, and where it sits on the roofline.

    `point` comes from the comparison (DRAM counters) or, for files without
    byte counters (nsys), from the declared intensity and the logical FLOP
    over the profiled duration; `intensity_source` says which.
    """

    imported: ImportedKernel
    comparison: Comparison
    point: RooflinePoint | None
    intensity_source: str
    notes: tuple[str, ...]  # differences the view should point out: declaration edited since, another GPU
    on_session_device: bool = True  # compared with the device the session shows (else with the file's own GPU)


def kernel_bound(imported: ImportedKernel, analysis: Any, session_device: Device | None, overlap: Any) -> tuple[Any, Device | None, str, bool]:
    """The analysis a kernel is compared with: its operation on the GPU the file states (`run_device`, as for runs).

    The session's analysis is used as it is when the file's GPU is the
    session's device (its measured or entered rates apply); otherwise the
    operation is analysed again on the file's own GPU, and the note says so.
    """
    from workbench.profilers.kernel_compare import profile_provenance

    provenance = profile_provenance(imported.profile)
    device, note, on_session = run_device(provenance, session_device, "the file")
    if device is session_device:
        return analysis, device, note, on_session
    own = bound_analysis(analysis.declaration, device, analysis.convention, overlap)
    if isinstance(own, str):
        return analysis, session_device, own, True
    return own, device, note, on_session


def compare_imported(imported: ImportedKernel, analysis: Any, device: Device | None, binary: bool,
                     overlap: Any = 1.0) -> KernelComparison:
    """`compare()` of a matched kernel with its operation's analysis on the kernel's own GPU (cached per kernel
    object, rule, analysis object, device and units: `_compared`)."""
    analysis, device, device_note, on_session = kernel_bound(imported, analysis, device, overlap)
    found = _compared(ByIdentity(imported.profile), ByIdentity(imported.kernel), imported.rule, ByIdentity(analysis),
                      ByIdentity(device), binary, device_note)
    comparison, point, source, notes = found
    return KernelComparison(imported, comparison, point, source, notes, on_session)


@lru_cache(maxsize=_COMPARE_CACHE_SIZE)
def _compared(held_profile: ByIdentity, held_kernel: ByIdentity, rule: MatchRule | None, held_analysis: ByIdentity,
              held_device: ByIdentity, binary: bool, device_note: str) -> tuple[Comparison, RooflinePoint | None, str, tuple[str, ...]]:
    """A kernel's comparison, its point on the roofline, what placed it there and the notes; the keys hold the
    profile, kernel, analysis and device alive while cached (gui/identity.py)."""
    profile, kernel, analysis, device = held_profile.obj, held_kernel.obj, held_analysis.obj, held_device.obj
    from workbench.profilers import RooflinePoint, compare
    from workbench.profilers.kernel_compare import profile_provenance

    comparison = compare(kernel, analysis, device, binary, profile_provenance(profile), number_format=profile.number_format)
    point = comparison.roofline
    source = "actual DRAM bytes"
    duration = comparison.duration
    if point is None and duration and analysis.bytes > 0 and analysis.flop > 0:
        point = RooflinePoint(kernel.base_name, analysis.intensity, analysis.flop / duration, "declared")
        source = "compulsory bytes (no byte counters in the file)"
    notes: list[str] = []
    if rule is not None and canonical(rule.declaration) not in (None, str(analysis.declaration)):
        notes.append(f"matched when the operation read {rule.declaration}; compared with its current declaration")
    if device_note:
        notes.append(device_note)
    number_format = profile.number_format
    if number_format is not None and number_format.assumed:
        notes.append(number_format.note())
    return comparison, point, source, tuple(notes)


def kernel_comparisons(kernels: Sequence[ImportedKernel], analysis_of: Callable[[int], Any], device: Device | None,
                       binary: bool, overlap: Any, rows: Sequence[int] | None = None) -> list[KernelComparison]:
    """The comparisons of every matched kernel with its operation's analysis (`analysis_of(row)`; None: the
    operation has no valid analysis, and its kernels none), operation by operation (`rows`: those operations only)."""
    wanted = sorted({k.operation for k in kernels if k.operation is not None} if rows is None else set(rows))
    found = []
    for row in wanted:
        chosen = [k for k in kernels if k.operation == row]
        analysis = analysis_of(row) if chosen else None
        if analysis is not None:
            found += [compare_imported(k, analysis, device, binary, overlap) for k in chosen]
    return found


@dataclass(frozen=True)
class KernelMark:
    """One imported kernel on the roofline, in the plot's log10 coordinates."""

    x: float  # log10 FLOP/B
    y: float  # log10 FLOP/s
    operation: int
    key: tuple[int, str]
    anchor: tuple[float, float] | None  # the operation's own point (declared intensity, attainable rate)
    style: str = "session"  # "session", "other device" (compared with the file's own GPU), or "impossible"
    levels: tuple[tuple[str, float], ...] = ()  # (interface key, log10 FLOP/B) at L2 and L1/shared, from the counters
    level_sources: tuple[tuple[str, str], ...] = ()  # (interface key, the metrics and the method that counted its bytes)
    found: KernelComparison | None = field(default=None, compare=False, repr=False)  # what the hover text is made of


def kernel_marks(profiles: Sequence[Any], operations: Sequence[OperationEntry], analysis_of: Callable[[int], Any],
                 device: Device | None, binary: bool = False, overlap: Any = 1.0, level_method: str = "ncu",
                 make: Callable[..., Any] = KernelMark) -> list[Any]:
    """Every matched kernel of `profiles` (`Session.profiles`) with a roofline point: where its star goes, its
    style, its link to its operation's point (compared on the session's `device` only) and its points at the
    further levels its counters measured (`level_method`: whose method counted the bytes). `make`: the mark's
    class (the window's adds its hover text), called with `KernelMark`'s fields by name."""
    kernels = imported_kernels(read_records(profiles), operations)
    marks = []
    for found in kernel_comparisons(kernels, analysis_of, device, binary, overlap):
        point = found.point
        if point is None or not (point.intensity > 0 and point.flop_rate > 0):
            continue
        if not (math.isfinite(point.intensity) and math.isfinite(point.flop_rate)):
            continue
        row = found.imported.operation
        assert row is not None
        analysis = analysis_of(row)
        anchor = None
        if found.on_session_device and analysis is not None and analysis.intensity > 0 and analysis.attainable_rate:
            anchor = (math.log10(analysis.intensity), math.log10(analysis.attainable_rate))
        # the same FLOP over the bytes ncu counted at L2 and at L1 / shared memory: the hierarchical roofline's points
        kernel = found.imported.kernel
        flop = point.intensity * kernel.dram.total.value if kernel.dram.total else 0.0
        counted = kernel.levels(level_method)
        points = counted.points(flop) if flop > 0 else []
        levels = tuple((key, math.log10(flop / float(reading.value))) for key, _, reading, _ in points)
        level_sources = tuple((key, f"{reading.source} ({counted.title})") for key, _, reading, _ in points)
        style = ("impossible" if found.comparison.impossible is not None
                 else "session" if found.on_session_device else "other device")
        marks.append(make(x=math.log10(point.intensity), y=math.log10(point.flop_rate), operation=row,
                          key=found.imported.key, anchor=anchor, style=style, levels=levels,
                          level_sources=level_sources, found=found))
    return marks
