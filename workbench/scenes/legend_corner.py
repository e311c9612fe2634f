"""Which corner of a plot its legend takes: the first, in an order of preference, where it covers no mark.

A legend is drawn over the plot (a white, nearly opaque box), so wherever it
sits it hides what is under it. On a roofline the top left lies above the
memory roof and is usually empty, but a sweep whose largest operations reach
the compute roof puts points there; the bottom right (below the compute roofs,
right of the memory roof's foot) is then normally empty. Everything here is
in the plot's pixels (x right, y down), the same as `workbench.scenes.label_layout`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.scenes.label_layout import Box, boxes_overlap


@dataclass(frozen=True)
class Corner:
    """A corner of the plot: the legend's box is anchored to it, `MARGIN` away from both edges."""

    name: str
    right: bool
    bottom: bool


TOP_LEFT = Corner("top left", right=False, bottom=False)
BOTTOM_RIGHT = Corner("bottom right", right=True, bottom=True)
TOP_RIGHT = Corner("top right", right=True, bottom=False)
BOTTOM_LEFT = Corner("bottom left", right=False, bottom=True)
# Top left first (above the memory roof: where the legend always was), then the corner a roofline normally leaves
# empty, then the others.
CORNERS = (TOP_LEFT, BOTTOM_RIGHT, TOP_RIGHT, BOTTOM_LEFT)
MARGIN = (12.0, 10.0)  # pixels between the legend and the plot's nearest edges: across, down


def corner_box(corner: Corner, size: tuple[float, float], width: float, height: float) -> Box:
    """The legend's box (left, top, right, bottom) when it takes `corner` of a `width` × `height` plot."""
    w, h = size
    left = width - MARGIN[0] - w if corner.right else MARGIN[0]
    top = height - MARGIN[1] - h if corner.bottom else MARGIN[1]
    return (left, top, left + w, top + h)


def covered(box: Box, marks: Sequence[Box] | np.ndarray) -> int:
    """How many of the marks the box overlaps (as `boxes_overlap` has it); `marks` as boxes, or as the rows of an
    array (`mark_rows`: a small plot of thousands of points puts thousands under every corner)."""
    if isinstance(marks, np.ndarray):
        left, top, right, bottom = box
        return int(np.count_nonzero((left < marks[:, 2]) & (marks[:, 0] < right) & (top < marks[:, 3]) & (marks[:, 1] < bottom)))
    return sum(1 for mark in marks if boxes_overlap(box, mark))


def mark_rows(marks: Sequence[Box]) -> np.ndarray:
    """The marks as the rows of an array, for `covered`, `faults` and `choose_corner` to count at once."""
    return np.array(marks, dtype=float).reshape(-1, 4)


def faults(box: Box, marks: Sequence[Box] | np.ndarray, width: float, height: float) -> int:
    """What a legend in `box` spoils on a `width` × `height` plot: each mark it covers, and one more when it runs
    out of the plot (wider or taller than the room, it is cut at the edge). Corners and listings are judged by it."""
    left, top, right, bottom = box
    return covered(box, marks) + (0 if left >= 0 and top >= 0 and right <= width and bottom <= height else 1)


def choose_corner(
    size: tuple[float, float],
    width: float,
    height: float,
    marks: Sequence[Box] | np.ndarray,
    keep: Corner | None = None,
    keep_covering: int = 0,
) -> Corner:
    """The corner for a legend of `size`: `keep` while it spoils no more than `keep_covering` (`faults`: marks
    covered, and running out of the plot; what it spoiled when it was chosen: a legend that jumped corners as a
    point moves under typing would be hard to read), else the first of `CORNERS` that spoils nothing, else the
    one that spoils the least (the earlier on a tie)."""
    if keep is not None and faults(corner_box(keep, size, width, height), marks, width, height) <= keep_covering:
        return keep
    best, fewest = CORNERS[0], -1
    for corner in CORNERS:
        count = faults(corner_box(corner, size, width, height), marks, width, height)
        if count == 0:
            return corner
        if fewest < 0 or count < fewest:
            best, fewest = corner, count
    return best


