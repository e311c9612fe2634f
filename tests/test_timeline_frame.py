"""What a Timeline frame draws for a view range (workbench.scenes.timeline_frame): the bars intersecting it, sub-pixel runs
merged without losing or inventing any covered time, and the widest bars as label candidates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.scenes.timeline_frame import GAP_PX, NARROW_PX, LaneBars


def _bars(seed: int, count: int, lanes: int = 2, styles: int = 2) -> LaneBars:
    rng = np.random.default_rng(seed)
    lane = rng.integers(0, lanes, count)
    widths = rng.exponential(1.0, count) * rng.choice([0.001, 1.0], count)
    starts = np.zeros(count)
    for value in range(lanes):  # each lane a sequence: bars one after another with gaps, as a stream runs
        mine = np.flatnonzero(lane == value)
        gaps = rng.exponential(0.2, len(mine))
        starts[mine] = np.cumsum(gaps + np.concatenate([[0.0], widths[mine][:-1]]))
    return LaneBars(starts, starts + widths, lane.astype(float), rng.integers(0, styles, count))


def _covered(x0: np.ndarray, x1: np.ndarray) -> list[tuple[float, float]]:
    """The union of intervals, as sorted disjoint (start, end) pairs (touching ones joined)."""
    spans: list[list[float]] = []
    for a, b in sorted(zip(x0.tolist(), x1.tolist())):
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    return [(a, b) for a, b in spans]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(0, 400), left=st.floats(0, 1), width=st.floats(0.001, 1.2),
       pixel=st.sampled_from([0.0, 1e-4, 1e-2, 0.5]))
def test_a_frame_draws_exactly_the_bars_that_intersect_the_range(seed: int, count: int, left: float, width: float, pixel: float) -> None:
    bars = _bars(seed, count)
    span = float(bars.ends.max()) if count else 1.0
    x0, x1 = left * span, (left + width) * span
    frame = bars.frame(x0, x1, pixel, limit=60)
    brute = [i for i in range(count) if bars.ends[i] >= x0 and bars.starts[i] <= x1]
    assert frame.visible.tolist() == brute
    for style in set(bars.styles[brute].tolist()):
        for lane in set(bars.lanes[brute].tolist()):
            mine = [i for i in brute if bars.styles[i] == style and bars.lanes[i] == lane]
            if not mine:
                continue
            left_px, right_px, lanes = frame.bars[style]
            on_lane = lanes == lane
            drawn = _covered(left_px[on_lane], right_px[on_lane])
            exact = _covered(bars.starts[mine], bars.ends[mine])
            # Every visible bar lies inside what is drawn, and what is drawn adds at most the merged gaps.
            for a, b in exact:
                assert any(c <= a and b <= d for c, d in drawn), (a, b, drawn)
            for c, d in drawn:
                assert any(a <= c <= b for a, b in exact) and any(a <= d <= b for a, b in exact)
            if pixel == 0.0:
                assert on_lane.sum() == len(mine)  # not laid out yet: nothing merged
    drawn_lanes = {(style, lane) for style, (_, _, lanes) in frame.bars.items() for lane in lanes.tolist()}
    assert drawn_lanes == {(int(bars.styles[i]), float(bars.lanes[i])) for i in brute}


def test_runs_of_sub_pixel_bars_are_merged_and_wide_bars_are_not() -> None:
    # Lane 0: ten bars of 0.1 px a pixel apart, then one of 50 px; lane 1: the same ten bars, of another style.
    narrow = np.arange(10) * 1.0
    starts = np.concatenate([narrow, [20.0], narrow])
    ends = np.concatenate([narrow + 0.1, [70.0], narrow + 0.1])
    lanes = np.array([0.0] * 11 + [1.0] * 10)
    styles = np.array([0] * 11 + [1] * 10)
    frame = LaneBars(starts, ends, lanes, styles).frame(0.0, 100.0, pixel=1.0, limit=5)
    left, right, lane = frame.bars[0]
    assert list(zip(left.tolist(), right.tolist())) == [(0.0, 9.1), (20.0, 70.0)]  # one run, then the wide bar
    assert frame.bars[1][0].tolist() == [0.0] and frame.bars[1][1].tolist() == [9.1]  # styles never merge
    assert frame.drawn() == 3
    assert frame.labels[0] == 10  # the widest first
    # Zoomed in until each bar is wider than NARROW_PX pixels, or further apart than GAP_PX: nothing merges.
    assert LaneBars(starts, ends, lanes, styles).frame(0.0, 100.0, pixel=0.1 / NARROW_PX / 2, limit=5).drawn() == 21
    apart = LaneBars(narrow * (GAP_PX + 1.5), narrow * (GAP_PX + 1.5) + 0.1, np.zeros(10), np.zeros(10, dtype=int))
    assert apart.frame(0.0, 100.0, pixel=1.0, limit=0).drawn() == 10


def test_label_candidates_are_the_widest_in_view_ties_by_order_at_most_the_limit() -> None:
    starts = np.arange(8) * 10.0
    widths = np.array([1, 5, 5, 2, 9, 1, 5, 3], dtype=float)
    bars = LaneBars(starts, starts + widths, np.zeros(8), np.zeros(8, dtype=int))
    assert bars.frame(0, 100, 0.01, limit=4).labels.tolist() == [4, 1, 2, 6]
    assert bars.frame(15, 100, 0.01, limit=2).labels.tolist() == [4, 1]  # bar 1 ends at 15: still in view
    assert bars.frame(15.5, 100, 0.01, limit=2).labels.tolist() == [4, 2]
    assert bars.frame(0, 100, 0.01, limit=0).labels.tolist() == []
    assert bars.frame(200, 300, 0.01, limit=4).visible.tolist() == []


def test_bars_must_be_given_one_entry_each() -> None:
    with pytest.raises(ValueError, match="one entry per bar"):
        LaneBars(np.zeros(3), np.ones(2), np.zeros(3), np.zeros(3, dtype=int))
