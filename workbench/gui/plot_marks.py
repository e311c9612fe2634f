"""Marks on a plot (the operations' points, their points at further memory levels, the ridge point) drawn by Qt.

pyqtgraph's ScatterPlotItem is one item for all its points: it computes its bounds and paints in Python, and
setting one point anew invalidates the rectangle around all of them. On the roofline a keystroke moves one
operation's point, and the scene repainted, and asked for the bounds of, every scatter meeting any changed
pixel. A `MarkSet` keeps one Qt pixmap item per mark instead (the symbol drawn once per look, as pyqtgraph's
atlas does): the scene indexes, hit-tests and paints them without Python, and a mark that did not move is
neither invalidated nor repainted. Past `MANY` marks (a traced model's operations) pyqtgraph's scatters take
over, as their array code is then the faster: one per look (the plain points, the selected one, the stale ones),
so an edit that moves one point sets the few points of its look, not all.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush, QGuiApplication, QPainter, QPainterPath, QPen, QPixmap, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPixmapItem

MANY = 400  # more marks than this are drawn by one pyqtgraph scatter


@functools.cache
def symbol_path(symbol: str, size: float) -> QPainterPath:
    """pyqtgraph's symbol (a unit path about the origin) at `size` pixels across, as its scatter draws it."""
    return QTransform.fromScale(size, size).map(Symbols[symbol])


_PIXMAPS: dict[tuple[Any, ...], QPixmap] = {}


def symbol_pixmap(symbol: str, size: float, pen: QPen, brush: QBrush) -> QPixmap:
    """The symbol drawn once, antialiased, at the screen's pixel ratio (as pyqtgraph's symbol atlas keeps them):
    a mark then paints by copying pixels, and twenty marks in a repainted region cost little."""
    ratio = QGuiApplication.primaryScreen().devicePixelRatio() if QGuiApplication.primaryScreen() else 1.0
    key = (symbol, size, pen.color().rgba(), pen.widthF(), pen.style(), brush.color().rgba(), brush.style(), ratio)
    pixmap = _PIXMAPS.get(key)
    if pixmap is None:
        side = size + pen.widthF() + 2  # the outline straddles the path's edge; a pixel of air for antialiasing
        pixmap = QPixmap(int(round(side * ratio)), int(round(side * ratio)))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.translate(side / 2, side / 2)
        painter.setPen(pen)
        painter.setBrush(brush)
        painter.drawPath(symbol_path(symbol, size))
        painter.end()
        if len(_PIXMAPS) > 512:  # looks come and go with colours and sizes; keep the cache bounded
            _PIXMAPS.clear()
        _PIXMAPS[key] = pixmap
    return pixmap


class _Mark(QGraphicsPixmapItem):
    """One mark: a symbol of fixed pixel size at a point in the plot's coordinates, centred on it; it tells its
    set when the pointer enters or leaves it."""

    def __init__(self, owner: "MarkSet") -> None:
        super().__init__()
        self.owner = owner
        self.datum: Any = None
        self.shown: tuple[Any, ...] | None = None  # (symbol, size, pen, brush) drawn now
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)  # pixels, at any zoom
        self.setShapeMode(QGraphicsPixmapItem.ShapeMode.BoundingRectShape)  # hover on the square, as the scatter's

    def draw(self, symbol: str, size: float, pen: QPen, brush: QBrush) -> None:
        pixmap = symbol_pixmap(symbol, size, pen, brush)
        self.setPixmap(pixmap)
        side = pixmap.width() / pixmap.devicePixelRatio()
        self.setOffset(QPointF(-side / 2, -side / 2))

    def hoverEnterEvent(self, event: Any) -> None:  # noqa: N802
        self.owner._entered(self)

    def hoverLeaveEvent(self, event: Any) -> None:  # noqa: N802
        self.owner._left(self)