# One-by-one legend trials refused in a row after which the rest are left out untried: the cost of a layout is capped
# (each trial measures a legend and finds the marks under it), whatever the number of labels without room.
REFUSALS_TO_STOP = 4


def list_unplaced(
    start: frozenset[str],
    lay_out: Callable[[frozenset[str]], tuple[frozenset[str], int]],
    rounds: int,
    first: Callable[[str], Any] = str,
    covers: Callable[[frozenset[str]], int] | None = None,
) -> tuple[frozenset[str], frozenset[str]]:
    """Which labels the legend lists, and which are left out: the labels with no room on the plot are listed, round
    by round (the legend, a mark itself, grows with each row and may take the room of further labels), but only
    while the grown legend covers no more marks than it did. Where a round would make it cover another (on a small
    plot the rows of a legend in a bottom corner climb over the points above), its labels are listed one at a time,
    in the order of `first` (the caller's: a roof's name before an operation's, whose point keeps its hover text),
    each only if the legend still covers no more, and the rest are left out. `lay_out(listed)` lays the plot out
    with `listed` in the legend and returns the labels that found no room and how many marks the legend covers;
    its last call is with the listing returned. At most `rounds` rounds of growth. `covers(listed)`, when given,
    answers the second half of `lay_out(listed)` alone (the legend's faults do not depend on where the labels go):
    a label tried one at a time and refused then costs no layout of the plot. After REFUSALS_TO_STOP labels refused
    in a row the listing stops (on a small, crowded plot each trial measured a legend for nothing): the labels not
    tried are left out, as the refused ones are."""
    listed = start
    unplaced, covering = lay_out(listed)
    for _ in range(rounds):
        missing = unplaced - listed
        if not missing:
            return listed, frozenset()
        grown_unplaced, grown_covering = lay_out(listed | missing)
        if grown_covering <= covering:
            listed, unplaced, covering = listed | missing, grown_unplaced, grown_covering
            continue
        laid_with = listed | missing
        refused = 0  # refusals in a row
        for label in sorted(missing, key=lambda key: (first(key), key)):
            if refused == REFUSALS_TO_STOP:
                break  # the legend has no room left: the rest are left out without a trial each
            one_more = listed | {label}
            laid_with = one_more  # the plot (its legend, at least) as laid out last
            if covers is not None and covers(one_more) > covering:
                refused += 1
                continue
            grown_unplaced, grown_covering = lay_out(one_more)
            if grown_covering <= covering:
                listed, unplaced, refused = one_more, grown_unplaced, 0
            else:
                refused += 1
        if laid_with != listed:
            lay_out(listed)  # the legend as it is kept, and the labels' places with it
        return listed, missing - listed
    return listed, unplaced - listed


@dataclass(frozen=True)
class Trial:
    """A layout tried with the legend in `corner`: how many marks the legend covered, how many labels found no
    room with it there (each is then listed in the legend: the legend took their place), and how many of those
    were left out, neither on the plot nor in the legend (`list_unplaced`)."""

    corner: Corner
    covering: int
    evicted: int
    left_out: int = 0


def best_trial(trials: Sequence[Trial]) -> Trial:
    """The corner to keep of those tried: one that covers no mark before one that does (a legend drawn over a
    point hides it; a label listed in the legend is still read there, and a point whose label was left out still
    shows its name on hover), then the fewest labels left out, the fewest evicted, the fewest marks covered, and
    the order of `CORNERS`."""
    return min(trials, key=lambda t: (t.covering > 0, t.left_out, t.evicted, t.covering, CORNERS.index(t.corner)))


def try_corners(first: Trial, trial_in: Callable[[Corner], Trial]) -> tuple[list[Trial], Trial]:
    """The legend laid out in each corner besides `first`'s (`trial_in`, in the order of `CORNERS`), and the trial
    to keep of all of them (`best_trial`)."""
    trials = [first, *(trial_in(corner) for corner in CORNERS if corner != first.corner)]
    return trials, best_trial(trials)
