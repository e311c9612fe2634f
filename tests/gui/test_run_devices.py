"""In the window: runs and profiles compared with the device they ran on, whichever device the session shows.

The reproductions of issue 12: a Hopper profile imported into the CPU vector-add
example, a CPU run shown while the session shows an H100, a GEMM read under
another FLOP convention, and a run faster than its own device allows.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from workbench.model.devices.host import host_device
from workbench.gui.measure_plots import IMPOSSIBLE, OTHER_DEVICE, VALID
from workbench.gui.run_table import COLUMNS, DEVICE_COLUMN, PERCENT_COLUMN
from workbench.gui.measure_runs import add_run, document_runs
from workbench.measure import RunRecord, measure
from workbench.documents.report import build_report

DATA = Path(__file__).resolve().parent.parent / "data"
ADD = "add(n=2**16, dtype=fp32)"
FAST = {"iterations": 30, "warmup": 2}


@pytest.fixture(scope="module")
def cpu_add() -> RunRecord:
    return measure(ADD, backend="numpy", **FAST)


def cell(window, row: int, column: str, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
    model = window.measurement.model
    return model.data(model.index(row, COLUMNS.index(column)), role)


def vector_add_with(window, record: RunRecord) -> None:  # type: ignore[no-untyped-def]
    """Examples ▸ Vector add (Generic CPU), the operation at the run's size, the run stored as the tab stores it."""
    window.open_example("vector-add")
    window.document.edit_declaration(0, ADD)
    add_run(window.document, record, window.document.operations[0].name)


def roofline_marks(window):  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.roofline)
    return window.roofline.measured.marks


def test_a_hopper_profile_in_the_cpu_example_is_compared_with_its_own_gpu(qtbot, window) -> None:
    window.open_example("vector-add")
    assert window.document.device.key == "cpu-generic"
    window.import_profile(str(DATA / "ncu_details.csv"))
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10000)
    window.profile_importer.dialog.accept()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    view = window.profile_view
    view.refresh()
    # the file states compute capability 9.0: the bound is a Hopper GPU's, 201,326,592 B / 4.8 TB/s = 41.94 µs
    assert view.figure("time", "declared") == "41.94 µs bound"
    verdict = view.figure("time", "verdict")
    assert "8133" not in verdict and "reaches 86.7 % of the bound" in verdict
    assert "not the session's Generic CPU" in view.note.text() and "compute capability 9.0" in view.note.text()
    causes = view.causes.toPlainText()
    assert "rates below what the device sustains" not in causes
    # on the roofline: drawn in the other device's style, not tied to the CPU's roofs
    window.tabs.setCurrentWidget(window.roofline)
    marks = window.roofline.kernels.marks
    assert marks and all(mark.style == "other device" and mark.anchor is None for mark in marks)


@pytest.mark.parametrize("shown", ["host-cpu", "h100-sxm"])
def test_a_cpu_run_shows_the_same_percent_of_bound_in_the_table_and_the_report(qtbot, window, cpu_add, shown) -> None:
    vector_add_with(window, cpu_add)
    window.document.set_device(shown)
    (figures,) = document_runs(window.document)
    assert figures.device is not None and figures.device.key == "host-cpu"  # this machine's CPU, as detected
    table_percent = cell(window, 0, PERCENT_COLUMN)
    (reported,) = build_report(window.document.session).operations[0].runs
    assert table_percent.startswith(reported.percent_text.split(" %")[0] + " %")
    assert reported.percent_of_bound == pytest.approx(100 * 786_432 / 51.2e9 / figures.median_s)
    short = host_device().name.split(" (")[0]
    assert cell(window, 0, DEVICE_COLUMN) == short
    italic = cell(window, 0, DEVICE_COLUMN, Qt.ItemDataRole.FontRole)
    marks = roofline_marks(window)
    if shown == "h100-sxm":
        assert italic is not None and italic.italic()
        assert table_percent.endswith("◇")  # said beside the figure
        assert "not the session's NVIDIA H100 SXM" in cell(window, 0, DEVICE_COLUMN, Qt.ItemDataRole.ToolTipRole)
        assert [mark.style for mark in marks] == [OTHER_DEVICE] and marks[0].label == short
        legend = [label.text for _, label in window.roofline.plot.legend.items]
        assert f"run on {short}: not against these roofs" in legend
        tab = window.measurement
        window.tabs.setCurrentWidget(tab)
        qtbot.waitUntil(lambda: tab.backends is not None, timeout=10000)
        tab.select_backend("numpy")
        assert "the session shows NVIDIA H100 SXM, so these runs are marked" in tab.bound_label.text()
    else:
        # a real NumPy add may beat the nominal 51.2 GB/s DRAM figure: a guess is no floor, so never "impossible"
        assert italic is None and not table_percent.endswith("◇") and not table_percent.endswith("⚠")
        assert [mark.style for mark in marks] == [VALID]


