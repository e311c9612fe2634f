"""Line-edit frames and scroll bars drawn once per look and blitted after: a keystroke repaints the text, not
the frame's curves or the scroll bar's gradients.

Fusion draws a line edit's panel (its base, the rounded outline, the focus
ring and the inner shadow) with antialiased paths, on every repaint: for the
declaration line with focus that is most of a keystroke's repaint of it
(measured offscreen at 578 × 22 px: 558 µs a repaint framed, 93 µs without a
frame). The panel depends only on its size, the widget's state (focus,
enabled, read-only, active window), the palette and the device pixel ratio,
so `CachedFrameStyle` draws it once per such key into a pixmap (Qt's shared
QPixmapCache) and blits it: the same pixels, at the cost of a copy.

A scroll bar is the same case: Fusion fills its groove and its handle with
gradients, pixel by pixel (measured offscreen, the derivation's 15 × 455 px
bar: about 2 million instructions a repaint, most of a keystroke's repaint
of the panel when the derivation's height changes). Its look follows from
its size, state, range, page step and position, so it too is drawn once per
such key and blitted: a figure that wraps onto another line and back (a
digit typed and taken out, an operation selected and the one before it
again) shows the bar it showed before from the cache.

The style is a QProxyStyle over the application's style, set only on the
widgets repainted on every keystroke (the declaration line and the form's
fields, the derivation's scroll bar); everything else it passes through
unchanged. A widget with a style sheet (an invalid field's red border) is
drawn by the style sheet's rules, as before.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPixmap, QPixmapCache
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOption, QStyleOptionComplex, QStyleOptionFrame, QStyleOptionSlider, QWidget

CACHED = (QStyle.PrimitiveElement.PE_PanelLineEdit,)


class CachedFrameStyle(QProxyStyle):
    """The application's style, with line-edit panels drawn from a pixmap cache."""

    def drawPrimitive(  # noqa: N802 (Qt's name)
        self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        if element not in CACHED or not isinstance(option, QStyleOptionFrame) or option.rect.isEmpty():
            super().drawPrimitive(element, option, painter, widget)
            return
        look = (f"frame-{int(element.value)}-{int(option.state.value)}-{option.palette.cacheKey()}"
                f"-{option.lineWidth}-{option.midLineWidth}-{int(option.features.value)}")
        _blit(look, option, painter, lambda at_origin, cache_painter: super(CachedFrameStyle, self).drawPrimitive(
            element, at_origin, cache_painter, widget))

    def drawComplexControl(  # noqa: N802 (Qt's name)
        self, control: QStyle.ComplexControl, option: QStyleOptionComplex, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        if control != QStyle.ComplexControl.CC_ScrollBar or not isinstance(option, QStyleOptionSlider) or option.rect.isEmpty():
            super().drawComplexControl(control, option, painter, widget)
            return
        look = (f"scrollbar-{int(option.state.value)}-{option.palette.cacheKey()}-{int(option.subControls.value)}"
                f"-{int(option.activeSubControls.value)}-{int(option.orientation.value)}-{option.minimum}-{option.maximum}"
                f"-{option.pageStep}-{option.sliderPosition}-{option.upsideDown}-{int(option.direction.value)}")
        # Opaque: the groove's gradient covers the whole bar, and the outlines then blend over it as they do
        # in the window's (opaque) backing store; over a transparent pixmap they round another way.
        _blit(look, option, painter, lambda at_origin, cache_painter: super(CachedFrameStyle, self).drawComplexControl(
            control, at_origin, cache_painter, widget), under=option.palette.window().color())


def _blit(look: str, option: QStyleOption, painter: QPainter, draw: Callable[[Any, QPainter], None],
          under: QColor | None = None) -> None:
    """Copy the pixmap cached for `look` at the option's size to the option's rectangle, drawing it first if it is
    not cached (`draw` with a copy of the option at the origin, over `under`, or over transparency)."""
    rect = option.rect
    ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
    key = f"workbench-{look}-{rect.width()}x{rect.height()}-{ratio}"
    pixmap = QPixmapCache.find(key)
    if pixmap is None:
        pixmap = QPixmap(round(rect.width() * ratio), round(rect.height() * ratio))
        pixmap.setDevicePixelRatio(ratio)
        # transparent: the rounded corners show what lies behind, as when drawn directly
        pixmap.fill(under if under is not None else Qt.GlobalColor.transparent)
        at_origin = type(option)(option)
        at_origin.rect = QRect(QPoint(0, 0), rect.size())
        cache_painter = QPainter(pixmap)
        draw(at_origin, cache_painter)
        cache_painter.end()
        QPixmapCache.insert(key, pixmap)
    painter.drawPixmap(rect.topLeft(), pixmap)


_shared: CachedFrameStyle | None = None


def cached_frame_style() -> CachedFrameStyle:
    """The one instance the line edits share (a style per widget would keep one cache each)."""
    global _shared
    if _shared is None:
        _shared = CachedFrameStyle()
    return _shared
