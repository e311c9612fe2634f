"""What a keystroke repaints in the Analysis panel, and that what it leaves on screen is what a fresh paint shows.

- The labels a keystroke retexts paint their own background: the panel behind them is not repainted, and the
  screen after each keystroke is pixel for pixel a fresh render of the panel, at normal and presentation size.
- The derivation's paragraphs keep their shaped text from layout to paint; painted after edits in place, the view
  is pixel for pixel a fresh view of the same derivation.
- A keystroke lays the panel out once: its labels are in one layout, not in nested widgets with layouts of their
  own, each laid out after the other; and its scroll area does not ask it for a preferred size it does not use.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QImage, QPaintEvent, QRegion
from PySide6.QtWidgets import QApplication, QWidget

from workbench.gui.derivation_view import DerivationView

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
TILED = "gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=tiled, tile_m=128, tile_n=128, tile_k=32)"


class _Paints(QObject):
    """The paint events of each widget it filters: how many, and the region they repainted."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[QObject, int] = {}
        self.regions: dict[QObject, QRegion] = {}

    def clear(self) -> None:
        self.counts.clear()
        self.regions.clear()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            assert isinstance(event, QPaintEvent)
            self.counts[watched] = self.counts.get(watched, 0) + 1
            self.regions[watched] = self.regions.get(watched, QRegion()).united(event.region())
        return False


def _pixels(image: QImage) -> QImage:
    return image.convertToFormat(QImage.Format.Format_RGB32)


def _on_screen(widget: QWidget) -> QImage:
    """What the window's backing store holds where `widget` is: what the keystrokes' repaints left there."""
    window = widget.window()
    top_left = widget.mapTo(window, QPoint(0, 0))
    screen = QApplication.primaryScreen()
    grabbed = screen.grabWindow(window.winId(), top_left.x(), top_left.y(), widget.width(), widget.height())
    return _pixels(grabbed.toImage())


def _type(line, keys: list[Qt.Key]) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtTest import QTest

    for key in keys:
        QTest.keyClick(line, key)
        QApplication.processEvents()


