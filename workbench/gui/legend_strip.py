"""A plot's legend as a strip of line samples and names beside the plot, wrapping at its width.

Inside the plotted area a legend must find a corner free of what it explains; the bound-versus-size curves
run corner to corner, so at a projector's height every corner covered them. A strip outside the plot covers
nothing: it wraps into as many rows as its width needs and the plot keeps the rest.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from workbench.gui.flow_layout import FlowLayout
from workbench.gui.plain_text import plain


def sample_style(item: Any) -> tuple[Any, ...]:
    """What a legend sample of a plotted item shows: a scatter's symbol, size, pen and brush, or a line's pen."""
    opts = item.opts
    if isinstance(item, pg.ScatterPlotItem):
        return ("symbol", opts["symbol"], opts["size"], pg.mkPen(opts["pen"]), pg.mkBrush(opts["brush"]))
    return ("line", pg.mkPen(opts["pen"]))


class _Entry(QWidget):
    """One row of the legend: a sample of the item (its line, or its symbol), then its name as plain text."""

    def __init__(self, style: tuple[Any, ...], text: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.style = style
        self.sample = QLabel()
        self.label = plain(QLabel(text))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 8, 0)
        layout.setSpacing(4)
        layout.addWidget(self.sample)
        layout.addWidget(self.label)
        self.draw_sample()

    def draw_sample(self) -> None:
        """The line or symbol in a box as tall as a line of the label's text and about two and a half as wide."""
        height = QFontMetrics(self.label.font()).height()
        width = round(2.5 * height)
        ratio = self.devicePixelRatioF()
        pixmap = QPixmap(round(width * ratio), round(height * ratio))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.style[0] == "symbol":
            _, symbol, size, pen, brush = self.style
            painter.translate(width / 2, height / 2)
            drawSymbol(painter, symbol, min(size * 1.4, height * 0.8), pen, brush)
        else:
            pen = QPen(self.style[1])
            pen.setCosmetic(True)
            pen.setWidthF(min(pen.widthF(), height / 3))  # a broad line reads as a band, not a block
            painter.setPen(pen)
            painter.drawLine(QPointF(2, height / 2), QPointF(width - 2, height / 2))
        painter.end()
        self.sample.setPixmap(pixmap)
        self.sample.setFixedSize(width, height)


class LegendStrip(QWidget):
    """Named line samples in rows that wrap at the strip's width; each entry has a key so it is set in place."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = FlowLayout(self, spacing=2)
        self._entries: dict[str, _Entry] = {}

    def set_entry(self, key: str, item: Any, text: str) -> None:
        """Show `text` beside a sample of the plotted `item`; an entry of the same key keeps its place and takes
        the new text. An empty text removes the entry."""
        if not text:
            self.remove_entry(key)
            return
        style = sample_style(item)
        entry = self._entries.get(key)
        if entry is None:
            entry = _Entry(style, text, self)
            entry.label.setFont(self.font())
            entry.draw_sample()
            self._entries[key] = entry
            self._layout.addWidget(entry)
            return
        if entry.label.text() != text or entry.style != style:
            entry.label.setText(text)
            entry.style = style
            entry.draw_sample()

    def remove_entry(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._layout.removeWidget(entry)
            entry.deleteLater()

    def texts(self) -> list[str]:
        """The names shown, in their order."""
        return [entry.label.text() for entry in self._entries.values()]

    def set_text_font(self, font: QFont) -> None:
        """The rows' text size (presentation, Ctrl++): every entry's name and sample follow it."""
        self.setFont(font)
        for entry in self._entries.values():
            entry.label.setFont(font)
            entry.draw_sample()
        self._layout.invalidate()
