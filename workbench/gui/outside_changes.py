"""The window's session file as others change it: a watch on the file, the merge of what they saved, and the
question when both sides changed the same part.

`OutsideChanges` keeps the file as the window last read or wrote it (a
`workbench.documents.session_sync.Snapshot`) and watches it with a QFileSystemWatcher
(the folder too: an atomic replace by another program removes the file the
watch was on). When the file's identity (device, inode, size, mtime) changes,
it reads it and merges: runs and operations another program appended join the
document at once (the run table and the plots follow `runs_changed`), with a
status-bar line saying so; parts only the file changed are taken; parts both
changed are left as the window has them, a banner says so, and the next save
asks. Saving (`save`) goes through `save_merged`, under the file's lock, after
the same check of the file's content, so a save never overwrites what it has
not seen. The merge itself is the core's (Qt-free).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import shiboken6
from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer
from PySide6.QtWidgets import QMessageBox, QWidget

from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.files import FileReadError, read_bounded
from workbench.documents.session import MAX_FILE_BYTES, RunEncodings, Session, SessionError, same_session, snapshot
from workbench.documents.session_sync import (
    DiskStamp,
    Merge,
    SaveOutcome,
    Snapshot,
    digest,
    merge,
    read_session_file,
    save_merged,
    unused_path,
)

CHECK_DELAY_MS = 150  # a burst of file events (write, rename, folder change) becomes one check
STATUS_MS = 15000

# answers to the conflict question
RELOAD = "reload"
KEEP_COPY = "copy"
MERGE = "merge"
CANCEL = "cancel"


@dataclass(frozen=True)
class Say:
    """How OutsideChanges speaks to the user: the status bar and the banner of the window it serves."""

    status: Callable[[str, int], None]
    banner: Callable[[str], None]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def describe_merge(name: str, merged: Merge) -> str:
    """One status line: what another program saved to `name` and what the window took in."""
    pieces = []
    if merged.new_runs:
        shown = sorted({str(run.get("declaration", "?")) for run in merged.new_runs})
        more = f" and {len(shown) - 2} more" if len(shown) > 2 else ""
        pieces.append(f"{_plural(len(merged.new_runs), 'run')} of {', '.join(shown[:2])}{more}")
    added_ops = len(merged.appended.get("operations", []))
    if added_ops:
        pieces.append(_plural(added_ops, "operation"))
    if merged.removed_runs:
        pieces.append(f"{_plural(merged.removed_runs, 'run')} removed there")
    if merged.taken:
        pieces.append("changes to " + ", ".join(merged.taken))
    if not pieces:
        return ""
    return f"From {name} on disk, saved by another program: {'; '.join(pieces)} — now shown here"


class OutsideChanges(QObject):
    """The document's file on disk: watched, merged into the document, and saved without overwriting others."""

    def __init__(
        self, document: Document, host: QWidget, say: Say, run: Callable[[Callable[[], Any]], Any] | None = None
    ) -> None:
        super().__init__(host)
        self.document = document
        self.host = host
        self.say = say
        # How a save's encoding and writing is run: the window's writer thread (gui/writer.py), else here.
        self.run: Callable[[Callable[[], Any]], Any] = run if run is not None else (lambda work: work())
        self.encodings = RunEncodings()  # each run's text, made once (used by one save or autosave at a time)
        self.saving = False  # a save is being written: a change of the file on disk is looked at after it
        self.base: Snapshot | None = None  # the file as the window last read or wrote it
        self.stamp: DiskStamp | None = None  # its identity then
        self.conflicts: list[str] = []  # parts both changed, found by the last check
        self._expected: tuple[Snapshot, str, DiskStamp | None] | None = None  # see `expect`
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._changed)
        self.watcher.directoryChanged.connect(self._changed)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(CHECK_DELAY_MS)
        self.timer.timeout.connect(self.check_now)
        document.session_replaced.connect(self._session_replaced)
        document.path_changed.connect(self._watch)

    # ------------------------------------------------------------------ what the window knows of the file
    def adopt(self, snapshot: Snapshot | None, path: str | None = None, stamp: DiskStamp | None = None) -> None:
        """The document now matches `snapshot` of its file (after an open or a save); None: nothing is known.
        `stamp`: the file's identity taken before it was read (else now)."""
        self.base = snapshot
        self.stamp = stamp if stamp is not None else DiskStamp.of(path or self.document.path or "")
        self.conflicts = []
        self._watch()

    def expect(self, snapshot: Snapshot, path: str, stamp: DiskStamp | None) -> None:
        """The session about to be shown was read from `path` as `snapshot` (an open, read in a thread): taken
        when it is shown instead of reading the file again."""
        self._expected = (snapshot, os.path.abspath(path), stamp)

    def _session_replaced(self) -> None:
        """Another session is shown. A caller that read the file says what it read (`expect` before, `adopt`
        after); otherwise the file as it is now is taken to be what the document was loaded from."""
        expected, self._expected = self._expected, None
        self.conflicts = []
        path = self.document.path
        if expected is not None and path == expected[1]:
            self.adopt(expected[0], path, expected[2])
            return
        self.base = None
        self.stamp = None
        if path and os.path.isfile(path):
            try:
                data = read_bounded(path, MAX_FILE_BYTES, "session file")
            except FileReadError:
                pass
            else:
                self.base = Snapshot.of(self.document.session, data)
                self.stamp = DiskStamp.of(path)
        self._watch()

    def _watch(self) -> None:
        watched = [*self.watcher.files(), *self.watcher.directories()]
        if watched:
            self.watcher.removePaths(watched)
        path = self.document.path
        if path:
            folder = os.path.dirname(path)
            self.watcher.addPaths([p for p in (path, folder) if os.path.exists(p)])

    def _changed(self, *_: object) -> None:
        self.timer.start()

    # ------------------------------------------------------------------ reading what others saved
    def check_now(self) -> Merge | None:
        """Read the file when its identity changed, and take in what another program saved; the merge, if any."""
        path = self.document.path
        if not path or not shiboken6.isValid(self.host):
            return None
        if self.saving:  # the change may be this window's own save: looked at once the save has adopted it
            self.timer.start()
            return None
        if path not in self.watcher.files() and os.path.exists(path):
            self.watcher.addPath(path)  # an atomic replace ended the watch on the old file
        stamp = DiskStamp.of(path)
        if stamp is None or stamp == self.stamp:
            return None
        try:
            theirs, data = read_session_file(path)
        except SessionError as exc:  # half-written by a program that does not replace atomically, or damaged
            self.say.status(f"{os.path.basename(path)} changed on disk and cannot be read now: {exc}", STATUS_MS)
            return None
        self.stamp = stamp
        if self.base is not None and digest(data) == self.base.digest:
            return None  # touched, not changed (or this window's own save)
        merged = merge(self.base, self.document.session, theirs)
        self.take_in(merged, Snapshot.of(theirs, data))
        return merged

    def take_in(self, merged: Merge, theirs: Snapshot | None) -> None:
        """Show what the merge took from the file; without conflicts the file as read becomes the base."""
        doc = self.document
        name = os.path.basename(doc.path or "")
        if merged.conflicts:
            # Only what cannot clash (appended runs and items) joins now; the base stays, so the save still sees
            # both sides' changes of the conflicting parts and asks.
            doc.append_from_file(merged.new_runs, merged.appended)
            self.conflicts = list(merged.conflicts)
            self.say.banner(
                f"{name} was changed on disk by another program where it is changed here too "
                f"({', '.join(merged.conflicts)}). Saving will ask whether to reload it, keep yours as a copy, or merge."
            )
        else:
            if merged.only_appended:
                doc.append_from_file(merged.new_runs, merged.appended)
            elif merged.changed_anything:
                doc.take_from_file(merged.session)
            self.base = theirs
            self.conflicts = []
        line = describe_merge(name, merged)
        if line:
            self.say.status(line, STATUS_MS)

    # ------------------------------------------------------------------ saving without overwriting others
    def save(self, path: str, ask: Callable[[str, Sequence[str]], str]) -> bool:
        """Save the document to `path` under the file's lock; True when what it held when asked is safe on disk.

        A file changed since the window read it is merged first; parts both
        changed are put to `ask` (RELOAD, KEEP_COPY, MERGE or CANCEL). The
        document is copied as it is now (`workbench.documents.session.snapshot`) and the
        copy is encoded and written by `run` (the window's writer thread), the
        window live meanwhile: edits made during the save stay unsaved.
        """
        doc = self.document
        path = os.path.abspath(path)
        same_file = doc.path == path
        mine = snapshot(doc.session)
        device = doc.device  # the device the window shows: its runs' figures are cached for it
        encodings = self.encodings
        self.saving = True
        try:
            base = self.base if same_file else None
            outcome = self.run(lambda: save_merged(path, mine, base, overwrite=not same_file, device=device, encodings=encodings))
            if not outcome.written:
                assert outcome.merge is not None and outcome.theirs is not None
                answer = ask(path, outcome.merge.conflicts)
                if answer == RELOAD:
                    doc.replace_session(outcome.theirs, path)
                    self.adopt(outcome.theirs_snapshot, path)
                    self.say.status(f"Reloaded {path} as the other program saved it; the changes made here were dropped", STATUS_MS)
                    return True
                if answer == KEEP_COPY:
                    copy = str(unused_path(path, "my copy"))
                    outcome = self.run(lambda: save_merged(copy, mine, None, overwrite=True, device=device, encodings=encodings))
                    self._saved(copy, mine, outcome)
                    self.say.status(f"Saved this version as {copy}; {os.path.basename(path)} is left as the other program saved it", STATUS_MS)
                    return True
                if answer != MERGE:
                    return False
                outcome = self.run(
                    lambda: save_merged(path, mine, base, keep_mine_in_conflicts=True, device=device, encodings=encodings)
                )
        except WorkbenchError as exc:
            self.say.banner(f"Cannot save {os.path.basename(path)}: {exc}. The work here is unchanged and still unsaved.")
            return False
        finally:
            self.saving = False
        self._saved(path, mine, outcome)
        line = describe_merge(os.path.basename(path), outcome.merge) if outcome.merge is not None else ""
        later = "" if doc.undo_stack.isClean() else " · the changes made while it was written are not saved yet"
        self.say.status(f"Saved {path}" + (f" · {line}" if line else "") + later, STATUS_MS if line or later else 5000)
        return True

    def _saved(self, path: str, mine: Session, outcome: SaveOutcome) -> None:
        """The document after `mine` (its copy when the save began) was written as `outcome` says: what the merge
        took from the file taken in, the file adopted, and clean only if nothing changed since the copy."""
        doc = self.document
        merged = outcome.merge
        if merged is not None and merged.changed_anything:
            if merged.only_appended:
                doc.append_from_file(merged.new_runs, merged.appended)
            elif same_session(doc.session, mine):
                doc.take_from_file(outcome.session)
            else:  # edited while it was written: the file's changes merged into the edits, not over them
                again = merge(Snapshot.of(mine, b""), doc.session, outcome.session)
                if again.changed_anything:
                    doc.take_from_file(again.session)
        doc.set_path(path)
        if same_session(doc.session, outcome.session):
            doc.undo_stack.setClean()
        else:  # the file holds the state the save began from: none on the undo stack is known to be saved
            doc.undo_stack.resetClean()
        self.adopt(outcome.snapshot, path)


def conflict_box(host: QWidget, path: str, conflicts: Sequence[str]) -> tuple[QMessageBox, dict[object, str]]:
    """The question put when the file and the window changed the same parts (built apart from asking it)."""
    box = QMessageBox(host)
    box.setObjectName("saveConflictBox")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Changed on disk too")
    box.setTextFormat(Qt.TextFormat.PlainText)  # names of operations are the user's text, not markup
    box.setText(f"{os.path.basename(path)} was changed by another program where it is changed here too.")
    box.setInformativeText(
        "Changed on both sides: " + ", ".join(conflicts) + ".\n\n"
        "Reload: show the file as it is now (the changes made here are dropped).\n"
        "Keep mine as a copy: save this version beside it; the file stays as the other program left it.\n"
        "Merge: keep this window's version of those parts and everything else both sides added."
    )
    role = QMessageBox.ButtonRole
    answers = {
        box.addButton("Reload", role.DestructiveRole): RELOAD,
        box.addButton("Keep mine as a copy", role.AcceptRole): KEEP_COPY,
        box.addButton("Merge", role.AcceptRole): MERGE,
    }
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    answers[cancel] = CANCEL
    box.setEscapeButton(cancel)
    return box, answers
