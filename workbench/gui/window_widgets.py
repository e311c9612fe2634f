"""The main window's own small widgets: a dock's scroll area that asks for the room its panel needs, the undo and
redo buttons' tooltips that name the step, and a tool-bar choice that shows its whole text."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QToolTip, QWidget

from workbench.gui.undo_stack import QtUndoStack


class RoomyArea(QScrollArea):
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


class StepTips(QObject):
    """The undo and redo buttons' tooltips: the step they would take ("Undo Edit gemm 4096³ fp16"), read from
    the undo stack when the tooltip is asked for.

    Kept on the actions instead, the tooltip would change on every keystroke (each renames the step), and a
    changed action makes the tool bar, and with it the whole main window and every dock, lay out again."""

    def __init__(self, stack: QtUndoStack, parent: QObject) -> None:
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


class WholeChoice(QComboBox):
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


def scrolled(widget: QWidget, vertical: bool = True) -> QScrollArea:
    """`widget` in an area that may be narrower (and, unless `vertical` is False, shorter) than the widget's own
    minimum (see RoomyArea)."""
    return RoomyArea(widget, vertical)
