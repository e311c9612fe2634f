"""The main window's actions, menus and tool bar, and the actions' checked and enabled states: the `WindowActions`
part of `MainWindow` (gui/window.py)."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QToolBar, QToolButton

from workbench.model.conventions import CONVENTION_LABELS
from workbench.documents.examples import list_examples
from workbench.gui.application import EXAMPLES_MENU
from workbench.gui.roofline_view import FIT_SHORTCUT, LABELS_ALL, LABELS_NONE, LABELS_SELECTED
from workbench.gui.window_widgets import StepTips, WholeChoice

OVERLAP_CHOICES: tuple[tuple[float, str], ...] = (
    (1.0, "full overlap (max)"),
    (0.75, "overlap f = 0.75"),
    (0.5, "overlap f = 0.5"),
    (0.25, "overlap f = 0.25"),
    (0.0, "no overlap (sum)"),
)


class WindowActions:
    """The actions part of `MainWindow`: every action (in `self.actions`, by key), the menus and the tool bar that
    hold them, and their states following the document."""

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
        self._make_file_actions()
        self._make_edit_actions()
        self._make_view_actions()
        self._make_label_actions()
        self._make_analysis_actions()
        self._make_device_and_help_actions()

    def _make_file_actions(self) -> None:
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

    def _make_edit_actions(self) -> None:
        doc = self.document
        sk = QKeySequence.StandardKey
        a = self._action
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

    def _make_view_actions(self) -> None:
        doc = self.document
        sk = QKeySequence.StandardKey
        a = self._action
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
        self._make_page_actions()  # one per registered page (gui/window_pages.py)

    def _make_label_actions(self) -> None:
        """View ▸ Labels: which operations the roofline labels, and the selected one's pin."""
        doc = self.document
        a = self._action
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

    def _make_analysis_actions(self) -> None:
        doc = self.document
        a = self._action
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

    def _make_device_and_help_actions(self) -> None:
        doc = self.document
        sk = QKeySequence.StandardKey
        a = self._action
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
                       self._make_export_menu(), "export_png", "export_svg", "export_report", "copy_derivation", None, "quit"])
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
        for key in self._page_menu_keys():
            view.addAction(acts[key])
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
        self._step_tips = StepTips(self.document.undo_stack, self)
        for key in ("undo", "redo", None, "add", "duplicate", "remove", None, "binary"):
            if key is None:
                bar.addSeparator()
            elif key in ("undo", "redo"):
                bar.addWidget(self._step_button(bar, key))
            else:
                bar.addAction(self.actions[key])
        bar.addSeparator()
        self.convention_box = WholeChoice()
        self.convention_box.setObjectName("conventionBox")
        for convention, label in CONVENTION_LABELS.items():
            self.convention_box.addItem(label, convention)
        self.convention_box.activated.connect(
            lambda i: self.document.set_setting("convention", self.convention_box.itemData(i))
        )
        bar.addWidget(WholeChoice.labelled(" FLOP: ", self.convention_box))
        self.overlap_box = WholeChoice()
        self.overlap_box.setObjectName("overlapBox")
        for fraction, label in OVERLAP_CHOICES:
            self.overlap_box.addItem(label, fraction)
        self.overlap_box.activated.connect(lambda i: self.document.set_setting("overlap", self.overlap_box.itemData(i)))
        bar.addWidget(WholeChoice.labelled("  Bound: ", self.overlap_box))

    def _step_button(self, bar: QToolBar, key: str) -> QToolButton:
        """The undo or redo button: a widget of its own on the tool bar, following its action's enabled state.

        Undo is enabled by the first keystroke after a save (or the start) and disabled again when typing returns
        to the saved text. A tool bar lays itself, and with it the main window and every dock, out again on
        every change of an action it holds, and a button made for the action (setDefaultAction) re-sets its
        text and font on each change, which lays the bar out too. This button only follows `enabledChanged` and
        triggers the action; its tooltip names the step (StepTips)."""
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

    def _enable_actions(self, *_: object) -> None:
        doc = self.document
        count = len(doc.operations)
        has = 0 <= doc.current < count
        for key in ("duplicate", "rename", "remove", "copy_derivation"):
            self.actions[key].setEnabled(has)
        self.actions["move_up"].setEnabled(has and doc.current > 0)
        self.actions["move_down"].setEnabled(has and doc.current < count - 1)
