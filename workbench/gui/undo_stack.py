"""The document's undo stack (workbench.state.undo.UndoStack) as the window uses it: QUndoStack's names and
signals, so actions, the title's modified flag and the autosave connect to it as to a QUndoStack."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from workbench.state.undo import Command, UndoStack


class QtUndoStack(QObject):
    """Signals for a plain UndoStack, and its calls under Qt's names. The history lives in `stack` only."""

    indexChanged = Signal(int)  # noqa: N815 (Qt's names, as QUndoStack's)
    cleanChanged = Signal(bool)  # noqa: N815
    canUndoChanged = Signal(bool)  # noqa: N815
    canRedoChanged = Signal(bool)  # noqa: N815
    undoTextChanged = Signal(str)  # noqa: N815
    redoTextChanged = Signal(str)  # noqa: N815

    def __init__(self, stack: UndoStack, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.stack = stack
        stack.index_changed.connect(self._index_changed)
        stack.clean_changed.connect(self.cleanChanged.emit)

    def _index_changed(self, index: int) -> None:
        # As QUndoStack: every change of the history says all of these (a merged keystroke renames the step).
        self.indexChanged.emit(index)
        self.canUndoChanged.emit(self.stack.can_undo())
        self.undoTextChanged.emit(self.stack.undo_text())
        self.canRedoChanged.emit(self.stack.can_redo())
        self.redoTextChanged.emit(self.stack.redo_text())

    def push(self, command: Command) -> None:
        self.stack.push(command)

    def undo(self) -> None:
        self.stack.undo()

    def redo(self) -> None:
        self.stack.redo()

    def clear(self) -> None:
        self.stack.clear()

    def setClean(self) -> None:  # noqa: N802
        self.stack.set_clean()

    def resetClean(self) -> None:  # noqa: N802
        self.stack.reset_clean()

    def isClean(self) -> bool:  # noqa: N802
        return self.stack.is_clean()

    def canUndo(self) -> bool:  # noqa: N802
        return self.stack.can_undo()

    def canRedo(self) -> bool:  # noqa: N802
        return self.stack.can_redo()

    def undoText(self) -> str:  # noqa: N802
        return self.stack.undo_text()

    def redoText(self) -> str:  # noqa: N802
        return self.stack.redo_text()

    def count(self) -> int:
        return self.stack.count()

    def index(self) -> int:
        return self.stack.index
