"""One undo history: Ctrl+Z and Ctrl+Shift+Z in a text field undo and redo the document's steps.

For each kind of field that shows part of the document (the declaration line, a form field, the step text,
the notes) the test makes N edits by typing, then N undos and N redos with the keys, the focus in that field,
and checks after every step that the document holds the state it held at that point of the edits, and that the
field shows it. A field's own keystroke history would leave texts the document never held (M=409 after undoing
M=4096 → 4091), and its redo would never reach the last edit.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit

EDITS = 6
DIGITS = (Qt.Key.Key_1, Qt.Key.Key_2, Qt.Key.Key_3, Qt.Key.Key_4, Qt.Key.Key_5, Qt.Key.Key_7)
STEP = "a = add(n=4, dtype=fp32)\nb = scale(n=4, dtype=fp32) after a"


@pytest.fixture
def every_keystroke_a_step(monkeypatch):  # type: ignore[no-untyped-def]
    """Each keystroke its own undo step (typing within a pause otherwise merges into one)."""
    from workbench.state import commands

    monkeypatch.setattr(commands, "MERGE_PAUSE_S", -1.0)


def _key(field: QLineEdit | QPlainTextEdit, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(field, key, modifiers)
    QApplication.processEvents()


def _shown(field: QLineEdit | QPlainTextEdit) -> str:
    return field.text() if isinstance(field, QLineEdit) else field.toPlainText()


def _to_end(field: QLineEdit | QPlainTextEdit) -> None:
    if isinstance(field, QLineEdit):
        field.end(False)
    else:
        cursor = field.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        field.setTextCursor(cursor)


def _undo_and_redo_walk_the_history(
    field: QLineEdit | QPlainTextEdit,
    state: Callable[[], str],
    shown_for: Callable[[str], str],
    type_one: Callable[[int], None],
    after_keystroke: Callable[[], None] = lambda: None,
) -> None:
    stack = field.window().document.undo_stack
    field.setFocus()
    assert field.hasFocus()
    history = [state()]
    start = stack.index()
    for edit in range(EDITS):
        _to_end(field)
        type_one(edit)
        after_keystroke()
        history.append(state())
    assert len(set(history)) == EDITS + 1, history
    assert stack.index() == start + EDITS, "each edit its own undo step"
    for back in range(1, EDITS + 1):
        _key(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert state() == history[EDITS - back], (back, state())
        assert _shown(field) == shown_for(history[EDITS - back])
        assert stack.index() == start + EDITS - back, "an undo step, not a new edit"
    _key(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # nothing left to undo: nothing changes
    assert state() == history[0] and _shown(field) == shown_for(history[0])
    for forward in range(1, EDITS + 1):
        _key(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        assert state() == history[forward], (forward, state())
        assert _shown(field) == shown_for(history[forward])
        assert stack.index() == start + forward


def test_the_declaration_line(window, qtbot, every_keystroke_a_step) -> None:  # type: ignore[no-untyped-def]
    line = window.editor.line
    document = window.document
    def type_one(edit: int) -> None:
        end_of_m = line.text().index(",")
        line.setSelection(end_of_m - 1, 1)  # M's last digit, typed over: 4096 → 4091 → 4092 → …
        _key(line, DIGITS[edit % len(DIGITS)])

    _undo_and_redo_walk_the_history(line, lambda: document.current_entry.declaration, lambda text: text, type_one)


def test_a_form_field(window, qtbot, every_keystroke_a_step) -> None:  # type: ignore[no-untyped-def]
    field = window.editor.findChild(QLineEdit, "field_K")
    assert field is not None and field.isVisible()
    document = window.document

    def value_of_k(declaration: str) -> str:
        return declaration.split("K=")[1].split(",")[0]

    def type_one(edit: int) -> None:
        field.setSelection(len(field.text()) - 1, 1)  # K's last digit, typed over
        _key(field, DIGITS[edit % len(DIGITS)])

    _undo_and_redo_walk_the_history(field, lambda: document.current_entry.declaration, value_of_k, type_one)


def _step_written(window, qtbot):  # type: ignore[no-untyped-def]
    """The Step timeline tab with STEP written, its history starting there."""
    view = window.timeline
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(view.isVisible)
    view.editor.setPlainText(STEP)
    view._commit_pending()
    window.document.undo_stack.clear()
    assert view.step_text() == STEP
    return view


def test_the_step_text(window, qtbot, every_keystroke_a_step) -> None:  # type: ignore[no-untyped-def]
    view = _step_written(window, qtbot)

    def type_one(edit: int) -> None:
        cursor = view.editor.textCursor()
        cursor.setPosition(view.editor.toPlainText().index("n=4") + 3)  # the first operation's size grows a digit
        view.editor.setTextCursor(cursor)
        _key(view.editor, DIGITS[edit % len(DIGITS)])

    _undo_and_redo_walk_the_history(
        view.editor, lambda: view.step_text() or "", lambda text: text, type_one, after_keystroke=view._commit_pending
    )


def test_undo_takes_the_step_text_typed_before_its_pause(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Typing the step waits for a pause before it becomes an undo step; Ctrl+Z before the pause undoes it."""
    view = _step_written(window, qtbot)
    view.editor.setFocus()
    _to_end(view.editor)
    _key(view.editor, Qt.Key.Key_X)
    assert view.step_text() == STEP  # still waiting for the pause
    _key(view.editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert view.step_text() == STEP and view.editor.toPlainText() == STEP
    _key(view.editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert view.step_text() == STEP + "x"


def test_the_notes(window, qtbot, every_keystroke_a_step) -> None:  # type: ignore[no-untyped-def]
    window.notes_dock.show()
    window.notes_dock.raise_()
    note = window.notes_panel.notes
    note.edit_button.setChecked(True)
    qtbot.waitUntil(lambda: note.source.isVisible())
    document = window.document
    letters = [Qt.Key.Key_A, Qt.Key.Key_B, Qt.Key.Key_C]
    _undo_and_redo_walk_the_history(
        note.source, lambda: document.current_entry.notes, lambda text: text, lambda edit: _key(note.source, letters[edit % 3])
    )


def test_the_context_menu_offers_the_documents_undo(window, qtbot, every_keystroke_a_step) -> None:  # type: ignore[no-untyped-def]
    """The line's context menu has Undo and Redo enabled as the document's history allows, and its Undo undoes
    the document's last step."""
    from PySide6.QtCore import QObject, QPoint

    line = window.editor.line
    document = window.document
    before = document.current_entry.declaration
    line.setFocus()
    line.setCursorPosition(line.text().index(","))
    _key(line, Qt.Key.Key_7)
    assert document.current_entry.declaration != before
    keys = line.findChild(QObject, "documentUndoKeys")
    menu = keys.menu(QPoint(5, 5))
    actions = {action.objectName(): action for action in menu.actions()}
    assert actions["edit-undo"].isEnabled() and not actions["edit-redo"].isEnabled()
    actions["edit-undo"].trigger()
    assert document.current_entry.declaration == before and line.text() == before
    assert keys.menu(QPoint(5, 5)).actions()[1].objectName() == "edit-redo"
