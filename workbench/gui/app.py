"""Start the desktop window: `workbench` and `workbench FILE` end up in `run_app`.

`build_window` is the factory (tests and benchmarks call it without the event
loop); `run_app` shows the window and runs the loop. NVML is not touched
here: detection starts in a worker thread once the window is on screen.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from workbench.gui.window import APP_NAME, APPLICATION, ORGANISATION, DetectFunction, MainWindow


def ensure_application(argv: list[str] | None = None) -> QApplication:
    """The process's QApplication (created once, with the workbench's names and style)."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APP_NAME)
    app.setStyle("Fusion")
    return app


def build_window(
    session_path: str | None = None,
    settings: QSettings | None = None,
    detect: DetectFunction | None = None,
) -> MainWindow:
    """Create the main window (not shown); with `session_path`, open that session file in it."""
    ensure_application()
    window = MainWindow(settings=settings, detect=detect)
    if session_path:
        window.open_session(session_path)
    return window


def _exec(app: QApplication, window: MainWindow) -> int:
    """Run the event loop (a seam: smoke tests replace it to return at once)."""
    return int(app.exec())


def run_app(session_path: str | None = None) -> int:
    """Open the window (with a session file when given) and run until it closes."""
    app = ensure_application()
    window = build_window(session_path)
    window.show()
    return _exec(app, window)
