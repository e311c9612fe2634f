"""Which corner a plot's legend takes (workbench.scenes.legend_corner): pure geometry in the plot's pixels."""

from __future__ import annotations

from workbench.scenes.legend_corner import (
    BOTTOM_LEFT,
    BOTTOM_RIGHT,
    CORNERS,
    MARGIN,
    TOP_LEFT,
    TOP_RIGHT,
    Trial,
    best_trial,
    choose_corner,
    corner_box,
    covered,
    list_unplaced,
    REFUSALS_TO_STOP,
)

SIZE = (200.0, 60.0)
WIDTH, HEIGHT = 700.0, 400.0


def mark_in(corner) -> tuple[float, float, float, float]:  # type: ignore[no-untyped-def]
    """An 8 px mark in the middle of where a legend of SIZE would sit in `corner`."""
    left, top, right, bottom = corner_box(corner, SIZE, WIDTH, HEIGHT)
    x, y = (left + right) / 2, (top + bottom) / 2
    return (x - 4, y - 4, x + 4, y + 4)


def test_each_corner_is_the_margin_away_from_its_two_edges() -> None:
    assert corner_box(TOP_LEFT, SIZE, WIDTH, HEIGHT) == (MARGIN[0], MARGIN[1], MARGIN[0] + 200, MARGIN[1] + 60)
    assert corner_box(BOTTOM_RIGHT, SIZE, WIDTH, HEIGHT) == (WIDTH - MARGIN[0] - 200, HEIGHT - MARGIN[1] - 60, WIDTH - MARGIN[0], HEIGHT - MARGIN[1])
    assert corner_box(TOP_RIGHT, SIZE, WIDTH, HEIGHT)[1:] == (MARGIN[1], WIDTH - MARGIN[0], MARGIN[1] + 60)
    box = corner_box(BOTTOM_LEFT, SIZE, WIDTH, HEIGHT)
    assert (box[0], box[3]) == (MARGIN[0], HEIGHT - MARGIN[1])
    assert CORNERS == (TOP_LEFT, BOTTOM_RIGHT, TOP_RIGHT, BOTTOM_LEFT)  # above the memory roof first, then below


def test_the_first_corner_that_covers_no_mark_is_taken() -> None:
    assert choose_corner(SIZE, WIDTH, HEIGHT, []) == TOP_LEFT
    assert choose_corner(SIZE, WIDTH, HEIGHT, [mark_in(TOP_LEFT)]) == BOTTOM_RIGHT
    assert choose_corner(SIZE, WIDTH, HEIGHT, [mark_in(TOP_LEFT), mark_in(BOTTOM_RIGHT)]) == TOP_RIGHT
    assert choose_corner(SIZE, WIDTH, HEIGHT, [mark_in(c) for c in (TOP_LEFT, BOTTOM_RIGHT, TOP_RIGHT)]) == BOTTOM_LEFT


def test_where_every_corner_covers_a_mark_the_one_that_covers_the_fewest() -> None:
    marks = [mark_in(TOP_LEFT), mark_in(BOTTOM_RIGHT), mark_in(BOTTOM_RIGHT), mark_in(TOP_RIGHT), mark_in(BOTTOM_LEFT)]
    assert choose_corner(SIZE, WIDTH, HEIGHT, marks) == TOP_LEFT  # one each but two bottom right: the first of those
    marks.append(mark_in(TOP_LEFT))
    assert choose_corner(SIZE, WIDTH, HEIGHT, marks) == TOP_RIGHT
    assert covered(corner_box(BOTTOM_RIGHT, SIZE, WIDTH, HEIGHT), marks) == 2


def test_a_kept_corner_stays_until_it_covers_more_than_when_it_was_chosen() -> None:
    # kept although the top left is free again (a point moved away under typing): no jump on each keystroke
    assert choose_corner(SIZE, WIDTH, HEIGHT, [], keep=BOTTOM_RIGHT) == BOTTOM_RIGHT
    # a point moved under it: the legend moves
    assert choose_corner(SIZE, WIDTH, HEIGHT, [mark_in(BOTTOM_RIGHT)], keep=BOTTOM_RIGHT) == TOP_LEFT
    # chosen while covering one (every corner did): kept while it covers no more
    marks = [mark_in(c) for c in CORNERS]
    assert choose_corner(SIZE, WIDTH, HEIGHT, marks, keep=TOP_RIGHT, keep_covering=1) == TOP_RIGHT
    assert choose_corner(SIZE, WIDTH, HEIGHT, [*marks, mark_in(TOP_RIGHT)], keep=TOP_RIGHT, keep_covering=1) == TOP_LEFT


