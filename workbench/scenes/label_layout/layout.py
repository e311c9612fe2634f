"""Laying out: `layout_labels` (remembered by its inputs), the passes that place, hold, place again and swap labels;
`held_layout` and `PixelView` for a view that moves one point; where the ridge label goes."""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from workbench.scenes.label_layout.geometry import (
    box_to_segment_distance,
    boxes_overlap,
    inside,
    leader_segment,
    roof_reach,
    segment_crosses_box,
    segments_cross,
)
from workbench.scenes.label_layout.labels import (
    CACHE_SIZE,
    FIRST_RING,
    LEADER_REACH,
    PADDING,
    UNTANGLED_LABELS,
    Box,
    LabelLayout,
    Placement,
    PointLabel,
    RoofLabel,
    Segment,
)
from workbench.scenes.label_layout.places import (
    _anywhere,
    _around_point,
    _place_first_free,
    _place_point_label,
    _place_roof_label,
)
from workbench.scenes.label_layout.room import _Room

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
