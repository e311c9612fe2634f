"""The main window: docks, the plot tabs, sessions and files, preferences and GPU detection.

Layout: operations (left, top) and device (left, bottom) docks, the
declaration editor above the plot tabs in the middle, the analysis panel
docked on the right. Window geometry, dock layout, text size, the open tab
and the defaults for new sessions live in QSettings; the session itself is
the document's.

Its actions, menus and tool bar are the `WindowActions` part (gui/window_actions.py); its tab pages, built from
their registry (gui/pages.py), and plot export the `WindowPages` part (gui/window_pages.py); text size, presentation
mode and fitting to the screen the `WindowPresentation` part (gui/window_presentation.py); its small widgets are
in gui/window_widgets.py.
"""

from __future__ import annotations

import html
import os
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from workbench import __version__
from workbench.model.devices.nvml import OK, Detection
from workbench.errors import WorkbenchError
from workbench.documents.examples import load_example
from workbench.gui.application import APP_NAME, make_settings
from workbench.gui.deferred_pages import DeferredPage
from workbench.gui.device_panel import DevicePanel
from workbench.gui.document import Document, new_session
from workbench.gui.editor import DeclarationEditor
from workbench.gui.notes_panel import NotesPanel
from workbench.gui.operations_view import OperationsView
from workbench.gui.panel import AnalysisPanel
from workbench.gui.roofline_view import LABEL_MODES, LABELS_ALL, RooflineView
from workbench.gui.profile_import import ProfileImporter
from workbench.gui.session_io import SessionFiles, WindowHooks
from workbench.gui.workers import DetectionWorker
from workbench.gui.plain_text import plain
from workbench.gui.reader import ReadCancelled, SessionReader
from workbench.gui.window_actions import WindowActions
from workbench.gui.window_pages import WindowPages
from workbench.gui.window_presentation import DEFAULT_FONT_POINTS, LAYOUT_KEYS, WindowPresentation
from workbench.gui.window_widgets import scrolled
from workbench.documents.session import DeviceChoice

if TYPE_CHECKING:  # the pages' modules are imported when their pages are built (gui/pages.py)
    from workbench.gui.compare_view import CompareView
    from workbench.gui.measure_tab import MeasurementTab
    from workbench.gui.profile_view import ProfileComparisonView
    from workbench.gui.sweep_view import SweepView
    from workbench.gui.timeline_view import TimelineView

DetectFunction = Callable[[], Detection]


