"""label_layout.MarkGrid: which marks some boxes overlap, found from grid cells, is what scanning every mark finds —
for random marks in and beyond the view, after marks move, and for the legend's corners."""

from __future__ import annotations

import math
import random

from workbench.scenes.label_layout import MarkGrid, boxes_overlap
from workbench.scenes.legend_corner import CORNERS, corner_box, faults

WIDTH, HEIGHT = 613.0, 451.0


def _box(generator: random.Random) -> tuple[float, float, float, float]:
    """A mark or a query: mostly small, some long (a run's spread bar), some partly or wholly beyond the view."""
    x, y = generator.uniform(-80, WIDTH + 80), generator.uniform(-80, HEIGHT + 80)
    w, h = generator.choice([(15.0, 15.0), (4.0, generator.uniform(0, 300)), (generator.uniform(0, 400), 60.0)])
    return (x, y, x + w, y + h)


def _scan(marks, boxes) -> list[int]:  # type: ignore[no-untyped-def]
    return [index for index, mark in enumerate(marks) if any(boxes_overlap(box, mark) for box in boxes)]


def test_the_grid_finds_what_a_scan_of_every_mark_finds() -> None:
    generator = random.Random(34)
    for trial in range(20):
        marks = [_box(generator) for _ in range(generator.choice([0, 1, 30, 400]))]
        grid = MarkGrid(marks, WIDTH, HEIGHT, cell=generator.choice([7.0, 40.0, 1000.0]))
        for _ in range(30):
            queries = [_box(generator) for _ in range(generator.randint(1, 4))]
            assert grid.overlapping(queries) == _scan(marks, queries), trial
            assert grid.count(queries[0]) == len(_scan(marks, queries[:1]))
        for _ in range(50):  # marks move (an edited operation's runs), the cells follow
            if marks:
                index = generator.randrange(len(marks))
                marks[index] = _box(generator)
                grid.move(index, marks[index])
        for _ in range(30):
            queries = [_box(generator) for _ in range(generator.randint(1, 4))]
            assert grid.overlapping(queries) == _scan(marks, queries), trial


def test_marks_at_no_place_or_infinitely_far_are_kept_and_never_found() -> None:
    marks = [(math.nan, 10.0, 20.0, 20.0), (-math.inf, -math.inf, math.inf, math.inf), (5.0, 5.0, 15.0, 15.0)]
    grid = MarkGrid(marks, WIDTH, HEIGHT)
    assert grid.overlapping([(0.0, 0.0, 10.0, 10.0)]) == _scan(marks, [(0.0, 0.0, 10.0, 10.0)]) == [1, 2]
    assert grid.overlapping([(1e9, 1e9, 2e9, 2e9)]) == [1]


def test_the_legend_corner_counts_from_the_grid_what_it_counts_from_every_mark() -> None:
    generator = random.Random(35)
    for _ in range(20):
        marks = [_box(generator) for _ in range(300)]
        grid = MarkGrid(marks, WIDTH, HEIGHT)
        size = (generator.uniform(50, 300), generator.uniform(20, 200))
        boxes = [corner_box(corner, size, WIDTH, HEIGHT) for corner in CORNERS]
        near = [marks[index] for index in grid.overlapping(boxes)]
        for box in boxes:
            assert faults(box, near, WIDTH, HEIGHT) == faults(box, marks, WIDTH, HEIGHT)


def test_the_mark_raster_answers_what_a_scan_of_every_mark_answers() -> None:
    """label_layout's raster (cells of several pixels, exact test only where edges meet within a cell): whether a
    box covers a mark, for boxes and marks on and off cell edges, in, across and beyond the view."""
    import numpy as np

    from workbench.scenes.label_layout import RASTER_CELL, _MarkRaster

    generator = random.Random(36)
    for _ in range(10):
        marks = [_box(generator) for _ in range(500)]
        marks += [(RASTER_CELL * k, RASTER_CELL * k, RASTER_CELL * (k + 2), RASTER_CELL * (k + 1)) for k in range(0, 100, 7)]
        array = np.array(marks, dtype=float)
        raster = _MarkRaster(array, WIDTH, HEIGHT)
        boxes = [_box(generator) for _ in range(400)]
        boxes += [(mark[2], mark[1], mark[2] + 10, mark[3]) for mark in marks[-15:]]  # touching edges: no overlap
        boxes += [(mark[2] - 0.25, mark[1], mark[2] + 10, mark[3]) for mark in marks[-15:]]  # a quarter pixel in
        clear = raster.clear_of_marks(np.array(boxes, dtype=float), array)
        assert clear.tolist() == [not _scan(marks, [box]) for box in boxes]
