"""The roofline's legend drawn: the rows the scene lists (`workbench.scenes.roofline_scene`: the operations and
roofs with labels off or for want of room), set in place when only their texts change, in the corner the scene
chose; and the legend's measures the scene asks for (its box with given rows, a row's text width).

`RooflineLegend` is a part of `RooflineView` (a mixin, gui/roofline_view.py): it fills the plot's one legend
and is called by the label part (gui/roofline_labels.py)."""

from __future__ import annotations

from typing import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from workbench.gui.plain_text import html_text
from workbench.gui.plot_common import POINT_COLOUR, SELECTED_COLOUR, legend_points
from workbench.scenes.legend_corner import MARGIN as LEGEND_MARGIN
from workbench.scenes.roofline_scene import Legend, LegendRow


class RooflineLegend:
    """The legend part of `RooflineView`: its rows, its corner and its measures."""

    def _fill_legend(self, scene_rows: Sequence[LegendRow]) -> pg.LegendItem | None:
        """The legend listing the scene's rows (the roofs' in their roofs' colours, the operations' in red when
        selected, grey otherwise), shown while it lists anything (the measured runs' rows included); the plot's
        legend, or None while it has none."""
        roof_items = self._roof_items() if any(row.kind == "roof" for row in scene_rows) else {}
        rows = [(row.text, roof_items[row.key].color.name() if row.kind == "roof"
                 else SELECTED_COLOUR if row.selected else POINT_COLOUR, row.kind) for row in scene_rows]
        self._set_legend_rows(rows)
        legend = self.plot.legend
        if legend is not None and legend.isVisible() != bool(legend.items):  # an empty legend is a white box
            legend.setVisible(bool(legend.items))  # over the plot's corner (it faded a roof label there)
        return legend

    def _show_legend(self, scene_legend: Legend | None) -> None:
        """The scene's legend drawn: its rows, in its corner (pyqtgraph's offsets: negative ones are measured from
        the right and bottom edges)."""
        legend = self._fill_legend(scene_legend.rows if scene_legend is not None else ())
        if scene_legend is None or legend is None:
            return
        corner = scene_legend.corner
        offset = (-LEGEND_MARGIN[0] if corner.right else LEGEND_MARGIN[0], -LEGEND_MARGIN[1] if corner.bottom else LEGEND_MARGIN[1])
        if tuple(legend.opts["offset"]) != offset:
            legend.setOffset(offset)

    def _set_legend_rows(self, rows: list[tuple[str, str, str]]) -> None:
        """The legend's rows (text, colour, "point" or "roof"), set in place when only their texts changed."""
        if rows == self._legend_rows:
            return
        if self._relabel_legend(rows):
            return
        legend = self.plot.addLegend(offset=LEGEND_MARGIN)  # the plot's one legend, shared with the measured runs
        font = getattr(self, "_plot_font", None)
        if font is not None:  # rows at the labels' size, also in a legend made after the text size was set
            legend.setLabelTextSize(f"{legend_points(font)}pt")
        for sample in self._legend_samples:
            legend.removeItem(sample)
        self._legend_samples = []
        for text, colour, kind in rows:
            if kind == "roof":
                sample = pg.PlotDataItem(pen=pg.mkPen(colour, width=2))
            else:
                sample = pg.ScatterPlotItem(symbol="o", size=10, pen=pg.mkPen(colour, width=2), brush=pg.mkBrush(colour))
            legend.addItem(sample, html_text(text))  # pyqtgraph's legend rows are HTML
            self._legend_samples.append(sample)
        legend.setBrush(pg.mkBrush(255, 255, 255, 220))
        self._legend_rows = rows

    def _legend_text_width(self, text: str) -> float:
        """The advance of `text` in the legend's rows (the labels' font at `_set_legend_rows`' row size)."""
        plot_font = getattr(self, "_plot_font", None)
        font = QFont(plot_font or self.font())
        # the rows' size, as set in _set_legend_rows; pyqtgraph's 9 pt before a text size was set
        font.setPointSizeF(legend_points(plot_font) if plot_font is not None else 9)
        return self._advance(font.key(), text, lambda: font)

    def _advance(self, font_key: str, text: str, font: Callable[[], QFont]) -> float:
        """The advance of `text` in the font `font()` whose key is `font_key`, measured once per font and text."""
        key = (font_key, text)
        width = self._text_widths.get(key)
        if width is None:
            if len(self._text_widths) > 512:
                self._text_widths.clear()
            width = self._text_widths[key] = QFontMetricsF(font()).horizontalAdvance(text)
        return width

    def _relabel_legend(self, rows: list[tuple[str, str, str]]) -> bool:
        """When only the rows' texts changed (an edit moves the selected point: its figures change), set those
        texts in place rather than rebuild every row; False when the legend must be rebuilt."""
        legend = self.plot.legend
        old = self._legend_rows
        if legend is None or len(rows) != len(old) or any(a[1:] != b[1:] for a, b in zip(rows, old)):
            return False
        labels = {id(getattr(sample, "item", sample)): label for sample, label in legend.items}  # ItemSample wraps ours
        if any(id(sample) not in labels for sample in self._legend_samples):
            return False
        changed = False
        for (text, _, _), (old_text, _, _), sample in zip(rows, old, self._legend_samples):
            if text != old_text:
                labels[id(sample)].setText(html_text(text))
                changed = True
        if changed:  # the box grows with a longer text now (pyqtgraph sizes it only when a row is added or removed)
            legend.updateSize()
        self._legend_rows = rows
        return True
