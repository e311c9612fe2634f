"""The Compare tab: the session's operations on several devices side by side.

A device list (the session's device with its measured or entered rates, this
machine, detected GPUs, the catalogue) chooses the columns; the table shows
each operation's bound, limiter and ridge on each device, and the measured
time where a run of it ran on that device; the plot overlays the chosen
devices' rooflines for the selected operation's path, one colour per device
with a legend. Every figure comes from workbench/documents/device_compare.py, the same
function behind `workbench compare` and the CSV and Markdown exports.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.documents.device_compare import (
    AnalysisCache,
    DeviceComparison,
    DeviceBound,
    compare_session,
    comparison_csv,
    comparison_markdown,
    limiter_text,
)
from workbench.model.analysis import Analysis
from workbench.model.devices import Device, catalogue
from workbench.model.devices.host import host_device
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.plot_common import LogAxis, intensity_tick, log_plot_widget, si_tick, short_path
from workbench.gui.plain_text import html_text, plain, tooltip
from workbench.gui.scroll_page import scrolled_content
from workbench.model.units import format_bandwidth, format_flop_rate, format_intensity, format_time
from workbench.state.compare_view import (
    CELL_FASTEST,
    CELL_NONE,
    SESSION_DEVICE,
    Choice,
    ComparePlot,
    CompareViewState,
    cell_look,
    compare_plot,
    device_choices,
)

DEVICE_COLOURS = ("#c62828", "#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#ad1457")
FASTEST_BACKGROUND = "#e8f5e9"
STYLE_ROLE = Qt.ItemDataRole.UserRole + 1  # the cell's look (CELL_PLAIN, CELL_FASTEST, CELL_NONE): whether it must change
TEXT_CACHE_SIZE = 4096  # cells' texts kept: a few refreshes of a large session on several devices


class CompareView(RefreshWhenShown, QWidget):
    """Operations × chosen devices, and the chosen devices' rooflines on one plot."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        # the devices chosen and the operation selected (shared with the other views)
        self.state = CompareViewState(row=max(document.current, 0))
        self.comparison: DeviceComparison | None = None
        self._analyses: AnalysisCache = {}  # reused across refreshes: an edit recomputes only its own row

        left = self._build_device_list()
        self._build_table()
        self._build_plot()
        buttons = self._build_footer()

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(left)
        top.addWidget(self.table)
        top.setStretchFactor(0, 0)
        top.setStretchFactor(1, 1)
        top.setSizes([180, 720])
        self._top = top
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.widget)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([300, 450])
        # The page scrolls where the window leaves it less than its least height (a 720-line screen, larger text),
        # as the Measurement tab does: the plot keeps room for its axes and legend instead of cutting its titles.
        layout = QVBoxLayout(scrolled_content(self, "compareArea"))
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split, 1)
        layout.addWidget(self.message)
        layout.addWidget(self.caption)  # the tab's width, not what the buttons leave it: a narrow column of words
        layout.addLayout(buttons)
        self._fit_plot_height(self.font())

        document.selection_changed.connect(self._operation_selected)
        for signal in (
            document.analysis_changed,
            document.operations_changed,
            document.device_changed,
            document.settings_changed,
            document.runs_changed,
            document.session_replaced,
        ):
            signal.connect(self.mark_dirty)
        document.detection_changed.connect(self._fill_device_list)
        self._fill_device_list()

    # ------------------------------------------------------------------ building
    def _build_device_list(self) -> QWidget:
        """The list of devices to tick, under its title."""
        self.device_list = QListWidget()
        self.device_list.setObjectName("compareDevices")
        self.device_list.itemChanged.connect(self._device_toggled)
        devices_label = QLabel("Devices to compare")
        devices_label.setStyleSheet("font-weight: 600;")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(devices_label)
        left_layout.addWidget(self.device_list, 1)

        return left

    def _build_table(self) -> None:
        """The operations × devices table: rows sized to their wrapped cells once per change."""
        self.table = QTableWidget(0, 0)
        self.table.setObjectName("compareTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)  # a cell's lines wrap in full; its row grows for them
        self.table.setStyleSheet("QTableWidget::item:selected { background: #e3f2fd; color: #212121; }")
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)
        # rows are sized once per fill (resizeRowsToContents): ResizeToContents would re-lay out on every setItem
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.currentCellChanged.connect(self._row_chosen)
        # narrower columns wrap the cells' lines onto more: the rows follow (sized to contents once per change)
        self._rows_timer = QTimer(self)
        self._rows_timer.setSingleShot(True)
        self._rows_timer.setInterval(0)
        self._rows_timer.timeout.connect(self.table.resizeRowsToContents)
        self.table.horizontalHeader().sectionResized.connect(lambda *_: self._rows_timer.start())

    def _build_plot(self) -> None:
        """The chosen devices' rooflines on one log-log plot, the legend under it."""
        self.widget = log_plot_widget(LogAxis("bottom", intensity_tick), LogAxis("left", si_tick("FLOP/s")))
        self.widget.setObjectName("compareRooflines")
        self.plot: pg.PlotItem = self.widget.getPlotItem()
        self.plot.setLabel("bottom", "Arithmetic intensity (FLOP/B)")
        self.plot.setLabel("left", "Attainable rate (FLOP/s)")
        # The legend under the plot, beside nothing it could cover: inside the plot it hid the roofs and points
        # being compared (the top left of one device's roof is another's ridge).
        self.legend = pg.LegendItem(offset=None, labelTextSize="9pt")
        self.plot.layout.addItem(self.legend, 4, 1)
        self.roofs: list[pg.PlotDataItem] = []
        self.points = pg.ScatterPlotItem(size=10, pen=pg.mkPen("#212121", width=1))
        self.plot.addItem(self.points)
        self.point_label = pg.TextItem(anchor=(0, 0.5), color="#212121")
        self.plot.addItem(self.point_label)

    def _build_footer(self) -> QHBoxLayout:
        """The message, the caption and the export buttons under the plot."""
        self.caption = plain(QLabel())
        self.caption.setObjectName("compareCaption")
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet("color: #444;")
        self.message = plain(QLabel())
        self.message.setObjectName("compareMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b71c1c; font-weight: 600;")
        self.message.setVisible(False)
        self.export_csv_button = QPushButton("Export CSV…")
        self.export_csv_button.setObjectName("compareExportCsv")
        self.export_csv_button.clicked.connect(lambda: self._export_dialog("csv"))
        self.export_md_button = QPushButton("Export Markdown…")
        self.export_md_button.setObjectName("compareExportMarkdown")
        self.export_md_button.clicked.connect(lambda: self._export_dialog("md"))
        self.copy_button = QPushButton("Copy as Markdown")
        self.copy_button.setObjectName("compareCopy")
        self.copy_button.clicked.connect(self.copy_markdown)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.copy_button, self.export_csv_button, self.export_md_button):
            buttons.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)

        return buttons

    # ------------------------------------------------------------------ devices
    def available(self) -> list[Choice]:
        """(item key, label, device) for every device that can be chosen, in list order."""
        return device_choices(self.document.device, self.document.detected, host_device(), catalogue().values())

    def _fill_device_list(self, *_: object) -> None:
        self.device_list.blockSignals(True)
        self.device_list.clear()
        for key, label, device in self.available():
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsSelectable)
            item.setCheckState(Qt.CheckState.Checked if key in self.state.chosen else Qt.CheckState.Unchecked)
            # the whole name first: the list is narrower than the longest names
            item.setToolTip(tooltip(f"{label}\n{device.source}" if device is not None and device.source else label))
            self.device_list.addItem(item)
        self.device_list.blockSignals(False)
        self._fit_device_list()

    def _fit_device_list(self) -> None:
        """The device list as wide as its names ("Session: NVIDIA H100 SXM" was cut at 180 px), up to a third of
        the tab; beyond that the list scrolls sideways, and each name is its item's tooltip."""
        top = getattr(self, "_top", None)
        if top is None or top.width() <= 0:
            return
        names = self.device_list.sizeHintForColumn(0) + self.device_list.frameWidth() * 2
        names += self.device_list.verticalScrollBar().sizeHint().width()
        total = sum(top.sizes())
        left = min(names, total // 3)
        if total > 0 and top.sizes()[0] < left:
            top.setSizes([left, total - left])

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        QTimer.singleShot(0, self._fit_device_list)  # once the tab has been laid out at its size

    def _device_toggled(self, item: QListWidgetItem) -> None:
        self.state = self.state.ticking(item.data(Qt.ItemDataRole.UserRole), item.checkState() == Qt.CheckState.Checked)
        self.refresh()

    def set_chosen(self, keys: list[str]) -> None:
        """Choose the compared devices by item key (SESSION_DEVICE for the session's device)."""
        self.state = self.state.choosing(keys)
        self._fill_device_list()
        self.refresh()

    def chosen_devices(self) -> list[Device]:
        return self.state.chosen_devices(self.available())

    # ------------------------------------------------------------------ drawing
    def refresh(self, *_: object) -> None:
        self._dirty = False
        if self.device_list.count() != len(self.available()) or (
            self.device_list.count() and self.device_list.item(0).text() != self.available()[0][1]
        ):
            self._fill_device_list()
        devices = self.chosen_devices()
        operations = self.document.operations
        self.message.setVisible(False)
        if not devices or not operations:
            self.comparison = None
            self.table.setRowCount(0)
            self.table.setColumnCount(0)
            self._draw_plot(None)
            self.caption.setText(
                "Tick devices on the left to compare them." if not devices else "Declare an operation to compare it across devices."
            )
            self._enable_exports()
            return
        self.comparison = compare_session(self.document.session, devices, cache=self._analyses)
        self._fill_table(self.comparison)
        self.state = replace(self.state, row=self.state.shown_row(len(self.comparison.rows)))
        self.table.blockSignals(True)
        self.table.setCurrentCell(self.state.row, 0)
        self.table.blockSignals(False)
        self._draw_plot(self.comparison)
        self.caption.setText(
            "Each cell: the lower-bound time, what limits it, the ridge point, and the median of the latest run on "
            "that device where there is one. Green: the shortest bound. Below: each device's roofline for the "
            "selected operation's path (dashed: datasheet or derived rates), the operation's bound on each (dots) and its "
            "measured rate where a run exists (stars)."
        )
        self._enable_exports()

    def _enable_exports(self) -> None:
        has = self.comparison is not None
        for button in (self.export_csv_button, self.export_md_button, self.copy_button):
            button.setEnabled(has)

    def _fill_table(self, comparison: DeviceComparison) -> None:
        """Show the comparison, touching only the cells whose text or style changed (edits stay cheap)."""
        table = self.table
        headers = [short_name(device) for device in comparison.devices]
        reshaped = table.columnCount() != len(headers) or table.rowCount() != len(comparison.rows)
        table.setColumnCount(len(comparison.devices))
        table.setRowCount(len(comparison.rows))
        if reshaped or [table.horizontalHeaderItem(c).text() if table.horizontalHeaderItem(c) else "" for c in range(len(headers))] != headers:
            table.setHorizontalHeaderLabels(headers)
            for column, device in enumerate(comparison.devices):
                header = table.horizontalHeaderItem(column)
                header.setForeground(QBrush(QColor(DEVICE_COLOURS[column % len(DEVICE_COLOURS)])))
                header.setToolTip(tooltip(f"{device.name} ({device.key})\n{device.source}"))
            # no column narrower than its device's name: the table scrolls sideways instead of cutting "H100 S…"
            metrics = table.horizontalHeader().fontMetrics()
            widest = max((metrics.horizontalAdvance(text) for text in headers), default=0)
            table.horizontalHeader().setMinimumSectionSize(widest + 2 * metrics.averageCharWidth() + 8)
        table.setVerticalHeaderLabels(comparison.operations)
        changed = reshaped
        for row, cells in enumerate(comparison.rows):
            fastest = comparison.fastest(row)
            for column, cell in enumerate(cells):
                text, tip = _texts(cell)
                style = cell_look(comparison, row, column, fastest)
                item = table.item(row, column)
                if item is not None and item.text() == text and item.data(STYLE_ROLE) == style:
                    continue
                changed = True
                item = QTableWidgetItem(text)
                item.setToolTip(tooltip(tip))
                item.setData(STYLE_ROLE, style)
                if style == CELL_NONE:
                    item.setForeground(QBrush(QColor("#8d5a00")))
                elif style == CELL_FASTEST:
                    item.setBackground(QBrush(QColor(FASTEST_BACKGROUND)))
                    bold = item.font()
                    bold.setBold(True)
                    item.setFont(bold)
                table.setItem(row, column, item)
        if changed:
            table.resizeRowsToContents()

    def _row_chosen(self, row: int, *_: int) -> None:
        if row < 0 or row == self.state.row or self.comparison is None:
            return
        self.state = replace(self.state, row=row)
        self._draw_plot(self.comparison)
        self.document.select(row)  # the other views follow the operation chosen here

    def _operation_selected(self, *_: object) -> None:
        row = self.document.current
        if row < 0 or row == self.state.row:
            return
        self.state = replace(self.state, row=row)
        if self.comparison is not None and row < len(self.comparison.rows) and not self._dirty:
            self.table.blockSignals(True)
            self.table.setCurrentCell(row, 0)
            self.table.blockSignals(False)
            self._draw_plot(self.comparison)

    def _draw_plot(self, comparison: DeviceComparison | None) -> None:
        entries: list[tuple[pg.PlotDataItem, str]] = []
        try:
            self._draw_roofs(comparison, entries)
        finally:
            self._show_legend(entries)

    def _show_legend(self, entries: list[tuple[pg.PlotDataItem, str]]) -> None:
        """Rebuild the legend only when its lines change (each entry is two graphics widgets)."""
        entries = [(line, html_text(text)) for line, text in entries]  # pyqtgraph's legend rows are HTML
        shown = [(sample.item, label.text) for sample, label in self.legend.items]
        if shown == entries:
            return
        self.legend.clear()
        for line, text in entries:
            self.legend.addItem(line, text)

    def _draw_roofs(self, comparison: DeviceComparison | None, entries: list[tuple[pg.PlotDataItem, str]]) -> None:
        for roof in self.roofs:
            roof.setVisible(False)
        self.points.setData([])
        self.point_label.setText("")
        if comparison is None or not comparison.rows:
            return
        plot = compare_plot(comparison, self.state.shown_row(len(comparison.rows)))
        while len(self.roofs) < len(comparison.devices):
            line = pg.PlotDataItem()
            self.plot.addItem(line)
            self.roofs.append(line)
        for roof in plot.roofs:
            line = self.roofs[roof.column]
            style = Qt.PenStyle.DashLine if roof.assumed else Qt.PenStyle.SolidLine
            line.setData(list(roof.xs), list(roof.ys))
            line.setPen(pg.mkPen(_colour(roof.column), width=2.2, style=style))
            line.setVisible(True)
            entries.append((line, _legend_text(roof.cell)))
        self.points.setData(_spots(plot))
        if plot.label is not None:
            text, x, y = plot.label
            self.point_label.setText(text)
            self.point_label.setPos(x, y)
        if plot.y_range is not None:
            self.plot.getViewBox().setRange(xRange=plot.x_range, yRange=plot.y_range, padding=0)

    # ------------------------------------------------------------------ exports
    def export_to(self, path: str, kind: str) -> None:
        """Write the comparison as CSV or Markdown; a failure is shown under the table."""
        if self.comparison is None:
            return
        text = comparison_csv(self.comparison) if kind == "csv" else comparison_markdown(self.comparison)
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            self.message.setText(f"Could not write {path}: {exc.strerror or exc}")
            self.message.setVisible(True)
            return
        self.message.setVisible(False)

    def _export_dialog(self, kind: str) -> None:
        suffix, filters = (".csv", "CSV (*.csv)") if kind == "csv" else (".md", "Markdown (*.md)")
        path, _ = QFileDialog.getSaveFileName(self, "Export comparison", f"comparison{suffix}", filters)
        if path:
            if not Path(path).suffix:
                path += suffix
            self.export_to(path, kind)

    def copy_markdown(self) -> None:
        if self.comparison is not None:
            QGuiApplication.clipboard().setText(comparison_markdown(self.comparison))

    def set_plot_font(self, font: QFont) -> None:
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).setStyle(tickFont=font)
        self._fit_plot_height(font)

    def _fit_plot_height(self, font: QFont) -> None:
        """The plot's least height: room for its two axes (figures and titles), a legend row per device compared
        (up to four) and the roofs between, in lines of the text size in use; at least 240 px."""
        self.widget.setMinimumHeight(max(240, 16 * QFontMetrics(font).height()))


