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

import math
from dataclasses import dataclass, field
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
    roofline_points,
)
from workbench.model.devices import Device, catalogue
from workbench.model.devices.host import host_device
from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.plot_common import LogAxis, intensity_tick, log_plot_widget, si_tick, short_path
from workbench.gui.plain_text import html_text, plain, tooltip
from workbench.gui.scroll_page import scrolled_content
from workbench.model.units import format_bandwidth, format_flop_rate, format_intensity, format_time

SESSION_DEVICE = "__session__"  # the list item standing for the session's device, overrides included
DEVICE_COLOURS = ("#c62828", "#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#ad1457")
DEFAULT_OTHERS = ("h200-sxm", "a100-sxm-80gb")  # shown beside the session's device the first time
FASTEST_BACKGROUND = "#e8f5e9"
STYLE_ROLE = Qt.ItemDataRole.UserRole + 1  # "plain", "fastest" or "none": whether a cell's look must change


@dataclass
class CompareState:
    """What the Compare tab shows: the chosen device items, in the order they were chosen."""

    chosen: list[str] = field(default_factory=lambda: [SESSION_DEVICE, *DEFAULT_OTHERS])


def _cell_points(cell: Any, colour: Any) -> tuple[list[dict[str, Any]], list[float]]:
    """One device's marks at the operation's intensity: its attainable rate (a dot) and, when a run of it was
    measured, the rate the run reached (a star); with the achieved rates, which the plot's range must include."""
    analysis = cell.analysis
    points: list[dict[str, Any]] = []
    rates: list[float] = []
    if not (analysis.bytes and analysis.attainable_rate):
        return points, rates
    points.append(
        {
            "pos": (math.log10(analysis.intensity), math.log10(analysis.attainable_rate)),
            "brush": pg.mkBrush(colour),
            "symbol": "o",
        }
    )
    if cell.measured_time_s and analysis.flop:
        achieved = analysis.flop / cell.measured_time_s  # FLOP/s the run reached on this device
        points.append(
            {
                "pos": (math.log10(analysis.intensity), math.log10(achieved)),
                "brush": pg.mkBrush("w"),
                "pen": pg.mkPen(colour, width=2),
                "symbol": "star",
                "size": 15,
            }
        )
        rates.append(achieved)
    return points, rates


