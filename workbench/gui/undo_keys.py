"""One undo history: Undo and Redo in a text field take the document's steps, not the field's keystrokes.

A QLineEdit or QPlainTextEdit keeps an undo history of its own and answers Ctrl+Z before the window's
Undo action can. A field that shows part of the document (the declaration line, a form field, the step
text, the notes) is rewritten by every document change, so its own history mixes keystrokes with those
rewrites and undoing it leaves texts the document never held. `use_document_undo` sends the standard
Undo and Redo keys (and the context menu's Undo and Redo) of such a field to the document's undo stack.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QAction, QContextMenuEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLineEdit, QMenu, QPlainTextEdit

from workbench.gui.undo_stack import QtUndoStack

_STEPS = (("undo", QKeySequence.StandardKey.Undo), ("redo", QKeySequence.StandardKey.Redo))


def _step_of(event: QKeyEvent) -> str | None:
    for step, key in _STEPS:
        if event.matches(key):
            return step
    return None


class _DocumentUndoKeys(QObject):
    """The event filter of one field: its Undo and Redo keys and menu entries act on `stack`."""

    def __init__(self, field: QLineEdit | QPlainTextEdit, stack: QtUndoStack, before: Callable[[], None] | None) -> None:
        super().__init__(field)
        self.setObjectName("documentUndoKeys")
        self.field = field
        self.stack = stack
        self.before = before

    def take(self, step: str) -> None:
        if self.before is not None:
            self.before()  # typing not yet on the stack goes there first, so it is what is undone
        if step == "undo":
            self.stack.undo()
        else:
            self.stack.redo()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(event, QKeyEvent):
            step = _step_of(event)
            if step is None:
                return False
            if kind == QEvent.Type.ShortcutOverride:
                event.accept()  # the key press comes to this filter rather than to a window shortcut
            else:
                self.take(step)
            return True
        if kind == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            self._context_menu(event)
            return True
        return False

    def _context_menu(self, event: QContextMenuEvent) -> None:
        menu = self.menu(event.pos())
        menu.exec(event.globalPos())
        menu.deleteLater()

    def menu(self, pos: QPoint) -> QMenu:
        """The field's own context menu with the document's Undo and Redo in place of the field's."""
        if isinstance(self.field, QPlainTextEdit):
            menu = self.field.createStandardContextMenu(pos)
        else:
            menu = self.field.createStandardContextMenu()
        for own in menu.actions():
            step = {"edit-undo": "undo", "edit-redo": "redo"}.get(own.objectName())
            if step is None:
                continue
            action = QAction(own.text(), menu)
            action.setObjectName(own.objectName())
            action.setShortcut(own.shortcut())
            action.setEnabled(self.stack.canUndo() if step == "undo" else self.stack.canRedo())
            action.triggered.connect(lambda _=False, step=step: self.take(step))
            menu.insertAction(own, action)
            menu.removeAction(own)
        return menu


def use_document_undo(field: QLineEdit | QPlainTextEdit, stack: QtUndoStack, before: Callable[[], None] | None = None) -> None:
    """Make Undo and Redo in `field` undo and redo the document's steps; `before` runs first (a pending commit)."""
    keys = _DocumentUndoKeys(field, stack, before)
    field.installEventFilter(keys)
    if isinstance(field, QPlainTextEdit):
        field.setUndoRedoEnabled(False)  # no history of its own to fall back on
        field.viewport().installEventFilter(keys)  # a text edit's context menu event comes to its viewport