def _colour(column: int) -> str:
    return DEVICE_COLOURS[column % len(DEVICE_COLOURS)]


def _legend_text(cell: DeviceBound) -> str:
    """A roof's legend line: the device, the path's rate, the bandwidth and the ridge."""
    analysis = cell.analysis
    assert analysis is not None and analysis.compute_rate is not None and analysis.bandwidth is not None
    return (f"{short_name(cell.device)}: {short_path(analysis.path)} {format_flop_rate(analysis.compute_rate.value)}, "
            f"{format_bandwidth(analysis.bandwidth.value)}, ridge {format_intensity(analysis.ridge or 0)}")


def _spots(plot: ComparePlot) -> list[dict[str, Any]]:
    """The marks as the scatter's spots: a dot in the device's colour at the bound, a star where a run reached."""
    spots: list[dict[str, Any]] = []
    for mark in plot.marks:
        colour = _colour(mark.column)
        if mark.measured:
            spots.append({"pos": (mark.x, mark.y), "brush": pg.mkBrush("w"), "pen": pg.mkPen(colour, width=2),
                          "symbol": "star", "size": 15})
        else:
            spots.append({"pos": (mark.x, mark.y), "brush": pg.mkBrush(colour), "symbol": "o"})
    return spots


def short_name(device: Device) -> str:
    """A column header: the name without the vendor ('H100 SXM'), 'This machine' for the host CPU."""
    if device.name.startswith("This machine: "):
        return "This machine (" + device.name.removeprefix("This machine: ").split(" (")[0] + ")"
    if device.kind == "cpu":
        return device.name.split(" (")[0]
    for vendor in ("NVIDIA GeForce ", "NVIDIA Tesla ", "NVIDIA ", "AMD Instinct ", "AMD "):
        if device.name.startswith(vendor):
            return device.name.removeprefix(vendor)
    return device.name


