"""The hierarchical roofline: a roof per interface, each operation at each interface's intensity, levels on and off.

Hand figures (4096³ fp16 GEMM, 137,438,953,472 FLOP):
- compulsory: every interface carries the compulsory 100,663,296 B, so every level's point sits at
  137,438,953,472 / 100,663,296 = 1,365.3 FLOP/B;
- impl=tiled 128×128: L2 → SM carries 2,147,483,648 B of tile loads + 33,554,432 B of C = 2,181,038,080 B,
  so its point sits at 137,438,953,472 / 2,181,038,080 = 63.02 FLOP/B.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from workbench.model.devices import Rate
from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.state.commands import SetRate
from workbench.gui.app import build_window
from workbench.scenes.roofline import LEVEL_KEYS

DATA = Path(__file__).resolve().parent.parent / "data"
GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
TILED = "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled)"
HIERARCHY = ("hbm", "l2", "smem")


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found")


def roofline(window):  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.roofline)
    return window.roofline


def enter_l2_rate(window, value: float = 10e12) -> None:  # type: ignore[no-untyped-def]
    """L2 → SM has no datasheet figure: enter one, as a user does in the device panel (undoable)."""
    doc = window.document
    doc.undo_stack.push(SetRate(doc.core, "l2", doc.session.device.overrides.get("l2"), Rate(value, "entered", "entered in a test")))


def shown_level_roofs(view) -> int:  # type: ignore[no-untyped-def]
    """Memory roofs drawn now: the HBM roof and one per further level."""
    further = sum(1 for line in view.level_lines.items[: view.level_lines.used] if line.isVisible())
    return further + (1 if view.memory_line.isVisible() else 0)


def level_positions(view) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    x, y = view.level_points.getData()
    return sorted(zip(x.tolist(), y.tolist()))


def flat(pairs) -> list[float]:  # type: ignore[no-untyped-def]
    return [value for pair in pairs for value in pair]


@pytest.mark.parametrize(
    ("device", "roofs"),
    [("h100-sxm", ("hbm", "smem")), ("a100-sxm-80gb", ("hbm", "smem")), ("cpu-generic", ("hbm",))],
)
def test_one_roof_per_interface_the_device_has_a_rate_for(window, device: str, roofs: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    window.document.set_device(device)
    view = roofline(window)
    # H100 / A100: HBM and shared memory (derived: SMs × 128 B × clock); no L2 figure; the host link only
    # where an operation moves bytes over it (below)
    assert view.shown_levels == roofs
    assert shown_level_roofs(view) == len(roofs)
    boxes = [key for key in LEVEL_KEYS if view.level_boxes[key].isVisible()]
    assert boxes == (list(roofs) if len(roofs) > 1 else [])  # a single roof needs no switch
    assert view.levels_title.isVisible() == (len(roofs) > 1)  # nor a caption over an empty row
    assert [key for key in LEVEL_KEYS if view.level_actions[key].isEnabled()] == list(roofs)
    if len(roofs) > 1:
        assert view.plot.getAxis("bottom").labelText == "Arithmetic intensity (FLOP per byte across each interface)"
    # an entered L2 rate adds the L2 roof
    enter_l2_rate(window)
    assert "l2" in view.shown_levels and shown_level_roofs(view) == len(roofs) + 1
    labels = [item.textItem.toPlainText() for item in view.level_labels.items[: view.level_labels.used]]
    assert any(text.startswith("L2 10 TB/s (entered)") for text in labels)
    window.document.undo_stack.undo()
    assert "l2" not in view.shown_levels


def test_the_host_link_is_a_roof_where_an_operation_crosses_it(window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    doc.set_device("h100-sxm")
    view = roofline(window)
    assert "host" not in view.shown_levels and not view.level_boxes["host"].isVisible()
    doc.edit_declaration(doc.current, GEMM[:-1] + ", resident=host)")
    assert view.shown_levels == ("host", "hbm", "smem")
    assert view.level_boxes["host"].isVisible()
    # host ↔ device carries the 100,663,296 compulsory bytes: the point sits at 1,365.3 FLOP/B on the host level too
    host = [x for x, _ in level_positions(view)]
    assert host == pytest.approx([math.log10(137_438_953_472 / 100_663_296)] * 2)  # host and shared memory
    x, y = view.level_points.getData()
    # the host link (63 GB/s) limits: every point at 1,365.3 FLOP/B × 63.02 GB/s
    host_rate = next(term.rate.value for term in doc.state(doc.current_entry).analysis.terms if term.name == "host")
    assert list(y) == pytest.approx([math.log10(137_438_953_472 / 100_663_296 * host_rate)] * 2)


def test_points_sit_at_the_intensity_of_each_interface_term(window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    doc.set_device("h100-sxm")
    enter_l2_rate(window)
    doc.edit_declaration(doc.current, TILED)
    view = roofline(window)
    analysis = doc.state(doc.current_entry).analysis
    compute = next(term for term in analysis.terms if term.kind == "compute")
    transfers = {term.name: term.amount for term in analysis.terms if term.name in HIERARCHY}
    assert set(transfers) == set(HIERARCHY)
    assert transfers["l2"] == 2_181_038_080  # tile loads + C, by hand above
    expected_x = {key: math.log10(compute.amount / amount) for key, amount in transfers.items()}
    # every point of one operation shares one height: the rate every roof allows at once
    rate = min(
        [compute.rate.value] + [compute.amount / term.amount * term.rate.value for term in analysis.terms if term.name in HIERARCHY]
    )
    y = math.log10(rate)
    (hx, hy) = view.points.getData()[0][0], view.points.getData()[1][0]
    assert (hx, hy) == pytest.approx((expected_x["hbm"], y))
    assert flat(level_positions(view)) == pytest.approx(flat(sorted((expected_x[key], y) for key in ("l2", "smem"))))
    assert expected_x["l2"] == pytest.approx(math.log10(63.0153846), abs=1e-6)
    # compulsory: every interface carries the compulsory bytes, so every point is at 1,365.3 FLOP/B
    doc.edit_declaration(doc.current, GEMM)
    xs = [x for x, _ in level_positions(view)] + list(view.points.getData()[0])
    assert xs == pytest.approx([math.log10(137_438_953_472 / 100_663_296)] * 3)
    assert not view.label_layout.faults()


def test_a_level_switched_off_hides_its_roof_and_points_and_is_remembered(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    doc.set_device("h100-sxm")
    enter_l2_rate(window)
    doc.edit_declaration(doc.current, TILED)
    view = roofline(window)
    before = shown_level_roofs(view)
    assert len(level_positions(view)) == 2  # L2 and shared memory beside the HBM point
    view.level_boxes["smem"].click()  # the check box under the plot
    assert "smem" not in view.shown_levels and view.hidden_levels == ("smem",)
    assert shown_level_roofs(view) == before - 1
    assert len(level_positions(view)) == 1
    assert not view.level_actions["smem"].isChecked()  # the View menu follows the box
    assert window.settings.value("view/roofline_hidden_levels") == "smem"
    view.level_actions["hbm"].trigger()  # View ▸ Roofline levels: the HBM roof off too
    assert not view.memory_line.isVisible()
    # with HBM off the labelled point moves to the first level still shown (L2)
    analysis = doc.state(doc.current_entry).analysis
    assert view.points.getData()[0][0] == pytest.approx(math.log10(analysis.flop / 2_181_038_080))
    assert len(level_positions(view)) == 0
    # a new window reads the switches back from QSettings
    window.save_preferences()
    other = build_window(detect=no_driver)
    qtbot.addWidget(other)
    assert other.roofline.hidden_levels == ("hbm", "smem")
    assert not other.roofline.level_actions["smem"].isChecked()
    other.close()
    other.wait_for_workers()
    view.set_level_shown("hbm", True)
    view.set_level_shown("smem", True)
    assert view.hidden_levels == ()
    assert window.settings.value("view/roofline_hidden_levels") == ""
    assert shown_level_roofs(view) == before


def test_bound_vs_size_draws_a_line_per_term(window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    doc.set_device("h100-sxm")
    enter_l2_rate(window)
    doc.edit_declaration(doc.current, TILED)
    window.tabs.setCurrentWidget(window.sweep)
    view = window.sweep
    assert set(view.term_lines) >= {"l2", "smem"}
    legend = view.legend.texts()
    assert "L2 → SM (L1 / shared memory) bound (dashed)" in legend
    assert "shared memory → registers bound (dashed)" in legend
    from workbench.model.analysis import sweep

    fields = view.fields()
    x, _ = view.compute_line.getData()
    sizes = np.round(2.0 ** x)
    result = sweep(doc.state(doc.current_entry).analysis.declaration, {name: sizes for name in fields}, device=doc.device)
    for name in ("l2", "smem"):
        _, drawn = view.term_lines[name].getData()
        expected = np.log10(result.term(name).time_s)
        assert np.allclose(drawn[np.isfinite(drawn)], expected[np.isfinite(expected)])
    # a device without those rates: the lines go, and leave the legend
    doc.set_device("cpu-generic")
    assert not view.term_lines["smem"].isVisible()
    assert "shared memory → registers bound (dashed)" not in view.legend.texts()


def test_the_panel_shows_logical_beside_physical(window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    doc.set_device("h100-sxm")
    doc.edit_declaration(doc.current, TILED)
    html_text = window.panel.derivation.toHtml()
    text = window.panel.derivation.toPlainText()
    assert "Logical" in text and "Physical" in text
    # the L2 row: 100,663,296 B compulsory beside 2,181,038,080 B of tile loads and C
    assert "100,663,296 B" in text and "2,181,038,080 B" in text
    assert "<table" in html_text
    doc.edit_declaration(doc.current, GEMM)  # compulsory: nothing to set side by side
    assert "Physical" not in window.panel.derivation.toPlainText()


def test_ncu_kernels_sit_at_their_l2_and_l1_shared_intensities(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    doc.set_device("h100-sxm")
    enter_l2_rate(window)
    view = roofline(window)
    window.import_profile(str(DATA / "ncu_raw_hierarchy.csv"))
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10000)
    window.profile_importer.dialog.accept()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    view = roofline(window)  # the import showed the Profile tab; the roofline redraws when shown
    (mark,) = view.kernels.marks
    # 137,438,953,472 FLOP over 100,663,296 B DRAM, 2,181,038,080 B L2, 10,770,972,672 B L1/shared
    assert mark.x == pytest.approx(math.log10(137_438_953_472 / 100_663_296))
    # the file holds the NERSC method's counters, not those of ncu's own sections (the default): no stars until
    # the Profile tab's method is NERSC's
    assert view.kernel_levels.getData()[0] is None or not len(view.kernel_levels.getData()[0])
    doc.set_level_method("nersc")
    view = roofline(window)
    qtbot.waitUntil(lambda: view.kernel_levels.getData()[0] is not None and len(view.kernel_levels.getData()[0]) == 2, timeout=5000)
    (mark,) = view.kernels.marks
    x, y = view.kernel_levels.getData()
    assert sorted(x.tolist()) == pytest.approx(sorted([math.log10(137_438_953_472 / 10_770_972_672),
                                                       math.log10(137_438_953_472 / 2_181_038_080)]))
    assert list(y) == pytest.approx([mark.y, mark.y])
    view.set_level_shown("l2", False)
    assert view.kernel_levels.getData()[0].tolist() == pytest.approx([math.log10(137_438_953_472 / 10_770_972_672)])


def test_the_library_add_has_its_own_lowered_roof(window) -> None:  # type: ignore[no-untyped-def]
    # "one add, two implementations" on the H200: the library add's loads in flight allow 2.403 TB/s
    # (132 SMs × 16,384 B ÷ 1.35 µs × 3/2), below the 4.8 TB/s memory roof; the vectorized add is capped by the memory
    window.open_example("one-add-two-implementations")
    view = roofline(window)
    lines = [line for line in view.lowered_lines.items[: view.lowered_lines.used] if line.isVisible()]
    assert len(lines) == 1
    xs, ys = lines[0].getData()  # slope one in log-log: rate = intensity × 2.403 TB/s
    assert ys[0] - xs[0] == pytest.approx(math.log10(132 * 16_384 / 1.35e-6 * 1.5))
    labels = [item.textItem.toPlainText() for item in view.lowered_labels.items[: view.lowered_labels.used]]
    assert labels == ["Add, library kernel: loads in flight 2.403 TB/s"]
    # the library add's point sits on its lowered roof: intensity 1/12 FLOP/B × 2.403 TB/s = 200.2 GFLOP/s;
    # the vectorized add's on the memory roof: 1/12 × 4.8 TB/s = 400 GFLOP/s
    x, y = view.points.getData()
    heights = sorted(10 ** value for value in y.tolist())
    assert heights[0] == pytest.approx(2**24 / (3 * 2**26) * 132 * 16_384 / 1.35e-6 * 1.5, rel=1e-9)
    assert heights[1] == pytest.approx(4.8e12 / 12, rel=1e-9)
    # another device without a loaded latency: no lowered roof
    window.document.set_device("h100-sxm")
    assert view.lowered_lines.used == 0
