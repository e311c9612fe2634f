"""The one Qt-side document: a DocumentState (workbench.state) whose events are Qt signals.

The session, the selection, the device, the analyses, the edits and their undo history are the
state's (`self.core`). This object gives views its events as Qt signals of the same names, forwards
the reading and the edits most views use, and shows the undo stack as Qt actions expect it
(`undo_stack`, gui/undo_stack.py). The few views that change the step text, runs or profiles, or put
a device in place whole, call the state (`core`) for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from workbench.documents.session import OperationEntry, Session
from workbench.gui.undo_stack import QtUndoStack
from workbench.model.devices import Device
from workbench.model.devices.nvml import Detection
from workbench.state import DocumentState, OperationState, new_session

__all__ = ["TYPING_PAUSE_MS", "Document", "OperationState", "new_session"]

# Views with a long text to rewrite on each keystroke into a declaration (the derivation) write it once the typing
# has paused this long (Document.typing); what the edit changes at a glance (figures, points) follows every keystroke.
TYPING_PAUSE_MS = 200


class Document(QObject):
    """The DocumentState `core` seen from Qt: its events as signals, its undo stack as `undo_stack`."""

    # One signal for each event of DocumentState, with the same name and arguments (their meaning is said there).
    operations_changed = Signal()
    declaration_changed = Signal(int)
    selection_changed = Signal(int)
    analysis_changed = Signal(int)
    device_changed = Signal()
    settings_changed = Signal()
    detection_changed = Signal()
    session_replaced = Signal()
    path_changed = Signal()
    profiles_changed = Signal()
    runs_changed = Signal()
    notes_changed = Signal(int)
    step_changed = Signal()

    def __init__(self, session: Session | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.core = DocumentState(session)
        for name, event in self.core.events().items():
            event.connect(getattr(self, name).emit)
        self.undo_stack = QtUndoStack(self.core.undo_stack, self)

    # ------------------------------------------------------------------ reading
    @property
    def session(self) -> Session:
        return self.core.session

    @property
    def path(self) -> str | None:
        return self.core.path

    @path.setter
    def path(self, path: str | None) -> None:
        self.core.path = path

    @property
    def current(self) -> int:
        return self.core.current

    @property
    def device(self) -> Device | None:
        return self.core.device

    @property
    def device_error(self) -> str:
        return self.core.device_error

    @property
    def detection(self) -> Detection | None:
        return self.core.detection

    @property
    def detected(self) -> dict[str, Device]:
        return self.core.detected

    @property
    def detected_facts(self) -> dict[str, dict[str, object]]:
        return self.core.detected_facts

    @property
    def typing(self) -> bool:
        return self.core.typing

    @property
    def level_method(self) -> str:
        return self.core.level_method

    @property
    def operations(self) -> list[OperationEntry]:
        return self.core.operations

    @property
    def current_entry(self) -> OperationEntry | None:
        return self.core.current_entry

    @property
    def binary(self) -> bool:
        return self.core.binary

    def state(self, entry: OperationEntry) -> OperationState:
        return self.core.state(entry)

    def index_of(self, entry: OperationEntry) -> int:
        return self.core.index_of(entry)

    def catalogue_key(self) -> str:
        return self.core.catalogue_key()

    def after_changes(self, callback: Callable[[], object]) -> None:
        self.core.after_changes(callback)

    # ------------------------------------------------------------------ changes (DocumentState's, which see)
    def replace_session(self, session: Session, path: str | None = None) -> None:
        self.core.replace_session(session, path)

    def append_from_file(self, runs: list[dict[str, Any]], appended: dict[str, list[Any]]) -> None:
        self.core.append_from_file(runs, appended)

    def take_from_file(self, merged: Session) -> None:
        self.core.take_from_file(merged)

    def set_path(self, path: str | None) -> None:
        self.core.set_path(path)

    def select(self, index: int) -> None:
        self.core.select(index)

    def set_detection(self, detection: Detection) -> None:
        self.core.set_detection(detection)

    def adopt_device(self, key: str) -> None:
        self.core.adopt_device(key)

    def set_level_method(self, method: str) -> None:
        self.core.set_level_method(method)

    def edit_declaration(self, index: int, text: str, source: str = "line", typed: bool = False) -> None:
        self.core.edit_declaration(index, text, source, typed)

    def add_operation(self, entry: OperationEntry | None = None, index: int | None = None) -> None:
        self.core.add_operation(entry, index)

    def duplicate_operation(self, index: int) -> None:
        self.core.duplicate_operation(index)

    def remove_operation(self, index: int) -> None:
        self.core.remove_operation(index)

    def rename_operation(self, index: int, name: str) -> None:
        self.core.rename_operation(index, name)

    def move_operation(self, index: int, to: int) -> None:
        self.core.move_operation(index, to)

    def set_device(self, key: str) -> None:
        self.core.set_device(key)

    def set_rate(self, path: str, text: str) -> None:
        self.core.set_rate(path, text)

    def reset_rate(self, path: str) -> None:
        self.core.reset_rate(path)

    def reset_rates(self) -> None:
        self.core.reset_rates()

    def set_notes(self, index: int, text: str, source: str = "typing") -> None:
        self.core.set_notes(index, text, source)

    def set_checked(self, index: int, box: int, checked: bool) -> None:
        self.core.set_checked(index, box, checked)

    def set_setting(self, name: str, value: object) -> None:
        self.core.set_setting(name, value)
