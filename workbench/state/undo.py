"""The undo history without Qt: commands that know how to do and undo one change, and the stack that holds them.

The rules are QUndoStack's (Qt's), so Undo and Redo behave as in any Qt application:

- `push` does the command at once and drops every step that had been undone (they can no longer be redone);
- a command with an `id()` other than -1 may absorb the next one of the same id (`merge_with`: typing
  within a pause undoes as one step), except into the step the history was marked clean at, so a keystroke
  after a save is a new step;
- a command that becomes `obsolete` (typing that ended where it began) leaves the stack;
- the clean index is where the session matched its file: `set_clean` marks it, `reset_clean` forgets it
  (unsaved work that no undo can reach), and undoing or redoing back to it makes the stack clean again.
"""

from __future__ import annotations

from workbench.state.events import Event

NO_MERGE = -1  # a command's id() when it never merges


class Command:
    """One undoable change. Subclasses implement `redo` and `undo`; typing-like ones also `id` and `merge_with`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.obsolete = False  # set (by merge_with, redo or undo) when the command no longer changes anything

    def id(self) -> int:
        """Commands with the same id (not NO_MERGE) may merge."""
        return NO_MERGE

    def merge_with(self, other: "Command") -> bool:
        """Absorb `other` (pushed right after this one, and already done); True when it did."""
        return False

    def redo(self) -> None:
        raise NotImplementedError

    def undo(self) -> None:
        raise NotImplementedError


class UndoStack:
    """Commands done and undone, with the index of the next one to redo and the clean index.

    `index_changed(index)` is emitted after every push (a merge included: the step it extends has a new text),
    undo, redo and clear; `clean_changed(clean)` when the stack becomes clean or stops being so.
    """

    def __init__(self) -> None:
        self._commands: list[Command] = []
        self._index = 0
        self._clean_index: int | None = 0  # None: no index is clean (the file's state was dropped or is unknown)
        self.index_changed = Event("index_changed")
        self.clean_changed = Event("clean_changed")

    # ------------------------------------------------------------------ reading
    @property
    def index(self) -> int:
        """How many commands are done: the next `redo` does command `index`, the next `undo` command `index - 1`."""
        return self._index

    @property
    def clean_index(self) -> int | None:
        return self._clean_index

    def count(self) -> int:
        return len(self._commands)

    def command(self, index: int) -> Command:
        return self._commands[index]

    def can_undo(self) -> bool:
        return self._index > 0

    def can_redo(self) -> bool:
        return self._index < len(self._commands)

    def undo_text(self) -> str:
        return self._commands[self._index - 1].text if self._index > 0 else ""

    def redo_text(self) -> str:
        return self._commands[self._index].text if self._index < len(self._commands) else ""

    def is_clean(self) -> bool:
        return self._clean_index == self._index

    # ------------------------------------------------------------------ changing
    def push(self, command: Command) -> None:
        """Do `command` and make it the newest step (or merge it into the newest one)."""
        if not command.obsolete:
            command.redo()
        top = self._commands[self._index - 1] if self._index > 0 else None
        del self._commands[self._index :]
        if self._clean_index is not None and self._clean_index > self._index:
            self._clean_index = None  # the clean state was among the steps just dropped
        mergeable = (
            top is not None
            and top.id() != NO_MERGE
            and top.id() == command.id()
            and self._index != self._clean_index
        )
        if mergeable and top is not None and top.merge_with(command):
            if top.obsolete:
                self._commands.pop()
                self._set_index(self._index - 1)
            else:
                self.index_changed.emit(self._index)
        elif not command.obsolete:
            self._commands.append(command)
            self._set_index(self._index + 1)

    def undo(self) -> None:
        if self._index == 0:
            return
        at = self._index - 1
        command = self._commands[at]
        if not command.obsolete:
            command.undo()
        if command.obsolete:
            self._drop(at)
        self._set_index(at)

    def redo(self) -> None:
        if self._index == len(self._commands):
            return
        at = self._index
        command = self._commands[at]
        if not command.obsolete:
            command.redo()
        if command.obsolete:
            self._drop(at)
        else:
            self._set_index(at + 1)

    def set_clean(self) -> None:
        """The session matches its file now (it was just saved or opened)."""
        self._set_index(self._index, clean=True)

    def reset_clean(self) -> None:
        """No state in the history matches the file: the stack stays unclean until the next `set_clean`."""
        was_clean = self.is_clean()
        self._clean_index = None
        if was_clean:
            self.clean_changed.emit(False)

    def clear(self) -> None:
        """Forget every step; the empty stack is clean. (An empty stack keeps its clean state as it is.)"""
        if not self._commands:
            return
        was_clean = self.is_clean()
        self._commands.clear()
        self._index = 0
        self._clean_index = 0
        self.index_changed.emit(0)
        if not was_clean:
            self.clean_changed.emit(True)

    # ------------------------------------------------------------------ internals
    def _drop(self, at: int) -> None:
        """Take out an obsolete command at `at`; a clean state past it can no longer be reached."""
        del self._commands[at]
        if self._clean_index is not None and self._clean_index > at:
            self.reset_clean()

    def _set_index(self, index: int, clean: bool = False) -> None:
        was_clean = self.is_clean()
        changed = index != self._index
        self._index = index
        if clean:
            self._clean_index = index
        if changed:
            self.index_changed.emit(index)
        is_clean = self.is_clean()
        if is_clean != was_clean:
            self.clean_changed.emit(is_clean)
