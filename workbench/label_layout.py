"""Where plot labels go: off the roofs, off every point, off each other, at any text size.

Pure geometry in a plot's pixels (x to the right, y down), no Qt: the
roofline view measures its label texts, hands their sizes, the roofs (as line
segments) and the marks (as boxes) to `layout_labels`, and draws what comes
back. A label that had to move away from its point gets a leader line to it.

Rules, in order of placement:

1. Roof labels stay with their own roof. First choice: just above or below
   it, at the first free place from the right end of the visible roof
   leftwards (the memory roof's from its left end rightwards). Second: written
   on the roof itself (a horizontal roof only; the view breaks the line under
   the text), again at any free place along it. Then the same with the
   label's shorter text, if it has one. Last: stepped off the roof in whole
   text lines, with a leader, never further than `ROOF_REACH_LINES` text
   lines from it. A roof label with no such place is left unplaced rather
   than drawn far from its roof (the view lists it in the legend).
2. Operation labels take the first free place around their point, nearest
   first (eight directions, widening rings), then the nearest free place
   anywhere in the view, with a leader line.
   Leader lines count too: each crossing of another leader, each label or
   other point a leader runs through, and each earlier leader running
   through the label costs `TANGLE_COST` pixels of leader length; a crowded
   label takes the free place (around its point, or among the
   `ANYWHERE_CHOICES` nearest anywhere) with the least cost; once all are
   placed, each label still tangled is placed once more among all the
   others (an early label cannot know the later leaders). With points
   packed along a roof, "which label is whose" must not need crossing
   leaders untangled by eye. (Beyond `UNTANGLED_LABELS` operation labels,
   each takes the first free place: weighing leaders would cost an edit
   its frame.)

Which points get a label at all (`labelled_points`): every one up to `EVERY_LABEL_UP_TO`; beyond that (a traced
model's thousands of operations) the selected one, the user's pins and the largest by share of time,
`FEW_LABELS` in all besides the pins. So a layout places a bounded number of labels, whatever the points.

A place is free when the box lies inside the view, covers no mark, overlaps
no label already placed (with `PADDING` of air) and no roof segment passes
through it (except, for a label written on its roof, that roof). A label with
no free place anywhere is left unplaced (`box` None): the view lists it in
the legend rather than draw it over something. `layout_faults` checks a
finished layout against the same rules; tests use it.

Two leaders that cross count `CROSSING_WEIGHT` tangles, and two labels whose
leaders still cross once all are placed trade places when that tangles less.
A label does not go further than `LEADER_REACH` of the view's diagonal from its
point to spare a tangle. Roofs a leader crosses are named by `leader_tangles`
but not weighed (`ROOF_WEIGHT`, measured).

Speed: a label's places (beside its roof, around its point, anywhere in the
view) are checked and weighed in bulk with NumPy: boxes against the marks and
labels near them, segments against boxes and against segments, as tables; the
search of the whole view goes nearest first in growing batches; a grid of cells
indexes the view for the one-place check only (built when first asked); with many marks (beyond
`RASTER_FROM`) a raster of them in cells of `RASTER_CELL` pixels, summed, answers whether a box covers one in
constant time (`_MarkRaster`, exact), so a layout costs the labels' places times a constant, plus one pass over the
marks; `MarkGrid` indexes marks by cell for the view's own questions (which marks a legend corner or the ridge
label would cover) and follows a mark that moves; and a layout asked for again with the same inputs (an edit
undone, a repaint) comes from a small cache.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

Box = tuple[float, float, float, float]  # left, top, right, bottom
Segment = tuple[float, float, float, float]  # x0, y0, x1, y1

PADDING = 2.0  # pixels of air kept between two labels
GAP = 4.0  # pixels between a roof and its label
POINT_GAP = 9.0  # pixels between a point's centre and its own label
ROOF_STEP = 24.0  # pixels between places tried along a roof
RINGS = 6  # rings of places tried around a point before searching the whole view
FIRST_RING = 8  # places in the first ring (`_around_point`: right, the diagonals, left, above, below): no leader
ROOF_REACH_LINES = 2  # a roof label stepped off its roof goes at most this many text lines away
CELL = 40.0  # pixels per side of the grid cells that index what is already in the view
CACHE_SIZE = 8  # layouts remembered by their inputs
EVERY_LABEL_UP_TO = 20  # a plot of this many operations or fewer labels every one (as room allows)
FEW_LABELS = 10  # beyond that: the selected operation and the largest by share of time, this many in all, pins besides
RASTER_CELL = 4.0  # pixels per side of the cells of that raster
RASTER_FROM = 64  # marks beyond which a box is checked against them through a raster (`_MarkRaster`), not one by one
TANGLE_COST = 300.0  # pixels of leader line worth one tangle: a label goes this much further to avoid one
ANYWHERE_CHOICES = 48  # free places anywhere in the view (nearest first) weighed for a label that has none clean near
# Weighing leaders costs several times the plain search when many labels crowd (20 packed labels: about 6×, some
# 100 ms, on every edit that moves a point); beyond this many operation labels they take the first free place.
UNTANGLED_LABELS = 12
CROSSING_WEIGHT = 3  # two leaders crossing count as this many tangles: which label is whose must read at a glance
# A leader crossing a roof (away from its point) counts as this many tangles. Measured on the recorded window
# layouts (benchmarks/label_layout_inputs.json): every weight from 0.01 to 1 removed no roof crossing there (the
# places within reach all lie beyond the same packed compute roofs, the bands between them taken by roof labels)
# and traded them for leaders through labels, or (from 0.5) two crossing leaders at presentation size. So roofs
# crossed are reported (`leader_tangles`, the tests bound them) but not weighed.
ROOF_WEIGHT = 0.0
LEADER_REACH = 0.25  # of the view's diagonal: how far a label goes from its point to spare its leader a tangle
# Pixels around a label within which a leader counts as running through it; negative: only a leader half a pixel
# inside it counts (as for every other "through" test here). 2 px of air (a leader grazing a label's end reads as
# pointing at it) was measured on the recorded window layouts: it freed the small normal-size batched-GEMM layout of
# two leaders through labels, but at presentation size it sent two leaders through the "FP64 TC / FP32" roof label
# rather than one; so no air is kept.
LEADER_AIR = -0.5
LEADER_START = 4.0  # pixels of a leader at its point where crossing a roof does not count (a point drawn on its roof)


@dataclass(frozen=True)
class RoofLabel:
    """A label that belongs to a roof (the segment, in pixels)."""

    key: str
    width: float
    height: float
    roof: Segment
    from_left: bool = False  # try places from the roof's left end (the memory roof) rather than its right
    short_width: float | None = None  # the width of a shorter text for the same roof, tried where the full one fits nowhere near


@dataclass(frozen=True)
class PointLabel:
    """A label that belongs to a point (its centre in pixels)."""

    key: str
    width: float
    height: float
    x: float
    y: float


@dataclass(frozen=True)
class Placement:
    """Where one label went: its box (None when no place was free), the point a leader line runs to, and the
    roof it is written on (a roof label placed over its own horizontal roof; the view breaks the line there)."""

    key: str
    box: Box | None
    leader_to: tuple[float, float] | None = None
    on_roof: Segment | None = None
    short: bool = False  # a roof label placed with its shorter text


@dataclass
class LabelLayout:
    """Every label's placement, in the order asked."""

    placements: list[Placement] = field(default_factory=list)

    def placement(self, key: str) -> Placement | None:
        return next((p for p in self.placements if p.key == key), None)

    @property
    def unplaced(self) -> list[str]:
        return [p.key for p in self.placements if p.box is None]

    @property
    def boxes(self) -> list[Box]:
        return [p.box for p in self.placements if p.box is not None]


# ---------------------------------------------------------------- which points get a label


def labelled_points(
    shares: Sequence[float], selected: int | None = None, pinned: Iterable[int] = (),
    every_up_to: int | None = None, few: int | None = None,
) -> list[int]:
    """The points (indices into `shares`) that get a label on the plot, in the points' order.

    Up to `EVERY_LABEL_UP_TO` points, every one. Beyond that (a traced model's hundreds or thousands of
    operations), the selected point, then the pinned ones (at most `FEW_LABELS` of them, in the order given),
    then the largest `shares` (of the session's or step's time; the earlier point on a tie) until `FEW_LABELS`
    besides the pins are labelled: the rest are named on hover, in the operations list and in the legend's
    count. Linear in the points (a heap keeps the few largest)."""
    every_up_to = EVERY_LABEL_UP_TO if every_up_to is None else every_up_to
    few = FEW_LABELS if few is None else few
    count = len(shares)
    if count <= every_up_to:
        return list(range(count))
    chosen: set[int] = set()
    if selected is not None and 0 <= selected < count:
        chosen.add(selected)
    pins = [index for index in dict.fromkeys(pinned) if 0 <= index < count and index not in chosen][:few]
    chosen.update(pins)
    wanted = few + len(pins)
    if len(chosen) < wanted:
        largest = _largest(shares, wanted)
        for index in largest:
            if len(chosen) >= wanted:
                break
            chosen.add(index)
    return sorted(chosen)


def _largest(shares: Sequence[float], wanted: int) -> list[int]:
    """The indices of the `wanted` largest shares, largest first (the earlier on a tie). Shares in a float array
    (the roofline's, on every edit) are ranked by NumPy: the `wanted`-th largest found by a partition (linear),
    then what reaches it sorted; any other sequence by a heap over `_share`."""
    if isinstance(shares, np.ndarray) and shares.dtype.kind == "f" and shares.ndim == 1:
        keys = np.where(np.isfinite(shares) & (shares > 0), shares, 0.0)
        if wanted >= len(keys):
            reached = np.arange(len(keys))
        else:
            threshold = np.partition(keys, len(keys) - wanted)[len(keys) - wanted]
            above = np.flatnonzero(keys > threshold)
            reached = np.concatenate([above, np.flatnonzero(keys == threshold)[: wanted - len(above)]])
        order = np.lexsort((reached, -keys[reached]))
        return [int(index) for index in reached[order]]
    return heapq.nsmallest(wanted, range(len(shares)), key=lambda index: (-_share(shares[index]), index))


