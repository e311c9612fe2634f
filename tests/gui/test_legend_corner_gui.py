"""The roofline's legend keeps its corner while a declaration is typed, at the cost of one label layout a keystroke."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from legend_checks import legend_faults
from workbench.scenes.legend_corner import BOTTOM_LEFT


def test_typing_keeps_the_legend_in_its_corner_and_lays_the_labels_out_once_a_keystroke(window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The GEMM example at 16 pt in a 1600×1000 window: the legend (roofs with no room beside them) would cover the
    GEMM's point at the top left, and at the bottom right it takes the room of three roof labels; it sits at the
    bottom left. Typing the GEMM's K moves its point: the legend stays there (covering nothing), and each keystroke
    lays the labels out once — choosing the corner afresh would try each corner again (seven layouts)."""
    import workbench.scenes.roofline_scene as roofline_scene

    window.resize(1600, 1000)  # the tests' window: its plot's room sets the scene below
    window.open_example("gemm-4096-fp16")
    window.tabs.setCurrentWidget(window.roofline)
    roofline = window.roofline
    for points in (10.0, 13.0, 16.0):
        window.set_font_points(points)
        roofline.refresh()
        roofline._place_labels()
    assert roofline._legend_corner == BOTTOM_LEFT and roofline.plot.legend.isVisible()
    assert legend_faults(roofline) == []
    layouts = []
    real = roofline_scene.layout_labels
    monkeypatch.setattr(roofline_scene, "layout_labels", lambda *args, **kwargs: layouts.append(1) or real(*args, **kwargs))
    line = window.editor.line
    line.setFocus()
    line.setCursorPosition(len("gemm(M=4096, N=4096, K=4096"))
    for key in (Qt.Key.Key_Backspace, Qt.Key.Key_Backspace, Qt.Key.Key_9, Qt.Key.Key_6, Qt.Key.Key_Backspace):
        layouts.clear()
        QTest.keyClick(line, key)
        assert roofline._legend_corner == BOTTOM_LEFT, line.text()
        assert legend_faults(roofline) == [], line.text()
        assert len(layouts) == 1, f"{line.text()}: {len(layouts)} label layouts for one keystroke"
    assert line.text() == "gemm(M=4096, N=4096, K=409, dtype=fp16)"
