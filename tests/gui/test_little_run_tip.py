"""A lab run short of its bound says why in its hover text (the run figures' sentence, analysis/shortfall.py)."""

from __future__ import annotations

from workbench.model.devices.catalogue import catalogue
from workbench.gui.measure_plots import run_tip
from workbench.gui.run_table import PERCENT_COLUMN, RunTableModel
from workbench.measure.runs import FigureContext, parse_run, run_figures


def test_the_hover_text_names_the_missed_assumption() -> None:
    tiled = "gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=tiled, tile_m=64, tile_n=64, tile_k=16)"
    run = parse_run({"declaration": tiled, "backend": "cupy", "samples_s": [7.515e-3] * 30, "valid": True}, 0)
    figures = run_figures(run, FigureContext(session_device=catalogue()["h200-sxm"]))
    tip = run_tip(figures, False)
    # (7.515 − 2.1154) ms over 32 waves × 256 k steps = 659.1 ns a k step (tests/test_little_lab.py)
    assert "short of the bound: tiled GEMM: the bound lets the next k step's loads overlap" in tip
    assert "659.1 ns for each of the 8,192 k steps" in tip
    # at its bound a run says nothing of the kind
    close = parse_run({"declaration": tiled, "backend": "cupy", "samples_s": [2.2e-3] * 30, "valid": True}, 0)
    assert "short of the bound" not in run_tip(run_figures(close, FigureContext(session_device=catalogue()["h200-sxm"])), False)


def test_the_run_tables_percent_cell_says_it_too(qtbot) -> None:  # type: ignore[no-untyped-def]
    naive = "gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=naive)"
    run = parse_run({"declaration": naive, "backend": "cupy", "samples_s": [41.29e-3] * 30, "valid": True}, 0)
    figures = run_figures(run, FigureContext(session_device=catalogue()["h200-sxm"]))
    tip = RunTableModel().cell_tip(figures, PERCENT_COLUMN)
    # 132 SMs × 16,384 B ÷ (549,822,922,752 B ÷ 41.29 ms) = 162.4 ns (tests/test_little_lab.py)
    assert "short of the bound: naive GEMM" in tip and "162.4 ns a load" in tip
