"""Writing a report: its kind from the file's suffix, the companion files beside it, all written atomically."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.files import FileReadError, require_regular
from workbench.documents.report.build import build_report
from workbench.documents.report.csv_files import render_csv, render_samples_csv, render_steps_csv
from workbench.documents.report.html_page import render_html
from workbench.documents.report.markdown import render_markdown
from workbench.documents.report.model import Report, ReportError, check_svg, svg_file
from workbench.documents.session import Session, write_atomic

MARKDOWN_SUFFIXES = (".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
CSV_SUFFIXES = (".csv",)
SAMPLES_SUFFIX = "-samples"  # lab.csv → lab-samples.csv
STEPS_SUFFIX = "-steps"  # lab.csv → lab-steps.csv: where each step's time goes
PLOT_SUFFIX = "-plot"  # lab.md → lab-plot.svg


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
    """The file written beside a report: lab.csv → lab-samples.csv, lab.md → lab-plot.svg."""
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
        files.append(companion_path(path, PLOT_SUFFIX, ".svg"))
    return tuple(files)


def write_report(session: Session, path: str | os.PathLike[str], plot_svg: str | None = None,
                 inline_plot: bool = False, report: Report | None = None) -> str:
    """Render the report the suffix asks for and write it, and its companion files, atomically; returns the
    kind written. CSV: the summary and the samples beside it. Markdown: the plot (an `<svg>` element:
    `report.plot.roofline_plot`) as an SVG file beside it (`inline_plot`: embedded instead). HTML: one file, the
    plot inline. `report`: the session's `build_report`, when the caller has it (analysed once for the plot and
    the text)."""
    kind = report_kind(path)
    check_svg(plot_svg)
    files: list[tuple[str | os.PathLike[str], bytes]] = []
    try:
        if kind == "markdown":
            if plot_svg is not None and not inline_plot:
                plot_path = companion_path(path, PLOT_SUFFIX, ".svg")
                files.append((plot_path, svg_file(plot_svg)))
                text = render_markdown(session, plot_file=plot_path.name, report=report)
            else:
                text = render_markdown(session, plot_svg, report=report)
        elif kind == "html":
            text = render_html(session, plot_svg, report)
        else:
            report = report or build_report(session)
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
