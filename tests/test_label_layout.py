"""Label layout: pure geometry, checked without Qt."""

from __future__ import annotations

import random

import pytest

from workbench.scenes.label_layout import (
    PointLabel,
    RoofLabel,
    box_to_segment_distance,
    boxes_overlap,
    layout_faults,
    layout_labels,
    leader_tangles,
    roof_reach,
    segment_crosses_box,
    segments_cross,
)

W, H = 800.0, 600.0


def test_geometry_primitives() -> None:
    assert boxes_overlap((0, 0, 10, 10), (5, 5, 15, 15))
    assert not boxes_overlap((0, 0, 10, 10), (10, 0, 20, 10))  # touching is not overlapping
    assert boxes_overlap((0, 0, 10, 10), (11, 0, 20, 10), padding=2)
    assert segment_crosses_box((-5, 5, 20, 5), (0, 0, 10, 10))
    assert not segment_crosses_box((-5, 10, 20, 10), (0, 0, 10, 10))  # along an edge: touching
    assert segment_crosses_box((0, 15, 15, 0), (0, 0, 10, 10))  # a diagonal across a corner
    assert not segment_crosses_box((0, 20, 20, 0), (0, 0, 10, 10))  # one touching the corner only
    assert not segment_crosses_box((0, 30, 30, 0), (0, 0, 10, 10))  # passes below-right of it


def roofline(points: int, seed: int, label_height: float):  # type: ignore[no-untyped-def]
    """A memory diagonal, two compute roofs, and points packed near the ridge, as in a batched-GEMM sweep."""
    memory = (0.0, 560.0, 520.0, 80.0)
    roofs = [memory, (520.0, 80.0, 2000.0, 80.0), (430.0, 160.0, 2000.0, 160.0)]
    rng = random.Random(seed)
    marks, labels = [], []
    for index in range(points):
        x = rng.uniform(250, 700)
        y = max(80.0, 560.0 - (560.0 - 80.0) * x / 520.0) + rng.uniform(-2, 2)
        marks.append((x - 8, y - 8, x + 8, y + 8))
        labels.append(PointLabel(f"op{index}", 7.5 * label_height, label_height, x, y))
    roof_labels = [
        RoofLabel("memory", 12 * label_height, label_height, memory, from_left=True),
        RoofLabel("bf16", 10 * label_height, label_height, roofs[1]),
        RoofLabel("fp32", 10 * label_height, label_height, roofs[2]),
    ]
    return roofs, marks, roof_labels, labels


@pytest.mark.parametrize("label_height", [14.0, 19.0, 26.0])
@pytest.mark.parametrize("seed", range(5))
def test_crowded_points_get_labels_that_collide_with_nothing(label_height: float, seed: int) -> None:
    roofs, marks, roof_labels, labels = roofline(10, seed, label_height)
    layout = layout_labels(W, H, roofs, marks, roof_labels, labels)
    assert layout.unplaced == []
    assert layout_faults(layout, W, H, roofs, marks) == []


def test_a_label_that_had_to_move_gets_a_leader_and_one_beside_its_point_does_not() -> None:
    marks = [(392.0, 292.0, 408.0, 308.0)]
    alone = layout_labels(W, H, [], marks, point_labels=[PointLabel("a", 80, 14, 400, 300)])
    assert alone.placements[0].leader_to is None
    # block every place in the first ring with other marks: the label goes further out, with a leader
    blockers = [(300.0, 240.0, 520.0, 360.0)]
    pushed = layout_labels(W, H, [], [*marks, *blockers], point_labels=[PointLabel("a", 80, 14, 400, 300)])
    placement = pushed.placements[0]
    assert placement.box is not None and placement.leader_to == (400, 300)
    assert layout_faults(pushed, W, H, [], [*marks, *blockers]) == []


