"""The roofline's labels, ridge label and legend as data: `roofline_scene(inputs, state, measure)` decides them, the
window's view draws what it returns, and tests read it without Qt.

Decided here, in the plot's pixels (`label_layout.PixelView`):

- which operations carry a label: the selected one, the pinned ones and the largest by share of the session's
  time (`label_layout.labelled_points`), and of those the ones the label mode shows;
- where every label goes (`label_layout.layout_labels`): the roofs' labels along their roofs, the operations'
  near their points (the selected one laid out first) or further off with a leader;
- the ridge label: at the foot of the ridge line, else up the line once the other labels are placed;
- the legend: the operations not labelled on the plot (with labels off), the labels that found no room
  (`legend_corner.list_unplaced`), a "+N more operations" line for the operations no label is chosen for, and
  the corner it takes (`legend_corner.choose_corner`; when labels lose their room to it there, every corner is
  tried and the best kept: `legend_corner.try_corners`).

Text is measured by the caller (`Measure`): the window measures with Qt's fonts, tests with a fixed advance per
character. A scene keeps what the next one needs to hold labels and the legend's corner still while one point
moves (typing): pass it back as `previous`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

import numpy as np

from workbench.scenes.label_layout import (
    Box,
    LabelLayout,
    MarkGrid,
    PixelView,
    PointLabel,
    PointMarks,
    RoofLabel,
    Segment,
    boxes_overlap,
    held_layout,
    labelled_points,
    layout_labels,
    leader_segment,
    ridge_at_foot,
    ridge_up_the_line,
)
from workbench.scenes.legend_corner import (
    CORNERS,
    MARGIN as LEGEND_MARGIN,
    Corner,
    Trial,
    choose_corner,
    corner_box,
    faults,
    list_unplaced,
    mark_rows,
    try_corners,
)
from workbench.scenes.roofline_state import RooflineViewState
from workbench.model.units import format_flop_rate, format_intensity

Position = tuple[float, float]  # (log intensity, log rate)
OPERATION_RADIUS = 8.0  # pixel radius of an operation's mark that labels keep clear of (half its size and air)
RIDGE_RADIUS = 6.5  # and of the ridge point's
KERNEL_RADIUS = 10.0  # and of an imported kernel's star
MEASURED_RADIUS = 7.5  # and of a measured run's mark
LEGEND_ROW_EXTRA = 40.0  # pixels of a legend row besides its text: the sample, the spacing and the frame's air


class Measure(Protocol):
    """What the scene asks of the fonts the plot is drawn in (pixels)."""

    def label(self, text: str) -> tuple[float, float]:
        """An operation's or the ridge's label box for `text`: width, height."""

    def roof_label(self, key: str, full: str, short: str) -> tuple[float, float, float | None]:
        """The box of roof `key`'s label with its full text (width, height) and its short text's width (None when
        the short text is the full one)."""

    def legend_text(self, text: str) -> float:
        """The advance of `text` in a legend row."""

    def legend(self, rows: Sequence["LegendRow"]) -> tuple[float, float, int] | None:
        """The legend's box listing `rows` (with whatever else the plot's legend lists: measured runs): width,
        height and how many rows in all; None when it lists nothing (it is not shown)."""


@dataclass(frozen=True)
class RoofText:
    """A roof whose label the scene places: its layout key ("memory", "memory l2", "roof 0"), the roof in log
    coordinates, its label's full and short texts. A memory roof's label is placed along the segment from its
    left end; a compute roof's along its height from its start (its ridge) to past the view's right edge."""

    key: str
    segment: Segment
    full: str
    short: str
    memory: bool = False


@dataclass(frozen=True)
class Operations:
    """The operations drawn, in the order of their points: row in the document, position, name, stale, bound time;
    the selected row and the pinned operations (indices into these lists)."""

    rows: Sequence[int]
    positions: Sequence[Position]
    names: Sequence[str]
    stale: Sequence[bool]
    times: np.ndarray
    current: int = -1
    pins: Sequence[int] = ()
    chosen: Sequence[int] | None = None  # what `labelled()` answers, when the caller asked it already

    def labelled(self) -> list[int]:
        """Which operations may carry a label (indices), the selected one first: all of a small session; of a large
        one the selected, the pinned and the largest by share of time (`label_layout.labelled_points`)."""
        if self.chosen is not None:
            return list(self.chosen)
        total = float(self.times.sum()) or 1.0
        rows = self.rows if isinstance(self.rows, list) else list(self.rows)
        current = rows.index(self.current) if self.current in rows else None
        return labelled_points(self.times / total, current, list(self.pins))

    def text(self, index: int) -> str:
        return self.names[index] + (" (stale)" if self.stale[index] else "")


@dataclass
class RooflineInputs:
    """What the plot shows, for one layout: the view (range and pixels), the roofs with labels and every roof line
    labels keep off (log coordinates), the operations, the ridge point of the selected path and its text, and the
    other marks in pixels: the operations' (`PointMarks`, with their points at further levels), the imported
    kernels' and measured runs' (`MarkGrid`), the runs' labels and the lowered roofs' labels."""

    view: PixelView
    roofs: Sequence[RoofText]
    lines: Sequence[Segment]
    operations: Operations
    point_marks: PointMarks | None = None
    other_marks: MarkGrid | None = None
    run_label_marks: Sequence[Box] = ()
    lowered_label_marks: Sequence[Box] = ()
    ridge: Position | None = None
    ridge_text: str = ""
    level_marks: Sequence[Position] = ()

    def marks_of_points(self) -> PointMarks:
        if self.point_marks is None:
            self.point_marks = PointMarks(self.view.key(), list(self.operations.positions), list(self.level_marks),
                                          OPERATION_RADIUS)
        return self.point_marks

    def marks_of_others(self) -> MarkGrid:
        if self.other_marks is None:
            self.other_marks = MarkGrid([], self.view.width, self.view.height)
        return self.other_marks


@dataclass(frozen=True)
class LegendRow:
    """One row of the legend: its text, a roof's or an operation's ("roof", "point"), whose (a layout key; "more"
    for the count of operations without a label) and whether it is the selected operation's."""

    text: str
    kind: str
    key: str
    selected: bool = False


