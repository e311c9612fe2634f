"""On a CPU or a GDDR card the window says DRAM and vector units, never HBM or CUDA cores."""

from __future__ import annotations

from workbench.gui.app import build_window


def texts_of_device_table(window) -> list[str]:  # type: ignore[no-untyped-def]
    table = window.device_panel.table
    return [table.item(row, 0).text() for row in range(table.rowCount())]


def test_cpu_device_is_named_plainly(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = build_window()
    qtbot.addWidget(window)
    window.document.edit_declaration(window.document.current, "add(n=2**24, dtype=fp32)")
    window.document.set_device("cpu-generic")
    rows = texts_of_device_table(window)
    assert "Memory bandwidth (DRAM)" in rows and "FP32 (vector units)" in rows
    assert not any("HBM" in row or "CUDA" in row for row in rows)
    assert window.panel.tensors_title.text() == "Tensors crossing DRAM → on-chip caches"
    assert window.roofline.memory_label.toPlainText().startswith("DRAM ")
    window.document.set_device("h100-sxm")
    assert "Memory bandwidth (HBM)" in texts_of_device_table(window)
    assert window.roofline.memory_label.toPlainText().startswith("HBM ")
    window.wait_for_workers()