def test_roof_labels_stay_beside_their_roof_and_off_the_others() -> None:
    roofs = [(0.0, 500.0, 400.0, 100.0), (400.0, 100.0, 800.0, 100.0)]
    layout = layout_labels(W, H, roofs, [], [RoofLabel("mem", 150, 16, roofs[0], from_left=True), RoofLabel("fp16", 120, 16, roofs[1])])
    mem, fp16 = layout.placements
    assert mem.box is not None and fp16.box is not None
    assert mem.leader_to is None and fp16.leader_to is None
    assert fp16.box[3] == pytest.approx(100 - 4) and fp16.box[2] == pytest.approx(800 - 1, abs=25)  # just above, at the right
    assert mem.box[0] < 100  # near the left end of the memory roof
    assert layout_faults(layout, W, H, roofs, []) == []


def test_a_label_with_no_room_anywhere_is_left_unplaced_rather_than_drawn_over_something() -> None:
    everything = [(0.0, 0.0, W, H)]
    layout = layout_labels(W, H, [], everything, point_labels=[PointLabel("a", 80, 14, 400, 300)])
    assert layout.unplaced == ["a"]


def test_faults_are_reported() -> None:
    from workbench.scenes.label_layout import LabelLayout, Placement

    bad = LabelLayout([Placement("a", (10, 10, 100, 30)), Placement("b", (50, 20, 150, 40))])
    faults = layout_faults(bad, W, H, [(0.0, 25.0, 800.0, 25.0)], [(140.0, 30.0, 160.0, 50.0)])
    assert "'a' overlaps 'b'" in faults and "'a' is crossed by roof 0" in faults and "'b' covers mark 0" in faults


def test_a_roof_hemmed_in_by_its_neighbours_keeps_its_label_on_its_own_line_not_far_away() -> None:
    """Roofs 22 px apart with 26 px labels (a projector's text): no room beside the middle roof, so its label is
    written on it (the view breaks the line under the text) rather than sent far off on a leader."""
    roofs = [(300.0, 200.0 + 22.0 * k, 2000.0, 200.0 + 22.0 * k) for k in range(3)]
    labels = [RoofLabel(f"roof {k}", 300.0, 26.0, roofs[k]) for k in range(3)]
    layout = layout_labels(W, H, roofs, [], labels)
    middle = layout.placement("roof 1")
    assert middle is not None and middle.box is not None
    assert middle.leader_to is None and middle.on_roof == roofs[1]
    assert middle.box[1] < roofs[1][1] < middle.box[3]  # straddles its own line
    assert layout_faults(layout, W, H, roofs, [], labels) == []


@pytest.mark.parametrize("label_height", [14.0, 19.0, 26.0])
@pytest.mark.parametrize("seed", range(5))
def test_every_roof_label_stays_within_reach_of_its_roof(label_height: float, seed: int) -> None:
    roofs, marks, roof_labels, labels = roofline(10, seed, label_height)
    layout = layout_labels(W, H, roofs, marks, roof_labels, labels)
    for label in roof_labels:
        placement = layout.placement(label.key)
        assert placement is not None and placement.box is not None
        assert box_to_segment_distance(placement.box, label.roof) <= roof_reach(label_height)


def test_a_roof_label_is_left_unplaced_rather_than_drawn_far_from_its_roof() -> None:
    roof = (100.0, 300.0, 700.0, 300.0)
    # every place within reach of the roof is covered; free room is left only far below it
    marks = [(0.0, 200.0, W, 299.0), (0.0, 301.0, W, 420.0)]
    layout = layout_labels(W, H, [roof], marks, [RoofLabel("roof", 120.0, 20.0, roof)])
    assert layout.unplaced == ["roof"]