@dataclass(frozen=True)
class Legend:
    """The legend: its corner and box, its rows, the labels listed in it for want of room on the plot (layout
    keys), how many labels found room neither there nor on the plot, how many marks it covers, and the
    "+N more operations" line (None when every operation may carry a label)."""

    corner: Corner
    box: Box
    rows: tuple[LegendRow, ...]
    listed: frozenset[str]
    left_out: int
    covering: int
    more: str | None


@dataclass(frozen=True)
class SceneLabel:
    """A label placed: its layout key, its text, its box (None: no room, hidden), the point its leader runs to
    (None: no leader), and for a roof's label whether it shows its short text and lies on its roof."""

    key: str
    text: str
    box: Box | None
    leader_to: Position | None = None
    short: bool = False
    on_roof: bool = False


@dataclass(frozen=True)
class Memory:
    """What a scene leaves for the next (`previous`): the legend's corner and what it was chosen for, how many
    marks it covered there, the labels it listed and for what, and the layout's context."""

    legend_corner: Corner | None = None
    legend_context: tuple[object, ...] | None = None
    legend_covering: int = 0
    listed: frozenset[str] = frozenset()
    listed_context: tuple[object, ...] | None = None
    layout_context: tuple[object, ...] | None = None


@dataclass(frozen=True)
class RooflineScene:
    """What the roofline draws of its labels and legend (pixels of `view`): the roofs' labels then the operations'
    (`labels`, in the layout's order), the ridge label, the legend, the operations that may carry a label
    (`labelled`, indices), and the layout itself with what it was laid out against (for its checks)."""

    view: PixelView
    labels: tuple[SceneLabel, ...]
    ridge: SceneLabel | None
    legend: Legend | None
    labelled: tuple[int, ...]
    layout: LabelLayout
    lines: tuple[Segment, ...]
    marks: tuple[Box, ...]
    roof_labels: tuple[RoofLabel, ...]
    point_labels: tuple[PointLabel, ...]
    held: bool  # labels were held where they were (a point moved): a layout afresh is due once edits pause
    memory: Memory = field(default_factory=Memory)

    def label(self, key: str) -> SceneLabel | None:
        return next((label for label in self.labels if label.key == key), None)