def test_a_keystroke_repaints_the_labels_it_retexts_not_the_panel_behind_them(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    """Each keystroke retexts the title, the declaration, the figures, some details and the limiter, and repaints
    them; the panel is not repainted behind them, nor, once the typing pauses and the derivation is written out,
    behind the derivation's scroll bar (which repaints where the derivation changes height, its handle then having
    another length, and fills its own background). What is on
    screen after each keystroke is, pixel for pixel, what a fresh render of the panel's dock shows, at normal and
    at presentation size."""
    window, line = typing_window(operations=3)
    window.available_screen = lambda: QRect(0, 0, 1600, 1000)
    panel = window.panel
    paints = _Paints()
    retexted = [panel.title, panel.declaration, *panel.values.values(), panel.details["work"], panel.limiter]
    bar = panel.derivation.verticalScrollBar()
    for widget in (panel, *retexted, bar):
        widget.installEventFilter(paints)
    for presentation in (False, True):
        window.set_presentation(presentation)
        qtbot.wait(50)
        line.setFocus()
        line.setCursorPosition(len("gemm(M=4096"))
        keys = [Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_2, Qt.Key.Key_Backspace, Qt.Key.Key_3]
        keys.append(Qt.Key.Key_Backspace)
        _type(line, keys)  # the first keystrokes after a change of size may still settle the layout
        for key in keys:
            paints.clear()
            before = panel.values["work"].text()
            _type(line, [key])
            assert panel.values["work"].text() != before, "the keystroke changed the figures"
            repainted = paints.regions.get(panel, QRegion())
            for label in retexted:
                assert paints.counts.get(label, 0) >= 1, (presentation, label.objectName())
                behind = QRect(label.mapTo(panel, QPoint(0, 0)), label.size())
                assert not repainted.intersects(behind), (presentation, key, label.objectName())
            assert panel.derivation_due and paints.counts.get(bar, 0) == 0, "the derivation waits for a pause"
            height = panel.derivation.document().size().height()
            panel.catch_up_derivation()  # the typing pauses (the panel's timer slot)
            QApplication.processEvents()
            if not bar.visibleRegion().isEmpty() and panel.derivation.document().size().height() != height:
                assert paints.counts.get(bar, 0) >= 1, (key, "the derivation's scroll bar repainted")
            repainted = paints.regions.get(panel, QRegion())
            assert not repainted.intersects(QRect(bar.mapTo(panel, QPoint(0, 0)), bar.size())), (presentation, key)
            qtbot.wait(10)  # anything the keystroke left for the next turns of the event loop
            dock = window.panel_dock
            assert _on_screen(dock) == _pixels(dock.grab().toImage()), (presentation, key)
    window.set_presentation(False)
    window.close()
    window.wait_for_workers()


def _keeps_shaped_text(view: DerivationView) -> bool:
    block = view.document().begin()
    while block.isValid():
        if not block.layout().cacheEnabled():
            return False
        block = block.next()
    return True


def test_the_derivation_painted_after_edits_in_place_is_a_fresh_view_of_it(derivation_texts, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The derivation's paragraphs keep their glyphs from layout to paint (set afresh or retexted in place), and
    what the view paints after each edit in place (figures longer and shorter, lines that wrap and unwrap, a
    table's cells) is pixel for pixel what a fresh view of the same derivation paints."""
    view = DerivationView()
    qtbot.addWidget(view)
    view.resize(420, 700)
    view.show()
    qtbot.waitExposed(view)
    for family in (
        [GEMM, "gemm(M=40961, N=4096, K=4096, dtype=fp16)", "gemm(M=4096, N=40961, K=4095, dtype=fp16)", GEMM],
        [TILED, TILED.replace("M=4096", "M=40961"), TILED.replace("K=4096", "K=1000"), TILED],
    ):
        for text in derivation_texts(family):
            view.show_rich_text(text)
            QApplication.processEvents()
            assert _keeps_shaped_text(view)
            fresh = DerivationView()
            qtbot.addWidget(fresh)
            fresh.resize(view.size())
            fresh.show()
            fresh.show_rich_text(text)
            QApplication.processEvents()
            assert view.toPlainText() == fresh.toPlainText()
            assert _pixels(view.viewport().grab().toImage()) == _pixels(fresh.viewport().grab().toImage())
            fresh.close()


class _LayoutRequests(QObject):
    """Counts the layout requests each widget it filters receives."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[QObject, int] = {}

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.LayoutRequest:
            self.counts[watched] = self.counts.get(watched, 0) + 1
        return False


def test_a_keystroke_lays_the_panel_out_once(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """The title, the declaration, the figures and the limiter a keystroke retexts are all in the panel's one
    layout: the keystroke lays out the panel, once, and no widget within it (a widget with a layout of its own
    would be laid out first and then have the panel laid out again)."""
    window, line = typing_window(operations=3)
    panel = window.panel
    requests = _LayoutRequests()
    inside = [widget for widget in panel.findChildren(QWidget) if widget.layout() is not None]
    for widget in (panel, *inside):
        widget.installEventFilter(requests)
    _type(line, [Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_2, Qt.Key.Key_Backspace])
    for key in [Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_2, Qt.Key.Key_Backspace]:
        requests.counts.clear()
        before = panel.title.text()
        _type(line, [key])
        assert panel.title.text() != before
        assert requests.counts.get(panel, 0) == 1, requests.counts
        assert not [widget.objectName() or type(widget).__name__ for widget in inside if requests.counts.get(widget)]
    window.close()
    window.wait_for_workers()


def test_a_keystroke_does_not_measure_the_panel_for_a_size_its_area_does_not_use(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """The panel's scroll area sizes the panel itself (at least its least size, as large as the dock); QScrollArea
    would ask the panel for its preferred size on every layout request (the preferred height for the preferred
    width: every word-wrapped label laid out again at that width), only to size a resizable widget. A keystroke
    asks the panel for its least size, and not for its preferred one."""
    window, line = typing_window(operations=3)
    panel = window.panel
    asked: list[str] = []
    panel.sizeHint = lambda: (asked.append("sizeHint"), QWidget.sizeHint(panel))[1]  # C++ asks it of Python
    _type(line, [Qt.Key.Key_1, Qt.Key.Key_Backspace])
    asked.clear()
    for key in [Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_2, Qt.Key.Key_Backspace]:
        before = panel.title.text()
        _type(line, [key])
        assert panel.title.text() != before
    assert asked == []
    window.resize(1500, 900)  # a new size of the dock: the panel still fills it
    qtbot.wait(20)
    area = panel.parentWidget().parentWidget()
    assert panel.width() == max(area.viewport().width(), panel.minimumSizeHint().width())
    window.close()
    window.wait_for_workers()
