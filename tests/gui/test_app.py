"""Entry points: `workbench` builds the window offscreen; start-up leaves NVML and CuPy alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench import cli
from workbench.gui import app as gui_app


@pytest.fixture
def captured_windows(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Replace the blocking event loop: keep the window, close it, return 0."""
    windows = []

    def fake_exec(application, window):  # type: ignore[no-untyped-def]
        windows.append((window.isVisible(), window.windowTitle(), window.editor.line.text()))
        window.close()
        window.wait_for_workers()
        window.deleteLater()
        return 0

    monkeypatch.setattr(gui_app, "_exec", fake_exec)
    return windows


def test_workbench_without_arguments_builds_the_window(captured_windows, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert cli.main([]) == 0
    visible, title, line = captured_windows[0]
    assert visible
    assert "Performance Workbench" in title
    assert line.startswith("gemm(")


def test_workbench_file_opens_the_session(tmp_path: Path, captured_windows, monkeypatch: pytest.MonkeyPatch) -> None:
    import workbench.documents.session as session_module
    from workbench.documents.examples import load_example

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    path = tmp_path / "conv.json"
    session_module.save(load_example("conv2d"), path)
    assert cli.main([str(path)]) == 0
    _, title, line = captured_windows[0]
    assert "conv.json" in title
    assert line.startswith("conv2d(")


def test_the_window_runs_with_the_collector_on_and_thaws_what_start_up_froze(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up pauses the cyclic collector while the session opens and freezes what it built (gui/app.py): the event
    loop runs with the collector on, and what was frozen is thawed when the session is replaced."""
    import gc

    import workbench.documents.session as session_module
    from workbench.documents.examples import load_example

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    path = tmp_path / "conv.json"
    session_module.save(load_example("conv2d"), path)
    seen = []

    def fake_exec(application, window):  # type: ignore[no-untyped-def]
        seen.append((gc.isenabled(), gc.get_freeze_count() > 0, window.document.session.operations[0].declaration))
        window.new_session()
        seen.append(gc.get_freeze_count())
        window.close()
        window.wait_for_workers()
        window.deleteLater()
        return 0

    monkeypatch.setattr(gui_app, "_exec", fake_exec)
    assert gc.isenabled()
    assert cli.main([str(path)]) == 0
    assert seen and seen[0][0] and seen[0][1] and seen[0][2].startswith("conv2d(")
    assert seen[1] == 0  # another session: start-up's objects are scanned again
    assert gc.isenabled()


def test_start_up_does_not_touch_nvml_or_cupy(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from PySide6.QtCore import QSettings\n"
        f"QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, {str(tmp_path)!r})\n"
        "from workbench.gui.app import build_window, ensure_application\n"
        "app = ensure_application(); w = build_window(); w.show()\n"
        # Detection waits for a timer after the first show; stopped here, so that a slow first paint (a loaded
        # machine) cannot let it fire inside processEvents and import NVML on its worker while this reads.
        "print(w._detect_timer.isActive()); w._detect_timer.stop(); app.processEvents()\n"
        "print(sorted(m for m in ('pynvml', 'cupy') if m in sys.modules))\n"
        "w.close(); w.wait_for_workers()\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    deferred, imported = result.stdout.strip().splitlines()[-2:]
    assert deferred == "True"  # detection is left to the timer, off the start-up path
    assert imported == "[]"  # building, showing and painting the window imported neither


def test_many_signals_and_paints_do_not_exhaust_none_or_true(qtbot) -> None:
    """PySide6 6.12.0 lost a reference to True per signal and to None per paint; the installed one must not."""
    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QWidget

    class Source(QObject):
        fired = Signal()

    class Painted(QWidget):
        def paintEvent(self, event) -> None:  # type: ignore[no-untyped-def]  # noqa: N802
            return None

    source = Source()
    source.fired.connect(lambda: None)
    widget = Painted()
    qtbot.addWidget(widget)
    widget.show()
    for _ in range(3000):
        source.fired.emit()
    for _ in range(300):
        widget.repaint()
    assert sys.getrefcount(True) > 1000 and sys.getrefcount(None) > 1000


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, "1"),  # the window paints small areas: Qt's raster thread pool off
        ({"QT_NO_GUI_THREADPOOL": "0"}, "0"),  # the user's own setting stands
        ({"PERF_WORKBENCH_RASTER_THREADS": "1"}, None),  # asked to keep Qt's pool
    ],
)
def test_the_application_paints_on_its_own_thread_unless_told_otherwise(
    tmp_path: Path, environment: dict[str, str], expected: str | None
) -> None:
    """A fresh process: ensure_application sets Qt's switch before the QApplication (the pool reads it once)."""
    script = (
        "import os\n"
        "from workbench.gui.application import ensure_application\n"
        "ensure_application()\n"
        "print(os.environ.get('QT_NO_GUI_THREADPOOL'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("QT_NO_GUI_THREADPOOL", "PERF_WORKBENCH_RASTER_THREADS")}
    env.update(environment, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(expected)


def test_a_second_window_keeps_the_applications_style_and_no_collection_runs_while_qt_walks_the_widgets(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Setting the style again re-polished every widget of the process, and a garbage collection started by a
    Python handler during that walk destroyed closed windows' widgets under it (a crash in QApplication.setStyle
    with 3,584 widgets alive). The style is set once; Qt-wide walks run with collection held off."""
    import gc

    from shiboken6 import Shiboken

    from workbench.gui.application import collection_paused, ensure_application

    app = ensure_application()
    style = Shiboken.getCppPointer(app.style())[0]
    ensure_application()  # as each new window does
    assert Shiboken.getCppPointer(app.style())[0] == style and app.style().name().lower() == "fusion"

    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError("a failure inside")
    assert gc.isenabled()
    gc.disable()  # held off by someone else already: left so
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
