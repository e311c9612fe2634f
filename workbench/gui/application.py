"""The process's QApplication, its names and icon, and the settings store.

On its own so that anything needing a QApplication (the offscreen plot render
behind `workbench report`, the window factory) imports it without importing
the window, and the window imports nothing that imports it back.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from importlib import resources

from PySide6.QtCore import QSettings
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

APP_NAME = "Performance Workbench"
EXAMPLES_MENU = "E&xamples"  # the menu bar's menu of built-in examples (the step timeline's hint names it)
ORGANISATION = "perf-workbench"
APPLICATION = "workbench"
STYLE = "Fusion"  # the application's Qt style, on every platform
RASTER_THREADS_VARIABLE = "PERF_WORKBENCH_RASTER_THREADS"  # "1": keep Qt's raster thread pool (see paint_on_the_gui_thread)


def ensure_application(argv: list[str] | None = None) -> QApplication:
    """The process's QApplication (created once, with the workbench's names and style)."""
    app = QApplication.instance()
    if app is None:
        paint_on_the_gui_thread()
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APP_NAME)
    if app.style().name().lower() != STYLE.lower():  # a second window: the style is set (again, it would re-polish every widget)
        with collection_paused():
            app.setStyle(STYLE)
    app.setWindowIcon(application_icon())
    return app


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while Qt walks every widget of the process (a new style, an
    application font): Qt sends each widget an event, a Python handler of one may start a collection, and a
    collection that frees a closed window's widgets (held in reference cycles until then) destroys them under
    Qt's walk, which then reads freed memory (seen as a crash in QApplication.setStyle)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def paint_on_the_gui_thread() -> None:
    """Turn off Qt's raster thread pool for this process (Qt's own switch, QT_NO_GUI_THREADPOOL, read when the
    pool is first asked for), unless the user set that switch or RASTER_THREADS_VARIABLE=1.

    Qt's raster engine hands a fill or blend of more than a few dozen spans to that pool and waits for it. The
    window repaints small areas (a label, a row, a corner of the plot), where the hand-off costs more than the
    fill: a keystroke with twenty labelled operations made some 75 thread switches and about 1 ms of system
    time; without the pool none and 0.07 ms, and the keystroke's median ran about a fifth shorter (2 cores).
    """
    if os.environ.get(RASTER_THREADS_VARIABLE) != "1":
        os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def application_icon() -> QIcon:
    """The workbench icon (resources/icons/perf-workbench.svg) for windows, dialogs and the task bar."""
    path = resources.files("workbench.resources").joinpath("icons", "perf-workbench.svg")
    with resources.as_file(path) as svg:
        return QIcon(str(svg))


def make_settings() -> QSettings:
    """The application's QSettings (tests point QSettings at a temporary folder)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANISATION, APPLICATION)