class MainWindow(WindowActions, WindowPages, WindowPresentation, QMainWindow):
    """The workbench window over one Document."""

    # Pages built when first shown or asked for, or after the first paint (gui/deferred_pages.py): the names the
    # window's own code reads them by; `page(key)` reads any registered page.
    sweep: DeferredPage[SweepView] = DeferredPage("sweep")
    profile_view: DeferredPage[ProfileComparisonView] = DeferredPage("profile")
    compare: DeferredPage[CompareView] = DeferredPage("compare")
    timeline: DeferredPage[TimelineView] = DeferredPage("timeline")

    def __init__(
        self,
        document: Document | None = None,
        settings: QSettings | None = None,
        detect: DetectFunction | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings if settings is not None else make_settings()
        self.document = document if document is not None else Document(self._new_session())
        self.document.setParent(self)  # the document, its undo stack and signals go with the window
        self.setObjectName("mainWindow")
        self._detect = detect
        self._worker: DetectionWorker | None = None
        self._detect_timer = QTimer(self)
        self._detect_timer.setSingleShot(True)
        self._detect_timer.timeout.connect(self.start_detection)
        self._shown_once = False
        self._presentation = False  # View ▸ Presentation (set_presentation)
        self._startup_points = DEFAULT_FONT_POINTS
        self._normal_state: QByteArray | None = None
        self._normal_geometry: QByteArray | None = None

        self.actions: dict[str, QAction] = {}
        self._take_pages()
        self._make_actions()
        self._make_central()
        self._make_docks()
        self.session_io = self._session_files()  # recent files, unsaved-changes questions, autosave, recovery, drops, reports
        self._make_toolbar()
        self._make_menus()  # View ▸ Tool bar: after the tool bar
        self._make_status_bar()
        self._follow_document()
        self._show_title()
        self._show_settings()
        self._show_device_status()
        self._enable_actions()
        self._let_panels_scroll(False)
        self._restore_preferences()

    # ------------------------------------------------------------------ construction
    def _make_central(self) -> None:
        """The banner, the declaration editor and the plot tabs."""
        self.banner = plain(QLabel())
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("background: #fff3cd; color: #6d4c00; border: 1px solid #e0c060; padding: 6px;")
        self.banner.setVisible(False)
        self.banner_close = QPushButton("Dismiss")
        self.banner_close.setVisible(False)
        self.banner_close.clicked.connect(self.hide_banner)
        self.editor = DeclarationEditor(self.document)
        self.profile_importer = ProfileImporter(self.document, self)  # File ▸ Import profile… and dropped .csv files
        self.tabs = QTabWidget()
        self.tabs.setObjectName("plotTabs")
        self._make_tabs()  # the registered pages (gui/pages.py, gui/window_pages.py)
        self.roofline: RooflineView = self.page("roofline")  # type: ignore[assignment]
        self.measurement: MeasurementTab = self.page("measurement")  # type: ignore[assignment]
        banner_row = QHBoxLayout()
        banner_row.addWidget(self.banner, 1)
        banner_row.addWidget(self.banner_close, 0, Qt.AlignmentFlag.AlignTop)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(banner_row)
        layout.addWidget(scrolled(self.editor, vertical=False))  # the form scrolls sideways before the window grows
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

    def _make_docks(self) -> None:
        """Operations and device on the left, analysis and notes (tabbed) on the right."""
        self.operations = OperationsView(self.document, self.actions)
        self.device_panel = DevicePanel(self.document)
        self.device_panel.detect_requested.connect(self.start_detection)
        self.device_panel.calibrate_requested.connect(self.measurement.open_calibration)
        self.panel = AnalysisPanel(self.document)
        self.operations_dock = self._dock("Operations", "operationsDock", self.operations, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.device_dock = self._dock("Device", "deviceDock", self.device_panel, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.panel_dock = self._dock("Analysis", "analysisDock", self.panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.notes_panel = NotesPanel(self.document)  # the description and the operation's notes (gui/notes_panel.py)
        self.notes_dock = self._dock("Notes", "notesDock", self.notes_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(self.panel_dock, self.notes_dock)
        self.panel_dock.raise_()
        self.actions["remove"].setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.operations.list.addAction(self.actions["remove"])

    def _make_status_bar(self) -> None:
        """The device, and while a profile or a session file is read, what is read and its Cancel button."""
        self.status = self.statusBar()
        self.device_status = plain(QLabel())
        self.status.addPermanentWidget(self.device_status)
        self.cancel_import = QPushButton("Cancel import")
        self.cancel_import.setObjectName("cancelImport")
        self.cancel_import.setToolTip("Stop reading the profile; nothing is imported")
        self.cancel_import.clicked.connect(self.profile_importer.cancel_reading)
        self.cancel_import.setVisible(False)
        self.status.addPermanentWidget(self.cancel_import)
        # A session file being opened: read in a thread (gui/reader.py), said in the status bar, cancellable.
        self.reader = SessionReader(self)
        self.opening_status = plain(QLabel())
        self.opening_status.setObjectName("openingStatus")
        self.cancel_open = QPushButton("Cancel open")
        self.cancel_open.setObjectName("cancelOpen")
        self.cancel_open.setToolTip("Stop opening the session file; the session shown stays as it is")
        self.cancel_open.clicked.connect(self.reader.cancel)
        for widget in (self.opening_status, self.cancel_open):
            widget.setVisible(False)
            self.status.addPermanentWidget(widget)
        # The bar keeps the button's height while it is hidden: shown and hidden around a read, it would change the
        # bar's height, and so resize the plots (the roofline laid out again twice for nothing).
        policy = self.cancel_open.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.cancel_open.setSizePolicy(policy)
        self.reader.reading_changed.connect(self._show_opening)
        self.document.session_replaced.connect(self.reader.cancel)  # another session shown: the read is not wanted
        self.profile_importer.reading_changed.connect(self.cancel_import.setVisible)
        self.profile_importer.message.connect(lambda text: self.status.showMessage(text, 6000))
        self.profile_importer.import_failed.connect(self.show_banner)
        self.profile_importer.profile_imported.connect(lambda _: self.tabs.setCurrentWidget(self.profile_view))

    def _follow_document(self) -> None:
        """The title, the settings' actions, the device status and the actions' enabled states follow the document."""
        doc = self.document
        doc.undo_stack.cleanChanged.connect(self._show_title)
        doc.path_changed.connect(self._show_title)
        doc.session_replaced.connect(self._show_title)
        doc.settings_changed.connect(self._show_settings)
        doc.device_changed.connect(self._show_device_status)
        doc.selection_changed.connect(self._enable_actions)
        doc.operations_changed.connect(self._enable_actions)

    def _session_files(self) -> SessionFiles:
        """The window's file life, given what it needs and no more; its menu entries join the window's actions."""
        hooks = WindowHooks(
            open_session=self.open_session,
            save_session=self.save_session,
            import_profile=self.import_profile,
            show_banner=self.show_banner,
            hide_banner=self.hide_banner,
            show_status=lambda text, ms: self.statusBar().showMessage(text, ms),
            roofline_view=lambda: self.roofline,
        )
        files = SessionFiles(self.document, self.settings, self, hooks)
        self.actions["export_report"] = files.export_report_action
        self.actions["clear_recent"] = files.clear_recent_action
        return files

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(scrolled(widget))
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    # ------------------------------------------------------------------ showing state
    def _show_title(self, *_: object) -> None:
        doc = self.document
        name = os.path.basename(doc.path) if doc.path else (doc.session.title or "untitled session")
        self.setWindowTitle(f"{name}[*] — {APP_NAME}")
        self.setWindowModified(not doc.undo_stack.isClean())

    def _show_device_status(self) -> None:
        doc = self.document
        device = doc.device
        entered = len(doc.session.device.overrides)
        if device is None:
            self.device_status.setText(f"Device: {doc.session.device.key} (unavailable)")
        else:
            extra = f", {entered} rate{'s' if entered != 1 else ''} entered or measured" if entered else ""
            self.device_status.setText(f"Device: {device.name}{extra}")
        self.actions["reset_rates"].setEnabled(bool(entered))

    def _show_opening(self, name: str) -> None:
        self.opening_status.setText(f"Opening {name}…" if name else "")
        self.opening_status.setVisible(bool(name))
        self.cancel_open.setVisible(bool(name))

    def show_banner(self, text: str) -> None:
        self.banner.setText(text)
        self.banner.setVisible(True)
        self.banner_close.setVisible(True)

    def hide_banner(self) -> None:
        self.banner.setVisible(False)
        self.banner_close.setVisible(False)

    # ------------------------------------------------------------------ sessions
    def _new_session(self):  # type: ignore[no-untyped-def]
        """A new session with the remembered device and units."""
        session = new_session()
        key = self.settings.value("session/device", "", type=str)
        if key and not key.startswith("nvml-"):
            session.device = DeviceChoice(key=key)
        session.settings.binary = self.settings.value("session/binary", False, type=bool)
        return session

    def new_session(self) -> None:
        if not self.session_io.confirm_discard("starting a new session"):
            return
        self.hide_banner()
        self.document.replace_session(self._new_session())

    def open_example(self, key: str) -> None:
        if not self.session_io.confirm_discard("opening an example"):
            return
        self.hide_banner()
        self.document.replace_session(load_example(key))
        if self.document.session.description.strip():  # a lab's instructions: show them
            self.notes_dock.show()
            self.notes_dock.raise_()

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", "", "Workbench sessions (*.json);;All files (*)")
        if path:
            self.open_session(path)

    def open_session(self, path: str) -> bool:
        """Open a session file; a fault is shown in the banner, the current session stays.

        The file is read, parsed and validated in the reader's thread (gui/reader.py) while the window stays
        live, with a Cancel button in the status bar; the document is replaced only once the read succeeded."""
        name = os.path.basename(path)
        if self.session_io.saving:
            self.status.showMessage(f"The session is being saved: open {name} again once it is written", 6000)
            return False
        try:
            read = self.reader.read(path)
        except ReadCancelled as exc:
            self.status.showMessage(str(exc), 6000)
            return False
        except WorkbenchError as exc:
            self.show_banner(f"Cannot open {name}: {exc}")
            return False
        if not self.session_io.confirm_discard(f"opening {name}"):
            return False
        self.hide_banner()
        self.session_io.opening(read.snapshot, path, read.stamp)  # what a save merges against: the bytes just read
        self.document.replace_session(read.session, path)
        return True

    def save_session(self) -> bool:
        if self.document.path is None:
            return self.save_session_as()
        return self.save_to(self.document.path)

    def save_session_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self, "Save session", "session.json", "Workbench sessions (*.json)")
        return self.save_to(path) if path else False

    def save_to(self, path: str) -> bool:
        """Save under the file's lock, merging what other programs saved to it (gui/outside_changes.py)."""
        return self.session_io.save_to(path)

    # ------------------------------------------------------------------ profiler imports (gui/profile_import.py)
    def import_profile(self, path: str) -> None:
        """Import an ncu or nsys CSV: read in a worker thread, then ask which operation each kernel is."""
        self.profile_importer.import_file(path)

    def import_profile_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import profile", "", "Profiler CSV (*.csv);;All files (*)")
        if path:
            self.import_profile(path)

    def import_torch_dialog(self) -> None:
        """File ▸ Import PyTorch model…: the traced step opens in the Timeline (gui/torch_import.py)."""
        from workbench.gui.torch_import import TorchImportDialog

        dialog = TorchImportDialog(self)
        dialog.step_ready.connect(self.open_traced_step)
        dialog.open()

    def open_traced_step(self, text: str) -> None:
        self.timeline.open_step(text)
        self.tabs.setCurrentWidget(self.timeline)

    # ------------------------------------------------------------------ plots (export: gui/window_pages.py)
    def panel_copy(self) -> None:
        self.panel.copy_derivation()
        self.status.showMessage("Derivation copied", 3000)

    def focus_declaration(self) -> None:
        self.editor.line.setFocus()
        self.editor.line.selectAll()

    def set_label_mode(self, mode: str) -> None:
        """View ▸ Labels: which operations the roofline labels (all, the selected one, none); kept in QSettings."""
        self.roofline.set_label_mode(mode)
        self.actions[f"labels_{mode}"].setChecked(True)
        self.settings.setValue("view/labels", mode)

    # ------------------------------------------------------------------ help
    def shortcut_rows(self) -> list[tuple[str, str]]:
        """(action, keys) for every action that has a shortcut, in menu order."""
        rows = []
        for action in self.actions.values():
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys:
                rows.append((action.text().replace("&", "").rstrip("…"), keys))
        return rows

    def show_shortcuts(self) -> QDialog:
        dialog = QDialog(self)
        dialog.setObjectName("shortcutsDialog")
        dialog.setWindowTitle("Keyboard shortcuts")
        rows = self.shortcut_rows()
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["Action", "Keys"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (name, keys) in enumerate(rows):
            table.setItem(row, 0, QTableWidgetItem(name))
            table.setItem(row, 1, QTableWidgetItem(keys))
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(table)
        layout.addWidget(buttons)
        dialog.resize(460, 560)
        dialog.open()
        return dialog

    def show_about(self) -> QMessageBox:
        box = QMessageBox(self)
        box.setObjectName("aboutBox")
        box.setWindowTitle(f"About {APP_NAME}")
        box.setText(f"<b>{APP_NAME}</b> {__version__}")
        from workbench.documents.about import optional_parts

        parts = "".join(
            f"<li>{'✔' if part.available else '✘'} {html.escape(part.line())}</li>" for part in optional_parts()
        )
        box.setInformativeText(
            "Logical work, compulsory HBM bytes and time bounds for tensor operations, "
            "on a roofline of the chosen device. Every figure carries its unit."
            f"<p>Optional parts:</p><ul>{parts}</ul>"
        )
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.open()
        return box

    # ------------------------------------------------------------------ GPU detection (off the start-up path)
    def showEvent(self, event) -> None:  # type: ignore[no-untyped-def]  # noqa: N802
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if not self._restored_state:
                QTimer.singleShot(0, self._default_dock_sizes)
            self._detect_timer.start(150)

    def start_detection(self) -> None:
        if self._worker is not None and self._worker.isRunning():
            return
        self._detect_timer.stop()
        worker = DetectionWorker(self._detect, self)
        worker.detection_finished.connect(self._detection_finished)
        worker.finished.connect(self._worker_finished)
        self._worker = worker
        self.device_panel.set_detecting(True)
        worker.start()

    def _detection_finished(self, detection: Detection) -> None:
        doc = self.document
        fresh = doc.undo_stack.count() == 0 and doc.path is None and doc.session.device.key == new_session().device.key
        doc.set_detection(detection)
        self.device_panel.set_detecting(False)
        if detection.status == OK and fresh and not doc.session.device.overrides and doc.detected:
            doc.adopt_device(next(iter(doc.detected)))
        self.status.showMessage(f"GPU detection: {detection.message}", 6000)

    def _worker_finished(self) -> None:
        if self._worker is not None and not self._worker.isRunning():
            self._worker.deleteLater()
            self._worker = None

    def wait_for_workers(self, timeout_ms: int = 10000) -> None:
        """Stop a pending detection and wait for a running one (on close, and in tests)."""
        self._detect_timer.stop()
        if self._worker is not None:
            self._worker.wait(timeout_ms)
        self.profile_importer.wait(timeout_ms)
        self.measurement.wait(timeout_ms)

    # ------------------------------------------------------------------ preferences
    def _restore_preferences(self) -> None:
        s = self.settings
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            room = self.available_screen()
            self.resize(min(1600, room.width()), min(1000, room.height()))
        self.fit_to_screen()  # a geometry saved on a larger screen, or the default on a laptop's
        state = s.value("window/state")
        self._restored_state = isinstance(state, QByteArray) and not state.isEmpty() and self.restoreState(state)
        points = s.value("view/font_points", 0.0, type=float)
        if points and abs(points - self.font_points()) > 0.01:
            self.set_font_points(points)
        self._startup_points = self.font_points()  # Ctrl+0 comes back here
        self._normal_state = self.saveState()
        self.roofline.set_hidden_levels(str(s.value("view/roofline_hidden_levels", "", type=str)).split())
        self.roofline.levels_changed.connect(lambda hidden: self.settings.setValue("view/roofline_hidden_levels", " ".join(hidden)))
        labels = s.value("view/labels", LABELS_ALL, type=str)
        if labels in LABEL_MODES:
            self.set_label_mode(labels)
        tab = s.value("view/tab", "roofline", type=str)
        if tab in [spec.key for spec in self.page_specs]:
            self.tabs.setCurrentIndex(self.page_index(tab))

    def save_preferences(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue(LAYOUT_KEYS[self._presentation][0], self.saveState())  # presentation keeps its own layout
        s.setValue("view/tab", self.current_page_key())
        s.setValue("session/binary", self.document.session.settings.binary)
        s.setValue("session/device", self.document.session.device.key)
        s.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self.session_io.close_waits_for_save():  # closed once the save being written is on disk
            event.ignore()
            return
        if not self.session_io.confirm_discard("closing"):
            event.ignore()
            return
        self.reader.finish()  # a session being opened is dropped; its thread has ended before the window closes
        self.session_io.window_closing()
        self.measurement.shutdown()  # cancels a run or a calibration in progress
        self.profile_importer.cancel_reading()  # a profile being read stops at its next line
        if self.deferred_pages.is_built("timeline"):
            self.timeline.stop_reading(wait_ms=10_000)  # a trace being read stops within a fraction of a second
        self.save_preferences()
        self.wait_for_workers()
        super().closeEvent(event)