"""Presentation mode: larger text everywhere, Ctrl+0 back to the start-up size, its own layout."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QApplication, QLabel

from workbench import cli
from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.gui import app as gui_app
from workbench.gui.window_presentation import DEFAULT_FONT_POINTS, FONT_RANGE, PRESENTATION_MIN_POINTS


@pytest.fixture(autouse=True)
def normal_text_afterwards():  # type: ignore[no-untyped-def]
    """The application font is global: put it back so later tests start at the normal size."""
    yield
    font = QApplication.font()
    font.setPointSizeF(DEFAULT_FONT_POINTS)
    QApplication.setFont(font)


def label_points(window) -> float:  # type: ignore[no-untyped-def]
    label = window.roofline.point_labels.items[0]
    return label.textItem.font().pointSizeF()


def test_presentation_makes_every_text_larger_and_ctrl_0_returns_to_the_start_up_size(window) -> None:  # type: ignore[no-untyped-def]
    start = window.font_points()
    window.roofline.refresh()
    normal_label = label_points(window)
    window.actions["presentation"].trigger()
    assert window.presentation and window.actions["presentation"].isChecked()
    big = window.font_points()
    assert big == pytest.approx(min(max(round(start * 1.6), PRESENTATION_MIN_POINTS), FONT_RANGE[1]))
    assert big >= PRESENTATION_MIN_POINTS
    assert label_points(window) == pytest.approx(big) and big > normal_label  # plot labels
    assert window.roofline.plot.getAxis("bottom").style["tickFont"].pointSizeF() == pytest.approx(big)  # axes
    QApplication.processEvents()  # the application font reaches existing widgets through posted events
    assert window.panel.tensors.font().pointSizeF() == pytest.approx(big)  # tables
    assert window.device_panel.table.font().pointSizeF() == pytest.approx(big)
    assert window.panel.derivation.font().pointSizeF() == pytest.approx(big)  # the derivation
    window.change_font_size(+2)
    window.reset_font_size()  # Ctrl+0 in presentation: the presentation size
    assert window.font_points() == pytest.approx(big)
    window.actions["presentation"].trigger()
    assert not window.presentation and window.font_points() == pytest.approx(start)
    window.change_font_size(+3)
    window.reset_font_size()  # Ctrl+0: the size the app started with, not a fixed 10 pt
    assert window.font_points() == pytest.approx(start)


def test_ctrl_0_returns_to_a_restored_start_up_size(qtbot) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.app import build_window
    from workbench.gui.window import make_settings

    make_settings().setValue("view/font_points", 13.0)
    window = build_window(detect=lambda: Detection(NO_DRIVER, "no driver"))
    qtbot.addWidget(window)
    try:
        assert window.font_points() == pytest.approx(13.0)
        window.change_font_size(+4)
        window.reset_font_size()
        assert window.font_points() == pytest.approx(13.0)
    finally:
        window.set_font_points(10.0)
        window.close()
        window.wait_for_workers()


def test_the_presentation_layout_is_kept_apart_from_the_normal_one(window) -> None:  # type: ignore[no-untyped-def]
    settings = window.settings
    started_at = window.font_points()  # the application's own size (9 pt offscreen), unless a setting says otherwise
    window.save_preferences()
    normal_state = settings.value("window/state")
    window.set_presentation(True)
    window.resizeDocks([window.operations_dock], [600], __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.Orientation.Horizontal)
    window.save_preferences()  # closing in presentation mode saves the presentation layout only
    assert isinstance(settings.value("presentation/state"), QByteArray)
    assert settings.value("window/state") == normal_state
    assert settings.value("presentation/font_points", type=float) == pytest.approx(window.font_points())
    assert settings.value("view/font_points", type=float) != pytest.approx(window.font_points())
    window.set_presentation(False)
    assert window.font_points() == pytest.approx(started_at)


def test_the_command_line_flag_starts_in_presentation_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def fake_exec(application, window):  # type: ignore[no-untyped-def]
        seen.append((window.presentation, window.font_points()))
        window.set_presentation(False)
        window.close()
        window.wait_for_workers()
        window.deleteLater()
        return 0

    monkeypatch.setattr(gui_app, "_exec", fake_exec)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert cli.main(["gui", "--presentation"]) == 0
    assert seen and seen[0][0] and seen[0][1] >= PRESENTATION_MIN_POINTS


def _presenting_batched_gemm(window, qtbot):  # type: ignore[no-untyped-def]
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    window.set_presentation(True)
    for _ in range(5):  # the layout requests larger text posts, and the docks' sizes set after it
        QApplication.processEvents()
    qtbot.wait(20)
    QApplication.processEvents()


def _settle_without_an_event_loop(window=None, seconds: float = 0.3) -> None:  # type: ignore[no-untyped-def]
    """Process events as the screenshot script does: no nested event loop (qtbot.wait runs one, which carries out
    what a plain processEvents leaves, such as deleteLater), so what the script's pictures show is tested. With a
    window, go on (for at most 3 s more) until its geometry and its roofline's labels stay the same over 0.2 s:
    a status bar that grows a turn late shortens the plot after the first layout (the legend then took the plot's
    top left, over the points near 1 PFLOP/s), and a test that looks before that does not see what a user sees."""
    import time

    def state() -> tuple[object, ...]:
        view = window.roofline.plot.getViewBox()
        layout = window.roofline.label_layout
        return (window.status.height(), window.tabs.size().toTuple(), view.width(), view.height(),
                layout.layout.placements if layout is not None else None)

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)
    if window is None:
        return
    last, still_since, give_up = state(), time.monotonic(), time.monotonic() + 3.0
    while time.monotonic() - still_since < 0.2 and time.monotonic() < give_up:
        QApplication.processEvents()
        time.sleep(0.01)
        now = state()
        if now != last:
            last, still_since = now, time.monotonic()


def test_presentation_never_grows_the_window_beyond_the_screen(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    room = window.available_screen()
    window.resize(room.width(), room.height())
    _presenting_batched_gemm(window, qtbot)
    assert window.width() <= room.width() and window.height() <= room.height()
    assert window.minimumSizeHint().width() <= room.width()
    window.resize(room.width() + 600, room.height())  # a window larger than its screen is brought back onto it
    window.set_presentation(False)
    window.set_presentation(True)
    QApplication.processEvents()
    assert window.width() <= room.width()


def test_leaving_presentation_gives_the_window_back_its_least_width(window, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The device panel's dock is hidden in a first presentation and shown again after it: its least width is the
    normal text's again, not the one it had at the larger text, and the window is within its screen again (it
    stayed 1605 px wide on a 1600 px screen after the screenshot script's presentation shot)."""
    from PySide6.QtCore import QRect

    screen = QRect(0, 0, 1600, 1000)
    monkeypatch.setattr(window, "available_screen", lambda: screen)
    window.resize(1600, 1000)
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    qtbot.wait(50)
    assert window.device_dock.isVisible()
    least = window.minimumSizeHint().width()
    window.set_presentation(True)
    qtbot.wait(100)
    assert not window.device_dock.isVisible()
    window.set_presentation(False)
    qtbot.wait(100)
    assert window.device_dock.isVisible()
    assert window.device_dock.minimumSizeHint().width() <= window.device_dock.widget().widget().minimumSizeHint().width() + 8
    assert window.minimumSizeHint().width() == least
    assert window.width() <= screen.width()


