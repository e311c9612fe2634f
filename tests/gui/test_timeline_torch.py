"""The Timeline page with a PyTorch profiler trace, the where-the-time-goes table, and a step of thousands of
operations labelled without an item per operation."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from workbench.gui.timeline_view import MAX_BAR_LABELS, TimelineView

DATA = Path(__file__).resolve().parents[1] / "data"
REAL_MLP = Path(__file__).resolve().parents[3] / "shared" / "real-profiles" / "torch-trace-train-mlp-gp100.json.gz"


def timeline_page(window, qtbot, text: str) -> TimelineView:  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    view.editor.setPlainText(text)
    view._commit_pending()
    qtbot.waitUntil(lambda: view.timeline is not None, timeout=20_000)
    return view


def test_the_real_mlp_trace_times_each_operation_beside_its_bound(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    if not REAL_MLP.is_file():
        pytest.skip(f"{REAL_MLP} is absent: the real profiler files live beside the checkout in ../shared/real-profiles")
    window.document.set_device("v100-pcie")
    view = timeline_page(window, qtbot, (DATA / "torch-mlp-gp100.step").read_text())
    view.import_trace(str(REAL_MLP))
    qtbot.waitUntil(lambda: view.reader is not None and not view.reader.isRunning() and view.import_button.isEnabled(), timeout=20_000)
    assert not view.trace_error.isVisible() and view.trace is not None and view.trace.format == "torch"
    assert {time.source for time in view.timeline.times.values()} == {"trace"}
    assert view.table.text(0, 0) == "fc1.mm" and view.table.text(0, 3) == "trace, 5 intervals"
    assert view.table.text(0, 7) != "—" and view.table.text(0, 8).endswith("×")  # the bound beside
    labels = [item.toPlainText() for item in view.trace_plot.getPlotItem().items if hasattr(item, "toPlainText")]
    assert any(label.startswith("fc1.mm ") for label in labels)
    assert "Quadro GP100" in view.trace_device.text()
    model = view.breakdown_view.table.model()
    names = {model.index(row, 0).data() for row in range(model.rowCount())}
    assert names == {"GEMM", "pointwise"}


def test_the_table_groups_by_module_or_kind_and_sorts_numbers_as_numbers(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.document.set_device("h100-sxm")
    text = "".join(f"m{i}.mm = gemm(M={256 * (i + 1)}, N=1024, K=1024, dtype=bf16)\n" for i in range(12))
    text += "m3.act = elementwise(n=2**20, inputs=1, outputs=1, flop_per_element=1, dtype=bf16)\n"
    view = timeline_page(window, qtbot, text)
    breakdown = view.breakdown_view
    breakdown.by.setCurrentIndex(breakdown.by.findData("module"))
    table = breakdown.table
    model = table.model()
    assert model.rowCount() == 12
    table.sortByColumn(5, Qt.SortOrder.DescendingOrder)  # time: m11 (the largest GEMM) first, m1 (256·2) below m10
    order = [model.index(row, 0).data() for row in range(model.rowCount())]
    assert order[0] == "m11" and order[-1] == "m0" and order.index("m10") < order.index("m9") < order.index("m1")
    assert model.index(order.index("m3"), 1).data() == "2"
    breakdown.by.setCurrentIndex(breakdown.by.findData("kind"))
    assert sorted(model.index(row, 0).data() for row in range(model.rowCount())) == ["GEMM", "pointwise"]


def _painted(view: TimelineView, qtbot):  # type: ignore[no-untyped-def]
    """What the bars item drew at its last paint (the view repainted first)."""
    view.bars._key = None
    view.plot.viewport().repaint()
    qtbot.waitUntil(lambda: view.bars._key is not None, timeout=5000)
    return view.bars._drawn


def test_a_step_of_thousands_of_operations_draws_what_is_in_view_and_names_only_bars_wide_enough(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QPointF, QRectF

    window.document.set_device("h100-sxm")
    text = "".join(f"l{i}.mm = gemm(M=1024, N=1024, K={64 * (1 + i % 7)}, dtype=bf16)\n" for i in range(3000))
    view = timeline_page(window, qtbot, text)
    assert len(view.plot.getPlotItem().items) <= 3  # one item for the bars, not one per operation
    placed = view.timeline.placed
    drawn = _painted(view, qtbot)
    assert len(drawn.frame.visible) == 3000
    assert sum(len(batch) for _, batch in drawn.rects) < 3000  # the whole step in view: sub-pixel runs merged
    first = next(p for p in placed if p.name == "l0.mm")
    box = view.plot.getViewBox()
    box.setXRange(first.start, first.end + (first.end - first.start) * 2, padding=0)
    drawn = _painted(view, qtbot)
    (x0, x1), _ = box.viewRange()
    intersecting = [index for index, p in enumerate(placed) if p.end >= x0 and p.start <= x1]
    assert drawn.frame.visible.tolist() == intersecting  # what is drawn is what intersects the range
    names = {text for _, text, _ in drawn.names}
    assert "l0.mm" in names and "l2999.mm" not in names  # the names follow the view
    metrics = view.bars._metrics
    boxes: list[QRectF] = []
    for index, text, centre in drawn.names:  # each name inside its own bar (clipped to the view), none overlapping
        width = metrics.horizontalAdvance(text)
        name_box = QRectF(centre.x() - width / 2, centre.y() - metrics.height() / 2, width, metrics.height())
        left = box.mapViewToDevice(QPointF(max(placed[index].start, x0), 0)).x()
        right = box.mapViewToDevice(QPointF(min(placed[index].end, x1), 0)).x()
        assert left <= name_box.left() and name_box.right() <= right
        name = placed[index].name  # the whole name, or its end where the whole does not fit
        assert text == name or (text.startswith("…") and name.endswith(text[1:]))
        assert not any(name_box.intersects(other) for other in boxes)
        boxes.append(name_box)
    assert len(drawn.names) <= MAX_BAR_LABELS
    # Zoomed out to the whole step, a name too long for its bar is not drawn at all.
    box.setXRange(0, view.timeline.step_time, padding=0)
    drawn = _painted(view, qtbot)
    assert all(metrics.horizontalAdvance(text) <= (placed[i].end - placed[i].start) * box.width() / view.timeline.step_time
               for i, text, _ in drawn.names)
    assert not view.trace_device.isVisible()
