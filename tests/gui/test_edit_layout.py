"""A keystroke redraws what it changed and lays out no more than that: not the main window, not its docks.

Speed itself is benchmarks/bench_gui.py's; these tests count the work a keystroke asks of Qt, so a change
that brings a whole-window layout back on every keystroke fails here whatever the machine's speed.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QToolBar, QToolButton



class _Events(QObject):
    """Counts the events of one type that reach the watched objects."""

    def __init__(self, kind: QEvent.Type) -> None:
        super().__init__()
        self.kind = kind
        self.seen: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == self.kind:
            self.seen.append(watched.objectName() or type(watched).__name__)
        return False


def _type(qtbot, line, keys: int = 4) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QApplication

    for index in range(keys):
        qtbot.keyClick(line, Qt.Key.Key_1 if index % 2 == 0 else Qt.Key.Key_Backspace)
        QApplication.processEvents()


def test_a_keystroke_does_not_lay_the_main_window_out(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """Each keystroke renames the operation (its automatic name), changes the undo step's text and the
    figures; none of that may reach the main window's layout (which sets every dock's geometry again and
    repaints the window), in normal or presentation mode."""
    window, line = typing_window(operations=5)
    _type(qtbot, line, 2)  # the first edits may settle sizes (a longer name, the undo step appearing)
    for presentation in (False, True):
        window.set_presentation(presentation)
        qtbot.wait(20)
        line.setFocus()
        line.setCursorPosition(len("gemm(M=4096"))
        _type(qtbot, line, 2)
        requests = _Events(QEvent.Type.LayoutRequest)
        window.installEventFilter(requests)
        _type(qtbot, line, 6)
        window.removeEventFilter(requests)
        assert requests.seen == [], f"presentation={presentation}: the main window was laid out {len(requests.seen)}× in 6 keystrokes"
    window.set_presentation(False)
    assert window.document.state(window.document.current_entry).error is None
    window.close()
    window.wait_for_workers()


def test_undo_enabled_and_disabled_by_typing_lays_nothing_out(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """Typing a digit and taking it out again from the saved text enables Undo and disables it again on every
    keystroke; the button follows, and neither the tool bar nor the main window is laid out again."""
    window, line = typing_window()
    window.wait_for_workers()  # detection done: its answer lays the window out once, unrelated to typing
    window.document.undo_stack.clear()
    _type(qtbot, line, 2)  # a digit typed and taken out: back at the cleared stack, Undo disabled
    undo = window.actions["undo"]
    assert not undo.isEnabled()
    button = next(b for b in window.findChildren(QToolButton) if b.property("step") == "undo")
    line.setFocus()
    line.setCursorPosition(len("gemm(M=4096"))
    bar = window.findChild(QToolBar, "mainToolbar")
    requests = _Events(QEvent.Type.LayoutRequest)
    window.installEventFilter(requests)
    bar.installEventFilter(requests)
    states = []
    for index in range(6):
        qtbot.keyClick(line, Qt.Key.Key_1 if index % 2 == 0 else Qt.Key.Key_Backspace)
        qtbot.wait(5)
        states.append((undo.isEnabled(), button.isEnabled()))
    window.removeEventFilter(requests)
    bar.removeEventFilter(requests)
    assert states == [(True, True), (False, False)] * 3
    assert requests.seen == [], f"laid out {len(requests.seen)}× in 6 keystrokes"
    window.close()
    window.wait_for_workers()


def test_the_undo_button_names_the_step_without_the_action_changing(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """The undo button's tooltip says what it undoes, read when asked; the action itself does not change per
    keystroke (a changed action lays the tool bar and the main window out again)."""
    window, line = typing_window()
    undo = window.actions["undo"]
    _type(qtbot, line, 1)
    changed: list[int] = []
    undo.changed.connect(lambda: changed.append(1))
    _type(qtbot, line, 5)
    assert changed == []
    stack = window.document.undo_stack
    assert stack.undoText().startswith("Edit GEMM")  # the step names the operation (as it was named when typing began)
    assert window._step_tips.text("undo") == f"Undo {stack.undoText()}"
    assert window._step_tips.text("redo") == "Redo"
    window.document.undo_stack.undo()
    assert window._step_tips.text("redo").startswith("Redo Edit ")
    window.close()
    window.wait_for_workers()


def test_level_points_are_set_only_when_they_change(qtbot, typing_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The hierarchical roofline's points at the further levels: a refresh that moves none sets none (and makes
    no pens); hovering still names the operation."""
    window, _ = typing_window(operations=4)
    roofline = window.roofline
    roofline.refresh()
    assert roofline._level_tips, "the device shows further levels (L2, shared memory): their points are drawn"
    calls: list[int] = []
    original = roofline.level_points.setData
    monkeypatch.setattr(roofline.level_points, "setData", lambda *a, **k: (calls.append(1), original(*a, **k)))
    roofline.refresh()
    assert calls == []
    window.document.edit_declaration(0, "gemm(M=64, N=64, K=64, dtype=fp16)")
    roofline.refresh()
    assert calls, "a moved operation moves its level points"
    row, point = roofline._level_tips[0]
    assert roofline._level_tip(row, point).startswith(window.document.operations[row].name)
    window.close()
    window.wait_for_workers()