def _tick_boxes(axis, low: float, high: float) -> list[tuple[float, float, str]]:  # type: ignore[no-untyped-def]
    """Each labelled x tick's text extent in the axis's pixels, measured with the tick font's metrics."""
    from PySide6.QtGui import QFontMetricsF

    metrics = QFontMetricsF(axis.style["tickFont"])
    width = axis.width()
    spacing, values = axis.tickValues(low, high, width)[0]
    boxes = []
    for value, text in zip(values, axis.tickStrings(values, 1.0, spacing)):
        if text:
            x = (value - low) / (high - low) * width
            half = metrics.horizontalAdvance(text) / 2
            boxes.append((x - half, x + half, text))
    return boxes


@pytest.mark.parametrize("view_name", ["roofline", "sweep", "compare"])
def test_no_two_x_tick_labels_overlap_at_presentation_size(window, qtbot, view_name: str) -> None:  # type: ignore[no-untyped-def]
    _presenting_batched_gemm(window, qtbot)
    view = getattr(window, view_name)
    axis = view.widget.getPlotItem().getAxis("bottom")
    assert axis.style["tickFont"].pointSizeF() >= PRESENTATION_MIN_POINTS
    for low, high in ((-1.0, 7.0), (-3.0, 12.0), (0.0, 30.0)):  # the fitted roofline, a wide one, a size sweep
        for width in (300, 600, 1200):
            axis.resize(width, axis.height())
            boxes = _tick_boxes(axis, low, high)
            assert len(boxes) >= 2
            for (_, right, text), (left, _, following) in zip(boxes, boxes[1:]):
                assert right < left, f"{text!r} and {following!r} overlap at {width} px"


