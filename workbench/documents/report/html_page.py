"""The report as one self-contained HTML page: inline CSS, the plot as inline SVG, a policy that fetches nothing."""

from __future__ import annotations

import html
from typing import Sequence

from workbench.model.analysis import Analysis
from workbench.documents.notes import with_boxes_drawn
from workbench.documents.report.build import build_report
from workbench.documents.report.model import FormattedTable, Report, ReportRun, check_svg
from workbench.documents.report.tables import run_notes, bounds_table, runs_table, tensors_table
from workbench.documents.session import Session

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
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; border: 1px solid #ccd3da; }
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


def render_html(session: Session, plot_svg: str | None = None, report: Report | None = None) -> str:
    """The session as one self-contained HTML page: inline CSS, the plot (an `<svg>` element, every text in it
    escaped by its writer) inline, no network. `report`: the session's `build_report`, when the caller has it."""
    check_svg(plot_svg)
    report = report or build_report(session)
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
    if plot_svg is not None:
        parts += ["<h2>Plot</h2>", f"<figure class=\"plot\">{plot_svg}</figure>"]
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
                *(f"<p class=\"meta\">{_h(note)}</p>" for note in run_notes(item.runs)),
                _html_conditions(item.runs),
            ]
    if report.other_runs:
        parts += [
            "<h2>Runs of other declarations</h2>",
            _html_table(runs_table(report.other_runs, binary, with_declaration=True), numeric_columns=(2, 4, 5, 6, 7)),
            *(f"<p class=\"meta\">{_h(note)}</p>" for note in run_notes(report.other_runs)),
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

