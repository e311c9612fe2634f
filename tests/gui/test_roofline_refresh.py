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


def _count_calls(monkeypatch, obj, name: str) -> list[int]:  # type: ignore[no-untyped-def]
    """Wrap obj.name so each call is counted (the views look their refresh up when they run it)."""
    calls: list[int] = []
    original = getattr(obj, name)

    def counted(*args: object) -> object:
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(obj, name, counted)
    return calls


def test_one_edit_refreshes_each_view_once(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A keystroke emits several document signals (analysis, declaration, the automatic name's
    operations_changed); the roofline, the Analysis panel and the editor still redraw once each."""
    from PySide6.QtCore import Qt

    window = build_window()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentWidget(window.roofline)
    line = window.editor.line
    line.setFocus()
    line.setText("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    line.setCursorPosition(len("gemm(M=4096"))
    counts = {
        "roofline": _count_calls(monkeypatch, window.roofline, "refresh"),
        "panel": _count_calls(monkeypatch, window.panel, "refresh"),
        "editor": _count_calls(monkeypatch, window.editor, "refresh"),
    }
    fired: list[str] = []
    document = window.document
    for name in ("analysis_changed", "operations_changed", "declaration_changed"):
        getattr(document, name).connect(lambda *_, name=name: fired.append(name))
    entry = document.current_entry
    assert entry is not None and entry.name_automatic  # the name follows the declaration: a rename per edit
    for key in (Qt.Key.Key_1, Qt.Key.Key_Backspace):
        for calls in counts.values():
            calls.clear()
        fired.clear()
        qtbot.keyClick(line, key)
        assert len(fired) >= 3, fired  # the edit did emit several signals …
        assert {view: len(calls) for view, calls in counts.items()} == {"roofline": 1, "panel": 1, "editor": 1}  # … one redraw each
    assert document.state(document.current_entry).error is None
    window.close()
    window.wait_for_workers()
