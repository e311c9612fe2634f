"""GUI test fixtures: settings in a temporary folder, Qt warnings fail, no thread left behind."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QSettings, QtMsgType, qInstallMessageHandler  # noqa: E402

from workbench.model.devices.nvml import NO_DRIVER, Detection  # noqa: E402

# The offscreen platform plugin says this whenever a top-level window's size hints change;
# it is about the plugin, not about the workbench, and appears for any QMainWindow.
PLATFORM_NOISE = ("This plugin does not support propagateSizeHints()",)


@pytest.fixture(autouse=True)
def qt_settings_in_tmp(tmp_path: Path) -> Iterator[Path]:
    """Point QSettings at a temporary folder so tests never read or write the user's settings."""
    folder = tmp_path / "qsettings"
    folder.mkdir()
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    yield folder


@pytest.fixture(autouse=True)
def session_files_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Autosave and recovery files go to a temporary folder, and the unsaved-changes and recovery
    questions answer at once (Discard, Not now, and Cancel for a save that meets another program's
changes to the same parts) instead of waiting on a modal dialog; a test that
    checks a question replaces it on its window's `session_io`."""
    from workbench.documents.autosave import DATA_DIR_VARIABLE
    from workbench.gui import session_io

    folder = tmp_path / "user-data"
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(folder))
    monkeypatch.setattr(session_io.SessionFiles, "ask_unsaved_changes", lambda self, action: session_io.DISCARD)
    monkeypatch.setattr(session_io.SessionFiles, "ask_recovery", lambda self, found: session_io.RecoveryAnswer(session_io.LATER))
    monkeypatch.setattr(session_io.SessionFiles, "ask_conflict", lambda self, path, conflicts: "cancel")
    return folder


@pytest.fixture(autouse=True)
def application_font_restored(qapp) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """A test that changes the text size (Ctrl++, View ▸ Presentation, set_font_points) changes the application's
    font, which outlives its window: the next test must start at the start-up size, or what it lays out (which
    roof label gets its short text, where a label goes) depends on the tests that ran before it."""
    from PySide6.QtGui import QFont

    font = QFont(qapp.font())
    yield
    qapp.setFont(font)


@pytest.fixture(autouse=True)
def collector_thawed() -> Iterator[None]:
    """`run_app` (`cli.main` with a window) leaves what it froze for the cyclic collector frozen, as the process
    ends after it (gui/app.py): the tests go on, so the collector gets it back after each test."""
    import gc

    yield
    if gc.get_freeze_count():
        gc.unfreeze()


@pytest.fixture(autouse=True)
def fail_on_qt_warnings() -> Iterator[list[str]]:
    """Fail the test on any qWarning, qCritical or qFatal it causes."""
    messages: list[str] = []

    def handler(mode: QtMsgType, context: object, message: str) -> None:
        if mode in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            if message not in PLATFORM_NOISE:
                messages.append(f"{mode.name}: {message}")

    previous = qInstallMessageHandler(handler)
    yield messages
    qInstallMessageHandler(previous)
    assert not messages, "Qt warnings during the test:\n" + "\n".join(messages)


@pytest.fixture(autouse=True)
def no_threads_left() -> Iterator[None]:
    """Fail the test if it leaves a Python thread or a workbench QThread running."""
    from workbench.gui.workers import running_workers

    before = set(threading.enumerate())
    yield
    workers = running_workers()
    for worker in workers:  # let the next test start clean, then report
        worker.wait(5000)
    assert not workers, f"QThreads left running: {workers}"
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not left, f"threads left running: {left}"


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found (NVML Shared Library Not Found)")


@pytest.fixture
def window(qtbot):  # type: ignore[no-untyped-def]
    """The main window, shown offscreen, after its (stand-in) GPU detection has finished."""
    from workbench.gui.app import build_window

    win = build_window(detect=no_driver)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: win.document.detection is not None, timeout=5000)
    yield win
    win.close()
    win.wait_for_workers()


@pytest.fixture
def typing_window(qtbot):  # type: ignore[no-untyped-def]
    """Make a window ready for typing: `typing_window(operations=N)` gives (window, declaration line), the window
    1600×1000 showing the roofline, N GEMMs (the first selected, its line 'gemm(M=4096, …)' with the cursor
    after 4096) — as the keystroke tests type into it."""
    from workbench.gui.app import build_window
    from workbench.documents.session import OperationEntry

    def make(operations: int = 1):  # type: ignore[no-untyped-def]
        window = build_window()
        qtbot.addWidget(window)
        window.resize(1600, 1000)
        window.show()
        qtbot.waitExposed(window)
        for size in range(operations - 1):
            window.document.add_operation(OperationEntry.automatic(f"gemm(M={256 + 173 * size}, N=2048, K=512, dtype=fp16)"))
        window.document.select(0)
        window.tabs.setCurrentWidget(window.roofline)
        line = window.editor.line
        line.setFocus()
        line.setText("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
        line.setCursorPosition(len("gemm(M=4096"))
        # Settled before the first keystroke: the tab pages deferred to after the first paint built, whose
        # building lays the window out (late under load, it would land among the keystrokes a test counts).
        qtbot.waitUntil(lambda: not window.deferred_pages.pending(), timeout=10_000)
        qtbot.wait(20)
        return window, line

    return make


@pytest.fixture
def derivation_texts():  # type: ignore[no-untyped-def]
    """`derivation_texts(declarations)`: the Analysis panel's derivation (RichText) of each declaration, analysed
    in turn as the one operation of a Document (the panel tests retext a derivation view with them)."""
    from workbench.gui.document import Document
    from workbench.gui.derivation_view import derivation_rich_text

    def make(declarations: list[str]) -> list:  # type: ignore[type-arg]
        document = Document()
        texts = []
        for declaration in declarations:
            document.edit_declaration(0, declaration)
            analysis = document.state(document.current_entry).analysis
            assert analysis is not None, declaration
            texts.append(derivation_rich_text(analysis))
        return texts

    return make


@pytest.fixture
def long_pause(monkeypatch):  # type: ignore[no-untyped-def]
    """The typing pauses only when the test says so (the Analysis panel's timer slot, `catch_up_derivation`), not
    after a slow keystroke on a loaded machine: a window made after this waits a minute for the pause."""
    from workbench.gui import panel as panel_module

    monkeypatch.setattr(panel_module, "TYPING_PAUSE_MS", 60_000)
