"""Saving and autosaving off the GUI thread: the window stays live while the file is written, edits made during
a save stay unsaved, a failed save says why with nothing lost, saves never interleave, and closing waits.

A deliberately slow writer stands in for a large session's encoding: `workbench.documents.session_sync.save` (what
`save_merged` writes with) waits until the test lets it go. The test lets it go from a timer on the GUI
thread: were the save written on the GUI thread, that timer could not fire while the writer waits, and the
writer would give up waiting (the test fails, it never hangs).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QTimer

from workbench.documents import autosave, session_sync
from workbench.documents import session as session_module
from workbench.documents.examples import load_example
from workbench.documents.session import SessionError

EDITED = "gemm(M=1024, N=4096, K=4096, dtype=fp16)"
DURING = "gemm(M=2048, N=4096, K=4096, dtype=fp16)"
WAIT_S = 20.0  # the most the slow writer waits for the GUI thread to let it go


class SlowWriter:
    """Replaces a write function: the write waits (in whatever thread it runs) until `release()`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
        self.real = getattr(module, name)
        self.started = threading.Event()
        self.go = threading.Event()
        self.threads: list[threading.Thread] = []
        self.released_in_time: list[bool] = []
        monkeypatch.setattr(module, name, self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(threading.current_thread())
        self.started.set()
        self.released_in_time.append(self.go.wait(WAIT_S))
        return self.real(*args, **kwargs)

    def release(self) -> None:
        self.go.set()


def while_writing(writer: SlowWriter, action: Callable[[], None]) -> list[bool]:
    """Run `action` on the GUI thread once the writer is waiting, then let the writer go; the list says whether
    the action ran while the writer was still waiting (the GUI thread was free during the write)."""
    ran: list[bool] = []

    def poll() -> None:
        if not writer.started.is_set():
            QTimer.singleShot(5, poll)
            return
        ran.append(not writer.go.is_set())
        action()
        writer.release()

    QTimer.singleShot(0, poll)
    return ran


def saved_lab(tmp_path: Path) -> Path:
    path = tmp_path / "lab.json"
    session_module.save(load_example("gemm-4096-fp16"), path)
    return path


def edited_lab(window, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A saved session opened in the window, its first declaration edited (unsaved); the file's path."""
    path = saved_lab(tmp_path)
    assert window.open_session(str(path))
    window.document.edit_declaration(0, EDITED)
    return path


def test_the_window_stays_live_while_a_save_is_written_in_another_thread(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = edited_lab(window, tmp_path)
    writer = SlowWriter(monkeypatch, session_sync, "save")
    painted: list[bool] = []
    ran = while_writing(writer, lambda: painted.append(window.isVisible() and window.session_io.saving))
    assert window.save_to(str(path)), window.banner.text()
    assert ran == [True] and painted == [True]  # a timer fired on the GUI thread while the file was being written
    assert writer.released_in_time == [True]
    assert writer.threads and writer.threads[0] is not threading.main_thread()
    assert session_module.load(path).operations[0].declaration == EDITED
    assert not window.isWindowModified() and window.document.undo_stack.isClean()


def test_edits_made_while_a_save_is_written_keep_the_document_unsaved(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = edited_lab(window, tmp_path)
    writer = SlowWriter(monkeypatch, session_sync, "save")
    ran = while_writing(writer, lambda: window.document.edit_declaration(0, DURING))
    assert window.save_to(str(path)), window.banner.text()
    assert ran == [True]
    assert session_module.load(path).operations[0].declaration == EDITED  # the state the save began from
    assert window.document.operations[0].declaration == DURING
    assert window.isWindowModified() and not window.document.undo_stack.isClean()
    assert "not saved yet" in window.statusBar().currentMessage()
    window.document.undo_stack.undo()  # back to what the file holds: still marked unsaved (conservative), never the other way
    assert window.isWindowModified()
    window.document.undo_stack.redo()
    writer.go.set()  # the next save is not held
    assert window.save_to(str(path))
    assert session_module.load(path).operations[0].declaration == DURING
    assert not window.isWindowModified()


def test_an_edit_undone_while_the_save_is_written_leaves_the_document_saved(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Clean is decided by what the document holds against what was written, not by counting edits."""
    path = saved_lab(tmp_path)
    assert window.open_session(str(path))
    window.document.rename_operation(0, "renamed before the save")  # an edit the declaration's edits do not merge into
    writer = SlowWriter(monkeypatch, session_sync, "save")
    declaration = window.document.operations[0].declaration

    def edit_and_undo() -> None:
        window.document.edit_declaration(0, DURING)
        window.document.undo_stack.undo()

    while_writing(writer, edit_and_undo)
    assert window.save_to(str(path))
    assert window.document.operations[0].declaration == declaration
    assert session_module.load(path).operations[0].name == "renamed before the save"
    assert not window.isWindowModified()


def test_undoing_to_the_last_saved_state_while_a_save_is_written_is_still_unsaved(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The undo stack's clean state is the last save's; undoing back to it during a save would have shown the
    document as saved, while the file now holds the edit."""
    path = saved_lab(tmp_path)
    assert window.open_session(str(path))
    original = window.document.operations[0].declaration
    window.document.edit_declaration(0, EDITED)
    writer = SlowWriter(monkeypatch, session_sync, "save")
    while_writing(writer, window.document.undo_stack.undo)
    assert window.save_to(str(path))
    assert window.document.operations[0].declaration == original
    assert session_module.load(path).operations[0].declaration == EDITED
    assert window.isWindowModified() and not window.document.undo_stack.isClean()


def test_a_failing_save_says_why_and_keeps_the_work_unsaved(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = saved_lab(tmp_path)
    before = path.read_bytes()
    assert window.open_session(str(path))
    window.document.edit_declaration(0, EDITED)

    def full_disk(*args: Any, **kwargs: Any) -> Any:
        raise SessionError(f"cannot save session {path}: No space left on device; the previous file (if any) is unchanged")

    monkeypatch.setattr(session_sync, "save", full_disk)
    assert window.save_to(str(path)) is False
    assert window.banner.isVisible()
    assert "Cannot save lab.json" in window.banner.text() and "No space left on device" in window.banner.text()
    assert "still unsaved" in window.banner.text()
    assert path.read_bytes() == before
    assert window.isWindowModified() and window.document.operations[0].declaration == EDITED

    def out_of_memory(*args: Any, **kwargs: Any) -> Any:  # not the project's error: still said, not a traceback
        raise MemoryError("no room for the encoded session")

    monkeypatch.setattr(session_sync, "save", out_of_memory)
    assert window.save_to(str(path)) is False
    assert "MemoryError: no room for the encoded session" in window.banner.text()
    assert path.read_bytes() == before and window.isWindowModified()


def test_save_asked_again_while_one_is_written_saves_once_more_after_it(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = edited_lab(window, tmp_path)
    writer = SlowWriter(monkeypatch, session_sync, "save")
    again: list[bool] = []

    def edit_and_save_again() -> None:
        window.document.edit_declaration(0, DURING)
        again.append(window.save_session())  # does not write beside the first: it follows it

    while_writing(writer, edit_and_save_again)
    assert window.save_to(str(path))
    assert again == [False]
    assert len(writer.threads) == 2  # two saves, one after the other
    assert session_module.load(path).operations[0].declaration == DURING
    assert not window.isWindowModified()


def test_closing_while_a_save_is_written_waits_for_it_then_closes(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = edited_lab(window, tmp_path)
    writer = SlowWriter(monkeypatch, session_sync, "save")
    closed: list[bool] = []
    asked: list[str] = []
    window.session_io.ask_unsaved_changes = lambda action: asked.append(action) or "cancel"
    while_writing(writer, lambda: closed.append(window.close()))
    assert window.save_to(str(path))
    assert closed == [False]  # not while the file was being written
    for _ in range(50):
        if not window.isVisible():
            break
        QTimer.singleShot(10, lambda: None)
        window.session_io.writer.finish()
        from PySide6.QtWidgets import QApplication

        QApplication.processEvents()
    assert not window.isVisible()  # closed once it was written, with nothing left to ask
    assert asked == []
    assert session_module.load(path).operations[0].declaration == EDITED


def test_replacing_the_session_waits_for_the_save(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = edited_lab(window, tmp_path)
    writer = SlowWriter(monkeypatch, session_sync, "save")
    refused: list[bool] = []
    while_writing(writer, lambda: refused.append(window.open_session(str(path))))
    assert window.save_to(str(path))
    assert refused == [False]
    assert window.document.path == str(path) and window.document.operations[0].declaration == EDITED


def test_an_autosave_is_written_in_another_thread_and_stopped_by_a_save(window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    files = window.session_io
    window.document.edit_declaration(0, EDITED)
    writer = SlowWriter(monkeypatch, autosave, "write_atomic")
    ran = while_writing(writer, lambda: None)
    assert files.autosave_now()
    assert ran == [True] and writer.threads[0] is not threading.main_thread()
    assert files.autosaver.exists

    # An autosave in progress when the work is saved is not left behind as work to recover.
    window.document.edit_declaration(0, DURING)
    writer.go.clear()
    writer.started.clear()
    assert files.start_autosave()  # returns at once: the timer does not wait for it
    assert files.autosave_in_flight()
    writer.release()
    assert window.save_to(str(tmp_path / "saved.json"))
    files.writer.finish()
    assert not files.autosaver.exists
    assert not files.autosave_in_flight()
