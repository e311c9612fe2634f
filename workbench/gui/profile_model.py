"""Imported profiler kernels as the window sees them: which operation each is, how it compares, and its hover text.

The reading, matching, comparing and placing are the core's (`workbench.documents.profiles`: the reports' roofline
calls the same functions); this reads the window's document for them and writes the texts the window shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from workbench.documents import profiles as core
from workbench.documents.profiles import ImportedKernel, KernelComparison, ReadRecord, imported_kernels, read_records
from workbench.profilers.records import NCU
from workbench.model.units import format_bytes, format_flop_rate, format_intensity, format_number, format_time

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.gui.document import Document


def document_records(document: "Document") -> list[ReadRecord]:
    return read_records(document.session.profiles)


def document_kernels(document: "Document") -> list[ImportedKernel]:
    return imported_kernels(document_records(document), document.operations)


def _analysis_of(document: "Document") -> Any:
    operations = document.operations
    return lambda row: document.state(operations[row]).analysis


def comparisons_for(document: "Document", index: int, kernels: Sequence[ImportedKernel] | None = None) -> list[KernelComparison]:
    """The comparisons of every kernel matched with operation `index` (none without a valid analysis)."""
    if not 0 <= index < len(document.operations):
        return []
    chosen = kernels if kernels is not None else document_kernels(document)
    return core.kernel_comparisons(chosen, _analysis_of(document), document.device, document.binary,
                                   document.session.settings.overlap, rows=[index])


def all_comparisons(document: "Document") -> list[KernelComparison]:
    """Comparisons of every matched kernel, operation by operation."""
    return core.kernel_comparisons(document_kernels(document), _analysis_of(document), document.device,
                                   document.binary, document.session.settings.overlap)


# ---------------------------------------------------------------- roofline marks


@dataclass(frozen=True)
class KernelMark(core.KernelMark):
    """One imported kernel on the roofline (`documents.profiles.KernelMark`) with its hover text."""

    tip: str = ""


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
    """Every matched kernel with a roofline point (`documents.profiles.kernel_marks`, the reports' function too),
    with its hover text."""
    operations, binary = document.operations, document.binary

    def make(**fields: Any) -> KernelMark:
        return KernelMark(**fields, tip=kernel_tip(fields["found"], operations[fields["operation"]].name, binary))

    return core.kernel_marks(document.session.profiles, operations, _analysis_of(document), document.device, binary,
                             document.session.settings.overlap, document.level_method, make)


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
