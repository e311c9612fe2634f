"""Label layout at the size of a model: which points get a label, and the mark raster's answers (no Qt)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from workbench.scenes.label_layout import (
    EVERY_LABEL_UP_TO,
    FEW_LABELS,
    PointLabel,
    _MarkRaster,
    boxes_overlap,
    clear_layout_cache,
    labelled_points,
    layout_faults,
    layout_labels,
)
from workbench.scenes.label_layout import room as label_room

W, H = 569.0, 475.0  # the roofline's plot in a 1600x919 window


def test_a_small_session_labels_every_point() -> None:
    assert labelled_points([0.0] * EVERY_LABEL_UP_TO, selected=3) == list(range(EVERY_LABEL_UP_TO))
    assert labelled_points([]) == []


def test_a_large_session_labels_the_selected_point_and_the_largest_shares() -> None:
    shares = [float(index % 50) for index in range(1000)]  # the largest (49) at 49, 99, 149, …
    chosen = labelled_points(shares, selected=500)
    assert len(chosen) == FEW_LABELS and chosen == sorted(chosen)
    assert 500 in chosen
    assert [index for index in chosen if index != 500] == [49 + 50 * k for k in range(FEW_LABELS - 1)]  # earlier first on a tie


def test_pins_are_labelled_besides_the_few_and_bounded() -> None:
    shares = [1.0] * 100 + [5.0]
    chosen = labelled_points(shares, selected=0, pinned=[7, 7, 8, 500])  # a repeat and one out of range ignored
    assert {0, 7, 8, 100} <= set(chosen)
    assert len(chosen) == FEW_LABELS + 2
    many_pins = labelled_points([1.0] * 1000, selected=None, pinned=range(0, 1000, 3))
    assert len(many_pins) == 2 * FEW_LABELS  # at most FEW_LABELS pins, and FEW_LABELS more


def test_shares_that_are_not_finite_positive_numbers_count_as_nothing() -> None:
    shares = [math.nan, math.inf, -1.0, 0.5] + [0.0] * 30
    assert 3 in labelled_points(shares)
    assert 0 in labelled_points(shares)  # nothing beats the one real share: the earliest fill the rest
    assert 1 not in labelled_points(shares, few=2)


@pytest.mark.parametrize("seed", range(4))
def test_the_mark_raster_answers_as_the_box_test_does(seed: int) -> None:
    """Boxes and marks at fractional positions, many with edges within a pixel of each other: the raster's
    answer is `boxes_overlap`'s for every box."""
    rng = random.Random(seed)
    marks = []
    for _ in range(400):
        x, y = rng.uniform(-10, W + 10), rng.uniform(-10, H + 10)
        marks.append((x - 8, y - 8, x + 8 + rng.choice([0.0, 0.3]), y + 8))
    boxes = []
    for _ in range(3000):
        if rng.random() < 0.5:  # an edge a fraction of a pixel from a mark's
            m = rng.choice(marks)
            x = m[2] + rng.choice([-0.7, -0.2, 0.0, 0.2, 0.7])
            y = m[1] + rng.uniform(-15, 15)
        else:
            x, y = rng.uniform(0, W), rng.uniform(0, H)
        boxes.append((x, y, x + rng.uniform(1, 90), y + rng.uniform(1, 20)))
    array = np.array(marks)
    clear = _MarkRaster(array, W, H).clear_of_marks(np.array(boxes), array)
    expected = [not any(boxes_overlap(box, mark) for mark in marks) for box in boxes]
    assert clear.tolist() == expected
    assert 0 < sum(expected) < len(expected)


def crowd(points: int, seed: int) -> tuple[list, list, list]:
    """Points packed along a memory roof and under a compute roof, as a traced model's operations lie."""
    rng = random.Random(seed)
    roofs = [(0.0, 440.0, 330.0, 60.0), (330.0, 60.0, 2000.0, 60.0)]
    marks, labels = [], []
    for index in range(points):
        x = rng.uniform(40, 520)
        y = max(62.0, 440.0 - 380.0 * x / 330.0) + rng.uniform(0, 40)
        marks.append((x - 8, y - 8, x + 8, y + 8))
        labels.append(PointLabel(f"operation {index}", rng.uniform(60, 160), 15.0, x, y))
    return roofs, marks, labels


@pytest.mark.parametrize("seed", range(3))
def test_a_layout_over_many_marks_through_the_raster_is_the_layout_without_it(seed: int, monkeypatch) -> None:
    roofs, marks, labels = crowd(1500, seed)
    chosen = [labels[index] for index in labelled_points([1.0] * len(labels), selected=seed * 100)]
    clear_layout_cache()
    with_raster = layout_labels(W, H, roofs, marks, (), chosen)
    assert layout_faults(with_raster, W, H, roofs, marks) == []
    monkeypatch.setattr(label_room, "RASTER_FROM", 10**9)  # the module whose rooms read it
    clear_layout_cache()
    without = layout_labels(W, H, roofs, marks, (), chosen)
    assert with_raster.placements == without.placements
    assert any(placement.box is not None for placement in with_raster.placements)
