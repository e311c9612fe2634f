"""The Profile tab's levels: a kernel's L2 and L1 points by Nsight Compute's sections and by NERSC's method,
each labelled, the method in use chosen there and followed by the Roofline tab's stars."""

from __future__ import annotations

import math
from pathlib import Path

from workbench.gui.profile_model import kernel_marks

DATA = Path(__file__).resolve().parent.parent / "data"
LEVELS = DATA / "ncu_raw_levels_h100.csv"  # ncu's current hierarchical-roofline metrics and NERSC's (tests/test_ncu_hierarchy.py)
FLOP = 137_438_953_472  # the 4096³ GEMM's tensor operations in the file


def import_levels(qtbot, window):  # type: ignore[no-untyped-def]
    """The window starts with the 4096³ fp16 GEMM (row 0): the file's tiled GEMM kernel is matched with it."""
    window.document.select(0)
    window.import_profile(str(LEVELS))
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10000)
    dialog = window.profile_importer.dialog
    dialog.choose(0, 0)
    dialog.accept()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    window.tabs.setCurrentWidget(window.profile_view)
    view = window.profile_view
    qtbot.waitUntil(lambda: view.comparison_box.isVisible() and bool(view.level_labels), timeout=5000)
    return view


def test_both_methods_points_are_drawn_and_labelled_and_the_choice_is_followed(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    view = import_levels(qtbot, window)
    # the method in use (ncu's) drawn last, on top of NERSC's points
    assert [label.toPlainText() for label in view.level_labels] == ["DRAM", "L2 · NERSC", "L1 · NERSC", "L2 · ncu", "L1 · ncu"]
    xs = sorted(round(10 ** spot.pos().x(), 3) for spot in view.level_points.points())  # log10 FLOP/B on log axes
    # FLOP over 100,663,296 (DRAM), 2,147,483,648 and 6,442,450,944 (ncu), 2,181,038,080 and 10,770,972,672 (NERSC)
    expected = sorted(round(FLOP / b, 3) for b in (100_663_296, 2_147_483_648, 6_442_450_944, 2_181_038_080, 10_770_972_672))
    assert xs == expected
    text = view.levels_text.text()
    assert "Nsight Compute's sections (in use): L2 2.147 GB = lts__lts2xbar_cycles_active.sum × 32 B, 64 FLOP/B" in text
    assert "L1 6.442 GB = l1tex__lsu_writeback_active_mem_lgds.sum × 128 B" in text
    assert "NERSC method: L2 2.181 GB = lts__t_bytes.sum" in text
    assert any("l1tex__t_bytes.sum + l1tex__data_pipe_lsu_wavefronts_mem_shared.sum × 128 B" in tip for tip in view.level_tips)
    # the Roofline tab's stars follow the method: ncu's first, NERSC's once it is chosen here
    (mark,) = kernel_marks(window.document)
    assert dict(mark.levels)["l2"] == math.log10(FLOP / 2_147_483_648)
    assert "lts__lts2xbar_cycles_active.sum × 32 B (Nsight Compute's hierarchical-roofline sections)" in dict(mark.level_sources)["l2"]
    view.level_method.setCurrentIndex(view.level_method.findData("nersc"))
    view.level_method.activated.emit(view.level_method.currentIndex())
    assert window.document.level_method == "nersc"
    (mark,) = kernel_marks(window.document)
    assert dict(mark.levels)["l2"] == math.log10(FLOP / 2_181_038_080)
    assert dict(mark.level_sources)["smem"].startswith("l1tex__t_bytes.sum + l1tex__data_pipe_lsu_wavefronts_mem_shared.sum × 128 B")
    qtbot.waitUntil(lambda: "NERSC method (in use)" in view.levels_text.text(), timeout=5000)
