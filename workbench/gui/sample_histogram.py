"""The raw samples of one run as a histogram, with its median and p10/p90 marked."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QLabel,
    QVBoxLayout,
    QWidget,
)

from workbench.gui.measure_plots import MEASURED_COLOUR, NOT_VALID_COLOUR
from workbench.gui.plain_text import plain
from workbench.measure.stats import summarize
from workbench.model.units import format_time


def time_scale(seconds: float) -> tuple[float, str]:
    """The factor and unit that put a duration in [1, 1000): (1e6, 'µs') for 12e-6 s."""
    if seconds <= 0 or not math.isfinite(seconds):
        return 1.0, "s"
    exponent = min(max(math.floor(math.log10(seconds) / 3) * 3, -9), 0)
    return 10.0 ** (-exponent), {-9: "ns", -6: "µs", -3: "ms", 0: "s"}[exponent]


class SampleHistogram(QWidget):
    """How the raw samples of one run are spread, with its median and p10/p90 marked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.widget = pg.PlotWidget()
        self.widget.setObjectName("sampleHistogram")
        self.widget.setMenuEnabled(False)
        self.widget.hideButtons()
        self.plot: pg.PlotItem = self.widget.getPlotItem()
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.setLabel("left", "iterations")
        self.plot.setLabel("bottom", "time per iteration")
        self.bars = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pg.mkPen(MEASURED_COLOUR, width=1.2),
                                    brush=pg.mkBrush(46, 125, 50, 90))
        self.median_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#c62828", width=2))
        self.p10_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#424242", width=1, style=Qt.PenStyle.DashLine))
        self.p90_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#424242", width=1, style=Qt.PenStyle.DashLine))
        self.message = pg.TextItem(anchor=(0.5, 0.5), color="#616161")
        for item in (self.bars, self.median_line, self.p10_line, self.p90_line, self.message):
            self.plot.addItem(item)
        self.caption = plain(QLabel())
        self.caption.setObjectName("histogramCaption")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)
        self.counts: np.ndarray = np.zeros(0)
        self.samples_shown = 0
        self.axes_shown = True
        self.show_samples((), "")

    def _show_axes(self, shown: bool) -> None:
        """Axes and grid with samples to show; none around the empty-state message."""
        if shown == self.axes_shown:
            return
        self.axes_shown = shown
        for name in ("left", "bottom"):
            self.plot.showAxis(name, shown)
        self.plot.showGrid(x=shown, y=shown, alpha=0.15)

    def show_samples(self, samples: Sequence[float], title: str, bad: bool = False) -> None:
        """Draw the histogram of `samples` (seconds); an empty sequence shows `title` as a message."""
        self.samples_shown = len(samples)
        if not samples:
            self.counts = np.zeros(0)
            for item in (self.bars, self.median_line, self.p10_line, self.p90_line):
                item.setVisible(False)
            self.message.setText(title or "Select a run to see its raw samples.")
            self.message.setPos(0.5, 0.5)
            self.message.setVisible(True)
            self._show_axes(False)  # an empty state, not a 0–1 plot of nothing
            self.plot.getViewBox().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            self.caption.setText("")
            return
        self._show_axes(True)
        stats = summarize(samples)
        factor, unit = time_scale(stats.median_s)
        values = np.asarray(samples, dtype=float) * factor
        edges = np.histogram_bin_edges(values, bins="auto")
        if len(edges) > 61:
            edges = np.linspace(values.min(), values.max(), 61)
        counts, edges = np.histogram(values, bins=edges)
        self.counts = counts
        colour = NOT_VALID_COLOUR if bad else MEASURED_COLOUR
        self.bars.setPen(pg.mkPen(colour, width=1.2))
        self.bars.setBrush(pg.mkBrush(QColor(colour).red(), QColor(colour).green(), QColor(colour).blue(), 90))
        self.bars.setData(edges, counts)
        self.median_line.setPos(stats.median_s * factor)
        self.p10_line.setPos(stats.p10_s * factor)
        self.p90_line.setPos(stats.p90_s * factor)
        for item in (self.bars, self.median_line, self.p10_line, self.p90_line):
            item.setVisible(True)
        self.message.setVisible(False)
        self.plot.setLabel("bottom", f"time per iteration ({unit})")
        span = max(float(edges[-1] - edges[0]), abs(float(edges[0])) * 1e-3, 1e-12)
        self.plot.getViewBox().setRange(
            xRange=(float(edges[0]) - 0.04 * span, float(edges[-1]) + 0.04 * span),
            yRange=(0, max(int(counts.max()), 1) * 1.08),
            padding=0,
        )
        self.caption.setText(
            f"{title}: {len(samples)} samples; median {format_time(stats.median_s)} (red), "
            f"p10 {format_time(stats.p10_s)} and p90 {format_time(stats.p90_s)} (dashed)"
            + ("; NOT a valid result" if bad else "")
        )
