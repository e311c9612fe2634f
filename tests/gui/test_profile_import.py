"""Importing Nsight Compute / Nsight Systems CSV in the window: read, match, compare, plot, undo, save, errors."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from workbench.gui import profile_import
from workbench.gui.profile_import import NOT_MATCHED, kernel_pattern
from workbench.gui.profile_layer import KERNEL_LEGEND
from workbench.gui.profile_view import EMPTY_TEXT
from workbench.profilers import MatchRule, Profile, read_profile, read_profile_text
from workbench.documents.session import OperationEntry

DATA = Path(__file__).resolve().parent.parent / "data"
NCU_RAW = DATA / "ncu_raw.csv"
NCU_DETAILS = DATA / "ncu_details.csv"
NSYS = DATA / "nsys_cuda_gpu_kern_sum.csv"
ADD = "add(n=2**24, dtype=fp32)"
GEMM_KERNEL = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
ADD_KERNEL = "cupy_add__float32_float32_float32"


def roofline(window):  # type: ignore[no-untyped-def]
    """The roofline as a user sees it: its tab brought to the front (a hidden roofline redraws when shown)."""
    window.tabs.setCurrentWidget(window.roofline)
    return window.roofline


def add_vector_add(window) -> None:  # type: ignore[no-untyped-def]
    """The window starts with the 4096³ fp16 GEMM (row 0); add the vector add as row 1."""
    window.document.add_operation(OperationEntry("vector add", ADD))
    window.document.select(0)


def open_import(qtbot, window, path: Path):  # type: ignore[no-untyped-def]
    """Import a file the way File ▸ Import profile… does and wait for the matching dialog."""
    window.import_profile(str(path))
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10000)
    return window.profile_importer.dialog


def finish(qtbot, window, dialog) -> None:  # type: ignore[no-untyped-def]
    dialog.accept()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)


def legend_names(window) -> list[str]:  # type: ignore[no-untyped-def]
    legend = roofline(window).plot.legend
    return [] if legend is None else [label.text for _, label in legend.items]


def test_import_match_compare_plot_undo(qtbot, window) -> None:
    add_vector_add(window)
    steps_before = window.document.undo_stack.count()
    dialog = open_import(qtbot, window, NCU_RAW)

    # the dialog preselects each kernel's operation from its name
    names = [kernel.name for kernel in dialog.kernels]
    assert names == [ADD_KERNEL, GEMM_KERNEL]
    assert [dialog.choice(row).name for row in range(2)] == ["vector add", "GEMM 4096³ fp16"]
    assert dialog.how_chosen == ["suggested from the kernel's name"] * 2
    heading = dialog.findChild(QLabel, "matchHeading").text()
    assert "Nsight Compute CSV (raw page), 2 kernels, 4 launches, NVIDIA H200" in heading
    finish(qtbot, window, dialog)

    # one undo step stores the profile with its matches in the session
    doc = window.document
    assert doc.undo_stack.count() == steps_before + 1
    assert len(doc.session.profiles) == 1
    saved = Profile.from_dict(doc.session.profiles[0])
    assert [(rule.pattern, rule.declaration, rule.name) for rule in saved.matches] == [
        (ADD_KERNEL, ADD, "vector add"),
        (GEMM_KERNEL, "gemm(M=4096, N=4096, K=4096, dtype=fp16)", "GEMM 4096³ fp16"),
    ]
    assert window.tabs.currentWidget() is window.profile_view

    # the comparison for the selected operation (the GEMM, on the session's H100 SXM)
    view = window.profile_view
    assert view.comparison_box.isVisible()
    assert view.title.text().startswith("sm90_xmma_gemm") and view.title.text().endswith("GEMM 4096³ fp16")
    # DRAM bytes per launch (raw page, exact): 118,730,752 + 33,556,480 = 152,287,232 and
    # 118,792,192 + 33,556,224 = 152,348,416; the median of two is 152,317,824 B.
    # Compulsory: A, B, C of 4096 × 4096 × 2 B = 3 × 33,554,432 = 100,663,296 B.
    # 152,317,824 / 100,663,296 = 1.5131
    assert view.figure("traffic", "actual") == "152.3 MB"
    assert view.figure("traffic", "declared") == "100.7 MB"
    assert view.figure("traffic", "ratio") == "1.513×"
    assert view.figure("traffic", "verdict") == "above the compulsory floor"
    # reads: 118,761,472 (median) / 67,108,864 = 1.7697
    assert view.figure("read", "ratio") == "1.770×"
    # duration: median (212.478 + 214.016) / 2 = 213.247 µs; bound: 137,438,953,472 FLOP / 989 TFLOP/s = 138.97 µs
    assert view.figure("time", "actual") == "213.2 µs"
    assert view.figure("time", "declared") == "139 µs bound"
    assert view.figure("time", "ratio") == f"{213.247e-6 / (137_438_953_472 / 989e12):#.4g}×" == "1.535×"
    # work: 137,455,730,688 achieved (tensor pipe + fmul) / 137,438,953,472 logical = 1.0001
    assert view.figure("work", "actual") == "137.5 GFLOP"
    assert view.figure("work", "declared") == "137.4 GFLOP"
    assert view.figure("work", "ratio") == "1.000×"
    causes = view.causes.toPlainText()
    assert "likely: re-reads" in causes and "working set larger than L2" in causes
    assert "ncu locks the GPU clocks to base" in view.note.text()
    assert "flushes the caches" in view.note.text()
    assert "Duration / bound" in view.derivation.toPlainText()

    # the vector add: at the floor
    doc.select(1)
    # (134,223,360 + 67,109,504 median) / 201,326,592 = 201,332,864 / 201,326,592 = 1.00003
    assert view.figure("traffic", "ratio") == "1.000×"
    assert view.figure("traffic", "verdict") == "at the compulsory floor"

    # the roofline: a third kind of point, one per matched kernel, in the legend, with hover text
    layer = roofline(window).kernels
    assert len(layer.marks) == 2
    x, y = layer.points.getData()
    gemm = next(mark for mark in layer.marks if mark.operation == 0)
    # the raw page counts the tensor work: 137,438,953,472 tensor-pipe FLOP + 16,777,216 fmul
    # = 137,455,730,688 FLOP (within 2× of the declared work, so the counters place the point);
    # over 152,317,824 B that is 902.4 FLOP/B, over 213.247 µs 644.6 TFLOP/s
    assert gemm.x == pytest.approx(math.log10(137_455_730_688 / 152_317_824))
    assert gemm.y == pytest.approx(math.log10(137_455_730_688 / 213.247e-6))
    assert sorted(x) == pytest.approx(sorted(mark.x for mark in layer.marks))
    assert layer.points.opts["symbol"] == "star" != roofline(window).points.opts["symbol"]
    assert KERNEL_LEGEND in legend_names(window)
    tip = layer.tip(layer.marks.index(gemm))
    assert tip.startswith("sm90_xmma_gemm")
    assert "intensity 902.4 FLOP/B = achieved FLOP from the counters / actual DRAM bytes" in tip
    assert "rate 644.6 TFLOP/s" in tip and "duration 213.2 µs, median of 2 launches" in tip

    # undo removes the import: from the session, the tab and the roofline
    doc.undo_stack.undo()
    assert doc.session.profiles == []
    assert roofline(window).kernels.marks == []
    assert list(layer.points.getData()[0]) == []
    assert KERNEL_LEGEND not in legend_names(window)
    assert view.message.text() == EMPTY_TEXT
    doc.undo_stack.redo()
    assert len(roofline(window).kernels.marks) == 2


def test_save_and_reopen_keeps_the_imported_kernels(qtbot, window, tmp_path) -> None:
    add_vector_add(window)
    finish(qtbot, window, open_import(qtbot, window, NCU_DETAILS))
    before = window.profile_view.figure("traffic", "ratio")
    path = tmp_path / "profiled.json"
    assert window.save_to(str(path))
    record = json.loads(path.read_text())["profiles"][0]
    assert record["format"] == "perf-workbench-profile"
    assert [match["name"] for match in record["matches"]] == ["vector add", "GEMM 4096³ fp16"]

    window.new_session()
    assert roofline(window).kernels.marks == []
    assert window.open_session(str(path))
    assert len(roofline(window).kernels.marks) == 2
    window.tabs.setCurrentWidget(window.profile_view)
    assert window.profile_view.figure("traffic", "ratio") == before == "1.513×"
    assert window.profile_view.table.rowCount() == 2


def test_a_malformed_csv_shows_one_line_and_loses_nothing(qtbot, window, tmp_path) -> None:
    add_vector_add(window)
    bad = tmp_path / "bad.csv"
    bad.write_text('"ID","Kernel Name","Metric Name"\n"0","k"\n')
    steps, operations = window.document.undo_stack.count(), list(window.document.operations)
    window.import_profile(str(bad))
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    assert window.banner.text() == "Cannot import bad.csv, line 1: the header has no 'Metric Unit' column (it has: ID, Kernel Name, Metric Name)"
    assert window.profile_importer.dialog is None
    assert window.document.undo_stack.count() == steps
    assert window.document.operations == operations
    assert window.document.session.profiles == []


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("notes.csv", "hello, world\n", "Cannot import notes.csv: no Nsight Compute or Nsight Systems table found"),
        ("empty.csv", "", "Cannot import empty.csv: the file is empty"),
        ("run.ncu-rep", "binary", "Cannot import run.ncu-rep: this is a binary .ncu-rep report; export CSV first"),
    ],
)
def test_files_that_are_not_profiles_are_refused_in_one_line(qtbot, window, tmp_path, name, content, expected) -> None:
    path = tmp_path / name
    path.write_text(content)
    window.import_profile(str(path))
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    assert window.banner.text().startswith(expected)
    assert "\n" not in window.banner.text()


def test_reading_happens_off_the_gui_thread_and_the_window_keeps_working(qtbot, window, monkeypatch) -> None:
    release = threading.Event()
    readers: list[int] = []
    import workbench.profilers as profilers

    real = profilers.read_profile  # read_slim_profile finds it there when a read starts

    def slow_read(path, **options):  # type: ignore[no-untyped-def]
        readers.append(threading.get_ident())
        release.wait(10)
        return real(path, **options)

    monkeypatch.setattr(profilers, "read_profile", slow_read)
    window.import_profile(str(NCU_DETAILS))
    qtbot.waitUntil(lambda: bool(readers), timeout=5000)
    assert readers[0] != threading.get_ident()
    # while the file is being read, the window still takes edits
    window.document.add_operation(OperationEntry("vector add", ADD))
    QApplication.processEvents()
    assert window.panel.title.text() == "vector add"
    assert window.profile_importer.dialog is None
    release.set()
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10000)
    dialog = window.profile_importer.dialog
    assert dialog.choice(0).name == "vector add"  # the operation added during the read is offered
    dialog.reject()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    assert window.document.session.profiles == []


def test_a_kernel_left_unmatched_is_listed_but_not_plotted(qtbot, window) -> None:
    add_vector_add(window)
    dialog = open_import(qtbot, window, NCU_DETAILS)
    dialog.choose(1, None)  # the GEMM kernel: not matched
    assert dialog.combos[1].currentText() == NOT_MATCHED
    finish(qtbot, window, dialog)
    assert [mark.operation for mark in roofline(window).kernels.marks] == [1]
    view = window.profile_view
    assert view.table.item(1, 6).text() == "not matched"
    assert "No imported kernel is matched with GEMM 4096³ fp16" in view.message.text()

    # Match kernels… again: the GEMM kernel to the GEMM, as one more undo step
    again = window.profile_importer.edit_matches(0)
    assert again is not None and again.choice(0).name == "vector add" and again.choice(1) is None
    again.choose(1, 0)
    again.accept()
    assert sorted(mark.operation for mark in roofline(window).kernels.marks) == [0, 1]
    window.document.undo_stack.undo()
    assert [mark.operation for mark in roofline(window).kernels.marks] == [1]


def test_an_nsys_kernel_sits_at_the_declared_intensity(qtbot, window) -> None:
    add_vector_add(window)
    dialog = open_import(qtbot, window, NSYS)
    assert [dialog.choice(row).name for row in range(2)] == ["GEMM 4096³ fp16", "vector add"]
    finish(qtbot, window, dialog)
    window.document.select(1)
    view = window.profile_view
    assert view.figure("traffic", "actual") == "—"
    # 48.064 µs median against the memory bound 201,326,592 B / 3.35 TB/s = 60.10 µs: 0.7998
    assert view.figure("time", "ratio") == "0.7998×"
    assert "nsys times each kernel at the clocks" in view.note.text()
    add = next(mark for mark in roofline(window).kernels.marks if mark.operation == 1)
    # 16,777,216 FLOP / 201,326,592 B = 0.08333 FLOP/B; 16,777,216 FLOP / 48.064 µs = 349.1 GFLOP/s
    assert add.x == pytest.approx(math.log10(16_777_216 / 201_326_592))
    assert add.y == pytest.approx(math.log10(16_777_216 / 48.064e-6))
    assert "compulsory bytes (no byte counters in the file)" in add.tip


def test_the_profiled_gpu_can_become_the_device(qtbot, window) -> None:
    add_vector_add(window)
    finish(qtbot, window, open_import(qtbot, window, NCU_RAW))
    view = window.profile_view
    # the kernel is compared with the H200 the file names, whatever the session shows, and the note says so
    assert "ran on NVIDIA H200 SXM, not the session's NVIDIA H100 SXM: compared with its own device" in view.note.text()
    on_h200 = view.figure("time", "declared")
    assert view.device_button.isVisible() and view.device_button.text() == "Show NVIDIA H200 SXM"
    view.device_button.click()
    assert window.document.session.device.key == "h200-sxm"
    assert not view.device_button.isVisible()
    assert "ran on" not in view.note.text()
    assert view.figure("time", "declared") == on_h200  # the same bound: it was the H200's already
    window.document.undo_stack.undo()
    assert window.document.session.device.key == "h100-sxm"


def test_removing_a_file_is_undoable(qtbot, window) -> None:
    finish(qtbot, window, open_import(qtbot, window, NCU_DETAILS))
    window.profile_view.remove_button.click()
    assert window.document.session.profiles == []
    window.document.undo_stack.undo()
    assert len(window.document.session.profiles) == 1


def test_kernel_patterns_select_exactly_their_kernel() -> None:
    kernels = read_profile(NCU_DETAILS).kernels()
    assert kernel_pattern(kernels[0], kernels) == ADD_KERNEL  # a readable base name where it is enough
    shared = read_profile_text(
        '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"\n'
        '"60.0","600","1","600","600","600","600","0","void scale<float>(float*, int)"\n'
        '"40.0","400","1","400","400","400","400","0","void scale<double>(double*, int)"\n',
        "shared.csv",
    ).kernels()
    assert [kernel.base_name for kernel in shared] == ["scale", "scale"]
    for kernels_of_file in (kernels, shared, read_profile(DATA / "nsys_gpukernsum_legacy.csv").kernels()):
        for kernel in kernels_of_file:
            rule = MatchRule(kernel_pattern(kernel, kernels_of_file), ADD)
            assert [k.name for k in kernels_of_file if rule.matches(k.name)] == [kernel.name]
    assert kernel_pattern(shared[0], shared) == "regex:^void\\ scale<float>\\(float\\*,\\ int\\)$"


def test_the_stored_record_is_what_the_whole_file_gives(qtbot, window) -> None:
    """The worker keeps only the metrics the workbench reads; the session record must not lose any of them."""
    import gc

    add_vector_add(window)
    dialog = open_import(qtbot, window, NCU_RAW)
    rules = dialog.rules()
    finish(qtbot, window, dialog)
    assert window.document.session.profiles[0] == read_profile(NCU_RAW).with_matches(rules).to_dict()
    assert gc.isenabled()  # the cycle collector, paused while the file was read, is back on


def test_files_dropped_together_are_matched_one_after_the_other(qtbot, window) -> None:
    add_vector_add(window)
    window.import_profile(str(NCU_DETAILS))
    window.import_profile(str(NSYS))
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10000)
    assert window.profile_importer.dialog.profile.source == "ncu_details.csv"
    window.profile_importer.dialog.accept()
    qtbot.waitUntil(
        lambda: window.profile_importer.dialog is not None and window.profile_importer.dialog.profile.source != "ncu_details.csv",
        timeout=10000,
    )
    assert window.profile_importer.dialog.profile.source == "nsys_cuda_gpu_kern_sum.csv"
    finish(qtbot, window, window.profile_importer.dialog)
    assert [record["source"] for record in window.document.session.profiles] == ["ncu_details.csv", "nsys_cuda_gpu_kern_sum.csv"]
    window.document.select(1)
    window.tabs.setCurrentWidget(window.profile_view)
    # the vector add has a kernel in each file: both offered, one at a time
    choices = [window.profile_view.kernel_choice.itemText(i) for i in range(window.profile_view.kernel_choice.count())]
    assert choices == [
        "cupy_add__float32_float32_float32 — ncu_details.csv (Nsight Compute)",
        "cupy_add__float32_float32_float32 — nsys_cuda_gpu_kern_sum.csv (Nsight Systems)",
    ]
    assert len(roofline(window).kernels.marks) == 4


def test_file_menu_offers_the_import(window) -> None:
    action = window.actions["import_profile"]
    assert action.text() == "&Import profile…" and action.shortcut().toString() == "Ctrl+I"
    file_menu = window.menuBar().actions()[0].menu()
    assert action in file_menu.actions()
    assert window.tabs.tabText(window.tabs.indexOf(window.profile_view)) == "&Profile"


def _move_mouse(qtbot, window, x: float, y: float) -> None:  # type: ignore[no-untyped-def]
    """Move the mouse over the roofline to the data point (x, y) (log coordinates), as a user does."""
    from PySide6.QtCore import QEvent, QPointF, Qt
    from PySide6.QtGui import QMouseEvent

    from workbench.gui.plot_common import point_in_view

    graphics = roofline(window).widget
    target = graphics.mapFromScene(point_in_view(roofline(window).plot.getViewBox(), x, y))
    for where in (QPointF(target.x() - 40, target.y() - 40), QPointF(target)):
        qtbot.wait(60)  # pyqtgraph drops mouse moves that come faster than its rate limit
        event = QMouseEvent(
            QEvent.Type.MouseMove, where, graphics.viewport().mapToGlobal(where),
            Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(graphics.viewport(), event)


def test_hovering_a_kernel_star_shows_its_figures_and_operations_keep_theirs(qtbot, window) -> None:
    finish(qtbot, window, open_import(qtbot, window, NCU_RAW))
    window.tabs.setCurrentWidget(window.roofline)
    layer = roofline(window).kernels
    (mark,) = layer.marks  # only the GEMM kernel: the window's one operation
    _move_mouse(qtbot, window, mark.x, mark.y)
    qtbot.waitUntil(lambda: layer.points.toolTip() == mark.tip, timeout=3000)
    assert "rate 644.6 TFLOP/s" in layer.points.toolTip()

    analysis = window.document.state(window.document.operations[0]).analysis
    _move_mouse(qtbot, window, math.log10(analysis.intensity), math.log10(analysis.attainable_rate))
    view = roofline(window).plot.getViewBox()
    qtbot.waitUntil(lambda: "1365 FLOP/B" in view.toolTip(), timeout=3000)
    assert layer.points.toolTip() == ""


FORMATS = DATA / "formats"


def test_the_dialog_says_an_assumed_reading_and_the_comma_reads_the_file_again(qtbot, window) -> None:
    dialog = open_import(qtbot, window, FORMATS / "ncu_details_all_ambiguous.csv")
    text = dialog.reading.text()
    assert text.startswith("Number format assumed — no value shows which mark is the decimal one, so 5 values")
    assert "bold" in dialog.reading.styleSheet()
    assert dialog.table.item(0, 2).text() == "1.234 µs"  # 1.234 read with the period
    assert dialog.decimal_box.currentData() is None

    dialog.decimal_box.setCurrentIndex(2)  # comma: 1.234,5
    qtbot.waitUntil(
        lambda: window.profile_importer.dialog is not None and window.profile_importer.dialog is not dialog, timeout=10000
    )
    again = window.profile_importer.dialog
    assert again.decimal_box.currentData() == ","
    assert again.table.item(0, 2).text() == "1.234 ms"  # 1,234 µs
    assert again.table.item(0, 3).text() == "2.468 MB"  # 1,234 + 1,234 Kbyte
    assert again.reading.text() == "Numbers read with the comma as decimal mark (1.234,5), as chosen."
    finish(qtbot, window, again)
    (record,) = window.document.session.profiles
    assert record["number_format"]["decimal_mark"] == "," and record["number_format"]["how"] == "chosen"


def test_the_dialog_states_a_decided_reading_plainly(qtbot, window) -> None:
    dialog = open_import(qtbot, window, FORMATS / "ncu_details_comma_decimal.csv")
    assert dialog.reading.text().startswith("Numbers read with the comma as decimal mark (1.234,5), decided from line 5")
    assert "bold" not in dialog.reading.styleSheet()
    assert dialog.table.item(0, 2).text() == "231.6 µs"
    dialog.reject()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
