"""The report's formatted tables: rates, summary, kinds, tensors, bounds, runs and step breakdowns."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from workbench.model.analysis import Analysis
from workbench.model.devices import BANDWIDTH, Device
from workbench.model.devices.rate_titles import rate_title
from workbench.documents.report.model import NO_VALUE, FormattedTable, OperationReport, ReportRun
from workbench.model.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_rate,
    format_int,
    format_intensity,
    format_percent,
    format_time,
)

PERCENT_OF_BOUND_NOTE = (
    "% of bound = bound time on the device the run ran on / measured median: 100 % means the run reached the bound."
)
ABOVE_BOUND_NOTE = (
    "A run above 100 % beat its lower bound: a rate in use is below what the machine sustains, "
    "the bytes are over-counted, or the working set stayed in a cache. Check before trusting either figure."
)


def run_notes(runs: Sequence[ReportRun]) -> list[str]:
    """The reading aid under a runs table, a warning when a run beat its bound, and each impossible run's reasons."""
    notes = [PERCENT_OF_BOUND_NOTE]
    if any(run.percent_of_bound is not None and run.percent_of_bound > 100.0 for run in runs):
        notes.append(ABOVE_BOUND_NOTE)
    for run in runs:
        if run.device_note:
            notes.append(f"{run.run_id}: {run.device_note}.")
        if run.impossible is not None:
            likely = [reason for reason in run.impossible.reasons if reason.likely] or list(run.impossible.reasons)
            reasons = "; ".join(f"{reason.name}" + (f" ({reason.evidence})" if reason.evidence else "") for reason in likely)
            notes.append(f"{run.run_id} is {run.impossible.headline}. Check: {reasons}.")
        if run.missed:
            notes.append(f"{run.run_id}, short of its bound: {run.missed}.")
    return notes


def breakdown_table(groups: Sequence[Any], binary: bool) -> FormattedTable:
    from workbench.documents.breakdown import COLUMNS

    rows = tuple(
        (group.name, f"{group.count:,}", format_flop(group.flop), format_bytes(group.bytes, binary),
         format_time(group.bound_s) if group.bound_s is not None else "—", format_time(group.time_s),
         f"{group.share * 100:.1f} %", f"{group.measured:,} of {group.count:,}", group.limiter)
        for group in groups
    )
    return FormattedTable(COLUMNS, rows)


def _rate_source(rate: Any) -> str:
    return f"{rate.source}{f' — {rate.citation}' if rate.citation else ''}"


def rates_table(device: Device | None, binary: bool) -> FormattedTable:
    if device is None:
        return FormattedTable(("Rate", "Value", "Source"), ())
    rows = []
    for key in device.paths():
        rate = device.overrides.get(key) or device.peak[key]
        rows.append((device.path_title(key), format_flop_rate(rate.value), _rate_source(rate)))
    for key, rate in device.interface_rates().items():  # every interface a derivation may use: HBM, L2, shared memory, host
        title = device.path_title(key) if key == BANDWIDTH else rate_title(key, device.kind == "gpu", device.memory_name)
        rows.append((title[:1].upper() + title[1:], format_bandwidth(rate.value, binary), _rate_source(rate)))
    return FormattedTable(("Rate", "Value", "Source"), tuple(rows))


def summary_table(operations: Sequence[OperationReport], binary: bool) -> FormattedTable:
    rows = []
    for item in operations:
        a = item.analysis
        if a is None:
            rows.append((item.entry.name or NO_VALUE, NO_VALUE, NO_VALUE, NO_VALUE, NO_VALUE, item.error or NO_VALUE))
            continue
        rows.append(
            (
                item.entry.name or a.declaration.op,
                f"{format_flop(a.flop)} ({a.convention})",
                format_bytes(a.bytes, binary),
                format_intensity(a.intensity) if a.bytes else NO_VALUE,
                format_time(a.bound_time) if a.bound_time is not None else NO_VALUE,
                f"{a.limiter}-limited" if a.limiter else NO_VALUE,
            )
        )
    return FormattedTable(("Operation", "Work", "Compulsory bytes", "Intensity", "Bound time", "Limiter"), tuple(rows))


