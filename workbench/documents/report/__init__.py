"""Reports of a session: Markdown and HTML for people, CSV for spreadsheets (Qt-free).

Both documents say the same things, built once by `build_report`: the device
and the rates in use with their sources, each operation's derivation,
tensors and bounds, the measured runs beside the bound (median, spread,
achieved rate, % of bound, check result, conditions), imported profiler
records, and the roofline when the caller supplies it: `roofline_plot`
draws it as SVG from the scenes the window draws too, without Qt (this
package never imports Qt). The HTML is one file that needs no network:
inline CSS, the plot as inline SVG, and a content policy that forbids
fetching anything. The Markdown links the plot as an SVG file written
beside it (`lab.md` → `lab-plot.svg`), so the text stays small;
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

One module per job: `model` (what a report says), `build` (a session read
into it), `tables` (its formatted tables), `markdown`, `html_page` and
`csv_files` (one format each), `plot` (the roofline), `writing` (the files on disk). The names
callers use are re-exported here.
"""

from typing import TYPE_CHECKING

from workbench.documents.report.build import build_report, report_run
from workbench.documents.report.csv_files import (
    CSV_LINE_END,
    SAMPLES_CSV_COLUMNS,
    STEPS_CSV_COLUMNS,
    SUMMARY_CSV_COLUMNS,
    csv_number,
    render_csv,
    render_samples_csv,
    render_steps_csv,
    spreadsheet_text,
)
from workbench.documents.report.html_page import render_html
from workbench.documents.report.markdown import markdown_inline, render_markdown
from workbench.documents.report.model import (
    IMPOSSIBLE_MARK,
    SVG_START,
    FormattedTable,
    OperationReport,
    ProfileSection,
    Report,
    ReportError,
    ReportRun,
    StepSection,
)
from workbench.documents.report.tables import bounds_table, runs_table, tensors_table
from workbench.documents.report.writing import companion_path, report_files, report_kind, write_report
from workbench.exports import lazy_names

if TYPE_CHECKING:  # the names as type checkers and the import contracts see them
    from workbench.documents.report.plot import REPORT_PLOT_SIZE, report_operations, roofline_plot

# The roofline's drawing is imported when first read (workbench/exports.py): the window imports this package
# at its start and draws a report's plot only on an export.
__getattr__, __dir__ = lazy_names(__name__, {"REPORT_PLOT_SIZE": "plot", "report_operations": "plot",
                                             "roofline_plot": "plot"})

__all__ = [
    "CSV_LINE_END",
    "IMPOSSIBLE_MARK",
    "REPORT_PLOT_SIZE",
    "SAMPLES_CSV_COLUMNS",
    "STEPS_CSV_COLUMNS",
    "SUMMARY_CSV_COLUMNS",
    "SVG_START",
    "FormattedTable",
    "OperationReport",
    "ProfileSection",
    "Report",
    "ReportError",
    "ReportRun",
    "StepSection",
    "bounds_table",
    "build_report",
    "companion_path",
    "csv_number",
    "markdown_inline",
    "render_csv",
    "render_html",
    "render_markdown",
    "render_samples_csv",
    "render_steps_csv",
    "report_files",
    "report_kind",
    "report_operations",
    "report_run",
    "roofline_plot",
    "runs_table",
    "spreadsheet_text",
    "tensors_table",
    "write_report",
]