def test_the_trial_kept_covers_no_mark_then_takes_the_fewest_labels_room() -> None:
    trials = [Trial(TOP_LEFT, 2, 0), Trial(BOTTOM_RIGHT, 0, 3), Trial(TOP_RIGHT, 0, 1), Trial(BOTTOM_LEFT, 0, 1)]
    assert best_trial(trials).corner == TOP_RIGHT  # covers nothing; one label listed; before bottom left in order
    assert best_trial([Trial(TOP_LEFT, 2, 0), Trial(BOTTOM_RIGHT, 1, 0)]).corner == BOTTOM_RIGHT
    assert best_trial([Trial(BOTTOM_LEFT, 0, 0), Trial(TOP_LEFT, 0, 0)]).corner == TOP_LEFT


def test_best_trial_leaves_out_the_fewest_labels_among_corners_that_cover_no_mark() -> None:
    trials = [Trial(TOP_LEFT, 0, 0, 2), Trial(BOTTOM_RIGHT, 0, 3, 0), Trial(TOP_RIGHT, 4, 0, 0)]
    assert best_trial(trials).corner == BOTTOM_RIGHT  # listing three beats leaving two out; covering loses to both
    assert best_trial([Trial(TOP_RIGHT, 4, 0, 0), Trial(BOTTOM_LEFT, 0, 0, 5)]).corner == BOTTOM_LEFT


class SmallPlot:
    """A stand-in layout: a legend in a bottom corner of a plot whose points lie in its top `free_rows` rows'
    reach; each listed label is a legend row, and the legend covers every point once it has more than `free_rows`
    rows. `crowded` labels find no room on the plot from the start; `evicts` maps a label to those whose room its
    row takes once listed."""

    def __init__(self, free_rows: int, points: int, crowded: set[str], evicts: dict[str, set[str]] | None = None) -> None:
        self.free_rows, self.points, self.crowded, self.evicts = free_rows, points, crowded, evicts or {}
        self.calls: list[frozenset[str]] = []

    def __call__(self, listed: frozenset[str]) -> tuple[frozenset[str], int]:
        self.calls.append(listed)
        unplaced = set(self.crowded)
        for label in listed:
            unplaced |= self.evicts.get(label, set())
        return frozenset(unplaced), self.points if len(listed) > self.free_rows else 0


def test_labels_without_room_are_listed_round_by_round_while_the_legend_covers_no_point() -> None:
    plot = SmallPlot(free_rows=5, points=6, crowded={"roof 0", "roof 1"}, evicts={"roof 1": {"operation 2"}})
    listed, left_out = list_unplaced(frozenset(), plot, rounds=10)
    assert listed == {"roof 0", "roof 1", "operation 2"} and left_out == set()
    assert plot.calls[-1] == listed


def test_a_round_that_would_cover_the_points_lists_roofs_first_one_by_one_and_leaves_out_the_rest() -> None:
    """The legend grows over the points (six rows in room for four): of the round's labels the roofs are listed
    first, while the legend still covers nothing; the operations that would not fit are left out, and the plot is
    laid out last with what is kept."""
    crowded = {"roof 0", "operation 0", "operation 1", "operation 2", "roof 1", "memory"}
    plot = SmallPlot(free_rows=4, points=6, crowded=crowded)
    listed, left_out = list_unplaced(frozenset(), plot, rounds=10, first=lambda key: key.startswith("operation"))
    assert listed == {"memory", "roof 0", "roof 1", "operation 0"}
    assert left_out == {"operation 1", "operation 2"}
    assert plot.calls[-1] == listed
    assert plot(listed)[1] == 0  # the legend kept covers no point


