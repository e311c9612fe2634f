"""The report as CSV files for spreadsheets: per operation, per timing sample, and per step group.

Numbers are written as the shortest text that reads back as the same float,
after rounding to 12 significant figures: timers resolve nanoseconds, and the
digits below that (`0.008677078000000001`) are noise from converting them to
seconds. Text from the session is untrusted and never starts a formula.
"""

from __future__ import annotations

import csv
import io
import math
import re
from typing import Any

from workbench.documents.report.build import build_report, report_run
from workbench.documents.report.model import Report
from workbench.documents.session import Session, canonical_declaration

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
CSV_SIGNIFICANT_DIGITS = 12


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
    """Where each step's time goes (workbench.documents.breakdown, as the Markdown and HTML reports give it): one row per
    group, by kind and then by module; a step that cannot be laid out is one row with its error."""
    from workbench.documents.breakdown import KIND, MODULE

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


def _finite_positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None