def kinds_table(operations: Sequence[OperationReport], times: Sequence[float]) -> FormattedTable:
    """A large session summed by kind of operation (gemm, add, …): how many, their bound time together and its
    share of the session's, and the kind's longest operation; the kinds that take the most time first."""
    total = sum(times)
    kinds: dict[str, list[int]] = {}
    for index, item in enumerate(operations):
        kind = item.analysis.declaration.op if item.analysis is not None else "not analysed"
        kinds.setdefault(kind, []).append(index)
    rows = []
    for kind, members in sorted(kinds.items(), key=lambda pair: (-sum(times[i] for i in pair[1]), pair[0])):
        time_together = sum(times[i] for i in members)
        longest = max(members, key=lambda i: (times[i], -i))
        rows.append((
            kind,
            f"{len(members):,}",
            format_time(time_together) if time_together else NO_VALUE,
            format_percent(100 * time_together / total) if total else NO_VALUE,
            operations[longest].entry.name or operations[longest].entry.declaration,
        ))
    return FormattedTable(("Kind", "Operations", "Bound time together", "Share of the session", "Longest"), tuple(rows))


def tensors_table(analysis: Analysis, binary: bool) -> FormattedTable:
    rows = tuple(
        (
            tensor.name,
            tensor.role,
            " × ".join(f"{symbol}={extent}" for symbol, extent in zip(tensor.shape_symbols, tensor.shape)) or "scalar",
            tensor.dtype,
            f"{format_int(tensor.bytes)} B ≈ {format_bytes(tensor.bytes, binary)}",
        )
        for tensor in analysis.tensors
    )
    return FormattedTable(("Tensor", "Role", "Shape", "Type", "Bytes"), rows)


def bounds_table(analysis: Analysis, binary: bool) -> FormattedTable:
    a = analysis
    rows: list[tuple[str, str, str]] = []
    if a.compute_rate is not None and a.compute_time is not None:
        rows.append(
            (
                f"Compute time bound ({a.path})",
                format_time(a.compute_time),
                f"{format_flop(a.flop)} at {format_flop_rate(a.compute_rate.value)}, {a.compute_rate.source}",
            )
        )
    if a.bandwidth is not None and a.memory_time is not None:
        rows.append(
            (
                f"Memory time bound ({a.memory_name})",
                format_time(a.memory_time),
                f"{format_bytes(a.bytes, binary)} at {format_bandwidth(a.bandwidth.value, binary)}, {a.bandwidth.source}",
            )
        )
    link = a.link if a.link is not None and a.link.time is not None else None
    if link is not None:  # a collective: its bytes per rank over a link between chips are a third term
        rows.append(
            (
                f"Link time bound ({link.link.name})",
                format_time(link.time),
                f"{format_bytes(link.bytes_per_rank, binary)} per rank at {format_bandwidth(link.link.per_direction, binary)} "
                f"per direction, {link.link.origin}",
            )
        )
    if a.bound_full_overlap is not None:
        largest = "the largest of the three" if link is not None else "the larger of the two"
        rows.append(("Bound, full overlap", format_time(a.bound_full_overlap), largest))
    if a.bound_no_overlap is not None:
        rows.append(("Bound, no overlap", format_time(a.bound_no_overlap), f"the sum of the {'three' if link is not None else 'two'}"))
    if a.bound_time is not None and a.overlap.label not in ("full", "none"):
        rows.append((f"Bound, overlap f = {a.overlap.label}", format_time(a.bound_time), "the session's setting"))
    rows.append(("Arithmetic intensity", format_intensity(a.intensity) if a.bytes else NO_VALUE, "logical FLOP / compulsory byte"))
    if a.ridge is not None:
        rows.append(("Ridge point", format_intensity(a.ridge), "compute rate / bandwidth"))
    return FormattedTable(("Bound", "Value", "From"), tuple(rows))


def runs_table(runs: Iterable[ReportRun], binary: bool, with_declaration: bool = False) -> FormattedTable:
    headers = ["Run", "Median", "p10 – p90", "Samples", "Achieved bandwidth", "Achieved rate", "% of bound", "Check"]
    if with_declaration:
        headers.insert(1, "Declaration")
    rows = []
    for run in runs:
        spread = (
            f"{format_time(run.p10_s)} – {format_time(run.p90_s)}"
            if run.p10_s is not None and run.p90_s is not None
            else NO_VALUE
        )
        row = [
            run.run_id + (f" ({run.mode})" if run.mode else ""),
            format_time(run.median_s) if run.median_s is not None else NO_VALUE,
            spread,
            str(len(run.samples_s)) if run.samples_s else NO_VALUE,
            format_bandwidth(run.achieved_byte_per_s, binary) if run.achieved_byte_per_s is not None else NO_VALUE,
            format_flop_rate(run.achieved_flop_per_s) if run.achieved_flop_per_s is not None else NO_VALUE,
            run.percent_text,
            run.check_text,
        ]
        if with_declaration:
            row.insert(1, run.declaration or NO_VALUE)
        rows.append(tuple(row))
    return FormattedTable(tuple(headers), tuple(rows))
