"""The window's reads of session files, off the GUI thread, with a cancel.

Reading, parsing and validating a session of thousands of runs takes seconds
(tens of MB of JSON); done on the GUI thread it froze the window. A
`SessionReader` reads one file at a time in a thread of its own (a Python
thread, as `gui/writer.py`'s jobs are): the bytes (bounded), the session parsed
and validated from them, and the snapshot a later save merges against. `read`
waits for it with the window's events delivered meanwhile (a nested event
loop, as a modal dialog has, and as the writer's `run` does): the window
repaints, takes keys, and its Cancel button works. The caller gets the session
where it asked for it, or the project's error, and replaces its document only
then: a failed or cancelled read leaves the document as it was.

A cancelled read stops waiting at once; its thread is told to stop and its
result is dropped. `finish` (the window closing) waits for a thread still
running, so the interpreter never exits under it.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QEventLoop, QObject, Qt, Signal

from workbench.errors import WorkbenchError
from workbench.gui.writer import restore_switch_interval, shorten_switch_interval
from workbench.measure.runs import read_runs
from workbench.documents.session import Session, SessionError
from workbench.documents.session_sync import DiskStamp, Snapshot, read_session_file


class ReadCancelled(WorkbenchError):
    """The read was cancelled (the Cancel button, another session shown, the window closing)."""


@dataclass(frozen=True)
class ReadSession:
    """What a read brings back: the session, the snapshot of the bytes it was read from, and the file's identity
    taken before they were read (a change after that is seen as one)."""

    session: Session
    snapshot: Snapshot
    stamp: DiskStamp | None


def read_with_snapshot(path: str) -> ReadSession:
    """Read, parse and validate the session file at `path`, parse its runs, and take the snapshot of its bytes
    (SessionError on any fault of the file); what the reader's thread runs."""
    stamp = DiskStamp.of(path)
    session, data = read_session_file(path)
    read_runs(session.runs)  # each run parsed here, once (kept by runs.read_runs for the views that list them)
    return ReadSession(session, Snapshot.of(session, data), stamp)


class _Read:
    """One read in its thread; what it returned or raised is kept for the GUI thread."""

    def __init__(self, path: str, work: Callable[[str], ReadSession], finished: Callable[["_Read"], None]) -> None:
        self.path = path
        self.work = work
        self.result: ReadSession | None = None
        self.error: BaseException | None = None
        self.cancelled = threading.Event()
        self._finished = finished
        # Not a daemon: the interpreter waits for it at exit (it is only reading, and `finish` waits first).
        self.thread = threading.Thread(target=self._run, name="workbench-reader")

    def _run(self) -> None:
        try:
            self.result = self.work(self.path)
        except WorkbenchError as exc:
            self.error = exc
        except OSError as exc:
            self.error = SessionError(str(exc))
        except Exception as exc:  # a fault of ours or of the system (memory): said in the window, nothing lost
            traceback.print_exc(file=sys.stderr)
            self.error = SessionError(f"{type(exc).__name__}: {exc}")
        if not self.cancelled.is_set():
            self._finished(self)


class SessionReader(QObject):
    """Reads session files in a thread, one at a time, and hands the result back on the GUI thread."""

    reading_changed = Signal(str)  # the file being read (its name), or "" when none is
    _read_done = Signal(object)  # a _Read whose work has returned or raised (emitted in its thread)

    def __init__(self, parent: QObject | None = None, work: Callable[[str], ReadSession] = read_with_snapshot) -> None:
        super().__init__(parent)
        self._work = work
        self._current: _Read | None = None
        self._loop: QEventLoop | None = None
        self._abandoned: list[_Read] = []  # cancelled reads whose threads may still be running
        self._read_done.connect(self._finished, Qt.ConnectionType.QueuedConnection)

    def busy(self) -> bool:
        """Whether a read is under way."""
        return self._current is not None

    def reading(self) -> str:
        """The path being read, or ""."""
        return self._current.path if self._current is not None else ""

    def read(self, path: str) -> ReadSession:
        """Read `path` in a thread and return what it read, or raise its SessionError, or ReadCancelled when
        `cancel` was called meanwhile; the window's events are delivered while it waits. One read at a time:
        asked during another, it raises ReadCancelled at once."""
        if self._current is not None:
            raise ReadCancelled(f"{os.path.basename(self._current.path)} is being opened")
        read = self._current = _Read(path, self._work, self._read_done.emit)
        loop = self._loop = QEventLoop()
        self.reading_changed.emit(os.path.basename(path))
        shorten_switch_interval()  # the window stays quick to answer while the thread parses (gui/writer.py)
        try:
            read.thread.start()
            loop.exec()
        finally:
            restore_switch_interval()
            self._loop = None
            self._current = None
            self.reading_changed.emit("")
        if read.cancelled.is_set():
            raise ReadCancelled(f"Opening {os.path.basename(path)} cancelled")
        read.thread.join()
        if read.error is not None:
            raise read.error
        assert read.result is not None
        return read.result

    def cancel(self) -> bool:
        """Stop waiting for the read under way (its result is dropped; the document stays as it is); True if
        there was one."""
        read, loop = self._current, self._loop
        if read is None:
            return False
        read.cancelled.set()
        self._abandoned = [*(kept for kept in self._abandoned if kept.thread.is_alive()), read]
        if loop is not None:
            loop.quit()
        return True

    def finish(self, timeout_s: float | None = None) -> None:
        """Cancel a read under way and wait for every reading thread to end (the window is closing)."""
        self.cancel()
        for read in self._abandoned:
            read.thread.join(timeout_s)
        self._abandoned = [read for read in self._abandoned if read.thread.is_alive()]

    def _finished(self, read: _Read) -> None:
        if read is self._current and self._loop is not None:
            self._loop.quit()