def roofline_scene(
    inputs: RooflineInputs,
    state: RooflineViewState,
    measure: Measure,
    previous: RooflineScene | None = None,
    fresh: bool = False,
) -> RooflineScene:
    """The roofline's labels, ridge label and legend for `inputs` in `state`'s mode and corner (see the module's
    text). With `previous` (the scene before, for the same plot) and not `fresh`, labels whose points did not move
    keep their places and the legend its corner; `fresh` lays everything out anew."""
    return _Scene(inputs, state, measure, previous, fresh).make()


@dataclass
class _Laid:
    """One layout with what it was made of: the label lines and marks in pixels, the labels laid out, the ridge
    label's box at the foot of its line, and `near(boxes)`, the marks any of those boxes overlaps."""

    layout: LabelLayout
    lines: list[Segment]
    marks: list[Box]
    roof_labels: list[RoofLabel]
    point_labels: list[PointLabel]
    near: Callable[[Sequence[Box]], list[Box]]
    ridge_box: Box | None


class _Scene:
    """One scene in the making: the legend's and layout's memory, changed by each layout tried."""

    def __init__(self, inputs: RooflineInputs, state: RooflineViewState, measure: Measure,
                 previous: RooflineScene | None, fresh: bool) -> None:
        self.inputs, self.state, self.measure, self.fresh = inputs, state, measure, fresh
        self.view = inputs.view
        memory = previous.memory if previous is not None else Memory()
        self.previous = previous
        self.legend_corner, self.legend_context = memory.legend_corner, memory.legend_context
        self.legend_covering = memory.legend_covering
        self.layout_context = memory.layout_context
        self.legend_free: bool | None = None  # the corner chosen afresh covered no mark (None: none was chosen)
        self.legend_shown = False
        self.legend_box: Box | None = None
        self.rows: tuple[LegendRow, ...] = ()
        self.held = False
        self.operations = inputs.operations
        self.labelled = self.operations.labelled()
        view = self.view
        self.lines = [view.segment(line) for line in inputs.lines]
        self.roof_labels = self._roof_labels()
        self.point_labels = self._point_labels()
        self.context = (view.width, view.height, state.label_mode, tuple(self.operations.rows), len(inputs.roofs),
                        state.font_key)
        self.start = memory.listed if memory.listed_context == self.context else frozenset()

    def make(self) -> RooflineScene:
        """Lay out, listing in the legend what found no room; when the legend's corner, chosen afresh, took labels'
        room, try the others too and keep the one that covers no mark and takes the fewest labels' room."""
        corner = self.state.legend_corner
        laid, listed, before, left_out = self._list_unplaced(self.start, corner)
        if self.legend_free and before is not None and self.legend_corner is not None and (listed != before or left_out):
            found = {}

            def trial_in(corner: Corner) -> Trial:
                found[corner] = self._list_unplaced(before, corner)
                _, kept, _, out = found[corner]
                return Trial(corner, self.legend_covering, len(kept - before), out)

            trials, best = try_corners(Trial(self.legend_corner, self.legend_covering, len(listed - before), left_out),
                                       trial_in)
            laid, listed, _, left_out = found[trials[-1].corner]
            if best != trials[-1]:
                laid, listed, _, left_out = self._list_unplaced(before, best.corner)
        ridge = self._ridge_up(laid)
        return self._scene(laid, listed, left_out, ridge)

    def _scene(self, laid: _Laid, listed: frozenset[str], left_out: int, ridge: SceneLabel | None) -> RooflineScene:
        labels = []
        texts = {roof.key: roof for roof in self.inputs.roofs}
        for placement in laid.layout.placements:
            roof = texts.get(placement.key)
            if roof is not None:
                text = roof.short if placement.short else roof.full
            else:
                text = self.operations.text(self._index_of(placement.key))
            labels.append(SceneLabel(placement.key, text, placement.box, placement.leader_to, placement.short,
                                     placement.box is not None and placement.on_roof is not None))
        legend = None
        if self.legend_shown and self.legend_box is not None and self.legend_corner is not None:
            more = next((row.text for row in self.rows if row.key == "more"), None)
            legend = Legend(self.legend_corner, self.legend_box, self.rows, listed, left_out, self.legend_covering, more)
        memory = Memory(self.legend_corner, self.legend_context, self.legend_covering, listed, self.context,
                        self.layout_context)
        return RooflineScene(self.view, tuple(labels), ridge, legend, tuple(self.labelled), laid.layout,
                             tuple(laid.lines), tuple(laid.marks), tuple(laid.roof_labels), tuple(laid.point_labels),
                             self.held, memory)

    def _index_of(self, key: str) -> int:
        row = int(key.rsplit(" ", 1)[1])
        return next(index for index in self.labelled if self.operations.rows[index] == row)

    # ------------------------------------------------------------------ the labels to lay out
    def _roof_labels(self) -> list[RoofLabel]:
        """The roofs' labels: their sizes, full and short, and the roof each lies along, in pixels."""
        view, labels = self.view, []
        for roof in self.inputs.roofs:
            w, h, short_w = self.measure.roof_label(roof.key, roof.full, roof.short)
            if roof.memory:
                labels.append(RoofLabel(roof.key, w, h, view.segment(roof.segment), from_left=True, short_width=short_w))
            else:
                start, y = roof.segment[0], roof.segment[1]
                along = (view.px(start), view.py(y), view.px(view.x_high) + 1e4, view.py(y))
                labels.append(RoofLabel(roof.key, w, h, along, short_width=short_w))
        return labels

    def _point_labels(self) -> list[PointLabel]:
        """The labelled operations' labels the label mode shows, the selected one first: on a crowded plot the
        others may find no room left."""
        view, operations, labels = self.view, self.operations, []
        for index in self.labelled:
            row, (x, y) = operations.rows[index], operations.positions[index]
            if self.state.labels(row, operations.current):
                w, h = self.measure.label(operations.text(index))
                labels.append(PointLabel(f"operation {row}", w, h, view.px(x), view.py(y)))
        selected = f"operation {operations.current}"
        at = next((index for index, label in enumerate(labels) if label.key == selected), 0)
        if at:
            labels.insert(0, labels.pop(at))
        return labels

    # ------------------------------------------------------------------ the legend
    def _legend_rows(self, listed: frozenset[str]) -> tuple[LegendRow, ...]:
        """The roofs and operations in `listed` (layout keys) whose label found no room, the operations the label
        mode leaves unlabelled, and a count of the operations no label is chosen for (hover names them)."""
        rows = [LegendRow(roof.full, "roof", roof.key) for roof in self.inputs.roofs if roof.key in listed]
        operations, current = self.operations, self.operations.current
        # the widest text a row may have: the legend (its sample, spacing and margins besides) within the view
        room = self.view.width - 2 * LEGEND_MARGIN[0] - LEGEND_ROW_EXTRA
        for index in self.labelled:
            row, (x, y) = operations.rows[index], operations.positions[index]
            key = f"operation {row}"
            if self.state.labels(row, current) and key not in listed:
                continue
            figures = f"{format_intensity(10 ** x)}, {format_flop_rate(10 ** y)}"
            line = f"{operations.names[index]} — {figures}"
            if self.measure.legend_text(line) > room:  # two lines rather than a legend wider than the plot
                line = f"{operations.names[index]}\n{figures}"
            rows.append(LegendRow(line, "point", key, row == current))
        unnamed = len(operations.rows) - len(self.labelled)
        if unnamed > 0:
            rows.append(LegendRow(f"+{unnamed:,} more operations (hover for names)", "point", "more"))
        return tuple(rows)

    def _list_in_legend(self, keys: frozenset[str]) -> bool:
        """The legend listing `keys`; whether it shows (it lists anything)."""
        self.rows = self._legend_rows(keys)
        self.legend_size = self.measure.legend(self.rows)
        self.legend_shown = self.legend_size is not None
        return self.legend_shown

    legend_size: tuple[float, float, int] | None = None

    def _place_legend(self, marks: Sequence[Box], near: Callable[[Sequence[Box]], list[Box]], corner: Corner | None) -> Box | None:
        """The legend's box, when shown, in `corner`, or in the corner that covers none of `marks` (chosen afresh
        when laid out afresh or when the view's size or range, the text size or the legend's rows changed;
        otherwise it stays unless a point moved under it: it does not jump corners on each keystroke)."""
        if not self.legend_shown or self.legend_size is None:
            return None
        view = self.view
        width, height = view.width, view.height
        size = self.legend_size[:2]
        rows = mark_rows(near([corner_box(each, size, width, height) for each in CORNERS]))
        context = (width, height, (view.x_low, view.x_high, view.y_low, view.y_high), self.legend_size[2],
                   tuple((row.kind, row.key if row.kind == "roof" else row.selected) for row in self.rows),
                   self.state.font_key)
        if corner is None:
            keep = self.legend_corner if not self.fresh and context == self.legend_context else None
            corner = choose_corner(size, width, height, rows, keep=keep, keep_covering=self.legend_covering)
            if corner is not keep and self.legend_free is None:
                self.legend_free = faults(corner_box(corner, size, width, height), rows, width, height) == 0
        box = corner_box(corner, size, width, height)
        self.legend_context, self.legend_corner = context, corner
        self.legend_covering = faults(box, rows, width, height)
        self.legend_box = box
        return box

    def _list_unplaced(
        self, listed: frozenset[str], corner: Corner | None
    ) -> tuple[_Laid, frozenset[str], frozenset[str] | None, int]:
        """Lay out, listing each label that finds no room while the legend covers no more marks for it
        (`legend_corner.list_unplaced`); also what was listed when the legend first showed (None: it never did)
        and how many labels were left out."""
        before: frozenset[str] | None = None
        laid: _Laid | None = None

        def list_in_legend(keys: frozenset[str]) -> bool:
            nonlocal before
            shown = self._list_in_legend(keys)
            if before is None and shown:
                before = keys
            return shown

        def shown(keys: frozenset[str]) -> tuple[frozenset[str], int]:
            nonlocal laid
            listing = list_in_legend(keys)
            laid = self._lay_out(corner)
            return frozenset(laid.layout.unplaced), self.legend_covering if listing else 0

        def covers(keys: frozenset[str]) -> int:
            """What shown(keys) answers second, without laying the labels out: the legend's faults alone."""
            if not list_in_legend(keys):
                return 0
            self._marks(corner)
            return self.legend_covering

        rounds = len(self.operations.rows) + sum(1 for roof in self.inputs.roofs if not roof.memory) + 2
        # a roof's name before an operation's (whose point names it on hover): "memory…", "roof…" first
        kept, left_out = list_unplaced(listed, shown, rounds, first=lambda key: key.startswith("operation"), covers=covers)
        assert laid is not None
        return laid, kept, before, len(left_out)

    # ------------------------------------------------------------------ one layout
    def _marks(self, corner: Corner | None) -> tuple[list[Box], Callable[[Sequence[Box]], list[Box]], Callable[[], np.ndarray]]:
        """Every mark the labels keep clear of, with the legend put in its corner (a mark too); `near(boxes)`: the
        marks that overlap any of `boxes` (the points' found by NumPy, the kernels' and runs' by their grid's
        cells, the rest, few, one by one); `as_array()`: the marks as rows, joined from the arrays the points and
        the grid keep (not made afresh from thousands of boxes on every keystroke)."""
        point_marks, others = self.inputs.marks_of_points(), self.inputs.marks_of_others()
        marks = point_marks.boxes()
        points, apart = len(self.operations.positions), len(marks)
        marks += others.boxes

        def as_array() -> np.ndarray:
            rest = np.array(marks[apart + len(others):], dtype=float).reshape(-1, 4)
            return np.vstack((point_marks.array(), others.array, rest))

        def near(boxes: Sequence[Box]) -> list[Box]:
            rest = [*marks[points:apart], *marks[apart + len(others):]]
            return point_marks.overlapping_points(boxes) + [others.boxes[i] for i in others.overlapping(boxes)] + [
                mark for mark in rest if any(boxes_overlap(box, mark) for box in boxes)]

        marks += self.inputs.run_label_marks
        if self.inputs.ridge is not None:
            x, y = self.inputs.ridge
            r = RIDGE_RADIUS
            marks.append((self.view.px(x) - r, self.view.py(y) - r, self.view.px(x) + r, self.view.py(y) + r))
        legend_box = self._place_legend(marks, near, corner)
        if legend_box is not None:
            marks.append(legend_box)
        return marks, near, as_array

    def _lay_out(self, corner: Corner | None) -> _Laid:
        """One layout of every label with the legend as listed now, the labels held where they were while one
        point moves (`label_layout.held_layout`)."""
        view = self.view
        marks, near, as_array = self._marks(corner)
        lines = list(self.lines)
        marks += self.inputs.lowered_label_marks
        # the ridge label: at the foot of the ridge line, either side (where the foot is taken, as by a legend in a
        # bottom corner, it goes up the line once the other labels are placed: `_ridge_up`)
        ridge_box: Box | None = None
        if self._ridge_in_view():
            ridge_box = ridge_at_foot(*self._ridge_sides(), view.height - 2, view.width, view.height, near, lines)
        if ridge_box is not None:
            marks.append(ridge_box)
        context = (view, tuple(lines), tuple(label.key for label in self.roof_labels), self.state.label_mode,
                   self.state.font_key)
        previous = self.previous
        held = held_layout(previous.layout if previous is not None else None,
                           previous.point_labels if previous is not None else (),
                           self.point_labels, not self.fresh and context == self.layout_context)
        layout = layout_labels(view.width, view.height, lines, marks, self.roof_labels, self.point_labels, keep=held,
                               marks_array=as_array())
        self.layout_context = context
        self.held = self.held or held is not None
        return _Laid(layout, lines, marks, self.roof_labels, self.point_labels, near, ridge_box)

    # ------------------------------------------------------------------ the ridge label
    def _ridge_in_view(self) -> bool:
        ridge = self.inputs.ridge
        return ridge is not None and self.view.x_low < ridge[0] < self.view.x_high

    def _ridge_sides(self) -> tuple[tuple[float, float], list[float]]:
        """The ridge label's size, and the left edges of its places beside the ridge line (right, else left)."""
        assert self.inputs.ridge is not None
        w, h = self.measure.label(self.inputs.ridge_text)
        left = self.view.px(self.inputs.ridge[0]) + 3
        return (w, h), [left, left - w - 6]

    def _ridge_up(self, laid: _Laid) -> SceneLabel | None:
        """The ridge label at the foot of its line; where the foot was taken, up its line clear of every mark, label
        and leader (placed last, after the operations' and roofs' labels: `label_layout.ridge_up_the_line`); or
        None (not in view, or no room)."""
        if not self._ridge_in_view():
            return None
        if laid.ridge_box is not None:
            return SceneLabel("ridge", self.inputs.ridge_text, laid.ridge_box)
        placements = laid.layout.placements
        labels = [placement.box for placement in placements if placement.box is not None]
        lines = laid.lines + [leader for leader in map(leader_segment, placements) if leader is not None]

        def covering(box: Box) -> list[Box]:
            return laid.near([box]) + [label for label in labels if boxes_overlap(box, label)]

        box = ridge_up_the_line(*self._ridge_sides(), self.view.width, self.view.height, covering, lines)
        if box is None:
            return None
        laid.marks.append(box)  # a mark of the layout kept (its checks see the label)
        return SceneLabel("ridge", self.inputs.ridge_text, box)