def test_the_derivation_is_retexted_in_place(qtbot, typing_window, monkeypatch, long_pause) -> None:  # type: ignore[no-untyped-def]
    """A keystroke replaces the changed figures of the derivation in place (no setHtml: no whole relayout, no
    scroll bar hiding and showing); what it shows is what setHtml would have shown. Another kind of operation
    (another shape of derivation) is set afresh."""
    from PySide6.QtWidgets import QTextBrowser

    from workbench.gui.derivation_view import derivation_html

    window, line = typing_window()
    panel = window.panel
    for declaration in ("add(n=2**24, dtype=fp32)", "gemm(M=4096, N=4096, K=4096, dtype=fp16)"):  # set afresh twice:
        window.document.edit_declaration(0, declaration)  # the document's own numbering of its lists has moved on
        panel.refresh()
    line.setCursorPosition(len("gemm(M=4096"))
    set_afresh: list[str] = []
    original = panel.derivation.setHtml
    monkeypatch.setattr(panel.derivation, "setHtml", lambda html: (set_afresh.append(html), original(html)))

    def shown_as_set_afresh() -> bool:
        reference = QTextBrowser()
        reference.setFont(panel.derivation.font())
        reference.setHtml(derivation_html(window.document.state(window.document.current_entry).analysis))
        return panel.derivation.document().toHtml() == reference.document().toHtml()

    _type(qtbot, line, 5)
    assert "40,961" not in panel.derivation.toPlainText(), "the derivation waits for the typing to pause"
    panel.catch_up_derivation()  # the typing pauses
    assert set_afresh == []
    assert "40,961" in panel.derivation.toPlainText()
    assert shown_as_set_afresh()
    window.document.edit_declaration(0, "add(n=2**24, dtype=fp32)")
    panel.refresh()
    assert len(set_afresh) == 1 and shown_as_set_afresh()
    window.close()
    window.wait_for_workers()


def test_the_figures_column_keeps_its_width_while_figures_change(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """The figures' column is as wide as a wide figure: 4096 ↔ 40961 changes every figure's width, and the
    column (so the details beside it, their wrapping, and the derivation below) may not move with it: each
    move lays out and repaints the panel. At larger text too."""
    from PySide6.QtWidgets import QApplication

    window, line = typing_window()
    panel = window.panel
    for points in (10.0, 16.0):
        window.set_font_points(points)
        line.setFocus()
        line.setCursorPosition(len("gemm(M=4096"))
        for key in (Qt.Key.Key_1, Qt.Key.Key_Backspace) * 2:  # M=40961, M=4096, …
            qtbot.keyClick(line, key)
            QApplication.processEvents()
            for label in panel.values.values():
                assert label.sizeHint().width() <= label.minimumWidth(), (points, label.text())
        assert "40961" not in line.text()
    window.close()
    window.wait_for_workers()


def test_a_keystroke_moves_and_resizes_nothing_in_the_notes_dock_or_around_the_docks(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """Typing changes texts (names, figures) in widgets that stay where they are: nothing in the Notes dock
    behind the Analysis tab moves or resizes (Qt keeps a tabbed dock 'visible' off-screen, and its title, which
    follows the operation's name, laid the dock out on every key), nor do the docks, the tabs or the editor."""
    from PySide6.QtWidgets import QWidget

    window, line = typing_window(operations=5)
    _type(qtbot, line, 2)
    watched = {window.notes_dock, *window.notes_dock.findChildren(QWidget), window.panel_dock, window.operations_dock,
               window.device_dock, window.centralWidget(), window.tabs, window.editor}
    moves = _Events(QEvent.Type.Move)
    resizes = _Events(QEvent.Type.Resize)
    for widget in watched:
        widget.installEventFilter(moves)
        widget.installEventFilter(resizes)
    _type(qtbot, line, 6)
    for widget in watched:
        widget.removeEventFilter(moves)
        widget.removeEventFilter(resizes)
    assert moves.seen == [] and resizes.seen == [], (moves.seen[:10], resizes.seen[:10])
    window.close()
    window.wait_for_workers()
