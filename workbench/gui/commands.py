"""Undo commands: every user edit of the document is one of these.

Each command keeps the old and the new value and calls the document's
`_apply_*` method in `redo()` and `undo()`. Typing is merged: consecutive
edits of one operation's declaration from the same place (the line, or one
form field) within a short pause undo as one step.
"""

from __future__ import annotations

import time
from typing import Protocol

from PySide6.QtGui import QUndoCommand

from workbench.model.devices import Rate
from workbench.documents.session import DeviceChoice, OperationEntry


class EditTarget(Protocol):
    """What the commands need of the document (gui/document.py's Document): its operations and the `_apply_*`
    methods that make each change. The document pushes the commands; they never import it."""

    @property
    def operations(self) -> list[OperationEntry]: ...

    def _apply_declaration(self, entry: OperationEntry, text: str) -> None: ...

    def _apply_insert(self, index: int, entry: OperationEntry) -> None: ...

    def _apply_remove(self, index: int) -> OperationEntry: ...

    def _apply_rename(self, entry: OperationEntry, name: str, automatic: bool = False) -> None: ...

    def _apply_move(self, index: int, to: int) -> None: ...

    def _apply_notes(self, entry: OperationEntry | None, text: str) -> None: ...

    def _apply_device(self, choice: DeviceChoice) -> None: ...

    def _apply_rate(self, path: str, rate: Rate | None) -> None: ...

    def _apply_setting(self, name: str, value: object) -> None: ...

MERGE_PAUSE_S = 1.5  # typing pauses longer than this start a new undo step
_EDIT_DECLARATION_ID = 1001
_EDIT_NOTES_ID = 1002


class EditDeclaration(QUndoCommand):
    """Change one operation's declaration text (from the line or from a form field)."""

    def __init__(self, document: EditTarget, entry: OperationEntry, old: str, new: str, source: str) -> None:
        super().__init__(f"Edit {entry.name}")
        self.document = document
        self.entry = entry
        self.old = old
        self.new = new
        self.source = source
        self.last_edit = time.monotonic()

    def id(self) -> int:
        return _EDIT_DECLARATION_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 (Qt's name)
        if not isinstance(other, EditDeclaration):
            return False
        if other.entry is not self.entry or other.source != self.source:
            return False
        if other.last_edit - self.last_edit > MERGE_PAUSE_S:
            return False
        self.new = other.new
        self.last_edit = other.last_edit
        self.setObsolete(self.new == self.old)
        return True

    def redo(self) -> None:
        self.document._apply_declaration(self.entry, self.new)

    def undo(self) -> None:
        self.document._apply_declaration(self.entry, self.old)


class EditNotes(QUndoCommand):
    """Change one operation's notes (entry) or the session's description (entry None).

    Typing merges like declaration edits; a ticked box (source "box:…") is always a step of its own.
    """

    def __init__(self, document: EditTarget, entry: OperationEntry | None, old: str, new: str, source: str) -> None:
        what = "description" if entry is None else f"notes of {entry.name}"
        super().__init__(f"Tick a box in the {what}" if source.startswith("box:") else f"Edit the {what}")
        self.document = document
        self.entry = entry
        self.old = old
        self.new = new
        self.source = source
        self.last_edit = time.monotonic()

    def id(self) -> int:
        return _EDIT_NOTES_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 (Qt's name)
        if not isinstance(other, EditNotes) or other.entry is not self.entry or other.source != self.source:
            return False
        if self.source.startswith("box:") or other.last_edit - self.last_edit > MERGE_PAUSE_S:
            return False
        self.new = other.new
        self.last_edit = other.last_edit
        self.setObsolete(self.new == self.old)
        return True

    def redo(self) -> None:
        self.document._apply_notes(self.entry, self.new)

    def undo(self) -> None:
        self.document._apply_notes(self.entry, self.old)


class InsertOperation(QUndoCommand):
    """Add (or duplicate) an operation at an index."""

    def __init__(self, document: EditTarget, index: int, entry: OperationEntry, text: str) -> None:
        super().__init__(text)
        self.document = document
        self.index = index
        self.entry = entry

    def redo(self) -> None:
        self.document._apply_insert(self.index, self.entry)

    def undo(self) -> None:
        self.document._apply_remove(self.index)


class RemoveOperation(QUndoCommand):
    """Remove an operation; undo puts the same entry (and its last analysis) back."""

    def __init__(self, document: EditTarget, index: int) -> None:
        super().__init__(f"Remove {document.operations[index].name}")
        self.document = document
        self.index = index
        self.entry: OperationEntry | None = None

    def redo(self) -> None:
        self.entry = self.document._apply_remove(self.index)

    def undo(self) -> None:
        assert self.entry is not None
        self.document._apply_insert(self.index, self.entry)


class RenameOperation(QUndoCommand):
    """Name an operation: old and new are (name, automatic); an automatic name follows the declaration."""

    def __init__(self, document: EditTarget, entry: OperationEntry, old: tuple[str, bool], new: tuple[str, bool]) -> None:
        what = "the automatic name" if new[1] else new[0]
        super().__init__(f"Rename {old[0]} to {what}")
        self.document = document
        self.entry = entry
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document._apply_rename(self.entry, *self.new)

    def undo(self) -> None:
        self.document._apply_rename(self.entry, *self.old)


class MoveOperation(QUndoCommand):
    def __init__(self, document: EditTarget, index: int, to: int) -> None:
        super().__init__(f"Move {document.operations[index].name}")
        self.document = document
        self.index = index
        self.to = to

    def redo(self) -> None:
        self.document._apply_move(self.index, self.to)

    def undo(self) -> None:
        self.document._apply_move(self.to, self.index)


class SetDevice(QUndoCommand):
    """Choose a device (with its overrides); also used to reset every entered rate at once."""

    def __init__(self, document: EditTarget, old: DeviceChoice, new: DeviceChoice, text: str = "") -> None:
        super().__init__(text or f"Choose device {new.key}")
        self.document = document
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document._apply_device(self.new)

    def undo(self) -> None:
        self.document._apply_device(self.old)


class SetRate(QUndoCommand):
    """Enter (or reset, with None) the rate of one instruction path or of memory."""

    def __init__(self, document: EditTarget, path: str, old: Rate | None, new: Rate | None) -> None:
        super().__init__(f"Reset {path} rate" if new is None else f"Enter {path} rate")
        self.document = document
        self.path = path
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document._apply_rate(self.path, self.new)

    def undo(self) -> None:
        self.document._apply_rate(self.path, self.old)


class SetSetting(QUndoCommand):
    """Change one analysis setting: convention, overlap, or decimal/binary units."""

    def __init__(self, document: EditTarget, name: str, old: object, new: object) -> None:
        super().__init__(f"Change {name}")
        self.document = document
        self.name = name
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document._apply_setting(self.name, self.new)

    def undo(self) -> None:
        self.document._apply_setting(self.name, self.old)