def test_faults_name_a_roof_label_far_from_its_roof_and_a_label_written_on_another_roof() -> None:
    from workbench.scenes.label_layout import LabelLayout, Placement

    roofs = [(0.0, 100.0, 800.0, 100.0), (0.0, 140.0, 800.0, 140.0)]
    far = LabelLayout([Placement("roof", (10, 400, 110, 420), (50, 100))])
    faults = layout_faults(far, W, H, roofs, [], [RoofLabel("roof", 100, 20, roofs[0])])
    assert any("'roof' is" in fault and "from its roof" in fault for fault in faults)
    # written on roof 0, but placed across roof 1: that roof still counts
    wrong = LabelLayout([Placement("roof", (10, 130, 110, 150), None, roofs[0])])
    assert layout_faults(wrong, W, H, roofs, []) == ["'roof' is crossed by roof 1"]


def test_the_same_inputs_give_the_same_layout_from_the_cache_and_afresh() -> None:
    from workbench.scenes.label_layout import clear_layout_cache

    roofs, marks, roof_labels, labels = roofline(10, 3, 19.0)
    clear_layout_cache()
    first = layout_labels(W, H, roofs, marks, roof_labels, labels)
    again = layout_labels(W, H, roofs, marks, roof_labels, labels)
    clear_layout_cache()
    fresh = layout_labels(W, H, roofs, marks, roof_labels, labels)
    assert first.placements == again.placements == fresh.placements
    again.placements.clear()  # a caller changing its copy does not change what the cache gives next
    assert layout_labels(W, H, roofs, marks, roof_labels, labels).placements == first.placements


def test_the_bulk_search_agrees_with_the_one_place_check() -> None:
    """The NumPy test of many places at once and the per-place test say the same of every place."""
    import numpy as np

    from workbench.scenes.label_layout import _Room

    roofs, marks, _, _ = roofline(12, 7, 19.0)
    room = _Room(W, H, roofs, marks)
    room.take((600.0, 300.0, 700.0, 320.0))
    rng = random.Random(5)
    boxes = []
    for _ in range(2000):
        x, y = rng.uniform(-20, W), rng.uniform(-20, H)
        boxes.append((x, y, x + rng.uniform(20, 200), y + rng.uniform(10, 30)))
    array = np.array(boxes)
    bulk = room._free_many(array, np.array([(*m, 0.0) for m in marks] + [(600.0, 300.0, 700.0, 320.0, 2.0)]))
    assert [bool(b) for b in bulk] == [room.free(box) for box in boxes]
    assert 0 < sum(bulk) < len(boxes)


def test_a_roof_label_too_long_for_its_roof_takes_its_short_text_before_going_off_the_roof() -> None:
    """A roof whose visible part is shorter than its label, below another roof: the short text fits beside it."""
    memory = (0.0, 560.0, 500.0, 60.0)
    roofs = [memory, (500.0, 60.0, 800.0, 60.0), (470.0, 90.0, 800.0, 90.0)]
    labels = [RoofLabel("top", 200.0, 20.0, roofs[1]), RoofLabel("lower", 330.0, 20.0, roofs[2], short_width=180.0)]
    layout = layout_labels(W, H, roofs, [], labels)
    lower = layout.placement("lower")
    assert lower is not None and lower.box is not None and lower.short
    assert lower.box[2] - lower.box[0] == pytest.approx(180.0) and lower.leader_to is None
    assert layout_faults(layout, W, H, roofs, [], labels) == []
    # beside its roof: not off the roof's left end, where it would label nothing
    assert min(lower.box[2], 800.0) - max(lower.box[0], 470.0) >= 0.5 * 180.0


def test_segments_cross() -> None:
    assert segments_cross((0, 0, 10, 10), (0, 10, 10, 0))
    assert not segments_cross((0, 0, 10, 10), (10, 10, 20, 0))  # sharing an end
    assert not segments_cross((0, 0, 10, 0), (0, 5, 10, 5))  # parallel


