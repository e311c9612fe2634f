"""Imported profiler kernels as the window sees them: which operation each is, and how it compares.

Qt-free reading of `Session.profiles` for the profile tab and the roofline:
each record is rebuilt with `Profile.from_dict` (once per record object),
its kernels are linked to the session's operations through the record's
match rules, and a matched kernel is compared with its operation's current
analysis (`compare()`, cached until the analysis, the device or the units
change). Records are replaced, never edited in place, so a record object's
parse stays valid for as long as the object lives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from workbench.model.devices.catalogue import Device
from workbench.errors import WorkbenchError
from workbench.profilers.records import NCU, TOOL_TITLES
from workbench.measure.runs import bound_analysis, run_device
from workbench.documents.session import OperationEntry
from workbench.identity import ByIdentity
from workbench.model.units import format_bytes, format_flop_rate, format_intensity, format_number, format_time

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.gui.document import Document
    from workbench.profilers import Comparison, Kernel, MatchRule, Profile, RooflinePoint

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


def document_records(document: "Document") -> list[ReadRecord]:
    return read_records(document.session.profiles)


def document_kernels(document: "Document") -> list[ImportedKernel]:
    return imported_kernels(document_records(document), document.operations)


def comparisons_for(document: "Document", index: int, kernels: Sequence[ImportedKernel] | None = None) -> list[KernelComparison]:
    """The comparisons of every kernel matched with operation `index` (none without a valid analysis)."""
    operations = document.operations
    if not 0 <= index < len(operations):
        return []
    entry = operations[index]
    analysis = document.state(entry).analysis
    if analysis is None:
        return []
    chosen = [k for k in (kernels if kernels is not None else document_kernels(document)) if k.operation == index]
    overlap = document.session.settings.overlap
    return [compare_imported(k, analysis, document.device, document.binary, overlap) for k in chosen]


def all_comparisons(document: "Document") -> list[KernelComparison]:
    """Comparisons of every matched kernel, operation by operation."""
    kernels = document_kernels(document)
    rows = sorted({k.operation for k in kernels if k.operation is not None})
    return [c for row in rows for c in comparisons_for(document, row, kernels)]


# ---------------------------------------------------------------- roofline marks


@dataclass(frozen=True)
class KernelMark:
    """One imported kernel on the roofline, in the plot's log10 coordinates, with its hover text."""

    x: float  # log10 FLOP/B
    y: float  # log10 FLOP/s
    operation: int
    key: tuple[int, str]
    tip: str
    anchor: tuple[float, float] | None  # the operation's own point (declared intensity, attainable rate)
    style: str = "session"  # "session", "other device" (compared with the file's own GPU), or "impossible"
    levels: tuple[tuple[str, float], ...] = ()  # (interface key, log10 FLOP/B) at L2 and L1/shared, from the counters
    level_sources: tuple[tuple[str, str], ...] = ()  # (interface key, the metrics and the method that counted its bytes)


def kernel_tip(found: KernelComparison, operation_name: str, binary: bool) -> str:
    """Hover text: the kernel's name, what placed it, its rate and duration against the bound."""
    imported, c, point = found.imported, found.comparison, found.point
    kernel = imported.kernel
    lines = [f"{kernel.base_name}  ({imported.tool_title}, {imported.source})"]
    if kernel.base_name != kernel.name:
        shown = kernel.name if len(kernel.name) <= 90 else kernel.name[:89] + "…"
        lines.append(shown)
    lines.append(f"matched with {operation_name}: {c.declaration}")
    if point is not None:
        flop_words = "achieved FLOP from the counters" if point.flop_source == "counters" else "declared logical FLOP"
        lines.append(f"intensity {format_intensity(point.intensity)} = {flop_words} / {found.intensity_source}")
        lines.append(f"rate {format_flop_rate(point.flop_rate)} = {flop_words} / {kernel.statistic} duration")
    if c.duration is not None:
        launches = f", {kernel.statistic} of {kernel.instances} launches" if kernel.instances > 1 else ""
        line = f"duration {format_time(c.duration)}{launches}"
        if c.duration_ratio is not None and c.bound_time is not None:
            line += f" = {c.duration_ratio:#.3g}× the bound {format_time(c.bound_time)}"
        lines.append(line)
    if c.traffic_ratio is not None and c.actual_bytes is not None:
        lines.append(
            f"DRAM traffic {format_bytes(c.actual_bytes, binary)} = {c.traffic_ratio:#.4g}× the compulsory "
            f"{format_bytes(c.compulsory_bytes, binary)}"
        )
    if imported.profile.tool == NCU:
        lines.append("ncu: base clocks, caches flushed between passes")
    lines += list(found.notes)
    if c.impossible is not None:
        lines.append(c.impossible.as_text())
    return "\n".join(lines)


def kernel_marks(document: "Document") -> list[KernelMark]:
    """Every matched kernel with a roofline point, for the roofline's third kind of point."""
    marks = []
    operations = document.operations
    for found in all_comparisons(document):
        point = found.point
        if point is None or not (point.intensity > 0 and point.flop_rate > 0):
            continue
        if not (math.isfinite(point.intensity) and math.isfinite(point.flop_rate)):
            continue
        row = found.imported.operation
        assert row is not None
        analysis = document.state(operations[row]).analysis
        anchor = None
        if found.on_session_device and analysis is not None and analysis.intensity > 0 and analysis.attainable_rate:
            anchor = (math.log10(analysis.intensity), math.log10(analysis.attainable_rate))
        # the same FLOP over the bytes ncu counted at L2 and at L1 / shared memory: the hierarchical roofline's points
        flop = point.intensity * found.imported.kernel.dram.total.value if found.imported.kernel.dram.total else 0.0
        counted = found.imported.kernel.levels(document.level_method)
        levels = tuple((key, math.log10(flop / float(reading.value))) for key, _, reading, _ in counted.points(flop) if flop > 0)
        level_sources = tuple((key, f"{reading.source} ({counted.title})") for key, _, reading, _ in counted.points(flop) if flop > 0)
        marks.append(
            KernelMark(
                math.log10(point.intensity),
                math.log10(point.flop_rate),
                row,
                found.imported.key,
                kernel_tip(found, operations[row].name, document.binary),
                anchor,
                "impossible" if found.comparison.impossible is not None
                else "session" if found.on_session_device else "other device",
                levels,
                level_sources,
            )
        )
    return marks


def ratio_text(ratio: float | None) -> str:
    """'1.513×', or '—' when there is nothing to divide."""
    return "—" if ratio is None else f"{ratio:#.4g}×"


def percent_of_bound(ratio: float | None) -> str:
    """A duration/bound ratio as the share of the bound reached: 1.535× → 'reaches 65.2 % of the bound'."""
    if ratio is None or ratio <= 0:
        return ""
    return f"reaches {format_number(100 / ratio, 3)} % of the bound"


def summary_counts(records: Sequence[ReadRecord], kernels: Sequence[ImportedKernel]) -> Mapping[str, int]:
    """How many files, kernels and matched kernels the session holds (the tab's heading)."""
    return {
        "files": sum(1 for r in records if r.profile is not None),
        "kernels": len(kernels),
        "matched": sum(1 for k in kernels if k.operation is not None),
    }