def test_the_x_axis_title_fits_its_axis_at_presentation_size(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QFontMetricsF

    _presenting_batched_gemm(window, qtbot)
    roofline = window.roofline
    axis = roofline.plot.getAxis("bottom")
    metrics = QFontMetricsF(roofline._plot_font)
    for width in (window.width(), 700):
        window.resize(width, window.height())
        QApplication.processEvents()
        title = axis.labelText
        assert title in roofline.axis_titles()
        assert metrics.horizontalAdvance(title) <= axis.width(), f"{title!r} is cut at {axis.width():.0f} px"
    window.set_presentation(False)
    window.resize(1600, 1000)
    QApplication.processEvents()
    assert axis.labelText == roofline.axis_titles()[0]  # with room, the full title


def test_roof_labels_stay_near_their_roofs_at_presentation_size(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from workbench.scenes.label_layout import box_to_segment_distance, roof_reach

    _presenting_batched_gemm(window, qtbot)
    roofline = window.roofline
    roofline._place_labels()
    placed = roofline.label_layout
    assert placed is not None and placed.roof_labels
    assert placed.faults() == []
    legend_texts = [sample_label.text for _, sample_label in roofline.plot.legend.items] if roofline.plot.legend else []
    for label, item in zip(placed.roof_labels, [roofline.memory_label, *roofline.roof_labels.items]):
        placement = placed.layout.placement(label.key)
        assert placement is not None
        if placement.box is None:  # no room near its roof on this small screen: the legend names the roof instead
            assert roofline._roof_texts[label.key][0] in legend_texts and not item.isVisible()
        else:
            assert box_to_segment_distance(placement.box, label.roof) <= roof_reach(label.height)


def test_switching_layouts_leaves_one_tab_bar_for_the_tabbed_docks(window) -> None:  # type: ignore[no-untyped-def]
    """restoreState gives the tabbed Analysis/Notes docks a new tab bar; the previous one must not stay shown
    (at the other mode's text size it stuck out over the window's bottom corner).

    Qt deletes the old bar with deleteLater, which only a running event loop carries out: events processed
    without one, as the screenshot script does (and as here: processEvents, never qtbot.wait,
    whose nested event loop deletes it), leave it shown, one more after every switch, unless the window hides it.
    """
    import time

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    def shown_bars() -> list[QTabBar]:
        return [
            bar
            for bar in window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
            if bar.isVisible() and bar.count() and "Notes" in {bar.tabText(i) for i in range(bar.count())}
        ]

    assert len(shown_bars()) == 1
    window.resize(1600, 1000)
    for on in (True, False, True, False):
        window.set_presentation(on)
        for _ in range(10):  # the layouts that larger or smaller text posts, and the docks' sizes set after them
            QApplication.processEvents()
            time.sleep(0.01)
        bars = shown_bars()
        assert len(bars) == 1, f"{len(bars)} tab bars shown for the tabbed docks (presentation {on})"
        dock = window.panel_dock if window.panel_dock.isVisible() else window.notes_dock
        assert bars[0].geometry().top() == dock.geometry().bottom() + 1
        assert window.rect().contains(bars[0].geometry())


@pytest.mark.parametrize("height", [1000, 968])
def test_presentation_on_a_1600_by_1000_screen_gives_the_roofline_the_room_and_labels_beside_their_marks(  # type: ignore[no-untyped-def]
    window, qtbot, monkeypatch, height: int
) -> None:
    """The batched-GEMM example at presentation size on a 1600×1000 screen (the screenshot's): the docks take
    their shares, the plot page fits its tab, the x-axis title its axis; the HBM roof and the compute roof in use
    are labelled on the plot, every operation's label sits near its point, no two leaders cross, and the legend
    (where roof labels found no room) covers no point. In a window as tall as the screen, and 32 px shorter: the
    plot as tall as X11 leaves it in the full-height window (its tab page is 32 px shorter there than offscreen),
    where the screenshot showed the legend over the points near 1 PFLOP/s once the status bar had grown."""
    import math

    from PySide6.QtCore import QRect

    from workbench.gui.roofline_view import device_roofs
    from workbench.gui.window_presentation import PRESENTATION_DOCK_SHARES
    from workbench.scenes.label_layout import leader_tangles, nearest_on_box

    from legend_checks import legend_faults

    screen = QRect(0, 0, 1600, 1000)
    monkeypatch.setattr(window, "available_screen", lambda: screen)
    window.resize(1600, height)
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    window.set_presentation(True)
    _settle_without_an_event_loop(window)  # as the screenshot script: there the docks' new widths were lost
    assert window.status.height() == window.status.sizeHint().height()  # the window's layout is its last one
    right = window.panel_dock if not window.panel_dock.visibleRegion().isEmpty() else window.notes_dock
    for dock, share in zip((window.operations_dock, right), PRESENTATION_DOCK_SHARES):
        assert dock.width() <= share * screen.width() + 8, f"{dock.windowTitle()} is {dock.width()} px wide"
    assert window.tabs.width() >= 0.5 * window.width()
    # the operations' buttons wrap at the dock's width rather than run past it (they set no wide least width)
    assert window.operations.minimumSizeHint().width() <= window.operations_dock.widget().viewport().width()
    roofline = window.roofline
    assert roofline.width() <= window.tabs.width()  # the page is not wider than its tab (nothing clipped)
    axis = roofline.plot.getAxis("bottom")
    title = axis.label
    assert 0 <= title.pos().x() and title.pos().x() + title.boundingRect().width() <= axis.width() + 1, "x-axis title cut"

    roofline._place_labels()
    placed = roofline.label_layout
    assert placed is not None and placed.faults() == []
    assert legend_faults(roofline) == []
    # the ridge line's label is on the plot (up the line, where the legend takes its foot), clear of every mark,
    # label and leader
    from workbench.gui.plot_common import scene_box
    from workbench.scenes.label_layout import boxes_overlap, leader_segment, segment_crosses_box

    assert roofline.ridge_label.isVisible(), "the ridge label found no place"
    ridge = scene_box(roofline.plot.getViewBox(), roofline.ridge_label)
    others = [m for m in placed.marks if not all(abs(a - b) < 1.5 for a, b in zip(m, ridge))]
    assert not any(boxes_overlap(ridge, m) for m in others)
    assert not any(p.box is not None and boxes_overlap(ridge, p.box) for p in placed.layout.placements)
    leaders = [line for line in map(leader_segment, placed.layout.placements) if line is not None]
    assert not any(segment_crosses_box(line, ridge) for line in [*placed.roofs, *leaders])
    analysis = window.document.state(window.document.current_entry).analysis
    in_use = next(index for index, roof in enumerate(device_roofs(window.document.device)) if analysis.path in roof.paths)
    for key in ("memory", f"roof {in_use}"):
        placement = placed.layout.placement(key)
        assert placement is not None and placement.box is not None, f"{key} is not labelled on the plot"
    points = [p for p in placed.layout.placements if p.key.startswith("operation")]
    assert len(points) == len(window.document.operations) and all(p.box is not None for p in points)
    reach = 0.25 * math.hypot(placed.width, placed.height)
    for placement, (x, y) in zip(points, roofline._point_positions):
        view = roofline.plot.getViewBox()
        (x_low, x_high), (y_low, y_high) = view.viewRange()
        px = (x - x_low) / (x_high - x_low) * placed.width
        py = (y_high - y) / (y_high - y_low) * placed.height
        assert placement.box is not None
        nx, ny = nearest_on_box(placement.box, px, py)
        assert math.hypot(nx - px, ny - py) <= reach, f"{placement.key} is {math.hypot(nx - px, ny - py):.0f} px from its point"
    # no two leaders cross (which label is whose reads without untangling); a leader may still graze another label
    # where the packed points leave no other place near (label_layout weighs that against the leader's length)
    assert [tangle for tangle in leader_tangles(placed.layout) if " crosses " in tangle] == []
    # the x range keeps the data: at most a decade past the end fitted to the points and ridges for the roof labels
    rightmost = max([x for x, _ in roofline._point_positions] + roofline._roof_starts)
    assert roofline.plot.getViewBox().viewRange()[0][1] <= math.ceil(rightmost + 1.6) + 1


def test_the_window_takes_its_last_layout_in_the_event_loop_turn_after_a_text_size_change(window) -> None:  # type: ignore[no-untyped-def]
    """The status bar's text is taller at a larger size (shorter at a smaller one). Its new height must be in the
    window's layout of the first event-loop turn after the change: under X11 it came a turn later, after a first
    turn that (at presentation size) took most of a second, so a screenshot or a user saw the plot shrink by 8 px
    after its labels had been laid out, and two roof labels move to the legend. Offscreen the window lays out
    again on the way to a larger size, so it is a smaller size that shows it here (the status bar stayed a turn
    too tall). After each change: one turn, then the status bar is at its size hint and nothing moves in the
    turns after it."""
    import time

    window.resize(1400, 900)
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    for _ in range(5):
        QApplication.processEvents()
    view = window.roofline.plot.getViewBox()
    steps = [("Ctrl++", lambda: window.change_font_size(+1))] * 6 + [("Ctrl+-", lambda: window.change_font_size(-1))] * 4
    steps += [("Ctrl+0", window.reset_font_size), ("presentation", lambda: window.set_presentation(True)),
              ("normal", lambda: window.set_presentation(False))]
    for name, step in steps:
        step()
        QApplication.processEvents()
        first = (window.status.height(), view.height())
        assert window.status.height() == window.status.sizeHint().height(), (
            f"{name} ({window.font_points():g} pt): the status bar is {window.status.height()} px, its text needs "
            f"{window.status.sizeHint().height()} px"
        )
        for _ in range(5):
            QApplication.processEvents()
            time.sleep(0.005)
        assert (window.status.height(), view.height()) == first, f"{name}: the window was laid out again later"


def test_the_tensor_table_shows_every_row_at_either_text_size(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The table is as tall as its header and rows. Its rows grow a turn of the event loop after the text does
    (the header resizes its sections then), after the panel was refreshed at the new size: in presentation the
    table kept the normal rows' height, and its last row was cut behind a scroll bar."""
    window.resize(1600, 1000)
    window.show()
    qtbot.waitExposed(window)
    table = window.panel.tensors

    def shows_every_row() -> bool:
        rows = sum(table.rowHeight(row) for row in range(table.rowCount()))
        return table.height() >= table.horizontalHeader().height() + rows and not table.verticalScrollBar().isVisible()

    assert table.rowCount() == 3  # the default GEMM's A, B and C
    for presentation in (True, False, True):
        window.set_presentation(presentation)
        _settle_without_an_event_loop(window)
        assert shows_every_row(), f"presentation={presentation}: {table.height()} px for rows of {table.rowHeight(0)} px"
    window.set_presentation(False)


def test_the_tool_bar_choices_are_whole_or_in_its_extension_menu_at_presentation_size(window) -> None:  # type: ignore[no-untyped-def]
    """The FLOP convention and the Bound choices at presentation size on the 1600 × 1000 screen: each is shown at
    least as wide as its text asks (it was measured once at the normal size and cut: "… = 2 FLO"), or, where the
    bar lacks the room, moved with its label to the bar's extension menu; back at the normal size both are shown."""
    from PySide6.QtWidgets import QApplication

    window.resize(1600, 1000)
    for presenting in (True, False):
        window.set_presentation(presenting)
        for _ in range(4):
            QApplication.processEvents()
        for box in (window.convention_box, window.overlap_box):
            if box.isVisible():
                assert box.width() >= box.sizeHint().width(), (presenting, box.objectName(), box.currentText())
                label = box.parentWidget().findChild(QLabel)
                assert label is not None and label.isVisible()
            else:
                assert presenting, f"{box.objectName()} hidden at the normal size"
                assert not box.parentWidget().isVisible()  # its label went with it
