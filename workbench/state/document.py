"""The document without Qt: the Session, its undo stack, the selection, the device and the analyses.

Views observe the document through its events (`Event`, one per kind of change) and never keep their own copies
of session state. Every user edit is a command pushed on the undo stack (`workbench.state.commands`); the
commands call the `apply_*` methods, which change the Session, recompute what the change affects (synchronously:
`analyze()` takes well under a millisecond) and emit the events. The window's `Document` (gui/document.py) turns
these events into Qt signals.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from workbench.documents.session import DeviceChoice, OperationEntry, Session, StepEntry
from workbench.errors import DeviceError, WorkbenchError
from workbench.model.analysis import Analysis, analyze, as_rate
from workbench.model.devices import Device, Rate
from workbench.model.devices.nvml import OK, Detection, device_for
from workbench.model.naming import automatic_name
from workbench.state import commands
from workbench.state.events import Event
from workbench.state.undo import Command, UndoStack

NEW_DECLARATION = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
LEVEL_METHODS = ("ncu", "nersc")


@dataclass
class OperationState:
    """What the document knows about one operation beyond its text.

    `analysis` is the last valid analysis; `error` is the fault of the current
    text (None when it is valid). With both set, the analysis on screen is stale.
    `notice` explains missing bounds (a device without the needed rate).
    """

    analysis: Analysis | None = None
    error: WorkbenchError | None = None
    notice: str = ""

    @property
    def stale(self) -> bool:
        return self.error is not None and self.analysis is not None


class OperationStates:
    """Each operation's OperationState, found by the entry itself and held only as long as the entry lives.

    Entries are mutable dataclasses (equal when their fields are, so unhashable), and two entries with the same
    text are still two operations: the key is the entry's identity. The entry is held weakly, and its state is
    dropped when it is freed, so a later entry can never find a freed one's state under a reused id. An entry a
    command holds (a removed operation, for its undo) keeps its state, and undo puts back its last analysis.
    """

    def __init__(self) -> None:
        self._states: dict[int, tuple[weakref.ref[OperationEntry], OperationState]] = {}

    def get(self, entry: OperationEntry) -> OperationState:
        """The state of `entry`, created on first use (views ask often: no state is built when one exists)."""
        found = self._states.get(id(entry))
        if found is not None:
            return found[1]
        key = id(entry)
        state = OperationState()
        self._states[key] = (weakref.ref(entry, functools.partial(_forget, weakref.ref(self), key)), state)
        return state

    def __len__(self) -> int:
        return len(self._states)


def _forget(owner: weakref.ref[OperationStates], key: int, freed: weakref.ref[OperationEntry]) -> None:
    """An entry was freed: drop its state (unless the id already names a newer entry's, or the table is gone)."""
    states = owner()
    if states is None:
        return
    found = states._states.get(key)
    if found is not None and found[0] is freed:
        del states._states[key]


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _one_change(method: _Method) -> _Method:
    """Mark a DocumentState method as one change: the views it touches redraw once, after all its events.

    A keystroke can emit analysis_changed, operations_changed, declaration_changed and
    selection_changed; a view that redraws on each would redraw up to four times per edit.
    Views ask `after_changes(refresh)` instead, and the refresh runs once when the outermost
    change returns (see `DocumentState.after_changes`).
    """

    @functools.wraps(method)
    def wrapper(self: "DocumentState", *args: Any, **kwargs: Any) -> Any:
        self._change_depth += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            self._change_depth -= 1
            if self._change_depth == 0:
                self._run_pending()

    return wrapper  # type: ignore[return-value]


def new_session() -> Session:
    """The session a fresh window starts with: one GEMM on the default device."""
    return Session(operations=[OperationEntry.automatic(NEW_DECLARATION)])


class DocumentState:
    """Owns the Session, the UndoStack, the selected operation, the analyses and the current Device.

    `clock` gives the time of each edit (seconds, monotonic): consecutive edits within
    `commands.MERGE_PAUSE_S` of it merge into one undo step.
    """

    def __init__(self, session: Session | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.operations_changed = Event("operations_changed")  # the list itself: added, removed, renamed, moved, replaced
        self.declaration_changed = Event("declaration_changed")  # (index) one operation's declaration text
        self.selection_changed = Event("selection_changed")  # (index) the selected index, -1 for none
        self.analysis_changed = Event("analysis_changed")  # (index) one operation's analysis, or -1 for all of them
        self.device_changed = Event("device_changed")  # device choice, rate overrides, or the detected GPUs
        self.settings_changed = Event("settings_changed")  # convention, overlap, decimal/binary, level method
        self.detection_changed = Event("detection_changed")  # NVML detection finished (or restarted)
        self.session_replaced = Event("session_replaced")  # a new, opened or example session
        self.path_changed = Event("path_changed")  # the file the session belongs to
        self.profiles_changed = Event("profiles_changed")  # imported profiler records added, re-matched or removed
        self.runs_changed = Event("runs_changed")  # measurement runs added or removed
        self.notes_changed = Event("notes_changed")  # (index) one operation's notes, or -1 for the session's description
        self.step_changed = Event("step_changed")  # the session's step text

        self.clock = clock
        self.undo_stack = UndoStack()
        self.session: Session = new_session()
        self.path: str | None = None
        self.current = -1
        self.device: Device | None = None
        self.device_error = ""
        self.detection: Detection | None = None
        self.detected: dict[str, Device] = {}
        self.detected_facts: dict[str, dict[str, object]] = {}  # nvml-N -> DetectedGPU.to_dict()
        self._states = OperationStates()
        self._change_depth = 0  # how many `_one_change` methods are running (they nest)
        self._pending: dict[Callable[[], object], None] = {}  # callbacks due when the change ends, in order, once each
        # While a keystroke's edit is applied: views may leave what only a reader of a long text needs until the
        # typing pauses.
        self.typing = False
        # How imported kernels' L2 and L1 bytes are counted ('ncu': its own hierarchical-roofline sections, or
        # 'nersc'): a view setting of the Profile tab, like the Timeline's trace not kept in the session.
        self.level_method = "ncu"
        self.replace_session(session if session is not None else new_session())

    # ------------------------------------------------------------------ reading
    def events(self) -> dict[str, Event]:
        """Every kind of change this document announces, by name."""
        return {name: value for name, value in vars(self).items() if isinstance(value, Event)}

    def state(self, entry: OperationEntry) -> OperationState:
        """The analysis state of one operation (created on first use)."""
        return self._states.get(entry)

    @property
    def operations(self) -> list[OperationEntry]:
        return self.session.operations

    @property
    def current_entry(self) -> OperationEntry | None:
        ops = self.session.operations
        return ops[self.current] if 0 <= self.current < len(ops) else None

    @property
    def binary(self) -> bool:
        return self.session.settings.binary

    @property
    def step_text(self) -> str | None:
        """The session's step text (its first step), None when it has none."""
        steps = self.session.steps
        return steps[0].text if steps else None

    def index_of(self, entry: OperationEntry) -> int:
        for index, candidate in enumerate(self.session.operations):
            if candidate is entry:
                return index
        return -1

    def profile_position(self, record: Any) -> int:
        """Where `record` (that very object) is in Session.profiles, -1 when it is not there."""
        return next((i for i, candidate in enumerate(self.session.profiles) if candidate is record), -1)

    def catalogue_key(self) -> str:
        return self.session.device.key

    # ------------------------------------------------------------------ coalesced redraws
    def after_changes(self, callback: Callable[[], object]) -> None:
        """Run `callback` once the change under way has emitted all its events; at once when none is.

        However many events one change emits, a callback asked for several times runs once
        (callbacks compare equal as bound methods of the same view do). Views connect their
        redraw through this, so one edit costs one redraw.
        """
        if self._change_depth == 0:
            callback()
        else:
            self._pending[callback] = None

    def _run_pending(self) -> None:
        # A callback may start another change (which then runs its own callbacks), or ask again.
        while self._pending:
            callback = next(iter(self._pending))
            del self._pending[callback]
            callback()

    # ------------------------------------------------------------------ whole-session changes (not undoable)
    @_one_change
    def replace_session(self, session: Session, path: str | None = None) -> None:
        """Show another session (new, opened, example); the undo history starts afresh."""
        self.undo_stack.clear()
        self.session = session
        self.path = _absolute(path)
        self._states = OperationStates()
        self.current = 0 if session.operations else -1
        self._resolve_device()
        self._recompute_all()
        self.undo_stack.set_clean()
        self.session_replaced.emit()
        self.operations_changed.emit()
        self.device_changed.emit()
        self.settings_changed.emit()
        self.selection_changed.emit(self.current)
        self.analysis_changed.emit(-1)
        self.path_changed.emit()

    @_one_change
    def append_from_file(self, runs: list[dict[str, Any]], appended: dict[str, list[Any]]) -> None:
        """Add the runs and list items another program appended to this session's file (not an undo step).

        `appended` maps "operations", "steps" or "profiles" to new items; everything goes at the end,
        so the undo history of what was there stays valid.
        """
        session = self.session
        session.runs.extend(runs)
        operations = appended.get("operations", [])
        session.operations.extend(operations)
        for entry in operations:
            self._recompute(entry)
        session.steps.extend(appended.get("steps", []))
        session.profiles.extend(appended.get("profiles", []))
        if operations or appended.get("steps"):
            self.operations_changed.emit()
            self._select(self.current if self.current >= 0 else 0, force=True)
            self.analysis_changed.emit(-1)
        if appended.get("profiles"):
            self.profiles_changed.emit()
        if runs:
            self.runs_changed.emit()

    @_one_change
    def take_from_file(self, merged: Session) -> None:
        """Show `merged`: this session with parts another program changed in its file taken in (not an undo step).

        The undo history is cleared (its steps may refer to parts now replaced); unsaved work stays unsaved.
        """
        was_clean = self.undo_stack.is_clean()
        self.undo_stack.clear()
        self.session = merged
        self._resolve_device()
        self._recompute_all()
        self.current = min(max(self.current, 0), len(merged.operations) - 1)
        if not was_clean:
            self.undo_stack.reset_clean()
        self.operations_changed.emit()
        self.device_changed.emit()
        self.settings_changed.emit()
        self.profiles_changed.emit()
        self.runs_changed.emit()
        self.notes_changed.emit(-1)
        self.selection_changed.emit(self.current)
        self.analysis_changed.emit(-1)

    def set_path(self, path: str | None) -> None:
        self.path = _absolute(path)
        self.path_changed.emit()

    def select(self, index: int) -> None:
        """Select an operation (a view state, not an edit: not on the undo stack)."""
        self._select(index)

    def _select(self, index: int, force: bool = False) -> None:
        """Set the selection; `force` emits even when the index is unchanged (the list shifted under it)."""
        index = index if 0 <= index < len(self.session.operations) else -1
        if force or index != self.current:
            self.current = index
            self.selection_changed.emit(index)

    @_one_change
    def set_detection(self, detection: Detection) -> None:
        """Take NVML's answer: detected GPUs become choosable devices (keys nvml-N)."""
        self.detection = detection
        self.detected = {}
        self.detected_facts = {}
        if detection.status == OK:
            for gpu in detection.gpus:
                self.detected[f"nvml-{gpu.index}"] = device_for(gpu)
                self.detected_facts[f"nvml-{gpu.index}"] = gpu.to_dict()
        self.detection_changed.emit()
        if self.session.device.key in self.detected or self.device is None:
            self._resolve_device()
            self._recompute_all()
            self.device_changed.emit()
            self.analysis_changed.emit(-1)

    def adopt_device(self, key: str) -> None:
        """Use a device without an undo step: the app's own choice (the detected GPU at start-up)."""
        self.session.device = self._choice_for(key)
        self._device_edited()

    def set_level_method(self, method: str) -> None:
        """Count the hierarchical roofline's L2 and L1 bytes by `method` ('ncu' or 'nersc') in every view."""
        if method not in LEVEL_METHODS:
            raise ValueError(f"no level method '{method}'")
        if method != self.level_method:
            self.level_method = method
            self.settings_changed.emit()

    def _choice_for(self, key: str) -> DeviceChoice:
        """A choice of `key`; a detected GPU keeps NVML's facts so a saved session resolves elsewhere."""
        facts = self.detected_facts.get(key)
        if facts is not None and any(f.name == "detected" for f in dataclasses.fields(DeviceChoice)):
            return DeviceChoice(key=key, detected=facts)  # type: ignore[call-arg]
        return DeviceChoice(key=key)

    # ------------------------------------------------------------------ edits (each one an undo command)
    def push(self, command: Command) -> None:
        """Do `command` as one undo step (the edit methods below build theirs)."""
        self.undo_stack.push(command)

    def edit_declaration(self, index: int, text: str, source: str = "line", typed: bool = False) -> None:
        """Change one operation's declaration (an undo step; typing merges into one). `typed`: the edit is a
        keystroke in the line or a field, applied with `typing` set."""
        entry = self.session.operations[index]
        if text == entry.declaration:
            return
        self.typing = typed
        try:
            self.push(commands.EditDeclaration(self, entry, entry.declaration, text, source, self.clock()))
        finally:
            self.typing = False

    def add_operation(self, entry: OperationEntry | None = None, index: int | None = None) -> None:
        if entry is None:
            entry = OperationEntry.automatic(NEW_DECLARATION)
        at = len(self.session.operations) if index is None else index
        self.push(commands.InsertOperation(self, at, entry, f"Add {entry.name}"))

    def duplicate_operation(self, index: int) -> None:
        original = self.session.operations[index]
        entry = copy.deepcopy(original)
        if not entry.name_automatic:  # an automatic name stays automatic: it says what the copy is
            entry.name = self._unused_name(f"{original.name} (copy)")
        self.push(commands.InsertOperation(self, index + 1, entry, f"Duplicate {original.name}"))

    def remove_operation(self, index: int) -> None:
        if 0 <= index < len(self.session.operations):
            self.push(commands.RemoveOperation(self, index))

    def rename_operation(self, index: int, name: str) -> None:
        """Give an operation the user's name; an empty name makes it automatic again (both undoable)."""
        entry = self.session.operations[index]
        name = name.strip()
        if name:
            if name != entry.name or entry.name_automatic:
                self.push(commands.RenameOperation(self, entry, (entry.name, entry.name_automatic), (name, False)))
        elif not entry.name_automatic:
            automatic = automatic_name(entry.declaration)
            if automatic is not None:
                self.push(commands.RenameOperation(self, entry, (entry.name, False), (automatic, True)))

    def move_operation(self, index: int, to: int) -> None:
        count = len(self.session.operations)
        if 0 <= index < count and 0 <= to < count and index != to:
            self.push(commands.MoveOperation(self, index, to))

    def set_device(self, key: str) -> None:
        """Choose another device; entered rates belonged to the old one and are dropped (undo restores them)."""
        old = self.session.device
        if key != old.key:
            self.push(commands.SetDevice(self, copy.deepcopy(old), self._choice_for(key)))

    def replace_device(self, new: DeviceChoice, text: str) -> None:
        """Put `new` (the same device with other rates or latencies) in place of the device choice, as one undo
        step called `text`."""
        self.push(commands.SetDevice(self, copy.deepcopy(self.session.device), new, text))

    def set_rate(self, path: str, text: str) -> None:
        """Enter a rate for a path (or "hbm") as text, e.g. "100 TFLOP/s"; raises UnitError when it is not one."""
        from workbench.model.devices.links import is_byte_rate

        unit, what = ("B/s", "bandwidth") if is_byte_rate(path) else ("FLOP/s", f"{path} rate")
        entered = as_rate(text, unit, what)
        assert entered is not None
        rate = Rate(entered.value, entered.source, "entered in the device panel")
        old = self.session.device.overrides.get(path)
        if old != rate:
            self.push(commands.SetRate(self, path, old, rate))

    def reset_rate(self, path: str) -> None:
        old = self.session.device.overrides.get(path)
        if old is not None:
            self.push(commands.SetRate(self, path, old, None))

    def reset_rates(self) -> None:
        old = self.session.device
        if old.overrides:
            new = copy.deepcopy(old)
            new.overrides = {}
            self.replace_device(new, "Reset all rates")

    def set_notes(self, index: int, text: str, source: str = "typing") -> None:
        """Change an operation's notes (index ≥ 0) or the session's description (index -1); undoable.

        Typing from one `source` merges into one undo step; each ticked box is a step of its own.
        """
        entry = self.session.operations[index] if index >= 0 else None
        old = entry.notes if entry is not None else self.session.description
        if text != old:
            self.push(commands.EditNotes(self, entry, old, text, source, self.clock()))

    def set_checked(self, index: int, box: int, checked: bool) -> None:
        """Tick (or untick) box `box` of an operation's notes, or of the description with index -1."""
        from workbench.documents.notes import set_checked

        entry = self.session.operations[index] if index >= 0 else None
        text = entry.notes if entry is not None else self.session.description
        self.set_notes(index, set_checked(text, box, checked), source=f"box:{box}:{checked}")

    def set_setting(self, name: str, value: object) -> None:
        """Change one of convention, overlap, binary."""
        old = getattr(self.session.settings, name)
        if value != old:
            self.push(commands.SetSetting(self, name, old, value))

    def set_step_text(self, text: str) -> None:
        """Make `text` the session's step (typing within a pause merges into one undo step)."""
        old = self.step_text
        if text != (old or ""):
            self.push(commands.EditStepText(self, old, text, self.clock()))

    def add_run(self, run: dict[str, Any], text: str) -> None:
        """Store a finished run's dict in the session (one undo step called `text`)."""
        self.push(commands.AddRun(self, run, text))

    def remove_run(self, index: int) -> None:
        if 0 <= index < len(self.session.runs):
            self.push(commands.RemoveRun(self, index))

    def add_profile(self, record: dict[str, Any]) -> None:
        """Add an imported profile's record at the end of the session's profiles (one undo step)."""
        self.push(commands.AddProfile(self, record))

    def replace_profile(self, old: Any, new: dict[str, Any]) -> None:
        """Put `new` where the record `old` is (the same import, matched again)."""
        self.push(commands.ReplaceProfile(self, old, new))

    def remove_profile(self, index: int) -> None:
        profiles = self.session.profiles
        if 0 <= index < len(profiles):
            self.push(commands.RemoveProfile(self, profiles[index]))

    # ------------------------------------------------------------------ appliers (called by commands)
    @_one_change
    def apply_declaration(self, entry: OperationEntry, text: str) -> None:
        entry.declaration = text
        renamed = entry.follow_declaration()
        self._recompute(entry)
        index = self.index_of(entry)
        if index != self.current and index >= 0:
            self.select(index)
        if renamed:
            self.operations_changed.emit()
        self.declaration_changed.emit(index)
        self.analysis_changed.emit(index)

    @_one_change
    def apply_insert(self, index: int, entry: OperationEntry) -> None:
        self.session.operations.insert(index, entry)
        self._recompute(entry)
        self.operations_changed.emit()
        self._select(index, force=True)
        self.analysis_changed.emit(-1)

    @_one_change
    def apply_remove(self, index: int) -> OperationEntry:
        entry = self.session.operations.pop(index)
        self.operations_changed.emit()
        self._select(min(index, len(self.session.operations) - 1), force=True)
        self.analysis_changed.emit(-1)
        return entry

    @_one_change
    def apply_rename(self, entry: OperationEntry, name: str, automatic: bool = False) -> None:
        entry.name = name
        entry.name_automatic = automatic
        entry.follow_declaration()
        self.operations_changed.emit()
        self.analysis_changed.emit(self.index_of(entry))

    @_one_change
    def apply_move(self, index: int, to: int) -> None:
        entry = self.session.operations.pop(index)
        self.session.operations.insert(to, entry)
        self.operations_changed.emit()
        self._select(to, force=True)
        self.analysis_changed.emit(-1)

    @_one_change
    def apply_notes(self, entry: OperationEntry | None, text: str) -> None:
        if entry is None:
            self.session.description = text
            self.notes_changed.emit(-1)
            return
        entry.notes = text
        index = self.index_of(entry)
        if index != self.current and index >= 0:  # an undo shows the notes it changes
            self.select(index)
        if index >= 0:
            self.notes_changed.emit(index)

    def apply_device(self, choice: DeviceChoice) -> None:
        self.session.device = copy.deepcopy(choice)
        self._device_edited()

    def apply_rate(self, path: str, rate: Rate | None) -> None:
        overrides = self.session.device.overrides
        if rate is None:
            overrides.pop(path, None)
        else:
            overrides[path] = rate
        self._device_edited()

    @_one_change
    def apply_setting(self, name: str, value: object) -> None:
        setattr(self.session.settings, name, value)
        self._recompute_all()
        self.settings_changed.emit()
        self.analysis_changed.emit(-1)

    def apply_step_text(self, text: str | None) -> None:
        """Store the step text in the session's first step (None removes it)."""
        steps = self.session.steps
        if text is None:
            if steps:
                del steps[0]
        elif steps:
            steps[0] = StepEntry(steps[0].name, text)
        else:
            steps.append(StepEntry("step", text))
        self.step_changed.emit()

    def apply_insert_run(self, index: int, run: dict[str, Any]) -> None:
        self.session.runs.insert(index, run)
        self.runs_changed.emit()

    def apply_remove_run(self, index: int | None) -> None:
        """Take out run `index` (None: nothing to take out; the views still look again)."""
        if index is not None:
            del self.session.runs[index]
        self.runs_changed.emit()

    def apply_insert_profile(self, index: int, record: Any) -> None:
        self.session.profiles.insert(index, record)
        self.profiles_changed.emit()

    def apply_replace_profile(self, out: Any, into: Any | None) -> None:
        """Put `into` where the record `out` (that object) is, or take `out` away with None."""
        profiles = self.session.profiles
        at = self.profile_position(out)
        if at >= 0:
            if into is None:
                profiles.pop(at)
            else:
                profiles[at] = into
        self.profiles_changed.emit()

    # ------------------------------------------------------------------ internals
    @_one_change
    def _device_edited(self) -> None:
        self._resolve_device()
        self._recompute_all()
        self.device_changed.emit()
        self.analysis_changed.emit(-1)

    def _resolve_device(self) -> None:
        choice = self.session.device
        try:
            self.device = choice.resolve(self.detected.get(choice.key))
            self.device_error = ""
        except DeviceError as exc:
            self.device = None
            if choice.key.startswith("nvml-"):
                self.device_error = f"{choice.key} is a detected GPU; it is not detected on this machine yet"
            else:
                self.device_error = str(exc)

    def _recompute_all(self) -> None:
        """Every operation analysed; operations with the same declaration (a model repeats its layers) share one
        analysis, done once (Analysis is immutable; the device and settings are the same for all of them here)."""
        done: dict[str, OperationState] = {}
        for entry in self.session.operations:
            same = done.get(entry.declaration)
            if same is not None:
                state = self.state(entry)
                if same.error is not None:  # a fault: each keeps its own last valid analysis, as _recompute does
                    state.error = same.error
                else:
                    state.analysis, state.error, state.notice = same.analysis, None, same.notice
                continue
            self._recompute(entry)
            done[entry.declaration] = self.state(entry)

    def _recompute(self, entry: OperationEntry) -> None:
        """Analyse one operation; on a fault keep the last valid analysis and record the error."""
        state = self.state(entry)
        settings = self.session.settings
        options = {"convention": settings.convention, "overlap": settings.overlap, "binary": settings.binary}
        notice = self.device_error
        try:
            # On a device, as far as its rates go (Session.analyze: the report's and the CLI's rule too).
            analysis = (
                self.session.analyze(entry, self.device)
                if self.device is not None
                else analyze(entry.declaration, **options)  # type: ignore[arg-type]
            )
            if analysis.missing_rate is not None:
                notice = analysis.missing_rate
        except WorkbenchError as exc:
            state.error = exc
            return
        state.analysis = analysis
        state.error = None
        state.notice = notice

    def _unused_name(self, base: str) -> str:
        """`base`, or `base N` with the first N no operation uses."""
        names = {entry.name for entry in self.session.operations}
        if base not in names:
            return base
        number = 2
        while f"{base} {number}" in names:
            number += 1
        return f"{base} {number}"


def _absolute(path: str | None) -> str | None:
    """The file a session belongs to, made absolute at once: Save and the recovery file must not
    depend on the folder the app happens to run in later."""
    return os.path.abspath(path) if path else None
