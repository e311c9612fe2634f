"""The Timeline tab's own state and what follows from it, without Qt: the what-ifs, the match rules, the lanes and
their bars, the lanes named, the critical path's line and text, and the measured plot of an imported trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from step_fixtures import DP_STEP, A, G, X
from trace_fixtures import FILL_KERNEL, data_parallel_rows, write_sqlite
from workbench.documents.breakdown import KIND, MODULE
from workbench.errors import WorkbenchError
from workbench.model.devices.catalogue import find_device
from workbench.profilers.trace_reader import read_trace
from workbench.state.timeline_view import (
    COMMUNICATION,
    COMMUNICATION_CRITICAL,
    COMPUTE,
    COMPUTE_CRITICAL,
    TimelineViewState,
    named_lanes,
    path_text,
    step_lanes,
    trace_plot,
    unmatched_lines,
)
from workbench.steps import parse_step, step_timeline

EXAMPLE = DP_STEP  # its hand calculation on an H100 SXM (G, A, X): tests/step_fixtures.py


@pytest.fixture(scope="module")
def h100():  # type: ignore[no-untyped-def]
    return find_device("h100-sxm")


def test_a_what_if_is_set_changed_in_place_and_taken_away_at_one() -> None:
    state = TimelineViewState().with_speedup("opt", 4.0).with_speedup("fwd", 2.0).with_speedup("opt", 8.0)
    assert state.speedups == (("opt", 8.0), ("fwd", 2.0)) and state.speedup_map() == {"opt": 8.0, "fwd": 2.0}
    assert state.with_speedup("opt", 1.0).speedups == (("fwd", 2.0),)
    assert state.with_speedup("bwd1", 1.0) == state
    # the step edited: what-ifs of operations no longer in it go
    assert state.keeping_speedups({"fwd", "bwd1"}).speedups == (("fwd", 2.0),)
    assert TimelineViewState().breakdown_by == KIND and TimelineViewState(breakdown_by=MODULE).breakdown_by == MODULE


def test_the_match_rules_are_read_from_the_text_typed_and_a_bad_one_names_itself() -> None:
    plan = parse_step(EXAMPLE)
    rules = TimelineViewState(match_rules="regex:gemm=fwd; ;nccl*=ar1 ").rules(plan)
    assert [(rule.pattern, rule.name) for rule in rules] == [("regex:gemm", "fwd"), ("nccl*", "ar1")]
    assert TimelineViewState().rules(plan) == []
    with pytest.raises(WorkbenchError, match="the step has no operation 'nope'"):
        TimelineViewState(match_rules="gemm=nope").rules(plan)


def test_a_short_critical_path_is_named_whole_and_a_long_one_by_its_ends() -> None:
    assert path_text(("fwd", "bwd1", "opt")) == ("fwd → bwd1 → opt", "")
    path = tuple(f"op{i}" for i in range(500))
    shown, whole = path_text(path)
    assert shown == "op0 → op1 → op2 → … 494 more … → op497 → op498 → op499"
    assert whole.startswith("Critical path (500 operations): op0 → op1") and "op250 → op251" in whole
    modules = tuple(f"model.layers.{i}.self_attn.o_proj.mm_bwd" for i in range(40))  # a traced model's names
    shown, _ = path_text(modules)
    assert shown.startswith("model.layers.0.self_attn.o_proj.mm_bwd → … 38 more … → ") and len(shown) < 120


@pytest.mark.parametrize(("lanes", "room", "line", "named"), [
    (7, 7 * 20.0, 20.0, [0, 1, 2, 3, 4, 5, 6]),  # a line of room per lane: every lane
    (7, 6 * 20.0, 20.0, [0, 2, 4, 6]),  # less: every second
    (7, 2 * 20.0, 20.0, [0, 4]),  # 7 lines in 2: every fourth
    (3, 0.0, 20.0, [0, 1, 2]),  # not laid out yet
])
def test_lanes_are_named_as_often_as_their_names_fit(lanes: int, room: float, line: float, named: list[int]) -> None:
    assert named_lanes(lanes, room, line) == named
    assert all((b - a) * room / lanes >= line for a, b in zip(named, named[1:])) or room == 0


def test_the_step_plot_has_a_lane_per_stream_and_the_critical_path_over_its_bars(h100) -> None:  # type: ignore[no-untyped-def]
    timeline = step_timeline(EXAMPLE, h100)
    lanes = step_lanes(timeline)
    assert lanes.streams == ("compute", "comm") and lanes.names == ("fwd", "bwd1", "ar1", "bwd2", "ar2", "opt")
    # on the path fwd → bwd1 → bwd2 → ar2 → opt; ar1 runs hidden under bwd2
    styles = dict(zip(lanes.names, lanes.bars.styles.tolist()))
    assert styles == {"fwd": COMPUTE_CRITICAL, "bwd1": COMPUTE_CRITICAL, "ar1": COMMUNICATION, "bwd2": COMPUTE_CRITICAL,
                      "ar2": COMMUNICATION_CRITICAL, "opt": COMPUTE_CRITICAL}
    assert COMPUTE not in styles.values()
    assert lanes.bars.lanes.tolist() == [0, 0, 1, 0, 1, 0]
    step = 3 * G + A + X
    assert lanes.x_range == pytest.approx((-0.02 * step, 1.02 * step)) and lanes.y_range == (-0.7, 1.8)
    # the line: along the compute lane to 3G, over to the comm lane for ar2, back for opt; straight runs are one segment
    xs, ys = lanes.critical
    assert xs == pytest.approx([0, 3 * G, 3 * G, 3 * G + A, 3 * G + A, step])
    assert ys == pytest.approx([0.36, 0.36, 1.36, 1.36, 0.36, 0.36])


def test_the_measured_plot_lays_out_the_trace_around_the_matched_intervals(h100, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    trace = read_trace(str(write_sqlite(tmp_path / "dp.sqlite", data_parallel_rows())))
    timeline = step_timeline(EXAMPLE, h100, trace=trace)
    measured = timeline.measured
    plot = trace_plot(measured, timeline)
    assert plot.lanes == ((0, "stream 7"), (1, "stream 13"), (2, "stream 21"))
    # the matched kernels span 0.3 ms to 13.65 ms: a twentieth of 13.35 ms (0.6675 ms) either side
    assert plot.x_range == pytest.approx((-0.3675e-3, 14.3175e-3))
    assert plot.y_range == (-0.75, 2.6)
    assert len(plot.matched) == 6 and {lane for _, _, lane, _ in plot.matched} == {0, 1}
    assert [communication for _, _, lane, communication in plot.matched if lane == 1] == [True, True]
    # grey: the input copy on stream 21 and the fill kernel after the axpy, both inside the window
    grey = sorted(zip(*plot.grey))
    assert [lane for _, _, lane in grey] == [2, 0]
    assert [x for x0, x1, _ in grey for x in (x0, x1)] == pytest.approx([0.0, 0.2e-3, 13.7e-3, 13.72e-3])
    fwd = next(operation for operation in plot.operations if operation.name == "fwd")
    assert (fwd.start, fwd.end, fwd.lane) == (pytest.approx(0.3e-3), pytest.approx(4.2e-3), 0)
    assert fwd.label == "fwd 3.9 ms" and fwd.label_x == pytest.approx(2.25e-3) and fwd.bound_s == pytest.approx(G)
    assert trace_plot(measured).operations[0].bound_s is None  # no timeline: no bounds beside
    lines = unmatched_lines(measured)
    assert lines[0] == "Unmatched kernels and copies (2 names):" and any(FILL_KERNEL in line for line in lines)
    assert len(unmatched_lines(measured, limit=1)) == 3 and unmatched_lines(measured, limit=1)[-1] == "  … and 1 more"
