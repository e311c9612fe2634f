"""The main window: menus, tool bar, docks, the plot tabs, preferences and GPU detection.

Layout: operations (left, top) and device (left, bottom) docks, the
declaration editor above the plot tabs in the middle, the analysis panel
docked on the right. Window geometry, dock layout, text size, the open tab
and the defaults for new sessions live in QSettings; the session itself is
the document's.
"""

from __future__ import annotations

import html
import os
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QFont, QHelpEvent, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabBar,
    QTabWidget,
    QToolBar,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from workbench import __version__
from workbench.devices.nvml import OK, Detection
from workbench.errors import WorkbenchError
from workbench.examples import list_examples, load_example
from workbench.gui.application import APP_NAME, EXAMPLES_MENU, collection_paused, make_settings
from workbench.gui.deferred_pages import DeferredPage, DeferredPages
from workbench.gui.device_panel import DevicePanel
from workbench.gui.document import Document, new_session
from workbench.gui.editor import DeclarationEditor
from workbench.gui.measure_tab import MeasurementTab
from workbench.gui.export import export_png, export_svg
from workbench.gui.notes_panel import NotesPanel
from workbench.gui.operations_view import OperationsView
from workbench.gui.panel import AnalysisPanel
from workbench.gui.roofline_view import FIT_SHORTCUT, LABEL_MODES, LABELS_ALL, LABELS_NONE, LABELS_SELECTED, RooflineView
from workbench.gui.profile_import import ProfileImporter
from workbench.gui.profile_view import ProfileComparisonView
from workbench.gui.session_io import SessionFiles, WindowHooks
from workbench.gui.workers import DetectionWorker
from workbench.gui.plain_text import plain
from workbench.gui.reader import ReadCancelled, SessionReader
from workbench.conventions import CONVENTION_LABELS
from workbench.session import DeviceChoice

if TYPE_CHECKING:  # built when first needed (_make_tabs), their modules imported then
    from workbench.gui.compare_view import CompareView
    from workbench.gui.sweep_view import SweepView
    from workbench.gui.timeline_view import TimelineView

DEFAULT_FONT_POINTS = 10.0
FONT_RANGE = (7.0, 28.0)
PRESENTATION_SCALE = 1.6  # presentation text: the start-up size × 1.6, and at least 16 pt
PRESENTATION_MIN_POINTS = 16.0
# On a first run the left and right docks take 378 and 528 px of a 1600 px window, and the same shares of a smaller one:
# the plot tabs keep 682 px of it, room for the GEMM example's roof labels in full at the normal text size
DEFAULT_DOCK_WIDTHS = (378, 528)
DEFAULT_DOCK_SHARES = (DEFAULT_DOCK_WIDTHS[0] / 1600, DEFAULT_DOCK_WIDTHS[1] / 1600)
PRESENTATION_DOCK_SHARES = (0.18, 0.26)
SHORT_SCREEN_LINES = 900  # a first presentation on a screen shorter than this hides the tool bar as well  # the operations and analysis docks' widths, as shares of the screen's width
# Each mode keeps its own layout and text size (View ▸ Presentation): widened docks on a projector
# do not become the normal layout.
LAYOUT_KEYS = {False: ("window/state", "view/font_points"), True: ("presentation/state", "presentation/font_points")}
OVERLAP_CHOICES: tuple[tuple[float, str], ...] = (
    (1.0, "full overlap (max)"),
    (0.75, "overlap f = 0.75"),
    (0.5, "overlap f = 0.5"),
    (0.25, "overlap f = 0.25"),
    (0.0, "no overlap (sum)"),
)
TABS = ("roofline", "sweep", "measurement", "profile", "compare", "timeline")

DetectFunction = Callable[[], Detection]


