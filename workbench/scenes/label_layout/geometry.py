"""Plain geometry in a plot's pixels (x right, y down): boxes, segments, leader lines and how they meet."""

from __future__ import annotations

import math

from workbench.scenes.label_layout.labels import GAP, LEADER_START, ROOF_REACH_LINES, Box, Placement, Segment


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


def clip_to_view(segment: Segment, width: float, height: float) -> Segment | None:
    """The part of a segment (pixels) inside the view from (0, 0) to (width, height), or None (Liang–Barsky).
    The SVG writer draws roofs so clipped: they stop at the plot's frame in any renderer, clip paths or not."""
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
