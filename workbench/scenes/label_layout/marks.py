"""Which points get a label (`labelled_points`), and the operations' marks in the view's pixels: `PointMarks`
(moved one point at a time) and `MarkGrid` (indexed by cell for the view's own questions)."""

from __future__ import annotations

import bisect
import heapq
import math
from typing import Iterable, Iterator, Sequence

import numpy as np

from workbench.scenes.label_layout.geometry import boxes_overlap
from workbench.scenes.label_layout.labels import CELL, EVERY_LABEL_UP_TO, FEW_LABELS, Box


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
