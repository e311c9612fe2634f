"""Imported kernels on the roofline: a star per matched kernel, a dotted link to its operation's point, a legend row."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.documents.profiles import KERNEL_LEGEND
from workbench.gui.measure_plots import IMPOSSIBLE_COLOUR, OTHER_DEVICE_COLOUR
from workbench.gui.plain_text import tooltip
from workbench.gui.profile_model import KernelMark, kernel_marks
from workbench.scenes.plot_style import COLOURS, MARKS, hex_colour

# the kernels' look is the scenes' (plot_style.MARKS "kernel…"): the report's roofline draws them alike
KERNEL_COLOUR = hex_colour(COLOURS["kernel"])
KERNEL_FAINT = hex_colour(COLOURS["kernel faint"])
KERNEL_SYMBOL = MARKS["kernel"].symbol


class ProfiledKernelLayer:
    """Imported kernels on the roofline: stars, a dotted link to each one's operation, a legend row."""

    def __init__(self, plot: pg.PlotItem, document: Document) -> None:
        self.plot = plot
        self.document = document
        self.points = pg.ScatterPlotItem(
            symbol=KERNEL_SYMBOL,
            size=14,
            pen=pg.mkPen(KERNEL_COLOUR, width=1.2),
            brush=pg.mkBrush(KERNEL_FAINT),
            hoverable=True,
            tip=None,
            hoverSize=19,
        )
        self.points.setZValue(4)
        self.links = pg.PlotDataItem(pen=pg.mkPen(KERNEL_COLOUR, width=1.2, style=Qt.PenStyle.DotLine))
        self.links.setZValue(3)
        plot.addItem(self.links)
        plot.addItem(self.points)
        self.points.sigHovered.connect(self._hovered)
        self.marks: list[KernelMark] = []
        self._in_legend = False

    def compute(self) -> list[KernelMark]:
        """Where the matched kernels go (empty when none is matched, or a record cannot be compared)."""
        try:
            return kernel_marks(self.document)
        except WorkbenchError:
            return []

    def show(self, marks: Sequence[KernelMark]) -> None:
        if not marks and not self.marks and not self._in_legend:
            return  # nothing drawn, nothing to draw: every edit of a session without imported kernels
        self.marks = list(marks)
        current = self.document.current
        spots = []
        for index, mark in enumerate(self.marks):
            selected = mark.operation == current
            # a kernel compared with its own GPU (not the session's) or beyond that GPU's bound: its own style
            colour = {"impossible": IMPOSSIBLE_COLOUR, "other device": OTHER_DEVICE_COLOUR}.get(mark.style, KERNEL_COLOUR)
            spots.append(
                {
                    "pos": (mark.x, mark.y),
                    "size": MARKS["kernel selected" if selected else "kernel"].size,
                    "pen": pg.mkPen(colour, width=1.5),
                    "brush": pg.mkBrush(colour if selected else KERNEL_FAINT) if mark.style == "session"
                    else pg.mkBrush(255, 255, 255, 230),
                    "data": index,
                }
            )
        self.points.setData(spots)
        xs: list[float] = []
        ys: list[float] = []
        for mark in self.marks:
            if mark.anchor is not None:
                xs += [mark.x, mark.anchor[0]]
                ys += [mark.y, mark.anchor[1]]
        self.links.setData(np.array(xs, dtype=float), np.array(ys, dtype=float), connect="pairs")
        self.links.setVisible(bool(xs))
        self._show_in_legend(bool(self.marks))
        if not self.marks:
            self.points.setToolTip("")

    def _show_in_legend(self, wanted: bool) -> None:
        if wanted == self._in_legend:
            return
        legend = self.plot.addLegend(offset=(12, 10))  # the plot's one legend (created by whoever asks first)
        if wanted:
            legend.setBrush(pg.mkBrush(255, 255, 255, 220))
            legend.addItem(self.points, KERNEL_LEGEND)
        else:
            legend.removeItem(self.points)
        self._in_legend = wanted

    def tip(self, data: Any) -> str:
        """Hover text of one kernel point (name, intensity, rate, duration against the bound)."""
        if not isinstance(data, (int, np.integer)) or not 0 <= int(data) < len(self.marks):
            return ""
        return self.marks[int(data)].tip

    def _hovered(self, item: Any, points: Any, event: Any) -> None:
        # The tip goes on this item, not on the view box the operations' points write to,
        # so the two hover handlers never clear each other's text.
        self.points.setToolTip(tooltip("\n\n".join(self.tip(point.data()) for point in list(points)[:3])))
