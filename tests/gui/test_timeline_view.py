"""The Step timeline tab: lanes per stream, critical path, exposed communication, live what-ifs, inline errors."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox

from workbench.documents.examples import load_example
from workbench.gui.timeline_view import TimelineView

# The example step on an H100 SXM (hand calculation in tests/test_steps.py):
G = 2 * 8192**3 / 989e12  # one 8192³ BF16 GEMM
A = 2 * 7 / 8 * 2**28 / 450e9  # one 2**27 BF16 all-reduce over NVLink 4, per direction
X = 3 * 2**28 * 4 / 3.35e12  # axpy over 2**28 FP32


def show_example(window, qtbot) -> TimelineView:  # type: ignore[no-untyped-def]
    window.document.replace_session(load_example("data-parallel-step"))
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    qtbot.waitUntil(lambda: view.timeline is not None)
    return view


def test_example_step_is_drawn(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    assert view.timeline.step_time == pytest.approx(3 * G + A + X)
    assert "Step time 5.341 ms" in view.summary.text()
    assert "fwd → bwd1 → bwd2 → ar2 → opt" in view.summary.text()
    assert "exposed 1.044 ms" in view.summary.text()
    assert view.table.rowCount() == 6
    assert view.plot.getAxis("left")._tickLevels[0] == [(0, "compute"), (1, "comm")]
    assert not view.error.isVisible()


def _speedup_editor(view: TimelineView, qtbot, row: int) -> QDoubleSpinBox:  # type: ignore[no-untyped-def]
    """Click the row's speed-up cell, as a user does: the spin box opens in it."""
    from PySide6.QtTest import QTest

    table = view.table
    index = table.whatif.index(row, 4)
    table.scrollTo(index)
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center())
    qtbot.waitUntil(lambda: table.indexWidget(index) is not None or table.viewport().findChild(QDoubleSpinBox) is not None)
    return table.viewport().findChild(QDoubleSpinBox)


