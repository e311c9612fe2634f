"""The table of measured runs: one row per run of the session, and the run in progress as a live last row.

Each cell comes from the run's figures (`workbench.measure.runs.run_figures`): median, p10–p90, achieved
rates, % of the bound on the device the run ran on (◇ when that is not the device the session
shows, ⚠ when the run is faster than its device allows), and the reference check.
"""

from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from workbench.model.declaration_text import split_call
from workbench.gui.measure_plots import OTHER_DEVICE_COLOUR, device_tip
from workbench.gui.measure_runs import MeasuredRun
from workbench.gui.plain_text import tooltip
from workbench.measure.record import CANCELLED, INVALID, OK
from workbench.model.units import (
    format_bandwidth,
    format_flop_rate,
    format_percent,
    format_time,
)

RUNNING = "running"  # the status of the live row while its run is measured
CHECK_COLUMN = "Check"
DEVICE_COLUMN = "Ran on"
PERCENT_COLUMN = "% bound"
COLUMNS = ("Operation", "Size", CHECK_COLUMN, "Median", "p10–p90", "Bandwidth", "FLOP rate", PERCENT_COLUMN, DEVICE_COLUMN)
OTHER_DEVICE_MARK = "◇"  # beside a % of bound taken on another device than the session shows (the roofline's mark)
NUMBER_COLUMNS = ("Median", "p10–p90", "Bandwidth", "FLOP rate", PERCENT_COLUMN)
NAME_COLUMN_CHARS = 18  # the operation column's most width, in average characters of the table's text: longer
# names are elided (the tooltip has them whole); never narrower than its header
STATUS_COLOURS = {OK: "#1b5e20", INVALID: "#b71c1c", CANCELLED: "#757575", RUNNING: "#0d47a1", "unchecked": "#8d5a00"}
IMPOSSIBLE_COLOUR = "#b71c1c"


def size_text(run: MeasuredRun) -> str:
    """The size fields of a run's declaration (powers of two from 2**10 up written so), equal neighbours
    joined, and its dtype: 'n=2**16 · fp32', 'M=N=K=2**12 · fp16', 'M=N=1000, K=2**12 · fp32'."""
    declaration = run.declaration
    if declaration is None:
        return run.declaration_text
    written = split_call(str(declaration))
    kinds = {param.name: param.kind for param in declaration.spec.params}
    groups: list[tuple[list[str], str]] = []
    for name, text in (written.fields.items() if written else ()):
        if kinds.get(name, "dim") != "dim":
            continue
        value = declaration.params.get(name)
        if isinstance(value, int) and value >= 1024 and value & (value - 1) == 0:
            text = f"2**{value.bit_length() - 1}"  # sweeps go by powers of two: say so at every size
        if groups and groups[-1][1] == text:
            groups[-1][0].append(name)
        else:
            groups.append(([name], text))
    dtype = declaration.params.get("dtype")
    return ", ".join(f"{'='.join(names)}={text}" for names, text in groups) + (f" · {dtype}" if isinstance(dtype, str) else "")


def spread_text(low_s: float, high_s: float) -> str:
    """'6.06–16.8 ms': both ends to three figures, the unit written once when they share it."""
    low, high = format_time(low_s, digits=3), format_time(high_s, digits=3)
    low_number, _, low_unit = low.partition(" ")
    high_unit = high.partition(" ")[2]
    return f"{low_number}–{high}" if low_unit == high_unit else f"{low} – {high}"


def percent_text(fraction: float | None) -> str:
    return "—" if fraction is None else format_percent(100.0 * fraction)


def other_device(run: MeasuredRun) -> bool:
    """True for a run measured on another device than the session shows (its figures are its own device's)."""
    return bool(run.device_note) and not run.on_session_device


def short_device_name(run: MeasuredRun) -> str:
    """'Generic CPU', 'NVIDIA H100 SXM': the device a run's figures are against, without the details in brackets."""
    return run.device_name.split(" (")[0] if run.device is not None else run.device_name


