"""A roofline behind another tab waits: an edit marks it stale, showing its tab redraws it."""

from __future__ import annotations

from workbench.gui.app import build_window


def test_hidden_roofline_redraws_when_its_tab_is_shown(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = build_window()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    roofline = window.roofline
    window.tabs.setCurrentWidget(window.sweep)
    before = roofline.points.getData()[1].copy()
    window.document.edit_declaration(window.document.current, "gemm(M=64, N=64, K=64, dtype=fp16)")
    assert roofline._dirty  # nothing drawn while nobody can see it
    assert list(roofline.points.getData()[1]) == list(before)
    window.tabs.setCurrentWidget(roofline)
    assert not roofline._dirty
    assert list(roofline.points.getData()[1]) != list(before)  # a 64³ GEMM sits far lower on the roofline
    window.close()
    window.wait_for_workers()


def test_a_window_not_on_screen_redraws_at_once(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = build_window()  # exports and scripts use windows that are never shown
    qtbot.addWidget(window)
    before = window.roofline.points.getData()[1].copy()
    window.document.edit_declaration(window.document.current, "gemm(M=64, N=64, K=64, dtype=fp16)")
    assert list(window.roofline.points.getData()[1]) != list(before)
    window.wait_for_workers()
