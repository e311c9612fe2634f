"""The main window's text size, presentation mode and fitting to its screen: the `WindowPresentation` part of
`MainWindow` (gui/window.py)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QDockWidget, QTabBar, QWidget

from workbench.gui.application import collection_paused
from workbench.gui.window_widgets import RoomyArea

DEFAULT_FONT_POINTS = 10.0
FONT_RANGE = (7.0, 28.0)
PRESENTATION_SCALE = 1.6  # presentation text: the start-up size × 1.6, and at least 16 pt
PRESENTATION_MIN_POINTS = 16.0
# On a first run the left and right docks take 378 and 528 px of a 1600 px window, and the same shares of a smaller one:
# the plot tabs keep 682 px of it, room for the GEMM example's roof labels in full at the normal text size
DEFAULT_DOCK_WIDTHS = (378, 528)
DEFAULT_DOCK_SHARES = (DEFAULT_DOCK_WIDTHS[0] / 1600, DEFAULT_DOCK_WIDTHS[1] / 1600)
PRESENTATION_DOCK_SHARES = (0.18, 0.26)  # the operations and analysis docks' widths, as shares of the screen's width
SHORT_SCREEN_LINES = 900  # a first presentation on a screen shorter than this hides the tool bar as well
# Each mode keeps its own layout and text size (View ▸ Presentation): widened docks on a projector
# do not become the normal layout.
LAYOUT_KEYS = {False: ("window/state", "view/font_points"), True: ("presentation/state", "presentation/font_points")}


class WindowPresentation:
    """The text-size part of `MainWindow`: larger and smaller text, presentation mode with its own layout, the docks'
    first sizes and the window kept within its screen."""

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
        for area in self.findChildren(RoomyArea):
            area.share = 6 if on else 4
            area.set_squeezable(True)
            area.updateGeometry()
        self.panel.stack_details(on)  # the details under the figures: three columns are wider than the dock
        # on a projector's 720 lines the pages spare what they can (the roofline's caption goes to its tab's tooltip)
        self.set_pages_short_screen(on and self.available_screen().height() < SHORT_SCREEN_LINES)

    def _back_from_presentation(self) -> None:
        """Normal mode again, once the normal text has reached every widget: the panels ask for their full least
        widths, each tells its dock the one it has at the normal text (a dock hidden in presentation kept the larger
        text's), and the window, pushed wider meanwhile, is brought back within its screen."""
        if self._presentation:
            return
        QApplication.sendPostedEvents()  # the normal text's font and layout events first (a shown dock's panel's too)
        self._let_panels_scroll(False)
        for area in self.findChildren(RoomyArea):
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
        self.set_page_fonts(font)  # each page that takes the size (gui/pages.py); a deferred one when it is built
        self.settings.setValue(LAYOUT_KEYS[getattr(self, "_presentation", False)][1], points)
        self.status.showMessage(f"Text size {points:g} pt", 2000)
        # The status bar takes the new height of its text only when it handles a layout request of its own, and
        # the new font reaches it through posted events: its request then comes after the window's relayout, and
        # the window (under X11) lays the status bar out at its new height one event-loop turn later, when the
        # plot above it has already been laid out (its labels too) at a height 8 px too tall. The status bar gets
        # the font now and handles its request at once, so the window's first relayout is its final one.
        self.status.setFont(font)
        QApplication.sendPostedEvents(self.status, QEvent.Type.LayoutRequest)

    def _default_dock_sizes(self) -> None:
        """First run: a short operations list over a tall device panel; the analysis panel wide enough to read, and
        on a laptop's or projector's screen the docks as shares of the window's width, so the plots keep the rest."""
        operations = max(150, self.operations.minimumSizeHint().height() + 40)  # its buttons and a few rows
        self.resizeDocks([self.operations_dock], [operations], Qt.Orientation.Vertical)  # the device panel the rest
        width = self.width()
        sizes = [min(most, int(width * share)) for most, share in zip(DEFAULT_DOCK_WIDTHS, DEFAULT_DOCK_SHARES)]
        self.resizeDocks([self.operations_dock, self.panel_dock], sizes, Qt.Orientation.Horizontal)
