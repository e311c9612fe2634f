"""The report as Markdown, every piece of the session's text escaped to render as the text it is."""

from __future__ import annotations

import base64
import re
from typing import Sequence

from workbench.documents.notes import as_markdown
from workbench.documents.report.build import build_report
from workbench.documents.report.model import FormattedTable, Report, ReportRun, check_svg, svg_file
from workbench.documents.report.tables import run_notes, bounds_table, runs_table, tensors_table
from workbench.documents.session import Session

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
    the escaping keeps the rest of each line inert (workbench/documents/notes.py finds the boxes).
    """
    block = _md_block(as_markdown(text))
    return "\n".join(_MD_ESCAPED_BOX.sub(lambda m: f"{m.group(1)}{m.group(2)} [{m.group(3)}] ", line) for line in block.split("\n"))



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


def render_markdown(session: Session, plot_svg: str | None = None, plot_file: str | None = None,
                    report: Report | None = None) -> str:
    """The session as a Markdown document. The plot: `plot_file`, an SVG file beside the document, linked by
    its relative name; else `plot_svg` (an `<svg>` element) embedded as a data URI; else none. `report`: the
    session's `build_report`, when the caller has it."""
    check_svg(plot_svg)
    report = report or build_report(session)
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
    elif plot_svg is not None:
        encoded = base64.b64encode(svg_file(plot_svg)).decode("ascii")
        lines += ["## Plot", "", f"![Roofline plot of the session](data:image/svg+xml;base64,{encoded})", ""]
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
            lines += [_md_text(" ".join(run_notes(item.runs))), "", *_md_conditions(item.runs)]
    if report.other_runs:
        lines += ["## Runs of other declarations", "", *_md_table(runs_table(report.other_runs, report.binary, True))]
        lines += [_md_text(" ".join(run_notes(report.other_runs))), "", *_md_conditions(report.other_runs)]
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


