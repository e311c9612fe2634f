"""The roofline's marks (operation points, level points, the ridge point) are Qt items of their own: hovering one
names its operation, an unchanged mark is not set again, and a very large set goes to one pyqtgraph scatter."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from workbench.gui.plot_marks import MANY, MarkSet


def _viewport_point(view: pg.PlotWidget, item) -> QPoint:  # type: ignore[no-untyped-def]
    return view.mapFromScene(item.scenePos())


def _move_pointer(viewport, at: QPoint) -> None:  # type: ignore[no-untyped-def]
    """The pointer moved to `at` with no button held (sent directly: QTest's own button state may be left
    pressed by an earlier test's double click, and a move with a button held hovers nothing)."""
    event = QMouseEvent(QEvent.Type.MouseMove, QPointF(at), QPointF(viewport.mapToGlobal(at)),
                        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(viewport, event)


def test_hovering_an_operations_point_names_it_and_grows_it(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.resize(1400, 900)
    window.open_example("batched-gemm-sweep")
    qtbot.wait(50)
    roofline = window.roofline
    marks = roofline.points
    names = [entry.name for entry in window.document.operations]
    assert len(marks) == len(names) and marks.used == len(names)
    mark = marks.items[2]
    assert mark.datum == 2
    viewport = roofline.widget.viewport()
    resting = mark.boundingRect().width()
    _move_pointer(viewport, QPoint(5, 5))  # from off every mark
    _move_pointer(viewport, _viewport_point(roofline.widget, mark))
    qtbot.waitUntil(lambda: names[2] in roofline.plot.getViewBox().toolTip(), timeout=2000)
    assert mark.boundingRect().width() == resting + 14 - mark.shown[1]  # the hover size (14 px), outline as before
    _move_pointer(viewport, QPoint(5, 5))  # away from every mark
    qtbot.waitUntil(lambda: roofline.plot.getViewBox().toolTip() == "", timeout=2000)
    assert mark.boundingRect().width() == resting


def test_an_edit_sets_only_the_mark_that_moved(window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window.open_example("batched-gemm-sweep")
    marks = window.roofline.points
    moved: list[int] = []
    for index, item in enumerate(marks.items[: marks.used]):
        original = item.setPos
        monkeypatch.setattr(item, "setPos", lambda *a, i=index, o=original: (moved.append(i), o(*a)))
    first = window.document.operations[0].declaration
    assert "K=" in first
    window.document.edit_declaration(0, first.replace("K=", "K=3", 1))
    assert moved == [0]


def test_marks_hide_and_show_with_their_set(qtbot) -> None:  # type: ignore[no-untyped-def]
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    marks = MarkSet(widget.getPlotItem(), symbol="d", size=9)
    marks.setData([0.0, 1.0], [2.0, 3.0])
    assert [item.isVisible() for item in marks.items] == [True, True]
    marks.setVisible(False)
    assert [item.isVisible() for item in marks.items] == [False, False]
    marks.setData([0.0], [2.0])  # set while hidden: stays hidden
    assert [item.isVisible() for item in marks.items] == [False, False]
    marks.setVisible(True)
    assert [item.isVisible() for item in marks.items] == [True, False]
    assert marks.getData()[0].tolist() == [0.0] and marks.getData()[1].tolist() == [2.0]


def test_more_than_many_marks_go_to_one_scatter_and_back(qtbot) -> None:  # type: ignore[no-untyped-def]
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    heard: list[list[object]] = []
    marks = MarkSet(widget.getPlotItem(), hover_size=14, on_hover=heard.append)
    xs = [float(i) for i in range(MANY + 1)]
    marks.setData(xs, xs, size=6, data=list(range(MANY + 1)))
    shown = marks.shown_items()
    assert len(shown) == 1 and isinstance(shown[0], pg.ScatterPlotItem) and len(shown[0].data) == MANY + 1
    assert not any(item.isVisible() for item in marks.items)
    marks.setData([{"pos": (1.0, 2.0), "data": 7}])
    assert not shown[0].isVisible() and len(shown[0].data) == 0
    assert [item.datum for item in marks.shown_items()] == [7] and marks.getData()[0].tolist() == [1.0]


def test_set_data_refuses_what_it_cannot_read(qtbot) -> None:  # type: ignore[no-untyped-def]
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    marks = MarkSet(widget.getPlotItem())
    with pytest.raises(TypeError, match="list of spots"):
        marks.setData([1.0], [2.0], [3.0])


def test_a_label_without_ground_has_no_contents_of_its_own_and_keeps_its_size_when_zoomed(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QGraphicsItem

    from workbench.gui.plot_common import PlotLabel

    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.show()
    qtbot.waitExposed(widget)
    label = PlotLabel("FP16 TC  989 TFLOP/s", anchor=(0, 0))
    widget.getPlotItem().addItem(label)
    label.setPos(0.5, 0.5)
    no_contents = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
    assert label.flags() & no_contents  # the text is its child's; the scene neither measures nor paints the label
    label.set_ground(pg.mkBrush("w"))
    assert not label.flags() & no_contents  # a ground to paint
    label.set_ground(pg.mkBrush(None))
    assert label.flags() & no_contents

    def text_pixels() -> tuple[float, float]:
        box = widget.mapFromScene(label.textItem.mapToScene(label.textItem.boundingRect())).boundingRect()
        return box.width(), box.height()

    widget.getPlotItem().getViewBox().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
    qtbot.wait(20)
    before = text_pixels()
    widget.getPlotItem().getViewBox().setRange(xRange=(0.4, 0.6), yRange=(0.4, 0.6), padding=0)  # 5× zoom
    widget.viewport().repaint()
    after = text_pixels()
    assert abs(after[0] - before[0]) <= 1 and abs(after[1] - before[1]) <= 1, (before, after)
    widget.resize(700, 200)  # another aspect: the view's scale changes on both axes
    qtbot.wait(20)
    widget.viewport().repaint()
    resized = text_pixels()
    assert abs(resized[0] - before[0]) <= 1 and abs(resized[1] - before[1]) <= 1, (before, resized)


def test_of_spots_given_again_only_the_changed_one_is_drawn(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An edit moves one operation's point: the set touches that mark alone, and its coordinates follow."""
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    marks = MarkSet(widget.getPlotItem())
    pen, brush = pg.mkPen("k"), pg.mkBrush("w")
    spots = [{"pos": (float(i), float(i)), "size": 10, "pen": pen, "brush": brush, "data": i} for i in range(6)]
    marks.setData(spots)
    shown: list[int] = []
    original = MarkSet._show
    monkeypatch.setattr(MarkSet, "_show", lambda self, item, spot: (shown.append(spot["data"]), original(self, item, spot)))
    again = [dict(spot) for spot in spots]
    again[3]["pos"] = (3.5, 2.0)
    marks.setData(again)
    assert shown == [3]
    assert marks.items[3].pos() == QPointF(3.5, 2.0) and list(marks.getData()[0]) == [0, 1, 2, 3.5, 4, 5]
    marks.setData(again)  # the same again: nothing drawn
    assert shown == [3]
    again[0]["brush"] = pg.mkBrush("r")  # a look changed: that mark only
    marks.setData(again)
    assert shown == [3, 0] and list(marks.getData()[1]) == [0, 1, 2, 2.0, 4, 5]


def test_a_label_keeps_its_box_only_until_its_text_font_margin_or_anchor_changes(qtbot) -> None:  # type: ignore[no-untyped-def]
    """PlotLabel keeps its box, size and text between asks (the label layout asks for every label on every
    edit); each change that moves or resizes the text gives the box pyqtgraph computes afresh."""
    from PySide6.QtGui import QFont

    from workbench.gui.plot_common import PlotLabel, tight_text

    def fresh_box(label: PlotLabel):  # type: ignore[no-untyped-def]
        return pg.TextItem.boundingRect(label)  # pyqtgraph's own, computed now

    label = PlotLabel("gemm 4096³ fp16", anchor=(0, 0))
    assert label.boundingRect() == fresh_box(label) and label.plain_text() == "gemm 4096³ fp16"
    narrow = label.pixel_size()
    label.setText("gemm 40961×4096×4096 fp16")
    assert label.boundingRect() == fresh_box(label) and label.pixel_size()[0] > narrow[0]
    assert label.plain_text() == "gemm 40961×4096×4096 fp16"
    wide = label.pixel_size()
    font = QFont(label.textItem.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    label.setFont(font)
    assert label.boundingRect() == fresh_box(label) and label.pixel_size()[1] > wide[1]
    tight_text(label)  # a one-pixel margin: a smaller box
    assert label.boundingRect() == fresh_box(label) and label.pixel_size()[1] < fresh_box(label).height() + 7
    label.setAnchor((1, 1))  # the text moves to the other side of the label's position
    assert label.boundingRect() == fresh_box(label) and label.boundingRect().right() <= 0.5
    label.setText("gemm 40961×4096×4096 fp16", color="#b71c1c")  # same text, another colour: the same box
    assert label.boundingRect() == fresh_box(label)


def test_a_pen_made_where_a_freed_one_was_draws_in_its_own_colour(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Many marks, a scatter per look: the set keys its looks by their pens' and brushes' ids and holds each
    look's pen and brush while it keeps the look, so no pen of another colour can take a kept pen's id (CPython
    gives a freed block to the next object of its size: a pen made after another is freed often has its id) and
    meet its scatter, drawn in the freed pen's colour. (pyqtgraph's scatter holds the pen it was made with too,
    today; the set does not rely on it.)"""
    import gc

    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    marks = MarkSet(widget.getPlotItem())
    brush = pg.mkBrush("w")
    for attempt in range(40):
        colour = ("#c62828", "#1565c0", "#2e7d32")[attempt % 3]
        # the same places each time: only the look changes; the pen is the spots' alone, freed once they are
        pen = pg.mkPen(colour)
        marks.setData([{"pos": (float(i), float(i)), "pen": pen, "brush": brush} for i in range(MANY + 1)])
        del pen
        gc.collect()
        drawn = {item.opts["pen"].color().name() for item in marks.shown_items()}
        assert drawn == {colour}, f"attempt {attempt}: drawn in {drawn}, not {colour}"