def test_a_label_the_legend_cannot_take_costs_no_layout_when_its_faults_are_answered_alone() -> None:
    """With `covers` (the legend's faults for a listing, without laying the labels out), the one-by-one listing
    lays the plot out only for the labels it keeps, and ends as it would without it."""
    crowded = {"roof 0", "operation 0", "operation 1", "operation 2", "roof 1", "memory"}
    plain = SmallPlot(free_rows=4, points=6, crowded=crowded)
    expected = list_unplaced(frozenset(), plain, rounds=10, first=lambda key: key.startswith("operation"))
    quick = SmallPlot(free_rows=4, points=6, crowded=crowded)
    asked: list[frozenset[str]] = []

    def covers(listed: frozenset[str]) -> int:
        asked.append(listed)
        return quick.points if len(listed) > quick.free_rows else 0

    found = list_unplaced(frozenset(), quick, rounds=10, first=lambda key: key.startswith("operation"), covers=covers)
    assert found == expected
    assert quick.calls[-1] == found[0]
    refused = [listed for listed in asked if len(listed) > quick.free_rows]
    assert refused and not any(listed in quick.calls for listed in refused)
    assert len(quick.calls) < len(plain.calls)


def test_a_legend_that_covered_points_from_the_start_may_grow_while_it_covers_no_more() -> None:
    plot = SmallPlot(free_rows=0, points=3, crowded={"roof 0", "roof 1"})
    listed, left_out = list_unplaced(frozenset({"memory"}), plot, rounds=10)
    assert listed == {"memory", "roof 0", "roof 1"} and left_out == set()


def test_a_legend_that_runs_out_of_the_plot_counts_as_a_fault_like_a_covered_mark() -> None:
    """At a large text size a legend row can be wider than the plot: a corner or a listing that leaves the legend
    cut at the plot's edge is judged as one that covers a mark, so the listing stops before it."""
    from workbench.scenes.legend_corner import faults

    assert faults((10, 10, 110, 60), [], 569, 475) == 0
    assert faults((-44, 256, 558, 466), [], 569, 475) == 1  # wider than the plot, anchored right: cut on the left
    assert faults((10, 10, 110, 60), [(50, 20, 60, 30)], 569, 475) == 1
    assert faults((500, 400, 600, 500), [(550, 420, 560, 430)], 569, 475) == 2


def test_marks_counted_as_rows_of_an_array_as_one_by_one() -> None:
    """`covered`, `faults` and `choose_corner` count the same over `mark_rows(marks)` as over the boxes: edges that
    only touch do not count, in either."""
    import random

    from workbench.scenes.legend_corner import CORNERS, choose_corner, corner_box, covered, faults, mark_rows

    rng = random.Random(34)
    marks = [(x, y, x + 6.0, y + 6.0) for x, y in ((rng.uniform(-5, 300), rng.uniform(-5, 200)) for _ in range(2000))]
    marks += [(0.0, 0.0, 12.0, 10.0), (112.0, 50.0, 120.0, 60.0)]  # touching the top-left box's edges only
    rows = mark_rows(marks)
    for corner in CORNERS:
        box = corner_box(corner, (100.0, 40.0), 300.0, 200.0)
        assert covered(box, rows) == covered(box, marks)
        assert faults(box, rows, 300.0, 200.0) == faults(box, marks, 300.0, 200.0)
    assert covered((12.0, 10.0, 112.0, 50.0), mark_rows([(0.0, 0.0, 12.0, 10.0), (112.0, 50.0, 120.0, 60.0)])) == 0
    assert choose_corner((100.0, 40.0), 300.0, 200.0, rows) == choose_corner((100.0, 40.0), 300.0, 200.0, marks)
    assert covered((0.0, 0.0, 10.0, 10.0), mark_rows([])) == 0


def test_the_one_by_one_listing_stops_after_a_run_of_refusals() -> None:
    """On a plot with room for no row, each of many labels would be tried (a legend measured for each): after
    REFUSALS_TO_STOP refusals in a row the rest are left out untried, as the refused ones are."""
    crowded = {f"operation {index}" for index in range(40)}
    plot = SmallPlot(free_rows=0, points=6, crowded=crowded)
    asked: list[frozenset[str]] = []

    def covers(listed: frozenset[str]) -> int:
        asked.append(listed)
        return plot.points if len(listed) > plot.free_rows else 0

    listed, left_out = list_unplaced(frozenset(), plot, rounds=10, covers=covers)
    assert listed == set() and left_out == crowded
    assert len(asked) == REFUSALS_TO_STOP  # not one trial per label
    # a label accepted after refusals starts the count again: with room for two rows every label is tried
    # until two are in, then four more are refused
    roomy = SmallPlot(free_rows=2, points=6, crowded=crowded)
    listed, left_out = list_unplaced(frozenset(), roomy, rounds=10)
    assert len(listed) == 2 and len(left_out) == 38
