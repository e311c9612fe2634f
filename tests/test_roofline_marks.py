"""The roofline's roofs and points as data, without Qt: where each roof and each operation's points lie, their
labels' texts, their styles' roles, the ridge and the range (`workbench.scenes.roofline_marks`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from workbench.documents.examples import load_example
from workbench.model.analysis import Analysis
from workbench.scenes.plot_style import MARKS, PENS
from workbench.scenes.roofline import LEVEL_KEYS, device_roofs, operation_levels
from workbench.scenes.roofline_marks import PlacedOperation, RooflineMarks, roofline_marks
from workbench.scenes.roofline_range import ROOF_REACH
from workbench.scenes.roofline_state import RooflineViewState


def _example(key: str, state: RooflineViewState = RooflineViewState(), current: int = 0,
             stale: frozenset[int] = frozenset()) -> tuple[RooflineMarks, list[Analysis], object]:
    session = load_example(key)
    device = session.device.resolve()
    analyses = [session.analyze(entry, device) for entry in session.operations]
    operations = [PlacedOperation(row, entry.name, analysis, row in stale)
                  for row, (entry, analysis) in enumerate(zip(session.operations, analyses))]
    return roofline_marks(device, operations, state, current, width=800.0, text_width=lambda text: 7.0 * len(text)), \
        analyses, device


def _roof(marks: RooflineMarks, key: str):  # type: ignore[no-untyped-def]
    return next(roof for roof in marks.roofs if roof.key == key)


def test_the_memory_and_compute_roofs_lie_on_the_device_rates() -> None:
    marks, analyses, device = _example("gemm-4096-fp16")
    log_bw = math.log10(device.bandwidth.value)  # type: ignore[attr-defined]
    roofs = device_roofs(device)  # type: ignore[arg-type]
    ridges = [math.log10(roof.rate.value) - log_bw for roof in roofs]
    x_low = marks.fitted[0]
    memory = _roof(marks, "memory")
    start = x_low - ROOF_REACH
    assert memory.segment == pytest.approx((start, log_bw + start, max(ridges), log_bw + max(ridges)))
    assert memory.full == "HBM 2.5 TB/s (entered)" and memory.short == "HBM 2.5 TB/s"
    assert memory.role == "memory" and memory.role in PENS and not memory.dashed  # entered: solid
    assert _roof(marks, "ghost memory").role == "ghost" and _roof(marks, "ghost memory").dashed  # the datasheet's
    for index, (roof, ridge) in enumerate(zip(roofs, ridges)):
        mark = _roof(marks, f"roof {index}")
        y = math.log10(roof.rate.value)
        assert mark.segment[:2] == pytest.approx((ridge, y)) and mark.segment[1] == mark.segment[3]
        assert mark.segment[2] > marks.range[1]  # past the view's right edge
        selected = analyses[0].path in roof.paths
        assert mark.role == ("compute selected" if selected else "compute")
    selected = [roof for roof in marks.roofs if roof.role == "compute selected"]
    assert [roof.full for roof in selected] == ["FP16 TC  100 TFLOP/s (entered)"]
    assert marks.roofs[-1].role == "compute selected"  # drawn last, over the others


def test_each_operation_has_a_point_per_level_shown_at_its_attainable_rate() -> None:
    marks, analyses, _ = _example("gemm-naive-tiled-cublas", current=1)
    points = marks.points
    for row, analysis in enumerate(analyses):
        mine = points.rows == row
        # every level at one height: the rate the model attains with every roof applied (a naive kernel's is its
        # shared memory's, below its HBM roof)
        levels = {level.key: level for level in operation_levels(analysis)}
        y = math.log10(levels["hbm"].rate)  # type: ignore[arg-type]
        assert np.allclose(points.ys[mine], y)
        primary = mine & points.primary
        assert int(primary.sum()) == 1
        x = math.log10(levels["hbm"].intensity)
        assert float(points.xs[primary][0]) == pytest.approx(x)  # at HBM
        assert float(points.xs[mine & ~primary][0]) == pytest.approx(math.log10(levels["smem"].intensity))
        assert marks.positions[marks.rows.index(row)] == pytest.approx((x, y))
    assert set(points.rows[points.selected].tolist()) == {1}
    roles = points.roles()
    assert all(role in MARKS for role in roles)
    assert {roles[i] for i in np.flatnonzero(points.primary & points.selected)} == {"operation selected"}
    assert {roles[i] for i in np.flatnonzero(~points.primary & ~points.selected)} == {"level smem"}
    # the range shows every point
    x_low, x_high, y_low, y_high = marks.range
    assert x_low < points.xs.min() and points.xs.max() < x_high and y_low < points.ys.min() and points.ys.max() < y_high


def test_the_ridge_is_the_selected_paths() -> None:
    marks, analyses, _ = _example("gemm-4096-fp16")
    a = analyses[0]
    assert marks.ridge == pytest.approx((math.log10(a.ridge), math.log10(a.compute_rate.value)))  # type: ignore[arg-type,union-attr]
    assert marks.ridge_text == "ridge 40 FLOP/B"
    assert marks.ridge_line is not None and marks.ridge_line[0] == marks.ridge_line[2] == pytest.approx(marks.ridge[0])
    assert _example("gemm-4096-fp16", current=-1)[0].ridge is None  # nothing selected: no ridge


def test_levels_switched_off_take_their_roof_and_points_with_them() -> None:
    marks, analyses, _ = _example("gemm-naive-tiled-cublas")
    assert "memory smem" in {roof.key for roof in marks.roofs} and marks.further_keys == ("smem",)
    no_smem, _, _ = _example("gemm-naive-tiled-cublas", RooflineViewState(hidden_levels=frozenset({"smem"})))
    assert "memory smem" not in {roof.key for roof in no_smem.roofs}
    assert bool(no_smem.points.primary.all()) and len(no_smem.points) == len(analyses)
    no_hbm, _, _ = _example("gemm-naive-tiled-cublas", RooflineViewState(hidden_levels=frozenset({"hbm"})))
    assert {"memory", "ghost memory"}.isdisjoint(roof.key for roof in no_hbm.roofs) and no_hbm.ridge is None
    # the labelled point moves to the first level shown: shared memory
    smem = [role for role, primary in zip(no_hbm.points.roles(), no_hbm.points.primary) if primary]
    assert smem and all(role.startswith("operation") for role in smem)
    assert np.array_equal(no_hbm.points.levels[no_hbm.points.primary], np.full(len(smem), LEVEL_KEYS.index("smem")))


def test_a_fixed_range_is_kept_and_a_stale_operation_is_drawn_stale() -> None:
    held = RooflineViewState(fixed_range=(0.0, 3.0, 12.0, 15.0))
    marks, _, _ = _example("gemm-4096-fp16", held, stale=frozenset({0}))
    assert marks.range == (0.0, 3.0, 12.0, 15.0) and marks.fitted != marks.range
    assert set(marks.points.roles()) == {"operation selected stale", "level smem selected stale"}
    assert MARKS["operation selected stale"].size > MARKS["operation stale"].size  # selected: larger, still grey
    unselected, _, _ = _example("gemm-4096-fp16", held, current=-1, stale=frozenset({0}))
    assert set(unselected.points.roles()) == {"operation stale", "level smem stale"}


def test_an_operation_without_a_place_is_left_out() -> None:
    session = load_example("vector-add")
    device = session.device.resolve()
    analysis = session.analyze(session.operations[0], device)
    operations = [PlacedOperation(0, "kept", analysis), PlacedOperation(1, "no analysis", None),
                  PlacedOperation(2, "no bytes", replace(analysis, bytes=0))]
    marks = roofline_marks(device, operations, current=2)
    assert marks.rows == (0,) and marks.names == ("kept",) and len(marks.points) == 1
    assert not marks.points.selected.any()


def test_a_lowered_roof_is_named_left_of_its_point() -> None:
    marks, analyses, _ = _example("one-add-two-implementations")
    [lowered] = marks.lowered
    position = marks.positions[marks.rows.index(lowered.row)]
    x1, y1, x2, y2 = lowered.segment
    assert y2 - y1 == pytest.approx(x2 - x1)  # slope one: a bandwidth
    assert lowered.at[0] == pytest.approx(position[0] - 1.5)
    assert lowered.text.startswith(f"{marks.names[marks.rows.index(lowered.row)]}: loads in flight")


def test_the_scene_inputs_carry_every_labelled_roof_and_line() -> None:
    from workbench.scenes.label_layout import PixelView

    marks, _, _ = _example("gemm-naive-tiled-cublas")
    view = PixelView(*marks.range, 800.0, 500.0)
    inputs = marks.scene_inputs(view, pins=(2,))
    assert [roof.key for roof in inputs.roofs] == [roof.key for roof in marks.roofs if roof.labelled]
    assert {roof.key for roof in inputs.roofs if roof.memory} == {"memory", "memory smem"}
    assert len(inputs.lines) == len(marks.roofs) + len(marks.lowered)
    assert list(inputs.operations.pins) == [marks.rows.index(2)]
    assert len(inputs.level_marks) == int((~marks.points.primary).sum())