def _share(value: float) -> float:
    """A share as a sortable number: anything not a finite positive number counts as nothing."""
    return value if isinstance(value, (int, float)) and math.isfinite(value) and value > 0 else 0.0


class PointMarks:
    """The boxes a plot's labels keep clear of around its points, in the view's pixels: each point's box (`radius`
    around it), in the points' order, then each point at a further level that lies apart from every point (its
    place in tenths of a pixel is none of theirs: one on top of its point is kept clear already), in the order of
    those places. Made for one view (`view`: the left edge's x, the top edge's y, pixels per unit across and down);
    `move` works out one point's boxes again (an edit moves one), not the others'."""

    def __init__(self, view: tuple[float, float, float, float], points: Sequence[tuple[float, float]],
                 levels: Sequence[tuple[float, float]], radius: float) -> None:
        self.view = view
        self.radius = radius
        self._boxes: list[Box] = []
        self._points: list[tuple[int, int]] = []  # each point's place in tenths of a pixel
        for x, y in points:
            box, key = self._box(x, y)
            self._boxes.append(box)
            self._points.append(key)
        self._levels = [self._key(x, y) for x, y in levels]
        self._point_count: dict[tuple[int, int], int] = {}
        self._level_count: dict[tuple[int, int], int] = {}
        for key in self._points:
            self._point_count[key] = self._point_count.get(key, 0) + 1
        for key in self._levels:
            self._level_count[key] = self._level_count.get(key, 0) + 1
        self._apart = sorted(key for key in self._level_count if key not in self._point_count)
        self._apart_boxes = [self._apart_box(key) for key in self._apart]

    def _key(self, x: float, y: float) -> tuple[int, int]:
        x_low, y_high, per_x, per_y = self.view
        # tenths of a pixel as integers (round(v, 1) goes through decimal digits, slowly)
        return round((x - x_low) * per_x * 10), round((y_high - y) * per_y * 10)

    def _box(self, x: float, y: float) -> tuple[Box, tuple[int, int]]:
        x_low, y_high, per_x, per_y = self.view
        cx, cy = (x - x_low) * per_x, (y_high - y) * per_y
        r = self.radius
        return (cx - r, cy - r, cx + r, cy + r), (round(cx * 10), round(cy * 10))

    def _apart_box(self, key: tuple[int, int]) -> Box:
        x, y, r = key[0] / 10, key[1] / 10, self.radius
        return (x - r, y - r, x + r, y + r)

    def boxes(self) -> list[Box]:
        """The points' boxes, then those of the level points apart from them (a new list)."""
        return self._boxes + self._apart_boxes

    def overlapping_points(self, boxes: Sequence[Box]) -> list[Box]:
        """The points' boxes (not the level points') that overlap any of `boxes` (as `boxes_overlap` has it), in
        the points' order: found by NumPy over all the points at once."""
        if self._array is None:
            self._array = np.array(self._boxes, dtype=float).reshape(-1, 4)
        array, hit = self._array, np.zeros(len(self._boxes), dtype=bool)
        for a in boxes:
            hit |= (a[0] < array[:, 2]) & (array[:, 0] < a[2]) & (a[1] < array[:, 3]) & (array[:, 1] < a[3])
        return [self._boxes[index] for index in np.flatnonzero(hit)]

    _array: np.ndarray | None = None  # the points' boxes as rows (made when first asked, kept up to date by move)

    def array(self) -> np.ndarray:
        """`boxes()` as rows of a NumPy array (the points' kept up to date by `move`; the few level points' made)."""
        if self._array is None:
            self._array = np.array(self._boxes, dtype=float).reshape(-1, 4)
        return np.vstack((self._array, np.array(self._apart_boxes, dtype=float).reshape(-1, 4)))

    def move(self, index: int, point: tuple[float, float], first: int, levels: Sequence[tuple[float, float]]) -> None:
        """Point `index` is now at `point`, its level points (from `first` on among the levels) at `levels`."""
        touched: set[tuple[int, int]] = set()
        box, key = self._box(*point)
        self._boxes[index] = box
        if self._array is not None:
            self._array[index] = box
        touched |= {self._points[index], key}
        _recount(self._point_count, self._points[index], key)
        self._points[index] = key
        for offset, (x, y) in enumerate(levels):
            key = self._key(x, y)
            touched |= {self._levels[first + offset], key}
            _recount(self._level_count, self._levels[first + offset], key)
            self._levels[first + offset] = key
        for key in touched:
            at = bisect.bisect_left(self._apart, key)
            listed = at < len(self._apart) and self._apart[at] == key
            wanted = key in self._level_count and key not in self._point_count
            if wanted and not listed:
                self._apart.insert(at, key)
                self._apart_boxes.insert(at, self._apart_box(key))
            elif listed and not wanted:
                del self._apart[at]
                del self._apart_boxes[at]


class MarkGrid:
    """Boxes (marks) indexed by the cells of a grid over a `width` × `height` view, `cell` pixels a side: which of
    them some boxes overlap (`boxes_overlap`) is found from the cells those boxes cover, so asking costs the marks
    near them, not a scan of every mark (a session's thousands of measured runs); `move` keeps the cells up to date
    when one mark moves. Marks beyond the view are kept in the cells along its edges."""

    def __init__(self, boxes: Sequence[Box], width: float, height: float, cell: float = CELL) -> None:
        self.boxes = list(boxes)
        self.cell = cell
        self._last = (max(int(width // cell), 0) + 1, max(int(height // cell), 0) + 1)  # the edge cells' column, row
        self.array = np.array(self.boxes, dtype=float).reshape(-1, 4)  # the boxes as rows, kept up to date
        self._cells: dict[tuple[int, int], list[int]] = {}
        for index, box in enumerate(self.boxes):
            for key in self._keys(box):
                self._cells.setdefault(key, []).append(index)

    def _keys(self, box: Box) -> Iterator[tuple[int, int]]:
        """The cells a box touches, cut to the view's cells and one more ring (which holds what lies beyond)."""
        columns, rows = self._last
        left, right = sorted((box[0], box[2]))
        top, bottom = sorted((box[1], box[3]))
        c0, c1 = _cell_index(left, self.cell, columns), _cell_index(right, self.cell, columns)
        r0, r1 = _cell_index(top, self.cell, rows), _cell_index(bottom, self.cell, rows)
        for row in range(r0, r1 + 1):
            for column in range(c0, c1 + 1):
                yield column, row

    def __len__(self) -> int:
        return len(self.boxes)

    def move(self, index: int, box: Box) -> None:
        """Mark `index` is now `box`."""
        for key in self._keys(self.boxes[index]):
            self._cells[key].remove(index)
        self.boxes[index] = box
        self.array[index] = box
        for key in self._keys(box):
            self._cells.setdefault(key, []).append(index)

    def overlapping(self, boxes: Sequence[Box]) -> list[int]:
        """The indices (ascending) of the marks that overlap any of `boxes`."""
        seen: set[int] = set()
        for box in boxes:
            for key in self._keys(box):
                seen.update(self._cells.get(key, ()))
        return sorted(index for index in seen if any(boxes_overlap(box, self.boxes[index]) for box in boxes))

    def count(self, box: Box) -> int:
        """How many marks `box` overlaps."""
        return len(self.overlapping([box]))


def _cell_index(value: float, cell: float, last: int) -> int:
    """The grid cell along one axis holding pixel `value`: -1 and `last` hold everything before and beyond the view
    (NaN, a mark with no place, goes with what lies before it)."""
    if value >= last * cell:
        return last
    return int(value // cell) if value >= 0 else -1


def _recount(counts: dict[tuple[int, int], int], old: tuple[int, int], new: tuple[int, int]) -> None:
    counts[new] = counts.get(new, 0) + 1
    counts[old] -= 1
    if not counts[old]:
        del counts[old]


# ---------------------------------------------------------------- geometry


def boxes_overlap(a: Box, b: Box, padding: float = 0.0) -> bool:
    """True when the boxes share area (touching edges do not count), with `padding` added around `a`."""
    return (
        a[0] - padding < b[2] and b[0] < a[2] + padding and a[1] - padding < b[3] and b[1] < a[3] + padding
    )


def segment_crosses_box(segment: Segment, box: Box, inset: float = 0.5) -> bool:
    """True when the segment passes through the box's interior (shrunk by `inset`, so touching is allowed)."""
    left, top, right, bottom = box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset
    if left >= right or top >= bottom:
        return False
    x0, y0, x1, y1 = segment
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    # Liang–Barsky: clip the segment to the box; anything left means it passes through
    for p, q in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)):
        if p == 0.0:
            if q < 0.0:
                return False
            continue
        r = q / p
        if p < 0.0:
            if r > t1:
                return False
            t0 = max(t0, r)
        else:
            if r < t0:
                return False
            t1 = min(t1, r)
    return t0 < t1


def inside(box: Box, width: float, height: float, margin: float = 1.0) -> bool:
    return box[0] >= margin and box[1] >= margin and box[2] <= width - margin and box[3] <= height - margin


def nearest_on_box(box: Box, x: float, y: float) -> tuple[float, float]:
    """The point of the box's outline nearest to (x, y) outside it: where a leader line meets the label."""
    return min(max(x, box[0]), box[2]), min(max(y, box[1]), box[3])


def box_to_segment_distance(box: Box, segment: Segment) -> float:
    """Pixels between a box and a segment (0 when the segment touches or crosses the box)."""
    if segment_crosses_box(segment, box, inset=0.0):
        return 0.0
    corners = ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3]))
    best = min(math.dist(corner, _nearest_on_segment(segment, *corner)) for corner in corners)
    for x, y in ((segment[0], segment[1]), (segment[2], segment[3])):
        nx, ny = nearest_on_box(box, x, y)
        best = min(best, math.hypot(nx - x, ny - y))
    return best


