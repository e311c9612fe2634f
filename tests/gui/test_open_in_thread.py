"""Opening a session off the GUI thread: the file is read, parsed and validated in the reader's thread while the
window stays live and says what it opens (with a Cancel button); the document is replaced only when the read
succeeded; a failed, cancelled or abandoned read (the window closing) leaves it as it was, and nothing is left
running.

A deliberately slow read stands in for a large file: `workbench.gui.reader.read_session_file` waits until the
test lets it go, from a timer on the GUI thread. Were the file read on the GUI thread, that timer could not fire
while the read waits, and the read would give up waiting (the test fails, it never hangs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QTimer

from workbench.gui import reader as reader_module
from workbench.documents.session import save

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 20.0  # the most the slow read waits for the GUI thread to let it go
OPENED = ["gemm(M=512, N=512, K=512, dtype=fp16)", "add(n=2**20, dtype=fp32)"]


class SlowRead:
    """Replaces the reader's read function: the read waits (in whatever thread it runs) until `release()`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.real = reader_module.read_session_file
        self.started = threading.Event()
        self.go = threading.Event()
        self.threads: list[threading.Thread] = []
        self.released_in_time: list[bool] = []
        monkeypatch.setattr(reader_module, "read_session_file", self)

    def __call__(self, path: Any) -> Any:
        self.threads.append(threading.current_thread())
        self.started.set()
        self.released_in_time.append(self.go.wait(WAIT_S))
        return self.real(path)

    def release(self) -> None:
        self.go.set()


def while_reading(read: SlowRead, action: Callable[[], None]) -> list[bool]:
    """Run `action` on the GUI thread once the read is waiting; the list says whether it ran while the read was
    still waiting (the GUI thread was free during the read)."""
    ran: list[bool] = []

    def poll() -> None:
        if not read.started.is_set():
            QTimer.singleShot(5, poll)
            return
        ran.append(not read.go.is_set())
        action()

    QTimer.singleShot(0, poll)
    return ran


def session_file(tmp_path: Path, name: str = "opened.json") -> Path:
    from workbench.documents.session import OperationEntry, Session

    path = tmp_path / name
    save(Session(operations=[OperationEntry.automatic(text) for text in OPENED], title="opened"), path)
    return path


