"""Building a report from a session: every operation analysed and every run read once, for every renderer."""

from __future__ import annotations

import math
import time
from typing import Any, Mapping, Sequence

from workbench import __version__
from workbench.model.analysis import Analysis
from workbench.model.conventions import CONVENTION_LABELS
from workbench.model.devices import NOMINAL, Device
from workbench.errors import WorkbenchError
from workbench.scenes.label_layout import EVERY_LABEL_UP_TO, labelled_points
from workbench.measure.record import OK
from workbench.documents.report.model import (
    IMPOSSIBLE_MARK,
    NO_VALUE,
    FormattedTable,
    OperationReport,
    ProfileSection,
    Report,
    ReportRun,
    StepSection,
)
from workbench.documents.report.tables import breakdown_table, kinds_table, rates_table, summary_table
from workbench.measure.runs import UNCHECKED, FigureContext, parse_run, run_figures
from workbench.documents.session import Session, canonical_declaration
from workbench.model.units import format_number, format_time

MAX_PROFILE_COLUMNS = 8
MAX_PROFILE_ROWS = 200


def _step_sections(session: Session, device: Device | None, binary: bool) -> tuple[StepSection, ...]:
    """Each step of the session laid out on its device (runs' medians where measured, else bounds) and grouped."""
    from workbench.documents.breakdown import KIND, MODULE, where_time_goes
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
        sections.append(StepSection(step.name, format_time(timeline.step_time), breakdown_table(breakdown.groups(KIND), binary),
                                    breakdown_table(breakdown.groups(MODULE), binary), breakdown=breakdown,
                                    step_time_s=timeline.step_time))
    return tuple(sections)


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
    """One run dict as the report shows it: parsed and figured by `workbench.measure.runs` (the window's function).

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


def _impossible_kernels(profile: Any, context: FigureContext) -> list[str]:
    """A line for each matched kernel faster than the bound of the GPU the file states (as the Profile tab flags it),
    and one saying how many matched kernels were left unchecked where the matches select more than are compared."""
    from workbench.profilers.kernel_compare import compare_profile, profile_provenance
    from workbench.measure.runs import run_device

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
        kinds = kinds_table(operations, times)
    # a large session's summary: the operations with a section, the longest first
    listed = sorted(detailed, key=lambda index: (-times[index], index)) if detailed is not None else range(len(operations))
    summary = summary_table([operations[index] for index in listed], binary)
    return Report(
        title=session.title or "Performance Workbench session",
        description=session.description,
        written=f"Written {time.strftime('%Y-%m-%d %H:%M %Z')} by Performance Workbench {__version__}",
        device_line=device_line,
        settings_line=settings_line,
        rates=rates_table(device, binary),
        summary=summary,
        operations=tuple(operations),
        other_runs=tuple(other_runs),
        profiles=profiles,
        binary=binary,
        steps=_step_sections(session, device, binary),
        kinds=kinds,
        detailed=detailed,
    )
