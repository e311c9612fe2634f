"""The Compare tab: operations × chosen devices, overlaid rooflines, exports, this machine in the chooser."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from compare_fixtures import GEMM, H100_RUN
from workbench.documents.device_compare import compare_session, resolve_devices
from workbench.model.devices.catalogue import HOST_CPU_KEY
from workbench.gui.compare_view import SESSION_DEVICE, CompareView


def show_compare(window) -> CompareView:  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.compare)
    return window.compare


def test_three_devices_side_by_side(window) -> None:
    view = show_compare(window)
    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb"])
    table = view.table
    assert table.columnCount() == 3 and table.rowCount() == len(window.document.operations)
    assert [table.horizontalHeaderItem(c).text() for c in range(3)] == ["H100 SXM", "H200 SXM", "A100 SXM 80 GB"]
    # the seed GEMM: 137.4 GFLOP / 989 TFLOP/s = 139 µs on the H100, / 312 TFLOP/s = 440.5 µs on the A100
    assert table.item(0, 0).text().startswith("139 µs · compute (FP16 TC)")
    assert table.item(0, 2).text().startswith("440.5 µs · compute (FP16 TC)")
    assert "ridge 295.2 FLOP/B" in table.item(0, 0).text()
    # the same figures as the core comparison (one function for window, exports and CLI)
    expected = compare_session(window.document.session, resolve_devices("h100-sxm,h200-sxm,a100-sxm-80gb"))
    assert [c.bound_time_s for c in view.comparison.rows[0]] == [c.bound_time_s for c in expected.rows[0]]
    # one roof per device, each in the legend
    visible = [roof for roof in view.roofs if roof.isVisible()]
    assert len(visible) == 3
    labels = [label.text for _, label in view.legend.items]
    assert len(labels) == 3 and labels[0].startswith("H100 SXM: FP16 TC 989 TFLOP/s, 3.35 TB/s, ridge 295.2 FLOP/B")
    assert len(view.points.data) == 3


def test_unchecking_a_device_removes_its_column_and_roof(window) -> None:
    view = show_compare(window)
    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb"])
    for row in range(view.device_list.count()):
        item = view.device_list.item(row)
        if item.data(256) == "h200-sxm":  # Qt.ItemDataRole.UserRole
            from PySide6.QtCore import Qt

            item.setCheckState(Qt.CheckState.Unchecked)
    assert view.table.columnCount() == 2
    assert sum(roof.isVisible() for roof in view.roofs) == 2 and len(view.legend.items) == 2


def test_no_device_and_no_operation_say_what_to_do(window) -> None:
    view = show_compare(window)
    view.set_chosen([])
    assert view.table.columnCount() == 0 and "Tick devices" in view.caption.text()
    assert not view.export_csv_button.isEnabled()


def test_a_device_without_the_path_says_why_in_its_cell(window) -> None:
    window.document.edit_declaration(0, "gemm(M=4096, N=4096, K=4096, dtype=int8)")
    view = show_compare(window)
    view.set_chosen(["h100-sxm", "v100-sxm2"])
    assert view.table.item(0, 0).text().startswith("69.45 µs · compute (INT8 TC)")
    assert view.table.item(0, 1).text().startswith("no bound\nNVIDIA Tesla V100 SXM2 has no rate for the int8_tc path")


def test_measured_time_where_a_run_ran_on_that_device(window) -> None:
    window.document.session.runs.append(dict(H100_RUN))
    window.document.runs_changed.emit()
    view = show_compare(window)
    view.set_chosen(["h100-sxm", "h200-sxm"])
    h100, h200 = view.table.item(0, 0).text(), view.table.item(0, 1).text()
    assert "measured 200 µs (69 % of bound)" in h100  # 139 µs / 200 µs
    assert "measured" not in h200
    stars = [p for p in view.points.data if p["symbol"] == "star"]
    assert len(stars) == 1  # the run, on the H100 only: 137.4 GFLOP / 200 µs = 687 TFLOP/s
    assert 10 ** stars[0]["y"] == pytest.approx(2 * 4096**3 / 2.0e-4)
    # a run without any device provenance is tolerated: no measured time anywhere
    window.document.session.runs.append({"declaration": GEMM, "samples_s": [1.0]})
    window.document.runs_changed.emit()
    assert "measured 200 µs" in view.table.item(0, 0).text()


def test_exports_write_csv_and_markdown(window, tmp_path: Path) -> None:
    view = show_compare(window)
    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb"])
    view.export_to(str(tmp_path / "cmp.csv"), "csv")
    view.export_to(str(tmp_path / "cmp.md"), "md")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "cmp.csv").read_text(encoding="utf-8"))))
    assert [r["device_key"] for r in rows] == ["h100-sxm", "h200-sxm", "a100-sxm-80gb"]
    assert "| Operation | NVIDIA H100 SXM | NVIDIA H200 SXM | NVIDIA A100 SXM 80 GB |" in (tmp_path / "cmp.md").read_text(encoding="utf-8")
    view.export_to(str(tmp_path / "missing" / "cmp.csv"), "csv")
    assert view.message.isVisible() and "Could not write" in view.message.text()


def test_this_machine_is_in_the_device_chooser_and_can_be_chosen(window) -> None:
    chooser = window.device_panel.chooser
    index = chooser.findData(HOST_CPU_KEY)
    assert index >= 0 and chooser.itemText(index).startswith("This machine: ")
    chooser.setCurrentIndex(index)
    chooser.activated.emit(index)
    assert window.document.device is not None and window.document.device.key == HOST_CPU_KEY
    sources = {window.device_panel.table.item(row, 0).text(): window.device_panel.table.item(row, 2).text()
               for row in range(window.device_panel.table.rowCount())}
    # the OS reports no DRAM bandwidth: a nominal stand-in; the vector rates are derived from cores, clock, SIMD
    assert "nominal" in sources["Memory bandwidth (DRAM)"] and "derived" in sources["FP32 (vector units)"]
    assert "L2 size: sysfs" in window.device_panel.facts.text()


@pytest.mark.parametrize("key", ["mi300x", "gh200", "a100-pcie-80gb"])
def test_new_catalogue_entries_are_in_the_chooser(window, key: str) -> None:
    assert window.device_panel.chooser.findData(key) >= 0


def test_the_selected_operation_is_shared_with_the_other_views(window) -> None:
    from workbench.documents.session import OperationEntry

    window.document.add_operation(OperationEntry("vector add", "add(n=2**24, dtype=fp32)"))
    view = show_compare(window)
    view.set_chosen(["h100-sxm", "a100-sxm-80gb"])
    window.document.select(1)
    assert view.table.currentRow() == 1
    labels = [label.text for _, label in view.legend.items]
    assert labels[0].startswith("H100 SXM: FP32 67 TFLOP/s")  # the vector add's path, not the GEMM's
    view.table.setCurrentCell(0, 1)
    assert window.document.current == 0
    assert [label.text for _, label in view.legend.items][0].startswith("H100 SXM: FP16 TC 989 TFLOP/s")


def test_a_collective_cell_reads_link_limited(window) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.compare_view import cell_text, cell_tooltip
    from workbench.documents.session import OperationEntry, Session

    session = Session(operations=[OperationEntry("ar", "allreduce(n=2**28, dtype=fp32, ranks=8)")])
    cell = compare_session(session, resolve_devices("h100-sxm")).rows[0][0]
    # 1,879,048,192 B per rank / 450 GB/s = 4.176 ms over NVLink 4, above HBM's 641 µs
    assert cell_text(cell).startswith("4.176 ms · link (NVLink 4 (H100/H200 SXM))")
    assert "memory (HBM)" not in cell_text(cell)
    assert "link 4.176 ms over NVLink 4 (H100/H200 SXM) (datasheet)" in cell_tooltip(cell)
