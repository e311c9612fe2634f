"""Reports of a session: Markdown and HTML for people, CSV for spreadsheets (Qt-free).

Both documents say the same things, built once by `build_report`: the device
and the rates in use with their sources, each operation's derivation,
tensors and bounds, the measured runs beside the bound (median, spread,
achieved rate, % of bound, check result, conditions), imported profiler
records, and the plot when the caller supplies one as PNG (the GUI renders
it; this module never imports Qt). The HTML is one file that needs no
network: inline CSS, the image as a data URI, and a content policy that
forbids fetching anything. The Markdown links the plot as a PNG file written
beside it (`lab.md` → `lab-plot.png`), so the text stays a few kilobytes;
`inline_plot=True` embeds it as a data URI instead.

A CSV report is three files: `lab.csv`, one row per operation (FLOP, bytes,
intensity, bounds, the measured median and its % of bound, units in the
headers), `lab-samples.csv`, every raw timing sample, and `lab-steps.csv`,
where each step's time goes by kind and by module (the breakdown the
Markdown and HTML reports show, from the same function). Numbers are written
as the shortest text that reads back as the same float, after rounding to 12
significant figures: timers resolve nanoseconds, and the digits below that
(`0.008677078000000001`) are noise from converting them to seconds.

Measurement runs and profiler records are plain dicts owned by other parts
of the app; they are read defensively, and only what is present is shown.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from workbench import __version__
from workbench.analysis import Analysis
from workbench.devices import BANDWIDTH, NOMINAL, Device
from workbench.devices.rate_titles import rate_title
from workbench.errors import WorkbenchError
from workbench.files import FileReadError, require_regular
from workbench.label_layout import EVERY_LABEL_UP_TO, labelled_points
from workbench.measure.record import OK
from workbench.notes import as_markdown, with_boxes_drawn
from workbench.conventions import CONVENTION_LABELS
from workbench.plausibility import ImpossibleResult
from workbench.runs import UNCHECKED, FigureContext, parse_run
from workbench.runs import run_figures
from workbench.session import OperationEntry, Session, canonical_declaration, write_atomic
from workbench.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_rate,
    format_int,
    format_intensity,
    format_number,
    format_percent,
    format_time,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MARKDOWN_SUFFIXES = (".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
CSV_SUFFIXES = (".csv",)
SAMPLES_CSV_COLUMNS = ("run_id", "operation", "declaration", "sample_index", "time [s]", "valid")
SUMMARY_CSV_COLUMNS = (
    "operation", "declaration", "FLOP [FLOP]", "convention", "compulsory bytes [B]", "intensity [FLOP/B]",
    "compute bound [s]", "memory bound [s]", "bound [s]", "limiter", "device", "valid runs",
    "measured median [s]", "measured on", "% of bound [%]", "run_id",
)
STEPS_CSV_COLUMNS = (
    "step", "by", "group", "operations", "FLOP [FLOP]", "bytes [B]", "bound [s]", "time [s]",
    "share of summed time [%]", "measured operations", "limiter", "step time [s]", "error",
)
SAMPLES_SUFFIX = "-samples"  # lab.csv → lab-samples.csv
STEPS_SUFFIX = "-steps"  # lab.csv → lab-steps.csv: where each step's time goes
PLOT_SUFFIX = "-plot"  # lab.md → lab-plot.png
CSV_SIGNIFICANT_DIGITS = 12
MAX_PROFILE_COLUMNS = 8
MAX_PROFILE_ROWS = 200
NO_VALUE = "–"
PERCENT_OF_BOUND_NOTE = (
    "% of bound = bound time on the device the run ran on / measured median: 100 % means the run reached the bound."
)
ABOVE_BOUND_NOTE = (
    "A run above 100 % beat its lower bound: a rate in use is below what the machine sustains, "
    "the bytes are over-counted, or the working set stayed in a cache. Check before trusting either figure."
)
IMPOSSIBLE_MARK = "⚠ impossible"


def _run_notes(runs: Sequence[ReportRun]) -> list[str]:
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


class ReportError(WorkbenchError):
    """A report that cannot be written (an unknown file type, an unwritable folder)."""


# ---------------------------------------------------------------- the model


@dataclass(frozen=True)
class FormattedTable:
    """A table of already formatted cells."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class ReportRun:
    """What a report shows of one measurement run: the figures of `workbench.runs.run_figures`, as they are."""

    run_id: str
    declaration: str | None
    median_s: float | None
    p10_s: float | None
    p90_s: float | None
    samples_s: tuple[float, ...]
    achieved_byte_per_s: float | None
    achieved_flop_per_s: float | None
    percent_of_bound: float | None
    valid: bool | None
    conditions: tuple[tuple[str, str], ...]
    mode: str | None
    device_name: str = ""  # the device the % of bound is against: the one the run ran on
    device_note: str = ""  # how the device was chosen, when that needs saying
    other_device: bool = False  # the run ran on another device than the session shows
    impossible: ImpossibleResult | None = None
    missed: str = ""  # the assumption of the bound the run misses (analysis/shortfall.py), when it falls short

    @property
    def check_text(self) -> str:
        if self.valid is None:
            return NO_VALUE
        return "passed" if self.valid else "FAILED: not a valid measurement"

    @property
    def percent_text(self) -> str:
        """'42.3 %', with the device beside it when it is not the session's, and the impossible mark."""
        if self.percent_of_bound is None:
            return NO_VALUE
        text = format_percent(self.percent_of_bound)
        if self.other_device:
            text += f" (on {self.device_name.split(' (')[0]})"  # 'Generic CPU', without its details in brackets
        if self.impossible is not None:
            text += f" {IMPOSSIBLE_MARK}"
        return text


