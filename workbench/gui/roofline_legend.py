"""The roofline's legend: the operations and roofs it lists (with labels off, or for want of room), its rows
set in place when only their texts change, and the corner of the view it takes (`workbench.scenes.legend_corner`).

`RooflineLegend` is a part of `RooflineView` (a mixin, gui/roofline_view.py): it fills the plot's one legend
and is called by the label part's layout (gui/roofline_labels.py)."""

from __future__ import annotations

from typing import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from workbench.gui.plain_text import html_text
from workbench.gui.plot_common import POINT_COLOUR, SELECTED_COLOUR, legend_points
from workbench.gui.roofline_records import LEGEND_ROW_EXTRA, LABELS_ALL, LABELS_SELECTED
from workbench.scenes.label_layout import Box
from workbench.scenes.legend_corner import CORNERS, MARGIN as LEGEND_MARGIN, Corner, choose_corner, corner_box, faults, mark_rows
from workbench.model.units import format_flop_rate, format_intensity


class RooflineLegend:
    """The legend part of `RooflineView`: its rows and its corner."""

    def _show_point_legend(self, listed: set[str]) -> None:
        """With labels off, the legend lists the operations not labelled on the plot; and the operations and roofs
        named in `listed` (layout keys: "operation 3", "roof 1", "memory") whose label found no room."""
        rows: list[tuple[str, str, str]] = []  # text, colour, "point" or "roof"
        roof_items = [self.memory_label, *self.level_labels.items[: self.level_labels.used], *self.roof_labels.items[: self.roof_labels.used]]
        keys = ["memory", *(f"memory {level}" for level in self._level_segment_keys), *(f"roof {index}" for index in range(self.roof_labels.used))]
        for key, item in zip(keys, roof_items):
            if key in listed:
                rows.append((self._roof_texts.get(key, (item.toPlainText(),))[0], item.color.name(), "roof"))
        current = self.document.current
        # the widest text a row may have: the legend (its sample, spacing and margins besides) within the view
        room = self.plot.getViewBox().width() - 2 * LEGEND_MARGIN[0] - LEGEND_ROW_EXTRA
        # A large session's legend names the operations that would carry a label (`labelled_points`) and counts
        # the others (hover names them, as does the operations list): a row each would run off the view.
        named = set(self._labelled)
        for index in self._labelled:  # in the points' order
            if index >= len(self._point_rows):
                continue
            row, (x, y), text = self._point_rows[index], self._point_positions[index], self._point_names[index]
            labelled = self._label_mode == LABELS_ALL or (self._label_mode == LABELS_SELECTED and row == current)
            if labelled and f"operation {row}" not in listed:
                continue
            colour = SELECTED_COLOUR if row == current else POINT_COLOUR
            figures = f"{format_intensity(10 ** x)}, {format_flop_rate(10 ** y)}"
            line = f"{text} — {figures}"
            if self._legend_text_width(line) > room:  # two lines rather than a legend wider than the plot
                line = f"{text}\n{figures}"  # a line break in the legend's HTML
            rows.append((line, colour, "point"))
        unnamed = len(self._point_rows) - len(named)
        if unnamed > 0:
            rows.append((f"+{unnamed:,} more operations (hover for names)", POINT_COLOUR, "point"))
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
        """The advance of `text` in the legend's rows (the labels' font at `_show_point_legend`'s row size)."""
        plot_font = getattr(self, "_plot_font", None)
        font = QFont(plot_font or self.font())
        # the rows' size, as set in _show_point_legend; pyqtgraph's 9 pt before a text size was set
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

    def _place_legend(
        self,
        marks: Sequence[Box],
        width: float,
        height: float,
        view_range: tuple[float, float, float, float],
        fresh: bool,
        corner: Corner | None = None,
        near: Callable[[Sequence[Box]], list[Box]] | None = None,
    ) -> Box | None:
        """Put the legend, when shown, in the corner of the view that covers none of `marks` (the points, runs,
        kernels and their labels, in the view's pixels), and return its box there (a mark for the labels).

        The corner is chosen afresh (top left first, then bottom right: `workbench.scenes.legend_corner`) when the
        labels are laid out afresh, the view's size or range, the text size or the legend's rows change; otherwise
        it stays, unless a point moved under it: while one operation is edited the legend does not jump corners
        on each keystroke. The box is worked out from the corner, not read from the item: while the view is being
        resized the legend follows its corner only after this runs (pyqtgraph moves it on the view's
        geometryChanged, which comes after the resize that lays out the labels)."""
        legend = self.plot.legend
        if legend is None or not legend.isVisible() or not legend.items:
            return None
        size = (legend.width(), legend.height())
        if near is not None:  # only the marks some corner's box overlaps count (how many it covers)
            marks = near([corner_box(each, size, width, height) for each in CORNERS])
        marks = mark_rows(marks)  # counted at once for each corner tried
        context = (width, height, view_range, len(legend.items), tuple(row[1:] for row in self._legend_rows),
                   self.point_labels.items[0].font_key() if self.point_labels.items else "")
        if corner is None:
            keep = self._legend_corner if not fresh and context == self._legend_context else None
            corner = choose_corner(size, width, height, marks, keep=keep, keep_covering=self._legend_covering)
            if corner is not keep and self._legend_free is None:
                self._legend_free = faults(corner_box(corner, size, width, height), marks, width, height) == 0
        box = corner_box(corner, size, width, height)
        self._legend_context, self._legend_corner, self._legend_covering = context, corner, faults(box, marks, width, height)
        # pyqtgraph's offsets: negative ones are measured from the right and bottom edges
        offset = (-LEGEND_MARGIN[0] if corner.right else LEGEND_MARGIN[0], -LEGEND_MARGIN[1] if corner.bottom else LEGEND_MARGIN[1])
        if tuple(legend.opts["offset"]) != offset:
            legend.setOffset(offset)
        return box
