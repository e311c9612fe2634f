"""The window as a user meets it: typing, errors, undo, devices, units, rates, plots, files, help."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QPushButton

from workbench.model.analysis import analyze
from workbench.documents.examples import list_examples
from workbench.model.units import format_flop

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def type_into(qtbot, widget, text: str) -> None:  # type: ignore[no-untyped-def]
    """Replace a line edit's text the way a user does: select all, then type."""
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClicks(widget, text)


def roofline_points(window):  # type: ignore[no-untyped-def]
    x, y = window.roofline.points.getData()
    return list(x), list(y)


def test_typing_a_declaration_updates_form_panel_and_plot(qtbot, window) -> None:
    type_into(qtbot, window.editor.line, "gemm(M=8192, N=4096, K=4096, dtype=fp16)")
    # 2 × 8192 × 4096 × 4096 = 274,877,906,944 FLOP ≈ 274.9 GFLOP
    assert window.editor.fields["M"].widget.text() == "8192"
    assert window.panel.values["work"].text() == "274.9 GFLOP"
    expected = analyze("gemm(M=8192, N=4096, K=4096, dtype=fp16)", device="h100-sxm")
    x, y = roofline_points(window)
    assert x == pytest.approx([math.log10(expected.intensity)])
    assert y == pytest.approx([math.log10(expected.attainable_rate)])


def test_a_form_field_edit_rewrites_only_that_field(qtbot, window) -> None:
    type_into(qtbot, window.editor.fields["K"].widget, "2**13")
    assert window.editor.line.text() == "gemm(M=4096, N=4096, K=2**13, dtype=fp16)"
    assert window.panel.values["work"].text() == format_flop(2 * 4096 * 4096 * 8192)


def test_an_invalid_field_shows_the_message_there_and_keeps_the_last_analysis(qtbot, window) -> None:
    field = window.editor.fields["M"].widget
    type_into(qtbot, field, "-4096")  # the lone '-' breaks the syntax on the way: no keystroke may be lost
    assert field.text() == "-4096"
    assert window.editor.line.text() == "gemm(M=-4096, N=4096, K=4096, dtype=fp16)"
    assert field.property("invalid") is True
    assert "M must be a positive integer" in field.toolTip()
    assert window.editor.message.isVisible()
    assert "M must be a positive integer; got -4096" in window.editor.message.text()
    # the last valid figures stay, marked stale
    assert window.panel.values["work"].text() == "137.4 GFLOP"
    assert window.panel.stale.isVisible()
    assert "Stale" in window.panel.stale.text()
    assert window.document.state(window.document.current_entry).stale
    # fixing it clears every mark
    type_into(qtbot, field, "2048")
    assert field.property("invalid") is False
    assert not window.editor.message.isVisible()
    assert not window.panel.stale.isVisible()


def test_an_invalid_declaration_line_is_marked_and_kept(qtbot, window) -> None:
    type_into(qtbot, window.editor.line, "gemm(M=4096, N=4096, K=4096, dtype=fp17)")
    assert window.editor.line.text().endswith("dtype=fp17)")
    assert window.editor.fields["dtype"].widget.property("invalid") is True
    assert "unknown dtype 'fp17'" in window.editor.message.text()
    type_into(qtbot, window.editor.line, "gemm(M=4096, N=")
    assert window.editor.line.property("invalid") is True
    assert not window.editor.form_frame.isEnabled()
    assert window.panel.values["work"].text() == "137.4 GFLOP"


def test_undo_and_redo_restore_the_declaration_and_the_figures(qtbot, window) -> None:
    type_into(qtbot, window.editor.line, "add(n=2**24, dtype=fp32)")
    assert window.panel.values["bytes"].text() == "201.3 MB"  # 3 × 2^24 × 4 B
    window.actions["undo"].trigger()
    assert window.editor.line.text() == GEMM
    assert window.panel.values["work"].text() == "137.4 GFLOP"
    window.actions["redo"].trigger()
    assert window.editor.line.text() == "add(n=2**24, dtype=fp32)"
    assert window.panel.values["bytes"].text() == "201.3 MB"


def test_choosing_a_device_recomputes_and_undo_brings_it_back(window) -> None:
    chooser = window.device_panel.chooser
    h100_time = window.panel.values["compute"].text()
    index = chooser.findData("cpu-generic")
    chooser.setCurrentIndex(index)
    chooser.activated.emit(index)
    # 137.4 GFLOP / 768 GFLOP/s = 179 ms on the generic CPU's fp32 path
    assert window.panel.values["compute"].text() == "179 ms"
    assert "fp32" in window.panel.details["compute"].text()
    window.actions["undo"].trigger()
    assert window.panel.values["compute"].text() == h100_time
    assert chooser.currentData() == "h100-sxm"


