"""What the workbench's log-log plots share: colours, log axes, item pools, text and font helpers.

Every plot works in log coordinates it computes itself (log10 of intensity,
rate and time; log2 of a swept size) and labels its axes with figures and
units through `LogAxis`, so every item lives in one coordinate system. Items
are created once and updated with `setData`/`setPos`; an edit never rebuilds
the scene. Pools of items (roofs, labels) grow when a device has more paths or
the session more operations, and hide what is not needed.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem

from workbench.model.devices import Rate
from workbench.scenes.label_layout import Box
from workbench.scenes.plot_style import COLOURS, DASHED, DOTTED, PENS, LEVEL_SYMBOLS as SCENE_LEVEL_SYMBOLS, hex_colour, si_tick_text
from workbench.scenes.plot_style import intensity_tick as intensity_tick  # the plots' tick text, from the scenes
from workbench.scenes.roofline import is_assumed as is_assumed  # dashed: an assumption (the scenes decide)
from workbench.scenes.roofline import path_label
from workbench.model.units import format_time

pg.setConfigOptions(background="w", foreground="#202020", antialias=True)

# The colours are the scenes' (`workbench.scenes.plot_style`), by name: the window and the reports draw alike.
MEMORY_COLOUR = hex_colour(COLOURS["memory"])
COMPUTE_COLOUR = hex_colour(COLOURS["compute"])
SELECTED_COLOUR = hex_colour(COLOURS["selected"])
ROOF_COLOUR = hex_colour(COLOURS["roof"])
GHOST_COLOUR = hex_colour(COLOURS["ghost"])
POINT_COLOUR = hex_colour(COLOURS["point"])
STALE_COLOUR = hex_colour(COLOURS["stale"])
# The hierarchical roofline's levels: a colour per interface, and the symbol of an operation's point there.
LEVEL_COLOURS = {key: hex_colour(COLOURS[key]) for key in ("host", "hbm", "l2", "smem")}
_PG_SYMBOLS = {"circle": "o", "square": "s", "diamond": "d", "triangle": "t1"}  # the scenes' symbols in pyqtgraph's
LEVEL_SYMBOLS = {key: _PG_SYMBOLS[symbol] for key, symbol in SCENE_LEVEL_SYMBOLS.items()}
LINK_COLOUR = hex_colour(COLOURS["link"])  # a collective's link between chips
LEVEL_MARKS = {"host": "◆", "hbm": "●", "l2": "■", "smem": "▲"}  # the symbols in words (check boxes, captions)

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


@functools.cache
def colour_of(name: str) -> str:
    """The '#rrggbb' of one of the scenes' colours by name (`plot_style.COLOURS`)."""
    return hex_colour(COLOURS[name])


@functools.cache
def role_pen(role: str, dashed: bool = False) -> QPen:
    """The pen of one of the scenes' pen roles (`plot_style.PENS`), dashed where the rate it draws is an
    assumption; one pen object per role and dash."""
    pen = PENS[role]
    dash = DASHED if dashed else pen.dash
    style = Qt.PenStyle.DashLine if dash == DASHED else Qt.PenStyle.DotLine if dash == DOTTED else Qt.PenStyle.SolidLine
    return pg.mkPen(colour_of(pen.colour), width=pen.width, style=style)


def roof_pen(colour: str, rate: Rate, width: float = 2.0) -> Any:
    style = Qt.PenStyle.DashLine if is_assumed(rate) else Qt.PenStyle.SolidLine
    return pg.mkPen(colour, width=width, style=style)


short_path = path_label  # 'fp16_tc' → 'FP16 TC': one naming for the plots and the reports


