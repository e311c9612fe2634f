"""A profile or a trace being read stops on Cancel and when the window closes, within a fraction of a second.

The file stands in for one too large to read in a minute: an Nsight Compute details page whose launches never
end (the test file's rows again and again, each pass under new launch IDs), handed to the reader in place of the
file on disk. Without a stop the read would never finish, and closing the window would wait ten seconds and then
destroy a running thread (Qt aborts the process).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from workbench.gui.workers import running_workers

NCU_DETAILS = Path(__file__).resolve().parents[1] / "data" / "ncu_details.csv"
# The reader looks at the stop flag before each line, so it stops within milliseconds of being asked; the bound
# here only has to tell "stopped" from "never stopped" (closing without the stop waits ten seconds, then aborts)
# on a loaded machine. benchmarks/bench_import_cancel.py measures the time a user waits.
STOPPED_WITHIN_S = 6.0
QUIT_WITHIN_S = 25.0


def endless_page(_path: object):  # type: ignore[no-untyped-def]
    """A LineSource (the reader's `open_lines`) whose table of launches never ends."""
    lines = NCU_DETAILS.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    head, rows = lines[: start + 1], lines[start + 1 :]

    def source():  # type: ignore[no-untyped-def]
        yield from head
        passes = 0
        while True:
            for row in rows:
                launch, rest = row[1:].split('"', 1)
                yield f'"{int(launch) + 1000 * passes}"{rest}'
            passes += 1
            time.sleep(0.001)

    return source


@pytest.fixture
def endless(monkeypatch):  # type: ignore[no-untyped-def]
    from workbench.profilers import reader

    monkeypatch.setattr(reader, "open_lines", endless_page)


def _reading(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.import_profile(str(NCU_DETAILS))
    qtbot.waitUntil(lambda: window.profile_importer.worker is not None and window.profile_importer.worker.isRunning())
    qtbot.wait(300)  # well into the file
    assert window.profile_importer.worker is not None, "the read is still going"


def test_cancel_in_the_status_bar_stops_the_read(window, qtbot, endless) -> None:  # type: ignore[no-untyped-def]
    _reading(window, qtbot)
    cancel = window.cancel_import
    assert cancel.isVisible()
    started = time.monotonic()
    cancel.click()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    assert time.monotonic() - started < STOPPED_WITHIN_S
    assert not cancel.isVisible()
    assert window.profile_importer.dialog is None and not window.banner.isVisible()
    assert "cancelled" in window.statusBar().currentMessage()
    assert window.document.session.profiles == []


def test_closing_the_window_stops_the_read(window, qtbot, endless) -> None:  # type: ignore[no-untyped-def]
    _reading(window, qtbot)
    started = time.monotonic()
    window.close()
    assert time.monotonic() - started < STOPPED_WITHIN_S
    assert not running_workers()


QUIT_DURING_IMPORT = f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from workbench.gui.app import build_window
from workbench.profilers import reader
from test_import_cancel import NCU_DETAILS, endless_page
from conftest import no_driver

reader.open_lines = endless_page
window = build_window(detect=no_driver)
app = QApplication.instance()
window.show()
window.import_profile(str(NCU_DETAILS))
def quit_now():
    assert window.profile_importer.worker is not None and window.profile_importer.worker.isRunning()
    print("quitting", flush=True)
    window.actions["quit"].trigger()
QTimer.singleShot(1500, quit_now)
sys.exit(app.exec())
"""


def test_quitting_during_an_import_exits_cleanly_and_at_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    app = subprocess.Popen(
        [sys.executable, "-c", QUIT_DURING_IMPORT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=environment, cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert app.stdout is not None and app.stdout.readline().strip() == "quitting"
        quit_at = time.monotonic()
        code = app.wait(30)
        took = time.monotonic() - quit_at
        errors = app.stderr.read() if app.stderr is not None else ""
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        for stream in (app.stdout, app.stderr):
            if stream is not None:
                stream.close()
    assert code == 0, errors
    assert "QThread" not in errors, errors
    # A quit that did not stop the read would wait ten seconds and then abort (the code above); the bound only
    # rules out a hang. The time a user waits is benchmarks/bench_import_cancel.py's: the interpreter's own exit
    # on a machine whose cores are busy elsewhere can take seconds.
    assert took < QUIT_WITHIN_S, took


def endless_trace(path, should_stop=None):  # type: ignore[no-untyped-def]
    """A trace whose reading only ends when it is asked to stop (as a file of hundreds of MB reads for minutes)."""
    from workbench.profilers.stopping import ReadStopped

    while should_stop is None or not should_stop():
        time.sleep(0.005)
    raise ReadStopped("reading stopped")


@pytest.fixture
def endless_trace_read(monkeypatch):  # type: ignore[no-untyped-def]
    from workbench.gui import timeline_trace

    monkeypatch.setattr(timeline_trace, "read_trace", endless_trace)


def _reading_trace(window, qtbot):  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    view.import_trace(str(NCU_DETAILS))  # any path: the read is the stand-in's
    qtbot.waitUntil(lambda: view.reader is not None and view.reader.isRunning())
    return view


def test_cancel_stops_a_trace_being_read_and_keeps_what_was_shown(window, qtbot, endless_trace_read) -> None:  # type: ignore[no-untyped-def]
    view = _reading_trace(window, qtbot)
    assert view.cancel_trace_button.isVisible() and not view.import_button.isEnabled()
    started = time.monotonic()
    view.cancel_trace_button.click()
    qtbot.waitUntil(lambda: not view.reader.isRunning(), timeout=5000)
    assert time.monotonic() - started < STOPPED_WITHIN_S
    qtbot.waitUntil(lambda: view.import_button.isEnabled())
    assert not view.cancel_trace_button.isVisible()
    assert view.trace is None and view.trace_label.text() == "Trace import cancelled."
    assert not view.trace_error.isVisible()


def test_closing_the_window_stops_a_trace_being_read(window, qtbot, endless_trace_read) -> None:  # type: ignore[no-untyped-def]
    _reading_trace(window, qtbot)
    started = time.monotonic()
    window.close()
    assert time.monotonic() - started < STOPPED_WITHIN_S
    assert not running_workers()
