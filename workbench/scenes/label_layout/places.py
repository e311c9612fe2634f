"""Where a label may go (beside or on its roof, around its point, anywhere in the view) and the choice among those
places (rules 1 and 2 of the package's docstring)."""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from workbench.scenes.label_layout.geometry import clip_to_view, _horizontal, leader_segment, roof_reach
from workbench.scenes.label_layout.labels import (
    ANYWHERE_CHOICES,
    GAP,
    LEADER_REACH,
    POINT_GAP,
    RINGS,
    ROOF_REACH_LINES,
    ROOF_STEP,
    TANGLE_COST,
    Box,
    Placement,
    PointLabel,
    RoofLabel,
    Segment,
)
from workbench.scenes.label_layout.room import _Room, _segments_cross_boxes

Candidate = tuple[Box, "tuple[float, float] | None", "Segment | None"]  # box, leader to, roof written on


def _roof_places(label: RoofLabel, w: float, width: float, height: float) -> tuple[list[Candidate], list[Candidate]]:
    """For a label `w` wide: the places beside and on the roof, and those stepped off it within reach."""
    visible = clip_to_view(label.roof, width, height)
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