class LogAxis(pg.AxisItem):
    """An axis over log coordinates (base 10 or 2) whose ticks read as figures: '100 T', '1 ms', '2¹⁰'."""

    def __init__(self, orientation: str, label_for: Callable[[float], str], base: int = 10) -> None:
        super().__init__(orientation)
        self.label_for = label_for
        self.base = base

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:  # noqa: N802,N803
        """Whole decades (or doublings), every `step`-th one, with `step` large enough that no two tick texts
        touch at the tick font's size (measured), and never closer than 46 px (vertical) or 70 px apart."""
        low, high = sorted((minVal, maxVal))
        span = max(high - low, 1e-9)
        per_unit = size / span  # pixels per decade (or per doubling)
        metrics = QFontMetricsF(self.style.get("tickFont") or self.font())
        vertical = self.orientation in ("left", "right")
        step = 1
        while step < span:
            majors = [k for k in range(math.ceil(low), math.floor(high) + 1) if k % step == 0]
            if vertical:
                need = max(46.0, 1.6 * metrics.height())
            else:
                widest = max((metrics.horizontalAdvance(self.label_for(float(k))) for k in majors), default=0.0)
                need = max(70.0, widest + 1.5 * metrics.horizontalAdvance("0"))
            if per_unit * step >= need:
                break
            step += 1
        majors = [float(k) for k in range(math.ceil(low), math.floor(high) + 1) if k % step == 0]
        levels: list[tuple[float, list[float]]] = [(float(step), majors)]
        if self.base == 10 and step == 1 and per_unit > 60:
            minors = [k + math.log10(m) for k in range(math.floor(low), math.ceil(high)) for m in range(2, 10)]
            levels.append((0.5, [v for v in minors if low <= v <= high]))
        return levels

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        if spacing < 1:  # minor ticks carry no text
            return ["" for _ in values]
        return [self.label_for(v) for v in values]

    def drawPicture(self, p: Any, axisSpec: Any, tickSpecs: Any, textSpecs: Any) -> None:  # noqa: N802,N803
        """pyqtgraph's drawing, with the grid lines opaque: each tick pen's translucent colour mixed beforehand
        with the plot's background (the colour it shows on it).

        Qt's raster engine blends a translucent line pixel by pixel: the roofline's hundred-odd grid lines
        cost more than everything else on the plot together, on every repaint (every keystroke). The plot draws
        its axes, and so the grid, beneath the data (log_plot_widget), so the mixed colour is what was seen."""
        super().drawPicture(p, axisSpec, [(_opaque_on_background(pen), a, b) for pen, a, b in tickSpecs], textSpecs)


@functools.lru_cache(maxsize=256)
def _mixed_colour(rgba: int, background: str) -> QColor:
    """A translucent colour as it shows over an opaque background."""
    colour, under = QColor.fromRgba(rgba), pg.mkColor(background)
    alpha = colour.alphaF()
    return QColor.fromRgbF(*(alpha * c + (1.0 - alpha) * u for c, u in zip(
        (colour.redF(), colour.greenF(), colour.blueF()), (under.redF(), under.greenF(), under.blueF()))))


def _opaque_on_background(pen: QPen) -> QPen:
    """The pen with its translucent colour replaced by that colour over the plots' (opaque) background."""
    background = pg.getConfigOption("background")
    if pen.color().alpha() == 255 or not isinstance(background, str):
        return pen
    mixed = QPen(pen)
    mixed.setColor(_mixed_colour(pen.color().rgba(), background))
    return mixed


def si_tick(unit: str) -> Callable[[float], str]:
    return lambda v: si_tick_text(v, unit)


def time_tick(v: float) -> str:
    return format_time(10**v, digits=3)


def power_of_two_tick(v: float) -> str:
    return "2" + str(int(round(v))).translate(_SUPERSCRIPT)


class ItemPool:
    """Long-lived plot items of one kind, created on demand and hidden when unused."""

    def __init__(self, plot: pg.PlotItem, make: Callable[[], Any]) -> None:
        self.plot = plot
        self.make = make
        self.items: list[Any] = []
        self.used = 0  # items in use now (one may still be hidden while its mark is out of view)

    def take(self, count: int) -> list[Any]:
        while len(self.items) < count:
            item = self.make()
            self.plot.addItem(item)
            self.items.append(item)
        for index in range(min(max(count, self.used), len(self.items))):  # past both counts all are hidden already
            shown = index < count
            item = self.items[index]
            if item.isVisible() != shown:  # (pyqtgraph's TextItem recomputes its transform on every setVisible)
                item.setVisible(shown)
        self.used = count
        return self.items[:count]