class RunTableModel(QAbstractTableModel):
    """The session's runs plus, while one is measured (or was just cancelled), a live last row."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.runs: list[MeasuredRun] = []
        self.live: MeasuredRun | None = None
        self.live_detail = ""
        self.binary = False

    # -- contents --------------------------------------------------------------------
    def set_runs(self, runs: Sequence[MeasuredRun], binary: bool) -> None:
        self.beginResetModel()
        self.runs = list(runs)
        self.binary = binary
        self.endResetModel()

    def set_live(self, run: MeasuredRun | None, detail: str = "") -> None:
        """Show (or change, or remove with None) the live row."""
        had = self.live is not None
        row = len(self.runs)
        if run is None and had:
            self.beginRemoveRows(QModelIndex(), row, row)
            self.live, self.live_detail = None, ""
            self.endRemoveRows()
        elif run is not None and not had:
            self.beginInsertRows(QModelIndex(), row, row)
            self.live, self.live_detail = run, detail
            self.endInsertRows()
        elif run is not None:
            self.live, self.live_detail = run, detail
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def run_at(self, row: int) -> MeasuredRun | None:
        if 0 <= row < len(self.runs):
            return self.runs[row]
        if row == len(self.runs) and self.live is not None:
            return self.live
        return None

    def is_live(self, row: int) -> bool:
        return self.live is not None and row == len(self.runs)

    # -- Qt model interface ---------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802,B008
        return 0 if parent.isValid() else len(self.runs) + (1 if self.live is not None else 0)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802,B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return COLUMN_TIPS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        run = self.run_at(index.row()) if index.isValid() else None
        if run is None:
            return None
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell_text(run, column, self.is_live(index.row()))
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(self.cell_tip(run, column))
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == PERCENT_COLUMN and run.impossible is not None:
                return QBrush(QColor(IMPOSSIBLE_COLOUR))
            if column in (DEVICE_COLUMN, PERCENT_COLUMN) and other_device(run):
                return QBrush(QColor(OTHER_DEVICE_COLOUR))
            if column == CHECK_COLUMN or run.status in (INVALID, CANCELLED):
                return QBrush(QColor(STATUS_COLOURS.get(run.status, "#212121")))
            return None
        if role == Qt.ItemDataRole.FontRole and column == PERCENT_COLUMN and run.impossible is not None:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.FontRole and column == DEVICE_COLUMN and other_device(run):
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.FontRole and (run.status in (RUNNING, CANCELLED) or
                                                 (column == CHECK_COLUMN and run.status == INVALID)):
            font = QFont()
            font.setItalic(run.status != INVALID)
            font.setBold(run.status == INVALID)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and column in NUMBER_COLUMNS:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def cell_text(self, run: MeasuredRun, column: str, live: bool = False) -> str:
        """What one cell shows (short; the tooltip has the rest)."""
        stats = run.stats
        if column == "Operation":
            return run.operation_name
        if column == "Size":
            return size_text(run)
        if column == CHECK_COLUMN:
            if live and run.status == RUNNING:
                return self.live_detail or "running"
            return run.status_text
        if column == DEVICE_COLUMN:
            return short_device_name(run)
        if column == "Median":
            return format_time(stats.median_s) if stats else "—"
        if column == "p10–p90":
            return spread_text(stats.p10_s, stats.p90_s) if stats else "—"
        if column == "Bandwidth":
            rate = run.achieved_byte_per_s
            return format_bandwidth(rate, self.binary, digits=3) if rate is not None else "—"
        if column == "FLOP rate":
            rate = run.achieved_flop_per_s
            return format_flop_rate(rate, digits=3) if rate is not None else "—"
        text = percent_text(run.fraction_of_bound)
        if run.impossible is not None:
            return f"{text} ⚠"
        return f"{text} {OTHER_DEVICE_MARK}" if run.fraction_of_bound is not None and other_device(run) else text

    def cell_tip(self, run: MeasuredRun, column: str) -> str:
        if column in ("Operation", "Size"):
            return f"{run.operation_name}\n{run.declaration_text}\n{run.backend} on {run.run.where}, {run.mode} mode\nrun {run.id}"
        if column == CHECK_COLUMN:
            return run.check + (f"\n{run.message}" if run.message and run.message != run.check else "")
        if column in ("Median", "p10–p90") and run.stats is not None:
            s = run.stats
            return (f"{s.count} timed iterations: min {format_time(s.min_s)}, p10 {format_time(s.p10_s)}, "
                    f"median {format_time(s.median_s)}, p90 {format_time(s.p90_s)}, max {format_time(s.max_s)}")
        if column == DEVICE_COLUMN:
            return device_tip(run)
        if column == PERCENT_COLUMN:
            lines = []
            if run.bound_time_s is not None:
                lines.append(f"bound {format_time(run.bound_time_s)} on {run.device_name} over the median time")
            elif run.bound_note:
                lines.append(run.bound_note)
            if run.device_note:
                lines.append(run.device_note)
            if run.missed:
                lines.append(f"short of the bound: {run.missed}")
            if run.impossible is not None:
                lines.append(run.impossible.as_text())
            return "\n".join(lines)
        return ""


COLUMN_TIPS = (
    "The session operation the run was started from (hover a cell for the backend and mode)",
    "Size fields and data type of the measured declaration",
    "The reference check against float64 on the CPU: only a passed run is a result (hover for details)",
    "Median of the timed iterations",
    "10th and 90th percentile of the timed iterations: the spread",
    "Compulsory bytes of the declaration over the median time",
    "Logical FLOP of the declaration over the median time (convention as in the Analysis menu)",
    "The lower bound on the device the run ran on over its median time: 100 % means it met the bound; "
    "⚠ marks a run faster than its device allows (hover for the likely reasons); ◇ a run on another device "
    "than the session shows",
    "The device the run ran on, whose bound its % of bound uses (italic: not the device the session shows)",
)