def cell_text(cell: DeviceBound) -> str:
    """Two or three short lines: bound and limiter; ridge; measured time and % of bound."""
    return _text(cell.analysis, cell.error, cell.measured_time_s, cell.measured_runs)


def cell_tooltip(cell: DeviceBound) -> str:
    """The device, each time term with its rate and where the rate came from; whether a run measured it."""
    return _tooltip(cell.analysis, cell.error, _device_title(cell.device), cell.measured_time_s)


def _texts(cell: DeviceBound) -> tuple[str, str]:
    """A cell's text and tooltip (`_cell_texts`, kept by the figures they show)."""
    return _cell_texts(cell.analysis, cell.error, cell.measured_time_s, cell.measured_runs, _device_title(cell.device))


@functools.lru_cache(maxsize=TEXT_CACHE_SIZE)
def _cell_texts(analysis: Analysis | None, error: str | None, measured_time_s: float | None, measured_runs: int,
                device_title: str) -> tuple[str, str]:
    """Kept by value: formatting a cell costs more than drawing it, and the analysis of an unchanged operation comes
    back equal (from the comparison's cache) at each refresh."""
    return _text(analysis, error, measured_time_s, measured_runs), _tooltip(analysis, error, device_title, measured_time_s)


def _device_title(device: Device) -> str:
    return f"{device.name} ({device.key})"


