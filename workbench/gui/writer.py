"""The window's writes of its session file and its recovery file, off the GUI thread, one at a time.

Encoding and writing a session of thousands of runs takes seconds; done on the
GUI thread it froze the window. A `Writer` runs each job (a function) in a
thread of its own (a Python thread, which leaves no trace once done), one job
after another in the order they were asked: a save and an autosave never
interleave, and a recovery file is discarded only after the writes of it asked
for before. The job's result, or the error it raised, comes back on the GUI
thread to the callback given with it. `run` waits for one job with the
window's events delivered meanwhile (a nested event loop, as a modal dialog
has): the window repaints and takes keystrokes, and the caller gets the result
where it asked for it. `finish` (the window closing) waits for what is queued.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections import deque
from typing import Any, Callable

from PySide6.QtCore import QEventLoop, QObject, Qt, Signal

from workbench.errors import WorkbenchError
from workbench.documents.session import SessionError

# While a job runs, how long the GUI thread waits at most for the interpreter lock held by the job's thread
# (Python's default is 5 ms). Every call from Qt into Python (a paint of a plot item, a timer's slot) takes the
# lock: a repaint making a few hundred of them waited seconds behind an encoding thread at 5 ms each.
SWITCH_INTERVAL_S = 0.0002

Done = Callable[[Any, "BaseException | None"], None]  # (result, error): error is None when the job succeeded

# The interpreter's own switch interval while some worker (a write job, a session being read: gui/reader.py) has
# it shortened, and how many have; restored when the last one is done.
_switch: dict[str, Any] = {"holders": 0, "interval": None}


def shorten_switch_interval() -> None:
    """While a worker thread runs Python, the GUI thread waits at most SWITCH_INTERVAL_S for the interpreter lock;
    each call pairs with one `restore_switch_interval`."""
    if _switch["holders"] == 0:
        _switch["interval"] = sys.getswitchinterval()
        sys.setswitchinterval(min(SWITCH_INTERVAL_S, _switch["interval"]))
    _switch["holders"] += 1


def restore_switch_interval() -> None:
    """One worker done: the interpreter's own switch interval again once none needs it shortened."""
    _switch["holders"] -= 1
    if _switch["holders"] == 0:
        sys.setswitchinterval(_switch["interval"])


class _Job:
    """One job and the thread it runs in; what it returned or raised is kept for the GUI thread."""

    def __init__(self, work: Callable[[], Any], done: Done, finished: Callable[["_Job"], None]) -> None:
        self.work = work
        self.done = done
        self.result: Any = None
        self.error: BaseException | None = None
        self._finished = finished
        # A Python thread (not a QThread): it ends without a trace once its job is done. Not a daemon: the
        # interpreter waits for a write in progress before it exits.
        self.thread = threading.Thread(target=self._run, name="workbench-writer")

    def _run(self) -> None:
        try:
            self.result = self.work()
        except WorkbenchError as exc:
            self.error = exc
        except Exception as exc:  # a fault of ours or of the system (memory): said in the window, nothing lost
            traceback.print_exc(file=sys.stderr)
            self.error = SessionError(f"{type(exc).__name__}: {exc}")
        self._finished(self)


class Writer(QObject):
    """Runs write jobs one after another, each in a thread, and hands results back on the GUI thread."""

    _job_done = Signal(object)  # a _Job whose work has returned or raised (emitted in its thread)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: deque[_Job] = deque()
        self._current: _Job | None = None
        self._switch_shortened = False  # whether this writer's jobs have the switch interval shortened
        self._job_done.connect(self._job_finished, Qt.ConnectionType.QueuedConnection)

    def busy(self) -> bool:
        """Whether a job is running or waiting."""
        return self._current is not None or bool(self._queue)

    def submit(self, work: Callable[[], Any], done: Done) -> None:
        """Run `work` in a thread once the jobs asked before it are done; then `done(result, error)` here."""
        self._queue.append(_Job(work, done, self._job_done.emit))
        self._start_next()

    def run(self, work: Callable[[], Any]) -> Any:
        """Run `work` in a thread (after the jobs queued before it) and return what it returns, or raise what it
        raised; the window's events are delivered meanwhile."""
        outcome: list[tuple[Any, BaseException | None]] = []
        loop = QEventLoop()

        def done(result: Any, error: BaseException | None) -> None:
            outcome.append((result, error))
            loop.quit()

        self.submit(work, done)
        if not outcome:
            loop.exec()
        result, error = outcome[0]
        if error is not None:
            raise error
        return result

    def finish(self) -> None:
        """Run every queued job to its end now, waiting here (the window is closing)."""
        while self._current is not None or self._queue:
            if self._current is None:
                self._current = self._queue.popleft()
                self._current.thread.start()
            job = self._current
            job.thread.join()
            self._current = None
            job.done(job.result, job.error)
        self._restore_switch_interval()

    def _start_next(self) -> None:
        if self._current is not None or not self._queue:
            self._restore_switch_interval()
            return
        if not self._switch_shortened:
            self._switch_shortened = True
            shorten_switch_interval()
        self._current = self._queue.popleft()
        self._current.thread.start()

    def _restore_switch_interval(self) -> None:
        if self._switch_shortened and self._current is None and not self._queue:
            self._switch_shortened = False
            restore_switch_interval()

    def _job_finished(self, job: _Job) -> None:
        if job is not self._current:
            return  # finish() has handled it already
        job.thread.join()
        self._current = None
        try:
            job.done(job.result, job.error)
        finally:
            self._start_next()
