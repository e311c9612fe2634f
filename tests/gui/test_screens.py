"""The window on real screen sizes: a 1280 × 720 projector and a 1366 × 768 laptop (offscreen screens beside the
tests' 1600 × 1000 one, tests/offscreen-screen.json): its least size fits, it stays within its screen whatever is
done, nothing in it is squeezed below its own least size, and the plot tabs' bar stays put."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QMenu, QWidget

from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.documents.examples import list_examples


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found")


def _screen(name: str):  # type: ignore[no-untyped-def]
    screen = next((screen for screen in QGuiApplication.screens() if screen.name() == name), None)
    if screen is None:
        pytest.skip(f"no offscreen screen {name!r} (tests/offscreen-screen.json is read under QT_QPA_PLATFORM=offscreen)")
    return screen


def _settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


@pytest.fixture(params=["2-projector", "3-laptop"])
def small_window(request, qtbot):  # type: ignore[no-untyped-def]
    """The main window on a small screen, as large as the screen lets it be."""
    from workbench.gui.app import build_window

    screen = _screen(request.param)
    win = build_window(detect=no_driver)
    qtbot.addWidget(win)
    win.setScreen(screen)
    win.move(screen.availableGeometry().topLeft())
    win.resize(screen.availableGeometry().size())
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: win.document.detection is not None, timeout=5000)
    assert win.screen() is screen
    yield win
    win.close()
    win.wait_for_workers()


def _within_screen(window) -> None:  # type: ignore[no-untyped-def]
    room = window.available_screen()
    least = window.minimumSizeHint()
    assert least.width() <= 1280 and least.height() <= 720, least
    assert window.width() <= room.width() and window.height() <= room.height(), (window.size(), room)


def _squeezed(window) -> list[str]:  # type: ignore[no-untyped-def]
    """Visible widgets laid out smaller than their own least size: what a layout cut off (a label's end, a
    button's text). Qt's own parts (a spin box's inner line, a tab bar's scroll arrows) and what scrolls its own
    content (lists, tables) are left out."""
    found = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.visibleRegion().isEmpty():
            continue
        if widget.objectName().startswith("qt_") or widget.objectName() in ("ScrollLeftButton", "ScrollRightButton"):
            continue
        if isinstance(widget, QAbstractScrollArea):  # a list or table shorter than its least size scrolls its rows
            continue
        least = widget.minimumSizeHint()
        if least.isValid() and (widget.width() < least.width() or widget.height() < least.height()):
            text = widget.text() if callable(getattr(widget, "text", None)) else ""
            found.append(f"{type(widget).__name__} {widget.objectName()!r} {text[:40]!r}: {widget.size().toTuple()} < {least.toTuple()}")
    return found


def _too_wide_without_scroll_bar(window) -> list[str]:  # type: ignore[no-untyped-def]
    """Scroll areas (the docks' panels, the measurement tab) whose content is wider or taller than they are but
    which show no scroll bar to reach the rest."""
    found = []
    for area in window.findChildren(QAbstractScrollArea):
        inner = getattr(area, "widget", lambda: None)()
        if inner is None or not area.isVisible() or area.visibleRegion().isEmpty():
            continue
        room = area.viewport().size()
        if inner.width() > room.width() and not area.horizontalScrollBar().isVisible():
            found.append(f"{area.objectName() or type(inner).__name__}: {inner.width()} wide in {room.width()}")
        if inner.height() > room.height() and not area.verticalScrollBar().isVisible():
            found.append(f"{area.objectName() or type(inner).__name__}: {inner.height()} tall in {room.height()}")
    return found


def test_every_example_fits_a_small_screen_with_nothing_squeezed(small_window) -> None:  # type: ignore[no-untyped-def]
    window = small_window
    for key, _ in list_examples():
        window.open_example(key)
        _settle()
        _within_screen(window)
        assert not _squeezed(window), key
        assert not _too_wide_without_scroll_bar(window), key
    for index in range(len(window.document.operations)):  # choosing another operation
        window.document.select(index)
        _settle()
        _within_screen(window)
    for tab in range(window.tabs.count()):
        window.tabs.setCurrentIndex(tab)
        _settle()
        _within_screen(window)
        assert not _squeezed(window), window.tabs.tabText(tab)


def test_presentation_fits_a_small_screen_from_any_tab(small_window) -> None:  # type: ignore[no-untyped-def]
    window = small_window
    window.open_example("batched-gemm-sweep")
    for tab in (window.measurement, window.roofline):
        window.tabs.setCurrentWidget(tab)
        _settle()
        window.set_presentation(True)
        _settle()
        _within_screen(window)
        assert not _squeezed(window)
        assert not _too_wide_without_scroll_bar(window)
        window.set_presentation(False)
        _settle()
        _within_screen(window)


def test_a_window_saved_on_a_larger_screen_opens_within_a_smaller_one(qtbot) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.app import build_window

    first = build_window(detect=no_driver)
    qtbot.addWidget(first)
    first.resize(1600, 1000)
    first.save_preferences()
    first.close()
    first.wait_for_workers()
    screen = _screen("2-projector")
    window = build_window(detect=no_driver)
    qtbot.addWidget(window)
    window.setScreen(screen)
    window.move(screen.availableGeometry().topLeft())
    window.fit_to_screen()
    window.show()
    qtbot.waitExposed(window)
    _within_screen(window)
    window.close()
    window.wait_for_workers()


def test_the_plot_tabs_stay_put_when_another_operation_is_chosen(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Operations with more or fewer fields (a tiled GEMM's seven rows, a vector add's one): the tab bar under the
    form does not move, so a click meant for a tab does not land on the plot."""
    from workbench.documents.session import OperationEntry

    window.open_example("gemm-naive-tiled-cublas")
    doc = window.document
    doc.add_operation(OperationEntry(name="add", declaration="add(n=2**24, dtype=fp32)"))
    doc.add_operation(OperationEntry(name="attention", declaration="attention(B=8, H=16, Sq=2048, Skv=2048, D=128, causal=false, fused=true, dtype=bf16)"))
    bar = window.tabs.tabBar()
    places = set()
    for index in range(len(doc.operations)):
        doc.select(index)
        _settle()
        assert not window.editor.message.isVisible()  # every declaration valid: only the fields differ
        places.add(bar.mapTo(window, QPoint(0, 0)).y())
    assert len(doc.operations) >= 5 and len(places) == 1, places


def test_the_timeline_hint_names_a_menu_the_window_has(window) -> None:  # type: ignore[no-untyped-def]
    hint = window.timeline.editor.placeholderText()
    path = hint.split("e.g. ", 1)[1].strip()
    menu_title, item = (part.strip() for part in path.split("▸"))
    menus = {action.text().replace("&", ""): action.menu() for action in window.menuBar().actions()}
    assert menu_title in menus, f"{menu_title!r} is not in the menu bar: {sorted(menus)}"
    menu = menus[menu_title]
    assert isinstance(menu, QMenu)
    assert item in [action.text().replace("&", "") for action in menu.actions()]


def test_the_compare_legend_covers_no_roof_and_names_are_whole(small_window) -> None:  # type: ignore[no-untyped-def]
    """Three devices compared on a small screen: the legend is outside the plotted area (it hid the roofs and
    points), each column is at least as wide as its device's name, and each device's whole name is its tooltip."""
    from workbench.gui.compare_view import SESSION_DEVICE
    from workbench.documents.session import OperationEntry

    window = small_window
    window.new_session()
    doc = window.document
    doc.set_device("h100-sxm")
    doc.add_operation(OperationEntry("vector add", "add(n=2**24, dtype=fp32)"))
    view = window.compare
    window.tabs.setCurrentWidget(view)
    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb"])
    _settle()
    assert len(view.legend.items) == 3
    plotted = view.plot.getViewBox().sceneBoundingRect()
    assert not view.legend.sceneBoundingRect().intersects(plotted)
    header = view.table.horizontalHeader()
    metrics = header.fontMetrics()
    for column in range(view.table.columnCount()):
        text = view.table.horizontalHeaderItem(column).text()
        assert header.sectionSize(column) >= metrics.horizontalAdvance(text), text
    for row in range(view.device_list.count()):
        item = view.device_list.item(row)
        assert item.toolTip().split("\n")[0] == item.text()
    assert not _squeezed(window)
    # the plot keeps room for its axes (the page scrolls instead): the y-axis title is whole along its axis
    axis = view.plot.getAxis("left")
    assert axis.label.boundingRect().width() <= axis.height(), "the y-axis title is cut"
    assert _titles_over_ticks(window) == []
    assert not _too_wide_without_scroll_bar(window)


def test_the_measurement_status_stays_on_its_one_line(window) -> None:  # type: ignore[no-untyped-def]
    """The progress bar's text (a run's result line) is elided to the bar's width, whole in its tooltip: the Fusion
    style wrapped a longer text onto a second line inside the one-line bar."""
    from PySide6.QtGui import QFontMetrics

    window.tabs.setCurrentWidget(window.measurement)
    _settle()
    bar = window.measurement.progress
    line = "done: gemm(M=4096, N=4096, K=4096, dtype=fp16), median 1.374 ms, check passed, " * 3
    bar.setFormat(line)
    for width in (bar.width(), 300):
        bar.resize(width, bar.height())
        assert QFontMetrics(bar.font()).horizontalAdvance(bar.text()) <= bar.contentsRect().width()
        assert bar.text().startswith("done: gemm(M=4096") and bar.text() != line
    assert bar.format() == line and bar.toolTip() == line
    bar.setFormat("idle")
    assert bar.text() == "idle"


def test_presentation_on_a_small_screen_keeps_the_roofline_legend_off_the_points(small_window) -> None:  # type: ignore[no-untyped-def]
    """The batched-GEMM sweep at presentation size on a projector and a laptop: the legend (the roofs and
    operations whose labels found no room on the small plot) covers none of the points near 1 PFLOP/s — a legend
    in a bottom corner listed the labels whose room it took, grew, and climbed over them."""
    from legend_checks import legend_faults

    window = small_window
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    window.set_presentation(True)
    _settle()
    roofline = window.roofline
    roofline._place_labels(fresh=True)
    assert roofline.plot.legend is not None and roofline.plot.legend.isVisible()  # the case in question: a legend
    assert legend_faults(roofline) == []
    placed = roofline.label_layout
    assert placed is not None and placed.faults() == []


def _widget_boxes_overlapping(widgets, page) -> list[str]:  # type: ignore[no-untyped-def]
    """Pairs of the visible `widgets` whose rectangles (in `page`'s coordinates) overlap."""
    from PySide6.QtCore import QRect

    boxes = [(w.objectName() or type(w).__name__, QRect(w.mapTo(page, QPoint(0, 0)), w.size())) for w in widgets if w.isVisible()]
    return [f"{a} {ra.getRect()} overlaps {b} {rb.getRect()}"
            for i, (a, ra) in enumerate(boxes) for b, rb in boxes[i + 1:] if ra.intersects(rb)]


def test_the_step_timeline_in_presentation_on_a_small_screen_overlaps_nothing(small_window) -> None:  # type: ignore[no-untyped-def]
    """The data-parallel step's Timeline page at presentation size on a projector and a laptop: the page scrolls
    rather than squeeze its parts, so the plot (its time axis's title inside it) does not run over the trace row
    and the "No trace imported" line below it; at the normal size too."""
    window = small_window
    window.open_example("data-parallel-step")
    page = window.timeline
    window.tabs.setCurrentWidget(page)
    for presenting in (False, True):
        window.set_presentation(presenting)
        _settle()
        _within_screen(window)
        parts = [page.editor, page.summary, page.plot, page.import_button, page.trace_label, page.table]
        assert _widget_boxes_overlapping(parts, page) == [], presenting
        title = page.plot.getAxis("bottom").label
        assert title.isVisible()
        margin = title.document().documentMargin()  # the text's box less its own margin: the text itself
        text = title.mapRectToScene(title.boundingRect().adjusted(margin, margin, -margin, -margin))
        room = page.plot.sceneRect().adjusted(-1, -1, 1, 1)  # the plot's scene is the widget's area (a pixel's rounding)
        assert room.contains(text), (text.getRect(), room.getRect())
        assert not _too_wide_without_scroll_bar(window), presenting


def _titles_over_ticks(window) -> list[str]:  # type: ignore[no-untyped-def]
    """Every shown plot axis whose title's text box (its box less the text's own margin) meets one of its tick
    texts' boxes, as pyqtgraph lays both out in the axis's coordinates."""
    import pyqtgraph as pg
    from PySide6.QtGui import QImage, QPainter

    found = []
    for widget in window.findChildren(pg.PlotWidget):
        if not widget.isVisible() or widget.visibleRegion().isEmpty():
            continue
        for name in ("left", "bottom"):
            axis = widget.getPlotItem().getAxis(name)
            if not axis.isVisible() or not axis.label.isVisible():
                continue
            image = QImage(8, 8, QImage.Format.Format_ARGB32)
            painter = QPainter(image)
            try:
                specs = axis.generateDrawSpecs(painter)
            finally:
                painter.end()
            margin = axis.label.document().documentMargin()
            title = axis.label.mapRectToParent(axis.label.boundingRect().adjusted(margin, margin, -margin, -margin))
            for rect, _, text in specs[2] if specs is not None else ():
                if text and rect.intersects(title):
                    found.append(f"{widget.objectName()} {name}: title {axis.labelText!r} over tick {text!r}")
    return found


def test_presentation_from_the_measurement_tab_keeps_every_axis_title_off_its_ticks(small_window) -> None:  # type: ignore[no-untyped-def]
    """Presentation entered on the Measurement tab (the plot tabs hidden while the text grows), then each tab in
    turn: no plot's axis title lies over its tick figures."""
    window = small_window
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.measurement)
    _settle()
    window.set_presentation(True)
    _settle()
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        _settle()
        assert _titles_over_ticks(window) == [], window.tabs.tabText(index)


def test_the_device_panel_fits_its_dock_on_a_small_screen(small_window) -> None:  # type: ignore[no-untyped-def]
    """On a 1280 × 720 screen the left dock is about 200 px wide: the chooser beside "Detect again", and
    "Calibrate…" beside "Reset all rates", made the panel wider than that, and every wrapped line of text was cut
    at the dock's right edge (the panel scrolled sideways). Those rows now wrap, so the panel's least width is
    its widest single control's and the panel is as wide as the dock's view of it."""
    window = small_window
    window._default_dock_sizes()
    _settle()
    panel = window.device_panel
    area = window.device_dock.widget()
    assert isinstance(area, QAbstractScrollArea)
    widest = max(widget.minimumSizeHint().width() for widget in (panel.chooser, panel.detect_button, panel.calibrate, panel.reset_all))
    side_by_side = panel.chooser.minimumSizeHint().width() + panel.detect_button.minimumSizeHint().width()
    assert panel.minimumSizeHint().width() < side_by_side
    assert panel.minimumSizeHint().width() <= widest + 40  # the widest control and the panel's margins
    if area.viewport().width() >= panel.minimumSizeHint().width():
        assert panel.width() <= area.viewport().width()
        assert not area.horizontalScrollBar().isVisible()


def test_the_rate_table_keeps_every_rate_whole_in_a_narrow_dock(small_window) -> None:  # type: ignore[no-untyped-def]
    """In the dock of a 1280 × 720 or 1366 × 768 screen every rate in use is shown whole (the name column wraps
    instead of pushing the rates out of view), and a path's name keeps at least the width of a short name."""
    from workbench.gui.device_panel import RATE_COLUMN

    window = small_window
    window._default_dock_sizes()
    window.document.set_device("h100-sxm")
    _settle()
    table = window.device_panel.table
    metrics = table.fontMetrics()
    rates = [table.item(row, RATE_COLUMN).text() for row in range(table.rowCount())]
    assert rates and all(rates)
    left = table.columnViewportPosition(RATE_COLUMN)
    right = left + table.columnWidth(RATE_COLUMN)
    assert left >= 0 and right <= table.viewport().width(), (left, right, table.viewport().width())
    assert table.columnWidth(RATE_COLUMN) >= max(metrics.horizontalAdvance(text) for text in rates)
    assert table.columnWidth(0) >= table.least_name_width()


def test_the_rate_table_fills_a_wide_dock_without_scrolling(window) -> None:  # type: ignore[no-untyped-def]
    """Where the dock has room for every column, nothing scrolls sideways and the name column takes what the
    others leave."""
    window.document.set_device("h100-sxm")
    _settle()
    table = window.device_panel.table
    table.resize(600, table.height())
    _settle()
    header = table.horizontalHeader()
    assert table.horizontalScrollBar().maximum() == 0
    assert header.length() <= table.viewport().width() + 1
    assert table.columnWidth(0) >= table.viewport().width() - sum(table.columnWidth(c) for c in (1, 2, 3)) - 1