class _RoomyArea(QScrollArea):
    """A frameless scroll area that shows its widget at the area's size, or at the widget's minimum size where
    that is larger (then, and only then, it scrolls).

    At presentation size the panels' minimum widths (a row of buttons, a long unwrapped label, a form of three
    columns) would add up past the screen and grow the window beyond it; while `squeezable` (presentation mode)
    the area asks for little room, so a squeezed panel scrolls instead and the window keeps the size the screen
    allows. Otherwise it asks for its widget's minimum, as a plain container would. (QScrollArea's own
    widgetResizable would size a panel with word-wrapped text to its preferred height, not to the room there is.)
    """

    squeezable = False

    def __init__(self, widget: QWidget, vertical: bool = True) -> None:
        super().__init__()
        self.vertical = vertical  # False: only sideways; the area is as tall as the widget's minimum (and a scroll bar)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(False)
        self.setWidget(widget)
        widget.installEventFilter(self)
        self.viewport().installEventFilter(self)
        if not vertical:
            self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def _fit(self) -> None:
        widget = self.widget()
        room = self.viewport().size()
        least = widget.minimumSizeHint().expandedTo(widget.minimumSize())
        size = QSize(max(room.width(), least.width()), max(room.height(), least.height()))
        if widget.size() != size:
            widget.resize(size)
        if self.vertical and least.width() != self._least_width_told:
            # The dock's layout keeps the area's least width from when it last heard: a panel whose least width
            # changes while its dock is hidden (the device panel, through presentation's larger text and back)
            # must tell it again, or the window keeps the larger width, wider than the screen.
            # (Its least height, which typing changes, is not told: the dock scrolls.)
            self._least_width_told = least.width()
            self.updateGeometry()

    _least_width_told = -1  # the widget's least width the enclosing layout last heard of (vertical areas)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Resize) and watched in (self.widget(), self.viewport()):
            self._fit()
            if not self.vertical and event.type() == QEvent.Type.LayoutRequest:
                self._tell_layout_if_changed()
        return super().eventFilter(watched, event)

    def event(self, event: QEvent) -> bool:  # noqa: N802
        """A layout request is not passed on to QScrollArea, which would measure the widget's size hints for it
        (qSmartMinSize: the widget's preferred size, and its height for that width, with every word-wrapped label
        in it laid out again) only to size a resizable widget, which this area's is not (_fit sizes it). The
        scroll bars follow the widget's and the viewport's sizes, which QScrollArea watches itself (their resize
        events); a layout request changes neither."""
        if event.type() == QEvent.Type.LayoutRequest:
            return super(QScrollArea, self).event(event)  # QAbstractScrollArea's: past QScrollArea's
        return super().event(event)

    _hints_told: tuple[QSize, QSize] | None = None  # the size hints the enclosing layout last heard of

    def _tell_layout_if_changed(self) -> None:
        """Sideways only: the widget's height may have changed (larger text, a form with another row), and with it
        the area's; the enclosing layout is told, but only then.

        Most of the widget's layout requests (the form's fields and summary retyped on every keystroke) leave the
        area's hints as they were; an updateGeometry for each would lay out the whole main window (and every dock
        in it) again on every keystroke."""
        hints = (self.sizeHint(), self.minimumSizeHint())
        if hints != self._hints_told:
            self._hints_told = hints
            self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802
        hint = self.widget().sizeHint()
        return QSize(hint.width(), self._height()) if not self.vertical else hint

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        if not self.squeezable:
            return self.widget().minimumSizeHint()
        return QSize(super().minimumSizeHint().width(), self._height()) if not self.vertical else super().minimumSizeHint()

    def set_squeezable(self, on: bool) -> None:
        if on != self.squeezable:
            self.squeezable = on
            if not self.vertical:  # squeezed, a sideways area may also scroll down rather than push the plots off
                policy = Qt.ScrollBarPolicy.ScrollBarAsNeeded if on else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
                self.setVerticalScrollBarPolicy(policy)
            self.updateGeometry()

    def _height(self) -> int:
        """Sideways only: the widget's least height, and room for the scroll bar.

        While squeezable it is at most a quarter of the screen's height (a sixth in presentation, `share`): the
        form then scrolls down too, and the plots below it keep the room a 720-line projector leaves them."""
        widget = self.widget()
        height = widget.minimumSizeHint().expandedTo(widget.minimumSize()).height()
        if self.squeezable:  # room for the scroll bar whether or not the form needs it now: the plot tabs below stay put
            height += self.horizontalScrollBar().sizeHint().height()
        if self.squeezable:
            screen = self.screen()
            if screen is not None:
                height = min(height, screen.availableGeometry().height() // self.share)
        return height

    share = 4  # the most of the screen's height a sideways area takes, as 1/share


class _StepTips(QObject):
    """The undo and redo buttons' tooltips: the step they would take ("Undo Edit gemm 4096³ fp16"), read from
    the undo stack when the tooltip is asked for.

    Kept on the actions instead, the tooltip would change on every keystroke (each renames the step), and a
    changed action makes the tool bar, and with it the whole main window and every dock, lay out again."""

    def __init__(self, stack: QUndoStack, parent: QObject) -> None:
        super().__init__(parent)
        self.stack = stack

    def text(self, step: str) -> str:
        done = self.stack.undoText() if step == "undo" else self.stack.redoText()
        verb = "Undo" if step == "undo" else "Redo"
        return f"{verb} {done}" if done else verb

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        step = watched.property("step")
        if event.type() == QEvent.Type.ToolTip and step in ("undo", "redo") and isinstance(event, QHelpEvent):
            QToolTip.showText(event.globalPos(), self.text(step), watched)  # type: ignore[arg-type]
            return True
        return super().eventFilter(watched, event)


class _WholeChoice(QComboBox):
    """A tool bar's choice shown whole: its least width is its text's, measured again when the text grows
    (presentation, Ctrl++). A plain combo box measures its items once, at the first show, and a tool bar squeezed
    it to that least width, cutting "fma=2: one multiply-add = 2 FLOP"; where the bar lacks the room now, the
    choice goes to the bar's extension menu instead."""

    def __init__(self) -> None:
        super().__init__()
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.sizeHint()

    @staticmethod
    def labelled(text: str, box: QComboBox) -> QWidget:
        """The choice with its label before it, one widget: they go to the extension menu together."""
        pair = QWidget()
        row = QHBoxLayout(pair)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(QLabel(text))
        row.addWidget(box)
        return pair


def _scrolled(widget: QWidget, vertical: bool = True) -> QScrollArea:
    """`widget` in an area that may be narrower (and, unless `vertical` is False, shorter) than the widget's own
    minimum (see _RoomyArea)."""
    return _RoomyArea(widget, vertical)


class MainWindow(QMainWindow):
    """The workbench window over one Document."""

    # Plot tabs built when first shown or asked for, or after the first paint (gui/deferred_pages.py).
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
        self._make_actions()

        # central: banner, editor, plot tabs
        self.banner = plain(QLabel())
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("background: #fff3cd; color: #6d4c00; border: 1px solid #e0c060; padding: 6px;")
        self.banner.setVisible(False)
        self.banner_close = QPushButton("Dismiss")
        self.banner_close.setVisible(False)
        self.banner_close.clicked.connect(self.hide_banner)
        self.editor = DeclarationEditor(self.document)
        self.roofline = RooflineView(self.document)
        # runs, their table and samples (gui/measure_tab.py): built at start, the largest page sizes the tabs
        self.measurement = MeasurementTab(self.document)
        self.profile_importer = ProfileImporter(self.document, self)  # File ▸ Import profile… and dropped .csv files
        self.tabs = QTabWidget()
        self.tabs.setObjectName("plotTabs")
        self.deferred_pages = DeferredPages(self.tabs)
        self._make_tabs()
        banner_row = QHBoxLayout()
        banner_row.addWidget(self.banner, 1)
        banner_row.addWidget(self.banner_close, 0, Qt.AlignmentFlag.AlignTop)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(banner_row)
        layout.addWidget(_scrolled(self.editor, vertical=False))  # the form scrolls sideways before the window grows
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        # docks
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

        self.session_io = self._session_files()  # recent files, unsaved-changes questions, autosave, recovery, drops, reports
        self._make_toolbar()
        self._make_menus()  # View ▸ Tool bar: after the tool bar
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

        doc = self.document
        doc.undo_stack.cleanChanged.connect(self._show_title)
        doc.path_changed.connect(self._show_title)
        doc.session_replaced.connect(self._show_title)
        doc.settings_changed.connect(self._show_settings)
        doc.device_changed.connect(self._show_device_status)
        doc.selection_changed.connect(self._enable_actions)
        doc.operations_changed.connect(self._enable_actions)
        self._show_title()
        self._show_settings()
        self._show_device_status()
        self._enable_actions()
        self._let_panels_scroll(False)
        self._restore_preferences()

    # ------------------------------------------------------------------ construction
    def _make_tabs(self) -> None:
        """The plot tabs: the roofline and the measurement tab now, the other views when first needed
        (`self.sweep` and the like build theirs when read; gui/deferred_pages.py)."""
        doc, pages = self.document, self.deferred_pages

        def sweep() -> QWidget:
            from workbench.gui.sweep_view import SweepView

            return SweepView(doc)

        def profile() -> QWidget:
            importer = self.profile_importer
            return ProfileComparisonView(doc, self.import_profile_dialog, importer.edit_matches, importer.remove)

        def compare() -> QWidget:  # operations × devices, overlaid rooflines (gui/compare_view.py)
            from workbench.gui.compare_view import CompareView

            return CompareView(doc)

        def timeline() -> QWidget:  # a step of several operations in time (gui/timeline_view.py)
            from workbench.gui.timeline_view import TimelineView

            return TimelineView(doc)

        self.tabs.addTab(self.roofline, "&Roofline")
        pages.add("sweep", "&Bound vs size", sweep)
        self.tabs.addTab(self.measurement, "&Measurement")
        pages.add("profile", "&Profile", profile)
        pages.add("compare", "&Compare devices", compare)
        pages.add("timeline", "Step &timeline", timeline)
        pages.build_after_first_paint(self.tabs.tabBar())

    def _session_files(self) -> SessionFiles:
        """The window's file life, given what it needs and no more; its menu entries join the window's actions."""
        hooks = WindowHooks(
            open_session=self.open_session,
            save_session=self.save_session,
            import_profile=self.import_profile,
            show_banner=self.show_banner,
            hide_banner=self.hide_banner,
            show_status=lambda text, ms: self.statusBar().showMessage(text, ms),
            roofline_view=lambda: self.roofline.widget,
        )
        files = SessionFiles(self.document, self.settings, self, hooks)
        self.actions["export_report"] = files.export_report_action
        self.actions["clear_recent"] = files.clear_recent_action
        return files

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(_scrolled(widget))
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, key: str, text: str, slot: Callable[..., object], shortcut: QKeySequence | str | None = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        action.setObjectName(f"action_{key}")
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(slot)
        self.actions[key] = action
        return action

    def _make_actions(self) -> None:
        doc = self.document
        sk = QKeySequence.StandardKey
        a = self._action
        a("new", "&New session", self.new_session, sk.New, "Start a new session with one GEMM")
        a("open", "&Open session…", self.open_session_dialog, sk.Open, "Open a session file")
        a("save", "&Save session", self.save_session, sk.Save, "Save the session")
        a("import_profile", "&Import profile…", self.import_profile_dialog, "Ctrl+I",
          "Read an Nsight Compute or Nsight Systems CSV and compare its kernels with the declared operations")
        a("import_torch", "Import PyTorch &model…", self.import_torch_dialog, None,
          "Trace a PyTorch model on the meta device into the Timeline's step (a config or a Python file)")
        a("save_as", "Save session &as…", self.save_session_as, sk.SaveAs, "Save the session under a new name")
        a("export_png", "Export plot as &PNG…", lambda: self.export_plot_dialog("png"), "Ctrl+E", "Write the visible plot as a PNG image")
        a("export_svg", "Export plot as S&VG…", lambda: self.export_plot_dialog("svg"), "Ctrl+Shift+E", "Write the visible plot as an SVG drawing")
        a("copy_derivation", "&Copy derivation", self.panel_copy, "Ctrl+Shift+C", "Copy the derivation as text")
        a("quit", "&Quit", self.close, sk.Quit)
        stack = doc.undo_stack
        undo = a("undo", "&Undo", stack.undo, sk.Undo)
        redo = a("redo", "&Redo", stack.redo, sk.Redo)
        undo.setEnabled(False)
        redo.setEnabled(False)
        stack.canUndoChanged.connect(undo.setEnabled)
        stack.canRedoChanged.connect(redo.setEnabled)
        # Their tool-bar tooltips name the step ("Undo Edit gemm 4096³ fp16"), read when asked for (_StepTips).
        a("add", "&Add operation", lambda: doc.add_operation(), "Ctrl+Shift+N", "Add an operation (a 4096³ GEMM to edit)")
        a("duplicate", "&Duplicate", lambda: doc.duplicate_operation(doc.current), "Ctrl+D", "Duplicate the selected operation")
        a("rename", "Re&name…", lambda: self.operations.rename_current(), "F2", "Rename the selected operation")
        a("remove", "Re&move", lambda: doc.remove_operation(doc.current), QKeySequence(sk.Delete), "Remove the selected operation")
        a("move_up", "Move &up", lambda: doc.move_operation(doc.current, doc.current - 1), "Ctrl+Shift+Up", "Move the selected operation up")
        a("move_down", "Move do&wn", lambda: doc.move_operation(doc.current, doc.current + 1), "Ctrl+Shift+Down", "Move the selected operation down")
        a("focus_declaration", "Edit &declaration", self.focus_declaration, "Ctrl+L", "Put the cursor in the declaration line")
        binary = a("binary", "&Binary units (MiB, GiB)", lambda checked: doc.set_setting("binary", bool(checked)), "Ctrl+B",
                   "Show bytes in binary units (MiB, GiB) instead of decimal (MB, GB)")
        binary.setCheckable(True)
        a("font_larger", "&Larger text", lambda: self.change_font_size(+1), sk.ZoomIn, "Larger text, for projectors")
        a("font_smaller", "&Smaller text", lambda: self.change_font_size(-1), sk.ZoomOut, "Smaller text")
        a("font_reset", "&Start-up text size", self.reset_font_size, "Ctrl+0",
          "Back to the text size the window started with (in presentation mode, the presentation size)")
        presentation = a("presentation", "&Presentation", lambda checked: self.set_presentation(bool(checked)), "Ctrl+Shift+P",
                         "Larger text everywhere for a projector, with its own layout (leaving it restores the normal one)")
        presentation.setCheckable(True)
        a("fit_plot", "&Fit plot to data", lambda: self.roofline.fit_view(), FIT_SHORTCUT,
          "Fit the roofline to the roofs and points again after a zoom or pan (edits then follow the data)")
        for number, key in enumerate(TABS, start=1):
            a(f"tab_{key}", ("&Roofline", "&Bound vs size", "&Measurement", "&Profile", "&Compare devices", "Step &timeline")[number - 1],
              lambda _=False, i=number - 1: self.tabs.setCurrentIndex(i), f"Ctrl+{number}")
        self.labels_group = QActionGroup(self)
        for mode, label, tip in (
            (LABELS_ALL, "&All operations", "Label every operation on the roofline; beyond 20, the selected one, the pinned "
                                            "ones and the ten that take the most time (hover a point for the others)"),
            (LABELS_SELECTED, "&Selected operation", "Label only the selected operation; the legend lists the others"),
            (LABELS_NONE, "&None (legend lists them)", "No labels on the roofline; the legend lists every operation"),
        ):
            action = a(f"labels_{mode}", label, lambda _=False, m=mode: self.set_label_mode(m), None, tip)
            action.setCheckable(True)
            self.labels_group.addAction(action)
        self.actions[f"labels_{LABELS_ALL}"].setChecked(True)
        pin = a("pin_label", "&Pin the selected operation's label", lambda checked=False: self.roofline.set_pinned(
            doc.current_entry, checked), None, "Keep this operation's label on the roofline however many operations there are")
        pin.setCheckable(True)
        doc.selection_changed.connect(lambda _=0: pin.setChecked(self.roofline.is_pinned(doc.current_entry)))
        self.convention_group = QActionGroup(self)
        for convention, label in CONVENTION_LABELS.items():
            action = a(f"convention_{convention}", label, lambda _=False, c=convention: doc.set_setting("convention", c))
            action.setCheckable(True)
            self.convention_group.addAction(action)
        self.overlap_group = QActionGroup(self)
        for fraction, label in OVERLAP_CHOICES:
            action = a(f"overlap_{fraction}", label, lambda _=False, f=fraction: doc.set_setting("overlap", f))
            action.setCheckable(True)
            self.overlap_group.addAction(action)
        a("detect", "&Detect GPUs again", self.start_detection, None, "Ask NVML for GPUs again")
        a("reset_rates", "&Reset all rates", doc.reset_rates, None, "Back to the device's own figures")
        a("calibrate", "&Calibrate…", lambda: self.measurement.open_calibration(), None,
          "Measure this machine's sustained bandwidth and matrix rates and use them as the device's rates")
        a("shortcuts", "&Keyboard shortcuts", self.show_shortcuts, sk.HelpContents)
        a("about", "&About Performance Workbench", self.show_about)
        self._example_keys: list[str] = []  # in menu order (reading the examples parses each file: once, here)
        for key, title in list_examples():
            a(f"example_{key}", title, lambda _=False, k=key: self.open_example(k))
            self._example_keys.append(key)

    def _make_menus(self) -> None:
        bar = self.menuBar()
        acts = self.actions

        def menu(title: str, keys: list[str | QMenu | None]) -> object:
            m = bar.addMenu(title)
            for key in keys:
                if key is None:
                    m.addSeparator()
                elif isinstance(key, QMenu):
                    m.addMenu(key)
                else:
                    m.addAction(acts[key])
            return m

        recent = self.session_io.recent_menu
        menu("&File", ["new", "open", recent, "import_profile", "import_torch", None, "save", "save_as", None,
                       "export_png", "export_svg", "export_report", "copy_derivation", None, "quit"])
        menu("&Edit", ["undo", "redo", None, "add", "duplicate", "rename", "remove", None, "move_up", "move_down", None, "focus_declaration"])
        view = bar.addMenu("&View")
        view.addAction(acts["binary"])
        view.addSeparator()
        for key in ("font_larger", "font_smaller", "font_reset", "presentation"):
            view.addAction(acts[key])
        view.addSeparator()
        view.addAction(acts["fit_plot"])
        labels_menu = view.addMenu("&Labels")
        labels_menu.addActions(self.labels_group.actions())
        labels_menu.addSeparator()
        labels_menu.addAction(self.actions["pin_label"])
        levels_menu = view.addMenu("Roofline &levels")
        levels_menu.addActions(list(self.roofline.level_actions.values()))
        view.addSeparator()
        for key in TABS:
            view.addAction(acts[f"tab_{key}"])
        view.addSeparator()
        for dock in (self.operations_dock, self.device_dock, self.panel_dock, self.notes_dock):
            view.addAction(dock.toggleViewAction())
        view.addAction(self.toolbar.toggleViewAction())
        analysis = bar.addMenu("&Analysis")
        convention_menu = analysis.addMenu("FLOP &convention")
        convention_menu.addActions(self.convention_group.actions())
        overlap_menu = analysis.addMenu("Compute/memory &overlap")
        overlap_menu.addActions(self.overlap_group.actions())
        menu("&Device", ["detect", "calibrate", "reset_rates"])
        menu(EXAMPLES_MENU, [f"example_{key}" for key in self._example_keys])
        menu("&Help", ["shortcuts", None, "about"])

    def _make_toolbar(self) -> None:
        bar = self.addToolBar("Tool bar")
        bar.setObjectName("mainToolbar")
        self.toolbar = bar
        bar.setMovable(False)
        self._step_tips = _StepTips(self.document.undo_stack, self)
        for key in ("undo", "redo", None, "add", "duplicate", "remove", None, "binary"):
            if key is None:
                bar.addSeparator()
            elif key in ("undo", "redo"):
                bar.addWidget(self._step_button(bar, key))
            else:
                bar.addAction(self.actions[key])
        bar.addSeparator()
        self.convention_box = _WholeChoice()
        self.convention_box.setObjectName("conventionBox")
        for convention, label in CONVENTION_LABELS.items():
            self.convention_box.addItem(label, convention)
        self.convention_box.activated.connect(
            lambda i: self.document.set_setting("convention", self.convention_box.itemData(i))
        )
        bar.addWidget(_WholeChoice.labelled(" FLOP: ", self.convention_box))
        self.overlap_box = _WholeChoice()
        self.overlap_box.setObjectName("overlapBox")
        for fraction, label in OVERLAP_CHOICES:
            self.overlap_box.addItem(label, fraction)
        self.overlap_box.activated.connect(lambda i: self.document.set_setting("overlap", self.overlap_box.itemData(i)))
        bar.addWidget(_WholeChoice.labelled("  Bound: ", self.overlap_box))

    def _step_button(self, bar: QToolBar, key: str) -> QToolButton:
        """The undo or redo button: a widget of its own on the tool bar, following its action's enabled state.

        Undo is enabled by the first keystroke after a save (or the start) and disabled again when typing returns
        to the saved text. A tool bar lays itself, and with it the main window and every dock, out again on
        every change of an action it holds, and a button made for the action (setDefaultAction) re-sets its
        text and font on each change, which lays the bar out too. This button only follows `enabledChanged` and
        triggers the action; its tooltip names the step (_StepTips)."""
        action = self.actions[key]
        button = QToolButton(bar)
        button.setText(action.text().replace("&", ""))
        button.setEnabled(action.isEnabled())
        action.enabledChanged.connect(button.setEnabled)
        button.clicked.connect(action.trigger)
        button.setAutoRaise(True)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        button.setToolButtonStyle(bar.toolButtonStyle())
        bar.toolButtonStyleChanged.connect(button.setToolButtonStyle)
        button.setProperty("step", key)
        button.installEventFilter(self._step_tips)
        return button

    # ------------------------------------------------------------------ showing state
    def _show_title(self, *_: object) -> None:
        doc = self.document
        name = os.path.basename(doc.path) if doc.path else (doc.session.title or "untitled session")
        self.setWindowTitle(f"{name}[*] — {APP_NAME}")
        self.setWindowModified(not doc.undo_stack.isClean())

    def _show_settings(self) -> None:
        settings = self.document.session.settings
        self.actions["binary"].setChecked(settings.binary)
        self.actions[f"convention_{settings.convention}"].setChecked(True)
        overlap_key = f"overlap_{float(settings.overlap)}"
        for action in self.overlap_group.actions():
            action.setChecked(action.objectName() == f"action_{overlap_key}")
        self.convention_box.setCurrentIndex(max(self.convention_box.findData(settings.convention), 0))
        index = self.overlap_box.findData(float(settings.overlap))
        if index < 0:
            self.overlap_box.addItem(f"overlap f = {settings.overlap:g}", float(settings.overlap))
            index = self.overlap_box.count() - 1
        self.overlap_box.setCurrentIndex(index)

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

    def _enable_actions(self, *_: object) -> None:
        doc = self.document
        count = len(doc.operations)
        has = 0 <= doc.current < count
        for key in ("duplicate", "rename", "remove", "copy_derivation"):
            self.actions[key].setEnabled(has)
        self.actions["move_up"].setEnabled(has and doc.current > 0)
        self.actions["move_down"].setEnabled(has and doc.current < count - 1)

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

    # ------------------------------------------------------------------ plots
    def current_plot_view(self):  # type: ignore[no-untyped-def]
        """The graphics view of the plot on screen (the roofline when the measurement tab is open)."""
        return self.sweep.widget if self.tabs.currentWidget() is self.sweep else self.roofline.widget

    def export_plot_dialog(self, kind: str) -> None:
        name = "sweep" if self.tabs.currentWidget() is self.sweep else "roofline"
        path, _ = QFileDialog.getSaveFileName(self, f"Export plot as {kind.upper()}", f"{name}.{kind}", f"{kind.upper()} (*.{kind})")
        if path:
            self.export_plot(path, kind)

    def export_plot(self, path: str, kind: str) -> bool:
        try:
            (export_svg if kind == "svg" else export_png)(self.current_plot_view(), path)
        except WorkbenchError as exc:
            self.show_banner(str(exc))
            return False
        self.status.showMessage(f"Wrote {path}", 5000)
        return True

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

    # ------------------------------------------------------------------ text size
    def font_points(self) -> float:
        return QApplication.font().pointSizeF()

    def change_font_size(self, step: int) -> None:
        self.set_font_points(self.font_points() + step)

    def reset_font_size(self) -> None:
        """Ctrl+0: the size the window started with, or in presentation mode the presentation size."""
        self.set_font_points(self._presentation_points() if self._presentation else self._startup_points)

    @property
    def presentation(self) -> bool:
        return self._presentation

    def _presentation_points(self) -> float:
        return max(round(self._startup_points * PRESENTATION_SCALE), PRESENTATION_MIN_POINTS)

    def set_presentation(self, on: bool) -> None:
        """View ▸ Presentation: larger text in every view, plot and table; each mode keeps its own layout and size."""
        if on == self._presentation:
            self.actions["presentation"].setChecked(on)
            return
        s = self.settings
        state_key, font_key = LAYOUT_KEYS[self._presentation]
        s.setValue(state_key, self.saveState())  # the mode being left keeps its layout
        if on:
            self._normal_geometry = self.saveGeometry()
        self._presentation = on
        self.actions["presentation"].setChecked(on)
        if on:
            self._let_panels_scroll(True)
        else:  # after the normal text size has reached every widget, or their large minimums would widen the window
            QTimer.singleShot(0, self._back_from_presentation)
        state_key, font_key = LAYOUT_KEYS[on]
        default = self._presentation_points() if on else self._startup_points
        self.set_font_points(s.value(font_key, default, type=float) or default)
        state = s.value(state_key)
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state)
            QTimer.singleShot(0, self._hide_stale_tab_bars)
        elif on:  # the first presentation: the plot gets the room (View ▸ Device brings the device panel back)
            self.device_dock.hide()
            if self.available_screen().height() < SHORT_SCREEN_LINES:  # a projector's 720 lines: the tool bar too
                self.toolbar.hide()  # (View ▸ Tool bar; its actions are in the menus)
            QTimer.singleShot(0, self._presentation_dock_sizes)
        elif self._normal_state is not None:
            self.restoreState(self._normal_state)
            QTimer.singleShot(0, self._hide_stale_tab_bars)
        if not on and self._normal_geometry is not None:  # the window's normal size, not the one larger text pushed it to
            self.restoreGeometry(self._normal_geometry)
        if on:
            self.fit_to_screen()
            QTimer.singleShot(0, self.fit_to_screen)  # again once the panels' smaller minimum sizes are in force
        self.status.showMessage("Presentation mode: Ctrl+Shift+P leaves it" if on else "Normal mode", 4000)

    def _hide_stale_tab_bars(self) -> None:
        """Hide a tabified dock group's tab bar that restoreState left behind.

        Switching layouts (presentation ⇄ normal) with restoreState gives the tabbed Analysis/Notes group a new
        tab bar, and Qt hands the previous one to deleteLater, shown where it was: until an event loop deletes
        it (never, where events are processed without one, as in the screenshot script) it sticks out over the
        window's bottom corner at the other mode's text size. The bar in use sits right under its group's
        visible dock; any other tab bar of the window naming the same docks is the stale one.
        """
        docks = [dock for dock in self.findChildren(QDockWidget) if self.tabifiedDockWidgets(dock)]
        shown = [dock for dock in docks if dock.isVisible() and not dock.visibleRegion().isEmpty()]
        for bar in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if not bar.isVisible() or bar.count() == 0:
                continue
            names = {bar.tabText(index) for index in range(bar.count())}
            group = [dock for dock in shown if dock.windowTitle() in names]
            if group and not any(
                abs(bar.x() - dock.x()) <= 2 and abs(bar.y() - dock.geometry().bottom() - 1) <= 2 for dock in group
            ):
                bar.hide()

    def _let_panels_scroll(self, on: bool) -> None:
        """Panels too wide for their docks scroll, in either mode, so the window's least size stays within a
        1280 × 720 screen (a projector's, a small laptop's); presentation also stacks the analysis panel's details
        (the plot pages keep their widest page's least width: a squeezed measurement tab elided its buttons)."""
        for area in self.findChildren(_RoomyArea):
            area.share = 6 if on else 4
            area.set_squeezable(True)
            area.updateGeometry()
        self.panel.stack_details(on)  # the details under the figures: three columns are wider than the dock
        # on a projector's 720 lines the roofline's three-line caption goes to its tab's tooltip: the plot keeps the room
        short = on and self.available_screen().height() < SHORT_SCREEN_LINES
        self.roofline.caption.setVisible(not short)
        self.tabs.setTabToolTip(self.tabs.indexOf(self.roofline), self.roofline.caption.text() if short else "")

    def _back_from_presentation(self) -> None:
        """Normal mode again, once the normal text has reached every widget: the panels ask for their full least
        widths, each tells its dock the one it has at the normal text (a dock hidden in presentation kept the larger
        text's), and the window, pushed wider meanwhile, is brought back within its screen."""
        if self._presentation:
            return
        QApplication.sendPostedEvents()  # the normal text's font and layout events first (a shown dock's panel's too)
        self._let_panels_scroll(False)
        for area in self.findChildren(_RoomyArea):
            area._fit()
        for _ in range(2):  # the docks take their areas' least widths, then the window its docks'
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        self.fit_to_screen()

    def _presentation_dock_sizes(self) -> None:
        """The first presentation: docks as shares of the screen's width, so the plot keeps most of a small screen.

        The layout is run at once: left to the event loop, the resize was often lost (the first presentation
        posts a relayout of every widget at the larger text in the same turn) and the docks kept the normal
        layout's widths, a third of the window. The right-hand group is sized through its dock on top.
        """
        width = self.available_screen().width()
        right = next((dock for dock in (self.panel_dock, self.notes_dock) if not dock.visibleRegion().isEmpty()), self.panel_dock)
        wanted = [(dock, int(width * share)) for dock, share in zip((self.operations_dock, right), PRESENTATION_DOCK_SHARES)
                  if dock.isVisible()]
        if wanted and self._presentation:
            self.resizeDocks([dock for dock, _ in wanted], [size for _, size in wanted], Qt.Orientation.Horizontal)
            self.layout().activate()

    def available_screen(self):  # type: ignore[no-untyped-def]
        """The room the window's screen leaves for windows (QRect)."""
        screen = self.screen() or QApplication.primaryScreen()
        return screen.availableGeometry()

    def fit_to_screen(self) -> None:
        """Shrink the window to its screen's available room if it is larger (a projector's screen is often small)."""
        room = self.available_screen()
        if self.width() > room.width() or self.height() > room.height():
            self.resize(min(self.width(), room.width()), min(self.height(), room.height()))

    def set_font_points(self, points: float) -> None:
        points = min(max(points, FONT_RANGE[0]), FONT_RANGE[1])
        font = QFont(QApplication.font())
        font.setPointSizeF(points)
        with collection_paused():  # Qt sends every widget the new font
            QApplication.setFont(font)
        for widget in self.findChildren(QWidget):  # a widget with a style sheet does not follow the application font
            if widget.styleSheet():
                widget.setFont(font)
        self.editor.set_base_font(font)
        self.panel.set_base_font(font)
        self.notes_panel.set_base_font(font)
        self.roofline.set_plot_font(font)
        self.sweep.set_plot_font(font)
        self.compare.set_plot_font(font)
        self.profile_view.set_base_font(font)
        self.measurement.set_base_font(font)
        self.settings.setValue(LAYOUT_KEYS[getattr(self, "_presentation", False)][1], points)
        self.status.showMessage(f"Text size {points:g} pt", 2000)
        # The status bar takes the new height of its text only when it handles a layout request of its own, and
        # the new font reaches it through posted events: its request then comes after the window's relayout, and
        # the window (under X11) lays the status bar out at its new height one event-loop turn later, when the
        # plot above it has already been laid out (its labels too) at a height 8 px too tall. The status bar gets
        # the font now and handles its request at once, so the window's first relayout is its final one.
        self.status.setFont(font)
        QApplication.sendPostedEvents(self.status, QEvent.Type.LayoutRequest)

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
        from workbench.about import optional_parts

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

    def _default_dock_sizes(self) -> None:
        """First run: a short operations list over a tall device panel; the analysis panel wide enough to read, and
        on a laptop's or projector's screen the docks as shares of the window's width, so the plots keep the rest."""
        operations = max(150, self.operations.minimumSizeHint().height() + 40)  # its buttons and a few rows
        self.resizeDocks([self.operations_dock], [operations], Qt.Orientation.Vertical)  # the device panel the rest
        width = self.width()
        sizes = [min(most, int(width * share)) for most, share in zip(DEFAULT_DOCK_WIDTHS, DEFAULT_DOCK_SHARES)]
        self.resizeDocks([self.operations_dock, self.panel_dock], sizes, Qt.Orientation.Horizontal)

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
        if tab in TABS:
            self.tabs.setCurrentIndex(TABS.index(tab))

    def save_preferences(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue(LAYOUT_KEYS[self._presentation][0], self.saveState())  # presentation keeps its own layout
        s.setValue("view/tab", TABS[self.tabs.currentIndex()])
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