class MarkSet:
    """Marks of one kind on a plot, set as pyqtgraph's scatter is: `setData(spots)` with dicts of `pos`, `size`,
    `symbol`, `pen`, `brush` and `data` (each but `pos` defaulting to the set's own), or `setData(xs, ys,
    size=…, data=…)`; `getData()` gives the x and y arrays. `on_hover(data)` hears the data of the marks under
    the pointer (an empty list when it leaves them); a hovered mark grows to `hover_size`."""

    def __init__(
        self,
        plot: pg.PlotItem,
        symbol: str = "o",
        size: float = 10.0,
        pen: QPen | None = None,
        brush: QBrush | None = None,
        hover_size: float | None = None,
        z: float = 0.0,
        on_hover: Callable[[list[Any]], None] | None = None,
    ) -> None:
        self.plot = plot
        self.opts = {"symbol": symbol, "size": size, "pen": pen if pen is not None else pg.mkPen("k"),
                     "brush": brush if brush is not None else pg.mkBrush("w")}
        self.hover_size = hover_size
        self.z = z
        self.on_hover = on_hover
        self.items: list[_Mark] = []
        self.used = 0
        self.visible = True
        self._xs: np.ndarray | None = np.zeros(0)  # None: not made from _positions yet
        self._ys: np.ndarray | None = np.zeros(0)
        self._positions: list[tuple[float, float]] = []  # the marks' positions while _xs and _ys are not made
        self._scatter: pg.ScatterPlotItem | None = None  # made for more than MANY marks given as arrays
        # more than MANY given as spots: a scatter per look, with the points it was last given (`_show_by_look`),
        # by (symbol, size, id(pen), id(brush)); each entry holds its look, so no other pen or brush can take those
        # ids while it is kept (a pen freed after a refresh and a new one of another colour made at its address
        # would have met the old pen's scatter and been drawn in its colour)
        self._looks: dict[tuple[Any, ...], tuple[pg.ScatterPlotItem, tuple[list[float], list[float], list[Any]], tuple[Any, ...]]] = {}
        self._given: list[dict[str, Any]] = []  # the spots last given as dicts, one per mark shown
        # many spots given: each spot's look (the key of its scatter in `_looks`) and its place in that scatter
        self._look_of: list[tuple[tuple[Any, ...], int]] = []
        self._hovered: list[_Mark] = []

    # ------------------------------------------------------------------ setting
    def setData(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802 (as pyqtgraph's)
        if len(args) == 2 and len(args[0]) > MANY:  # arrays of many marks go to the scatter as they are
            self._xs, self._ys = np.asarray(args[0], dtype=float), np.asarray(args[1], dtype=float)
            self._show_many(*args, **kwargs)
            return
        spots = self._spots(*args, **kwargs)
        if len(spots) > MANY:
            self._xs = np.array([spot["pos"][0] for spot in spots], dtype=float)
            self._ys = np.array([spot["pos"][1] for spot in spots], dtype=float)
            self._given = []
            self._take(0)
            if self._scatter is not None and self._scatter.isVisible():
                self._scatter.setData([])
                self._scatter.setVisible(False)
            self._show_by_look(spots)
            return
        if self._scatter is not None and self._scatter.isVisible():
            self._scatter.setData([])
            self._scatter.setVisible(False)
        self._show_by_look([])
        # An edit moves one mark of a set at most: marks given the same spot as last time (equal dicts: the same
        # position, size and the same pen and brush objects) are left as they are.
        given = self._given
        for index, (item, spot) in enumerate(zip(self._take(len(spots)), spots)):
            if index >= len(given) or given[index] != spot:
                self._show(item, spot)
        self._positions = [spot["pos"] for spot in spots]  # as arrays when asked (getData): seldom, and not per edit
        self._xs = self._ys = None
        self._given = [dict(spot) for spot in spots]

    def _show_many(self, *args: Any, **kwargs: Any) -> None:
        self._given = []
        self._take(0)
        self._show_by_look([])
        scatter = self._many()
        scatter.setData(*args, **kwargs)
        scatter.setVisible(self.visible)

    def patch(self, index: int, spot: dict[str, Any]) -> bool:
        """Spot `index` of the many last given (more than MANY) replaced by `spot`: only its look's scatter is set
        again, or, where its look changed (a selection restyles a point), the scatters of its old and new look.
        False, changing nothing, when the marks are few: then the caller gives every spot again (setData)."""
        if index >= len(self._look_of) or self._xs is None or self._ys is None:
            return False
        key, at = self._look_of[index]
        look = self._look(spot)
        new_key = (look[0], look[1], id(look[2]), id(look[3]))
        x, y = spot["pos"]
        self._xs[index], self._ys[index] = x, y
        if new_key == key:
            scatter, (xs, ys, data), _ = self._looks[key]
            xs[at], ys[at], data[at] = x, y, spot.get("data")
            self._set_look(key)
            return True
        _, (xs, ys, data), _ = self._looks[key]
        del xs[at], ys[at], data[at]
        # the marks after it in its old look's scatter move up one place there
        self._look_of = [(k, p - 1) if k == key and p > at else (k, p) for k, p in self._look_of]
        if new_key not in self._looks:
            self._looks[new_key] = (self._new_look_scatter(look), ([], [], []), look)
        _, (new_xs, new_ys, new_data), _ = self._looks[new_key]
        # in its new look's scatter among the others in the spots' order, as `_show_by_look` would put it
        at = sum(1 for k, _ in self._look_of[:index] if k == new_key)
        self._look_of = [(k, p + 1) if k == new_key and p >= at else (k, p) for k, p in self._look_of]
        self._look_of[index] = (new_key, at)
        new_xs.insert(at, x)
        new_ys.insert(at, y)
        new_data.insert(at, spot.get("data"))
        for changed in (key, new_key):
            self._set_look(changed)
        return True

    def _set_look(self, key: tuple[Any, ...]) -> None:
        """A look's scatter set to the points it holds (taken off the plot when it holds none)."""
        scatter, (xs, ys, data), _ = self._looks[key]
        if not xs:
            self.plot.removeItem(scatter)
            del self._looks[key]
            return
        scatter.setData(x=np.array(xs, dtype=float), y=np.array(ys, dtype=float), data=data)
        scatter.setVisible(self.visible)

    def _new_look_scatter(self, look: tuple[Any, ...]) -> pg.ScatterPlotItem:
        """A scatter for the points of one look (symbol, size, pen, brush), on the plot.

        Drawn into a pixmap once and copied on each repaint (Qt's device-coordinate cache): an edit or a selection
        sets the few points of one look, and the thousands of another look are then not painted again whenever
        a label, a leader or the selected point near them is (pyqtgraph paints every point of a scatter on each
        paint call). The cache is made again when its own points, the view's range or its size change."""
        symbol, size, pen, brush = look
        scatter = pg.ScatterPlotItem(symbol=symbol, size=size, pen=pen, brush=brush, hoverable=self.on_hover is not None,
                                     tip=None, hoverSize=self.hover_size or -1)
        scatter.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        scatter.setZValue(self.z + 1e-5 * size)  # the larger (selected) mark above the plain ones
        if self.on_hover is not None:
            on_hover = self.on_hover
            scatter.sigHovered.connect(lambda _item, points, _event: on_hover([p.data() for p in points]))
        self.plot.addItem(scatter)
        return scatter

    def _look(self, spot: dict[str, Any]) -> tuple[Any, ...]:
        """A spot's symbol, size, pen and brush (the set's own where the spot names none)."""
        return (spot.get("symbol", self.opts["symbol"]), spot.get("size", self.opts["size"]),
                spot.get("pen", self.opts["pen"]), spot.get("brush", self.opts["brush"]))

    def _show_by_look(self, spots: Sequence[dict[str, Any]]) -> None:
        """Many spots: one scatter per look (symbol, size, pen, brush), each set with arrays (pyqtgraph's fast
        path for points that all look the same); a look whose points did not change is left as it is, so an
        edit that moves the selected operation's point (a look of its own) sets one point, not thousands."""
        groups: dict[tuple[Any, ...], tuple[tuple[Any, ...], list[float], list[float], list[Any]]] = {}
        self._look_of = []
        for spot in spots:
            look = self._look(spot)
            key = (look[0], look[1], id(look[2]), id(look[3]))
            group = groups.get(key)
            if group is None:
                group = groups[key] = (look, [], [], [])
            self._look_of.append((key, len(group[1])))
            x, y = spot["pos"]
            group[1].append(x)
            group[2].append(y)
            group[3].append(spot.get("data"))
        for key in list(self._looks):
            if key not in groups:
                scatter, _, _ = self._looks.pop(key)
                self.plot.removeItem(scatter)
        for key, (look, xs, ys, data) in groups.items():
            shown = (xs, ys, data)
            known = self._looks.get(key)
            if known is not None and known[1] == shown:
                continue
            scatter = self._new_look_scatter(look) if known is None else known[0]
            scatter.setData(x=np.array(xs, dtype=float), y=np.array(ys, dtype=float), data=data)
            scatter.setVisible(self.visible)
            self._looks[key] = (scatter, shown, look)

    def _spots(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        if len(args) == 1 and not kwargs:
            return list(args[0])
        if len(args) == 2:  # xs, ys and one size, pen, brush for all, `data` per mark
            xs, ys = args
            data = kwargs.get("data")
            common = {key: kwargs[key] for key in ("size", "symbol", "pen", "brush") if key in kwargs}
            return [{"pos": (float(x), float(y)), "data": None if data is None else data[i], **common}
                    for i, (x, y) in enumerate(zip(xs, ys))]
        if not args and not kwargs:
            return []
        raise TypeError("MarkSet.setData takes a list of spots, or xs and ys")

    def _take(self, count: int) -> list[_Mark]:
        while len(self.items) < count:
            item = _Mark(self)
            item.setZValue(self.z)
            item.setAcceptHoverEvents(self.on_hover is not None)
            self.plot.addItem(item, ignoreBounds=True)
            self.items.append(item)
        for index in range(max(count, self.used) - 1, -1, -1):  # only those whose state changes are touched
            item = self.items[index]
            shown = index < count and self.visible
            if item.isVisible() != shown:
                item.setVisible(shown)
        self.used = count
        return self.items[:count]

    def _show(self, item: _Mark, spot: dict[str, Any]) -> None:
        """Draw one spot on `item`, touching only what differs from what it draws now."""
        x, y = spot["pos"]
        if item.pos().x() != x or item.pos().y() != y:
            item.setPos(x, y)
        look = (spot.get("symbol", self.opts["symbol"]), spot.get("size", self.opts["size"]),
                spot.get("pen", self.opts["pen"]), spot.get("brush", self.opts["brush"]))
        item.datum = spot.get("data")
        if look != item.shown:
            item.shown = look
            item.draw(*look)

    def _many(self) -> pg.ScatterPlotItem:
        if self._scatter is None:
            self._scatter = pg.ScatterPlotItem(symbol=self.opts["symbol"], size=self.opts["size"], pen=self.opts["pen"],
                                               brush=self.opts["brush"], hoverable=self.on_hover is not None, tip=None,
                                               hoverSize=self.hover_size or -1)
            self._scatter.setZValue(self.z)
            if self.on_hover is not None:
                on_hover = self.on_hover
                self._scatter.sigHovered.connect(lambda _item, points, _event: on_hover([p.data() for p in points]))
            self.plot.addItem(self._scatter)
        return self._scatter

    # ------------------------------------------------------------------ reading, showing
    def getData(self) -> tuple[np.ndarray, np.ndarray]:  # noqa: N802
        if self._xs is None or self._ys is None:
            self._xs = np.array([x for x, _ in self._positions], dtype=float)
            self._ys = np.array([y for _, y in self._positions], dtype=float)
        return self._xs, self._ys

    def __len__(self) -> int:
        return len(self._xs) if self._xs is not None else len(self._positions)

    def setVisible(self, visible: bool) -> None:  # noqa: N802
        self.visible = visible
        self._take(self.used)
        if self._scatter is not None:
            self._scatter.setVisible(visible and len(self) > MANY and not self._looks)
        for scatter, _, _ in self._looks.values():
            scatter.setVisible(visible)

    def isVisible(self) -> bool:  # noqa: N802
        return self.visible

    def shown_items(self) -> Sequence[QGraphicsItem]:
        """The items drawing the marks now (the mark items, or the one scatter past MANY)."""
        if len(self) > MANY and self._looks:
            return [scatter for scatter, _, _ in self._looks.values()]
        if len(self) > MANY and self._scatter is not None:
            return [self._scatter]
        return self.items[: self.used]

    # ------------------------------------------------------------------ hover
    def _entered(self, item: _Mark) -> None:
        if item not in self._hovered:
            self._hovered.append(item)
        self._grow(item, True)
        self._tell()

    def _left(self, item: _Mark) -> None:
        if item in self._hovered:
            self._hovered.remove(item)
        self._grow(item, False)
        self._tell()

    def _grow(self, item: _Mark, hovered: bool) -> None:
        if self.hover_size is None or item.shown is None:
            return
        symbol, size, pen, brush = item.shown
        item.draw(symbol, self.hover_size if hovered else size, pen, brush)

    def _tell(self) -> None:
        if self.on_hover is not None:
            self.on_hover([item.datum for item in self._hovered if item.isVisible()])
