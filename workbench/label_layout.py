"""Where plot labels go: off the roofs, off every point, off each other, at any text size.

Pure geometry in a plot's pixels (x to the right, y down), no Qt: the
roofline view measures its label texts, hands their sizes, the roofs (as line
segments) and the marks (as boxes) to `layout_labels`, and draws what comes
back. A label that had to move away from its point gets a leader line to it.

Rules, in order of placement:

1. Roof labels lie along their own roof, just above or below it, taking the
   first free place from the right end of the visible roof leftwards (the
   memory roof's from its left end rightwards); if the roof has no free place
   beside it, the label steps off the roof in whole text lines and gets a
   leader to the roof.
2. Operation labels take the first free place around their point, nearest
   first (eight directions, widening rings), then the nearest free place
   anywhere in the view, with a leader line.

A place is free when the box lies inside the view, covers no mark, overlaps
no label already placed (with `PADDING` of air) and no roof segment passes
through it. A label with no free place anywhere is left unplaced (`box`
None): the view lists it in the legend rather than draw it over something.
`layout_faults` checks a finished layout against the same rules; tests use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

Box = tuple[float, float, float, float]  # left, top, right, bottom
Segment = tuple[float, float, float, float]  # x0, y0, x1, y1

PADDING = 2.0  # pixels of air kept between two labels
GAP = 4.0  # pixels between a roof and its label
POINT_GAP = 9.0  # pixels between a point's centre and its own label
ROOF_STEP = 24.0  # pixels between places tried along a roof
RINGS = 6  # rings of places tried around a point before searching the whole view


@dataclass(frozen=True)
class RoofLabel:
    """A label that belongs to a roof (the segment, in pixels)."""

    key: str
    width: float
    height: float
    roof: Segment
    from_left: bool = False  # try places from the roof's left end (the memory roof) rather than its right


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
    """Where one label went: its box (None when no place was free) and the point a leader line runs to."""

    key: str
    box: Box | None
    leader_to: tuple[float, float] | None = None


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


# ---------------------------------------------------------------- placing


class _Room:
    """The view, what must stay uncovered, and the labels placed so far."""

    def __init__(self, width: float, height: float, roofs: Sequence[Segment], marks: Sequence[Box]) -> None:
        self.width = width
        self.height = height
        self.roofs = [roof for roof in roofs]
        self.marks = list(marks)
        self.taken: list[Box] = []

    def free(self, box: Box) -> bool:
        if not inside(box, self.width, self.height):
            return False
        for mark in self.marks:
            if boxes_overlap(box, mark):
                return False
        for label in self.taken:
            if boxes_overlap(box, label, PADDING):
                return False
        for roof in self.roofs:
            if segment_crosses_box(roof, box):
                return False
        return True


def _along_roof(label: RoofLabel, width: float, height: float) -> Iterator[tuple[Box, tuple[float, float] | None]]:
    """Places beside the roof (no leader), stepped off it line by line, then anywhere (with a leader to the roof)."""
    visible = _clip_to_view(label.roof, width, height)
    if visible is None:
        return
    x0, y0, x1, y1 = visible
    if x1 < x0:
        x0, y0, x1, y1 = x1, y1, x0, y0
    length = math.hypot(x1 - x0, y1 - y0)
    w, h = label.width, label.height
    steps = max(int(length // ROOF_STEP), 0)
    positions = [k / steps for k in range(steps + 1)] if steps else [0.5]
    if not label.from_left:
        positions.reverse()
    horizontal = abs(y1 - y0) <= 0.05 * max(abs(x1 - x0), 1.0)
    near: list[tuple[Box, tuple[float, float] | None]] = []
    far: list[tuple[Box, tuple[float, float] | None]] = []
    for t in positions:
        px, py = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        if horizontal:
            # the label's right end at the position when reading from the right, its left end when from the left
            left = px if label.from_left else px - w
            above = (left, py - GAP - h, left + w, py - GAP)
            below = (left, py + GAP, left + w, py + GAP + h)
            near += [(above, None), (below, None)]
            for k in (1, 2, 3):
                far += [((left, above[1] - k * h, left + w, above[3] - k * h), (px, py))]
                far += [((left, below[1] + k * h, left + w, below[3] + k * h), (px, py))]
        else:
            rising = (y1 - y0) < 0  # up and to the right on screen
            if rising:  # above-left of the line: bottom-right corner on it; below-right: top-left corner on it
                above = (px - GAP - w, py - GAP - h, px - GAP, py - GAP)
                below = (px + GAP, py + GAP, px + GAP + w, py + GAP + h)
            else:
                above = (px + GAP, py - GAP - h, px + GAP + w, py - GAP)
                below = (px - GAP - w, py + GAP, px - GAP, py + GAP + h)
            near += [(above, None), (below, None)]
            for k in (1, 2, 3):
                far += [((above[0] - k * h, above[1] - k * h, above[2] - k * h, above[3] - k * h), (px, py))]
                far += [((below[0] + k * h, below[1] + k * h, below[2] + k * h, below[3] + k * h), (px, py))]
    yield from near
    yield from far

    def anchor(box: Box) -> tuple[float, float]:
        return _nearest_on_segment((x0, y0, x1, y1), (box[0] + box[2]) / 2, (box[1] + box[3]) / 2)

    yield from _anywhere(w, h, width, height, anchor)


def _nearest_on_segment(segment: Segment, x: float, y: float) -> tuple[float, float]:
    x0, y0, x1, y1 = segment
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else min(max(((x - x0) * dx + (y - y0) * dy) / length2, 0.0), 1.0)
    return x0 + t * dx, y0 + t * dy


def _anywhere(
    w: float, h: float, width: float, height: float, anchor: Callable[[Box], tuple[float, float]]
) -> Iterator[tuple[Box, tuple[float, float] | None]]:
    """Every place in the view on a grid of half a line, the one nearest its anchor first, with a leader to it."""
    step = max(h / 2, 4.0)
    columns = int(max(width - w - 2, 0) // step) + 1
    rows = int(max(height - h - 2, 0) // step) + 1
    grid = []
    for i in range(columns):
        left = 1.0 + i * step
        for j in range(rows):
            top = 1.0 + j * step
            box = (left, top, left + w, top + h)
            ax, ay = anchor(box)
            nx, ny = nearest_on_box(box, ax, ay)
            grid.append(((nx - ax) ** 2 + (ny - ay) ** 2, box, (ax, ay)))
    grid.sort(key=lambda item: item[0])
    for _, box, to in grid:
        yield box, to


def _around_point(label: PointLabel, width: float, height: float) -> Iterator[tuple[Box, tuple[float, float] | None]]:
    """Places around the point, nearest first; beyond the first ring with a leader; then anywhere, nearest first.

    A generator: the search of the whole view is built only for a label that the rings could not place.
    """
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
            yield box, leader
    yield from _anywhere(w, h, width, height, lambda box: (cx, cy))


def layout_labels(
    width: float,
    height: float,
    roofs: Sequence[Segment],
    marks: Sequence[Box],
    roof_labels: Sequence[RoofLabel] = (),
    point_labels: Sequence[PointLabel] = (),
) -> LabelLayout:
    """Place the roof labels, then the point labels, each in the first free place it is offered."""
    room = _Room(width, height, roofs, marks)
    result = LabelLayout()
    for roof_label in roof_labels:
        result.placements.append(_place(room, roof_label.key, _along_roof(roof_label, width, height)))
    for point_label in point_labels:
        if not (0 <= point_label.x <= width and 0 <= point_label.y <= height):
            result.placements.append(Placement(point_label.key, None))  # its point is out of view
            continue
        result.placements.append(_place(room, point_label.key, _around_point(point_label, width, height)))
    return result


def _place(room: _Room, key: str, places: Iterable[tuple[Box, tuple[float, float] | None]]) -> Placement:
    for box, leader in places:
        if room.free(box):
            room.taken.append(box)
            return Placement(key, box, leader)
    return Placement(key, None)


# ---------------------------------------------------------------- checking


def layout_faults(layout: LabelLayout, width: float, height: float, roofs: Sequence[Segment], marks: Sequence[Box]) -> list[str]:
    """Every broken rule in a layout, one line each (empty when it keeps them all)."""
    faults = []
    placed = [(p.key, p.box) for p in layout.placements if p.box is not None]
    for index, (key, box) in enumerate(placed):
        if not inside(box, width, height, margin=0.0):
            faults.append(f"{key!r} reaches outside the view")
        for other_key, other in placed[index + 1 :]:
            if boxes_overlap(box, other):
                faults.append(f"{key!r} overlaps {other_key!r}")
        for number, roof in enumerate(roofs):
            if segment_crosses_box(roof, box):
                faults.append(f"{key!r} is crossed by roof {number}")
        for number, mark in enumerate(marks):
            if boxes_overlap(box, mark):
                faults.append(f"{key!r} covers mark {number}")
    return faults
