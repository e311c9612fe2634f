"""Start the desktop window: `workbench` and `workbench FILE` end up in `run_app`.

`build_window` is the factory (tests and benchmarks call it without the event
loop); `run_app` shows the window and runs the loop. NVML is not touched
here: detection starts in a worker thread once the window is on screen.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from workbench.gui.application import application_icon, collection_paused, ensure_application
from workbench.gui.window import DetectFunction, MainWindow

__all__ = ["application_icon", "build_window", "ensure_application", "run_app"]


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


def run_app(session_path: str | None = None, example: str | None = None, check: bool = False, presentation: bool = False) -> int:
    """Open the window (with a session file or an example) and run until it closes.

    With `presentation`, the window starts in presentation mode (View ▸ Presentation).

    With `check`, show the window, let it settle, print one line saying what is on
    screen and quit: how an installation (or the bundle) proves it starts.
    """
    app = ensure_application()
    window = build_window()
    # What start-up builds lives as long as the process (modules, classes, the window) or as the session it opens
    # (a model's operations and their analyses, objects by the hundred thousand): the cyclic collector is paused
    # while they are made (it would scan the growing heap again and again: about 0.4 s of CPU time at 5,000
    # operations) and then leaves them out of its scans (gc.freeze) until the session is replaced: that session's
    # objects are then scanned once, as everything made after start-up is. When the loop returns the process ends:
    # what is still frozen stays so, and the interpreter's collections on the way out skip it (scanning a model's
    # session there cost about 1 s of CPU time at 5,000 operations). A caller that goes on (the tests) thaws it
    # with gc.unfreeze().
    gc.freeze()
    return _open_and_run(app, window, session_path, example, check, presentation)


def _open_and_run(app: QApplication, window: MainWindow, session_path: str | None, example: str | None, check: bool,
                  presentation: bool) -> int:
    with collection_paused():
        if session_path:
            # Read in the reader's thread (gui/reader.py) before the window is shown; the roofline, which draws in a
            # window not shown (for exports), waits until the window is shown (not drawn first at a size never seen).
            window.roofline.redraw_off_screen_windows = False
            try:
                window.open_session(session_path)
            finally:
                del window.roofline.redraw_off_screen_windows
        if example:
            window.open_example(example)
        if presentation:
            window.set_presentation(True)
        window.show()
        gc.freeze()
        window.document.session_replaced.connect(_unfreeze_once)
    if check:
        return _report_and_quit(app, window)
    return _exec(app, window)


def _unfreeze_once() -> None:
    """The session start-up opened is replaced: what start-up made is scanned by the collector again."""
    if gc.get_freeze_count():
        gc.unfreeze()


def _report_and_quit(app: QApplication, window: MainWindow) -> int:
    app.processEvents()
    document = window.document
    operations = document.session.operations
    shown = window.isVisible()
    entry = document.current_entry
    analysis = document.state(entry).analysis if entry is not None else None
    summary = analysis.limiter_sentence() if analysis is not None else "no analysis on screen"
    title = window.windowTitle().replace("[*]", "")
    print(f"window shown: {shown}; {title}; {len(operations)} operation(s); {summary}", flush=True)
    window.wait_for_workers()
    window.close()
    return 0 if shown else 1
