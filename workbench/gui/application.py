"""The process's QApplication, its names and icon, and the settings store.

On its own so that anything needing a QApplication (the offscreen plot render
behind `workbench report`, the window factory) imports it without importing
the window, and the window imports nothing that imports it back.
"""

from __future__ import annotations

import sys
from importlib import resources

from PySide6.QtCore import QSettings
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

APP_NAME = "Performance Workbench"
ORGANISATION = "perf-workbench"
APPLICATION = "workbench"


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
    app.setWindowIcon(application_icon())
    return app


def application_icon() -> QIcon:
    """The workbench icon (resources/icons/perf-workbench.svg) for windows, dialogs and the task bar."""
    path = resources.files("workbench.resources").joinpath("icons", "perf-workbench.svg")
    with resources.as_file(path) as svg:
        return QIcon(str(svg))


def make_settings() -> QSettings:
    """The application's QSettings (tests point QSettings at a temporary folder)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANISATION, APPLICATION)