def test_labels_of_points_packed_along_a_roof_under_the_top_edge_get_leaders_that_do_not_cross() -> None:
    """Six points along a compute roof just under the plot's top (a batched-GEMM sweep at presentation size):
    every label has to go below, on a leader. Placed greedily, each on the nearest free place, the later leaders
    crossed the earlier labels and each other; which label was whose could not be read."""
    roofs = [(0.0, 400.0, 200.0, 40.0), (200.0, 40.0, 800.0, 40.0)]
    points = [(200.0 + 30.0 * index, 40.0) for index in range(6)]
    marks = [(x - 8, y - 8, x + 8, y + 8) for x, y in points]
    labels = [PointLabel(f"operation {index}", 170.0, 26.0, x, y) for index, (x, y) in enumerate(points)]
    layout = layout_labels(W, 300.0, roofs, marks, (), labels)
    assert layout_faults(layout, W, 300.0, roofs, marks) == []
    assert all(p.box is not None for p in layout.placements)
    assert [t for t in leader_tangles(layout) if " crosses " in t] == []



def test_the_bulk_geometry_agrees_with_the_one_at_a_time_geometry() -> None:
    """The NumPy tables (segments × boxes, segments × segments, boxes' distance to a segment) say what the
    plain-Python tests say of each pair, upright and flat segments and touching ends included."""
    import numpy as np

    from workbench.scenes.label_layout import _boxes_to_segment_distance, _segments_cross_boxes, _segments_cross_many

    rng = random.Random(11)
    segments = [tuple(rng.choice((10.0, 50.0, 90.0)) if rng.random() < 0.2 else rng.uniform(0, 100) for _ in range(4)) for _ in range(150)]
    segments += [(50.0, 0.0, 50.0, 100.0), (0.0, 50.0, 100.0, 50.0), (10.0, 10.0, 90.0, 90.0)]
    boxes = [(x, y, x + rng.uniform(0, 40), y + rng.uniform(0, 40)) for x, y in ((rng.uniform(0, 100), rng.uniform(0, 100)) for _ in range(120))]
    boxes += [(10.0, 10.0, 50.0, 50.0), (40.0, 40.0, 60.0, 60.0)]
    for inset in (0.5, -2.0):  # (at 0 the one-at-a-time test counts a segment along an edge; only distances use 0)
        table = _segments_cross_boxes(np.array(segments), np.array(boxes), inset)
        assert [[bool(v) for v in row] for row in table] == [[segment_crosses_box(s, b, inset) for b in boxes] for s in segments]
    table = _segments_cross_many(np.array(segments), np.array(segments))
    assert [[bool(v) for v in row] for row in table] == [[segments_cross(a, b) for b in segments] for a in segments]
    for segment in segments[:30]:
        assert np.allclose(_boxes_to_segment_distance(np.array(boxes), segment), [box_to_segment_distance(b, segment) for b in boxes])


def test_places_weighed_in_bulk_tangle_as_each_weighed_alone() -> None:
    """`tangles_many` (the layout weighs a point's places at once) counts what `tangles` counts for each place."""
    import numpy as np

    from workbench.scenes.label_layout import Placement, _leaders_to, _Room

    roofs, marks, _, labels = roofline(12, 3, 19.0)
    layout = layout_labels(W, H, roofs, marks, (), labels)
    room = _Room(W, H, roofs, marks)
    for placement in layout.placements[:8]:
        room.take(placement.box)
        if placement.leader_to is not None:
            room.add_leader((*placement.leader_to, *nearest_on_box_of(placement)))
    rng = random.Random(4)
    for label in labels[8:]:
        boxes = np.array([(x, y, x + label.width, y + label.height) for x, y in ((rng.uniform(0, W), rng.uniform(0, H)) for _ in range(60))])
        with_leader = np.array([rng.random() < 0.8 for _ in range(len(boxes))])
        bulk = room.tangles_many(boxes, _leaders_to(boxes, label.x, label.y), with_leader, label.x, label.y)
        alone = [
            room.tangles(Placement(label.key, tuple(box), (label.x, label.y) if drawn else None))
            for box, drawn in zip(boxes.tolist(), with_leader)
        ]
        assert list(bulk) == alone
        assert sum(alone) > 0


