"""The room of one layout: the view, what must stay uncovered and the labels placed so far, indexed by cell; the
raster of many marks; the NumPy tables that test many boxes and segments at once."""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np

from workbench.scenes.label_layout.geometry import (
    clip_to_view,
    _collinear,
    _crosses_away_from_start,
    _near,
    _span,
    inside,
    leader_segment,
    segment_crosses_box,
    segments_cross,
)
from workbench.scenes.label_layout.labels import (
    CELL,
    CROSSING_WEIGHT,
    LEADER_AIR,
    LEADER_START,
    PADDING,
    RASTER_CELL,
    RASTER_FROM,
    ROOF_WEIGHT,
    Box,
    Placement,
    Segment,
)


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
        visible = clip_to_view(segment, self.width, self.height)
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
