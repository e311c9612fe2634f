"""The window's roofline draws its roofs, points and ridge where the scene's marks put them
(`workbench.scenes.roofline_marks`), which the reports draw too."""

from __future__ import annotations

import math

import pytest

from workbench.documents.examples import load_example
from workbench.scenes.roofline_marks import PlacedOperation, roofline_marks


def _window_and_scene(key: str, hidden: frozenset[str] = frozenset()):  # type: ignore[no-untyped-def]
    from workbench.gui.document import Document
    from workbench.gui.roofline_view import RooflineView

    document = Document(load_example(key))
    view = RooflineView(document)
    view.resize(900, 600)
    view.set_hidden_levels(sorted(hidden))
    view.grab()
    view.refresh()
    operations = [PlacedOperation(row, entry.name, document.state(entry).analysis, document.state(entry).stale)
                  for row, entry in enumerate(document.operations)]
    marks = roofline_marks(document.device, operations, view.state, document.current, document.binary)
    return view, marks


def flat(pairs) -> list[float]:  # type: ignore[no-untyped-def]
    return [float(value) for pair in pairs for value in pair]


def _ends(item) -> tuple[float, float, float, float]:  # type: ignore[no-untyped-def]
    xs, ys = item.getData()
    return xs[0], ys[0], xs[1], ys[1]


@pytest.mark.parametrize("key, hidden", [("gemm-4096-fp16", frozenset()), ("gemm-naive-tiled-cublas", frozenset()),
                                         ("gemm-naive-tiled-cublas", frozenset({"hbm"})),
                                         ("one-add-two-implementations", frozenset())])
def test_the_window_draws_the_scenes_roofs_and_points(qtbot, key: str, hidden: frozenset[str]) -> None:  # type: ignore[no-untyped-def]
    view, marks = _window_and_scene(key, hidden)
    qtbot.addWidget(view)
    roofs = {roof.key: roof for roof in marks.roofs}
    if "hbm" in hidden:
        assert "memory" not in roofs and not view.memory_line.isVisible()
    else:
        assert _ends(view.memory_line) == pytest.approx(roofs["memory"].segment)
    compute = [roof for key_, roof in roofs.items() if key_.startswith("roof ")]
    lines = view.roof_lines.items[: view.roof_lines.used]
    assert len(lines) == len(compute)
    for index, line in enumerate(lines):
        assert _ends(line) == pytest.approx(roofs[f"roof {index}"].segment)
        assert view._roof_texts[f"roof {index}"] == (roofs[f"roof {index}"].full, roofs[f"roof {index}"].short)
    levels = [roof for key_, roof in roofs.items() if key_.startswith("memory ")]
    assert flat(_ends(line) for line in view.level_lines.items[: view.level_lines.used]) == pytest.approx(
        flat(roof.segment for roof in levels))
    assert flat(view._point_positions) == pytest.approx(flat(marks.positions))
    further = ~marks.points.primary
    assert flat(view._level_marks) == pytest.approx(flat(zip(marks.points.xs[further], marks.points.ys[further])))
    assert flat(mark.segment for mark in marks.lowered) == pytest.approx(flat(view._lowered_segments))
    x_low, _, y_low, y_high = view._range
    assert (x_low, y_low, y_high) == pytest.approx((marks.fitted[0], marks.fitted[2], marks.fitted[3]))
    assert (view._ridge is None) == (marks.ridge is None)
    if marks.ridge is not None:
        assert view._ridge == pytest.approx(marks.ridge) and view._ridge_text == marks.ridge_text


def test_a_kernel_above_every_roof_is_in_the_window_s_range_as_in_the_report_s(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A CPU session with an H200's Nsight Compute kernels: their GEMM runs at petaFLOP/s, far above the CPU's roofs;
    the window's range reaches up to it, and it is the range the report's plot fits (the same rule)."""
    from pathlib import Path

    from workbench.documents.profiles import kernel_marks
    from workbench.documents.report.plot_marks import other_marks
    from workbench.documents.session import DeviceChoice, OperationEntry, Session
    from workbench.gui.document import Document
    from workbench.gui.roofline_view import RooflineView
    from workbench.model.devices.catalogue import HOST_CPU_KEY
    from workbench.profilers import MatchRule
    from workbench.profilers.reader import read_profile

    add, gemm = "add(n=2**24, dtype=fp32)", "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
    rules = [MatchRule("regex:cupy_add", add), MatchRule("regex:xmma_gemm", gemm)]
    profile = read_profile(Path(__file__).parent.parent / "data" / "ncu_details.csv").with_matches(rules)
    session = Session(operations=[OperationEntry("add", add), OperationEntry("gemm", gemm)],
                      device=DeviceChoice(HOST_CPU_KEY), profiles=[profile.to_dict()])
    document = Document(session)
    view = RooflineView(document)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.grab()
    view.refresh()
    device = document.device
    analyses = session.analyze_all(device)
    kernels = kernel_marks(session.profiles, session.operations, lambda row: analyses[row], device)
    highest = max(kernel.y for kernel in kernels)
    assert highest > max(math.log10(rate.value) for rate in device.peak.values()) + 2
    (_, _), (y_low, y_high) = view.plot.getViewBox().viewRange()
    assert y_low < highest < y_high
    operations = [PlacedOperation(row, entry.name, document.state(entry).analysis, document.state(entry).stale)
                  for row, entry in enumerate(document.operations)]
    others = other_marks(session, device, operations, document.current)
    marks = roofline_marks(device, operations, view.state, document.current, document.binary, others=others.extent())
    assert marks.fitted[3] == pytest.approx(y_high)
