"""The Timeline plot's bars, their names and the exposed-communication spans: one graphics item, drawn per frame
from what is in view.

`workbench.scenes.timeline_frame.LaneBars.frame` picks the bars a view range draws (sub-pixel runs merged) and the
label candidates; this item turns them into rectangles in device pixels, one list per style, keeps those and the
placed names for the range and size they were made for (the second paint of a frame, a hover or an expose
redraws them without recomputing), and draws an operation's name only where its bar, clipped to the view,
is taller than a line and wider than the name (or than its end, "…down_proj.mm_bwd", where the whole does not
fit): names never run over each other or off their bar.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter

from workbench.scenes.timeline_frame import Frame, LaneBars

try:
    from pyqtgraph.Qt.internals import PrimitiveArray as _PrimitiveArray
except ImportError:  # not in every pyqtgraph: RectBatch then draws a list
    _PrimitiveArray = None

LABEL_PADDING_PX = 4.0  # air between a name and its bar's ends
MIN_ELIDED_CHARACTERS = 12  # a bar narrower than its name shows the name's end, if there is room for this many
GRID_COLORS = (QColor(214, 214, 214), QColor(236, 236, 236))  # major ticks' lines, then the minor ones'
EXPOSED_TEXT = "exposed"


@dataclass(frozen=True)
class BarStyle:
    """A bar's fill, its outline's colour and width in pixels above and below (a pixel at the ends), and the colour
    of the names drawn on it."""

    fill: QColor
    outline: QColor
    outline_px: int
    text: QColor


@dataclass(frozen=True)
class DrawnFrame:
    """What the item drew for one view range: the frame's choice, the names placed (operation index, text, centre
    in pixels) and the exposed spans' notes placed (centre in pixels)."""

    frame: Frame
    rects: tuple[tuple[QColor, RectBatch], ...]  # filled in order: each style's outlines, then its insides
    names: tuple[tuple[int, str, QPointF], ...]
    exposed: RectBatch
    notes: tuple[QPointF, ...]
    grid: tuple[tuple[QColor, RectBatch], ...] = ()  # vertical lines at the time axis's ticks, minor first