def nearest_on_box_of(placement):  # type: ignore[no-untyped-def]
    from workbench.scenes.label_layout import leader_segment

    segment = leader_segment(placement)
    return segment[2], segment[3]


def test_a_leader_through_a_roof_label_tangles_and_one_clear_of_it_does_not() -> None:
    """A roof label is a label: a point label's leader running through it costs a tangle (placed and weighed in
    bulk or alone alike); a leader passing its end, clear of it, does not."""
    from workbench.scenes.label_layout import LEADER_AIR, Placement, _Room

    room = _Room(W, H, [], [])
    room.take((300.0, 100.0, 500.0, 120.0))  # "FP64 TC / FP32 67 TFLOP/s"
    through = Placement("op", (280.0, 40.0, 360.0, 54.0), (400.0, 300.0))
    clear = Placement("op", (216.0, 40.0, 298.0, 54.0), (298.0, 300.0))  # an upright leader 2 px left of its end
    assert LEADER_AIR < 2.0
    assert room.tangles(through) == 1
    assert room.tangles(clear) == 0
    layout = LabelLayout_of([Placement("roof 3", (300.0, 100.0, 500.0, 120.0)), through])
    assert leader_tangles(layout) == ["'op''s leader runs through 'roof 3'"]


def LabelLayout_of(placements):  # type: ignore[no-untyped-def]
    from workbench.scenes.label_layout import LabelLayout

    return LabelLayout(list(placements))


def test_leader_tangles_names_the_roofs_a_leader_crosses_but_not_the_roof_its_point_sits_on() -> None:
    from workbench.scenes.label_layout import Placement

    roofs = [(0.0, 100.0, 800.0, 100.0), (0.0, 200.0, 800.0, 200.0)]
    on_its_roof = Placement("op", (380.0, 150.0, 460.0, 164.0), (400.0, 100.0 + 1e-9))  # starts on roof 0
    assert leader_tangles(LabelLayout_of([on_its_roof]), roofs) == []
    across = Placement("op", (380.0, 250.0, 460.0, 264.0), (400.0, 100.0))
    assert leader_tangles(LabelLayout_of([across]), roofs) == ["'op''s leader crosses roof 1"]
    marks = [(395.0, 180.0, 405.0, 190.0), (395.0, 95.0, 405.0, 105.0)]  # another point's mark, then its own
    assert leader_tangles(LabelLayout_of([across]), roofs, marks) == ["'op''s leader crosses roof 1", "'op''s leader runs through mark 0"]


# ---------------------------------------------------------------- holding labels while points move


def _moved(labels: list[PointLabel], marks: list, index: int, dx: float, dy: float):  # type: ignore[no-untyped-def]
    """The same scene with one point moved (its mark and its label's point)."""
    label = labels[index]
    x, y = label.x + dx, label.y + dy
    labels = [*labels[:index], PointLabel(label.key, label.width, label.height, x, y), *labels[index + 1 :]]
    marks = [*marks[:index], (x - 8, y - 8, x + 8, y + 8), *marks[index + 1 :]]
    return labels, marks


@pytest.mark.parametrize("count", [8, 20])  # fewer than UNTANGLED_LABELS, and more
@pytest.mark.parametrize("seed", range(4))
def test_labels_whose_points_stayed_keep_their_places_when_one_point_moves(count: int, seed: int) -> None:
    roofs, marks, roof_labels, labels = roofline(count, seed, 14.0)
    before = layout_labels(W, H, roofs, marks, roof_labels, labels)
    moved_labels, moved_marks = _moved(labels, marks, 0, 37.0, -23.0)
    after = layout_labels(W, H, roofs, moved_marks, roof_labels, moved_labels, keep=before)
    assert layout_faults(after, W, H, roofs, moved_marks, roof_labels) == []
    assert [p.key for p in after.placements] == [p.key for p in before.placements]
    kept = [p.key for p in after.placements if p == before.placement(p.key)]
    # every label that stays free where it was keeps its place: all but the moved one and those it now covers
    moved_box = moved_marks[0]
    covered = {p.key for p in before.placements if p.box is not None and boxes_overlap(p.box, moved_box)}
    assert set(kept) >= {p.key for p in before.placements if p.key != "op0" and p.key not in covered and p.box is not None}
    assert after.placement("op0") != before.placement("op0")  # it follows its point
    # without `keep` the same scene is laid out afresh (and that is what the view shows once typing pauses)
    assert layout_labels(W, H, roofs, moved_marks, roof_labels, moved_labels).placements == (
        layout_labels(W, H, roofs, moved_marks, roof_labels, moved_labels, keep=None).placements
    )