def test_a_session_is_read_in_a_thread_while_the_window_says_so(window, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = session_file(tmp_path)
    before = window.document.session
    read = SlowRead(monkeypatch)
    seen: dict[str, Any] = {}

    def look() -> None:  # on the GUI thread, during the read
        seen["status"] = window.opening_status.text()
        seen["cancel shown"] = window.cancel_open.isVisible()
        seen["document"] = window.document.session
        read.release()

    ran = while_reading(read, look)
    assert window.open_session(str(path))
    assert ran == [True] and read.released_in_time == [True]
    assert read.threads and read.threads[0] is not threading.main_thread()
    assert seen == {"status": "Opening opened.json…", "cancel shown": True, "document": before}
    assert [entry.declaration for entry in window.document.operations] == OPENED
    assert window.document.path == str(path) and not window.cancel_open.isVisible()
    assert window.session_io.outside.base is not None  # what a later save merges against: the bytes just read


def test_a_file_that_does_not_read_leaves_the_document_and_says_why(window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window.document.edit_declaration(0, "gemm(M=64, N=64, K=64, dtype=fp16)")  # unsaved work
    session, undo = window.document.session, window.document.undo_stack.count()
    broken = tmp_path / "broken.json"
    text = session_file(tmp_path).read_text()
    broken.write_text(text[: len(text) // 2])
    assert window.open_session(str(broken)) is False
    assert window.banner.isVisible() and window.banner.text().startswith("Cannot open broken.json:")
    assert "looks truncated" in window.banner.text()
    assert window.document.session is session and window.document.undo_stack.count() == undo
    assert window.document.operations[0].declaration == "gemm(M=64, N=64, K=64, dtype=fp16)"
    assert not window.reader.busy() and not window.cancel_open.isVisible()


def test_cancel_leaves_the_document_as_it_was(window, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = session_file(tmp_path)
    session = window.document.session
    read = SlowRead(monkeypatch)
    ran = while_reading(read, window.cancel_open.click)
    assert window.open_session(str(path)) is False
    assert ran == [True]
    assert window.document.session is session and window.document.path is None
    assert "cancelled" in window.statusBar().currentMessage()
    read.release()
    window.reader.finish(timeout_s=WAIT_S)  # the abandoned read ends; its result is dropped
    assert not any(thread.is_alive() for thread in read.threads)
    assert window.document.session is session


def test_another_open_during_a_read_is_refused_and_another_session_cancels_it(window, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = session_file(tmp_path)
    read = SlowRead(monkeypatch)
    answers: list[bool] = []

    def during() -> None:
        answers.append(window.open_session(str(path)))  # refused at once: one read at a time
        window.open_example("batched-gemm-sweep")  # another session shown

    ran = while_reading(read, during)
    assert window.open_session(str(path)) is False
    assert ran == [True] and answers == [False]
    assert window.document.path is None  # the example, not the file
    read.release()
    window.reader.finish(timeout_s=WAIT_S)


def test_closing_the_window_during_a_read_drops_it_and_ends_its_thread(qtbot, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from conftest import no_driver

    from workbench.gui.app import build_window

    window = build_window(detect=no_driver)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    path = session_file(tmp_path)
    session = window.document.session
    read = SlowRead(monkeypatch)

    def close() -> None:
        read.release()
        window.close()

    ran = while_reading(read, close)
    assert window.open_session(str(path)) is False
    assert ran == [True] and not window.isVisible()
    assert not any(thread.is_alive() for thread in read.threads)  # closing waited for it
    assert window.document.session is session
    window.wait_for_workers()


QUIT_DURING_OPEN = """
    import sys, threading, time
    from PySide6.QtCore import QSettings, QTimer
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, {settings!r})
    from workbench.gui import reader
    from workbench.gui.app import build_window, ensure_application
    started = threading.Event()
    real = reader.read_session_file
    def slow(path):
        started.set()
        time.sleep(1.0)  # a large file's parse
        return real(path)
    reader.read_session_file = slow
    app = ensure_application()
    window = build_window()
    window.show()
    def close():
        if not started.is_set():
            QTimer.singleShot(5, close)
            return
        window.close()
    QTimer.singleShot(0, close)
    QTimer.singleShot(0, lambda: print("opened:", window.open_session({path!r}), flush=True))
    app.exec()
    print("threads:", sorted(t.name for t in threading.enumerate() if t is not threading.main_thread()), flush=True)
"""


def test_quitting_during_an_open_exits_cleanly(tmp_path: Path) -> None:
    """The app quits (its last window closed) while a session is read: it exits at once with status 0, the read
    dropped, no thread left and nothing said on stderr (no Qt thread warning, no traceback)."""
    path = session_file(tmp_path)
    script = textwrap.dedent(QUIT_DURING_OPEN).format(settings=str(tmp_path / "settings"), path=str(path))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PERF_WORKBENCH_DATA_DIR=str(tmp_path / "data"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "opened: False" in lines and "threads: []" in lines, result.stdout
    noise = [line for line in result.stderr.splitlines() if "propagateSizeHints" not in line]  # the offscreen plugin's
    assert noise == [], result.stderr


def test_start_up_with_a_file_shows_it(tmp_path: Path) -> None:
    """`workbench FILE` reads the file in the reader's thread before the window is shown, and shows it."""
    path = session_file(tmp_path)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PERF_WORKBENCH_DATA_DIR=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    result = subprocess.run([sys.executable, "-m", "workbench", "gui", str(path), "--check"], capture_output=True,
                            text=True, env=env, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "window shown: True; opened.json" in result.stdout and "2 operation(s)" in result.stdout
    json.loads(path.read_text())  # the file is left as it was (read, not rewritten)