class SegmentItem(QGraphicsLineItem):
    """One straight segment in the plot's coordinates (a roof, a ghost roof, a leader line), drawn by Qt alone.

    pyqtgraph's PlotDataItem keeps data arrays and a path, and reports its bounds and paints in Python; the
    scene asks every item meeting a repainted region for both, so a roofline with a dozen roofs and twenty
    leaders spent milliseconds of each keystroke on lines that had not moved. The pen is pyqtgraph's cosmetic
    one (its width in pixels at any zoom); `log_plot_widget` antialiases what
    draws without its own render hints, as pyqtgraph's items are drawn.
    `setData`/`getData` take and give the two ends as PlotDataItem's do."""

    def __init__(self, pen: QPen | None = None, cached: bool = False) -> None:
        super().__init__()
        if pen is not None:
            self.setPen(pen)
        if cached:  # a line that seldom changes (a roof): drawn once into a pixmap, copied on each repaint
            self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def setData(self, xs: Sequence[float], ys: Sequence[float]) -> None:  # noqa: N802 (as PlotDataItem's)
        ends = (xs[0], ys[0], xs[1], ys[1])
        if ends == self._ends:  # an unchanged segment is not invalidated (nor repainted), nor asked of Qt
            return
        self._ends = ends
        line = QLineF(*ends)
        if line != self.line():
            self.setLine(line)

    _ends: tuple[float, float, float, float] | None = None  # what setData was last given

    def getData(self) -> tuple[list[float], list[float]]:  # noqa: N802
        line = self.line()
        return [line.x1(), line.x2()], [line.y1(), line.y2()]

    def setPen(self, pen: QPen) -> None:  # noqa: N802
        if pen != self.pen():
            super().setPen(pen)


class PlotLabel(pg.TextItem):
    """pyqtgraph's text label, drawing nothing of its own unless it has a ground or a border.

    The text is the label's child QGraphicsTextItem, which Qt draws. TextItem itself paints in Python only to
    fill a ground, yet the scene asks every item with contents for its bounds, and paints it, whenever a
    repainted region meets it: with twenty labels on the roofline that was a millisecond of each keystroke.
    So the item is flagged as having no contents while it has neither (`set_ground` gives it one). Its text
    keeps its size in pixels as before: TextItem follows the view's transform when the view box tells its
    items of a change (zoom, resize) and when it is shown, not only when it paints."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._flag_contents()
        # Moved on most keystrokes, and no plot of ours fits its range to a label: its moves need not reach
        # pyqtgraph's itemChange (Python) to tell the view box of new bounds.
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges, False)

    def setFont(self, font: QFont) -> None:  # noqa: N802 (pyqtgraph's name)
        super().setFont(font)
        self._font_key = font.key()

    def font_key(self) -> str:
        """Its font's key (QFont.key), kept from the last setFont: a layout asks for it on every edit, and
        asking the text item builds a QFont and its key each time."""
        if self._font_key is None:
            self._font_key = self.textItem.font().key()
        return self._font_key

    _font_key: str | None = None

    def updateTextPos(self) -> None:  # noqa: N802 (pyqtgraph's name)
        """pyqtgraph calls this after every change of the text, its font, width, margin or anchor: the only
        changes of the label's bounds, which are kept from one to the next."""
        super().updateTextPos()
        self._kept_bounds = None
        self._kept_size = None
        self._kept_text = None

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        """The text's box in the label's coordinates, as pyqtgraph computes it, kept until `updateTextPos`: the
        label layout asks every label for it on every edit, and Qt's scene asks again as it indexes and paints."""
        if self._kept_bounds is None:
            self._kept_bounds = super().boundingRect()
        return QRectF(self._kept_bounds)

    def pixel_size(self) -> tuple[float, float]:
        """The width and height of its box, in pixels (kept as the box is)."""
        if self._kept_size is None:
            box = self.boundingRect()
            self._kept_size = (box.width(), box.height())
        return self._kept_size

    def plain_text(self) -> str:
        """The text shown (toPlainText, kept until the text changes)."""
        if self._kept_text is None:
            self._kept_text = self.toPlainText()
        return self._kept_text

    _kept_bounds: QRectF | None = None
    _kept_size: tuple[float, float] | None = None
    _kept_text: str | None = None

    def set_ground(self, brush: QBrush) -> None:
        """A ground under the text (a white one breaks a roof line under its label), or none (NoBrush)."""
        self.fill = brush
        self._flag_contents()
        self.update()

    def _flag_contents(self) -> None:
        bare = self.fill.style() == Qt.BrushStyle.NoBrush and self.border.style() == Qt.PenStyle.NoPen
        if bool(self.flags() & QGraphicsItem.GraphicsItemFlag.ItemHasNoContents) != bare:
            self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, bare)