def test_binary_units_change_the_shown_bytes(window) -> None:
    assert window.panel.values["bytes"].text() == "100.7 MB"
    window.actions["binary"].trigger()
    assert window.panel.values["bytes"].text() == "96 MiB"  # 100,663,296 B = 96 × 2^20 B
    assert window.panel.tensors.item(0, 4).text() == "32 MiB"
    assert "TiB/s" in window.panel.details["memory"].text() or "GiB/s" in window.panel.details["memory"].text()
    window.actions["binary"].trigger()
    assert window.panel.values["bytes"].text() == "100.7 MB"


def test_an_entered_rate_is_used_labelled_and_reset(qtbot, window) -> None:
    table = window.device_panel.table
    row = window.device_panel._rows.index("fp16_tc")
    table.item(row, 1).setText("100 TFLOP/s")
    assert table.item(row, 2).text() == "entered"
    assert window.panel.values["compute"].text() == "1.374 ms"  # the seed's worked example
    reset = table.cellWidget(row, 3)
    assert reset.isEnabled()
    qtbot.mouseClick(reset, Qt.MouseButton.LeftButton)
    assert table.item(row, 2).text() == "datasheet"
    assert window.panel.values["compute"].text() == "139 µs"  # 137.4 GFLOP / 989 TFLOP/s


def test_a_rate_with_wrong_units_is_refused_in_place(window) -> None:
    table = window.device_panel.table
    row = window.device_panel._rows.index("hbm")
    before = window.panel.values["memory"].text()
    table.item(row, 1).setText("3 TFLOP/s")
    assert "bandwidth must be in B/s" in window.device_panel.message.text()
    assert window.device_panel.message.isVisible()
    assert table.item(row, 1).text() == "3.35 TB/s"  # the last good text is back in the cell
    assert "'3 TFLOP/s' refused" in window.device_panel.message.text()  # and what was typed is named
    assert window.panel.values["memory"].text() == before


@pytest.mark.parametrize(("typed", "shown"), [("67 TFLOPS", "67 TFLOP/s"), ("67 tflops", "67 TFLOP/s"), ("500 GFLOPS", "500 GFLOP/s")])
def test_a_rate_in_the_datasheet_spelling_is_accepted(window, typed: str, shown: str) -> None:
    table = window.device_panel.table
    row = window.device_panel._rows.index("fp16_tc")
    table.item(row, 1).setText(typed)
    assert table.item(row, 2).text() == "entered"
    assert table.item(row, 1).text() == shown
    assert not window.device_panel.message.isVisible()
    hbm = window.device_panel._rows.index("hbm")
    table.item(hbm, 1).setText("2 TB/s")
    assert table.item(hbm, 1).text() == "2 TB/s"


def test_no_driver_is_said_plainly(window) -> None:
    assert "No NVIDIA driver found" in window.device_panel.status.text()
    assert window.device_panel.chooser.findData("cpu-generic") >= 0


def test_operations_add_duplicate_rename_move_remove_with_undo(window) -> None:
    doc = window.document
    window.actions["add"].trigger()
    assert len(doc.operations) == 2 and doc.current == 1
    window.actions["duplicate"].trigger()
    assert doc.operations[2].name == doc.operations[1].name  # a copy of an automatic name is automatic too
    doc.rename_operation(2, "third")
    assert window.operations.row_look(2)[0] == "third"
    window.actions["move_up"].trigger()
    assert doc.operations[1].name == "third"
    window.actions["remove"].trigger()
    assert "third" not in [op.name for op in doc.operations]
    for _ in range(5):
        window.actions["undo"].trigger()
    assert len(doc.operations) == 1


def test_the_roofline_shows_roofs_ridge_and_a_labelled_point(window) -> None:
    window.open_example("gemm-4096-fp16")
    roofline = window.roofline
    labels = [item.textItem.toPlainText() for item in roofline.roof_labels.items if item.isVisible()]
    assert any("FP16 TC" in text and "100 TFLOP/s (entered)" in text for text in labels)
    assert roofline.ridge_label.textItem.toPlainText() == "ridge 40 FLOP/B"  # 100 TFLOP/s / 2.5 TB/s
    names = [item.textItem.toPlainText() for item in roofline.point_labels.items if item.isVisible()]
    assert names == [window.document.operations[0].name]
    tip = roofline._tip(0)
    assert "1365 FLOP/B" in tip and "1.374 ms" in tip


