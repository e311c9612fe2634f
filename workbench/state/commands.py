"""The undo commands: every user edit of the document is one of these.

Each command keeps the old and the new value and calls one of the document state's `apply_*` methods in
`redo()` and `undo()`. Typing is merged: consecutive edits of one operation's declaration (or notes, or the
step text) from the same place within a short pause undo as one step. When an edit happened is given to the
command (`when`, from the document state's clock), so the rule can be tested without waiting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from workbench.documents.session import DeviceChoice, OperationEntry, Session
from workbench.model.devices import Rate
from workbench.state.undo import Command


class DocumentState(Protocol):
    """What the commands need of the document state (workbench/state/document.py's DocumentState, which pushes
    them): its session and operations and the `apply_*` methods that make each change. Named here, not imported,
    so that the commands do not import the state that imports them."""

    session: Session

    @property
    def operations(self) -> list[OperationEntry]: ...

    def profile_position(self, record: Any) -> int: ...

    def apply_declaration(self, entry: OperationEntry, text: str) -> None: ...

    def apply_insert(self, index: int, entry: OperationEntry) -> None: ...

    def apply_remove(self, index: int) -> OperationEntry: ...

    def apply_rename(self, entry: OperationEntry, name: str, automatic: bool = False) -> None: ...

    def apply_move(self, index: int, to: int) -> None: ...

    def apply_notes(self, entry: OperationEntry | None, text: str) -> None: ...

    def apply_device(self, choice: DeviceChoice) -> None: ...

    def apply_rate(self, path: str, rate: Rate | None) -> None: ...

    def apply_setting(self, name: str, value: object) -> None: ...

    def apply_step_text(self, text: str | None) -> None: ...

    def apply_insert_run(self, index: int, run: dict[str, Any]) -> None: ...

    def apply_remove_run(self, index: int | None) -> None: ...

    def apply_insert_profile(self, index: int, record: Any) -> None: ...

    def apply_replace_profile(self, out: Any, into: Any | None) -> None: ...

MERGE_PAUSE_S = 1.5  # typing pauses longer than this start a new undo step
_EDIT_DECLARATION_ID = 1001
_EDIT_NOTES_ID = 1002
_EDIT_STEP_ID = 1301


def _within_pause(first: float, then: float) -> bool:
    return then - first <= MERGE_PAUSE_S


class _TypedText(Command):
    """A text edit that typing merges: edits of the same text from the same place (`same_place`), each within
    MERGE_PAUSE_S of the one before, undo as one step from the first old text to the newest; with
    `drops_unchanged`, a merged edit that ends where it began is dropped (obsolete)."""

    merge_id = 0
    drops_unchanged = True

    def __init__(self, text: str, document: DocumentState, old: Any, new: Any, when: float) -> None:
        super().__init__(text)
        self.document = document
        self.old = old
        self.new = new
        self.when = when

    def id(self) -> int:
        return self.merge_id

    def same_place(self, other: Any) -> bool:
        return True

    def merge_with(self, other: Command) -> bool:
        if type(other) is not type(self) or not self.same_place(other) or not _within_pause(self.when, other.when):
            return False
        self.new = other.new  # type: ignore[attr-defined]
        self.when = other.when  # type: ignore[attr-defined]
        if self.drops_unchanged:
            self.obsolete = self.new == self.old
        return True

    def redo(self) -> None:
        self.apply(self.new)

    def undo(self) -> None:
        self.apply(self.old)

    def apply(self, text: Any) -> None:
        raise NotImplementedError


class EditDeclaration(_TypedText):
    """Change one operation's declaration text (from the line or from a form field)."""

    merge_id = _EDIT_DECLARATION_ID

    def __init__(self, document: DocumentState, entry: OperationEntry, old: str, new: str, source: str, when: float) -> None:
        super().__init__(f"Edit {entry.name}", document, old, new, when)
        self.entry = entry
        self.source = source

    def same_place(self, other: "EditDeclaration") -> bool:
        return other.entry is self.entry and other.source == self.source

    def apply(self, text: str) -> None:
        self.document.apply_declaration(self.entry, text)


class EditNotes(_TypedText):
    """Change one operation's notes (entry) or the session's description (entry None).

    Typing merges like declaration edits; a ticked box (source "box:…") is always a step of its own.
    """

    merge_id = _EDIT_NOTES_ID

    def __init__(
        self, document: DocumentState, entry: OperationEntry | None, old: str, new: str, source: str, when: float
    ) -> None:
        what = "description" if entry is None else f"notes of {entry.name}"
        super().__init__(f"Tick a box in the {what}" if source.startswith("box:") else f"Edit the {what}", document, old, new, when)
        self.entry = entry
        self.source = source

    def same_place(self, other: "EditNotes") -> bool:
        return other.entry is self.entry and other.source == self.source and not self.source.startswith("box:")

    def apply(self, text: str) -> None:
        self.document.apply_notes(self.entry, text)


class EditStepText(_TypedText):
    """One edit of the session's step text (None: no step); typing without a pause undoes as one step."""

    merge_id = _EDIT_STEP_ID
    drops_unchanged = False  # a merged step edit stays on the stack even when its text is back where it began

    def __init__(self, document: DocumentState, old: str | None, new: str, when: float) -> None:
        super().__init__("Edit step", document, old, new, when)

    def apply(self, text: str | None) -> None:
        self.document.apply_step_text(text)


