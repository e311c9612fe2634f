"""The roofline's label decisions as scenes without Qt: the ridge label at the foot of its line and up it
(label_layout.ridge_at_foot / ridge_up_the_line), which layout a new one keeps (held_layout), the view's pixels
(PixelView) and the legend's corner trials (legend_corner.try_corners)."""

from __future__ import annotations

from workbench.scenes.label_layout import (
    LabelLayout,
    PixelView,
    PointLabel,
    boxes_overlap,
    held_layout,
    ridge_at_foot,
    ridge_up_the_line,
)
from workbench.scenes.legend_corner import BOTTOM_LEFT, BOTTOM_RIGHT, CORNERS, TOP_LEFT, TOP_RIGHT, Trial, try_corners

WIDTH, HEIGHT = 600.0, 400.0
SIZE = (70.0, 14.0)
LINE_X = 300.0
LEFTS = [LINE_X + 3, LINE_X + 3 - SIZE[0] - 6]  # right of the ridge line, else left of it


def _near(marks):  # type: ignore[no-untyped-def]
    return lambda boxes: [mark for mark in marks if any(boxes_overlap(box, mark) for box in boxes)]


def _covering(marks):  # type: ignore[no-untyped-def]
    return lambda box: [mark for mark in marks if boxes_overlap(box, mark)]


def test_the_ridge_label_takes_the_foot_right_of_its_line_else_left_else_none() -> None:
    foot = HEIGHT - 2
    assert ridge_at_foot(SIZE, LEFTS, foot, WIDTH, HEIGHT, _near([]), []) == (LEFTS[0], foot - 14, LEFTS[0] + 70, foot)
    right_taken = [(LINE_X + 10, foot - 5, LINE_X + 20, foot)]
    assert ridge_at_foot(SIZE, LEFTS, foot, WIDTH, HEIGHT, _near(right_taken), [])[0] == LEFTS[1]
    crossed_left = [(LEFTS[1] - 5, foot - 7, LINE_X, foot - 7)]  # a roof through the left place
    assert ridge_at_foot(SIZE, LEFTS, foot, WIDTH, HEIGHT, _near(right_taken), crossed_left) is None
    # past the view's right edge: the left place
    assert ridge_at_foot(SIZE, [WIDTH - 20, 100.0], foot, WIDTH, HEIGHT, _near([]), [])[0] == 100.0


def test_the_ridge_label_goes_up_its_line_above_what_it_would_cover() -> None:
    legend = (LINE_X - 200, HEIGHT - 120, LINE_X + 200, HEIGHT - 10)  # a legend in a bottom corner over the foot
    box = ridge_up_the_line(SIZE, LEFTS, WIDTH, HEIGHT, _covering([legend]), [])
    assert box is not None and box[0] == LEFTS[0] and box[3] == legend[1] - 1
    # a roof across that place: a few pixels higher, clear of it
    roof = (0.0, legend[1] - 8, WIDTH, legend[1] - 8)
    box = ridge_up_the_line(SIZE, LEFTS, WIDTH, HEIGHT, _covering([legend]), [roof])
    assert box is not None and box[3] < roof[1] and not boxes_overlap(box, legend)
    # no room anywhere up either side
    assert ridge_up_the_line(SIZE, LEFTS, WIDTH, HEIGHT, _covering([(0.0, 0.0, WIDTH, HEIGHT)]), []) is None


def test_labels_are_held_while_one_point_moves_and_laid_out_afresh_otherwise() -> None:
    before = [PointLabel(f"operation {i}", 50, 12, 10.0 * i, 20.0) for i in range(4)]
    layout = LabelLayout()
    one_moved = [*before[:2], PointLabel("operation 2", 50, 12, 99.0, 20.0), before[3]]
    two_moved = [PointLabel("operation 0", 50, 12, 1.0, 2.0), *one_moved[1:]]
    assert held_layout(layout, before, before, same=True) is layout
    assert held_layout(layout, before, one_moved, same=True) is layout
    assert held_layout(layout, before, two_moved, same=True) is None
    assert held_layout(layout, before, one_moved, same=False) is None  # another view, roofs, labels or font
    assert held_layout(None, [], before, same=True) is None
    # a selection: the newly selected operation labelled, the one before not; the others stay
    selected = [*before[1:], PointLabel("operation 9", 50, 12, 300.0, 40.0)]
    assert held_layout(layout, before, selected, same=True) is layout
    assert held_layout(layout, before, [*selected, PointLabel("operation 8", 50, 12, 1.0, 1.0)], same=True) is None
    assert held_layout(layout, before, [before[1], one_moved[2], before[3], selected[-1]], same=True) is layout


def test_pixel_view_maps_the_plot_to_pixels_and_back() -> None:
    view = PixelView(-1.0, 3.0, 10.0, 15.0, 800.0, 500.0)
    assert (view.px(-1.0), view.py(15.0), view.px(3.0), view.py(10.0)) == (0.0, 0.0, 800.0, 500.0)
    assert view.at(view.px(1.25), view.py(12.5)) == (1.25, 12.5)
    assert view.segment((0.0, 11.0, 1.0, 12.0)) == (200.0, 400.0, 400.0, 300.0)
    assert view.usable and not PixelView(1.0, 1.0, 0.0, 1.0, 800.0, 500.0).usable


def test_the_corner_kept_of_the_trials_covers_no_mark_and_takes_the_fewest_labels_room() -> None:
    outcome = {TOP_RIGHT: Trial(TOP_RIGHT, 0, 1), BOTTOM_RIGHT: Trial(BOTTOM_RIGHT, 2, 0), BOTTOM_LEFT: Trial(BOTTOM_LEFT, 0, 3)}
    asked = []

    def trial_in(corner):  # type: ignore[no-untyped-def]
        asked.append(corner)
        return outcome[corner]

    trials, best = try_corners(Trial(TOP_LEFT, 0, 2), trial_in)
    assert asked == [corner for corner in CORNERS if corner != TOP_LEFT]
    assert [trial.corner for trial in trials] == [TOP_LEFT, *asked]
    assert best.corner == TOP_RIGHT
