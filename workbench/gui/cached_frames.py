"""Line-edit frames drawn once and blitted after: a keystroke repaints the text, not the frame's curves.

Fusion draws a line edit's panel (its base, the rounded outline, the focus
ring and the inner shadow) with antialiased paths, on every repaint: for the
declaration line with focus that is most of a keystroke's repaint of it
(measured offscreen at 578 × 22 px: 558 µs a repaint framed, 93 µs without a
frame). The panel depends only on its size, the widget's state (focus,
enabled, read-only, active window), the palette and the device pixel ratio,
so `CachedFrameStyle` draws it once per such key into a pixmap (Qt's shared
QPixmapCache) and blits it: the same pixels, at the cost of a copy.

The style is a QProxyStyle over the application's style, set only on the
line edits typed into on every keystroke (the declaration line and the
form's fields); everything else it passes through unchanged. A widget with a
style sheet (an invalid field's red border) is drawn by the style sheet's
rules, as before.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QPainter, QPixmap, QPixmapCache
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOption, QStyleOptionFrame, QWidget

CACHED = (QStyle.PrimitiveElement.PE_PanelLineEdit,)


class CachedFrameStyle(QProxyStyle):
    """The application's style, with line-edit panels drawn from a pixmap cache."""

    def drawPrimitive(  # noqa: N802 (Qt's name)
        self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        rect = option.rect
        if element not in CACHED or not isinstance(option, QStyleOptionFrame) or rect.isEmpty():
            super().drawPrimitive(element, option, painter, widget)
            return
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        key = (
            f"workbench-frame-{int(element.value)}-{rect.width()}x{rect.height()}-{int(option.state.value)}"
            f"-{option.palette.cacheKey()}-{option.lineWidth}-{option.midLineWidth}-{int(option.features.value)}-{ratio}"
        )
        pixmap = QPixmapCache.find(key)
        if pixmap is None:
            pixmap = QPixmap(round(rect.width() * ratio), round(rect.height() * ratio))
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent)  # transparent: the rounded corners show what lies behind, as when drawn directly
            at_origin = QStyleOptionFrame(option)
            at_origin.rect = QRect(QPoint(0, 0), rect.size())
            cache_painter = QPainter(pixmap)
            super().drawPrimitive(element, at_origin, cache_painter, widget)
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