def roof_reach(label_height: float) -> float:
    """The furthest a roof label's box may be from its roof, in pixels: `ROOF_REACH_LINES` lines and some air."""
    return GAP + (ROOF_REACH_LINES + 0.5) * label_height


def _clip_to_view(segment: Segment, width: float, height: float) -> Segment | None:
    """The part of a segment inside the view, or None."""
    x0, y0, x1, y1 = segment
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0), (dx, width - x0), (-dy, y0), (dy, height - y0)):
        if p == 0.0:
            if q < 0.0:
                return None
            continue
        r = q / p
        if p < 0.0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return None
    return (x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy)


def _nearest_on_segment(segment: Segment, x: float, y: float) -> tuple[float, float]:
    x0, y0, x1, y1 = segment
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else min(max(((x - x0) * dx + (y - y0) * dy) / length2, 0.0), 1.0)
    return x0 + t * dx, y0 + t * dy


def _collinear(a: Segment, b: Segment, tolerance: float = 0.5) -> bool:
    """True when segment `b` lies on the line through segment `a` (both of its ends within `tolerance` pixels)."""
    x0, y0, x1, y1 = a
    length = math.hypot(x1 - x0, y1 - y0)
    if length == 0:
        return False
    for x, y in ((b[0], b[1]), (b[2], b[3])):
        if abs((x1 - x0) * (y0 - y) - (x0 - x) * (y1 - y0)) / length > tolerance:
            return False
    return True


def _horizontal(segment: Segment) -> bool:
    x0, y0, x1, y1 = segment
    return abs(y1 - y0) <= 0.05 * max(abs(x1 - x0), 1.0)


# ---------------------------------------------------------------- the room: what is in the view, indexed by cell