@dataclass(frozen=True)
class OperationReport:
    """One operation: its entry, its analysis (or the error that stops it) and its runs."""

    entry: OperationEntry
    analysis: Analysis | None
    error: str | None
    runs: tuple[ReportRun, ...]


@dataclass(frozen=True)
class ProfileSection:
    """One imported profiler file (or the records that are not one) as a titled table with notes."""

    title: str
    table: FormattedTable
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """Everything a rendered report says, independent of Markdown or HTML."""

    title: str
    description: str
    written: str
    device_line: str
    settings_line: str
    rates: FormattedTable
    summary: FormattedTable
    operations: tuple[OperationReport, ...]
    other_runs: tuple[ReportRun, ...]
    profiles: tuple[ProfileSection, ...]
    binary: bool
    steps: tuple["StepSection", ...] = ()
    # A large session (more operations than the plot labels every one of): the summary by kind of operation,
    # and the operations given a section of their own (the ones the plot labels, and those with runs); the
    # summary table then lists those, and the CSV report every operation. None and all for a small session.
    kinds: FormattedTable | None = None
    detailed: tuple[int, ...] | None = None

    def sections(self) -> list[tuple[int, OperationReport]]:
        """The operations with a section, with their numbers in the session (from 1)."""
        chosen = range(len(self.operations)) if self.detailed is None else self.detailed
        return [(index + 1, self.operations[index]) for index in chosen]

    def large_note(self, csv_name: str = "the CSV report") -> str:
        """What a large session's report leaves out, and where it is."""
        if self.detailed is None:
            return ""
        return (f"{len(self.operations):,} operations: this report gives the {len(self.detailed):,} that take the most "
                f"time (those the plot labels) and those with measured runs a section each; {csv_name} "
                "(workbench report SESSION -o FILE.csv) lists every operation.")


@dataclass(frozen=True)
class StepSection:
    """A session's step in a report: where its time goes by kind and by module (workbench.breakdown), or why not."""

    name: str
    step_time: str
    by_kind: FormattedTable
    by_module: FormattedTable
    error: str = ""
    breakdown: Any = None  # the figures behind both tables (workbench.breakdown.Breakdown), for the CSV report
    step_time_s: float | None = None


def _breakdown_table(groups: Sequence[Any], binary: bool) -> FormattedTable:
    from workbench.breakdown import COLUMNS

    rows = tuple(
        (group.name, f"{group.count:,}", format_flop(group.flop), format_bytes(group.bytes, binary),
         format_time(group.bound_s) if group.bound_s is not None else "—", format_time(group.time_s),
         f"{group.share * 100:.1f} %", f"{group.measured:,} of {group.count:,}", group.limiter)
        for group in groups
    )
    return FormattedTable(COLUMNS, rows)


def _step_sections(session: Session, device: Device | None, binary: bool) -> tuple[StepSection, ...]:
    """Each step of the session laid out on its device (runs' medians where measured, else bounds) and grouped."""
    from workbench.breakdown import KIND, MODULE, where_time_goes
    from workbench.steps import step_timeline

    sections = []
    empty = FormattedTable((), ())
    for step in session.steps:
        try:
            timeline = step_timeline(step.text, device, session.runs, session.figure_context(device))
            breakdown = where_time_goes(timeline, device)
        except WorkbenchError as exc:
            sections.append(StepSection(step.name, "", empty, empty, str(exc)))
            continue
        sections.append(StepSection(step.name, format_time(timeline.step_time), _breakdown_table(breakdown.groups(KIND), binary),
                                    _breakdown_table(breakdown.groups(MODULE), binary), breakdown=breakdown,
                                    step_time_s=timeline.step_time))
    return tuple(sections)


