"""The bound-versus-size plot as a scene, without Qt: its lines, the declared point and its label's place, the
shade beyond memory, the limiter's change, the ranges, the field choice and the messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.measure.sweep import sweep_choices
from workbench.model.analysis import analyze
from workbench.model.analysis.terms import TERM_COMPUTE
from workbench.model.devices import BANDWIDTH, find_device
from workbench.scenes.sweep_scene import (
    LINE_BOUND,
    SweepInputs,
    SweepScene,
    SweepState,
    declared_label_place,
    default_range,
    follow_choices,
    label_box,
    line_crosses,
    sweep_scene,
)

H100 = find_device("h100-sxm")
BATCHED = "gemm(M=4096, N=4096, K=4096, batch=16, dtype=bf16)"


def scene_of(declaration: str, state: SweepState | None = None, measured=(), name: str = "op") -> SweepScene:  # type: ignore[no-untyped-def]
    analysis = analyze(declaration, H100)
    choices = sweep_choices(analysis)
    state = follow_choices(state or SweepState(), choices)
    inputs = SweepInputs(name, analysis, H100, "h100-sxm", "fma2", "full", False, measured=measured)
    return sweep_scene(inputs, state, choices)


def test_the_lines_are_the_analysis_at_each_swept_size() -> None:
    scene = scene_of(BATCHED)
    assert scene.message is None and scene.fields == ("M", "N", "K")
    assert (scene.x_range, len(scene.sizes)) == ((4.0, 16.0), len(np.unique(scene.sizes)))
    keys = [line.key for line in scene.lines]
    assert keys[:3] == [LINE_BOUND, TERM_COMPUTE, BANDWIDTH]
    at = int(np.flatnonzero(scene.sizes == 1024)[0])  # 2^10 is among the swept sizes
    one = analyze("gemm(M=1024, N=1024, K=1024, batch=16, dtype=bf16)", H100)
    assert scene.line(LINE_BOUND).y[at] == pytest.approx(math.log10(one.bound_time))
    assert scene.line(TERM_COMPUTE).y[at] == pytest.approx(math.log10(one.compute_time))
    assert scene.line(BANDWIDTH).y[at] == pytest.approx(math.log10(one.memory_time))
    finite = np.concatenate([line.y[np.isfinite(line.y)] for line in scene.lines])
    assert scene.y_range == pytest.approx((finite.min() - 0.3, finite.max() + 0.3))
    assert scene.bottom_title == f"M = N = K (swept; {len(scene.sizes)} sizes)"


def test_the_declared_point_sits_on_the_bound_with_its_size_and_time() -> None:
    scene = scene_of(BATCHED)
    declared = scene.declared
    analysis = analyze(BATCHED, H100)
    assert (declared.x, declared.y) == pytest.approx((12.0, math.log10(analysis.bound_time)))
    assert declared.text.startswith("as declared: M=4,096, ") and declared.right_half is True  # 12 > (4 + 16) / 2


def test_sizes_beyond_memory_start_where_the_tensors_pass_the_device_s_memory() -> None:
    scene = scene_of(BATCHED)
    footprint = lambda s: 16 * 3 * 2 * s * s  # noqa: E731  A, B and C, each 16 × s² bf16 values
    start = scene.beyond.x
    assert footprint(2 ** (start - 0.05)) <= 80e9 < footprint(2 ** (start + 0.05))
    assert "80 GB of device memory" in scene.beyond.text
    assert scene.beyond.label_at[1] < scene.y_range[1] and scene.beyond.anchor == (1.0, 0.0)
    assert "no other fields" not in scene.caption and "batch=16" in scene.caption and "NVIDIA H100" in scene.caption


def test_the_limiter_change_is_the_first_size_of_the_new_limiter() -> None:
    scene = scene_of(BATCHED)
    limiter = scene.limiter
    assert limiter.text.startswith("memory- → compute-limited\nfrom M = N = K = ")
    size = int(limiter.text.rsplit("= ", 1)[1].replace(",", ""))
    assert limiter.x == pytest.approx(math.log2(size))
    below = analyze(f"gemm(M={size - 1}, N={size - 1}, K={size - 1}, batch=16, dtype=bf16)", H100)
    at = analyze(f"gemm(M={size}, N={size}, K={size}, batch=16, dtype=bf16)", H100)
    assert below.memory_time > below.compute_time and at.compute_time >= at.memory_time
    assert scene.y_range[0] < limiter.label_at[1]  # at the plot's foot, inside it


def test_a_memory_bound_operation_has_no_limiter_change_and_its_memory_line_is_the_bound() -> None:
    scene = scene_of("add(n=2**24, dtype=fp32)")
    assert scene.limiter is None and scene.fields == ("n",) and scene.x_range == (10.0, 30.0)
    assert np.allclose(scene.line(BANDWIDTH).y, scene.line(LINE_BOUND).y)
    assert scene.beyond is None  # 12 × 2^30 B at most: within 80 GB


def test_measured_medians_widen_the_time_range() -> None:
    plain = scene_of("add(n=2**24, dtype=fp32)")
    measured = scene_of("add(n=2**24, dtype=fp32)", measured=[(20.0, plain.y_range[0] - 2, plain.y_range[1] + 1)])
    assert measured.y_range == pytest.approx((plain.y_range[0] - 2 - 0.3, plain.y_range[1] + 1 + 0.3))
    outside = scene_of("add(n=2**24, dtype=fp32)", measured=[(40.0, -30.0, 30.0)])  # beyond the swept range: left out
    assert outside.y_range == plain.y_range


def test_the_field_choice_and_range_follow_the_operation() -> None:
    gemm = sweep_choices(analyze(BATCHED, H100))
    add = sweep_choices(analyze("add(n=2**24, dtype=fp32)", H100))
    chosen = SweepState(("K",), 6, 12)
    assert follow_choices(chosen, gemm) == chosen  # another GEMM keeps the user's choice and range
    assert follow_choices(chosen, add) == SweepState(("n",), *default_range(("n",)))
    assert follow_choices(chosen, []) == SweepState((), 6, 12)


def test_what_cannot_be_drawn_is_said() -> None:
    assert "Declare an operation" in sweep_scene(SweepInputs("", None, H100, "h100-sxm", "fma2", "full", False),
                                                 SweepState(), []).message
    assert "below its end" in scene_of("add(n=2**24, dtype=fp32)", SweepState(("n",), 20, 20)).message
    scene = scene_of("gemm(M=4096, N=4096, K=4096, dtype=fp16)", SweepState(("M", "N", "K"), 62, 70))
    assert scene.message.startswith("No bounds to plot: ") and not scene.lines


def test_the_declared_label_goes_above_its_point_where_under_it_would_meet_the_limiter_label() -> None:
    scene = scene_of("gemm(M=128, N=128, K=128, batch=16, dtype=bf16)")
    declared = scene.declared
    assert declared.right_half is False  # 2^7 is in the left half of 2^4..2^16
    tall, short = (800.0, 600.0), (800.0, 90.0)
    anchor, position = declared_label_place(scene, (220.0, 18.0), None, short)
    assert anchor == (0.0, 0.0) and position == pytest.approx((declared.x + 0.3, declared.y - 0.05))
    # a limiter label right under the point: on a short plot the label under the point would cover it
    label_size = (220.0, 18.0)
    limiter_box = label_box((0.0, 1.0), (declared.x, declared.y - 1.0), (200.0, 36.0), scene, short)
    under = label_box((0.0, 0.0), (declared.x + 0.3, declared.y - 0.05), label_size, scene, short)
    assert under[1] < limiter_box[3]  # they meet
    anchor, position = declared_label_place(scene, label_size, limiter_box, short)
    assert anchor == (0.0, 1.0) and position[1] > declared.y
    far_below = label_box((0.0, 1.0), (declared.x, scene.y_range[0] + 0.05), (200.0, 36.0), scene, tall)
    assert declared_label_place(scene, label_size, far_below, tall)[0] == (0.0, 0.0)


def test_the_declared_label_keeps_clear_of_the_lines_where_it_can() -> None:
    """Under its point, on the side with room, while that crosses no line; else the first of above it, then the
    other side, that does: a memory-bound add swept to 2^36 has the shared-memory line under its label's first
    place, and above-left of a point on the rising bound no line passes."""
    label, plot = (260.0, 18.0), (800.0, 420.0)
    scene = scene_of("add(n=2**24, dtype=fp32)", SweepState(("n",), 16, 36))
    declared = scene.declared
    assert declared.right_half is False  # 2^24 is left of the middle: the label's first place is right of it
    first = label_box((0.0, 0.0), (declared.x + 0.3, declared.y - 0.05), label, scene, plot)

    def crossed(box) -> list[str]:  # type: ignore[no-untyped-def]
        return [line.key for line in scene.lines if line_crosses(line, box)]

    assert crossed(first)  # a term's line runs through it
    anchor, position = declared_label_place(scene, label, None, plot)
    assert anchor == (1.0, 1.0) and position == pytest.approx((declared.x - 0.3, declared.y + 0.05))
    assert crossed(label_box(anchor, position, label, scene, plot)) == []
    # where its first place is clear, the label stays there: under its point, along the rising bound
    clear = scene_of("gemm(M=128, N=128, K=128, batch=16, dtype=bf16)")
    anchor, _ = declared_label_place(clear, (220.0, 18.0), None, (800.0, 600.0))
    assert anchor == (0.0, 0.0)


def test_a_line_crosses_a_box_it_passes_through_between_two_samples() -> None:
    from workbench.scenes.sweep_scene import SweepLine

    steep = SweepLine("bound", "", np.array([0.0, 10.0]), np.array([0.0, 10.0]))
    assert line_crosses(steep, (4.0, 4.5, 5.0, 5.5))  # no sample inside: the segment between them passes through
    assert not line_crosses(steep, (4.0, 6.0, 5.0, 7.0))  # above the line there
    gap = SweepLine("bound", "", np.array([0.0, 1.0, 2.0]), np.array([np.nan, np.nan, np.nan]))
    assert not line_crosses(gap, (0.0, -1.0, 2.0, 1.0))  # no figure at any size: nothing drawn


def test_the_shade_s_text_leaves_the_top_right_corner_when_the_bound_runs_through_it() -> None:
    from workbench.scenes.sweep_scene import beyond_label_place

    label, plot = (230.0, 36.0), (800.0, 420.0)
    scene = scene_of("add(n=2**24, dtype=fp32)", SweepState(("n",), 16, 36))  # 2^33 and up exceed 80 GB
    beyond = scene.beyond
    top = label_box(beyond.anchor, beyond.label_at, label, scene, plot)
    assert line_crosses(scene.line(LINE_BOUND), top)  # the bound rises into the top right corner
    anchor, position = beyond_label_place(scene, label, None, plot)
    assert anchor == (1.0, 1.0) and position == pytest.approx((beyond.label_at[0], scene.y_range[0] + 0.05))
    assert not any(line_crosses(line, label_box(anchor, position, label, scene, plot)) for line in scene.lines)
    # the limiter's label at the foot takes that corner: the text stays at the top
    foot = label_box(anchor, position, label, scene, plot)
    assert beyond_label_place(scene, label, foot, plot) == (beyond.anchor, beyond.label_at)