def test_what_if_updates_the_step_time_live(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    spin = _speedup_editor(view, qtbot, 5)  # opt
    assert spin.objectName() == "speedup_opt" and spin.value() == 1.0
    assert (spin.minimum(), spin.maximum()) == (0.1, 1000.0)
    spin.setValue(4.0)  # each change is a what-if at once, before the editor closes
    # opt 4× faster: 3G + A + X/4 = 3.335 + 1.044 + 0.240 = 4.6195 ms, shown to 4 digits
    assert view.timeline.step_time == pytest.approx(3 * G + A + X / 4)
    assert "Step time 4.62 ms" in view.summary.text() and "was 5.341 ms" in view.summary.text()
    # The what-if columns follow: ar2 free now gives 3G + X/4 = 3.5756 ms.
    assert view.table.text(4, 6) == "3.576 ms"
    assert view.table.text(5, 2) == "240.4 µs"
    assert view.table.text(5, 4) == "4.00"
    spin.setValue(1.0)
    assert view.timeline.step_time == pytest.approx(3 * G + A + X)
    assert view.speedups == {}


def test_what_if_table_names_the_critical_path_and_refuses_a_speedup_out_of_range(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    model = view.table.whatif
    assert [view.table.text(row, 0) for row in range(model.rowCount())] == [p.name for p in view.timeline.placed]
    fwd = next(row for row in range(model.rowCount()) if view.table.text(row, 0) == "fwd")
    assert model.index(fwd, 0).data(Qt.ItemDataRole.ToolTipRole) == "on the critical path"
    assert model.index(fwd, 0).data(Qt.ItemDataRole.FontRole).bold()
    assert not model.flags(model.index(fwd, 0)) & Qt.ItemFlag.ItemIsEditable
    assert model.flags(model.index(fwd, 4)) & Qt.ItemFlag.ItemIsEditable
    before = view.timeline.step_time
    assert not model.setData(model.index(fwd, 4), 0.0) and not model.setData(model.index(fwd, 4), "fast")
    assert view.timeline.step_time == before and view.speedups == {}
    assert model.setData(model.index(fwd, 4), 2.0)
    assert view.speedups == {"fwd": 2.0} and view.timeline.step_time < before


def test_what_if_table_of_thousands_of_operations_opens_with_every_row(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.document.set_device("h100-sxm")
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    view.editor.setPlainText("".join(f"op{i} = add(n=2**20, dtype=fp32)\n" for i in range(3000)))
    view._commit_pending()
    qtbot.waitUntil(lambda: view.timeline is not None, timeout=30_000)
    assert view.table.rowCount() == 3000
    assert view.table.text(2999, 0) == "op2999" and view.table.text(2999, 4) == "1.00"
    assert view.table.viewport().findChildren(QDoubleSpinBox) == []  # no editor until a cell is edited
    spin = _speedup_editor(view, qtbot, 2999)
    assert spin.objectName() == "speedup_op2999"


def test_bad_step_shows_inline_and_undoes(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    good = view.editor.toPlainText()
    lines = good.splitlines(keepends=True)
    assert lines[5].startswith("ar2")
    lines[5] = lines[5].replace("ranks=8", "rank=8")
    bad = "".join(lines)
    view.editor.setPlainText(bad)
    qtbot.waitUntil(lambda: view.error.isVisible())
    assert view.error.text().startswith("line 6: ar2: allreduce has no field 'rank'")
    assert window.document.session.steps[0].text == bad  # stored in the session, as typed
    window.document.undo_stack.undo()
    qtbot.waitUntil(lambda: not view.error.isVisible())
    assert window.document.session.steps[0].text == good
    assert view.editor.toPlainText() == good


def test_session_without_a_step_says_so(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    qtbot.waitUntil(lambda: "No step yet" in view.summary.text())
    assert view.table.rowCount() == 0


# -- an imported trace ---------------------------------------------------------------------------

import sqlite3  # noqa: E402
from pathlib import Path  # noqa: E402

from trace_fixtures import FILL_KERNEL, csv_text, data_parallel_rows, write_sqlite  # noqa: E402


def dp_trace_rows() -> list:
    # One iteration of the example step (tests/trace_fixtures.py): GEMMs 3.9 ms each, all-reduces 1.3 ms, axpy 0.35 ms.
    return data_parallel_rows()


def import_trace(view: TimelineView, qtbot, path: Path) -> None:  # type: ignore[no-untyped-def]
    view.import_trace(str(path))
    qtbot.waitUntil(lambda: view.reader is not None and not view.reader.isRunning() and view.import_button.isEnabled(), timeout=20_000)


def test_import_trace_times_the_step_and_draws_the_measured_timeline(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    import_trace(view, qtbot, write_sqlite(tmp_path / "dp.sqlite", dp_trace_rows()))
    assert view.trace is not None and not view.trace_error.isVisible()
    assert "Trace dp.sqlite (sqlite): 8 intervals (7 kernels, 1 copy, 0 memsets) on 3 streams" in view.trace_label.text()
    # fwd 3.9 + bwd1 3.9 + bwd2 3.9 = 11.7 ms; ar2 after bwd2: 11.7 + 1.3 = 13.0 ms; opt 0.35 ms: 13.35 ms.
    assert view.timeline.step_time == pytest.approx(13.35e-3)
    assert "Step time 13.35 ms" in view.summary.text()
    assert view.table.text(0, 3) == "trace"
    assert view.table.text(0, 2) == "3.9 ms"
    assert view.table.text(0, 7) == "1.112 ms"  # the bound beside the measured interval
    assert view.table.text(0, 8) == "3.51×"  # 3.9 / 1.1118
    assert view.trace_plot.isVisible()
    assert view.trace_plot.getAxis("left")._tickLevels[0] == [(0, "stream 7"), (1, "stream 13"), (2, "stream 21")]
    unmatched = view.unmatched.toPlainText()
    assert "Unmatched kernels and copies (2 names)" in unmatched and FILL_KERNEL in unmatched and "[CUDA memcpy Host-to-Device]" in unmatched
    # A rule takes the fill kernel for opt instead of the suggested axpy kernel: 20 µs.
    view.rules_edit.setText(f"regex:FillFunctor=opt")
    view.rules_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: view.timeline.times["opt"].seconds == pytest.approx(20e-6))
    view.clear_trace()
    assert view.trace is None and not view.trace_plot.isVisible()
    assert view.table.text(0, 3).startswith("bound")


def test_a_csv_trace_is_read_too(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    path = tmp_path / "dp_cuda_gpu_trace.csv"
    path.write_text(csv_text(dp_trace_rows()))
    import_trace(view, qtbot, path)
    assert view.timeline.step_time == pytest.approx(13.35e-3)


def test_a_bad_trace_shows_inline_and_keeps_the_step(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    path = tmp_path / "empty.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    connection.commit()
    connection.close()
    import_trace(view, qtbot, path)
    assert view.trace_error.isVisible()
    assert view.trace_error.text().startswith("empty.sqlite: no CUPTI_ACTIVITY_KIND_KERNEL or CUPTI_ACTIVITY_KIND_MEMCPY table")
    assert view.trace is None and "Step time 5.341 ms" in view.summary.text()
    # A bad match rule names itself inline, in the step's error line.
    import_trace(view, qtbot, write_sqlite(tmp_path / "dp.sqlite", dp_trace_rows()))
    view.rules_edit.setText("gemm=nope")
    view.rules_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: view.error.isVisible())
    assert "the step has no operation 'nope'" in view.error.text()


def test_an_operation_of_two_kernels_from_the_rules_field(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from trace_fixtures import SPLITK_GEMM_KERNEL, SPLITK_REDUCE_KERNEL

    # fwd runs split-K: its GEMM kernel 0.3 → 3.9 ms, its reduction 3.95 → 4.2 ms: span 3.9 ms, busy 3.6 + 0.25 = 3.85 ms.
    rows = dp_trace_rows()
    rows[1:2] = [("kernel", SPLITK_GEMM_KERNEL, 300_000, 3_900_000, 7, None), ("kernel", SPLITK_REDUCE_KERNEL, 3_950_000, 4_200_000, 7, None)]
    view = show_example(window, qtbot)
    import_trace(view, qtbot, write_sqlite(tmp_path / "splitk.sqlite", rows))
    view.rules_edit.setText("*splitk_kernel*=fwd; splitKreduce*=fwd")
    view.rules_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: view.timeline.times["fwd"].trace is not None and bool(view.timeline.times["fwd"].trace.parts))
    # fwd 3.9 + bwd1 3.9 + bwd2 3.9 = 11.7 ms; ar2 + 1.3 = 13.0 ms; opt 0.35 ms: 13.35 ms, as with one GEMM kernel.
    assert view.timeline.step_time == pytest.approx(13.35e-3)
    assert view.table.text(0, 2) == "3.9 ms" and view.table.text(0, 3) == "trace, 1 iteration of 2 kernels"
    assert "kernels busy 3.85 ms" in view.table.whatif.index(0, 3).data(Qt.ItemDataRole.ToolTipRole)
    labels = [item.toPlainText() for item in view.trace_plot.getPlotItem().items if hasattr(item, "toPlainText")]
    assert "fwd 3.9 ms" in labels and "Unmatched kernels and copies (2 names)" in view.unmatched.toPlainText()
    view.rules_edit.setText("*splitk_kernel*=fwd; splitKreduce*=nope")
    view.rules_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: view.error.isVisible())
    assert "--match 'splitKreduce*=nope': the step has no operation 'nope'" in view.error.text()


REAL_A100_TRACE = Path(__file__).resolve().parents[3] / "shared" / "real-profiles" / "nsys-trace-a100-unified-memory-add.sqlite"


def test_a_trace_from_another_gpu_says_so_in_one_line_and_its_bounds_are_that_gpus(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The real A100 export (../shared/real-profiles, read in place) imported into the example on an H100 SXM."""
    if not REAL_A100_TRACE.is_file():
        pytest.skip(f"{REAL_A100_TRACE} is absent: the real profiler files live beside the checkout in ../shared/real-profiles")
    view = show_example(window, qtbot)
    assert window.document.device.key == "h100-sxm"
    import_trace(view, qtbot, REAL_A100_TRACE)
    qtbot.waitUntil(lambda: view.trace_device.isVisible(), timeout=10000)
    assert view.trace_device.text() == (
        "The trace ran on GPU 0, NVIDIA A100-SXM4-40GB, not on the NVIDIA H100 SXM chosen: "
        "its bounds use a100-sxm-40gb (NVIDIA A100 SXM 40 GB)"
    )
    # every bound is the A100's now: opt's axpy over 2**28 fp32, 3 × 2**28 × 4 B at 1,555 GB/s, not the H100's X
    assert view.timeline.times["opt"].bound_s == pytest.approx(3 * 2**28 * 4 / 1555e9)
    view.clear_trace()
    assert not view.trace_device.isVisible()
    assert view.timeline.times["opt"].bound_s == pytest.approx(X)


def _long_step(operations: int, streams: int) -> str:
    """A chain of `operations` adds dealt over `streams` streams, each after the one before: one long critical
    path through every stream."""
    lines = ["op0 = add(n=2**20, dtype=fp32) on s0"]
    for index in range(1, operations):
        lines.append(f"op{index} = add(n=2**20, dtype=fp32) on s{index % streams} after op{index - 1}")
    return "\n".join(lines)


def test_a_pasted_step_of_hundreds_of_operations_keeps_the_plot_and_its_lanes_legible(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """500 pasted lines over seven streams: the summary names the critical path's ends and how many between
    (the whole path on hover), the plot keeps its room, and the lane names it shows do not overlap."""
    from PySide6.QtGui import QFontMetrics

    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    view.editor.setPlainText(_long_step(500, 7))
    view._commit_pending()
    qtbot.waitUntil(lambda: view.timeline is not None and len(view.timeline.critical_path) == 500, timeout=20000)
    qtbot.wait(50)
    summary = view.summary.text()
    assert "op0 → op1 → op2 → … 494 more … → op497 → op498 → op499" in summary
    assert len(summary) < 400
    assert "op250 →" in view.summary.toolTip() and "500 operations" in view.summary.toolTip()
    assert view.plot.height() >= view.plot.minimumHeight() > 0
    ticks = view.plot.getAxis("left")._tickLevels[0]
    line = QFontMetrics(view.plot.font()).height()
    lane_px = view.plot.getViewBox().height() / 7
    shown = [index for index, _ in ticks]
    assert shown[0] == 0 and len(shown) >= 1
    gaps = [(b - a) * lane_px for a, b in zip(shown, shown[1:])]
    assert all(gap >= line for gap in gaps), (gaps, line)


def test_every_lane_is_named_where_there_is_room(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    view.editor.setPlainText(_long_step(7, 7))
    view._commit_pending()
    qtbot.waitUntil(lambda: view.timeline is not None and len(view.timeline.critical_path) == 7, timeout=20000)
    qtbot.wait(50)
    assert view.summary.toolTip() == ""  # a short path is shown whole
    assert view.plot.getViewBox().height() >= 7 * 1.2 * view.plot.fontMetrics().height()  # room for seven names
    assert [name for _, name in view.plot.getAxis("left")._tickLevels[0]] == [f"s{i}" for i in range(7)]