def _text(analysis: Analysis | None, error: str | None, measured_time_s: float | None, measured_runs: int) -> str:
    bound = analysis.bound_time if analysis is not None else None
    if analysis is None or bound is None:
        return f"no bound\n{error}" if error else "no bound"
    lines = [f"{format_time(bound)} · {limiter_text(analysis, short_path)}"]
    if analysis.ridge:
        lines.append(f"ridge {format_intensity(analysis.ridge)}")
    if measured_time_s is not None:
        share = f" ({100.0 * bound / measured_time_s:.0f} % of bound)" if measured_time_s else ""
        runs = f", {measured_runs} runs" if measured_runs > 1 else ""
        lines.append(f"measured {format_time(measured_time_s)}{share}{runs}")
    return "\n".join(lines)


def _tooltip(analysis: Analysis | None, error: str | None, device_title: str, measured_time_s: float | None) -> str:
    if analysis is None:
        return error or ""
    parts = [device_title]
    if analysis.compute_time is not None and analysis.compute_rate is not None:
        parts.append(
            f"compute {format_time(analysis.compute_time)} on {analysis.path} at "
            f"{format_flop_rate(analysis.compute_rate.value)} ({analysis.compute_rate.source})"
        )
    if analysis.memory_time is not None and analysis.bandwidth is not None:
        parts.append(
            f"memory {format_time(analysis.memory_time)} at {format_bandwidth(analysis.bandwidth.value)} ({analysis.bandwidth.source})"
        )
    if analysis.link is not None and analysis.link.time is not None:
        parts.append(f"link {format_time(analysis.link.time)} over {analysis.link.link.name} ({analysis.link.link.origin})")
    if measured_time_s is None:
        parts.append("no run of this operation on this device")
    return "\n".join(parts)


__all__ = ["SESSION_DEVICE", "CompareView", "cell_text", "cell_tooltip", "short_name"]