class InsertOperation(Command):
    """Add (or duplicate) an operation at an index."""

    def __init__(self, document: DocumentState, index: int, entry: OperationEntry, text: str) -> None:
        super().__init__(text)
        self.document = document
        self.index = index
        self.entry = entry

    def redo(self) -> None:
        self.document.apply_insert(self.index, self.entry)

    def undo(self) -> None:
        self.document.apply_remove(self.index)


class RemoveOperation(Command):
    """Remove an operation; undo puts the same entry (and its last analysis) back."""

    def __init__(self, document: DocumentState, index: int) -> None:
        super().__init__(f"Remove {document.operations[index].name}")
        self.document = document
        self.index = index
        self.entry: OperationEntry | None = None

    def redo(self) -> None:
        self.entry = self.document.apply_remove(self.index)

    def undo(self) -> None:
        assert self.entry is not None
        self.document.apply_insert(self.index, self.entry)


class RenameOperation(Command):
    """Name an operation: old and new are (name, automatic); an automatic name follows the declaration."""

    def __init__(
        self, document: DocumentState, entry: OperationEntry, old: tuple[str, bool], new: tuple[str, bool]
    ) -> None:
        what = "the automatic name" if new[1] else new[0]
        super().__init__(f"Rename {old[0]} to {what}")
        self.document = document
        self.entry = entry
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document.apply_rename(self.entry, *self.new)

    def undo(self) -> None:
        self.document.apply_rename(self.entry, *self.old)


class MoveOperation(Command):
    def __init__(self, document: DocumentState, index: int, to: int) -> None:
        super().__init__(f"Move {document.operations[index].name}")
        self.document = document
        self.index = index
        self.to = to

    def redo(self) -> None:
        self.document.apply_move(self.index, self.to)

    def undo(self) -> None:
        self.document.apply_move(self.to, self.index)


class SetDevice(Command):
    """Choose a device (with its overrides); also used to reset every entered rate, or store measured ones, at once."""

    def __init__(self, document: DocumentState, old: DeviceChoice, new: DeviceChoice, text: str = "") -> None:
        super().__init__(text or f"Choose device {new.key}")
        self.document = document
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document.apply_device(self.new)

    def undo(self) -> None:
        self.document.apply_device(self.old)


class SetRate(Command):
    """Enter (or reset, with None) the rate of one instruction path or of memory."""

    def __init__(self, document: DocumentState, path: str, old: Rate | None, new: Rate | None) -> None:
        super().__init__(f"Reset {path} rate" if new is None else f"Enter {path} rate")
        self.document = document
        self.path = path
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document.apply_rate(self.path, self.new)

    def undo(self) -> None:
        self.document.apply_rate(self.path, self.old)


class SetSetting(Command):
    """Change one analysis setting: convention, overlap, or decimal/binary units."""

    def __init__(self, document: DocumentState, name: str, old: object, new: object) -> None:
        super().__init__(f"Change {name}")
        self.document = document
        self.name = name
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document.apply_setting(self.name, self.new)

    def undo(self) -> None:
        self.document.apply_setting(self.name, self.old)


class AddRun(Command):
    """Store one finished run (its dict) in Session.runs; undo takes it out again."""

    def __init__(self, document: DocumentState, run: dict[str, Any], text: str) -> None:
        super().__init__(text)
        self.document = document
        self.run = run

    def redo(self) -> None:
        self.document.apply_insert_run(len(self.document.session.runs), self.run)

    def undo(self) -> None:
        runs = self.document.session.runs
        at = next((i for i in range(len(runs) - 1, -1, -1) if runs[i] is self.run), None)
        self.document.apply_remove_run(at)


class RemoveRun(Command):
    """Take one run out of Session.runs; undo puts the same dict back where it was."""

    def __init__(self, document: DocumentState, index: int) -> None:
        run = document.session.runs[index]
        described = run.get("declaration", f"run {index + 1}") if isinstance(run, Mapping) else f"run {index + 1}"
        super().__init__(f"Remove run of {described}")
        self.document = document
        self.index = index
        self.run = run

    def redo(self) -> None:
        self.document.apply_remove_run(self.index)

    def undo(self) -> None:
        self.document.apply_insert_run(self.index, self.run)


class AddProfile(Command):
    """Add one imported file's record to the session; undo removes the import."""

    def __init__(self, document: DocumentState, record: dict[str, Any], index: int | None = None) -> None:
        super().__init__(f"Import profile {record.get('source') or ''}".rstrip())
        self.document = document
        self.record = record
        self.index = len(document.session.profiles) if index is None else index

    def redo(self) -> None:
        self.document.apply_insert_profile(self.index, self.record)

    def undo(self) -> None:
        self.document.apply_replace_profile(self.record, None)


class ReplaceProfile(Command):
    """Put a new record (other matches) where an imported file's record was."""

    def __init__(self, document: DocumentState, old: Any, new: dict[str, Any]) -> None:
        super().__init__(f"Match kernels of {new.get('source') or 'a profile'}")
        self.document = document
        self.old = old
        self.new = new

    def redo(self) -> None:
        self.document.apply_replace_profile(self.old, self.new)

    def undo(self) -> None:
        self.document.apply_replace_profile(self.new, self.old)


class RemoveProfile(Command):
    """Remove an imported file's record; undo puts it back where it was."""

    def __init__(self, document: DocumentState, record: Any) -> None:
        source = record.get("source") if isinstance(record, dict) else None
        super().__init__(f"Remove profile {source or ''}".rstrip())
        self.document = document
        self.record = record
        self.index = document.profile_position(record)

    def redo(self) -> None:
        self.document.apply_replace_profile(self.record, None)

    def undo(self) -> None:
        self.document.apply_insert_profile(max(self.index, 0), self.record)
