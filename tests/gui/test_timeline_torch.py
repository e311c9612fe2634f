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
    assert view.table.item(0, 0).text() == "fc1.mm" and view.table.item(0, 3).text() == "trace, 5 intervals"
    assert view.table.item(0, 7).text() != "—" and view.table.item(0, 8).text().endswith("×")  # the bound beside
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


def test_a_step_of_thousands_of_operations_draws_a_few_items_and_names_the_widest_in_view(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.document.set_device("h100-sxm")
    text = "".join(f"l{i}.mm = gemm(M=1024, N=1024, K={64 * (1 + i % 7)}, dtype=bf16)\n" for i in range(3000))
    view = timeline_page(window, qtbot, text)
    items = view.plot.getPlotItem().items
    assert len(items) < 3 * MAX_BAR_LABELS  # not an item per operation
    shown = [label for label in view._bar_labels if label.isVisible()]
    assert len(shown) == MAX_BAR_LABELS
    placed = {p.name: p for p in view.timeline.placed}
    drawn = sum(len(bars.opts["x0"]) for bars, _ in view._bar_groups)
    assert drawn < 3000  # the whole step in view: runs of bars under four pixels wide drawn as one
    first = placed["l0.mm"]
    view.plot.getViewBox().setXRange(first.start, first.end + (first.end - first.start) * 2, padding=0)
    names = {label.toPlainText() for label in view._bar_labels if label.isVisible()}
    assert "l0.mm" in names and "l2999.mm" not in names  # the labels follow the view
    bars = [(x0, x1) for item, _ in view._bar_groups for x0, x1 in zip(item.opts["x0"], item.opts["x1"])]
    assert len(bars) <= 4 and (first.start, first.end) in [(float(a), float(b)) for a, b in bars]  # zoomed in: each bar its own
