"""The roofline's labels: every mark and roof in the view's pixels, the layout of the roof, operation and
ridge labels (`workbench.scenes.label_layout`) with the legend listing what found no room, and the layout drawn;
which operations are labelled (View ▸ Labels) and pinned.

`RooflineLabels` is a part of `RooflineView` (a mixin, gui/roofline_view.py): it places the label items the
view's `__init__` creates; the legend is `RooflineLegend`'s (gui/roofline_legend.py)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from workbench.gui.plot_common import box_around, PlotLabel, scene_box
from workbench.gui.roofline_records import (
    OPERATION_RADIUS,
    KERNEL_RADIUS,
    MEASURED_RADIUS,
    RIDGE_RADIUS,
    LABELS_ALL,
    LABELS_SELECTED,
    LABEL_MODES,
    PlacedLabels,
    _Laid,
    Position,
)
from workbench.scenes.label_layout import (
    Box,
    MarkGrid,
    PixelView,
    Placement,
    PointLabel,
    PointMarks,
    RoofLabel,
    ridge_at_foot,
    ridge_up_the_line,
    Segment,
    boxes_overlap,
    held_layout,
    layout_labels,
    leader_segment,
    nearest_on_box,
)
from workbench.scenes.legend_corner import Corner, Trial, try_corners
from workbench.scenes.legend_corner import list_unplaced as place_in_legend
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
        """Lay out the labels in the view's pixels so none covers a point, a roof or another label.

        The geometry is `workbench.scenes.label_layout`'s: every mark on the plot
        (operations, measured runs and their bars, profiled kernels, the ridge
        point) and the legend are marks to keep uncovered; the memory roof, the
        compute roofs and their datasheet ghosts are roofs no label may cross.
        Roof labels lie along their roof; operation labels take the nearest free
        place around their point, or further off with a leader line. Which
        operations are labelled follows View ▸ Labels. The view in use (fitted
        or held) is read from the view box, so a zoom or pan re-places them too.

        When only points moved (an edit; same view, roofs, labels and font), labels whose points stayed keep
        their places, and `TIDY_AFTER_MS` after the last such layout (or with `fresh`) they are laid out afresh.

        Operations and roofs whose label found no room (near its roof, for a roof) join the legend; the legend is
        itself a mark, so the labels are laid out again (`legend_corner.list_unplaced`). While only points move,
        those listed stay listed: the legend does not flicker (nor get rebuilt) on every keystroke.
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
        context = (view.width, view.height, self._label_mode, tuple(self._point_rows), self.roof_labels.used,
                   self.point_labels.items[0].font_key() if self.point_labels.items else "")
        start = self._listed if context == self._listed_context else set()
        self._legend_free = None
        laid, listed, before, left_out = self._list_unplaced(view, fresh, start)
        if self._legend_free and before is not None and self._legend_corner is not None and (listed != before or left_out):
            # The corner was chosen afresh and labels lost their room to the legend there (each is listed in it, so
            # it grows): try the others too, and keep the one that covers no mark and takes the fewest labels' room.
            found = {}

            def trial_in(corner: Corner) -> Trial:
                found[corner] = self._list_unplaced(view, fresh, set(before), corner)
                _, kept, _, out = found[corner]
                return Trial(corner, self._legend_covering, len(kept - before), out)

            trials, best = try_corners(Trial(self._legend_corner, self._legend_covering, len(listed - before), left_out),
                                       trial_in)
            laid, listed = found[trials[-1].corner][:2]
            if best != trials[-1]:
                laid, listed, _, _ = self._list_unplaced(view, fresh, set(before), best.corner)
        self._ridge_up(view, laid)
        self._listed, self._listed_context = listed, context
        self.label_layout = PlacedLabels(laid.layout, view.width, view.height, tuple(laid.roofs), tuple(laid.marks),
                                         tuple(laid.roof_labels), tuple(laid.point_labels))
        self._draw_labels(view, laid)

    def _list_unplaced(
        self, view: PixelView, fresh: bool, listed: set[str], corner: Corner | None = None
    ) -> tuple["_Laid", set[str], set[str] | None, int]:
        """Lay out, listing each label that finds no room while the legend covers no more marks for it
        (`legend_corner.list_unplaced`; the legend in `corner`, or where `_place_legend` puts it); also what was
        listed when the legend first showed (None: it never did) and how many labels were left out."""
        before: set[str] | None = None
        laid: _Laid | None = None

        def list_in_legend(keys: frozenset[str]) -> bool:
            """The legend listing `keys`; whether it shows (it lists anything)."""
            nonlocal before
            self._show_point_legend(set(keys))
            legend = self.plot.legend
            if legend is not None and legend.isVisible() != bool(legend.items):  # an empty legend is a white box
                legend.setVisible(bool(legend.items))  # over the plot's corner (it faded a roof label there)
            if before is None and legend is not None and legend.items:
                before = set(keys)
            return legend is not None and bool(legend.items)

        def shown(keys: frozenset[str]) -> tuple[frozenset[str], int]:
            nonlocal laid
            listing = list_in_legend(keys)
            laid = self._lay_out(view, fresh, corner)
            return frozenset(laid.layout.unplaced), self._legend_covering if listing else 0

        def covers(keys: frozenset[str]) -> int:
            """What shown(keys) answers second, without laying the labels out: the legend's faults alone."""
            if not list_in_legend(keys):
                return 0
            self._layout_marks(view, fresh, corner)
            return self._legend_covering

        rounds = len(self._point_rows) + self.roof_labels.used + 2
        # a roof's name before an operation's (whose point names it on hover): "memory…", "roof…" first
        kept, left_out = place_in_legend(frozenset(listed), shown, rounds, first=lambda key: key.startswith("operation"),
                                         covers=covers)
        assert laid is not None
        return laid, set(kept), before, len(left_out)

    def _lay_out(self, view: PixelView, fresh: bool, corner: Corner | None) -> "_Laid":
        """One layout of every label with the legend as it is listed now (in `corner`, or where `_place_legend` puts
        it), the labels held where they were while one point moves (`label_layout.held_layout`)."""
        marks, near, as_array = self._layout_marks(view, fresh, corner)
        roofs: list[Segment] = [view.segment(segment) for segment in [*self._roof_segments, *self._lowered_segments]]
        for text in self.lowered_labels.items[: self.lowered_labels.used]:
            marks.append(scene_box(self.plot.getViewBox(), text))
        # the ridge label: at the foot of the ridge line, either side (where the foot is taken, as by a legend in a
        # bottom corner, it goes up the line once the other labels are placed: `_ridge_up`)
        ridge_box: Box | None = None
        if self._ridge is not None and view.x_low < self._ridge[0] < view.x_high:
            ridge_box = ridge_at_foot(*self._ridge_sides(view), view.height - 2, view.width, view.height, near, roofs)
        self._put(self.ridge_label, ridge_box, view)
        if ridge_box is not None:
            marks.append(ridge_box)
        roof_labels, roof_items = self._roof_label_inputs(view)
        point_labels, point_items = self._point_label_inputs(view)
        context = (view, tuple(roofs), tuple(label.key for label in roof_labels), self._label_mode,
                   self.point_labels.items[0].font_key() if self.point_labels.items else "")
        placed = self.label_layout
        held = held_layout(placed.layout if placed is not None else None, placed.point_labels if placed is not None else (),
                           point_labels, not fresh and context == self._layout_context)
        layout = layout_labels(view.width, view.height, roofs, marks, roof_labels, point_labels, keep=held,
                               marks_array=as_array())
        self._layout_context = context
        if held is not None:
            self._tidy_timer.start()  # (again): afresh once the edits pause
        return _Laid(layout, roofs, marks, roof_labels, point_labels, roof_items, point_items, near)

    def _layout_marks(
        self, view: PixelView, fresh: bool, corner: Corner | None
    ) -> tuple[list[Box], Callable[[Sequence[Box]], list[Box]], Callable[[], np.ndarray]]:
        """Every mark the labels keep clear of, in the view's pixels, with the legend put in its corner (a mark too);
        `near(boxes)`: the marks that overlap any of `boxes` (the points' found by NumPy, the kernels' and runs' by
        their grid's cells, the rest, few, one by one), what a box among them covers of the marks; and
        `as_array()`: the marks as rows, joined from the arrays the points and the grid keep (not made afresh from
        thousands of boxes on every keystroke)."""
        # the points, then their points at further levels apart from them (a level point on top of its operation's
        # point, as every level carrying the same bytes puts it, is kept clear already), then the kernels' and runs'
        point_marks = self._operation_marks(view.key())
        others = self._other_marks(view.key(), view.width, view.height)
        marks = point_marks.boxes()
        points, apart = len(self._point_positions), len(marks)
        marks += others.boxes

        def as_array() -> np.ndarray:
            rest = np.array(marks[apart + len(others):], dtype=float).reshape(-1, 4)
            return np.vstack((point_marks.array(), others.array, rest))

        def near(boxes: Sequence[Box]) -> list[Box]:
            rest = [*marks[points:apart], *marks[apart + len(others):]]
            return point_marks.overlapping_points(boxes) + [others.boxes[i] for i in others.overlapping(boxes)] + [
                mark for mark in rest if any(boxes_overlap(box, mark) for box in boxes)]

        for items in self.measured.label_items():
            for text in items.labels:
                if text.isVisible():
                    marks.append(scene_box(self.plot.getViewBox(), text))
        if self._ridge is not None:
            marks.append(box_around(view.px(self._ridge[0]), view.py(self._ridge[1]), RIDGE_RADIUS))
        view_range = (view.x_low, view.x_high, view.y_low, view.y_high)
        legend_box = self._place_legend(marks, view.width, view.height, view_range, fresh, corner, near)
        if legend_box is not None:
            marks.append(legend_box)
        return marks, near, as_array

    def _roof_label_inputs(self, view: PixelView) -> tuple[list[RoofLabel], list[pg.TextItem]]:
        """The roof labels to lay out (their sizes, full and short, and their roofs in pixels) and their items."""
        labels: list[RoofLabel] = []
        items: list[pg.TextItem] = []
        if self._memory_segment is not None:
            w, h, short_w = self._roof_size("memory", self.memory_label)
            labels.append(RoofLabel("memory", w, h, view.segment(self._memory_segment), from_left=True, short_width=short_w))
            items.append(self.memory_label)
        level_labels = self.level_labels.items[: self.level_labels.used]
        for label, segment, level in zip(level_labels, self._level_segments, self._level_segment_keys):
            w, h, short_w = self._roof_size(f"memory {level}", label)
            labels.append(RoofLabel(f"memory {level}", w, h, view.segment(segment), from_left=True, short_width=short_w))
            items.append(label)
        roof_texts = self.roof_labels.items[: self.roof_labels.used]
        for index, (label, y, start) in enumerate(zip(roof_texts, self._roof_heights, self._roof_starts)):
            w, h, short_w = self._roof_size(f"roof {index}", label)
            roof = (view.px(start), view.py(y), view.px(view.x_high) + 1e4, view.py(y))
            labels.append(RoofLabel(f"roof {index}", w, h, roof, short_width=short_w))
            items.append(label)
        return labels, items

    def _point_label_inputs(self, view: PixelView) -> tuple[list[PointLabel], list[pg.TextItem]]:
        """The labelled operations' labels to lay out (by View ▸ Labels) and their items; the others' are hidden."""
        labels: list[PointLabel] = []
        items: list[pg.TextItem] = []
        texts = self.point_labels.items[: self.point_labels.used]
        chosen = [(self._point_rows[index], self._point_positions[index]) for index in self._labelled]
        for label, (row, (x, y)) in zip(texts, chosen):
            if self._label_mode == LABELS_ALL or (self._label_mode == LABELS_SELECTED and row == self.document.current):
                w, h = label.pixel_size()
                labels.append(PointLabel(f"operation {row}", w, h, view.px(x), view.py(y)))
                items.append(label)
            else:
                label.setVisible(False)
        # The selected operation's label takes its place first: on a crowded plot the others may find none left.
        selected = f"operation {self.document.current}"
        at = next((index for index, label in enumerate(labels) if label.key == selected), 0)
        if at:
            labels.insert(0, labels.pop(at))
            items.insert(0, items.pop(at))
        return labels, items

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

    def _ridge_sides(self, view: PixelView) -> tuple[tuple[float, float], list[float]]:
        """The ridge label's size, and the left edges of its places beside the ridge line (right, else left)."""
        assert self._ridge is not None
        w, h = self.ridge_label.pixel_size()
        left = view.px(self._ridge[0]) + 3
        return (w, h), [left, left - w - 6]

    def _ridge_up(self, view: PixelView, laid: "_Laid") -> None:
        """The ridge label whose foot was taken goes up its line, clear of every mark, label and leader (it is placed
        last, after the operations' and roofs' labels: `label_layout.ridge_up_the_line`), or not at all."""
        if self._ridge is None or not view.x_low < self._ridge[0] < view.x_high or self.ridge_label.isVisible():
            return
        placements = laid.layout.placements
        labels = [placement.box for placement in placements if placement.box is not None]
        lines = laid.roofs + [leader for leader in map(leader_segment, placements) if leader is not None]

        def covering(box: Box) -> list[Box]:
            return laid.near([box]) + [label for label in labels if boxes_overlap(box, label)]

        box = ridge_up_the_line(*self._ridge_sides(view), view.width, view.height, covering, lines)
        if box is not None:
            self._put(self.ridge_label, box, view)
            laid.marks.append(box)  # a mark of the layout the view keeps (its checks see the label)

    def _draw_labels(self, view: PixelView, laid: "_Laid") -> None:
        """The layout drawn: each roof label in its place with its full or short text (on its roof with a white
        ground), each operation label in its place, and the leaders."""
        placements = iter(laid.layout.placements)
        for item, label in zip(laid.roof_items, laid.roof_labels):
            placement = next(placements)
            texts = self._roof_texts.get(label.key)
            if texts is not None:
                item.setText(texts[1] if placement.short else texts[0])  # no work when the text is the same
            self._put(item, placement.box, view)
            _write_on_roof(item, placement)
        for item in laid.point_items:
            self._put(item, next(placements).box, view)
        leaders = [p for p in laid.layout.placements if p.box is not None and p.leader_to is not None]
        for line, placement in zip(self.leader_lines.take(len(leaders)), leaders):
            assert placement.box is not None and placement.leader_to is not None
            drawn = (placement.box, placement.leader_to, view.key())
            if getattr(line, "_drawn_for", None) == drawn:  # most leaders stay as they were (held labels)
                continue
            line._drawn_for = drawn
            (ax, ay), (bx, by) = view.at(*placement.leader_to), view.at(*nearest_on_box(placement.box, *placement.leader_to))
            line.setData([ax, bx], [ay, by])

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
        if mode != self._label_mode:
            self._label_mode = mode
            self._place_labels()

    @property
    def label_mode(self) -> str:
        return self._label_mode

    def _text_width(self, label: pg.TextItem, text: str) -> float:
        """The advance of `text` in the label's font, measured once per font and text (a layout asks often)."""
        font_key = label.font_key() if isinstance(label, PlotLabel) else label.textItem.font().key()
        return self._advance(font_key, text, label.textItem.font)


def _write_on_roof(item: PlotLabel, placement: Placement) -> None:
    """A roof label placed on its own roof gets a white ground that breaks the line under the text."""
    on_roof = placement.box is not None and placement.on_roof is not None
    if on_roof != (item.fill.style() != Qt.BrushStyle.NoBrush):
        item.set_ground(pg.mkBrush(255, 255, 255, 235) if on_roof else pg.mkBrush(None))
