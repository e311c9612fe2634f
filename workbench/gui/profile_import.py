"""File ▸ Import profile…: read an Nsight Compute or Nsight Systems CSV off the GUI thread, match its kernels.

The flow: `ProfileImporter.import_file(path)` reads the file in a
`ProfileReadWorker` (a big `--page raw` export takes seconds), then opens a
`KernelMatchDialog` listing each kernel against the declared operations,
preselected with `suggest_operation`. The dialog says how the file's numbers
were read (decided from its values, or assumed — in plain words, in amber)
and offers the other reading: choosing it reads the file again that way. Accepting stores
`profile.with_matches(rules).to_dict()` in `Session.profiles` as one undo
step (`DocumentState.add_profile`); a file that cannot be read is one line in the window.
"""

from __future__ import annotations

import gc
import os
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.errors import WorkbenchError
from workbench.documents.profiles import canonical, linked_operation
from workbench.gui.workers import track_worker
from workbench.gui.plain_text import html_text, plain, tooltip
from workbench.documents.session import OperationEntry
from workbench.model.units import format_bytes, format_time

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.gui.document import Document
    from workbench.profilers import Kernel, MatchRule, Profile

# The profile readers are imported where a profile is first read or shown, not when the window starts.

NOT_MATCHED = "not matched"
_GLOB_MARKS = ("*", "?", "[")


# ---------------------------------------------------------------- reading off the GUI thread


@dataclass(frozen=True)
class ReadProfile:
    """What the worker hands back: the file, its profile, its kernels and how long reading took."""

    path: str
    profile: Profile
    kernels: tuple[Kernel, ...]
    seconds: float
    decimal_mark: str | None = None  # the reading the user chose; None: decided by the file


def read_slim_profile(path: str, decimal_mark: str | None = None, should_stop: Callable[[], bool] | None = None) -> Profile:
    """`read_profile`, keeping only the metrics the workbench reads (those a session record keeps anyway).

    A `--set full` raw page has over a thousand metrics per launch; the
    comparison, the kernel table and the roofline read about twenty, and the
    reader never builds the others.
    """
    from workbench.profilers import read_profile
    from workbench.profilers.counters import is_used_metric

    return read_profile(path, keep=is_used_metric, decimal_mark=decimal_mark, should_stop=should_stop)