def log_plot_widget(bottom: pg.AxisItem, left: pg.AxisItem) -> pg.PlotWidget:
    widget = pg.PlotWidget(axisItems={"bottom": bottom, "left": left})
    widget.setMenuEnabled(False)  # its Export… offers pyqtgraph's SVG exporter, which fails with PySide6 6.12
    widget.sceneObj.contextMenu = []
    widget.hideButtons()
    widget.setAntialiasing(True)  # plain Qt items (SegmentItem) as smooth as pyqtgraph's, which set their own hints
    plot = widget.getPlotItem()
    plot.showGrid(x=True, y=True, alpha=0.15)
    for name in ("bottom", "left", "top", "right"):  # the axes' grid beneath the data, not across it (LogAxis.drawPicture)
        axis = plot.getAxis(name)
        axis.setZValue(-0.5)
        # The grid spans the plot, so every repainted region meets it: drawn once into a pixmap until the axis
        # changes (range, size, font), a repaint copies pixels instead of replaying ~110 lines and their ticks.
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    plot.getViewBox().disableAutoRange()
    return widget



def box_around(x: float, y: float, radius: float) -> Box:
    return (x - radius, y - radius, x + radius, y + radius)


def scene_box(view: pg.ViewBox, item: Any) -> Box:
    """An item's rectangle in the view box's pixels (the legend, a run's "invalid" label)."""
    rect = view.mapRectFromScene(item.sceneBoundingRect())
    return (rect.left(), rect.top(), rect.right(), rect.bottom())


def tight_text(item: pg.TextItem) -> pg.TextItem:
    """A label whose box is its text with one pixel of margin (Qt's default is four): the layout packs boxes."""
    item.textItem.document().setDocumentMargin(1)
    item.updateTextPos()
    return item


def with_font(item: pg.TextItem, font: QFont) -> pg.TextItem:
    item.setFont(font)
    return item


def legend_points(font: QFont) -> int:
    """The point size of a legend's rows beside labels in `font`: a tenth smaller, in whole points, at least 6."""
    return round(max(font.pointSizeF() * 0.9, 6))


def apply_plot_font(plot: pg.PlotItem, font: QFont, texts: Sequence[pg.TextItem]) -> None:
    size = f"{max(font.pointSizeF(), 6):.0f}pt"
    if plot.legend is not None:  # the legend's rows at the labels' size
        rows = f"{legend_points(font)}pt"
        plot.legend.setLabelTextSize(rows)
        for _, label in plot.legend.items:  # setLabelTextSize records the size on each row without redrawing it
            label.setText(label.text, size=rows)
        plot.legend.updateSize()
    for name in ("bottom", "left"):
        axis = plot.getAxis(name)
        axis.setStyle(tickFont=font)
        axis.setLabel(axis.labelText, **{"font-size": size})
    for text in texts:
        text.setFont(font)



def point_in_view(view: pg.ViewBox, x: float, y: float) -> QPointF:
    """Scene position of a data point (tests hover with it)."""
    return view.mapViewToScene(QPointF(x, y))


@functools.cache
def point_pen(colour: str) -> QPen:
    """One pen per colour for plotted points (pyqtgraph's symbol atlas renders each new pen object anew, so a new
    pen per refresh would render every symbol again and grow the atlas)."""
    return pg.mkPen(colour, width=2)


@functools.cache
def point_brush(colour: str) -> QBrush:
    """One brush per colour for plotted points (see point_pen)."""
    return pg.mkBrush(colour)