class RectBatch:
    """Rectangles in whole device pixels, drawn by one `drawRects` call with the painter's brush and no pen (a
    pen's outline is stroked, many times slower than a fill). `array` holds them as rows of (x, y, w, h).

    pyqtgraph's PrimitiveArray (what its BarGraphItem draws with) hands the painter the array's memory at
    once; where a pyqtgraph lacks it, a list of QRectF (thousands of them cost a few milliseconds to make)."""

    def __init__(self, x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> None:
        x0, x1, y0, y1 = np.floor(x0), np.floor(x1), np.floor(y0), np.floor(y1)
        self.array = np.column_stack([x0, y0, x1 - x0, y1 - y0]) if len(x0) else np.zeros((0, 4))
        self._primitive: Any = None
        if _PrimitiveArray is not None:
            self._primitive = _PrimitiveArray(QRectF, 4)
            self._primitive.resize(len(self.array))
            self._primitive.ndarray()[:] = self.array

    def __len__(self) -> int:
        return len(self.array)

    def draw(self, painter: QPainter) -> None:
        if not len(self.array):
            return
        if self._primitive is not None:
            painter.drawRects(*self._primitive.drawargs())
        else:
            painter.drawRects([QRectF(*row) for row in self.array.tolist()])


class TimelineBars(pg.GraphicsObject):
    """A step's bars on their lanes (`bars`, styled by `styles`), named by `names`, over the `exposed` spans."""

    def __init__(self, bars: LaneBars, names: Sequence[str], styles: dict[int, BarStyle], lanes: int,
                 exposed: Sequence[tuple[float, float]], exposed_brush: QColor, exposed_text: QColor,
                 grid: pg.AxisItem | None = None, height: float = 0.6, max_labels: int = 60) -> None:
        super().__init__()
        self.grid = grid  # the time axis whose ticks the grid lines follow (opaque lines: an axis's own
        # translucent grid, stroked across the whole plot, cost a frame more than all the bars)
        self.bars, self.names, self.styles = bars, list(names), styles
        self.lanes, self.height, self.max_labels = lanes, height, max_labels
        self.exposed = np.array(exposed, dtype=float).reshape(-1, 2)
        self.exposed_brush, self.exposed_text = QBrush(exposed_brush), exposed_text
        self.font = QFont()
        self._metrics = QFontMetricsF(self.font)
        self._text_widths: dict[int, float] = {}
        self._drawn: DrawnFrame | None = None
        self._key: tuple[float, ...] | None = None
        low = min(float(bars.starts.min()) if len(bars) else 0.0, float(self.exposed[:, 0].min()) if len(self.exposed) else 0.0)
        high = max(float(bars.ends.max()) if len(bars) else 0.0, float(self.exposed[:, 1].max()) if len(self.exposed) else 0.0)
        # Down to the axis and up past the top lane (where "exposed" is written): the grid and notes lie inside.
        self._bounds = QRectF(low, -1.0, max(high - low, 1e-12), max(lanes, 1) + 1.0)

    def setFont(self, font: QFont) -> None:  # noqa: N802 (Qt's name)
        """The names' font (the plot's, which grows with View ▸ Presentation)."""
        self.font = QFont(font)
        self._metrics = QFontMetricsF(self.font)
        self._text_widths.clear()
        self._key = None
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(self._bounds)

    def dataBounds(self, axis: int, frac: float = 1.0, orthoRange: Any = None) -> tuple[float, float]:  # noqa: N802, N803
        rect = self._bounds
        return (rect.left(), rect.right()) if axis == 0 else (rect.top(), rect.bottom())

    def _text_width(self, index: int) -> float:
        width = self._text_widths.get(index)
        if width is None:
            width = self._text_widths[index] = self._metrics.horizontalAdvance(self.names[index])
        return width

    def drawn(self, x0: float, x1: float, sx: float, dx: float, sy: float, dy: float,
              y_range: tuple[float, float] = (-1.0, 1.0)) -> DrawnFrame:
        """What the range [x0, x1] (and `y_range` high) draws under the view transform x_px = sx·x + dx,
        y_px = sy·y + dy (kept for that range and transform: a repaint of the same frame reuses it)."""
        key = (x0, x1, sx, dx, sy, dy, *y_range)
        if key == self._key and self._drawn is not None:
            return self._drawn
        pixel = 1.0 / abs(sx) if sx else 0.0
        frame = self.bars.frame(x0, x1, pixel, self.max_labels)
        half = self.height / 2
        rects = []
        for code, (left, right, lane) in sorted(frame.bars.items()):
            style = self.styles[code]
            px0, px1 = left * sx + dx, right * sx + dx
            px1 = np.maximum(px1, px0 + 1.0)  # a bar is at least a pixel wide: nothing in view vanishes
            ya, yb = (lane - half) * sy + dy, (lane + half) * sy + dy
            top, bottom = np.minimum(ya, yb), np.maximum(ya, yb)
            rects.append((style.outline, RectBatch(px0, px1, top, bottom)))
            # The outline's width above and below; a pixel at the ends, so that a run of narrow bars on the critical
            # path still shows its fill (a wide outline all round made it one block of the outline's colour).
            w, side = style.outline_px, 1
            inside = (px1 - px0 > 2 * side) & (bottom - top > 2 * w)  # a bar too narrow for a fill is all outline
            rects.append((style.fill, RectBatch(px0[inside] + side, px1[inside] - side, top[inside] + w, bottom[inside] - w)))
        bar_px = abs(self.height * sy)
        line = self._metrics.height()
        names = []
        min_room = MIN_ELIDED_CHARACTERS * self._metrics.averageCharWidth()
        if bar_px >= line:  # lanes too thin for a line of text: no names rather than names over the next lane
            starts, ends, lanes = self.bars.starts, self.bars.ends, self.bars.lanes
            for index in frame.labels.tolist():  # at most max_labels of them
                left, right = max(starts[index], x0), min(ends[index], x1)
                room = (right - left) * abs(sx) - 2 * LABEL_PADDING_PX
                text = self.names[index]
                if room < self._text_width(index):  # the name's end (its module path's last parts) where it fits
                    text = self._metrics.elidedText(text, Qt.TextElideMode.ElideLeft, room) if room >= min_room else ""
                if len(text) > 3:  # more than an ellipsis and a letter or two
                    names.append((index, text, QPointF((left + right) / 2 * sx + dx, lanes[index] * sy + dy)))
        notes = []
        spans = self.exposed[(self.exposed[:, 1] >= x0) & (self.exposed[:, 0] <= x1)]
        top, bottom = sorted(((self.lanes - 0.5) * sy + dy, -0.5 * sy + dy))
        left = spans[:, 0] * sx + dx
        exposed = RectBatch(left, np.maximum(spans[:, 1] * sx + dx, left + 1.0), np.full(len(spans), top), np.full(len(spans), bottom))
        clipped = np.clip(spans, x0, x1) * sx + dx
        wide = np.flatnonzero(clipped[:, 1] - clipped[:, 0] >= self._metrics.horizontalAdvance(EXPOSED_TEXT) + 2 * LABEL_PADDING_PX)
        for index in wide[: self.max_labels].tolist():
            notes.append(QPointF((clipped[index, 0] + clipped[index, 1]) / 2, top))
        self._drawn = DrawnFrame(frame, tuple(rects), tuple(names), exposed, tuple(notes),
                                 self._grid_lines(x0, x1, sx, dx, sy * y_range[0] + dy, sy * y_range[1] + dy))
        self._key = key
        return self._drawn

    def _grid_lines(self, x0: float, x1: float, sx: float, dx: float, ya: float, yb: float) -> tuple[tuple[QColor, RectBatch], ...]:
        if self.grid is None or x1 <= x0:
            return ()
        # The axis's tick spacings (its own choice for this range and width); the values from them here, which
        # costs a fraction of the axis's tickValues (that weeds out minor ticks under major ones: drawn over here).
        levels = self.grid.tickSpacing(x0, x1, (x1 - x0) * abs(sx))[: len(GRID_COLORS)]
        top, bottom = min(ya, yb), max(ya, yb)
        lines = []
        for (spacing, offset), color in reversed(list(zip(levels, GRID_COLORS))):
            if not spacing > 0 or (x1 - x0) / spacing > 10_000:
                continue
            values = offset + spacing * np.arange(math.ceil((x0 - offset) / spacing), math.floor((x1 - offset) / spacing) + 1)
            xs = np.floor(values * sx + dx)
            lines.append((color, RectBatch(xs, xs + 1.0, np.full(len(xs), top), np.full(len(xs), bottom))))
        return tuple(lines)

    def paint(self, painter: QPainter, *_: Any) -> None:
        box = self.getViewBox()
        if box is None:
            return
        (x0, x1), y_range = box.viewRange()
        transform = painter.transform()
        drawn = self.drawn(x0, x1, transform.m11(), transform.dx(), transform.m22(), transform.dy(), tuple(y_range))
        painter.save()
        painter.resetTransform()  # drawn in device pixels: crisp one-pixel outlines at any zoom
        painter.setPen(Qt.PenStyle.NoPen)
        for color, lines in drawn.grid:
            painter.setBrush(color)
            lines.draw(painter)
        painter.setBrush(self.exposed_brush)
        drawn.exposed.draw(painter)
        for color, rects in drawn.rects:
            painter.setBrush(color)
            rects.draw(painter)
        painter.setFont(self.font)
        line = self._metrics.height()
        for index, text, centre in drawn.names:
            painter.setPen(self.styles[int(self.bars.styles[index])].text)
            width = self._text_width(index) if text == self.names[index] else self._metrics.horizontalAdvance(text)
            painter.drawText(QRectF(centre.x() - width / 2 - 1, centre.y() - line / 2, width + 2, line),
                             Qt.AlignmentFlag.AlignCenter, text)
        painter.setPen(self.exposed_text)
        for centre in drawn.notes:
            painter.drawText(QRectF(centre.x() - 100, centre.y() - line, 200, line),
                             Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, EXPOSED_TEXT)
        painter.restore()


__all__ = ["BarStyle", "DrawnFrame", "TimelineBars"]