def test_a_gemm_reads_in_the_session_s_convention_in_the_table_and_the_report(qtbot, window) -> None:
    record = measure("gemm(M=64, N=64, K=64, dtype=fp32)", backend="numpy", convention="fma2", **FAST)
    window.open_example("vector-add")
    window.document.edit_declaration(0, "gemm(M=64, N=64, K=64, dtype=fp32)")
    add_run(window.document, record, "gemm")
    window.document.set_setting("convention", "mac")
    (figures,) = document_runs(window.document)
    assert figures.achieved_flop_per_s == pytest.approx(64**3 / figures.median_s)  # mac: one FLOP per multiply-add
    (reported,) = build_report(window.document.session).operations[0].runs
    assert reported.achieved_flop_per_s == figures.achieved_flop_per_s
    from workbench.model.units import format_flop_rate

    assert cell(window, 0, "FLOP rate") == format_flop_rate(figures.achieved_flop_per_s, digits=3)
    marks = roofline_marks(window)
    assert marks[0].y == pytest.approx(math.log10(figures.achieved_flop_per_s))


def test_an_impossible_run_is_flagged_in_the_table_and_on_the_plot(qtbot, window, cpu_add) -> None:
    fast = replace(cpu_add, samples_s=tuple(1e-7 * (1 + i / 100) for i in range(30)))
    vector_add_with(window, fast)
    window.document.set_device("host-cpu")
    window.document.set_rate("hbm", "20 GB/s")  # an entered figure is a bound; the nominal one is not
    percent = cell(window, 0, PERCENT_COLUMN)
    assert percent.endswith("⚠")
    assert cell(window, 0, PERCENT_COLUMN, Qt.ItemDataRole.FontRole).bold()
    tip = cell(window, 0, PERCENT_COLUMN, Qt.ItemDataRole.ToolTipRole)
    assert "faster than the device allows" in tip and "data served from cache" in tip
    (mark,) = roofline_marks(window)
    assert mark.style == IMPOSSIBLE and mark.label == f"impossible ({host_device().name.split(' (')[0]})"
    assert "impossible" in mark.tip
    scatter_x, _ = window.roofline.measured.impossible_items.scatter.getData()
    assert list(scatter_x) == pytest.approx([mark.x])
    assert window.roofline.measured.valid_items.scatter.getData()[0].size == 0


def test_a_run_s_hover_text_is_built_when_hovered_not_at_each_refresh(qtbot, window, cpu_add, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A session of thousands of runs redraws its marks on every edit; each run's hover text is made only when the
    pointer asks for it (measure_plots.run_tip), never for every run at every refresh."""
    from workbench.gui import measure_plots

    vector_add_with(window, cpu_add)
    made: list[int] = []
    real = measure_plots.run_tip
    monkeypatch.setattr(measure_plots, "run_tip", lambda run, binary: made.append(run.index) or real(run, binary))
    (mark,) = roofline_marks(window)
    window.document.set_setting("binary", True)  # a refresh that changes every hover text
    qtbot.waitUntil(lambda: window.roofline.measured.marks and window.roofline.measured.marks[0].binary, timeout=5000)
    assert made == []
    text = window.roofline.measured.tip(mark.run_index)
    assert made == [mark.run_index]
    assert "iB/s compulsory bytes over the median" in text  # made now, in the units set after the marks were drawn


def test_the_exported_roofline_draws_the_runs_as_the_window_does(qtbot, window, cpu_add) -> None:  # type: ignore[no-untyped-def]
    """File ▸ Export report: the roofline, drawn without Qt, holds the window's run in its kind, label and legend."""
    import xml.etree.ElementTree as ET

    vector_add_with(window, cpu_add)
    window.document.set_device("h100-sxm")
    (mark,) = roofline_marks(window)
    assert mark.style == OTHER_DEVICE
    plot = window.session_io.current_plot()
    assert plot is not None
    root = ET.fromstring(plot)

    def texts(css: str) -> list[str]:
        return ["".join(node.itertext()) for node in root.iter() if node.get("class") == css]

    assert len([node for node in root.iter() if node.get("class") == "run-other-device"]) == 1
    assert texts("run-label") == [mark.label]
    assert f"run on {mark.device}: not against these roofs" in texts("legend-text")
