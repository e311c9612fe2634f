"""label_layout's pieces an edit uses: PointMarks moved one point at a time gives the boxes made afresh, and the
labelled few found by NumPy are the heap's."""

from __future__ import annotations

import random

import numpy as np

from workbench.scenes.label_layout import PointMarks, labelled_points


def test_moving_points_one_at_a_time_gives_the_marks_made_afresh() -> None:
    rng = random.Random(34)
    view = (-2.0, 15.5, 63.25, 81.5)
    # coarse positions: points land on each other's places and on their level points', and leave them again
    spot = lambda: (rng.randint(0, 40) / 8, rng.randint(80, 120) / 8)  # noqa: E731
    points = [spot() for _ in range(60)]
    levels_of = [[spot() if rng.random() < 0.5 else points[i] for _ in range(i % 3)] for i in range(60)]
    firsts = np.cumsum([0] + [len(levels) for levels in levels_of]).tolist()
    marks = PointMarks(view, points, [p for levels in levels_of for p in levels], 8.0)
    for _ in range(300):
        index = rng.randrange(60)
        points[index] = spot()
        levels_of[index] = [rng.choice([spot(), points[index]]) for _ in levels_of[index]]
        marks.move(index, points[index], firsts[index], levels_of[index])
        afresh = PointMarks(view, points, [p for levels in levels_of for p in levels], 8.0)
        assert marks.boxes() == afresh.boxes()
    assert len(marks.boxes()) > 60  # some level points lay apart from every point


def test_the_largest_shares_found_in_an_array_are_the_ones_found_in_a_list() -> None:
    rng = random.Random(35)
    for _ in range(2000):
        count = rng.randint(1, 80)
        shares = [rng.choice([0.0, -1.0, float("nan"), float("inf"), 0.5, 0.25, rng.random()]) for _ in range(count)]
        selected = rng.choice([None, rng.randrange(count)])
        pins = [rng.randrange(count) for _ in range(rng.randint(0, 3))]
        assert labelled_points(np.array(shares), selected, pins) == labelled_points(shares, selected, pins)