class _Room:
    """The view, what must stay uncovered, and the labels placed so far, indexed by grid cell.

    A box is checked only against the marks, labels and roofs in the cells it
    covers; the bulk search (`free_places`) tests many boxes at once with NumPy; `tangles` counts what a
    place's leader would cross.
    """

    def __init__(
        self, width: float, height: float, roofs: Sequence[Segment], marks: Sequence[Box], array: np.ndarray | None = None
    ) -> None:
        """`array`: the marks as rows, where the caller has them (a layout's passes make a room per label)."""
        self.width = width
        self.height = height
        self.roofs = list(roofs)
        self.marks = list(marks)
        self.taken: list[Box] = []
        self.columns = int(width // CELL) + 1
        self.rows = int(height // CELL) + 1
        self._cells: list[list[tuple[int, int]]] | None = None  # (kind, index) per cell, built when first asked
        self._boxes_array: np.ndarray | None = None  # marks and taken labels as rows, for the bulk search
        self._roofs_array = np.array(self.roofs, dtype=float).reshape(-1, 4)
        self._marks_array = _marks_array(marks) if array is None else array
        # Many marks (a session of hundreds of operations): whether a box covers one is answered from a pixel
        # raster of them (`_MarkRaster`), the same answer in time independent of their count.
        self._raster = _mark_raster(marks, self._marks_array, width, height) if len(self.marks) > RASTER_FROM else None
        self._taken_array: np.ndarray | None = None
        self.leaders: list[Segment] = []  # the leader lines drawn so far: no label goes over one
        self._leaders_array: np.ndarray | None = None

    @property
    def cells(self) -> list[list[tuple[int, int]]]:
        """The grid index, built on the first one-place check (the bulk checks need none; a layout that only
        weighs places in bulk never builds it). Marks answered by the raster are not in it."""
        if self._cells is None:
            self._cells = [[] for _ in range(self.columns * self.rows)]
            for index, mark in enumerate(self.marks if self._raster is None else ()):
                self._add_box(0, index, mark)
            for index, roof in enumerate(self.roofs):
                self._add_segment(index, roof)
            for index, box in enumerate(self.taken):
                self._add_box(1, index, box)
        return self._cells

    def add_leader(self, leader: Segment) -> None:
        self.leaders.append(leader)
        self._leaders_array = None

    def tangles_many(self, boxes: np.ndarray, leaders: np.ndarray, with_leader: np.ndarray, x: float, y: float) -> np.ndarray:
        """`tangles` for many places of the label of the point (x, y) at once (rows of `boxes`, their leaders
        in `leaders`, drawn where `with_leader`), plus, for each leader, every roof it crosses (away from its
        point) and a label it passes within `LEADER_AIR` of: each costs as much as a crossing of two leaders."""
        if self._leaders_array is None:
            self._leaders_array = np.array(self.leaders, dtype=float).reshape(-1, 4)
        if self._taken_array is None:
            self._taken_array = np.array(self.taken, dtype=float).reshape(-1, 4)
        count = _segments_cross_boxes(self._leaders_array, boxes, -LEADER_AIR).sum(axis=0).astype(float)
        drawn = np.flatnonzero(with_leader)
        if len(drawn):
            own = leaders[drawn]
            extra = CROSSING_WEIGHT * _segments_cross_many(own, self._leaders_array).sum(axis=1)
            if ROOF_WEIGHT:
                extra = extra + ROOF_WEIGHT * _segments_cross_many(own, self._roofs_array, LEADER_START).sum(axis=1)
            extra += _segments_cross_boxes(own, self._taken_array, -LEADER_AIR).sum(axis=1)
            marks = self._marks_near(own)
            if len(marks):
                others = ~((marks[:, 0] <= x) & (x <= marks[:, 2]) & (marks[:, 1] <= y) & (y <= marks[:, 3]))  # not its own point's
                extra += _segments_cross_boxes(own, marks[others]).sum(axis=1)
            count[drawn] += extra
        return count

    def _marks_near(self, segments: np.ndarray) -> np.ndarray:
        """The marks (rows) that meet the bounding box of all of `segments` (rows of x0, y0, x1, y1)."""
        marks = self._marks_array
        if not len(marks) or not len(segments):
            return marks[:0]
        xs, ys = segments[:, 0::2], segments[:, 1::2]
        return marks[(marks[:, 0] <= xs.max()) & (xs.min() <= marks[:, 2]) & (marks[:, 1] <= ys.max()) & (ys.min() <= marks[:, 3])]

    def free_many(self, boxes: np.ndarray, own_roof: Segment | None = None, on_roof: np.ndarray | None = None) -> np.ndarray:
        """`free` for many boxes at once; those marked in `on_roof` are written on `own_roof`."""
        if self._boxes_array is None:
            self._boxes_array = self._obstacles()
        return self._free_many(boxes, self._boxes_array, own_roof, on_roof)

    def tangles(self, placement: Placement) -> float:
        """How often a placement would tangle: leaders drawn so far through its box (or within `LEADER_AIR` of
        it), and its own leader crossing one of them, crossing a roof (away from its point) or running through
        (or within `LEADER_AIR` of) a label or another point. One place, weighed in plain Python (each test
        exact only where the bounding boxes meet); `tangles_many` weighs many at once by the same rule."""
        box = placement.box
        assert box is not None
        air = (box[0] - LEADER_AIR, box[1] - LEADER_AIR, box[2] + LEADER_AIR, box[3] + LEADER_AIR)
        count = sum(1 for other in self.leaders if _near(other, air) and segment_crosses_box(other, box, -LEADER_AIR))
        leader = leader_segment(placement)
        if leader is None:
            return count
        span = _span(leader)
        x, y = leader[0], leader[1]
        count += CROSSING_WEIGHT * sum(1 for other in self.leaders if _near(other, span) and segments_cross(leader, other))
        if ROOF_WEIGHT:
            count += ROOF_WEIGHT * sum(1 for roof in self.roofs if _crosses_away_from_start(leader, roof))
        for other_box, inset in ((tuple(m), 0.5) for m in self._marks_near(np.array([leader], dtype=float))):
            if (
                other_box[0] < span[2] and span[0] < other_box[2] and other_box[1] < span[3] and span[1] < other_box[3]
                and not (other_box[0] <= x <= other_box[2] and other_box[1] <= y <= other_box[3])  # its own point's mark
                and segment_crosses_box(leader, other_box, inset)
            ):
                count += 1
        for other_box in self.taken:
            if (
                other_box[0] - LEADER_AIR < span[2] and span[0] < other_box[2] + LEADER_AIR
                and other_box[1] - LEADER_AIR < span[3] and span[1] < other_box[3] + LEADER_AIR
                and segment_crosses_box(leader, other_box, -LEADER_AIR)
            ):
                count += 1
        return count

    def free_places(self, boxes: np.ndarray, order: np.ndarray, count: int) -> Iterator[int]:
        """The first `count` free boxes in `order` (rows of `boxes`), found in growing batches as they are asked
        for (a caller that has what it needs stops the search)."""
        if self._boxes_array is None:
            self._boxes_array = self._obstacles()
        start, batch = 0, 256
        while start < len(order) and count > 0:
            chosen = order[start : start + batch]
            for row in chosen[self._free_many(boxes[chosen], self._boxes_array)][:count]:
                yield int(row)
                count -= 1
            start += batch
            batch *= 4

    def _obstacles(self) -> np.ndarray:
        """What a label may not cover, as rows of a box and the air kept around it: the taken labels, and the
        marks unless the raster answers for them."""
        taken = np.array(self.taken, dtype=float).reshape(-1, 4)
        taken = np.column_stack((taken, np.full(len(taken), PADDING)))
        if self._raster is not None:
            return taken
        return np.vstack((np.column_stack((self._marks_array, np.zeros(len(self._marks_array)))), taken))

    # --- indexing
    def _cell_range(self, box: Box, padding: float = 0.0) -> tuple[int, int, int, int]:
        c0 = min(max(int((box[0] - padding) // CELL), 0), self.columns - 1)
        c1 = min(max(int((box[2] + padding) // CELL), 0), self.columns - 1)
        r0 = min(max(int((box[1] - padding) // CELL), 0), self.rows - 1)
        r1 = min(max(int((box[3] + padding) // CELL), 0), self.rows - 1)
        return c0, c1, r0, r1

    def _add_box(self, kind: int, index: int, box: Box) -> None:
        c0, c1, r0, r1 = self._cell_range(box, PADDING)
        for row in range(r0, r1 + 1):
            base = row * self.columns
            for column in range(c0, c1 + 1):
                self._cells[base + column].append((kind, index))  # type: ignore[index]

    def _add_segment(self, index: int, segment: Segment) -> None:
        """Every cell the segment passes through (a band of rows at a time: a roof spans many cells)."""
        visible = _clip_to_view(segment, self.width, self.height)
        if visible is None:
            return
        x0, y0, x1, y1 = visible
        if y1 < y0:
            x0, y0, x1, y1 = x1, y1, x0, y0
        r0 = min(max(int(y0 // CELL), 0), self.rows - 1)
        r1 = min(max(int(y1 // CELL), 0), self.rows - 1)
        for row in range(r0, r1 + 1):
            top, bottom = max(row * CELL, y0), min((row + 1) * CELL, y1)
            if y1 == y0:
                xa, xb = x0, x1
            else:
                xa = x0 + (top - y0) * (x1 - x0) / (y1 - y0)
                xb = x0 + (bottom - y0) * (x1 - x0) / (y1 - y0)
            low, high = min(xa, xb), max(xa, xb)
            c0 = min(max(int(low // CELL) - 1, 0), self.columns - 1)  # one cell of slack either side
            c1 = min(max(int(high // CELL) + 1, 0), self.columns - 1)
            base = row * self.columns
            for column in range(c0, c1 + 1):
                self._cells[base + column].append((2, index))  # type: ignore[index]

    def take(self, box: Box) -> None:
        self.taken.append(box)
        if self._cells is not None:
            self._add_box(1, len(self.taken) - 1, box)
        self._boxes_array = None
        self._taken_array = None

    # --- one place
    def free(self, box: Box, own_roof: Segment | None = None) -> bool:
        if not inside(box, self.width, self.height):
            return False
        left, top, right, bottom = box
        c0, c1, r0, r1 = self._cell_range(box, PADDING)
        seen: set[tuple[int, int]] = set()
        for row in range(r0, r1 + 1):
            base = row * self.columns
            for column in range(c0, c1 + 1):
                for entry in self.cells[base + column]:
                    if entry in seen:
                        continue
                    seen.add(entry)
                    kind, index = entry
                    if kind == 0:
                        m = self.marks[index]
                        if left < m[2] and m[0] < right and top < m[3] and m[1] < bottom:
                            return False
                    elif kind == 1:
                        t = self.taken[index]
                        if left - PADDING < t[2] and t[0] < right + PADDING and top - PADDING < t[3] and t[1] < bottom + PADDING:
                            return False
                    else:
                        roof = self.roofs[index]
                        if segment_crosses_box(roof, box) and not (own_roof is not None and _collinear(own_roof, roof)):
                            return False
        return self._raster is None or bool(self._raster.clear_of_marks(np.array([box], dtype=float), self._marks_array)[0])

    # --- many places at once
    def _free_many(
        self, boxes: np.ndarray, obstacles: np.ndarray, own_roof: Segment | None = None, on_roof: np.ndarray | None = None
    ) -> np.ndarray:
        left, top, right, bottom = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
        rows = np.flatnonzero((left >= 1.0) & (top >= 1.0) & (right <= self.width - 1.0) & (bottom <= self.height - 1.0))
        if len(rows) and self._raster is not None:
            rows = rows[self._raster.clear_of_marks(boxes[rows], self._marks_array)]
        # Each test only on the boxes still free, against what lies near them (within the boxes' bounding box):
        # the boxes of one search are the places nearest one point, most obstacles and roofs are far from them.
        if len(rows) and len(obstacles):
            b = boxes[rows]
            pad = obstacles[:, 4]
            near = (
                (obstacles[:, 0] < b[:, 2].max() + pad) & (b[:, 0].min() - pad < obstacles[:, 2])
                & (obstacles[:, 1] < b[:, 3].max() + pad) & (b[:, 1].min() - pad < obstacles[:, 3])
            )
            if near.any():
                o = obstacles[near]
                pad = o[None, :, 4]
                hit = (
                    (b[:, 0:1] - pad < o[None, :, 2]) & (o[None, :, 0] < b[:, 2:3] + pad)
                    & (b[:, 1:2] - pad < o[None, :, 3]) & (o[None, :, 1] < b[:, 3:4] + pad)
                )
                rows = rows[~hit.any(axis=1)]
        if len(rows) and self.roofs:
            b = boxes[rows]
            r = self._roofs_array
            near = (
                (np.minimum(r[:, 0], r[:, 2]) < b[:, 2].max()) & (b[:, 0].min() < np.maximum(r[:, 0], r[:, 2]))
                & (np.minimum(r[:, 1], r[:, 3]) < b[:, 3].max()) & (b[:, 1].min() < np.maximum(r[:, 1], r[:, 3]))
            )
            indices = np.flatnonzero(near)
            if len(indices):
                crossed = _segments_cross_boxes(r[indices], b)  # roofs near × boxes
                if own_roof is not None and on_roof is not None:
                    for row, index in enumerate(indices):
                        if _collinear(own_roof, self.roofs[int(index)]):
                            crossed[row] &= ~on_roof[rows]  # a label written on its roof
                rows = rows[~crossed.any(axis=0)]
        free = np.zeros(len(boxes), dtype=bool)
        free[rows] = True
        return free


class _MarkRaster:
    """The marks of a view as two rasters of `RASTER_CELL`-pixel cells, for "does this box cover a mark?" in time
    independent of the number of marks (a session of thousands of operations or runs), with the exact answer of
    `boxes_overlap`.

    `outer` counts every cell a mark reaches into, `inner` every cell wholly inside one, each summed (an integral
    image) so a box's cells are counted at once. A box whose cells meet no mark's is clear; one with a cell wholly
    inside both it and a mark covers that mark; only a box in neither case (its edge and a mark's within a cell of
    each other) is checked exactly, against the marks near it. Made in one pass over the marks (counts per cell by
    `np.bincount`) and one over the cells.
    """

    def __init__(self, marks: np.ndarray, width: float, height: float) -> None:
        self.columns = int(math.ceil(width / RASTER_CELL)) + 2
        self.rows = int(math.ceil(height / RASTER_CELL)) + 2
        self.outer = self._summed(*self._reach(marks))
        self.inner = self._summed(*self._within(marks))

    @staticmethod
    def _reach(boxes: np.ndarray) -> tuple[np.ndarray, ...]:
        """The first and last cell (inclusive) each box reaches into: columns, then rows."""
        cells = boxes / RASTER_CELL
        return np.floor(cells[:, 0]), np.ceil(cells[:, 2]) - 1, np.floor(cells[:, 1]), np.ceil(cells[:, 3]) - 1

    @staticmethod
    def _within(boxes: np.ndarray) -> tuple[np.ndarray, ...]:
        """The first and last cell (inclusive) wholly inside each box: columns, then rows."""
        cells = boxes / RASTER_CELL
        return np.ceil(cells[:, 0]), np.floor(cells[:, 2]) - 1, np.ceil(cells[:, 1]), np.floor(cells[:, 3]) - 1

    def _clip(self, x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> tuple[np.ndarray, ...]:
        """Cell ranges (first and last column, first and last row, inclusive) cut to the raster."""
        with np.errstate(invalid="ignore"):
            clipped = (np.clip(x0, 0, self.columns - 1), np.clip(x1, -1, self.columns - 1),
                       np.clip(y0, 0, self.rows - 1), np.clip(y1, -1, self.rows - 1))
        # NaN (a box with no extent in view) becomes -1, an empty range; what clip leaves is finite otherwise
        return tuple(np.where(np.isnan(c), -1.0, c).astype(np.int64) for c in clipped)

    def _summed(self, x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
        """The integral image of the cells some range covers (a zero row and column first)."""
        c0, c1, r0, r1 = self._clip(x0, x1, y0, y1)
        keep = (c0 <= c1) & (r0 <= r1)
        c0, c1, r0, r1 = c0[keep], c1[keep], r0[keep], r1[keep]
        stride, size = self.columns + 1, (self.rows + 1) * (self.columns + 1)
        # each range's four corners in a difference image (+1, -1, -1, +1), counted at once
        corners = (np.bincount(r0 * stride + c0, minlength=size) - np.bincount(r0 * stride + c1 + 1, minlength=size)
                   - np.bincount((r1 + 1) * stride + c0, minlength=size) + np.bincount((r1 + 1) * stride + c1 + 1, minlength=size))
        counts = corners.reshape(self.rows + 1, stride).cumsum(axis=0).cumsum(axis=1)[: self.rows, : self.columns]
        summed = np.zeros((self.rows + 1, self.columns + 1), dtype=np.int64)
        summed[1:, 1:] = (counts > 0).cumsum(axis=0).cumsum(axis=1)
        return summed

    def _count(self, summed: np.ndarray, ranges: tuple[np.ndarray, ...]) -> np.ndarray:
        c0, c1, r0, r1 = ranges
        empty = (c1 < c0) | (r1 < r0)
        c1, r1 = np.maximum(c1, c0 - 1), np.maximum(r1, r0 - 1)
        total = summed[r1 + 1, c1 + 1] - summed[r0, c1 + 1] - summed[r1 + 1, c0] + summed[r0, c0]
        return np.where(empty, 0, total)

    def clear_of_marks(self, boxes: np.ndarray, marks: np.ndarray) -> np.ndarray:
        """For each box (rows of left, top, right, bottom), True when it covers no mark (`boxes_overlap`)."""
        touched = self._count(self.outer, self._clip(*self._reach(boxes)))
        within = self._count(self.inner, self._clip(*self._within(boxes)))
        # a box reaching past the raster (the view and a cell of air) is checked exactly too: marks there are not in it
        limit_x, limit_y = (self.columns - 1) * RASTER_CELL, (self.rows - 1) * RASTER_CELL
        beyond = (boxes[:, 0] < 0) | (boxes[:, 1] < 0) | (boxes[:, 2] > limit_x) | (boxes[:, 3] > limit_y)
        clear = (touched == 0) & ~beyond
        unsure = np.flatnonzero(~clear & ((within == 0) | beyond))
        for start in range(0, len(unsure), 64):  # a mark's edge within a cell of the box's: the exact test
            rows = unsure[start : start + 64]
            b = boxes[rows]
            near = marks[
                (marks[:, 0] < b[:, 2].max()) & (b[:, 0].min() < marks[:, 2])
                & (marks[:, 1] < b[:, 3].max()) & (b[:, 1].min() < marks[:, 3])
            ]
            hit = (
                (b[:, 0:1] < near[None, :, 2]) & (near[None, :, 0] < b[:, 2:3])
                & (b[:, 1:2] < near[None, :, 3]) & (near[None, :, 1] < b[:, 3:4])
            )
            clear[rows] = ~hit.any(axis=1)
        return clear


_rasters: list[tuple[np.ndarray, float, float, _MarkRaster]] = []  # the last raster made, with what it was made of


def _marks_array(marks: Sequence[Box]) -> np.ndarray:
    return np.array(marks, dtype=float).reshape(-1, 4)


def _mark_raster(marks: Sequence[Box], array: np.ndarray, width: float, height: float) -> _MarkRaster:
    """The raster of `marks`, made once for the rooms of one layout (its passes make a room per label)."""
    if _rasters and _rasters[0][1:3] == (width, height) and np.array_equal(_rasters[0][0], array):
        return _rasters[0][3]
    raster = _MarkRaster(array, width, height)
    _rasters[:] = [(array.copy(), width, height, raster)]  # a copy: the caller may change its array later
    return raster


def _segments_cross_boxes(segments: np.ndarray, boxes: np.ndarray, inset: float | np.ndarray = 0.5) -> np.ndarray:
    """`segment_crosses_box` for every segment (rows of x0, y0, x1, y1) against every box: a segments × boxes
    table (a negative `inset` widens the boxes: a line passing that close counts as through; one inset per box
    may be given). The slab method: the part of each segment within the box's columns and within its rows."""
    if len(segments) == 0 or len(boxes) == 0:
        return np.zeros((len(segments), len(boxes)), dtype=bool)
    left, top = boxes[:, 0] + inset, boxes[:, 1] + inset
    right, bottom = boxes[:, 2] - inset, boxes[:, 3] - inset
    x0, y0 = segments[:, 0:1], segments[:, 1:2]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ix = 1.0 / (segments[:, 2:3] - x0)  # ±inf for an upright segment: its slab is all or nothing
        iy = 1.0 / (segments[:, 3:4] - y0)
        ax, bx = (left - x0) * ix, (right - x0) * ix
        ay, by = (top - y0) * iy, (bottom - y0) * iy
        t0 = np.fmax(np.fmax(np.fmin(ax, bx), np.fmin(ay, by)), 0.0)
        t1 = np.fmin(np.fmin(np.fmax(ax, bx), np.fmax(ay, by)), 1.0)
    return (t0 < t1) & (left < right) & (top < bottom)


def _segments_cross_many(a: np.ndarray, b: np.ndarray, skip_start: float = 0.0) -> np.ndarray:
    """`segments_cross` for every segment of `a` against every one of `b` (an a × b table); a crossing within
    `skip_start` pixels of an `a` segment's start does not count (a point drawn on a roof: its leader starts
    on the roof, which float noise may put a hair to either side)."""
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)), dtype=bool)
    ax0, ay0, ax1, ay1 = (a[:, k : k + 1] for k in range(4))
    bx0, by0, bx1, by1 = (b[None, :, k] for k in range(4))

    def side(x0, y0, x1, y1, x, y):  # type: ignore[no-untyped-def]
        return (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)

    d1 = side(ax0, ay0, ax1, ay1, bx0, by0)
    d2 = side(ax0, ay0, ax1, ay1, bx1, by1)
    d3 = side(bx0, by0, bx1, by1, ax0, ay0)
    d4 = side(bx0, by0, bx1, by1, ax1, ay1)
    cross = (d1 * d2 < 0) & (d3 * d4 < 0)
    if skip_start > 0.0:
        # where along `a` the crossing lies: d3 / (d3 - d4) of its length
        length = np.hypot(ax1 - ax0, ay1 - ay0)
        with np.errstate(divide="ignore", invalid="ignore"):
            along = np.where(cross, d3 / np.where(cross, d3 - d4, 1.0), 1.0) * length
        cross &= along > skip_start
    return cross


# ---------------------------------------------------------------- places to try

Candidate = tuple[Box, "tuple[float, float] | None", "Segment | None"]  # box, leader to, roof written on


def _roof_places(label: RoofLabel, w: float, width: float, height: float) -> tuple[list[Candidate], list[Candidate]]:
    """For a label `w` wide: the places beside and on the roof, and those stepped off it within reach."""
    visible = _clip_to_view(label.roof, width, height)
    if visible is None:
        return [], []
    x0, y0, x1, y1 = visible
    if x1 < x0:
        x0, y0, x1, y1 = x1, y1, x0, y0
    length = math.hypot(x1 - x0, y1 - y0)
    h = label.height
    steps = max(int(length // ROOF_STEP), 0)
    positions = [k / steps for k in range(steps + 1)] if steps else [0.5]
    if not label.from_left:
        positions.reverse()
    horizontal = _horizontal(label.roof)
    near: list[Candidate] = []
    on: list[Candidate] = []
    far: list[Candidate] = []
    reach = roof_reach(h)
    along = min(0.5 * w, 0.9 * (x1 - x0))  # a label beside a horizontal roof lies at least this far along it
    for t in positions:
        px, py = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        if horizontal:
            # the label's right end at the position when reading from the right, its left end when from the left
            left = px if label.from_left else px - w
            if min(left + w, x1) - max(left, x0) < along:
                continue  # mostly off the end of its roof: it would read as a label of nothing
            above = (left, py - GAP - h, left + w, py - GAP)
            below = (left, py + GAP, left + w, py + GAP + h)
            near += [(above, None, None), (below, None, None)]
            on.append(((left, py - h / 2, left + w, py + h / 2), None, label.roof))
            for k in range(1, ROOF_REACH_LINES + 1):
                far.append(((left, above[1] - k * h, left + w, above[3] - k * h), (px, py), None))
                far.append(((left, below[1] + k * h, left + w, below[3] + k * h), (px, py), None))
        else:
            rising = (y1 - y0) < 0  # up and to the right on screen
            if rising:  # above-left of the line: bottom-right corner on it; below-right: top-left corner on it
                above = (px - GAP - w, py - GAP - h, px - GAP, py - GAP)
                below = (px + GAP, py + GAP, px + GAP + w, py + GAP + h)
            else:
                above = (px + GAP, py - GAP - h, px + GAP + w, py - GAP)
                below = (px - GAP - w, py + GAP, px - GAP, py + GAP + h)
            near += [(above, None, None), (below, None, None)]
            for k in range(1, ROOF_REACH_LINES + 1):
                far.append(((above[0] - k * h, above[1] - k * h, above[2] - k * h, above[3] - k * h), (px, py), None))
                far.append(((below[0] + k * h, below[1] + k * h, below[2] + k * h, below[3] + k * h), (px, py), None))
    return near + on, far  # the stepped places still to be cut to those within `roof_reach` (see `_within_reach`)


def _within_reach(label: RoofLabel, places: list[tuple[Candidate, bool]]) -> list[tuple[Candidate, bool]]:
    if not places:
        return []
    boxes = np.array([place[0] for place, _ in places], dtype=float)
    near = _boxes_to_segment_distance(boxes, label.roof) <= roof_reach(label.height)
    return [entry for entry, keep in zip(places, near) if keep]


def _boxes_to_segment_distance(boxes: np.ndarray, segment: Segment) -> np.ndarray:
    """`box_to_segment_distance` for many boxes at once."""
    x0, y0, x1, y1 = segment
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    best = np.full(len(boxes), np.inf)
    for cx, cy in ((boxes[:, 0], boxes[:, 1]), (boxes[:, 2], boxes[:, 1]), (boxes[:, 2], boxes[:, 3]), (boxes[:, 0], boxes[:, 3])):
        t = np.zeros(len(boxes)) if length2 == 0 else np.clip(((cx - x0) * dx + (cy - y0) * dy) / length2, 0.0, 1.0)
        best = np.minimum(best, np.hypot(x0 + t * dx - cx, y0 + t * dy - cy))
    for x, y in ((x0, y0), (x1, y1)):
        nx = np.minimum(np.maximum(x, boxes[:, 0]), boxes[:, 2])
        ny = np.minimum(np.maximum(y, boxes[:, 1]), boxes[:, 3])
        best = np.minimum(best, np.hypot(nx - x, ny - y))
    crossed = _segments_cross_boxes(np.array([segment], dtype=float), boxes, 0.0)[0]
    return np.where(crossed, 0.0, best)


def _around_point(label: PointLabel) -> Iterator[Candidate]:
    """Places around the point, nearest first; beyond the first ring with a leader to it."""
    cx, cy, w, h = label.x, label.y, label.width, label.height
    for ring in range(RINGS):
        reach = POINT_GAP + ring * 0.9 * h
        d = reach * 0.7  # diagonal places as near as the straight ones
        leader = None if ring == 0 else (cx, cy)
        for box in (
            (cx + reach, cy - h / 2, cx + reach + w, cy + h / 2),  # right
            (cx + d, cy - d - h, cx + d + w, cy - d),  # above right
            (cx + d, cy + d, cx + d + w, cy + d + h),  # below right
            (cx - reach - w, cy - h / 2, cx - reach, cy + h / 2),  # left
            (cx - d - w, cy - d - h, cx - d, cy - d),  # above left
            (cx - d - w, cy + d, cx - d, cy + d + h),  # below left
            (cx - w / 2, cy - reach - h, cx + w / 2, cy - reach),  # above
            (cx - w / 2, cy + reach, cx + w / 2, cy + reach + h),  # below
        ):
            yield box, leader, None


def _anywhere_boxes(room: _Room, label: PointLabel, reach: float | None = None, count: int = ANYWHERE_CHOICES) -> np.ndarray:
    """The `count` free places nearest the point on a grid of half a line over the view (only those
    whose nearest edge is within `reach` of the point, when given), nearest first, each with a leader to it."""
    w, h, cx, cy = label.width, label.height, label.x, label.y
    step = max(h / 2, 4.0)
    columns = int(max(room.width - w - 2, 0) // step) + 1
    rows = int(max(room.height - h - 2, 0) // step) + 1
    first_column, first_row = 0, 0
    if reach is not None:  # the grid's places that can lie within reach: the same grid, cut to a window
        first_column = max(int((cx - reach - w - 1.0) // step), 0)
        first_row = max(int((cy - reach - h - 1.0) // step), 0)
        columns = min(columns, int((cx + reach - 1.0) // step) + 2) - first_column
        rows = min(rows, int((cy + reach - 1.0) // step) + 2) - first_row
        if columns <= 0 or rows <= 0:
            return np.zeros((0, 4))
    lefts = np.repeat(1.0 + (first_column + np.arange(columns)) * step, rows)  # column by column
    tops = np.tile(1.0 + (first_row + np.arange(rows)) * step, columns)
    boxes = np.column_stack((lefts, tops, lefts + w, tops + h))
    nx = np.minimum(np.maximum(cx, boxes[:, 0]), boxes[:, 2])
    ny = np.minimum(np.maximum(cy, boxes[:, 1]), boxes[:, 3])
    distance = (nx - cx) ** 2 + (ny - cy) ** 2
    order = np.argsort(distance, kind="stable")
    if reach is not None:
        order = order[distance[order] < reach * reach]
    return boxes[list(room.free_places(boxes, order, count))].reshape(-1, 4)


def _anywhere(room: _Room, label: PointLabel, reach: float | None = None, count: int = ANYWHERE_CHOICES) -> Iterator[Placement]:
    """The `count` free places nearest the point (see `_anywhere_boxes`), each with a leader to it."""
    for box in _anywhere_boxes(room, label, reach, count):
        yield Placement(label.key, (float(box[0]), float(box[1]), float(box[2]), float(box[3])), (label.x, label.y))


# ---------------------------------------------------------------- laying out

_cache: OrderedDict[tuple[object, ...], tuple[Placement, ...]] = OrderedDict()


def layout_labels(
    width: float,
    height: float,
    roofs: Sequence[Segment],
    marks: Sequence[Box],
    roof_labels: Sequence[RoofLabel] = (),
    point_labels: Sequence[PointLabel] = (),
    keep: LabelLayout | None = None,
    marks_array: np.ndarray | None = None,
) -> LabelLayout:
    """Place the roof labels, then the point labels, each in the first free place it is offered.

    `keep` is the layout shown now, of the same view with the same roofs, when an edit moved some points
    (typing a declaration moves its operation's point on every keystroke): each label whose place there is
    still its own and still free keeps it, and only the others are placed, by the rules, around them. While
    one point moves, the other labels stay put instead of all taking new places on every keystroke (the
    first-free rule passes a change on to every label placed after it), and a roof label keeps its text. The
    result keeps every rule of a fresh layout (nothing overlaps, covers a point or is crossed by a roof); it
    may be less tidy than a fresh one (a leader a fresh layout would untangle): the view lays its labels out
    afresh once the edits pause.

    The same inputs give the same layout, so one asked for again (an edit undone, a view resized back)
    comes from a cache of the last `CACHE_SIZE` layouts. `marks_array`: the marks as rows, where the caller keeps
    them so (thousands of marks, of which an edit moves one), rather than made from `marks` here.
    """
    kept = tuple(keep.placements) if keep is not None else None
    if marks_array is not None and marks_array.shape != (len(marks), 4):
        raise ValueError(f"marks_array has shape {marks_array.shape}, not ({len(marks)}, 4)")
    marks_key = tuple(marks) if marks_array is None else marks_array.tobytes()
    key = (width, height, tuple(roofs), marks_key, tuple(roof_labels), tuple(point_labels), kept)
    cached = _cache.get(key)
    if cached is not None:
        _cache.move_to_end(key)
        return LabelLayout(list(cached))
    layout = _lay_out(width, height, roofs, marks, roof_labels, point_labels, kept or (), marks_array)
    _cache[key] = tuple(layout.placements)
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return layout


def clear_layout_cache() -> None:
    """Forget remembered layouts (benchmarks measure the layout itself with it)."""
    _cache.clear()


def _lay_out(
    width: float,
    height: float,
    roofs: Sequence[Segment],
    marks: Sequence[Box],
    roof_labels: Sequence[RoofLabel],
    point_labels: Sequence[PointLabel],
    keep: Sequence[Placement] = (),
    array: np.ndarray | None = None,
) -> LabelLayout:
    room = _Room(width, height, roofs, marks, array)
    array = room._marks_array  # the passes below make a room per label: the marks as rows once
    result = LabelLayout()
    held = _held_places(room, roof_labels, point_labels, keep) if keep else {}
    for roof_label in roof_labels:
        placement = held.get(roof_label.key) or _place_roof_label(room, roof_label)
        result.placements.append(placement)
        leader = leader_segment(placement)
        if leader is not None and roof_label.key not in held:
            room.add_leader(leader)
    untangle = len(point_labels) <= UNTANGLED_LABELS and not held
    # Around held labels the few placed again are weighed for tangles too (as when few are laid out), unless many are.
    weigh = untangle or (held and len([p for p in point_labels if p.key not in held]) <= UNTANGLED_LABELS)
    for point_label in point_labels:
        if not (0 <= point_label.x <= width and 0 <= point_label.y <= height):
            result.placements.append(Placement(point_label.key, None))  # its point is out of view
            continue
        placement = held.get(point_label.key)
        if placement is not None:
            result.placements.append(placement)
            continue
        if weigh:
            placement = _place_point_label(room, point_label)
            leader = leader_segment(placement)
            if leader is not None:
                room.add_leader(leader)
        else:
            placement = _place_first_free(room, point_label.key, list(_around_point(point_label)))
            if placement.box is None:  # the nearest free place: looked for near the point first (a small window
                # of the grid: the nearest there is the nearest anywhere), then in the whole view
                near = LEADER_REACH * math.hypot(width, height)
                placement = next(_anywhere(room, point_label, near, 1), None) or next(
                    _anywhere(room, point_label, None, 1), Placement(point_label.key, None)
                )
                if placement.box is not None:
                    room.take(placement.box)
        result.placements.append(placement)
    if untangle:
        _place_again(width, height, roofs, marks, result.placements, len(roof_labels), point_labels, array=array)
        _swap_crossed(width, height, roofs, marks, result.placements, len(roof_labels), array=array)
    return result


def _held_places(
    room: _Room, roof_labels: Sequence[RoofLabel], point_labels: Sequence[PointLabel], keep: Sequence[Placement]
) -> dict[str, Placement]:
    """The labels that keep their place from `keep`, taken in `room` (with their leaders) before any other is
    placed: a roof label whose box still has its size and lies within reach of its roof; a point label whose
    point has not moved (a leader still runs to it, or the box is still one of the places beside it) and whose
    box still has its size; and each of them only where its box is still free."""
    before = {placement.key: placement for placement in keep if placement.box is not None}
    held: dict[str, Placement] = {}
    for label in roof_labels:
        placement = before.get(label.key)
        if placement is None or placement.box is None:
            continue
        box = placement.box
        width = label.short_width if placement.short and label.short_width is not None else label.width
        if not (_same_size(box, width, label.height) and box_to_segment_distance(box, label.roof) <= roof_reach(label.height)):
            continue
        written = np.array([placement.on_roof is not None])
        if room.free_many(np.array([box], dtype=float), label.roof, written)[0]:
            held[label.key] = placement
            room.take(box)
    staying: list[Placement] = []
    for label in point_labels:
        placement = before.get(label.key)
        if placement is None or placement.box is None or not _same_size(placement.box, label.width, label.height):
            continue
        if placement.leader_to is not None:
            if placement.leader_to != (label.x, label.y):
                continue
        elif placement.box not in [box for box, _, _ in itertools.islice(_around_point(label), FIRST_RING)]:
            continue  # not beside its point any more (the places of the first ring are the leaderless ones)
        staying.append(placement)
    if staying:  # checked in one bulk test against what is in the room, then against each other, in order
        boxes = np.array([placement.box for placement in staying], dtype=float)
        free = room.free_many(boxes)
        taken = np.zeros((0, 4))
        for placement, row, is_free in zip(staying, boxes, free):
            if not is_free:
                continue
            if len(taken) and (
                (row[0] - PADDING < taken[:, 2]) & (taken[:, 0] < row[2] + PADDING)
                & (row[1] - PADDING < taken[:, 3]) & (taken[:, 1] < row[3] + PADDING)
            ).any():
                continue
            taken = np.vstack((taken, row))
            held[placement.key] = placement
            assert placement.box is not None
            room.take(placement.box)
    for placement in held.values():  # their leaders, once every held box is in (a leader keeps clear of boxes)
        leader = leader_segment(placement)
        if leader is not None:
            room.add_leader(leader)
    return held


def _same_size(box: Box, width: float, height: float) -> bool:
    return abs((box[2] - box[0]) - width) < 1e-6 and abs((box[3] - box[1]) - height) < 1e-6


def _place_again(
    width: float,
    height: float,
    roofs: Sequence[Segment],
    marks: Sequence[Box],
    placements: list[Placement],
    first: int,
    labels: Sequence[PointLabel],
    passes: int = 1,
    array: np.ndarray | None = None,
) -> None:
    """Labels placed early cannot know the leaders that come later: each operation label that still tangles
    (see `_Room.tangles`, now against every other label) is taken up and placed again among all the others,
    and keeps the new place when it tangles less. Placements from `first` on are the point labels."""
    by_key = {label.key: label for label in labels}
    for _ in range(passes):
        better = False
        for index in range(first, len(placements)):
            current = placements[index]
            if current.box is None:
                continue
            room = _Room(width, height, roofs, marks, array)
            for other_index, other in enumerate(placements):
                if other_index != index and other.box is not None:
                    room.take(other.box)
                    leader = leader_segment(other)
                    if leader is not None:
                        room.add_leader(leader)
            before = room.tangles(current)
            if before == 0:
                continue
            again = _place_point_label(room, by_key[current.key])
            if again.box is not None and room.tangles(again) < before:
                placements[index] = again
                better = True
        if not better:
            return


def _room_without(
    width: float, height: float, roofs: Sequence[Segment], marks: Sequence[Box], placements: list[Placement], left_out: set[int],
    array: np.ndarray | None = None,
) -> _Room:
    """A room with every placement taken (and its leader drawn) but those at the indices `left_out`."""
    room = _Room(width, height, roofs, marks, array)
    for index, placement in enumerate(placements):
        if index not in left_out and placement.box is not None:
            room.take(placement.box)
            leader = leader_segment(placement)
            if leader is not None:
                room.add_leader(leader)
    return room


def _swap_crossed(
    width: float, height: float, roofs: Sequence[Segment], marks: Sequence[Box], placements: list[Placement], first: int,
    array: np.ndarray | None = None,
) -> None:
    """Two leaders that still cross: the two labels trade places (each centred where the other was), when both
    places are free for them and the pair tangles less so. Swapping the ends of two crossing lines uncrosses
    them; placed one by one, neither label could see that trade. Placements from `first` on are point labels."""
    for _ in range(len(placements)):
        swapped = False
        for a in range(first, len(placements)):
            for b in range(a + 1, len(placements)):
                pa, pb = placements[a], placements[b]
                la, lb = leader_segment(pa), leader_segment(pb)
                if la is None or lb is None or not segments_cross(la, lb):
                    continue
                assert pa.box is not None and pb.box is not None
                room = _room_without(width, height, roofs, marks, placements, {a, b}, array)
                before = room.tangles(pa)
                room.take(pa.box)
                room.add_leader(la)
                before += room.tangles(pb)
                room = _room_without(width, height, roofs, marks, placements, {a, b}, array)
                new_a = Placement(pa.key, _centred(pa.box, pb.box), pa.leader_to)
                new_b = Placement(pb.key, _centred(pb.box, pa.box), pb.leader_to)
                assert new_a.box is not None and new_b.box is not None
                if not room.free(new_a.box):
                    continue
                after = room.tangles(new_a)
                room.take(new_a.box)
                leader = leader_segment(new_a)
                assert leader is not None
                room.add_leader(leader)
                if not room.free(new_b.box):
                    continue
                after += room.tangles(new_b)
                if after < before:
                    placements[a], placements[b] = new_a, new_b
                    swapped = True
        if not swapped:
            return


def _centred(box: Box, at: Box) -> Box:
    """`box` moved to be centred where `at` is."""
    cx, cy = (at[0] + at[2]) / 2, (at[1] + at[3]) / 2
    w, h = box[2] - box[0], box[3] - box[1]
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


@dataclass(frozen=True)
class PixelView:
    """A view's range (log units) and size (pixels): where a point of the plot lies in the view's pixels (x right,
    y down), the coordinates of every layout here."""

    x_low: float
    x_high: float
    y_low: float
    y_high: float
    width: float
    height: float

    @property
    def per_x(self) -> float:
        return self.width / (self.x_high - self.x_low)

    @property
    def per_y(self) -> float:
        return self.height / (self.y_high - self.y_low)

    @property
    def usable(self) -> bool:
        """A view with room and a range to lay anything out in."""
        return self.width > 0 and self.height > 0 and self.x_high > self.x_low and self.y_high > self.y_low

    def px(self, x: float) -> float:
        return (x - self.x_low) * self.per_x

    def py(self, y: float) -> float:
        return (self.y_high - y) * self.per_y

    def segment(self, segment: Segment) -> Segment:
        """A segment of the plot in the view's pixels."""
        a, b, c, d = segment
        return self.px(a), self.py(b), self.px(c), self.py(d)

    def at(self, x: float, y: float) -> tuple[float, float]:
        """The point of the plot at pixel (x, y)."""
        return self.x_low + x / self.per_x, self.y_high - y / self.per_y

    def key(self) -> tuple[float, float, float, float]:
        """What places a point in pixels (the left edge's x, the top edge's y, pixels per unit across and down)."""
        return self.x_low, self.y_high, self.per_x, self.per_y


def held_layout(
    previous: LabelLayout | None, previous_labels: Sequence[PointLabel], point_labels: Sequence[PointLabel], same: bool
) -> LabelLayout | None:
    """The layout whose labels a new layout keeps where they are (`layout_labels`' `keep`), or None for a fresh one:
    the previous layout when it was made for the same view, roofs, roof labels, label mode and font (`same`), at
    most one of the labelled points moved (an edit of one operation's declaration moves one; a session opened, a
    device chosen or a setting changed moves several, and gets a fresh layout at once) and at most two labels came
    or went (a selection labels the newly selected operation and may unlabel the one before: the other labels
    stay where they are, and only those two are placed)."""
    if previous is None or not same:
        return None
    before = {label.key: (label.x, label.y) for label in previous_labels}
    now = {label.key: (label.x, label.y) for label in point_labels}
    moved = sum(before[key] != place for key, place in now.items() if key in before)
    return previous if moved <= 1 and len(before.keys() ^ now.keys()) <= 2 else None


def ridge_at_foot(
    size: tuple[float, float],
    lefts: Sequence[float],
    bottom: float,
    width: float,
    height: float,
    near: Callable[[Sequence[Box]], list[Box]],
    lines: Sequence[Segment],
) -> Box | None:
    """The ridge label's place at the foot of the ridge line: its box of `size` with its left edge at the first of
    `lefts` (right of the line, else left of it) and its foot at `bottom` that lies inside the view, covers none of
    the marks (`near(boxes)`: the marks those boxes may cover) and is crossed by none of `lines`; None if neither."""
    w, h = size
    boxes = [(left, bottom - h, left + w, bottom) for left in lefts]
    taken = near(boxes)
    for box in boxes:
        if inside(box, width, height) and not any(boxes_overlap(box, mark) for mark in taken):
            if not any(segment_crosses_box(line, box) for line in lines):
                return box
    return None


def ridge_up_the_line(
    size: tuple[float, float],
    lefts: Sequence[float],
    width: float,
    height: float,
    covering: Callable[[Box], list[Box]],
    lines: Sequence[Segment],
) -> Box | None:
    """The ridge label whose foot was taken (a legend in a bottom corner): the first free place up the ridge line,
    right of it, else left of it (`lefts`): from the view's foot, each box climbs above the highest of what it
    covers (`covering(box)`: the marks and labels it overlaps) or, where a line crosses it, a few pixels; None when
    it reaches the top on both sides."""
    w, h = size
    for left in lefts:
        bottom = height - 2
        while bottom - h >= 2:
            box = (left, bottom - h, left + w, bottom)
            if not inside(box, width, height):
                break
            below = [mark[1] for mark in covering(box)]
            if below:  # above the highest of what it covers
                bottom = min(below) - 1
            elif any(segment_crosses_box(line, box) for line in lines):
                bottom -= 3
            else:
                return box
    return None


def leader_segment(placement: Placement) -> Segment | None:
    """The leader line a placement draws: from its point to the nearest point of its box (None without one)."""
    if placement.box is None or placement.leader_to is None:
        return None
    x, y = placement.leader_to
    nx, ny = nearest_on_box(placement.box, x, y)
    return (x, y, nx, ny)


def _span(segment: Segment) -> Box:
    """The segment's bounding box."""
    return (min(segment[0], segment[2]), min(segment[1], segment[3]), max(segment[0], segment[2]), max(segment[1], segment[3]))


def _near(segment: Segment, box: Box) -> bool:
    """True when the segment's bounding box meets the box (a cheap test before the exact one)."""
    return (
        min(segment[0], segment[2]) < box[2] and box[0] < max(segment[0], segment[2])
        and min(segment[1], segment[3]) < box[3] and box[1] < max(segment[1], segment[3])
    )


def segments_cross(a: Segment, b: Segment) -> bool:
    """True when the two segments properly cross (sharing an end, or touching, does not count)."""

    def side(x0: float, y0: float, x1: float, y1: float, x: float, y: float) -> float:
        return (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)

    d1 = side(*a, b[0], b[1])
    d2 = side(*a, b[2], b[3])
    d3 = side(*b, a[0], a[1])
    d4 = side(*b, a[2], a[3])
    return d1 * d2 < 0 and d3 * d4 < 0


def _crosses_away_from_start(leader: Segment, roof: Segment) -> bool:
    """True when the leader properly crosses the roof further than `LEADER_START` pixels from its point."""
    if not segments_cross(leader, roof):
        return False
    x0, y0, x1, y1 = roof
    d3 = (x1 - x0) * (leader[1] - y0) - (y1 - y0) * (leader[0] - x0)
    d4 = (x1 - x0) * (leader[3] - y0) - (y1 - y0) * (leader[2] - x0)
    return d3 / (d3 - d4) * math.hypot(leader[2] - leader[0], leader[3] - leader[1]) > LEADER_START


def _place_roof_label(room: _Room, label: RoofLabel) -> Placement:
    """The first free place for a roof label, in the order of rule 1: beside and on its roof with the full text,
    then the short one (all tested in one bulk check); then stepped off the roof (found and cut to reach only
    when none of those is free), full text then short, in another."""
    widths = [label.width] + ([label.short_width] if label.short_width is not None and label.short_width < label.width else [])
    near: list[tuple[Candidate, bool]] = []
    stepped: list[tuple[Candidate, bool]] = []
    for w in widths:
        beside, far = _roof_places(label, w, room.width, room.height)
        near += [(place, w != label.width) for place in beside]
        stepped += [(place, w != label.width) for place in far]
    for group in (near, None):
        places = group if group is not None else _within_reach(label, stepped)
        if not places:
            continue
        boxes = np.array([place[0] for place, _ in places], dtype=float)
        on = np.array([place[2] is not None for place, _ in places])
        free = np.flatnonzero(room.free_many(boxes, label.roof, on))
        if len(free):
            (box, leader, on_roof), short = places[int(free[0])]
            room.take(box)
            return Placement(label.key, box, leader, on_roof, short)
    return Placement(label.key, None)


def _place_first_free(room: _Room, key: str, places: list[Candidate]) -> Placement:
    """The first free place of `places` (checked in one bulk test), taken."""
    free = np.flatnonzero(room.free_many(np.array([box for box, _, _ in places], dtype=float)))
    if not len(free):
        return Placement(key, None)
    box, leader, on_roof = places[int(free[0])]
    room.take(box)
    return Placement(key, box, leader, on_roof)


def _leader_length(placement: Placement) -> float:
    leader = leader_segment(placement)
    return 0.0 if leader is None else math.hypot(leader[2] - leader[0], leader[3] - leader[1])


def _leaders_to(boxes: np.ndarray, x: float, y: float) -> np.ndarray:
    """The leader from (x, y) to the nearest point of each box (rows of x0, y0, x1, y1)."""
    nx = np.minimum(np.maximum(x, boxes[:, 0]), boxes[:, 2])
    ny = np.minimum(np.maximum(y, boxes[:, 1]), boxes[:, 3])
    return np.column_stack((np.full(len(boxes), x), np.full(len(boxes), y), nx, ny))


def _place_point_label(room: _Room, label: PointLabel) -> Placement:
    """The nearest free place around the point that tangles nothing; failing that, of the free places around the
    point and the nearest ones anywhere, the one with the least leader length plus `TANGLE_COST` per tangle.

    In bulk: the places around the point are checked and weighed all at once, in the order `_around_point`
    gives them; the first that tangles nothing and whose leader is shorter than the cost of every free place
    before it wins (as if weighed one by one). Else the free places anywhere within that best cost of the point
    are weighed at once, and the cheapest of all (the earliest on a tie) wins."""
    cx, cy = label.x, label.y
    candidates = list(_around_point(label))
    boxes = np.array([box for box, _, _ in candidates], dtype=float)
    free = np.flatnonzero(room.free_many(boxes))
    best_cost, best_box, best_leader = math.inf, None, False
    if len(free):
        boxes = boxes[free]
        with_leader = np.array([candidates[int(index)][1] is not None for index in free])
        leaders = _leaders_to(boxes, cx, cy)
        lengths = np.where(with_leader, np.hypot(leaders[:, 2] - cx, leaders[:, 3] - cy), 0.0)
        tangles = room.tangles_many(boxes, leaders, with_leader, cx, cy)
        costs = lengths + TANGLE_COST * tangles
        before = np.minimum.accumulate(np.concatenate(([math.inf], costs[:-1])))
        clean = np.flatnonzero((tangles == 0) & (lengths < before))
        chosen = int(clean[0]) if len(clean) else int(np.argmin(costs))
        best_cost, best_box, best_leader = float(costs[chosen]), boxes[chosen], bool(with_leader[chosen])
        if len(clean):
            return _take(room, label, best_box, best_leader)
    # Anywhere within the best cost so far, and within `LEADER_REACH` of the view's diagonal: a label further off
    # than that reads as nobody's, tangled or not (only a label with no place nearer goes further).
    reach = LEADER_REACH * math.hypot(room.width, room.height)
    anywhere = _anywhere_boxes(room, label, min(best_cost, reach))
    if best_box is None and not len(anywhere):
        anywhere = _anywhere_boxes(room, label)
    if len(anywhere):
        leaders = _leaders_to(anywhere, cx, cy)
        lengths = np.hypot(leaders[:, 2] - cx, leaders[:, 3] - cy)
        costs = lengths + TANGLE_COST * room.tangles_many(anywhere, leaders, np.ones(len(anywhere), dtype=bool), cx, cy)
        chosen = int(np.argmin(costs))
        if costs[chosen] < best_cost:
            best_box, best_leader = anywhere[chosen], True
    if best_box is None:
        return Placement(label.key, None)
    return _take(room, label, best_box, best_leader)


def _take(room: _Room, label: PointLabel, box: np.ndarray, with_leader: bool) -> Placement:
    placed = (float(box[0]), float(box[1]), float(box[2]), float(box[3]))
    room.take(placed)
    return Placement(label.key, placed, (label.x, label.y) if with_leader else None)


# ---------------------------------------------------------------- checking


def layout_faults(
    layout: LabelLayout,
    width: float,
    height: float,
    roofs: Sequence[Segment],
    marks: Sequence[Box],
    roof_labels: Sequence[RoofLabel] = (),
) -> list[str]:
    """Every broken rule in a layout, one line each (empty when it keeps them all).

    A label written on its own roof may have that roof (and only it) run through it; a roof label in
    `roof_labels` must lie within `roof_reach` of its roof.
    """
    faults = []
    placed = [(p.key, p.box, p.on_roof) for p in layout.placements if p.box is not None]
    for index, (key, box, on_roof) in enumerate(placed):
        if not inside(box, width, height, margin=0.0):
            faults.append(f"{key!r} reaches outside the view")
        for other_key, other, _ in placed[index + 1 :]:
            if boxes_overlap(box, other):
                faults.append(f"{key!r} overlaps {other_key!r}")
        for number, roof in enumerate(roofs):
            if segment_crosses_box(roof, box) and not (on_roof is not None and _horizontal(on_roof) and _collinear(on_roof, roof)):
                faults.append(f"{key!r} is crossed by roof {number}")
        for number, mark in enumerate(marks):
            if boxes_overlap(box, mark):
                faults.append(f"{key!r} covers mark {number}")
    for label in roof_labels:
        placement = layout.placement(label.key)
        if placement is not None and placement.box is not None:
            distance = box_to_segment_distance(placement.box, label.roof)
            if distance > roof_reach(label.height) + 1e-6:
                faults.append(f"{label.key!r} is {distance:.0f} px from its roof (at most {roof_reach(label.height):.0f})")
    return faults


def leader_tangles(layout: LabelLayout, roofs: Sequence[Segment] = (), marks: Sequence[Box] = ()) -> list[str]:
    """Every crossing of two leader lines, every leader that runs through (or within `LEADER_AIR` of) another
    label, and, given the roofs and marks, every roof a leader crosses away from its point and every other
    point's mark it runs through; one line each."""
    tangles = []
    placed = [p for p in layout.placements if p.box is not None]
    for index, placement in enumerate(placed):
        leader = leader_segment(placement)
        if leader is None:
            continue
        for other in placed:
            if other is placement:
                continue
            assert other.box is not None
            if segment_crosses_box(leader, other.box, -LEADER_AIR):
                tangles.append(f"{placement.key!r}'s leader runs through {other.key!r}")
        for other in placed[index + 1 :]:
            other_leader = leader_segment(other)
            if other_leader is not None and segments_cross(leader, other_leader):
                tangles.append(f"{placement.key!r}'s leader crosses {other.key!r}'s")
        for number, roof in enumerate(roofs):
            if _crosses_away_from_start(leader, roof):
                tangles.append(f"{placement.key!r}'s leader crosses roof {number}")
        x, y = leader[0], leader[1]
        for number, mark in enumerate(marks):
            if not (mark[0] <= x <= mark[2] and mark[1] <= y <= mark[3]) and segment_crosses_box(leader, mark):
                tangles.append(f"{placement.key!r}'s leader runs through mark {number}")
    return tangles