class ProfileReadWorker(QThread):
    """Reads one profiler CSV and groups its kernels; reports `profile_read`, `read_failed` (one line) or
    `read_stopped` (after `stop()`, within a fraction of a second however large the file)."""

    profile_read = Signal(object)  # ReadProfile
    read_failed = Signal(str)
    read_stopped = Signal()

    def __init__(self, path: str, parent: QObject | None = None, decimal_mark: str | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.decimal_mark = decimal_mark
        self._stop = threading.Event()
        track_worker(self)

    def stop(self) -> None:
        """Ask the read to end (from any thread); it ends at the next line it reads."""
        self._stop.set()

    def run(self) -> None:
        from workbench.profilers.stopping import ReadStopped

        started = time.perf_counter()
        # A raw page of a full ncu set is millions of small objects. With the cycle collector on, its
        # full passes over them (up to half a second each, holding the GIL) froze the window during a
        # read; the parse makes no cycles, so it runs without the collector and keeps only what we use.
        collecting = gc.isenabled()
        gc.disable()
        try:
            profile = read_slim_profile(self.path, self.decimal_mark, self._stop.is_set)
            kernels = profile.kernels()
        except ReadStopped:
            self.read_stopped.emit()
            return
        except WorkbenchError as exc:
            self.read_failed.emit(str(exc))
            return
        except Exception as exc:  # a reader fault must not take the window down; say what happened
            self.read_failed.emit(f"{os.path.basename(self.path)}: cannot be read ({type(exc).__name__}: {exc})")
            return
        finally:
            if collecting:
                gc.enable()
        if not kernels:
            self.read_failed.emit(f"{profile.source}: the file holds no kernels")
            return
        self.profile_read.emit(ReadProfile(self.path, profile, kernels, time.perf_counter() - started, self.decimal_mark))


# ---------------------------------------------------------------- match rules from choices


def kernel_pattern(kernel: Kernel, kernels: Sequence[Kernel]) -> str:
    """A pattern selecting this kernel and no other of the file: its base name where that is enough.

    Readable base names ('cupy_add__float32_float32_float32') go into the
    session as they are; a base name shared by several kernels, or one with
    glob characters (demangled names carry `*` and `[`), becomes an anchored
    regular expression of the full name.
    """
    from workbench.profilers import MatchRule

    base = kernel.base_name
    if base and not base.startswith("regex:") and not any(mark in base for mark in _GLOB_MARKS):
        rule = MatchRule(base, "")
        if [k.name for k in kernels if rule.matches(k.name)] == [kernel.name]:
            return base
    return f"regex:^{re.escape(kernel.name)}$"


def rule_declaration(entry: OperationEntry, fallback: Any = None) -> str | None:
    """The declaration a match records for an operation: its canonical text, else its last valid analysis's."""
    text = canonical(entry.declaration)
    if text is None and fallback is not None:
        text = str(fallback.declaration)
    return text


def build_rules(kernels: Sequence[Kernel], choices: Sequence[OperationEntry | None], declarations: dict[int, str]) -> list[MatchRule]:
    """One rule per matched kernel, naming the operation; unmatched kernels get none."""
    from workbench.profilers import MatchRule

    rules = []
    for kernel, entry in zip(kernels, choices):
        if entry is None or id(entry) not in declarations:
            continue
        rules.append(MatchRule(kernel_pattern(kernel, kernels), declarations[id(entry)], entry.name))
    return rules


# ---------------------------------------------------------------- the matching dialog


# The decimal-mark choices the dialog offers: (label, mark); None lets the file's values decide.
DECIMAL_CHOICES: tuple[tuple[str, str | None], ...] = (
    ("as the file shows", None),
    ("period: 1,234.5", "."),
    ("comma: 1.234,5", ","),
)


class KernelMatchDialog(QDialog):
    """Each kernel of an imported file against the declared operations: preselected, changeable, or not matched.

    `reread_requested(mark)` asks for the file to be read again with another
    decimal mark ('.' or ',', or None for the file's own evidence).
    """

    reread_requested = Signal(object)

    def __init__(
        self,
        profile: Profile,
        kernels: Sequence[Kernel],
        operations: Sequence[OperationEntry],
        declarations: dict[int, str],
        binary: bool = False,
        editing: bool = False,
        parent: QWidget | None = None,
        decimal_mark: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("kernelMatchDialog")
        self.setWindowTitle(f"Match kernels of {profile.source}" if editing else f"Import {profile.source}")
        self.profile = profile
        self.kernels = tuple(kernels)
        self.operations = list(operations)
        self.declarations = declarations  # id(entry) -> declaration text; entries without one cannot be chosen
        self.how_chosen: list[str] = []
        self.rereading = False  # closed to read the file again with another decimal mark

        launches = len(profile.launches) if profile.launches else sum(k.instances for k in self.kernels)
        where = f", {profile.device_name}" if profile.device_name else ""
        heading = QLabel(
            f"<b>{html_text(profile.source)}</b>: {html_text(profile.title)}, {len(self.kernels)} kernel{'s' if len(self.kernels) != 1 else ''}, "
            f"{launches} launch{'es' if launches != 1 else ''}{html_text(where)}.<br>"
            "Choose the declared operation each kernel implements; the comparison and the roofline use it."
        )
        heading.setObjectName("matchHeading")
        heading.setWordWrap(True)
        rows_height = self._build_table(profile, binary, editing)
        note = plain(QLabel(f"Note: {profile.conditions_note}."))
        note.setObjectName("matchConditions")
        note.setWordWrap(True)
        note.setStyleSheet("color: #6d4c00;")
        reading_row = self._build_reading_row(profile, decimal_mark, editing)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Apply" if editing else "Import")
        ok.setObjectName("matchAccept")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(self.table, 1)
        layout.addLayout(reading_row)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.resize(1080, 200 + min(rows_height, 420))

    def _build_table(self, profile: Profile, binary: bool, editing: bool) -> int:
        """A row per kernel with an operation chooser: the saved match, else (importing) a guess from its name.
        Returns the rows' height."""
        self.table = QTableWidget(len(self.kernels), 5)
        self.table.setObjectName("matchTable")
        self.table.setHorizontalHeaderLabels(["Kernel", "Launches", "Duration", "DRAM traffic", "Operation"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.combos: list[QComboBox] = []
        from workbench.profilers import match_kernels
        from workbench.profilers.matching import operation_suggester

        saved = {kernel.name: rule for kernel, rule in match_kernels(self.kernels, list(profile.matches))}
        lines = {str(i): entry.declaration for i, entry in enumerate(self.operations) if id(entry) in self.declarations}
        # The first guess for each distinct name no saved rule takes, asked at once (the declarations parsed
        # once, the names searched together), not once per kernel.
        asked = [] if editing else list(dict.fromkeys(k.name for k in self.kernels if k.name not in saved))
        suggested = dict(zip(asked, operation_suggester(lines).many(asked)))
        for row, kernel in enumerate(self.kernels):
            name = QTableWidgetItem(kernel.base_name)
            name.setToolTip(tooltip(kernel.name))
            duration = "—" if kernel.duration is None else format_time(float(kernel.duration.value))
            traffic = "—" if kernel.dram.total is None else format_bytes(float(kernel.dram.total.value), binary)
            cells = (name, QTableWidgetItem(str(kernel.instances)), QTableWidgetItem(duration), QTableWidgetItem(traffic))
            for column, item in enumerate(cells):
                if column:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
            combo = self._operation_box()
            chosen: int | None = None
            how = ""
            rule = saved.get(kernel.name)
            if rule is not None:
                chosen = linked_operation(rule, self.operations)
                how = "saved match" if chosen is not None else ""
            if chosen is None and rule is None and not editing:  # editing: an unmatched kernel was left so
                key = suggested.get(kernel.name)
                chosen = int(key) if key is not None else None
                how = "suggested from the kernel's name" if chosen is not None else ""
            self.how_chosen.append(how)
            combo.setCurrentIndex(0 if chosen is None else chosen + 1)
            combo.setToolTip(tooltip(how or "no operation suggested: choose one, or leave it not matched"))
            self.table.setCellWidget(row, 4, combo)
            self.combos.append(combo)
        rows_height = sum(self.table.rowHeight(r) for r in range(len(self.kernels)))
        self.table.setMinimumHeight(min(self.table.horizontalHeader().height() + rows_height + 6, 420))
        return rows_height

    def _build_reading_row(self, profile: Profile, decimal_mark: str | None, editing: bool) -> QHBoxLayout:
        """How the file's numbers were read, and the decimal mark to read it with again."""
        self.reading = plain(QLabel(self._reading_text(profile)))
        self.reading.setObjectName("matchNumberFormat")
        self.reading.setWordWrap(True)
        assumed = profile.number_format is not None and profile.number_format.assumed
        self.reading.setStyleSheet("color: #a15c00; font-weight: bold;" if assumed else "color: #555555;")
        self.decimal_box = QComboBox()
        self.decimal_box.setObjectName("matchDecimalMark")
        for label, mark in DECIMAL_CHOICES:
            self.decimal_box.addItem(label, mark)
        self.decimal_box.setCurrentIndex(next(i for i, (_, mark) in enumerate(DECIMAL_CHOICES) if mark == decimal_mark))
        self.decimal_box.setToolTip(
            "Which mark is the decimal one in this file's numbers; choosing another reads the file again"
        )
        self.decimal_box.setEnabled(not editing)  # a saved record keeps the reading it was imported with
        self.decimal_box.currentIndexChanged.connect(lambda _: self.reread_requested.emit(self.decimal_box.currentData()))
        reading_row = QHBoxLayout()
        reading_row.addWidget(self.reading, 1)
        decimal_label = QLabel("Decimal mark:")
        decimal_label.setBuddy(self.decimal_box)
        reading_row.addWidget(decimal_label)
        reading_row.addWidget(self.decimal_box)
        return reading_row

    @staticmethod
    def _reading_text(profile: Profile) -> str:
        """How the numbers were read, in the words the CLI uses; plain 'assumed' when no value showed it."""
        number_format = profile.number_format
        if number_format is None:
            return "Numbers read as saved."
        if number_format.assumed:
            return (
                f"Number format assumed — no value shows which mark is the decimal one, so "
                f"{number_format.ambiguous:,} value{'s' if number_format.ambiguous != 1 else ''} such as '1.234' "
                "were read with the period (1,234.5). If the file comes from a comma-decimal locale, choose the comma."
            )
        note = number_format.note()
        return note[0].upper() + note[1:] + "."

    def _operation_box(self) -> QComboBox:
        box = QComboBox()
        box.addItem(NOT_MATCHED, None)
        for index, entry in enumerate(self.operations):
            valid = id(entry) in self.declarations
            text = f"{entry.name} — {self.declarations[id(entry)] if valid else entry.declaration}"
            box.addItem(text if valid else f"{text}  (has an error)", index)
            if not valid:
                item = box.model().item(box.count() - 1)  # type: ignore[attr-defined]
                item.setEnabled(False)
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        box.setMinimumContentsLength(48)
        return box

    def choice(self, row: int) -> OperationEntry | None:
        """The operation chosen for the kernel in `row`, None when it is not matched."""
        index = self.combos[row].currentData()
        return None if index is None else self.operations[int(index)]

    def choose(self, row: int, operation: int | None) -> None:
        """Choose operation `operation` (an index into the session's operations) or None for not matched."""
        self.combos[row].setCurrentIndex(0 if operation is None else operation + 1)

    def rules(self) -> list[MatchRule]:
        return build_rules(self.kernels, [self.choice(row) for row in range(len(self.kernels))], self.declarations)


# ---------------------------------------------------------------- the controller the window owns


class ProfileImporter(QObject):
    """Reads dropped or chosen files one at a time, asks for matches, and stores the result undoably."""

    message = Signal(str)  # a passing status-bar line
    reading_changed = Signal(bool)  # a file is being read (its Cancel can be offered), or no longer
    import_failed = Signal(str)  # one line for the window's banner
    profile_imported = Signal(int)  # index of the new record in Session.profiles
    dialog_opened = Signal(object)  # the KernelMatchDialog, for whoever wants to drive it

    def __init__(self, document: "Document", parent: QWidget) -> None:
        super().__init__(parent)
        self.document = document
        self.window = parent
        self.worker: ProfileReadWorker | None = None
        self.dialog: KernelMatchDialog | None = None
        self.last_read_seconds: float | None = None
        self._queue: deque[tuple[str, str | None]] = deque()

    @property
    def busy(self) -> bool:
        return self.worker is not None or self.dialog is not None

    def import_file(self, path: str, decimal_mark: str | None = None) -> None:
        """Queue a file (read with `decimal_mark`, or as its values show); reading starts at once unless
        another import is being read or matched."""
        self._queue.append((str(path), decimal_mark))
        self._next()

    def _next(self) -> None:
        if self.busy or not self._queue:
            return
        path, decimal_mark = self._queue.popleft()
        worker = ProfileReadWorker(path, self, decimal_mark)
        worker.profile_read.connect(self._read)
        worker.read_failed.connect(self._failed)
        worker.read_stopped.connect(lambda name=os.path.basename(path): self.message.emit(f"Import of {name} cancelled"))
        worker.finished.connect(self._worker_finished)
        self.worker = worker
        self.message.emit(f"Reading {os.path.basename(path)}…")
        self.reading_changed.emit(True)
        worker.start()

    def cancel_reading(self) -> None:
        """Stop the file being read and drop those queued behind it (Cancel in the status bar)."""
        self._queue.clear()
        if self.worker is not None:
            self.worker.stop()

    def _worker_finished(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.wait()
            worker.deleteLater()
        self.reading_changed.emit(False)
        self._next()

    def _failed(self, line: str) -> None:
        self.import_failed.emit(f"Cannot import {line}")

    def _declarations(self) -> dict[int, str]:
        declarations = {}
        for entry in self.document.operations:
            text = rule_declaration(entry, self.document.state(entry).analysis)
            if text is not None:
                declarations[id(entry)] = text
        return declarations

    def _read(self, result: ReadProfile) -> None:
        self.last_read_seconds = result.seconds
        self.message.emit(f"Read {os.path.basename(result.path)} in {result.seconds:.2f} s")
        dialog = self._open_dialog(result.profile, result.kernels, None, result.decimal_mark)
        dialog.reread_requested.connect(lambda mark, d=dialog, path=result.path: self._reread(d, path, mark))

    def _reread(self, dialog: KernelMatchDialog, path: str, decimal_mark: str | None) -> None:
        """The user chose another decimal mark: close this dialog and read the file again, first in line."""
        self._queue.appendleft((path, decimal_mark))
        dialog.rereading = True
        self.message.emit(f"Reading {os.path.basename(path)} again with another decimal mark…")
        dialog.reject()

    def _open_dialog(
        self, profile: Profile, kernels: Sequence[Kernel], replacing: Any, decimal_mark: str | None = None
    ) -> KernelMatchDialog:
        dialog = KernelMatchDialog(
            profile,
            kernels,
            self.document.operations,
            self._declarations(),
            binary=self.document.binary,
            editing=replacing is not None,
            parent=self.window,
            decimal_mark=decimal_mark,
        )
        dialog.finished.connect(lambda result, d=dialog, r=replacing: self._dialog_finished(d, result, r))
        self.dialog = dialog
        dialog.open()
        self.dialog_opened.emit(dialog)
        return dialog

    def _dialog_finished(self, dialog: KernelMatchDialog, result: int, replacing: Any) -> None:
        self.dialog = None
        dialog.deleteLater()
        if result == QDialog.DialogCode.Accepted:
            record = dialog.profile.with_matches(dialog.rules()).to_dict()
            if replacing is None:
                self.document.core.add_profile(record)
                self.profile_imported.emit(len(self.document.session.profiles) - 1)
            else:
                self.document.core.replace_profile(replacing, record)
            matched = len(record["matches"])
            self.message.emit(f"{record['source']}: {matched} of {len(dialog.kernels)} kernels matched")
        elif replacing is None and not dialog.rereading:
            self.message.emit(f"Import of {dialog.profile.source} cancelled")
        self._next()

    def edit_matches(self, record_index: int) -> KernelMatchDialog | None:
        """Open the matching dialog again for a saved record (applying it is one undo step)."""
        if self.busy:
            return None
        profiles = self.document.session.profiles
        if not 0 <= record_index < len(profiles):
            return None
        record = profiles[record_index]
        from workbench.profilers import Profile

        try:
            profile = Profile.from_dict(record)
        except WorkbenchError as exc:
            self.import_failed.emit(f"Cannot match kernels of profile record {record_index + 1}: {exc}")
            return None
        return self._open_dialog(profile, profile.kernels(), record)

    def remove(self, record_index: int) -> None:
        self.document.core.remove_profile(record_index)

    def wait(self, timeout_ms: int = 10000) -> None:
        """Wait for a file being read (on close, after `cancel_reading`, and in tests); queued files are dropped."""
        self._queue.clear()
        if self.worker is not None:
            self.worker.wait(timeout_ms)