def _finite_positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return format_number(value) if math.isfinite(value) else NO_VALUE
    if isinstance(value, int):
        return str(value)
    if value is None:
        return NO_VALUE
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return ", ".join(f"{key}: {_scalar_text(item)}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_scalar_text(item) for item in value)
    return str(value)


def _conditions(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        return ()
    return tuple((str(key), _scalar_text(item)) for key, item in value.items())


def report_run(run: Mapping[str, Any], index: int, context: FigureContext | None) -> ReportRun:
    """One run dict as the report shows it: parsed and figured by `workbench.runs` (the window's function).

    Nothing stored with the run (a median, an achieved rate) is trusted: every
    figure comes from the raw samples, the declaration, the run's own device
    and the session's convention.
    """
    figures = run_figures(parse_run(run, index), context or FigureContext())
    declaration = run.get("declaration")
    status = figures.status
    return ReportRun(
        run_id=figures.id,
        declaration=declaration if isinstance(declaration, str) else None,
        median_s=figures.median_s,
        p10_s=figures.p10_s,
        p90_s=figures.p90_s,
        samples_s=figures.samples_s,
        achieved_byte_per_s=figures.achieved_byte_per_s,
        achieved_flop_per_s=figures.achieved_flop_per_s,
        percent_of_bound=figures.percent_of_bound,
        valid=True if status == OK else None if status == UNCHECKED else False,
        conditions=_conditions(figures.run.conditions),
        mode=figures.mode or None,
        device_name=figures.device_name,
        device_note=figures.device_note,
        other_device=bool(figures.device_note) and not figures.on_session_device,
        impossible=figures.impossible,
        missed=figures.missed,
    )


def _rate_source(rate: Any) -> str:
    return f"{rate.source}{f' — {rate.citation}' if rate.citation else ''}"


def _rates_table(device: Device | None, binary: bool) -> FormattedTable:
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


def _summary_table(operations: Sequence[OperationReport], binary: bool) -> FormattedTable:
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


def _impossible_kernels(profile: Any, context: FigureContext) -> list[str]:
    """A line for each matched kernel faster than the bound of the GPU the file states (as the Profile tab flags it),
    and one saying how many matched kernels were left unchecked where the matches select more than are compared."""
    from workbench.profilers.kernel_compare import compare_profile, profile_provenance
    from workbench.runs import run_device

    device, _, _ = run_device(profile_provenance(profile), context.session_device, "the file")
    try:
        comparisons = compare_profile(profile, None, device, context.convention, context.overlap, context.binary)
    except WorkbenchError:
        return []
    lines = []
    for c in comparisons:
        if c.impossible is not None:
            likely = "; ".join(reason.name for reason in c.impossible.likely_reasons) or "see the Profile tab"
            lines.append(f"{c.kernel_name} ⟷ {c.declaration}: {IMPOSSIBLE_MARK}, {c.impossible.headline}. Check: {likely}.")
    if comparisons.selected > len(comparisons):
        lines.append(
            f"… and {comparisons.selected - len(comparisons):,} more matched kernels not checked: the matches select "
            f"{comparisons.selected:,} kernels and the first {len(comparisons):,} are compared with their bounds "
            "(a narrower pattern picks the kernels that implement the operation)."
        )
    return lines


def _profile_sections(
    records: Sequence[Mapping[str, Any]], convention: str, binary: bool, context: FigureContext | None = None
) -> tuple[ProfileSection, ...]:
    """Each imported profile as its per-kernel table; records of any other shape in one generic table."""
    from workbench.profilers import Profile
    from workbench.profilers.render import kernel_rows

    context = context or FigureContext(convention=convention, binary=binary)
    sections: list[ProfileSection] = []
    others: list[Mapping[str, Any]] = []
    for record in records:
        try:
            profile = Profile.from_dict(record)
            rows = kernel_rows(profile.kernels(), convention, binary)
        except WorkbenchError:
            others.append(record)
            continue
        where = f", {profile.device_name}" if profile.device_name else ""
        sections.append(
            ProfileSection(
                f"{profile.source or 'profile'}: {profile.title}{where}",
                FormattedTable(rows[0], tuple(rows[1:])),
                (profile.conditions_note, *profile.notes, *_impossible_kernels(profile, context)),
            )
        )
    if others:
        table, left_out = _generic_records_table(others)
        notes = (f"… and {left_out} more records in the session file.",) if left_out else ()
        sections.append(ProfileSection("Other imported records", table, notes))
    return tuple(sections)


def _generic_records_table(records: Sequence[Mapping[str, Any]]) -> tuple[FormattedTable, int]:
    """Records of unknown shape as a table of their first scalar columns."""
    columns: list[str] = []
    for record in records:
        for key, value in record.items():
            if key not in columns and not isinstance(value, (Mapping, list, tuple)):
                columns.append(key)
            if len(columns) >= MAX_PROFILE_COLUMNS:
                break
        if len(columns) >= MAX_PROFILE_COLUMNS:
            break
    shown = records[:MAX_PROFILE_ROWS]
    rows = tuple(tuple(_scalar_text(record.get(column)) for column in columns) for record in shown)
    return FormattedTable(tuple(columns), rows), len(records) - len(shown)


def build_report(session: Session) -> Report:
    """Analyse every operation and read every run once; both renderers work from the result."""
    binary = session.settings.binary
    device: Device | None = None
    device_error: str | None = None
    try:
        device = session.device.resolve()
    except WorkbenchError as exc:
        device_error = str(exc)
    analyses = session.analyze_all(device) if device is not None else [None for _ in session.operations]
    context = session.figure_context(device)
    operations: list[OperationReport] = []
    claimed: set[int] = set()
    keyed_runs = [(i, run, canonical_declaration(run.get("declaration"))) for i, run in enumerate(session.runs)]
    for entry, result in zip(session.operations, analyses):
        analysis = result if isinstance(result, Analysis) else None
        error = str(result) if isinstance(result, WorkbenchError) else device_error
        if analysis is not None and analysis.missing_rate is not None:
            error = analysis.missing_rate
        wanted = canonical_declaration(entry.declaration)
        runs = []
        for index, run, key in keyed_runs:
            if wanted is not None and key == wanted:
                claimed.add(index)
                runs.append(report_run(run, index, context))
        operations.append(OperationReport(entry, analysis, error, tuple(runs)))

    other_runs = [report_run(run, index, context) for index, run, _ in keyed_runs if index not in claimed]

    profiles = _profile_sections(session.profiles, session.settings.convention, binary, context)
    if device is not None:
        device_line = f"{device.name} ({device.key})"
        if device.source:
            nominal = any(rate.source == NOMINAL for rate in device.peak.values())
            device_line += f"; nominal figures: {device.source}" if nominal else f"; figures from {device.source}"
    else:
        device_line = f"no device: {device_error}"
    overlap = session.settings.overlap
    overlap_words = "full (max)" if overlap == 1.0 else "none (sum)" if overlap == 0.0 else f"f = {format_number(overlap)}"
    convention = CONVENTION_LABELS.get(session.settings.convention, session.settings.convention)
    settings_line = (
        f"FLOP convention {convention}; overlap {overlap_words}; "
        f"bytes in {'binary (MiB, GiB)' if binary else 'decimal (MB, GB)'} units"
    )
    kinds: FormattedTable | None = None
    detailed: tuple[int, ...] | None = None
    times = [(item.analysis.bound_time or 0.0) if item.analysis is not None else 0.0 for item in operations]
    if len(operations) > EVERY_LABEL_UP_TO:
        chosen = set(labelled_points(times)) | {index for index, item in enumerate(operations) if item.runs}
        detailed = tuple(sorted(chosen))
        kinds = _kinds_table(operations, times)
    # a large session's summary: the operations with a section, the longest first
    listed = sorted(detailed, key=lambda index: (-times[index], index)) if detailed is not None else range(len(operations))
    summary = _summary_table([operations[index] for index in listed], binary)
    return Report(
        title=session.title or "Performance Workbench session",
        description=session.description,
        written=f"Written {time.strftime('%Y-%m-%d %H:%M %Z')} by Performance Workbench {__version__}",
        device_line=device_line,
        settings_line=settings_line,
        rates=_rates_table(device, binary),
        summary=summary,
        operations=tuple(operations),
        other_runs=tuple(other_runs),
        profiles=profiles,
        binary=binary,
        steps=_step_sections(session, device, binary),
        kinds=kinds,
        detailed=detailed,
    )


def _kinds_table(operations: Sequence[OperationReport], times: Sequence[float]) -> FormattedTable:
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


def _check_png(plot_png: bytes | None) -> None:
    if plot_png is not None and not bytes(plot_png).startswith(PNG_SIGNATURE):
        raise ReportError("the plot image is not a PNG")


# ---------------------------------------------------------------- Markdown


# Markdown: every piece of text from the session (titles, names, notes, run ids, conditions, profile
# fields, even the declaration line, which may carry a comment) is untrusted. Escaped, it renders as
# the text it is: no raw HTML (<script>, <img onerror=…>), no image that loads a remote URL, no
# emphasis or link syntax, no code fence that swallows what follows.
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# Emphasis marks stay: "2**24" and "sm_clock_mhz" must read as themselves, and emphasis hides nothing.
_MD_BACKSLASHED = frozenset("\\`[]!|~")
_MD_LINE_START = re.compile(r"^(\s*)([#+=-]|\d+[.)])")  # a heading, list item or setext underline


def _md_text(text: str) -> str:
    """One line of untrusted text as inert Markdown: HTML as entities, syntax characters backslash-escaped."""
    out = []
    for char in text.replace("\r", " ").replace("\n", " "):
        if char in _MD_ENTITIES:
            out.append(_MD_ENTITIES[char])
        elif char in _MD_BACKSLASHED:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _md_cell(text: str) -> str:
    return _md_text(text)


def markdown_inline(text: str) -> str:
    """Untrusted one-line text as inert Markdown: the one escaping every Markdown the app writes uses."""
    return _md_text(text)


def _md_block(text: str) -> str:
    """Untrusted multi-line text (a description, notes) as inert Markdown, its line breaks kept.

    Each line is escaped like a cell, and a line that would start a heading or
    a list gets its first mark escaped; single lines end in two spaces so
    Markdown keeps the breaks.
    """
    lines = []
    for line in text.splitlines():
        if not line.strip():
            lines.append("")
            continue
        escaped = _MD_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), _md_text(line.rstrip()))
        lines.append(escaped + "  ")
    return "\n".join(lines).rstrip()


