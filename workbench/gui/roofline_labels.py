"""The roofline's labels drawn: every mark and roof handed, in the view's pixels, to the scene
(`workbench.scenes.roofline_scene`), which decides where the roof, operation and ridge labels go and what the
legend lists and where; the scene drawn into the label items; which operations are labelled (View ▸ Labels) and
pinned.

`RooflineLabels` is a part of `RooflineView` (a mixin, gui/roofline_view.py): it places the label items the
view's `__init__` creates; the legend is `RooflineLegend`'s (gui/roofline_legend.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from workbench.gui.plot_common import box_around, PlotLabel, scene_box
from workbench.gui.roofline_records import PlacedLabels, Position, _Drawn
from workbench.scenes.legend_corner import Corner
from workbench.scenes.roofline_state import LABEL_MODES
from workbench.scenes.label_layout import Box, MarkGrid, PixelView, PointMarks, nearest_on_box
from workbench.scenes.roofline_scene import KERNEL_RADIUS, MEASURED_RADIUS, OPERATION_RADIUS, LegendRow, Operations, RoofText, RooflineInputs, RooflineScene, roofline_scene
from workbench.documents.session import OperationEntry


class RooflineLabels:
    """The label part of `RooflineView`: laying out the labels and drawing the layout."""

    def _operation_marks(self, view: tuple[float, float, float, float]) -> PointMarks:
        """The operations' marks in the view's pixels (`label_layout.PointMarks`): kept while the view and the
        operations drawn stay, with the points an edit moved (`_marks_moved`) worked out again."""
        kept, moved = self._marks_kept, self._marks_moved
        self._marks_moved = []
        if kept is not None and kept[0] is self._point_positions and kept[1] is self._level_marks and kept[2].view == view:
            for index, first, count in moved:
                kept[2].move(index, self._point_positions[index], first, self._level_marks[first: first + count])
            return kept[2]
        marks = PointMarks(view, self._point_positions, self._level_marks, OPERATION_RADIUS)
        self._marks_kept = (self._point_positions, self._level_marks, marks)
        return marks

    _marks_kept: tuple[list[Position], list[Position], PointMarks] | None = None

    def _other_marks(self, view: tuple[float, float, float, float], width: float, height: float) -> MarkGrid:
        """The imported kernels' marks (and their stars at further levels) and the measured runs' (each run's mark and
        spread bar) in the view's pixels, indexed by grid cell (`label_layout.MarkGrid`): made again only when the
        view or those marks change (an edit of an operation moves neither)."""
        kernels, levels, runs = self.kernels.marks, self._kernel_level_marks, self.measured.marks
        key = (view, width, height, len(kernels), len(levels), len(runs))
        kept = self._others_kept
        if kept is not None and kept[0] == key and kept[1] is kernels and kept[2] is levels and kept[3] is runs:
            return kept[4]
        x_low, y_high, per_x, per_y = view

        def px(x: float) -> float:
            return (x - x_low) * per_x

        def py(y: float) -> float:
            return (y_high - y) * per_y

        boxes = [box_around(px(kernel.x), py(kernel.y), KERNEL_RADIUS) for kernel in kernels]
        boxes += [box_around(px(x), py(y), KERNEL_RADIUS) for x, y in levels]
        for run in runs:
            cx = px(run.x)
            boxes.append(box_around(cx, py(run.y), MEASURED_RADIUS))
            boxes.append((cx - 2.0, py(run.high), cx + 2.0, py(run.low)))  # the spread bar
        grid = MarkGrid(boxes, width, height)
        self._others_kept = (key, kernels, levels, runs, grid)
        return grid

    _others_kept: tuple[Any, ...] | None = None
    _marks_moved: list[tuple[int, int, int]] = []  # (operation, its first level point, how many) moved since

    def _place_labels(self, *_: object, fresh: bool = False) -> None:
        """Lay out the labels in the view's pixels so none covers a point, a roof or another label: the scene
        (`workbench.scenes.roofline_scene`) decides, from what the plot shows now, where every label, the ridge
        label and the legend go and what the legend lists; this draws it. The view in use (fitted or held) is
        read from the view box, so a zoom or pan re-places them too.

        When only points moved (an edit; same view, roofs, labels and font), labels whose points stayed keep
        their places, and `TIDY_AFTER_MS` after the last such layout (or with `fresh`) they are laid out afresh.
        """
        if self._range is None or self._refreshing:
            return
        fresh = fresh or bool(self._labels_due)
        self._labels_due = None
        if fresh:
            self._tidy_timer.stop()  # laid out afresh now: a tidy-up asked for before has nothing left to do
        box = self.plot.getViewBox()
        (x_low, x_high), (y_low, y_high) = box.viewRange()
        view = PixelView(x_low, x_high, y_low, y_high, box.width(), box.height())
        if not view.usable:
            return
        font_key = self.point_labels.items[0].font_key() if self.point_labels.items else ""
        if self._held:
            self.state = replace(self.state, fixed_range=(x_low, x_high, y_low, y_high), font_key=font_key)
        elif self.state.font_key != font_key:
            self.state = replace(self.state, font_key=font_key)
        scene = roofline_scene(self._scene_inputs(view), self.state, _Measure(self), self.scene, fresh)
        self.scene = scene
        self.label_layout = PlacedLabels(scene.layout, view.width, view.height, scene.lines, scene.marks,
                                         scene.roof_labels, scene.point_labels)
        self._draw_scene(view, scene)
        if scene.held:
            self._tidy_timer.start()  # (again): afresh once the edits pause

    def _scene_inputs(self, view: PixelView) -> RooflineInputs:
        """What the plot shows now, for the scene: the roofs with labels and every roof line, the operations drawn,
        the ridge, and the marks in the view's pixels (the operations' and the others' kept between layouts)."""
        drawn = self._drawn
        if drawn is None:  # no roofline (no device or bandwidth): nothing to label
            operations = Operations([], [], [], [], np.zeros(0), self.document.current)
        else:
            operations = replace(self._operations_drawn(drawn), chosen=self._labelled)
        roofs: list[RoofText] = []
        if self._memory_segment is not None:
            roofs.append(RoofText("memory", self._memory_segment, *self._roof_texts["memory"], memory=True))
        for segment, level in zip(self._level_segments, self._level_segment_keys):
            roofs.append(RoofText(f"memory {level}", segment, *self._roof_texts[f"memory {level}"], memory=True))
        for index, (y, start) in enumerate(zip(self._roof_heights, self._roof_starts)):
            if index < self.roof_labels.used:
                roofs.append(RoofText(f"roof {index}", (start, y, start, y), *self._roof_texts[f"roof {index}"]))
        viewbox = self.plot.getViewBox()
        run_labels = [scene_box(viewbox, text) for items in self.measured.label_items() for text in items.labels
                      if text.isVisible()]
        lowered = [scene_box(viewbox, text) for text in self.lowered_labels.items[: self.lowered_labels.used]]
        return RooflineInputs(
            view, roofs, [*self._roof_segments, *self._lowered_segments], operations,
            point_marks=self._operation_marks(view.key()), other_marks=self._other_marks(view.key(), view.width, view.height),
            run_label_marks=run_labels, lowered_label_marks=lowered, ridge=self._ridge, ridge_text=self._ridge_text,
        )

    def _operations_drawn(self, drawn: _Drawn) -> Operations:
        """The operations drawn, as the scene reads them."""
        return Operations(self._point_rows, self._point_positions, self._point_names, _StaleColumn(drawn), drawn.times,
                          self.document.current, drawn.pin_indices)

    def _roof_items(self) -> dict[str, PlotLabel]:
        """Each roof label's item by its layout key."""
        items: dict[str, PlotLabel] = {"memory": self.memory_label}
        for label, level in zip(self.level_labels.items[: self.level_labels.used], self._level_segment_keys):
            items[f"memory {level}"] = label
        for index, label in enumerate(self.roof_labels.items[: self.roof_labels.used]):
            items[f"roof {index}"] = label
        return items

    def _draw_scene(self, view: PixelView, scene: RooflineScene) -> None:
        """The scene drawn: each roof label in its place with its full or short text (on its roof with a white
        ground), each operation label in its place (the others hidden), the leaders, the ridge label and the
        legend in its corner."""
        self._put(self.ridge_label, scene.ridge.box if scene.ridge is not None else None, view)
        roof_items = self._roof_items()
        by_key = {label.key: label for label in scene.labels}
        for key, item in roof_items.items():
            label = by_key.get(key)
            if label is None:
                continue
            if item.plain_text() != label.text:
                item.setText(label.text)
            self._put(item, label.box, view)
            _write_on_roof(item, label.on_roof)
        for index, item in zip(self._labelled, self.point_labels.items[: self.point_labels.used]):
            label = by_key.get(f"operation {self._point_rows[index]}") if index < len(self._point_rows) else None
            self._put(item, label.box if label is not None else None, view)
        leaders = [label for label in scene.labels if label.box is not None and label.leader_to is not None]
        for line, label in zip(self.leader_lines.take(len(leaders)), leaders):
            assert label.box is not None and label.leader_to is not None
            drawn = (label.box, label.leader_to, view.key())
            if getattr(line, "_drawn_for", None) == drawn:  # most leaders stay as they were (held labels)
                continue
            line._drawn_for = drawn
            (ax, ay), (bx, by) = view.at(*label.leader_to), view.at(*nearest_on_box(label.box, *label.leader_to))
            line.setData([ax, bx], [ay, by])
        self._show_legend(scene.legend)

    def _put(self, label: pg.TextItem, box: Box | None, view: PixelView) -> None:
        """Show `label` with its top left at the box's (hidden for None). Most labels stay where they were (held
        while a point moves): the same box in the same view is the same place, and nothing but this moves a label."""
        if label.isVisible() != (box is not None):
            label.setVisible(box is not None)
        if box is None:
            return
        placed = (box, view.key())
        if getattr(label, "_placed_at", None) == placed:
            return
        label._placed_at = placed
        if tuple(label.anchor) != (0.0, 0.0):
            label.setAnchor((0, 0))
        at = view.at(box[0], box[1])
        if (label.pos().x(), label.pos().y()) != at:
            label.setPos(*at)

    def _roof_size(self, key: str, label: PlotLabel) -> tuple[float, float, float | None]:
        """The label's width with its full text and with its short one, and its height (from font metrics: the
        label may show either text now); worked out again only when a text, the font or the box changed."""
        shown = label.plain_text()
        full, short = self._roof_texts.get(key, (shown, shown))
        asked = (full, short, shown, label.font_key(), label.pixel_size())
        kept = getattr(label, "_roof_size_for", None)
        if kept is not None and kept[0] == asked:
            return kept[1]
        w, h = asked[4]
        margin = w - self._text_width(label, shown)
        full_width = margin + self._text_width(label, full)
        short_width = margin + self._text_width(label, short) if short != full else None
        label._roof_size_for = (asked, (full_width, h, short_width))
        return full_width, h, short_width

    def set_pinned(self, entry: OperationEntry | None, pinned: bool) -> None:
        """View ▸ Labels ▸ Pin: the operation keeps its label however many operations the session has."""
        if entry is None or pinned == self.is_pinned(entry):
            return
        if pinned:
            self.pinned.append(entry)
        else:
            self.pinned = [other for other in self.pinned if other is not entry]
        self.mark_dirty()

    def is_pinned(self, entry: OperationEntry | None) -> bool:
        return any(other is entry for other in self.pinned)

    def set_label_mode(self, mode: str) -> None:
        """Which operations are labelled: LABELS_ALL, LABELS_SELECTED or LABELS_NONE (then the legend lists them)."""
        if mode not in LABEL_MODES:
            raise ValueError(f"unknown label mode {mode!r}")
        if mode != self.state.label_mode:
            self.state = replace(self.state, label_mode=mode)
            self._place_labels()

    @property
    def label_mode(self) -> str:
        return self.state.label_mode

    def set_legend_corner(self, corner: Corner | None) -> None:
        """The corner the legend must take, or None to let the scene choose the first that covers no mark."""
        if corner != self.state.legend_corner:
            self.state = replace(self.state, legend_corner=corner)
            self._place_labels(fresh=True)

    def _text_width(self, label: pg.TextItem, text: str) -> float:
        """The advance of `text` in the label's font, measured once per font and text (a layout asks often)."""
        font_key = label.font_key() if isinstance(label, PlotLabel) else label.textItem.font().key()
        return self._advance(font_key, text, label.textItem.font)


