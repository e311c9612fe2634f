"""The bound-versus-size view: the selected operation's time bounds against one swept size.

Log2 of the swept size against log10 of time; the other fields are held as
declared. The combined bound is drawn broad and grey, each term dashed over
it; sizes beyond the device's memory are shaded, and the size where the
limiter changes is marked. Measured medians are drawn by `measure_plots`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from workbench.model.analysis import sweep
from workbench.model.analysis.sweep import limiter_crossover
from workbench.model.analysis.terms import TERM_COMPUTE
from workbench.model.declaration_text import split_call
from workbench.model.devices import BANDWIDTH
from workbench.errors import WorkbenchError
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
from workbench.model.units import format_bytes, format_time

SWEEP_POINTS = 241


from workbench.measure.sweep import sweep_choices  # noqa: E402 - moved to the core (Qt-free); kept importable here


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


def default_range(fields: tuple[str, ...]) -> tuple[int, int]:
    """Exponents of 2 to sweep: 2^10..2^30 for one size, narrower when sizes multiply."""
    return {1: (10, 30), 2: (8, 20)}.get(len(fields), (4, 16))


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
        self.measured = MeasuredSweepLayer(self.plot, document, self.legend)
        self._declared_at: tuple[float, float, bool] = (0.0, 0.0, False)  # the declared size's point; right half?
        self._ranges = (0.0, 1.0, 0.0, 1.0)  # the view's x and y ranges drawn last
        self.plot.getViewBox().sigResized.connect(lambda *_: self._place_declared_label())  # measured medians (gui/measure_plots.py)
        document.runs_changed.connect(self.mark_dirty)

    def _field_chosen(self, index: int) -> None:
        if 0 <= index < len(self._choices):
            low, high = default_range(self._choices[index])
            self._set_range_boxes(low, high)
        self.refresh()

    def _range_changed(self, *_: object) -> None:
        if self.low.value() >= self.high.value():
            return
        self.refresh()

    def _set_range_boxes(self, low: int, high: int) -> None:
        for box, value in ((self.low, low), (self.high, high)):
            box.blockSignals(True)
            box.setValue(value)
            box.blockSignals(False)

    def fields(self) -> tuple[str, ...]:
        index = self.field_choice.currentIndex()
        return self._choices[index] if 0 <= index < len(self._choices) else ()

    def refresh(self) -> None:
        self._dirty = False
        entry = self.document.current_entry
        analysis = self.document.state(entry).analysis if entry is not None else None
        if analysis is None:
            self._show_message("Declare an operation to see its bounds against size.")
            return
        self._sync_field_choice(analysis)
        fields = self.fields()
        if not fields:
            self._show_message(f"{analysis.declaration.op} has no size field to sweep.")
            return
        low, high = self.low.value(), self.high.value()
        if low >= high:
            self._show_message("Choose a range whose start is below its end.")
            return
        exponents = np.linspace(low, high, SWEEP_POINTS)
        sizes = np.unique(np.round(2.0**exponents))
        settings = self.document.session.settings
        try:
            result = sweep(
                analysis.declaration,
                {name: sizes for name in fields},
                device=self.document.device,
                convention=settings.convention,
                overlap=settings.overlap,
            )
        except WorkbenchError as exc:
            self._show_message(f"No bounds to plot: {exc}")
            return
        if not result.valid.any():
            self._show_message(f"No bounds to plot: {result.first_error}")
            return
        self.message.setVisible(False)
        self.legend.setVisible(True)
        self.sizes = sizes
        x = np.log2(sizes)
        with np.errstate(divide="ignore"):
            compute = np.log10(result.compute_time)
            memory = np.log10(result.memory_time)
            bound = np.log10(result.bound_time)
        set_line_data(self.compute_line, x, compute)
        set_line_data(self.memory_line, x, memory)
        set_line_data(self.bound_line, x, bound)
        for item in (self.compute_line, self.memory_line, self.bound_line):
            item.setVisible(True)
        further = self._show_term_lines(result, x)
        self._mark_declared(analysis, fields, low, high)
        self._mark_sweep(result, analysis.declaration, sizes, fields, low, high)
        finite = np.concatenate([v[np.isfinite(v)] for v in (compute, memory, bound, *further)])
        measured_marks = self.measured.compute(analysis.declaration, fields)
        self.measured.show(measured_marks)
        seen = [end for mark in measured_marks if low <= mark.x <= high for end in (mark.low, mark.high)]
        finite = np.concatenate([finite, np.array(seen, dtype=float)])
        y_low, y_high = (float(finite.min()), float(finite.max())) if finite.size else (-9.0, 0.0)
        self.plot.getViewBox().setRange(xRange=(low, high), yRange=(y_low - 0.3, y_high + 0.3), padding=0)
        self.beyond_label.setPos(high - 0.05 * (high - low) / 20, y_high + 0.25)
        self.limiter_label.setPos(self.limiter_line.value() + 0.1, y_low - 0.25)
        self._ranges = (low, high, y_low - 0.3, y_high + 0.3)
        self._place_declared_label()
        bottom = f"{' = '.join(fields)} (swept; {len(sizes)} sizes)"
        if bottom != self._bottom_label:  # an axis label set lays the plot out again: only when it changes
            self.plot.setLabel("bottom", bottom)
            self._bottom_label = bottom
        self.caption.setText(self._caption_text(entry.name, analysis, fields, sizes, result))
        self.sweep_drawn.emit()

    def _sync_field_choice(self, analysis: Any) -> None:
        """The chooser lists the operation's size fields; the choice (and range) kept while they stay the same."""
        choices = sweep_choices(analysis)
        if choices == self._choices and analysis.declaration.op == self._op:
            return
        previous = self.fields()
        self._choices = choices
        self._op = analysis.declaration.op
        self.field_choice.blockSignals(True)
        self.field_choice.clear()
        self.field_choice.addItems(["=".join(group) for group in choices])
        self.field_choice.setCurrentIndex(choices.index(previous) if previous in choices else 0)
        self.field_choice.blockSignals(False)
        if previous not in choices and choices:
            self._set_range_boxes(*default_range(choices[0]))

    def _mark_declared(self, analysis: Any, fields: tuple[str, ...], low: float, high: float) -> None:
        """The operation as declared: a marker on the bound, labelled on the side with room."""
        declared = analysis.declaration.params[fields[0]]
        if analysis.bound_time:
            cx, cy = math.log2(declared), math.log10(analysis.bound_time)
            self.current_marker.setData([cx], [cy])
            self.current_label.setText(f"as declared: {fields[0]}={declared:,}, {format_time(analysis.bound_time)}")
            self._declared_at = (cx, cy, cx > (low + high) / 2)
        self.current_marker.setVisible(bool(analysis.bound_time))
        self.current_label.setVisible(bool(analysis.bound_time))

    def _place_declared_label(self) -> None:
        """The as-declared label beside its point, under it on the side with room; on a short plot, where under
        its point it would fall on the limiter-change label at the plot's foot, above its point instead."""
        cx, cy, right_half = self._declared_at
        self.current_label.setAnchor((1, 0) if right_half else (0, 0))
        self.current_label.setPos(cx + (-0.3 if right_half else 0.3), cy - 0.05)
        if not (self.current_label.isVisible() and self.limiter_label.isVisible()):
            return
        low, high, y_low, y_high = self._ranges
        view = self.plot.getViewBox().geometry()
        if view.width() <= 0 or view.height() <= 0:
            return
        scale = (view.width() / (high - low), view.height() / (y_high - y_low))  # pixels per unit of log2, log10

        def box(label: pg.TextItem) -> tuple[float, float, float, float]:
            """The label's box in data units (y up) from its position, anchor and text size in pixels."""
            size = label.textItem.boundingRect()
            width, height = size.width() / scale[0], size.height() / scale[1]
            x, y = label.pos().x(), label.pos().y()
            left, top = x - label.anchor.x() * width, y + label.anchor.y() * height
            return left, top - height, left + width, top

        a, b = box(self.current_label), box(self.limiter_label)
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
            self.current_label.setAnchor((1 if right_half else 0, 1))
            self.current_label.setPos(cx + (-0.3 if right_half else 0.3), cy + 0.05)

    def _caption_text(self, name: str, analysis: Any, fields: tuple[str, ...], sizes: Any, result: Any) -> str:
        """What is held, the overlap and the rates' device, what the shading means, which sizes are left out."""
        written = split_call(str(analysis.declaration))
        held = [f"{field}={text}" for field, text in (written.fields.items() if written else ()) if field not in fields]
        refused = int((~result.valid).sum())
        left_out = f" {refused} of {len(sizes)} sizes are left out: {result.first_error}." if refused else ""
        device = self.document.device
        device_name = device.name if device is not None else self.document.session.device.key
        memory = (
            f"Sizes whose tensors exceed its {format_bytes(device.memory_bytes, self.document.binary)} of memory are "
            "shaded: a model only."
            if device is not None and device.memory_bytes
            else "The device states no memory size, so no size is marked as too large."
        )
        return (
            f"{name}: {', '.join(held) or 'no other fields'} held as declared. Combined bound (grey) with "
            f"{analysis.overlap.label} overlap; rates of the {device_name} as in the device panel. {memory}{left_out}"
        )

    def _show_term_lines(self, result: Any, x: Any) -> list[Any]:
        """A dashed line per term beyond compute and HBM (each interface, the host link, a collective's link).

        Lines are created once per term name and reused; a term the sweep no
        longer has is hidden and leaves the legend. Returns the log10 times drawn.
        """
        drawn: list[Any] = []
        names = []
        for index, term in enumerate(result.terms):
            if term.name in (TERM_COMPUTE, BANDWIDTH):
                continue  # the compute and memory lines above
            names.append(term.name)
            line = self.term_lines.get(term.name)
            if line is None:
                colour = LEVEL_COLOURS.get(term.name, LINK_COLOUR)
                line = pg.PlotDataItem(pen=pg.mkPen(colour, width=2.0, style=Qt.PenStyle.DashDotLine))
                line.setZValue(4 + index)
                self.plot.addItem(line)
                self.term_lines[term.name] = line
            self.legend.set_entry(term.name, line, f"{term.title} bound (dashed)")
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.log10(np.asarray(term.time_s, dtype=float))
            set_line_data(line, x, y)
            line.setVisible(True)
            drawn.append(y)
        for name, line in self.term_lines.items():
            if name not in names:
                line.setVisible(False)
                self.legend.remove_entry(name)
        return drawn

    def _mark_sweep(self, result: Any, declaration: Any, sizes: Any, fields: tuple[str, ...], low: float, high: float) -> None:
        """Shade the sizes beyond the device's memory and mark where the limiter changes."""
        x = np.log2(sizes)
        device = self.document.device
        capacity = device.memory_bytes if device is not None else None
        first = result.first_beyond(capacity)
        if first is not None and capacity is not None:
            start = float(x[first] if first == 0 else (x[first - 1] + x[first]) / 2)
            self.beyond_region.setRegion((start, high))
            self.beyond_label.setText(f"beyond {format_bytes(capacity, self.document.binary)} of device memory:\na model only")
        self.beyond_region.setVisible(first is not None)
        self.beyond_label.setVisible(first is not None)
        changes = result.limiter_changes()
        if changes:
            i = changes[0]
            at = float((x[i - 1] + x[i]) / 2)
            self.limiter_line.setPos(at)
            before, now = result.limiter[i - 1], result.limiter[i]  # analyze()'s limiter at each size
            settings = self.document.session.settings
            size = limiter_crossover(declaration, fields, int(sizes[i - 1]), int(sizes[i]),
                                     self.document.device, settings.convention, settings.overlap)
            if size is not None:  # the exact first size of the new limiter, not a point between two samples
                at = math.log2(size)
                self.limiter_line.setPos(at)
                self.limiter_label.setText(f"{before}- → {now}-limited\nfrom {' = '.join(fields)} = {size:,}")
            else:
                self.limiter_label.setText(f"{before}- → {now}-limited\nnear {' = '.join(fields)} ≈ {int(round(2.0**at)):,}")
        self.limiter_line.setVisible(bool(changes))
        self.limiter_label.setVisible(bool(changes))

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
        self._place_declared_label()

