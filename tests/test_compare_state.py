"""The Compare tab's own state and what follows from it, without Qt: the devices chosen and their order, the
selected row, each cell's look, and the plot of the selected operation (roofs, marks, label, range)."""

from __future__ import annotations

import math

import pytest

from compare_fixtures import GEMM, H100_RUN
from workbench.documents.device_compare import compare_session, resolve_devices
from workbench.documents.session import OperationEntry, Session
from workbench.model.devices import find_device
from workbench.model.devices.catalogue import catalogue
from workbench.model.devices.host import host_device
from workbench.state.compare_view import (
    CELL_FASTEST,
    CELL_NONE,
    CELL_PLAIN,
    DEFAULT_OTHERS,
    SESSION_DEVICE,
    CompareViewState,
    cell_look,
    compare_plot,
    device_choices,
)


def test_the_first_choice_is_the_sessions_device_and_two_others() -> None:
    assert CompareViewState().chosen == (SESSION_DEVICE, *DEFAULT_OTHERS)


def test_devices_are_kept_in_the_order_they_were_ticked_each_once() -> None:
    state = CompareViewState().choosing(["h100-sxm", "a100-sxm-80gb", "h100-sxm"])
    assert state.chosen == ("h100-sxm", "a100-sxm-80gb")
    state = state.ticking("mi300x", True).ticking("h100-sxm", False).ticking("h100-sxm", True)
    assert state.chosen == ("a100-sxm-80gb", "mi300x", "h100-sxm")  # ticked again: last
    assert state.ticking("mi300x", True) == state and state.ticking("v100-sxm2", False) == state


def test_the_chosen_devices_follow_the_choice_not_the_lists_order_and_skip_what_is_not_offered() -> None:
    h100, a100 = find_device("h100-sxm"), find_device("a100-sxm-80gb")
    choices = [("h100-sxm", "H100", h100), ("a100-sxm-80gb", "A100", a100), ("gone", "no device", None)]
    state = CompareViewState(chosen=("a100-sxm-80gb", "gone", "nvidia-0", "h100-sxm"))
    assert state.chosen_devices(choices) == [a100, h100]


def test_the_choices_list_the_sessions_device_the_detected_gpus_this_machine_and_the_catalogue() -> None:
    h100 = find_device("h100-sxm")
    host = host_device()
    choices = device_choices(h100, {"nvidia-0": h100}, host, catalogue().values())
    assert choices[0] == (SESSION_DEVICE, "Session: NVIDIA H100 SXM", h100)
    assert choices[1] == ("nvidia-0", "NVIDIA H100 SXM (nvidia-0)", h100)
    assert choices[2] == (host.key, host.name, host)
    assert [key for key, _, _ in choices[3:]] == list(catalogue())
    assert device_choices(None, {}, host, [])[0][0] == host.key  # no session device: no choice for it


def test_the_selected_row_stays_inside_the_comparison() -> None:
    assert CompareViewState(row=5).shown_row(3) == 2
    assert CompareViewState(row=1).shown_row(3) == 1
    assert CompareViewState(row=-1).shown_row(3) == 0


def test_the_shortest_bound_of_several_devices_is_marked_and_a_missing_bound_too() -> None:
    session = Session(operations=[OperationEntry("gemm", GEMM), OperationEntry("int8", GEMM.replace("fp16", "int8"))])
    comparison = compare_session(session, resolve_devices("h100-sxm,a100-sxm-80gb,v100-sxm2"))
    # fp16: 989 TFLOP/s on the H100 against 312 on the A100 and 125 on the V100: the H100's is the shortest
    assert [cell_look(comparison, 0, column) for column in range(3)] == [CELL_FASTEST, CELL_PLAIN, CELL_PLAIN]
    assert cell_look(comparison, 1, 2) == CELL_NONE  # the V100 has no int8 tensor-core rate
    alone = compare_session(session, resolve_devices("h100-sxm"))
    assert cell_look(alone, 0, 0) == CELL_PLAIN  # one device: nothing to be fastest against


def test_the_plot_draws_each_devices_roof_its_bound_and_the_run_that_reached_it() -> None:
    session = Session(operations=[OperationEntry("gemm", GEMM)], runs=[dict(H100_RUN)])
    comparison = compare_session(session, resolve_devices("h100-sxm,h200-sxm"))
    plot = compare_plot(comparison, 0)
    assert [roof.column for roof in plot.roofs] == [0, 1]
    assert all(roof.assumed for roof in plot.roofs)  # catalogue rates: drawn dashed
    # intensity 2·4096³ FLOP / (3·4096²·2 B) = 4096/3 FLOP/B; ridges 989/3.35 = 295.2 and 989/4.8 = 206 FLOP/B
    intensity = 4096 / 3
    assert plot.x_range == pytest.approx((math.log10(989e12 / 4.8e12 / 30), math.log10(intensity * 30)))
    h100_roof = plot.roofs[0]
    assert h100_roof.xs[1] == pytest.approx(math.log10(989e12 / 3.35e12))  # the slope ends at the ridge
    assert h100_roof.ys[1] == h100_roof.ys[2] == pytest.approx(math.log10(989e12))
    bounds = [mark for mark in plot.marks if not mark.measured]
    assert [mark.column for mark in bounds] == [0, 1]
    assert all(mark.x == pytest.approx(math.log10(intensity)) and mark.y == pytest.approx(math.log10(989e12)) for mark in bounds)
    (star,) = [mark for mark in plot.marks if mark.measured]  # the run ran on the H100 only
    assert star.column == 0 and star.y == pytest.approx(math.log10(2 * 4096**3 / 2.0e-4))  # the median, 200 µs
    assert plot.label == ("gemm", pytest.approx(math.log10(intensity) + 0.12), pytest.approx((star.y + math.log10(989e12)) / 2))
    low, high = plot.y_range
    assert low < star.y and high > math.log10(989e12)


def test_a_device_without_the_paths_rate_draws_no_roof_and_nothing_drawn_leaves_the_range_open() -> None:
    session = Session(operations=[OperationEntry("int8", GEMM.replace("fp16", "int8"))])
    plot = compare_plot(compare_session(session, resolve_devices("h100-sxm,v100-sxm2")), 0)
    assert [roof.column for roof in plot.roofs] == [0] and {mark.column for mark in plot.marks} == {0}
    nothing = compare_plot(compare_session(session, resolve_devices("v100-sxm2")), 0)
    assert nothing.roofs == () and nothing.marks == () and nothing.label is None and nothing.y_range is None