def _write_on_roof(item: PlotLabel, on_roof: bool) -> None:
    """A roof label placed on its own roof gets a white ground that breaks the line under the text."""
    if on_roof != (item.fill.style() != Qt.BrushStyle.NoBrush):
        item.set_ground(pg.mkBrush(255, 255, 255, 235) if on_roof else pg.mkBrush(None))


class _StaleColumn(Sequence[bool]):
    """Whether each operation drawn is stale, read from what the refresh drew (not copied on every layout)."""

    def __init__(self, drawn: _Drawn) -> None:
        self.placed = drawn.placed

    def __len__(self) -> int:
        return len(self.placed)

    def __getitem__(self, index: int) -> bool:  # type: ignore[override]
        return self.placed[index][2]


class _Measure:
    """The scene's text measures in the view's fonts (`roofline_scene.Measure`): a label's box as its item has it,
    a roof label's from its item's margin and the advance of each text, and the legend's box as pyqtgraph lays it
    out with the rows filled in."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self.items: dict[str, PlotLabel] | None = None
        self.roof_items: dict[str, PlotLabel] | None = None

    def label(self, text: str) -> tuple[float, float]:
        view = self.view
        if text == view._ridge_text and view._ridge is not None:
            return view.ridge_label.pixel_size()
        if self.items is None:
            self.items = {item.plain_text(): item for item in view.point_labels.items[: view.point_labels.used]}
        item = self.items.get(text)
        if item is None:  # not among the labelled operations' items: measured on a spare one
            item = self.items[text] = view.point_labels.make()
            item.setText(text)
        return item.pixel_size()

    def roof_label(self, key: str, full: str, short: str) -> tuple[float, float, float | None]:
        if self.roof_items is None:
            self.roof_items = self.view._roof_items()
        return self.view._roof_size(key, self.roof_items[key])

    def legend_text(self, text: str) -> float:
        return self.view._legend_text_width(text)

    def legend(self, rows: Sequence[LegendRow]) -> tuple[float, float, int] | None:
        legend = self.view._fill_legend(rows)
        if legend is None or not legend.items:
            return None
        return legend.width(), legend.height(), len(legend.items)
