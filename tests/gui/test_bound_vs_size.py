"""Bound vs size: every term visible over the combined line, sizes beyond memory shaded, the limiter change marked."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel

from workbench.model.analysis import analyze, sweep


def shown_sweep(window, declaration: str):  # type: ignore[no-untyped-def]
    window.document.edit_declaration(0, declaration)
    window.tabs.setCurrentWidget(window.sweep)
    window.sweep.refresh()
    return window.sweep


def test_a_memory_bound_operation_keeps_its_memory_line_visible_over_the_combined_one(window) -> None:  # type: ignore[no-untyped-def]
    view = shown_sweep(window, "add(n=2**24, dtype=fp32)")
    # the memory term is the bound everywhere: drawn dashed, above the combined line
    assert view.memory_line.zValue() > view.bound_line.zValue() and view.compute_line.zValue() > view.bound_line.zValue()
    assert view.memory_line.opts["pen"].style() == Qt.PenStyle.DashLine
    x, memory = view.memory_line.getData()
    _, bound = view.bound_line.getData()
    assert np.allclose(memory, bound)  # the same curve: only the drawing order keeps it visible
    assert view.memory_line.isVisible()
    names = view.legend.texts()
    assert "memory bound (dashed)" in names and "combined bound" in names


def test_sizes_beyond_device_memory_are_shaded_and_labelled(window) -> None:  # type: ignore[no-untyped-def]
    view = shown_sweep(window, "gemm(M=4096, N=4096, K=4096, batch=16, dtype=bf16)")
    assert view.beyond_region.isVisible() and view.beyond_label.isVisible()
    assert "80 GB of device memory" in view.beyond_label.textItem.toPlainText()
    start, end = view.beyond_region.getRegion()
    # A, B and C hold 16 × s² bf16 values each: 96·s² bytes pass 80 GB near s = 2^14.9
    footprint = lambda s: 16 * 3 * 2 * s * s  # noqa: E731  A, B and C, each 16 × s² bf16 values
    assert footprint(2 ** (start - 0.05)) <= 80e9 < footprint(2 ** (start + 0.05))
    assert end == view.high.value()
    assert "NVIDIA H100" in view.caption.text() and "h100-sxm" not in view.caption.text()


def test_the_size_where_the_limiter_changes_is_marked(window) -> None:  # type: ignore[no-untyped-def]
    view = shown_sweep(window, "gemm(M=4096, N=4096, K=4096, batch=16, dtype=bf16)")
    assert view.limiter_line.isVisible()
    at = view.limiter_line.value()
    sizes = np.round(np.array([2 ** (at - 0.1), 2 ** (at + 0.1)]))
    result = sweep("gemm(M=4096, N=4096, K=4096, batch=16, dtype=bf16)", {"M": sizes, "N": sizes, "K": sizes}, device="h100-sxm")
    assert result.memory_time[0] > result.compute_time[0] and result.compute_time[1] > result.memory_time[1]
    assert "memory- → compute-limited" in view.limiter_label.textItem.toPlainText()
    # an operation memory-bound at every size has no change to mark, and none beyond memory in 2^10..2^30 fp32
    view = shown_sweep(window, "add(n=2**24, dtype=fp32)")
    assert not view.limiter_line.isVisible()
    assert view.beyond_region.isVisible() == (12 * 2**30 > 80e9)
    assert math.isfinite(at)


def test_the_limiter_mark_is_analyze_s_limiter_change_not_the_edge_of_memory(window) -> None:  # type: ignore[no-untyped-def]
    # A square fp16 GEMM on the H100 is compute-limited from 2^10 on until its tensors pass 80 GB: there is no
    # change of limiter to mark, and the sizes left out beyond memory are no "memory-limited" stretch.
    view = shown_sweep(window, "gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    view.high.setValue(30)
    view.low.setValue(10)  # 2^10..2^30, as bench_gui.py sweeps it
    assert view.beyond_region.isVisible()
    assert not view.limiter_line.isVisible() and not view.limiter_label.isVisible()
    # from 2^8 it starts memory-limited: the mark sits where analyze()'s limiter changes, and says so
    view.low.setValue(8)
    assert view.limiter_line.isVisible()
    at = view.limiter_line.value()
    below, above = (analyze(f"gemm(M={s}, N={s}, K={s}, dtype=fp16)", "h100-sxm") for s in (round(2 ** (at - 0.02)), round(2 ** (at + 0.02))))
    assert (below.limiter, above.limiter) == ("memory", "compute")
    assert view.limiter_label.textItem.toPlainText().startswith("memory- → compute-limited")
    # exactly where: n/3 FLOP per byte reaches 989 / 3.35 = 295.2 at n = 886 (885 is still memory-limited)
    assert view.limiter_label.textItem.toPlainText().endswith("from M = N = K = 886")
    assert at == math.log2(886)


def test_a_host_link_that_limits_small_sizes_is_named_in_the_mark(window) -> None:  # type: ignore[no-untyped-def]
    # Tensors in host memory: small GEMMs wait on PCIe (analyze() says link-limited), large ones on compute.
    declaration = "gemm(M=4096, N=4096, K=4096, dtype=fp16, resident=host)"
    view = shown_sweep(window, declaration)
    view.high.setValue(20)
    view.low.setValue(10)
    assert view.limiter_line.isVisible()
    at = view.limiter_line.value()
    below, above = (analyze(declaration.replace("M=4096, N=4096, K=4096", f"M={s}, N={s}, K={s}"), "h100-sxm")
                    for s in (round(2 ** (at - 0.03)), round(2 ** (at + 0.03))))
    assert (below.limiter, above.limiter) == ("link", "compute")
    assert view.limiter_label.textItem.toPlainText().startswith("link- → compute-limited")


def test_lines_leave_out_sizes_without_figures_and_break_at_a_gap(window) -> None:  # type: ignore[no-untyped-def]
    import pyqtgraph as pg

    from workbench.gui.sweep_view import set_line_data

    line = pg.PlotDataItem()
    x = np.arange(6.0)
    set_line_data(line, x, np.array([-np.inf, 1.0, 2.0, 3.0, np.nan, np.nan]))  # one run: drawn alone, unbroken
    drawn_x, drawn_y = line.getData()
    assert list(drawn_x) == [1.0, 2.0, 3.0] and list(drawn_y) == [1.0, 2.0, 3.0]
    assert line.opts["connect"] == "all"
    set_line_data(line, x, np.array([0.0, 1.0, np.nan, 3.0, 4.0, np.nan]))  # a gap: the line breaks there
    drawn_x, drawn_y = line.getData()
    assert len(drawn_x) == 6 and math.isnan(drawn_y[2]) and line.opts["connect"] == "finite"
    path = line.curve.getPath()
    starts = [path.elementAt(i).x for i in range(path.elementCount()) if path.elementAt(i).isMoveTo()]
    assert starts == [0.0, 3.0]  # two pieces: 0–1 and 3–4
    set_line_data(line, x, np.full(6, np.nan))  # nothing to draw
    assert len(line.getData()[0] if line.getData()[0] is not None else []) == 0


def test_every_legend_row_takes_the_new_text_size(window) -> None:  # type: ignore[no-untyped-def]
    """Larger text (presentation, Ctrl++) reaches the rows already in the legend, not only the ones added after
    it (the batched GEMM's legend once read three small rows over one large one at presentation size), and each
    row's line sample grows with its text."""
    view = shown_sweep(window, "gemm(M=128, N=128, K=128, batch=16, dtype=bf16)")
    entries = view.legend.findChildren(QLabel)

    def sizes() -> set[float]:
        return {label.font().pointSizeF() for label in entries if label.pixmap().isNull()}

    def sample_heights() -> set[int]:
        return {label.height() for label in entries if not label.pixmap().isNull()}

    before, heights = sizes(), sample_heights()
    assert len(before) == 1 and len(heights) == 1
    window.set_font_points(18)
    view.refresh()
    after = sizes()
    assert len(after) == 1 and after != before, (before, after)
    assert len(sample_heights()) == 1 and sample_heights() != heights


def test_the_legend_sits_outside_the_plotted_curves_and_wraps_at_the_width(window) -> None:  # type: ignore[no-untyped-def]
    """The curves run from corner to corner, so a legend inside the plot hid part of them on a short plot (a
    1280 × 720 projector at presentation size): the legend is a strip beside the plot that covers none of the
    plotted area, names every line drawn, and takes more rows, not more width, when the view is narrow."""
    view = shown_sweep(window, "gemm(M=128, N=128, K=128, batch=16, dtype=bf16)")
    window.set_font_points(18)
    view.refresh()
    QApplication.processEvents()
    plotted = view.widget.mapTo(view, view.widget.rect().topLeft())
    legend_box = view.legend.geometry()
    assert legend_box.bottom() < plotted.y()  # wholly above the plot widget
    names = view.legend.texts()
    assert names[:3] == ["combined bound", "compute bound (dashed)", "memory bound (dashed)"]
    assert any(name.startswith("shared memory") for name in names)  # the further terms' lines are named too
    one_row = view.legend.layout().heightForWidth(10_000)
    narrow = view.legend.layout().heightForWidth(view.legend.layout().minimumSize().width())
    assert narrow > one_row  # rows, not width
    assert view.legend.minimumSizeHint().width() < view.legend.sizeHint().width()


def test_on_a_short_plot_the_declared_label_keeps_off_the_limiter_label(window) -> None:  # type: ignore[no-untyped-def]
    """A 1280 × 720 projector at presentation size leaves the plot a few lines tall: the as-declared label,
    under its point, fell on the limiter-change label at the plot's foot; it goes above its point then, and
    back under it when the plot has room again."""
    view = shown_sweep(window, "gemm(M=128, N=128, K=128, batch=16, dtype=bf16)")
    window.set_font_points(18)
    view.refresh()

    def boxes_meet() -> bool:
        QApplication.processEvents()
        return view.current_label.sceneBoundingRect().intersects(view.limiter_label.sceneBoundingRect())

    view.widget.setFixedHeight(240)
    QApplication.processEvents()
    assert view.current_label.isVisible() and view.limiter_label.isVisible()
    assert not boxes_meet()
    assert view.current_label.anchor.y() == 1  # above its point
    view.widget.setMinimumHeight(600)
    view.widget.setMaximumHeight(16_777_215)
    window.set_font_points(9)
    QApplication.processEvents()
    assert not boxes_meet()
    assert view.current_label.anchor.y() == 0  # under its point, where the text reads along the rising bound
