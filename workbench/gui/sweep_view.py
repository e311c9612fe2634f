"""The bound-versus-size view: the selected operation's time bounds against one swept size.

What is drawn is decided by `workbench.scenes.sweep_scene` (the lines, the declared point and its label's
side, the shading of sizes beyond memory, the limiter's change, the ranges and the caption); this view holds
the user's choice of fields and range (`SweepState`), draws the scene, and places the declared label once
the labels' sizes in pixels are known. The combined bound is drawn broad and grey, each term dashed over it.
Measured medians are drawn by `measure_plots`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from workbench.measure.sweep import sweep_choices
from workbench.model.analysis.terms import TERM_COMPUTE
from workbench.model.devices import BANDWIDTH
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.legend_strip import LegendStrip
from workbench.gui.measure_plots import MeasuredSweepLayer
from workbench.gui.power_box import PowerOfTwoBox
from workbench.gui.plot_common import (
    COMPUTE_COLOUR,
    LEVEL_COLOURS,
    LINK_COLOUR,
    MEMORY_COLOUR,
    SELECTED_COLOUR,
    LogAxis,
    log_plot_widget,
    power_of_two_tick,
    apply_plot_font,
    legend_points,
    time_tick,
)
from workbench.gui.plain_text import plain
from workbench.scenes.sweep_scene import (
    LINE_BOUND,
    SweepInputs,
    SweepScene,
    SweepState,
    beyond_label_place,
    declared_label_place,
    default_range,
    follow_choices,
    label_box,
    sweep_scene,
)


def set_line_data(line: pg.PlotDataItem, x: Any, y: Any) -> None:
    """Draw y against x, leaving out the points without a figure (NaN, −inf): the same line, cheaper when it can be.

    A sweep's figures usually form one unbroken run (the sizes beyond memory
    come last), and a run is handed to pyqtgraph alone as a plain polyline,
    checked already: with 10,000 sizes, building the path point by point and
    checking each for NaN cost more than drawing it. A line with gaps is
    drawn with connect="finite", which breaks it at each gap.
    """
    finite = np.isfinite(y)
    where = np.flatnonzero(finite)
    if where.size == 0:
        line.setData([], [])
    elif where[-1] - where[0] + 1 == where.size:  # one unbroken run
        run = slice(int(where[0]), int(where[-1]) + 1)
        line.setData(x[run], y[run], connect="all", skipFiniteCheck=True)
    else:
        line.setData(x, y, connect="finite", skipFiniteCheck=False)


class SweepView(RefreshWhenShown, QWidget):
    """Time bounds of the selected operation against one swept size (others held as declared)."""

    sweep_drawn = Signal()

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.widget = log_plot_widget(LogAxis("bottom", power_of_two_tick, base=2), LogAxis("left", time_tick))
        self.widget.setObjectName("sweepPlot")
        self.plot: pg.PlotItem = self.widget.getPlotItem()
        self.plot.setLabel("left", "Time bound (s)")
        self.plot.setLabel("bottom", "Swept size")
        # the combined bound first and broad, each term dashed over it, so a term that is the bound stays visible
        self.bound_line = self.plot.plot(pen=pg.mkPen("#9e9e9e", width=6, style=Qt.PenStyle.SolidLine))
        self.compute_line = self.plot.plot(pen=pg.mkPen(COMPUTE_COLOUR, width=2.2, style=Qt.PenStyle.DashLine))
        self.memory_line = self.plot.plot(pen=pg.mkPen(MEMORY_COLOUR, width=2.2, style=Qt.PenStyle.DashLine))
        # the legend above the plot, not in it: the curves run corner to corner and a short plot has no free corner
        self.legend = LegendStrip()
        self.legend.setObjectName("sweepLegend")
        for key, line, text in (("bound", self.bound_line, "combined bound"), (TERM_COMPUTE, self.compute_line, "compute bound (dashed)"),
                                (BANDWIDTH, self.memory_line, "memory bound (dashed)")):
            self.legend.set_entry(key, line, text)
        self.bound_line.setZValue(1)
        self.compute_line.setZValue(2)
        self.memory_line.setZValue(3)
        # every further term (L2 → SM, shared memory → registers, host ↔ device, a link) dashed in its own colour
        self.term_lines: dict[str, pg.PlotDataItem] = {}
        # sizes whose footprint exceeds the device's memory: shaded, labelled, a model only
        self.beyond_region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(198, 40, 40, 28), pen=pg.mkPen(None))
        self.beyond_region.setZValue(-10)
        self.beyond_label = pg.TextItem(anchor=(1, 0), color="#8e2424")  # right-aligned: a narrow shade still shows it whole
        # where the limiter changes from memory to compute (or back)
        self.limiter_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#6d4c41", width=1.2, style=Qt.PenStyle.DotLine))
        self.limiter_label = pg.TextItem(anchor=(0, 1), color="#6d4c41")
        for item in (self.beyond_region, self.beyond_label, self.limiter_line, self.limiter_label):
            self.plot.addItem(item)
            item.setVisible(False)
        self.current_marker = pg.ScatterPlotItem(size=11, pen=pg.mkPen(SELECTED_COLOUR, width=2), brush=pg.mkBrush("w"))
        self.current_label = pg.TextItem(anchor=(0, 0), color=SELECTED_COLOUR)
        self.message = pg.TextItem(anchor=(0.5, 0.5), color="#424242")
        for item in (self.current_marker, self.current_label, self.message):
            self.plot.addItem(item)

        self.field_choice = QComboBox()
        self.field_choice.setObjectName("sweepField")
        self.low = PowerOfTwoBox()
        self.high = PowerOfTwoBox()
        self.caption = plain(QLabel())
        self.caption.setWordWrap(True)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Sweep"))
        controls.addWidget(self.field_choice)
        controls.addWidget(QLabel("from"))
        controls.addWidget(self.low)
        controls.addWidget(QLabel("to"))
        controls.addWidget(self.high)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.legend)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)

        self._choices: list[tuple[str, ...]] = []
        self._bottom_label = "Swept size"
        self._op: str | None = None
        self._dirty = True
        self.sizes: Any = np.array([])  # the sizes of the sweep drawn last (the lines leave out those without figures)
        self.field_choice.activated.connect(self._field_chosen)
        self.low.valueChanged.connect(self._range_changed)
        self.high.valueChanged.connect(self._range_changed)
        for signal in (document.analysis_changed, document.selection_changed, document.device_changed, document.settings_changed):
            signal.connect(self.mark_dirty)
        self.measured = MeasuredSweepLayer(self.plot, document, self.legend)  # measured medians (gui/measure_plots.py)
        self.state = SweepState()  # the fields swept and the range the user chose
        self.scene: SweepScene | None = None  # what was drawn last
        self.plot.getViewBox().sigResized.connect(lambda *_: self._place_labels())
        document.runs_changed.connect(self.mark_dirty)

    def _field_chosen(self, index: int) -> None:
        if 0 <= index < len(self._choices):
            fields = self._choices[index]
            self.state = SweepState(fields, *default_range(fields))
            self._set_range_boxes(self.state.low, self.state.high)
        self.refresh()

    def _range_changed(self, *_: object) -> None:
        if self.low.value() >= self.high.value():
            return
        self.state = replace(self.state, low=self.low.value(), high=self.high.value())
        self.refresh()

    def _set_range_boxes(self, low: int, high: int) -> None:
        for box, value in ((self.low, low), (self.high, high)):
            box.blockSignals(True)
            box.setValue(value)
            box.blockSignals(False)

    def fields(self) -> tuple[str, ...]:
        return self.state.fields

    def refresh(self) -> None:
        self._dirty = False
        entry = self.document.current_entry
        analysis = self.document.state(entry).analysis if entry is not None else None
        choices: list[tuple[str, ...]] = sweep_choices(analysis) if analysis is not None else []
        if analysis is not None:
            self._follow_choices(analysis.declaration.op, choices)
        measured = self.measured.compute(analysis.declaration, self.state.fields) if analysis is not None and self.state.fields else []
        document = self.document
        settings = document.session.settings
        inputs = SweepInputs(
            entry.name if entry is not None else "", analysis, document.device, document.session.device.key,
            settings.convention, settings.overlap, document.binary,
            measured=[(mark.x, mark.low, mark.high) for mark in measured],
        )
        scene = sweep_scene(inputs, self.state, choices)
        self.scene = scene
        if scene.message is not None:
            self._show_message(scene.message)
            return
        self.message.setVisible(False)
        self.legend.setVisible(True)
        self.sizes = scene.sizes
        self._draw_lines(scene)
        self._draw_markers(scene)
        self.measured.show(measured)
        (low, high), (y_low, y_high) = scene.x_range, scene.y_range
        self.plot.getViewBox().setRange(xRange=(low, high), yRange=(y_low, y_high), padding=0)
        self._place_labels()
        if scene.bottom_title != self._bottom_label:  # an axis label set lays the plot out again: only when it changes
            self.plot.setLabel("bottom", scene.bottom_title)
            self._bottom_label = scene.bottom_title
        self.caption.setText(scene.caption)
        self.sweep_drawn.emit()

    def _follow_choices(self, op: str, choices: list[tuple[str, ...]]) -> None:
        """The chooser lists the operation's size fields; the choice (and range) kept while they stay the same."""
        state = follow_choices(self.state, choices)
        if choices != self._choices or op != self._op:
            self._choices = choices
            self._op = op
            self.field_choice.blockSignals(True)
            self.field_choice.clear()
            self.field_choice.addItems(["=".join(group) for group in choices])
            self.field_choice.setCurrentIndex(choices.index(state.fields) if state.fields in choices else -1)
            self.field_choice.blockSignals(False)
        if state != self.state:
            self.state = state
            self._set_range_boxes(state.low, state.high)

    def _draw_lines(self, scene: SweepScene) -> None:
        """Each line of the scene: the combined bound, compute and memory on their own items, every further term on
        one made for it when first seen (dashed in its own colour); a term the scene no longer has is hidden and
        leaves the legend."""
        fixed = {LINE_BOUND: self.bound_line, TERM_COMPUTE: self.compute_line, BANDWIDTH: self.memory_line}
        terms = [line for line in scene.lines if line.key not in fixed]
        for line in scene.lines:
            item = fixed.get(line.key)
            if item is None:
                item = self.term_lines.get(line.key)
                if item is None:
                    colour = LEVEL_COLOURS.get(line.key, LINK_COLOUR)
                    item = pg.PlotDataItem(pen=pg.mkPen(colour, width=2.0, style=Qt.PenStyle.DashDotLine))
                    item.setZValue(4 + len(self.term_lines))
                    self.plot.addItem(item)
                    self.term_lines[line.key] = item
                self.legend.set_entry(line.key, item, line.legend)
            set_line_data(item, line.x, line.y)
            item.setVisible(True)
        shown = {line.key for line in terms}
        for key, item in self.term_lines.items():
            if key not in shown:
                item.setVisible(False)
                self.legend.remove_entry(key)

    def _draw_markers(self, scene: SweepScene) -> None:
        """The declared point and its label's text, the shade beyond memory and the limiter's change."""
        declared = scene.declared
        if declared is not None:
            self.current_marker.setData([declared.x], [declared.y])
            self.current_label.setText(declared.text)
        self.current_marker.setVisible(declared is not None)
        self.current_label.setVisible(declared is not None)
        beyond, limiter = scene.beyond, scene.limiter
        if beyond is not None:
            self.beyond_region.setRegion((beyond.x, scene.x_range[1]))
            self.beyond_label.setText(beyond.text)
            self.beyond_label.setPos(*beyond.label_at)
        if limiter is not None:
            self.limiter_line.setPos(limiter.x)
            self.limiter_label.setText(limiter.text)
            self.limiter_label.setPos(*limiter.label_at)
        for item in (self.beyond_region, self.beyond_label):
            item.setVisible(beyond is not None)
        for item in (self.limiter_line, self.limiter_label):
            item.setVisible(limiter is not None)

    def _place_labels(self) -> None:
        """The as-declared label beside its point and the shade's text in a corner, each where the scene finds it
        clear of the lines and of the limiter's label (`declared_label_place`, `beyond_label_place`), once the
        labels' sizes in pixels are known."""
        scene = self.scene
        if scene is None:
            return
        view = self.plot.getViewBox().geometry()
        plot_size = (view.width(), view.height())

        def size(label: pg.TextItem) -> tuple[float, float]:
            rect = label.textItem.boundingRect()
            return rect.width(), rect.height()

        limiter_box = None
        if scene.limiter is not None and self.limiter_label.isVisible():
            limiter_box = label_box(scene.limiter.anchor, scene.limiter.label_at, size(self.limiter_label), scene, plot_size)
        if scene.declared is not None:
            anchor, position = declared_label_place(scene, size(self.current_label), limiter_box, plot_size)
            self.current_label.setAnchor(anchor)
            self.current_label.setPos(*position)
        if scene.beyond is not None:
            anchor, position = beyond_label_place(scene, size(self.beyond_label), limiter_box, plot_size)
            self.beyond_label.setAnchor(anchor)
            self.beyond_label.setPos(*position)

    def _show_message(self, text: str) -> None:
        for item in (*self.term_lines.values(), self.compute_line, self.memory_line, self.bound_line, self.current_marker, self.current_label,
                     self.beyond_region, self.beyond_label, self.limiter_line, self.limiter_label):
            item.setVisible(False)
        self.measured.show([])
        self.legend.setVisible(False)
        self.message.setText(text)
        self.plot.getViewBox().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.message.setPos(0.5, 0.5)
        self.message.setVisible(True)
        self.caption.setText("")

    def set_plot_font(self, font: QFont) -> None:
        apply_plot_font(self.plot, font, [self.current_label, self.message, self.beyond_label, self.limiter_label])
        rows = QFont(font)
        rows.setPointSize(legend_points(font))
        self.legend.set_text_font(rows)
        self._place_labels()

