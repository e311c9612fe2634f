"""The window's life with files: recent sessions, unsaved-changes questions, autosave and crash recovery,
drag and drop, and report export.

`SessionFiles` is given its collaborators — the document, the settings store,
the widget it serves (parent of its dialogs, target of drops) and `WindowHooks`,
the few things it asks of the window (open, save, import a profile, say
something, the roofline to render) — and never reaches into the window's menus
or widgets: the window places `recent_menu` and `export_report_action` in its
own File menu. The two questions it can put to the user go through
`ask_unsaved_changes`, `ask_recovery` and `ask_conflict`, which tests replace so
that no test ever waits on a modal dialog. Autosave writes with `workbench.documents.autosave`
(Qt-free) from a QTimer, only while the undo stack is away from its clean state.
Saving, and what other programs save to the same file meanwhile, go through
`OutsideChanges` (gui/outside_changes.py): under the file's lock, merged, never
overwritten unseen.

Saves and autosaves are encoded and written by the window's `Writer`
(gui/writer.py), in a thread, one after another: the window stays responsive
while a large session is written. A save copies the document when it begins
(edits made meanwhile stay unsaved, and the title says so) and returns when the
file is written; Save asked again meanwhile saves once more after it; new,
open and recover wait for it, and closing the window waits until it is written.
An autosave runs on its own (the timer does not wait for it) and is stopped,
unwritten, when the work is saved or closed meanwhile.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import shiboken6
from PySide6.QtCore import QEvent, QObject, QSettings, QTimer, QUrl
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from workbench.documents.autosave import (
    AUTOSAVE_INTERVAL_S,
    Autosaver,
    Recovery,
    recover_session,
    scan_recovery_files,
)
from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.gui.outside_changes import CANCEL as CONFLICT_CANCEL
from workbench.gui.outside_changes import OutsideChanges, Say, conflict_box
from workbench.gui.plain_text import plain, tooltip
from workbench.gui.writer import Writer
from workbench.documents.session import SaveStopped, snapshot
from workbench.documents.session_sync import DiskStamp, Snapshot
from workbench.documents.report import report_files, report_kind, write_report
from workbench.scenes.roofline_marks import PlacedOperation

AUTOSAVE_INTERVAL_VARIABLE = "PERF_WORKBENCH_AUTOSAVE_S"  # seconds; tests shorten the autosave period with it
RECENT_KEY = "files/recent"
MAX_RECENT = 10
RECOVERY_DELAY_MS = 250  # after the window is first shown: the recovery check stays off the start-up path
STATUS_MS = 8000

# answers to the unsaved-changes question
SAVE = "save"
DISCARD = "discard"
CANCEL = "cancel"
# answers to the recovery question
RECOVER = "recover"
DISCARD_ALL = "discard"
LATER = "later"

SESSION_SUFFIXES = (".json",)
PROFILE_SUFFIXES = (".csv",)
REPORT_FILTERS: tuple[tuple[str, str], ...] = (
    ("HTML report (*.html)", ".html"),
    ("Markdown report (*.md)", ".md"),
    ("CSV of raw timing samples (*.csv)", ".csv"),
)


def autosave_interval_ms() -> int:
    """The autosave period: $PERF_WORKBENCH_AUTOSAVE_S when it is a positive number, else AUTOSAVE_INTERVAL_S."""
    text = os.environ.get(AUTOSAVE_INTERVAL_VARIABLE, "")
    try:
        seconds = float(text)
    except ValueError:
        seconds = float(AUTOSAVE_INTERVAL_S)
    if not seconds > 0 or seconds != seconds:
        seconds = float(AUTOSAVE_INTERVAL_S)
    return max(int(seconds * 1000), 10)


@dataclass(frozen=True)
class RecoveryAnswer:
    """What the user chose for the sessions a crash left behind: recover one, discard all, or decide later."""

    action: str  # RECOVER, DISCARD_ALL or LATER
    recovery: Recovery | None = None  # the one to recover


class RecentFiles:
    """Session files opened or saved lately, most recent first, kept in QSettings."""

    def __init__(self, settings: QSettings, limit: int = MAX_RECENT) -> None:
        self.settings = settings
        self.limit = limit

    def paths(self) -> list[str]:
        value = self.settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # an INI file gives a one-element list back as a plain string
            value = [value] if value else []
        if not isinstance(value, (list, tuple)):
            return []
        return [str(path) for path in value if isinstance(path, str) and path]

    def _store(self, paths: Sequence[str]) -> None:
        self.settings.setValue(RECENT_KEY, list(paths))

    def add(self, path: str) -> None:
        path = os.path.abspath(path)
        self._store([path, *(p for p in self.paths() if p != path)][: self.limit])

    def remove(self, path: str) -> None:
        self._store([p for p in self.paths() if p != path])

    def prune(self) -> list[str]:
        """Drop files that no longer exist; returns the dropped paths."""
        paths = self.paths()
        missing = [p for p in paths if not os.path.isfile(p)]
        if missing:
            self._store([p for p in paths if p not in missing])
        return missing

    def clear(self) -> None:
        self._store([])


def _menu_text(number: int, path: str) -> str:
    """'&1 lab.json  (~/work)': a mnemonic for the first nine, ampersands in names kept literal."""
    name = os.path.basename(path).replace("&", "&&")
    folder = os.path.dirname(path)
    home = os.path.expanduser("~")
    if folder == home or folder.startswith(home + os.sep):
        folder = "~" + folder[len(home):]
    folder = folder.replace("&", "&&")
    return f"&{number} {name}  ({folder})" if number <= 9 else f"{number} {name}  ({folder})"


def _names(paths: Sequence[str]) -> str:
    return ", ".join(os.path.basename(p) for p in paths)


class RecoveryDialog(QDialog):
    """Lists the sessions a crash left unsaved and asks what to do with them."""

    def __init__(self, recoveries: Sequence[Recovery], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recoveryDialog")
        self.setWindowTitle("Recover unsaved work")
        self.recoveries = list(recoveries)
        self.choice = RecoveryAnswer(LATER)
        count = len(self.recoveries)
        intro = QLabel(
            "The workbench stopped without saving "
            + ("this session" if count == 1 else f"these {count} sessions")
            + ". Recover one to carry on where you were (it opens as unsaved work), "
            "discard them for good, or decide at the next start."
        )
        intro.setWordWrap(True)
        self.list = QListWidget()
        self.list.setObjectName("recoveryList")
        for recovery in self.recoveries:
            item = QListWidgetItem(recovery.describe())
            item.setToolTip(tooltip(f"Was saved as: {recovery.source_path}" if recovery.source_path else "Never saved to a file"))
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        self.list.itemDoubleClicked.connect(lambda _item: self._choose(RECOVER))
        buttons = QDialogButtonBox()
        self.recover_button = buttons.addButton("&Recover", QDialogButtonBox.ButtonRole.AcceptRole)
        self.discard_button = buttons.addButton(
            "&Discard all" if count > 1 else "&Discard", QDialogButtonBox.ButtonRole.DestructiveRole
        )
        self.later_button = buttons.addButton("&Not now", QDialogButtonBox.ButtonRole.RejectRole)
        self.recover_button.setDefault(True)
        self.recover_button.clicked.connect(lambda: self._choose(RECOVER))
        self.discard_button.clicked.connect(lambda: self._choose(DISCARD_ALL))
        self.later_button.clicked.connect(lambda: self._choose(LATER))
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list)
        layout.addWidget(buttons)
        widest = self.list.sizeHintForColumn(0) + 2 * self.list.frameWidth() + 40
        self.resize(min(max(560, widest), 960), 260)

    def _choose(self, action: str) -> None:
        row = self.list.currentRow()
        chosen = self.recoveries[row] if action == RECOVER and 0 <= row < len(self.recoveries) else None
        self.choice = RecoveryAnswer(action, chosen)
        if action == LATER:
            self.reject()
        else:
            self.accept()


@dataclass(frozen=True)
class WindowHooks:
    """What SessionFiles asks of the window it serves, and nothing more."""

    open_session: Callable[[str], bool]
    save_session: Callable[[], bool]
    import_profile: Callable[[str], object]
    show_banner: Callable[[str], None]
    hide_banner: Callable[[], None]
    show_status: Callable[[str, int], None]  # text, milliseconds
    roofline_view: Callable[[], Any]  # the roofline view: its levels, range, labels and pins (report export)


class SessionFiles(QObject):
    """Recent files, unsaved-changes questions, autosave and recovery, drops and report export for one window."""

    def __init__(self, document: Document, settings: QSettings, host: QWidget, hooks: WindowHooks) -> None:
        super().__init__(host)
        self.document = document
        self.host = host
        self.hooks = hooks
        self.recent = RecentFiles(settings)
        self.autosaver = Autosaver()
        self.writer = Writer(self)  # saves and autosaves, encoded and written in a thread, one at a time
        # the file on disk as other programs change it: watched, merged in, saved under its lock
        self.outside = OutsideChanges(document, host, Say(hooks.show_status, hooks.show_banner), self.writer.run)
        self._autosave_pending = False
        self._autosave_failed = False
        self._autosave_running = False
        self._autosave_stop = threading.Event()  # set: the autosave being written is no longer wanted
        self._recovery_checked = False
        self.saving = False  # a save is being written (the window is live meanwhile)
        self._save_again: str | None = None  # Save asked again while one was written: the path to save to next
        self._close_when_saved = False

        self.autosave_timer = QTimer(self)
        self.autosave_timer.setObjectName("autosaveTimer")
        self.autosave_timer.setInterval(autosave_interval_ms())
        self.autosave_timer.timeout.connect(self.start_autosave)
        self.autosave_timer.start()

        stack = self.document.undo_stack
        stack.indexChanged.connect(self._edited)
        stack.cleanChanged.connect(self._clean_changed)
        self.document.session_replaced.connect(self._session_replaced)
        self.document.path_changed.connect(self._path_changed)

        self._make_menu()
        host.setAcceptDrops(True)
        host.installEventFilter(self)

    # ------------------------------------------------------------------ menus
    def _make_menu(self) -> None:
        """Open recent (with Clear the list) and Export report; the window puts them in its File menu."""
        self.recent_menu = QMenu("Open &recent", self.host)
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._prune_and_refresh)
        self.clear_recent_action = QAction("&Clear the list", self.host)
        self.clear_recent_action.setObjectName("action_clear_recent")
        self.clear_recent_action.triggered.connect(self.clear_recent)
        self.export_report_action = QAction("Export &report…", self.host)
        self.export_report_action.setObjectName("action_export_report")
        tip = "Write the session as a Markdown or HTML report (with the roofline) or a CSV of raw samples"
        self.export_report_action.setStatusTip(tip)
        self.export_report_action.setToolTip(tip)
        self.export_report_action.triggered.connect(self.export_report_dialog)
        self.refresh_recent_menu()

    def refresh_recent_menu(self) -> None:
        """Rebuild Open recent from the stored list (most recent first)."""
        menu = self.recent_menu
        menu.clear()  # deletes the entries it owns; "Clear the list" belongs to the window and stays
        paths = self.recent.paths()
        for number, path in enumerate(paths, start=1):
            action = menu.addAction(_menu_text(number, path))
            action.setData(path)
            action.setStatusTip(path)
            action.setToolTip(tooltip(path))
            action.triggered.connect(lambda _=False, p=path: self.open_recent(p))
        if not paths:
            empty = menu.addAction("No recent sessions")
            empty.setEnabled(False)
        menu.addSeparator()
        menu.addAction(self.clear_recent_action)
        self.clear_recent_action.setEnabled(bool(paths))

    def recent_paths(self) -> list[str]:
        return self.recent.paths()

    def _prune_and_refresh(self) -> None:
        missing = self.recent.prune()
        if missing:
            self._status(f"Removed from Open recent (no longer there): {_names(missing)}")
        self.refresh_recent_menu()

    def open_recent(self, path: str) -> bool:
        if not os.path.isfile(path):
            self.recent.remove(path)
            self.refresh_recent_menu()
            self._status(f"{os.path.basename(path)} is no longer there ({os.path.dirname(path)}); removed from Open recent")
            return False
        return self.hooks.open_session(path)

    def clear_recent(self) -> None:
        self.recent.clear()
        self.refresh_recent_menu()

    def _path_changed(self) -> None:
        path = self.document.path
        if path:
            self.recent.add(path)
            self.refresh_recent_menu()

    # ------------------------------------------------------------------ unsaved changes
    @property
    def dirty(self) -> bool:
        return not self.document.undo_stack.isClean()

    def session_name(self) -> str:
        doc = self.document
        return os.path.basename(doc.path) if doc.path else (doc.session.title or "untitled session")

    def confirm_discard(self, action: str) -> bool:
        """True when the session may be replaced or closed: it is clean, was just saved, or the user discards it.

        `action` completes "Save them before …?", e.g. "closing". Never while a save is being written.
        """
        if self.saving:
            self._status(f"The session is being saved: try {action} again once it is written")
            return False
        if not self.dirty:
            return True
        answer = self.ask_unsaved_changes(action)
        if answer == SAVE:
            return bool(self.hooks.save_session())
        return answer == DISCARD

    def unsaved_changes_box(self, action: str) -> QMessageBox:
        """The Save / Discard / Cancel question (built apart from asking it, so it can be checked)."""
        box = plain(QMessageBox(self.host))  # the session's name is outside text
        box.setObjectName("unsavedChangesBox")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Unsaved changes")
        box.setText(f"“{self.session_name()}” has unsaved changes.")
        box.setInformativeText(f"Save them before {action}?")
        buttons = QMessageBox.StandardButton
        box.setStandardButtons(buttons.Save | buttons.Discard | buttons.Cancel)
        box.setDefaultButton(buttons.Save)
        box.setEscapeButton(buttons.Cancel)
        return box

    def ask_unsaved_changes(self, action: str) -> str:
        """SAVE, DISCARD or CANCEL, from a modal question (tests replace this method)."""
        box = self.unsaved_changes_box(action)
        pressed = box.exec()
        buttons = QMessageBox.StandardButton
        return {buttons.Save: SAVE, buttons.Discard: DISCARD}.get(buttons(pressed), CANCEL)

    def close_waits_for_save(self) -> bool:
        """True while a save is being written: the window closes (asking as ever) once it is, not before."""
        if not self.saving:
            return False
        self._close_when_saved = True
        self._status("Closing once the session is saved…")
        return True

    def window_closing(self) -> None:
        """The window closes with nothing unsaved left (saved, clean or discarded): drop the recovery file, after
        any autosave being written (stopped first), and wait for it."""
        self.autosave_timer.stop()
        self._autosave_stop.set()
        self._discard_autosave()
        self.writer.finish()

    # ------------------------------------------------------------------ saving
    def opening(self, snapshot: Snapshot, path: str, stamp: DiskStamp | None = None) -> None:
        """The document is about to show the session read from `path`, whose bytes `snapshot` describes (and
        whose identity before the read was `stamp`)."""
        self.outside.expect(snapshot, path, stamp)

    def save_to(self, path: str) -> bool:
        """Save under the file's lock, with what other programs saved to it merged in; True when saved.

        Written in the writer's thread while the window stays live; returns once it is written. Asked again
        while a save is written, it saves once more after it (with the edits made meanwhile) and returns False.
        """
        if self.saving:
            self._save_again = path
            self._status("Saving… the session is saved again once this save is written")
            return False
        self.saving = True
        self._status("Saving…")
        try:
            saved = self.outside.save(path, self.ask_conflict)
            while self._save_again is not None:
                again, self._save_again = self._save_again, None
                saved = self.outside.save(again, self.ask_conflict)
        finally:
            self.saving = False
        if self._close_when_saved and shiboken6.isValid(self.host):
            self._close_when_saved = False
            QTimer.singleShot(0, self.host, self.host.close)  # closes now, or asks again if the save failed
        return saved

    def ask_conflict(self, path: str, conflicts: Sequence[str]) -> str:
        """RELOAD, KEEP_COPY, MERGE or CANCEL (gui/outside_changes.py), from a modal question (tests replace this)."""
        box, answers = conflict_box(self.host, path, conflicts)
        box.exec()
        return answers.get(box.clickedButton(), CONFLICT_CANCEL)

    # ------------------------------------------------------------------ autosave
    def _edited(self, *_: object) -> None:
        # Only a flag: this also runs while the window's undo stack is being destroyed.
        self._autosave_pending = True

    def _clean_changed(self, clean: bool) -> None:
        if clean and shiboken6.isValid(self.host):  # not while the window is being destroyed
            self._autosave_pending = False
            self._discard_autosave()

    def _session_replaced(self) -> None:
        if not self.dirty:
            self._autosave_pending = False
            self._discard_autosave()

    def autosave_in_flight(self) -> bool:
        """Whether an autosave is being written now."""
        return self._autosave_running

    def start_autosave(self, then: Callable[[bool], None] | None = None) -> bool:
        """Start writing the recovery file, in the writer's thread, when there are changes since the last
        autosave and none is being written; True when one was started. `then(written)` follows it here."""
        if not self._autosave_pending or not self.dirty or self._autosave_running:
            return False
        self._autosave_pending = False
        self._autosave_running = True
        self._autosave_stop = stop = threading.Event()
        session, path, base = snapshot(self.document.session), self.document.path, self.outside.base
        encodings = self.outside.encodings

        def work() -> object:
            return self.autosaver.write(session, path, base, encodings, stop.is_set)

        def done(_result: object, error: BaseException | None) -> None:
            self._autosave_running = False
            written = error is None
            if isinstance(error, SaveStopped):
                self._autosave_pending = self._autosave_pending or self.dirty
            elif error is not None:
                self._autosave_pending = True  # tried again next period
                if not self._autosave_failed and shiboken6.isValid(self.host):  # said once, not every period
                    self.hooks.show_banner(f"Autosave failed: {error}. Until it works again, only saving protects this work.")
                self._autosave_failed = True
            else:
                self._autosave_failed = False
            if then is not None:
                then(written)

        self.writer.submit(work, done)
        return True

    def autosave_now(self) -> bool:
        """Write the recovery file now (as the timer does) and wait for it, the window live meanwhile; True when it
        was written."""
        result: list[bool] = []
        if not self.start_autosave(result.append):
            return False
        self.writer.run(lambda: None)  # queued after the autosave: returns once it is written
        return bool(result and result[0])

    def _discard_autosave(self) -> None:
        """Remove the recovery file: now, or after the autosave being written (stopped unwritten where it can be)."""
        if not self.writer.busy():
            try:
                self.autosaver.discard()
            except WorkbenchError as exc:
                self._status(str(exc))
            return
        self._autosave_stop.set()

        def done(_result: object, error: BaseException | None) -> None:
            if error is not None:
                self._status(str(error))

        self.writer.submit(self.autosaver.discard, done)

    # ------------------------------------------------------------------ recovery
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        kind = event.type()
        if watched is self.host:
            if kind == QEvent.Type.Show and not self._recovery_checked:
                self._recovery_checked = True
                QTimer.singleShot(RECOVERY_DELAY_MS, self, self.offer_recovery)
            elif kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(event, QDropEvent):
                if self.dropped_paths(event):
                    event.acceptProposedAction()
                    return True
            elif kind == QEvent.Type.Drop and isinstance(event, QDropEvent):
                paths = self.dropped_paths(event)
                if paths:
                    event.acceptProposedAction()
                    # Open after the drop has finished: a question asked inside a drop would stall the drag source.
                    QTimer.singleShot(0, self, lambda: self.open_dropped(paths))
                    return True
        return super().eventFilter(watched, event)

    def offer_recovery(self) -> RecoveryAnswer | None:
        """Offer the sessions that crashed processes left in the autosave folder; None when there are none."""
        try:
            found, unreadable = scan_recovery_files(self.autosaver.directory)
        except OSError as exc:
            self._status(f"Cannot look for unsaved work to recover: {exc.strerror or exc}")
            return None
        if unreadable:  # kept where they are: the work may still be read from them by hand
            others = len(unreadable) - 1
            more = f" (and {others} more recovery file{'s' if others > 1 else ''} like it)" if others else ""
            self.hooks.show_banner(f"Unsaved work left by an earlier run cannot be recovered{more}: {unreadable[0]}")
        if not found:
            return None
        answer = self.ask_recovery(found)
        if answer.action == RECOVER and answer.recovery is not None:
            self.recover(answer.recovery)
        elif answer.action == DISCARD_ALL:
            for recovery in found:
                try:
                    recovery.discard()
                except WorkbenchError as exc:
                    self._status(str(exc))
            self._status(f"Discarded {len(found)} unsaved session{'s' if len(found) != 1 else ''} left by an earlier run")
        return answer

    def ask_recovery(self, recoveries: Sequence[Recovery]) -> RecoveryAnswer:
        """Which left-over session to recover, if any, from a modal dialog (tests replace this method)."""
        dialog = RecoveryDialog(recoveries, self.host)
        dialog.exec()
        return dialog.choice

    def recover(self, recovery: Recovery) -> bool:
        """Open a recovery file's session as unsaved work (belonging to its file, when it had one)."""
        try:
            # with what reached the session file after the crash merged in (workbench/documents/autosave.py)
            recovered = recover_session(recovery)
        except WorkbenchError as exc:
            self.hooks.show_banner(f"Cannot recover that session: {exc}")
            return False
        if not self.confirm_discard("recovering the unsaved session"):
            return False
        source = recovery.source_path
        self.hooks.hide_banner()
        self.document.replace_session(recovered.session, source)
        if source:
            self.outside.adopt(recovered.base, source)
        self.document.undo_stack.resetClean()  # unsaved work until the user saves it
        self._autosave_pending = True
        if self.autosave_now():  # this process's own recovery file first, then the old one can go
            try:
                recovery.discard()
            except WorkbenchError as exc:
                self._status(str(exc))
        where = f"Save writes it back to {source}." if source else "Save it to keep it."
        merged = recovered.merge
        if merged is not None and merged.new_runs:
            count = len(merged.new_runs)
            where += f" {count} run{'s' if count != 1 else ''} saved to the file after the crash {'are' if count != 1 else 'is'} in it."
        if merged is not None and merged.conflicts:
            where += f" The file changed there too ({', '.join(merged.conflicts)}): saving will ask which to keep."
        if recovered.file_error:
            where += f" ({recovered.file_error})"
        self.hooks.show_banner(f"Recovered {recovery.describe()}. It is unsaved work: {where}")
        return True

    # ------------------------------------------------------------------ drag and drop
    @staticmethod
    def dropped_paths(event: QDropEvent) -> list[str]:
        mime = event.mimeData()
        if mime is None or not mime.hasUrls():
            return []
        return [url.toLocalFile() for url in mime.urls() if isinstance(url, QUrl) and url.isLocalFile()]

    def open_dropped(self, paths: Sequence[str]) -> None:
        """A dropped session opens (the first one, if several); a CSV goes to the profile import."""
        sessions = [p for p in paths if Path(p).suffix.lower() in SESSION_SUFFIXES]
        profiles = [p for p in paths if Path(p).suffix.lower() in PROFILE_SUFFIXES]
        others = [p for p in paths if p not in sessions and p not in profiles]
        messages = []
        if sessions:
            self.hooks.open_session(sessions[0])
            if len(sessions) > 1:
                messages.append(f"one session at a time: opened {os.path.basename(sessions[0])}, not {_names(sessions[1:])}")
        for path in profiles:
            self.hooks.import_profile(path)
        if others:
            messages.append(f"{_names(others)}: not a session (.json) or a profiler export (.csv)")
        if messages:
            self._status("Dropped " + "; ".join(messages))

    # ------------------------------------------------------------------ report export
    def export_report_dialog(self) -> None:
        doc = self.document
        stem = Path(doc.path).stem if doc.path else "report"
        folder = os.path.dirname(doc.path) if doc.path else ""
        filters = ";;".join(name for name, _ in REPORT_FILTERS)
        path, chosen = QFileDialog.getSaveFileName(
            self.host, "Export report", os.path.join(folder, f"{stem}.html"), filters
        )
        if not path:
            return
        if not Path(path).suffix:
            path += dict(REPORT_FILTERS).get(chosen, ".html")
        self.export_report(path)

    def current_plot(self) -> str | None:
        """The roofline as the window shows it (its levels, range, label mode, legend corner, selection, pins and
        stale operations), drawn as SVG from the scenes without a window; None where there is none."""
        from workbench.documents.report.plot import roofline_plot  # imported on the first export, not at start

        view, doc = self.hooks.roofline_view(), self.document
        operations = [PlacedOperation(row, entry.name, doc.state(entry).analysis, doc.state(entry).stale)
                      for row, entry in enumerate(doc.operations)]
        rows = {id(entry): row for row, entry in enumerate(doc.operations)}
        pins = [rows[id(entry)] for entry in view.pinned if id(entry) in rows]
        return roofline_plot(doc.session, view.state, doc.current, pins, operations, level_method=doc.level_method)

    def export_report(self, path: str) -> bool:
        """Write a Markdown, HTML (with the roofline) or CSV report of the session; a fault shows in the banner."""
        try:
            kind = report_kind(path)
            plot = None if kind == "csv" else self.current_plot()
            write_report(self.document.session, path, plot)
        except WorkbenchError as exc:
            self.hooks.show_banner(f"Cannot export the report {os.path.basename(path)}: {exc}")
            return False
        files = report_files(path, plot is not None)
        beside = f" and {', '.join(f.name for f in files[1:])} beside it" if len(files) > 1 else ""
        self._status(f"Wrote {kind} report {path}{beside}")
        return True

    # ------------------------------------------------------------------ status
    def _status(self, text: str) -> None:
        if shiboken6.isValid(self.host):
            self.hooks.show_status(text, STATUS_MS)
