"""While the declaration is typed, the figures follow every keystroke and the derivation is written out once the
typing pauses (TYPING_PAUSE_MS); every other change shows the derivation at once.

Most tests make the pause a minute long (a slow keystroke on a loaded machine must not count as a pause) and
call the panel's timer slot where the typing pauses; one waits for the real pause."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit

from workbench.gui.document import TYPING_PAUSE_MS
from workbench.gui.derivation_view import derivation_rich_text

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def _shown(window) -> str:  # type: ignore[no-untyped-def]
    return window.panel.derivation.toPlainText()


def _written(window, entry=None) -> str:  # type: ignore[no-untyped-def]
    """The derivation of `entry` (the selected operation) as a fresh view would show it."""
    from workbench.gui.derivation_view import DerivationView

    entry = entry if entry is not None else window.document.current_entry
    fresh = DerivationView()
    fresh.show_rich_text(derivation_rich_text(window.document.state(entry).analysis))
    return fresh.toPlainText()


def _type(line: QLineEdit, keys: str) -> None:
    for key in keys:
        QTest.keyClick(line, key)
        QApplication.processEvents()


def test_the_figures_follow_each_keystroke_and_the_derivation_the_pause(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    window, line = typing_window()
    panel = window.panel
    before = _shown(window)
    assert before == _written(window)
    flop_before = panel.values["work"].text()

    for key in "01":  # M=40960, M=409601
        _type(line, key)
        assert panel.values["work"].text() != flop_before, "the figures follow each keystroke"
        flop_before = panel.values["work"].text()
        assert panel.derivation_due and _shown(window) == before, "the derivation waits for the typing to pause"
    assert window.document.current_entry.declaration == "gemm(M=409601, N=4096, K=4096, dtype=fp16)"

    panel.catch_up_derivation()  # the typing pauses
    assert not panel.derivation_due
    assert _shown(window) == _written(window) != before
    assert "409,601" in _shown(window)


def test_the_derivation_is_written_out_once_the_typing_has_paused(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """With the real pause: the last text is written, not before TYPING_PAUSE_MS after the last keystroke."""
    window, line = typing_window()
    panel = window.panel
    # NVML's answer changes the device: a change that is not a keystroke, which writes the derivation at once. On a
    # loaded machine it could come during the pause timed here.
    qtbot.waitUntil(lambda: window.document.detection is not None, timeout=20000)
    QApplication.processEvents()
    _type(line, "1")  # (a window's first keystroke may itself last longer than the pause)
    qtbot.waitUntil(lambda: not panel.derivation_due, timeout=5000)
    before = _shown(window)
    typed_at = time.monotonic()  # (before the keystroke: its timer starts during it)
    _type(line, "2")
    qtbot.waitUntil(lambda: _shown(window) != before, timeout=5000)
    assert time.monotonic() - typed_at >= TYPING_PAUSE_MS / 1000
    assert not panel.derivation_due
    assert window.document.current_entry.declaration.startswith("gemm(M=409612,")
    assert _shown(window) == _written(window)


def test_a_keystroke_in_a_form_field_waits_too(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    window, _line = typing_window()
    panel = window.panel
    field = window.editor.findChild(QLineEdit, "field_N")
    assert field is not None
    before = _shown(window)
    field.setFocus()
    field.end(False)
    _type(field, "2")
    assert window.document.current_entry.declaration == "gemm(M=4096, N=40962, K=4096, dtype=fp16)"
    assert panel.derivation_due and _shown(window) == before
    panel.catch_up_derivation()
    assert _shown(window) == _written(window) != before


def test_other_changes_show_the_derivation_at_once(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    """An edit that is not a keystroke (the document's own call, an undo) and another operation selected while
    a derivation waits: written at once, and nothing left waiting."""
    window, line = typing_window(operations=2)
    panel = window.panel
    document = window.document

    document.edit_declaration(0, "gemm(M=2048, N=4096, K=4096, dtype=fp16)")
    assert not panel.derivation_due and _shown(window) == _written(window)

    line.setFocus()
    line.setCursorPosition(len("gemm(M=2048"))
    _type(line, "7")
    assert panel.derivation_due
    document.undo_stack.undo()  # the keystroke taken back: not typing
    assert not panel.derivation_due and _shown(window) == _written(window)

    line.setCursorPosition(len("gemm(M=2048"))
    _type(line, "7")
    assert panel.derivation_due
    document.select(1)  # another operation while the first one's derivation waits
    assert not panel.derivation_due
    assert _shown(window) == _written(window, document.operations[1])


def test_the_derivation_of_an_error_fixed_by_typing_is_written_once_the_typing_pauses(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    """Typed through a declaration that does not parse (the figures give way to the error) and back."""
    window, line = typing_window()
    panel = window.panel
    line.setCursorPosition(len("gemm(M=4096, N=4096, K=4096, dtype=fp16"))
    _type(line, "x")  # dtype=fp16x: no such type
    assert window.document.state(window.document.current_entry).error is not None
    QTest.keyClick(line, Qt.Key.Key_Backspace)
    QApplication.processEvents()
    assert panel.derivation_due
    panel.catch_up_derivation()
    assert window.document.current_entry.declaration == GEMM
    assert panel.derivation.isVisible() and _shown(window) == _written(window)


def test_copying_the_derivation_while_it_waits_writes_it_out_first(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    """Copy derivation right after a keystroke: the view shows what goes to the clipboard."""
    window, line = typing_window()
    panel = window.panel
    _type(line, "9")
    assert panel.derivation_due
    panel.copy_derivation()
    assert not panel.derivation_due
    assert _shown(window) == _written(window)
    copied = QApplication.clipboard().text()
    assert "40,969" in copied or "40969" in copied
    assert copied == window.document.state(window.document.current_entry).analysis.derivation_text()