class CompareView(RefreshWhenShown, QWidget):
    """Operations × chosen devices, and the chosen devices' rooflines on one plot."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.state = CompareState()
        self.comparison: DeviceComparison | None = None
        self._analyses: AnalysisCache = {}  # reused across refreshes: an edit recomputes only its own row
        self._text_cache: dict[tuple[Any, ...], tuple[Any, str, str]] = {}

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

        self._row = max(document.current, 0)  # the selected operation, shared with the other views
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
    def available(self) -> list[tuple[str, str, Device | None]]:
        """(item key, label, device) for every device that can be chosen, in list order."""
        entries: list[tuple[str, str, Device | None]] = []
        session_device = self.document.device
        if session_device is not None:
            measured = " (measured/entered rates)" if session_device.overrides else ""
            entries.append((SESSION_DEVICE, f"Session: {session_device.name}{measured}", session_device))
        for key, device in self.document.detected.items():
            entries.append((key, f"{device.name} ({key})", device))
        host = host_device()
        entries.append((host.key, host.name, host))
        for device in catalogue().values():
            entries.append((device.key, device.name, device))
        return entries

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
        key = item.data(Qt.ItemDataRole.UserRole)
        checked = item.checkState() == Qt.CheckState.Checked
        if checked and key not in self.state.chosen:
            self.state.chosen.append(key)
        elif not checked and key in self.state.chosen:
            self.state.chosen.remove(key)
        self.refresh()

    def set_chosen(self, keys: list[str]) -> None:
        """Choose the compared devices by item key (SESSION_DEVICE for the session's device)."""
        self.state.chosen = list(dict.fromkeys(keys))
        self._fill_device_list()
        self.refresh()

    def chosen_devices(self) -> list[Device]:
        by_key = {key: device for key, _, device in self.available() if device is not None}
        return [by_key[key] for key in self.state.chosen if key in by_key]

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
        self._row = min(max(self._row, 0), len(self.comparison.rows) - 1)
        self.table.blockSignals(True)
        self.table.setCurrentCell(self._row, 0)
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
                text, tip = self._texts(cell)
                style = "none" if cell.analysis is None or cell.bound_time_s is None else (
                    "fastest" if column in fastest and len(cells) > 1 else "plain"
                )
                item = table.item(row, column)
                if item is not None and item.text() == text and item.data(STYLE_ROLE) == style:
                    continue
                changed = True
                item = QTableWidgetItem(text)
                item.setToolTip(tooltip(tip))
                item.setData(STYLE_ROLE, style)
                if style == "none":
                    item.setForeground(QBrush(QColor("#8d5a00")))
                elif style == "fastest":
                    item.setBackground(QBrush(QColor(FASTEST_BACKGROUND)))
                    bold = item.font()
                    bold.setBold(True)
                    item.setFont(bold)
                table.setItem(row, column, item)
        if changed:
            table.resizeRowsToContents()

    def _texts(self, cell: DeviceBound) -> tuple[str, str]:
        """A cell's text and tooltip, kept per analysis: formatting them costs more than drawing them."""
        key = (id(cell.analysis), cell.error, cell.measured_time_s, cell.measured_runs, cell.device.key)
        found = self._text_cache.get(key)
        if found is None or found[0] is not cell.analysis:
            if len(self._text_cache) > 4096:
                self._text_cache.clear()
            found = (cell.analysis, cell_text(cell), cell_tooltip(cell))
            self._text_cache[key] = found
        return found[1], found[2]

    def _row_chosen(self, row: int, *_: int) -> None:
        if row < 0 or row == self._row or self.comparison is None:
            return
        self._row = row
        self._draw_plot(self.comparison)
        self.document.select(row)  # the other views follow the operation chosen here

    def _operation_selected(self, *_: object) -> None:
        row = self.document.current
        if row < 0 or row == self._row:
            return
        self._row = row
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
        row = comparison.rows[min(self._row, len(comparison.rows) - 1)]
        intensities = [c.analysis.intensity for c in row if c.analysis is not None and math.isfinite(c.analysis.intensity) and c.analysis.intensity > 0]
        ridges = [c.analysis.ridge for c in row if c.analysis is not None and c.analysis.ridge]
        spots = [*intensities, *ridges] or [1.0]
        low = min(spots) / 30
        high = max(spots) * 30
        while len(self.roofs) < len(row):
            line = pg.PlotDataItem()
            self.plot.addItem(line)
            self.roofs.append(line)
        points: list[dict[str, Any]] = []
        rates: list[float] = []
        for column, cell in enumerate(row):
            colour = DEVICE_COLOURS[column % len(DEVICE_COLOURS)]
            analysis = cell.analysis
            if analysis is None or analysis.compute_rate is None or analysis.bandwidth is None:
                continue
            try:
                corners = roofline_points(cell.device, analysis.path, low, high)
            except WorkbenchError:
                continue
            line = self.roofs[column]
            assumed = analysis.compute_rate.source in ("datasheet", "derived")
            style = Qt.PenStyle.DashLine if assumed else Qt.PenStyle.SolidLine
            line.setData([math.log10(x) for x, _ in corners], [math.log10(y) for _, y in corners])
            line.setPen(pg.mkPen(colour, width=2.2, style=style))
            line.setVisible(True)
            rates += [y for _, y in corners]
            entries.append(
                (
                    line,
                    f"{short_name(cell.device)}: {short_path(analysis.path)} {format_flop_rate(analysis.compute_rate.value)}, "
                    f"{format_bandwidth(analysis.bandwidth.value)}, ridge {format_intensity(analysis.ridge or 0)}",
                )
            )
            cell_points, achieved = _cell_points(cell, colour)
            points += cell_points
            rates += achieved
        self.points.setData(points)
        if points:
            first = row[0]
            x, y = points[0]["pos"]
            heights = [p["pos"][1] for p in points]
            self.point_label.setText(first.operation)
            self.point_label.setPos(x + 0.12, (max(heights) + min(heights)) / 2)
        if rates:
            y_low = math.log10(min(rates)) - 0.3
            y_high = math.log10(max(rates)) + 0.2
            self.plot.getViewBox().setRange(
                xRange=(math.log10(low), math.log10(high)), yRange=(y_low, y_high), padding=0
            )

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
    analysis = cell.analysis
    if analysis is None or cell.bound_time_s is None:
        return f"no bound\n{cell.error}" if cell.error else "no bound"
    lines = [f"{format_time(cell.bound_time_s)} · {limiter_text(analysis, short_path)}"]
    if analysis.ridge:
        lines.append(f"ridge {format_intensity(analysis.ridge)}")
    if cell.measured_time_s is not None:
        percent = cell.percent_of_bound
        share = f" ({percent:.0f} % of bound)" if percent is not None else ""
        runs = f", {cell.measured_runs} runs" if cell.measured_runs > 1 else ""
        lines.append(f"measured {format_time(cell.measured_time_s)}{share}{runs}")
    return "\n".join(lines)


def cell_tooltip(cell: DeviceBound) -> str:
    analysis = cell.analysis
    if analysis is None:
        return cell.error or ""
    parts = [f"{cell.device.name} ({cell.device.key})"]
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
    if cell.measured_time_s is None:
        parts.append("no run of this operation on this device")
    return "\n".join(parts)