_MD_ESCAPED_BOX = re.compile(r"^(\s*)\\([-+*]) \\\[([ xX])\\\] ")


def _md_notes(text: str) -> str:
    """Notes as inert Markdown whose checklist boxes stay boxes: `- [ ]` and `- [x]` keep their task syntax.

    A task marker is neither a link, an image nor HTML, so restoring it after
    the escaping keeps the rest of each line inert (workbench/notes.py finds the boxes).
    """
    block = _md_block(as_markdown(text))
    return "\n".join(_MD_ESCAPED_BOX.sub(lambda m: f"{m.group(1)}{m.group(2)} [{m.group(3)}] ", line) for line in block.split("\n"))


def _md_hard_breaks(text: str) -> str:
    """Free text with its line breaks kept (Markdown joins single lines unless they end in two spaces)."""
    return _md_block(text)


def _md_code(text: str) -> str:
    """Untrusted text as an inline code span: delimited by more backticks than any run inside it."""
    line = text.replace("\r", " ").replace("\n", " ")
    fence = "`" * (_longest_backtick_run(line) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def _md_fenced(text: str, info: str = "text") -> list[str]:
    """A fenced code block whose fence is longer than any backtick run in `text`, so it always closes."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return [f"{fence}{info}", text, fence]


def _longest_backtick_run(text: str) -> int:
    runs = re.findall(r"`+", text)
    return max((len(run) for run in runs), default=0)


def _md_table(table: FormattedTable) -> list[str]:
    if not table.rows:
        return ["(none)", ""]
    lines = ["| " + " | ".join(_md_cell(h) for h in table.headers) + " |"]
    lines.append("|" + "|".join("---" for _ in table.headers) + "|")
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in table.rows]
    lines.append("")
    return lines


def _md_conditions(runs: Sequence[ReportRun]) -> list[str]:
    lines = []
    for run in runs:
        if run.conditions:
            details = "; ".join(f"{key}: {value}" for key, value in run.conditions)
            lines.append(f"- Conditions of {_md_cell(run.run_id)}: {_md_cell(details)}")
    return lines + [""] if lines else []


def render_markdown(session: Session, plot_png: bytes | None = None, plot_file: str | None = None) -> str:
    """The session as a Markdown document. The plot: `plot_file`, a PNG beside the document, linked by
    its relative name; else `plot_png` embedded as a data URI; else none."""
    _check_png(plot_png)
    report = build_report(session)
    lines = [f"# {_md_text(report.title)}", ""]
    if report.description.strip():
        lines += [_md_notes(report.description), ""]
    lines += [
        f"*{_md_text(report.written)}.*",
        "",
        f"**Device:** {_md_text(report.device_line)}  ",
        f"**Settings:** {_md_text(report.settings_line)}",
        "",
        "## Rates in use",
        "",
        *_md_table(report.rates),
    ]
    if report.kinds is not None:
        lines += ["## Summary by kind", "", *_md_table(report.kinds), f"*{_md_text(report.large_note())}*", "",
                  "## Largest operations", "", *_md_table(report.summary)]
    else:
        lines += ["## Summary", "", *_md_table(report.summary)]
    if plot_file is not None:
        lines += ["## Plot", "", f"![Roofline plot of the session](<{plot_file}>)", ""]
    elif plot_png is not None:
        encoded = base64.b64encode(plot_png).decode("ascii")
        lines += ["## Plot", "", f"![Roofline plot of the session](data:image/png;base64,{encoded})", ""]
    for number, item in report.sections():
        entry = item.entry
        declaration = _md_code(entry.declaration)
        if declaration.startswith("```"):  # a line opening with three backticks could be read as a fence
            declaration = f"Declaration: {declaration}"
        lines += [f"## {number}. {_md_text(entry.name or entry.declaration)}", "", declaration, ""]
        if entry.notes.strip():
            lines += ["**Notes**", "", _md_notes(entry.notes.strip()), ""]
        if item.analysis is None:
            lines += [f"**Not analysed:** {_md_text(item.error or '')}", ""]
            continue
        a = item.analysis
        lines += ["**Derivation**", "", *_md_fenced(a.derivation_text()), ""]
        lines += ["**Tensors**", "", *_md_table(tensors_table(a, report.binary))]
        lines += ["**Bounds**", "", *_md_table(bounds_table(a, report.binary)), f"*{_md_text(a.limiter_sentence())}*", ""]
        if item.runs:
            lines += ["**Measured runs**", "", *_md_table(runs_table(item.runs, report.binary))]
            lines += [_md_text(" ".join(_run_notes(item.runs))), "", *_md_conditions(item.runs)]
    if report.other_runs:
        lines += ["## Runs of other declarations", "", *_md_table(runs_table(report.other_runs, report.binary, True))]
        lines += [_md_text(" ".join(_run_notes(report.other_runs))), "", *_md_conditions(report.other_runs)]
    for step in report.steps:
        lines += [f"## Step {_md_text(step.name)}: where the time goes", ""]
        if step.error:
            lines += [f"**Not laid out:** {_md_text(step.error)}", ""]
            continue
        lines += [f"Step time {_md_text(step.step_time)}; share: of the operations' summed time.", ""]
        lines += ["**By kind**", "", *_md_table(step.by_kind), "**By module**", "", *_md_table(step.by_module)]
    if report.profiles:
        lines += ["## Imported profiler records", ""]
        for section in report.profiles:
            lines += [f"**{_md_text(section.title)}**", "", *_md_table(section.table)]
            lines += [f"- {_md_text(note)}" for note in section.notes]
            lines += [""] if section.notes else []
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------- HTML

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1d232a;
       max-width: 64rem; margin: 2rem auto; padding: 0 1.5rem; line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: .2rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #ccd3da; padding-bottom: .2rem; margin-top: 2.2rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
.meta { color: #5b6670; font-size: .9rem; }
code, .derivation td.expr { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .88rem; }
code.decl { background: #eef2f5; padding: .15rem .4rem; border-radius: 3px; }
table { border-collapse: collapse; margin: .4rem 0 .8rem; font-size: .9rem; }
th, td { border: 1px solid #ccd3da; padding: .25rem .55rem; text-align: left; vertical-align: top; }
th { background: #eef2f5; }
td.num { text-align: right; white-space: nowrap; }
.notes { white-space: pre-wrap; background: #f7f9fa; border-left: 3px solid #9fb3c4; padding: .5rem .8rem; }
.limiter { font-weight: 600; }
.error { color: #a2231d; font-weight: 600; }
.failed { color: #a2231d; font-weight: 600; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #ccd3da; }
ul.small { font-size: .85rem; color: #3c464f; }
"""

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def _html_table(table: FormattedTable, css_class: str = "", numeric_columns: Sequence[int] = ()) -> str:
    if not table.rows:
        return "<p class=\"meta\">(none)</p>"
    head = "".join(f"<th>{_h(h)}</th>" for h in table.headers)
    body = []
    for row in table.rows:
        cells = []
        for index, cell in enumerate(row):
            classes = []
            if index in numeric_columns:
                classes.append("num")
            if cell.startswith("FAILED"):
                classes.append("failed")
            attribute = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{attribute}>{_h(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    class_attribute = f' class="{css_class}"' if css_class else ""
    return f"<table{class_attribute}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _html_derivation(analysis: Analysis) -> str:
    rows = []
    for step in analysis.steps:
        rows.append(
            f"<tr><td>{_h(step.label)}</td><td class=\"expr\">{_h(step.expression)}</td>"
            f"<td class=\"expr\">{_h(step.relation if step.expression else '')} {_h(step.result)}</td></tr>"
        )
    notes = "".join(f"<li>{_h(note)}</li>" for note in analysis.notes)
    return (
        f"<table class=\"derivation\"><thead><tr><th>Step</th><th>Expression</th><th>Result</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>" + (f"<ul class=\"small\">{notes}</ul>" if notes else "")
    )


def _html_conditions(runs: Sequence[ReportRun]) -> str:
    items = []
    for run in runs:
        if run.conditions:
            details = "; ".join(f"{key}: {value}" for key, value in run.conditions)
            items.append(f"<li>Conditions of {_h(run.run_id)}: {_h(details)}</li>")
    return f"<ul class=\"small\">{''.join(items)}</ul>" if items else ""


def render_html(session: Session, plot_png: bytes | None = None) -> str:
    """The session as one self-contained HTML page: inline CSS, the plot as a data URI, no network."""
    _check_png(plot_png)
    report = build_report(session)
    parts = [
        "<!DOCTYPE html>",
        "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{_h(report.title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_h(report.title)}</h1>",
        f"<p class=\"meta\">{_h(report.written)}</p>",
    ]
    if report.description:
        parts.append(f"<p class=\"notes\">{_h(with_boxes_drawn(report.description))}</p>")
    parts += [
        f"<p><strong>Device:</strong> {_h(report.device_line)}<br>",
        f"<strong>Settings:</strong> {_h(report.settings_line)}</p>",
        "<h2>Rates in use</h2>",
        _html_table(report.rates, numeric_columns=(1,)),
    ]
    if report.kinds is not None:
        parts += ["<h2>Summary by kind</h2>", _html_table(report.kinds, numeric_columns=(1, 2, 3)),
                  f"<p class=\"meta\">{_h(report.large_note())}</p>", "<h2>Largest operations</h2>"]
    else:
        parts.append("<h2>Summary</h2>")
    parts.append(_html_table(report.summary, numeric_columns=(1, 2, 3, 4)))
    if plot_png is not None:
        encoded = base64.b64encode(plot_png).decode("ascii")
        parts += [
            "<h2>Plot</h2>",
            f"<figure><img alt=\"Roofline plot of the session\" src=\"data:image/png;base64,{encoded}\"></figure>",
        ]
    parts += _html_operations(report)
    parts += _html_steps_and_profiles(report)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_operations(report: Report) -> list[str]:
    """A section per operation (derivation, tensors, bounds, its runs), then the runs of other declarations."""
    binary = report.binary
    parts: list[str] = []
    for number, item in report.sections():
        entry = item.entry
        heading = entry.name or entry.declaration
        parts += [f"<h2>{number}. {_h(heading)}</h2>", f"<p><code class=\"decl\">{_h(entry.declaration)}</code></p>"]
        if entry.notes.strip():
            parts.append(f"<div class=\"notes\">{_h(with_boxes_drawn(entry.notes.strip()))}</div>")
        if item.analysis is None:
            parts.append(f"<p class=\"error\">Not analysed: {_h(item.error or '')}</p>")
            continue
        a = item.analysis
        parts += [
            f"<h3>Derivation <span class=\"meta\">({_h(a.convention)})</span></h3>",
            _html_derivation(a),
            "<h3>Tensors</h3>",
            _html_table(tensors_table(a, binary), numeric_columns=(4,)),
            "<h3>Bounds</h3>",
            _html_table(bounds_table(a, binary), numeric_columns=(1,)),
            f"<p class=\"limiter\">{_h(a.limiter_sentence())}</p>",
        ]
        if item.runs:
            parts += [
                "<h3>Measured runs</h3>",
                _html_table(runs_table(item.runs, binary), numeric_columns=(1, 3, 4, 5, 6)),
                *(f"<p class=\"meta\">{_h(note)}</p>" for note in _run_notes(item.runs)),
                _html_conditions(item.runs),
            ]
    if report.other_runs:
        parts += [
            "<h2>Runs of other declarations</h2>",
            _html_table(runs_table(report.other_runs, binary, with_declaration=True), numeric_columns=(2, 4, 5, 6, 7)),
            *(f"<p class=\"meta\">{_h(note)}</p>" for note in _run_notes(report.other_runs)),
            _html_conditions(report.other_runs),
        ]
    return parts


def _html_steps_and_profiles(report: Report) -> list[str]:
    """Where each step's time goes, then the imported profiler records."""
    parts: list[str] = []
    for step in report.steps:
        parts.append(f"<h2>Step {_h(step.name)}: where the time goes</h2>")
        if step.error:
            parts.append(f"<p class=\"error\">Not laid out: {_h(step.error)}</p>")
            continue
        parts += [
            f"<p class=\"meta\">Step time {_h(step.step_time)}; share: of the operations' summed time.</p>",
            "<h3>By kind</h3>", _html_table(step.by_kind, numeric_columns=(1, 2, 3, 4, 5, 6, 7)),
            "<h3>By module</h3>", _html_table(step.by_module, numeric_columns=(1, 2, 3, 4, 5, 6, 7)),
        ]
    if report.profiles:
        parts.append("<h2>Imported profiler records</h2>")
        for section in report.profiles:
            parts += [f"<h3>{_h(section.title)}</h3>", _html_table(section.table)]
            if section.notes:
                parts.append("<ul class=\"small\">" + "".join(f"<li>{_h(note)}</li>" for note in section.notes) + "</ul>")
    return parts


# ---------------------------------------------------------------- CSV


_CSV_FORMULA_MARKS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")  # with the full-width forms some readers accept
_CSV_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")
_CSV_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"  # zero-width spaces and joiners, the byte-order mark


def _csv_text(text: str) -> str:
    """Text a spreadsheet will not take for a formula (a shared session's names are untrusted).

    A cell starts at the field's start, and (in readers that split rows on a
    bare CR or LF inside a field) after each line break: every such start
    that opens with a formula mark, spaces before it or not, gets a "'" in
    front. The writer quotes the field, line breaks included (render_csv).
    """
    parts = _CSV_LINE_BREAK.split(text)
    for index in range(0, len(parts), 2):  # the even parts are the text between line breaks
        part = parts[index]
        # Any white space a reader may skip before a formula (a no-break space, a vertical tab, …), and the
        # zero-width characters, count as the spaces before the mark.
        opening = part.lstrip().lstrip(_CSV_INVISIBLE).lstrip()
        if opening[:1] in _CSV_FORMULA_MARKS and opening:
            parts[index] = "'" + part
    return "".join(parts)


def spreadsheet_text(text: str) -> str:
    """Untrusted text for a CSV cell, formula marks neutralised: the one rule every CSV the app writes uses
    (with a writer whose rows end in CSV_LINE_END, so a CR or LF inside a field is quoted)."""
    return _csv_text(text)


CSV_LINE_END = "\r\n"


def csv_number(value: float | int | None) -> str:
    """A number for a CSV cell: ints exact; floats rounded to 12 significant figures and written as the
    shortest text that reads back as that float ('0.008677078', not '0.008677078000000001'); '' for none."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return ""
    return repr(float(f"{value:.{CSV_SIGNIFICANT_DIGITS}g}"))


def _operation_names(session: Session) -> dict[str, str]:
    names: dict[str, str] = {}
    for entry in session.operations:
        key = canonical_declaration(entry.declaration)
        if key is not None and key not in names:
            names[key] = entry.name
    return names


def render_csv(session: Session, report: Report | None = None) -> str:
    """The per-operation summary: one row per operation — its work, bounds, and the fastest valid run of
    its declaration (median and % of bound on the device it ran on). Units are in the headers."""
    report = report or build_report(session)
    out = io.StringIO()
    # CRLF ends a row (RFC 4180), and the writer quotes any field holding a CR or an LF, so a bare CR
    # in a name cannot end a row early (with "\n" alone, a field holding only "\r" went unquoted).
    writer = csv.writer(out, lineterminator=CSV_LINE_END)
    writer.writerow(SUMMARY_CSV_COLUMNS)
    for item in report.operations:
        entry, a = item.entry, item.analysis
        valid = [run for run in item.runs if run.valid and run.median_s is not None]
        best = min(valid, key=lambda run: run.median_s or math.inf) if valid else None
        work: tuple[str, ...]
        if a is None:
            work = ("", "", "", "", "", "", "", _csv_text(item.error or ""), "")
        else:
            work = (
                csv_number(int(a.flop)),
                a.convention,
                csv_number(int(a.bytes)),
                csv_number(a.intensity) if a.bytes else "",
                csv_number(a.compute_time),
                csv_number(a.memory_time),
                csv_number(a.bound_time),
                a.limiter or "",
                _csv_text(a.device_name or ""),  # a detected GPU's name comes from the session file
            )
        writer.writerow(
            (
                _csv_text(entry.name),
                _csv_text(entry.declaration),
                *work,
                len(valid),
                csv_number(best.median_s) if best is not None else "",
                _csv_text(best.device_name) if best is not None else "",
                csv_number(best.percent_of_bound) if best is not None else "",
                _csv_text(best.run_id) if best is not None else "",
            )
        )
    return out.getvalue()


def render_steps_csv(session: Session, report: Report | None = None) -> str:
    """Where each step's time goes (workbench.breakdown, as the Markdown and HTML reports give it): one row per
    group, by kind and then by module; a step that cannot be laid out is one row with its error."""
    from workbench.breakdown import KIND, MODULE

    report = report or build_report(session)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=CSV_LINE_END)
    writer.writerow(STEPS_CSV_COLUMNS)
    for section in report.steps:
        name = _csv_text(section.name)
        if section.breakdown is None:
            writer.writerow((name, "", "", "", "", "", "", "", "", "", "", "", _csv_text(section.error)))
            continue
        for by in (KIND, MODULE):
            for group in section.breakdown.groups(by):
                writer.writerow((
                    name, by, _csv_text(group.name), group.count, csv_number(group.flop), csv_number(group.bytes),
                    csv_number(group.bound_s), csv_number(group.time_s), csv_number(group.share * 100),
                    group.measured, _csv_text(group.limiter), csv_number(section.step_time_s), "",
                ))
    return out.getvalue()


def render_samples_csv(session: Session) -> str:
    """Raw timing samples, one row per sample: run id, operation, declaration, index, seconds, check."""
    names = _operation_names(session)
    out = io.StringIO()
    # CRLF ends a row (RFC 4180), and the writer quotes any field holding a CR or an LF, so a bare CR
    # in a name cannot end a row early (with "\n" alone, a field holding only "\r" went unquoted).
    writer = csv.writer(out, lineterminator=CSV_LINE_END)
    writer.writerow(SAMPLES_CSV_COLUMNS)
    for index, run in enumerate(session.runs):
        figures = report_run(run, index, None)
        raw = run.get("samples_s")
        if not isinstance(raw, (list, tuple)):
            continue
        key = canonical_declaration(run.get("declaration"))
        operation = names.get(key, "") if key is not None else ""
        valid = "" if figures.valid is None else ("true" if figures.valid else "false")
        for sample_index, sample in enumerate(raw):
            number = _finite_positive(sample)
            if number is None:
                continue
            writer.writerow(
                (
                    _csv_text(figures.run_id),
                    _csv_text(operation),
                    _csv_text(figures.declaration or ""),
                    sample_index,
                    csv_number(number),
                    valid,
                )
            )
    return out.getvalue()


# ---------------------------------------------------------------- files


def report_kind(path: str | os.PathLike[str]) -> str:
    """"markdown", "html" or "csv" from the file's suffix; ReportError for anything else."""
    suffix = Path(path).suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in HTML_SUFFIXES:
        return "html"
    if suffix in CSV_SUFFIXES:
        return "csv"
    raise ReportError(f"cannot tell the report type of {os.fspath(path)}: use .md, .html or .csv")


def companion_path(path: str | os.PathLike[str], suffix: str, extension: str) -> Path:
    """The file written beside a report: lab.csv → lab-samples.csv, lab.md → lab-plot.png."""
    main = Path(path)
    return main.with_name(f"{main.stem}{suffix}{extension}")


def report_files(path: str | os.PathLike[str], has_plot: bool = False, inline_plot: bool = False) -> tuple[Path, ...]:
    """Every file `write_report` writes for `path`, the report itself first."""
    kind = report_kind(path)
    files = [Path(path)]
    if kind == "csv":
        files.append(companion_path(path, SAMPLES_SUFFIX, ".csv"))
        files.append(companion_path(path, STEPS_SUFFIX, ".csv"))
    elif kind == "markdown" and has_plot and not inline_plot:
        files.append(companion_path(path, PLOT_SUFFIX, ".png"))
    return tuple(files)


def write_report(session: Session, path: str | os.PathLike[str], plot_png: bytes | None = None,
                 inline_plot: bool = False) -> str:
    """Render the report the suffix asks for and write it, and its companion files, atomically; returns the
    kind written. CSV: the summary and the samples beside it. Markdown: the plot as a PNG beside it
    (`inline_plot`: embedded instead). HTML: one file."""
    kind = report_kind(path)
    _check_png(plot_png)
    files: list[tuple[str | os.PathLike[str], bytes]] = []
    try:
        if kind == "markdown":
            if plot_png is not None and not inline_plot:
                plot_path = companion_path(path, PLOT_SUFFIX, ".png")
                files.append((plot_path, plot_png))
                text = render_markdown(session, plot_file=plot_path.name)
            else:
                text = render_markdown(session, plot_png)
        elif kind == "html":
            text = render_html(session, plot_png)
        else:
            report = build_report(session)
            text = render_csv(session, report)
            files.append((companion_path(path, SAMPLES_SUFFIX, ".csv"), render_samples_csv(session).encode("utf-8")))
            files.append((companion_path(path, STEPS_SUFFIX, ".csv"), render_steps_csv(session, report).encode("utf-8")))
        encoded = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate in text the session got from outside a file
        raise ReportError(
            f"cannot write report {os.fspath(path)}: the session holds text that is not Unicode "
            f"(a lone surrogate U+{ord(exc.object[exc.start]):04X}); fix that text first"
        ) from None
    # Nothing is written until every path is known to take a regular file: the report's own path may be a
    # link to one (the user named it); a companion's is never a link (someone may have planted it there).
    for target, follow in ((path, True), *((companion, False) for companion, _ in files)):
        try:
            require_regular(target, missing_ok=True, follow_symlinks=follow)
        except FileReadError as exc:
            raise ReportError(f"cannot write report {os.fspath(target)}: {exc}; nothing was written") from None
    try:
        for companion, data in files:  # companions first: the report never links a file not yet written
            write_atomic(companion, data, what="report")
        write_atomic(path, encoded, what="report")
    except WorkbenchError as exc:
        raise ReportError(str(exc)) from None
    return kind
