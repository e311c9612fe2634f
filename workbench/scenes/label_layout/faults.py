"""A finished layout checked against the rules: what overlaps, covers or is crossed (`layout_faults`), and which
leaders tangle (`leader_tangles`)."""

from __future__ import annotations

from typing import Sequence

from workbench.scenes.label_layout.geometry import (
    _collinear,
    _crosses_away_from_start,
    _horizontal,
    box_to_segment_distance,
    boxes_overlap,
    inside,
    leader_segment,
    roof_reach,
    segment_crosses_box,
    segments_cross,
)
from workbench.scenes.label_layout.labels import LEADER_AIR, Box, LabelLayout, RoofLabel, Segment


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
