"""The roofline's scene without Qt: which operations are labelled and where the labels, the ridge label and the
legend go, from text measured at a fixed advance per character."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np
import pytest

from workbench.scenes.label_layout import EVERY_LABEL_UP_TO, FEW_LABELS, PixelView, boxes_overlap, inside, layout_faults
from workbench.scenes.legend_corner import BOTTOM_LEFT, BOTTOM_RIGHT, TOP_LEFT, TOP_RIGHT, corner_box
from workbench.scenes.roofline_scene import (
    OPERATION_RADIUS,
    LegendRow,
    Operations,
    RoofText,
    RooflineInputs,
    RooflineScene,
    roofline_scene,
)
from workbench.scenes.roofline_range import ROOF_LABEL_ROOM, fitted_range, label_room_end
from workbench.scenes.roofline_state import LABELS_NONE, LABELS_SELECTED, RooflineViewState

CHAR = 7.0  # pixels per character of a label
LINE = 16.0  # a label's height
VIEW = PixelView(-1.0, 4.0, 9.0, 15.0, 800.0, 500.0)  # log intensity -1..4, log rate 9..15
MEMORY = (-1.0 - 8.0, 12.0 - 9.0, 2.0, 14.0)  # 1 TB/s rising to the 100 TFLOP/s roof at intensity 100
COMPUTE = (2.0, 14.0, 12.0, 14.0)


class FixedMeasure:
    """Text `CHAR` pixels a character, labels `LINE` high; a legend row 20 pixels high, 40 besides its text."""

    def __init__(self) -> None:
        self.legends: list[tuple[LegendRow, ...]] = []

    def label(self, text: str) -> tuple[float, float]:
        return CHAR * len(text) + 2, LINE

    def roof_label(self, key: str, full: str, short: str) -> tuple[float, float, float | None]:
        return CHAR * len(full) + 2, LINE, (CHAR * len(short) + 2 if short != full else None)

    def legend_text(self, text: str) -> float:
        return 6.0 * len(text)

    def legend(self, rows: Sequence[LegendRow]) -> tuple[float, float, int] | None:
        self.legends.append(tuple(rows))
        if not rows:
            return None
        lines = [line for row in rows for line in row.text.split("\n")]
        return 6.0 * max(len(line) for line in lines) + 40, 20.0 * len(lines) + 10, len(rows)


def _roofs() -> list[RoofText]:
    return [RoofText("memory", MEMORY, "HBM 1 TB/s (datasheet)", "HBM 1 TB/s", memory=True),
            RoofText("roof 0", COMPUTE, "FP16 TC  100 TFLOP/s", "FP16 TC  100 TFLOP/s")]


def _operations(positions: Sequence[tuple[float, float]], times: Sequence[float] | None = None, current: int = -1,
                names: Sequence[str] | None = None) -> Operations:
    count = len(positions)
    return Operations(list(range(count)), list(positions), list(names or [f"op{index}" for index in range(count)]),
                      [False] * count, np.array(times if times is not None else [1.0] * count, dtype=float), current)


def _inputs(operations: Operations, ridge: tuple[float, float] | None = None, view: PixelView = VIEW) -> RooflineInputs:
    return RooflineInputs(view, _roofs(), [MEMORY, COMPUTE], operations, ridge=ridge,
                          ridge_text="ridge 100 FLOP/B" if ridge is not None else "")


def _on_memory_roof(count: int, low: float = -0.5, high: float = 1.8, below: float = 0.3) -> list[tuple[float, float]]:
    """`count` operations spread under the memory roof."""
    return [(x, 12.0 + x - below) for x in np.linspace(low, high, count)]


def _point_boxes(scene: RooflineScene, operations: Operations) -> list[tuple[float, float, float, float]]:
    r = OPERATION_RADIUS
    return [(scene.view.px(x) - r, scene.view.py(y) - r, scene.view.px(x) + r, scene.view.py(y) + r)
            for x, y in operations.positions]


def test_no_label_covers_a_point_a_roof_or_another_label() -> None:
    operations = _operations(_on_memory_roof(15), current=4)
    scene = roofline_scene(_inputs(operations), RooflineViewState(), FixedMeasure())
    assert layout_faults(scene.layout, VIEW.width, VIEW.height, list(scene.lines), list(scene.marks),
                         list(scene.roof_labels)) == []
    placed = [label for label in scene.labels if label.box is not None]
    assert len(placed) >= 12  # most labels find room on this plot
    points = _point_boxes(scene, operations)
    for index, label in enumerate(placed):
        assert label.box is not None and inside(label.box, VIEW.width, VIEW.height)
        assert not any(boxes_overlap(label.box, point) for point in points), label.key
        assert not any(other.box is not None and boxes_overlap(label.box, other.box) for other in placed[index + 1:])
    assert scene.label("operation 4") is not None and scene.label("operation 4").text == "op4"
    assert scene.label("roof 0").text == "FP16 TC  100 TFLOP/s"


def test_the_selected_operation_is_labelled_first_and_keeps_its_place_on_a_crowded_plot() -> None:
    """Forty operations piled in one spot: few labels find room; the selected one, the smallest, is among them."""
    positions = [(0.5 + 0.001 * index, 12.0) for index in range(40)]
    times = [100.0 - index for index in range(40)]
    operations = _operations(positions, times, current=39)
    small = PixelView(-1.0, 4.0, 9.0, 15.0, 260.0, 170.0)
    scene = roofline_scene(_inputs(operations, view=small), RooflineViewState(), FixedMeasure())
    assert scene.point_labels[0].key == "operation 39"
    assert scene.label("operation 39").box is not None
    assert 39 in scene.labelled


def test_the_largest_operations_are_labelled_and_the_rest_counted_in_the_legend() -> None:
    count = 200
    times = [float((index * 37) % count) for index in range(count)]  # every time once, in no order
    operations = _operations(_on_memory_roof(count), times)
    scene = roofline_scene(_inputs(operations), RooflineViewState(), FixedMeasure())
    largest = sorted(range(count), key=lambda index: -times[index])[:FEW_LABELS]
    assert sorted(scene.labelled) == sorted(largest)
    assert {label.key for label in scene.point_labels} == {f"operation {index}" for index in largest}
    assert scene.legend is not None
    assert scene.legend.more == f"+{count - FEW_LABELS} more operations (hover for names)"
    assert scene.legend.rows[-1].text == scene.legend.more
    # with one selected among the smallest: it and the largest but one
    selected = min(range(count), key=lambda index: times[index])
    scene = roofline_scene(_inputs(replace(operations, current=selected)), RooflineViewState(), FixedMeasure())
    assert sorted(scene.labelled) == sorted([selected, *largest[: FEW_LABELS - 1]])
    assert scene.point_labels[0].key == f"operation {selected}"


def test_a_small_session_labels_every_operation_and_counts_none() -> None:
    operations = _operations(_on_memory_roof(EVERY_LABEL_UP_TO), [float(index) for index in range(EVERY_LABEL_UP_TO)])
    scene = roofline_scene(_inputs(operations), RooflineViewState(), FixedMeasure())
    assert scene.labelled == tuple(range(EVERY_LABEL_UP_TO))
    assert scene.legend is None or scene.legend.more is None


def test_with_labels_off_a_large_session_s_legend_names_the_few_and_counts_the_rest() -> None:
    count = EVERY_LABEL_UP_TO + 40
    operations = _operations(_on_memory_roof(count), [float(index) for index in range(count)], current=9,
                             names=[f"add {index}" for index in range(count)])
    scene = roofline_scene(_inputs(operations), RooflineViewState(label_mode=LABELS_NONE), FixedMeasure())
    assert scene.legend is not None
    named = [row.text for row in scene.legend.rows if row.text.startswith("add ")]
    assert len(named) == FEW_LABELS and any(text.startswith("add 9 ") for text in named)
    assert named[-1].startswith(f"add {count - 1} ")  # the largest among them
    assert scene.legend.rows[-1].text == f"+{count - FEW_LABELS} more operations (hover for names)"


def test_with_labels_off_the_legend_lists_the_operations_and_with_selected_only_the_others() -> None:
    operations = _operations(_on_memory_roof(5), current=2)
    scene = roofline_scene(_inputs(operations), RooflineViewState(label_mode=LABELS_NONE), FixedMeasure())
    assert not any(label.key.startswith("operation") for label in scene.labels)
    assert scene.legend is not None and [row.key for row in scene.legend.rows] == [f"operation {i}" for i in range(5)]
    assert [row.selected for row in scene.legend.rows] == [False, False, True, False, False]
    assert scene.legend.rows[0].text.startswith("op0 — ") and "FLOP/s" in scene.legend.rows[0].text
    scene = roofline_scene(_inputs(operations), RooflineViewState(label_mode=LABELS_SELECTED), FixedMeasure())
    assert [label.key for label in scene.labels if label.key.startswith("operation")] == ["operation 2"]
    assert scene.legend is not None and "operation 2" not in {row.key for row in scene.legend.rows}


def test_a_label_with_no_room_is_listed_in_the_legend() -> None:
    """The roof's long name finds no room beside its roof (which runs from 240 pixels): the legend lists it, and it is
    drawn nowhere else."""
    narrow = PixelView(-1.0, 4.0, 9.0, 15.0, 400.0, 300.0)
    name = "FP16 TC / BF16 TC / FP8 TC  100 TFLOP/s (measured)"
    roofs = [RoofText("roof 0", COMPUTE, name, name)]
    inputs = RooflineInputs(narrow, roofs, [COMPUTE], _operations([(0.0, 11.5)]))
    scene = roofline_scene(inputs, RooflineViewState(), FixedMeasure())
    assert scene.label("roof 0").box is None
    assert scene.legend is not None and "roof 0" in scene.legend.listed
    assert scene.legend.rows[0] == LegendRow(roofs[0].full, "roof", "roof 0")


def test_the_ridge_label_sits_at_the_foot_of_its_line_or_goes_up_it() -> None:
    ridge = (2.0, 14.0)
    operations = _operations(_on_memory_roof(4))
    scene = roofline_scene(_inputs(operations, ridge), RooflineViewState(), FixedMeasure())
    assert scene.ridge is not None and scene.ridge.text == "ridge 100 FLOP/B"
    left, top, right, bottom = scene.ridge.box
    assert left == VIEW.px(2.0) + 3 and bottom == VIEW.height - 2  # right of the line, at its foot
    # operations crowding the foot on both sides: the label goes up the line, clear of them and of every label
    foot = [(2.0 + dx, 9.0 + dy) for dx in np.linspace(-0.5, 0.5, 11) for dy in (0.05, 0.15, 0.25)]
    crowded = _operations([*_on_memory_roof(4), *foot])
    scene = roofline_scene(_inputs(crowded, ridge), RooflineViewState(), FixedMeasure())
    assert scene.ridge is not None
    box = scene.ridge.box
    assert box[3] < VIEW.height - 2 and box in scene.marks
    assert not any(boxes_overlap(box, point) for point in _point_boxes(scene, crowded))
    assert not any(label.box is not None and boxes_overlap(box, label.box) for label in scene.labels)
    # out of view: no ridge label
    assert roofline_scene(_inputs(operations, (5.0, 14.0)), RooflineViewState(), FixedMeasure()).ridge is None


def test_the_legend_takes_the_first_corner_that_covers_no_mark() -> None:
    operations = _operations(_on_memory_roof(5))
    state = RooflineViewState(label_mode=LABELS_NONE)
    scene = roofline_scene(_inputs(operations), state, FixedMeasure())
    assert scene.legend is not None and scene.legend.corner == TOP_LEFT and scene.legend.covering == 0
    # operations in the top left: the legend goes to the bottom right, covering none of them
    top_left = [(-0.8 + 0.15 * index, 14.8 - 0.05 * index) for index in range(5)]
    scene = roofline_scene(_inputs(_operations(top_left)), state, FixedMeasure())
    assert scene.legend is not None and scene.legend.corner == BOTTOM_RIGHT and scene.legend.covering == 0
    box = scene.legend.box
    assert box == corner_box(BOTTOM_RIGHT, (box[2] - box[0], box[3] - box[1]), VIEW.width, VIEW.height)
    assert not any(boxes_overlap(box, point) for point in _point_boxes(scene, _operations(top_left)))
    # a corner the user chose is kept
    scene = roofline_scene(_inputs(_operations(top_left)), replace(state, legend_corner=TOP_RIGHT), FixedMeasure())
    assert scene.legend is not None and scene.legend.corner == TOP_RIGHT
    scene = roofline_scene(_inputs(_operations(top_left)), replace(state, legend_corner=BOTTOM_LEFT), FixedMeasure())
    assert scene.legend is not None and scene.legend.corner == BOTTOM_LEFT


def test_a_moved_point_keeps_the_other_labels_and_the_legend_where_they_were() -> None:
    positions = _on_memory_roof(12)
    operations = _operations(positions, current=3)
    first = roofline_scene(_inputs(operations), RooflineViewState(), FixedMeasure(), fresh=True)
    assert not first.held
    moved = list(positions)
    moved[3] = (positions[3][0] + 0.02, positions[3][1] + 0.02)
    second = roofline_scene(_inputs(replace(operations, positions=moved)), RooflineViewState(), FixedMeasure(), first)
    assert second.held
    for label in first.labels:
        if label.key != "operation 3" and label.key.startswith("operation"):
            assert second.label(label.key).box == label.box, label.key
    afresh = roofline_scene(_inputs(replace(operations, positions=moved)), RooflineViewState(), FixedMeasure(), first,
                            fresh=True)
    assert not afresh.held


def test_the_view_state_checks_its_label_mode_and_says_whether_it_is_held() -> None:
    assert not RooflineViewState().held
    assert RooflineViewState(fixed_range=(0.0, 1.0, 0.0, 1.0)).held
    with pytest.raises(ValueError, match="unknown label mode"):
        RooflineViewState(label_mode="some")
    assert RooflineViewState(label_mode=LABELS_SELECTED).labels(2, 2)
    assert not RooflineViewState(label_mode=LABELS_SELECTED).labels(1, 2)



def test_the_fitted_range_shows_every_point_and_ridge_with_air_around_them() -> None:
    (x_low, x_high, y_low, y_high), top = fitted_range((-0.5, 1.8), 11.0, [2.0, 2.5], [14.0, 14.5], 12.0)
    assert (x_low, x_high, top, y_high) == (-2, 5, 14.5, 14.95)
    assert y_low == math.floor(min(11.0, 12.0 - 2 + 0.5, 14.5 - 4) - 0.4)
    # no operations and no compute roof: the roofs' ridges alone, the memory roof's top
    (x_low, x_high, _, _), top = fitted_range((math.inf, -math.inf), math.inf, [], [], 12.0)
    assert (x_low, x_high, top) == (-1, 3, 15.0)
    # a mark above every roof (a run faster than its device allows, a kernel from a faster GPU) is in view too,
    # with the same air above it; the roofs' top stays the top roof
    (_, _, _, y_high), top = fitted_range((-0.5, 1.8), 11.0, [2.0, 2.5], [14.0, 14.5], 12.0, 15.2)
    assert (top, y_high) == (14.5, pytest.approx(15.65))
    assert fitted_range((-0.5, 1.8), 11.0, [2.0, 2.5], [14.0, 14.5], 12.0, 13.0)[0][3] == 14.95  # below: as before


def test_the_range_grows_right_for_the_roof_labels_by_half_decades_up_to_a_decade() -> None:
    # 800 pixels over -2..4: a narrow label fits half a decade past the rightmost point
    assert label_room_end(800.0, 50.0, 1.8, [2.0], -2.0, 4.0) == 2.5
    # a wide one takes more room, in half decades, never beyond a decade past the fitted end
    wide = label_room_end(800.0, 200.0, 1.8, [2.0], -2.0, 4.0)
    assert wide > 2.5 and (wide * 2).is_integer() and (wide - 2.0) * 800.0 / (wide + 2.0) >= 200.0
    assert label_room_end(300.0, 2000.0, 1.8, [2.0], -2.0, 4.0) == 4.0 + ROOF_LABEL_ROOM
    # a point moving within a half decade keeps the end (a digit typed and taken out again)
    assert label_room_end(800.0, 120.0, 1.61, [1.0], -2.0, 4.0) == label_room_end(800.0, 120.0, 1.99, [1.0], -2.0, 4.0)