def test_the_sweep_tab_plots_three_bound_lines(window) -> None:
    window.tabs.setCurrentWidget(window.sweep)
    sweep = window.sweep
    assert sweep.fields() == ("M", "N", "K")
    x, y = sweep.bound_line.getData()
    assert len(x) > 100
    shown = y[np.isfinite(y)]
    assert all(b >= a for a, b in zip(shown, shown[1:]))  # bound time grows with size
    _, compute = sweep.compute_line.getData()
    _, memory = sweep.memory_line.getData()
    last = int(np.flatnonzero(np.isfinite(y))[-1])
    assert y[last] == pytest.approx(max(compute[last], memory[last]))
    assert "left out" not in sweep.caption.text()
    # Up to 2^20: three 2^20 × 2^20 fp16 matrices (6.6 TB) do not fit the device; analyze refuses them, so does the sweep.
    sweep.high.setValue(20)
    sweep.refresh()
    x, y = sweep.bound_line.getData()
    assert np.isfinite(y).all() and 16 < x[-1] < 17  # the line ends where the tensors stop fitting 80 GB (2^16.8)
    assert "sizes are left out: the tensors need" in sweep.caption.text()


def test_export_png_and_svg(tmp_path: Path, window) -> None:
    png, svg = tmp_path / "roofline.png", tmp_path / "roofline.svg"
    assert window.export_plot(str(png), "png")
    assert window.export_plot(str(svg), "svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert any(element.tag.endswith("path") or element.tag.endswith("polyline") for element in root.iter())


def test_the_measurement_tab_offers_to_run_the_selected_operation(window) -> None:
    tab = window.tabs.widget(2)
    assert tab is window.measurement  # the tab itself is tested in test_measure_tab.py
    assert tab.findChild(QPushButton, "measureRun") is not None
    assert "GEMM 4096³ fp16" in tab.operation.text()


def test_help_lists_shortcuts_and_about_shows_the_version(window) -> None:
    from workbench import __version__

    rows = dict(window.shortcut_rows())
    assert rows["Undo"] and rows["Add operation"] and rows["Larger text"]
    dialog = window.show_shortcuts()
    dialog.close()
    box = window.show_about()
    assert __version__ in box.text()
    box.close()


def test_text_size_grows_and_is_remembered(window) -> None:
    before = QApplication.font().pointSizeF()
    window.actions["font_larger"].trigger()
    assert QApplication.font().pointSizeF() == before + 1
    assert window.settings.value("view/font_points", type=float) == before + 1
    window.actions["font_reset"].trigger()


def test_preferences_go_to_the_temporary_settings_folder(window, qt_settings_in_tmp: Path) -> None:
    window.save_preferences()
    assert window.settings.format() == QSettings.Format.IniFormat
    assert Path(window.settings.fileName()).is_relative_to(qt_settings_in_tmp)


def test_opening_a_session_file(tmp_path: Path, window) -> None:
    import workbench.documents.session as session_module
    from workbench.documents.examples import load_example

    path = tmp_path / "vector.json"
    session_module.save(load_example("vector-add"), path)
    assert window.open_session(str(path))
    assert window.editor.line.text().startswith("add(")
    assert "vector.json" in window.windowTitle()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert not window.open_session(str(bad))
    assert "Cannot open bad.json" in window.banner.text()
    assert window.editor.line.text().startswith("add(")  # the open session stays


@pytest.mark.parametrize("key", [key for key, _ in list_examples()])
def test_every_example_opens_without_an_error(window, key: str) -> None:
    window.open_example(key)
    doc = window.document
    assert doc.operations
    for entry in doc.operations:
        state = doc.state(entry)
        assert state.error is None, f"{key}: {entry.declaration}: {state.error}"
        assert state.analysis is not None


def test_a_detected_gpu_is_offered_and_used_for_a_new_session(qtbot) -> None:
    from workbench.model.devices.nvml import OK, DetectedGPU, Detection
    from workbench.gui.app import build_window

    gpu = DetectedGPU(0, "NVIDIA H200", 150_000_000_000, 149_000_000_000, 1980, 3201, 6144, "9.0", "570.1", "12.8")

    def one_h200() -> Detection:
        return Detection(OK, "1 GPU: NVIDIA H200", (gpu,))

    win = build_window(detect=one_h200)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.document.detection is not None, timeout=5000)
    win.wait_for_workers()
    assert "NVML found 1 GPU: NVIDIA H200" in win.device_panel.status.text()
    assert win.document.session.device.key == "nvml-0"
    assert win.device_panel.chooser.currentData() == "nvml-0"
    # 137.4 GFLOP / 989 TFLOP/s (the H200's fp16 tensor rate from the catalogue) = 139 µs
    assert win.panel.values["compute"].text() == "139 µs"
    assert "4.8 TB/s" in win.panel.details["memory"].text()
    win.close()