def test_a_held_label_that_a_moved_point_now_covers_is_placed_again() -> None:
    roofs, marks, roof_labels, labels = roofline(6, 1, 14.0)
    before = layout_labels(W, H, roofs, marks, roof_labels, labels)
    victim = before.placement("op3")
    assert victim is not None and victim.box is not None
    cx, cy = (victim.box[0] + victim.box[2]) / 2, (victim.box[1] + victim.box[3]) / 2
    moved_labels, moved_marks = _moved(labels, marks, 0, cx - labels[0].x, cy - labels[0].y)  # op0's point onto it
    after = layout_labels(W, H, roofs, moved_marks, roof_labels, moved_labels, keep=before)
    assert after.placement("op3") != victim
    assert layout_faults(after, W, H, roofs, moved_marks, roof_labels) == []


def test_a_roof_label_keeps_its_short_text_while_it_is_free_and_a_resized_label_is_placed_again() -> None:
    roof = (100.0, 300.0, 700.0, 300.0)
    full = RoofLabel("fp16", 400.0, 14.0, roof, short_width=120.0)
    # marks along the roof leave room for the short text only
    blockers = [(x, 270.0, x + 12, 330.0) for x in (150.0, 300.0, 450.0, 600.0)]
    crowded = layout_labels(W, H, [roof], blockers, [full])
    assert crowded.placements[0].short
    held = layout_labels(W, H, [roof], blockers[:1], [full], keep=crowded)  # room again for the full text
    assert held.placements[0] == crowded.placements[0]  # kept: no flicker between the texts while typing
    assert not layout_labels(W, H, [roof], blockers[:1], [full]).placements[0].short  # afresh: the full text
    wider = RoofLabel("fp16", 400.0, 18.0, roof, short_width=150.0)  # a larger font: its old box is not its size
    again = layout_labels(W, H, [roof], blockers[:1], [wider], keep=crowded)
    assert again.placements[0].box is not None and again.placements[0].box[3] - again.placements[0].box[1] == 18.0


def test_of_two_held_labels_too_close_to_each_other_the_first_keeps_its_place() -> None:
    """Held places are checked in one bulk test and then against each other in order: a layout to keep that
    was not made here (two boxes within PADDING) keeps the first, and the second is placed by the rules."""
    from workbench.scenes.label_layout import PADDING, LabelLayout, Placement

    a = PointLabel("a", 60.0, 14.0, 200.0, 300.0)
    b = PointLabel("b", 60.0, 14.0, 200.0, 300.0 + 14.0 + PADDING / 2)
    marks = [(p.x - 8, p.y - 8, p.x + 8, p.y + 8) for p in (a, b)]
    right_of = lambda p: (p.x + 9.0, p.y - 7.0, p.x + 69.0, p.y + 7.0)  # noqa: E731 (the first ring's place to the right)
    keep = LabelLayout([Placement("a", right_of(a)), Placement("b", right_of(b))])
    layout = layout_labels(W, H, [], marks, point_labels=[a, b], keep=keep)
    assert layout.placement("a") == keep.placements[0]
    assert layout.placement("b") != keep.placements[1]
    assert layout_faults(layout, W, H, [], marks) == []
