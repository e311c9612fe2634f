"""While a declaration is typed, only its operation's label moves on the roofline; the rest stay until typing pauses."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from workbench.scenes.label_layout import layout_labels


def _label_places(window) -> dict[str, tuple[float, float, float, float] | None]:  # type: ignore[no-untyped-def]
    layout = window.roofline.label_layout
    assert layout is not None
    return {p.key: p.box for p in layout.layout.placements}


def _afresh(window):  # type: ignore[no-untyped-def]
    """The layout of what the roofline shows now, made afresh (no labels held)."""
    placed = window.roofline.label_layout
    return layout_labels(placed.width, placed.height, placed.roofs, placed.marks, placed.roof_labels, placed.point_labels)


def test_typing_moves_only_the_typed_operations_label_then_the_labels_are_tidied(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    window, line = typing_window(operations=12)
    roofline = window.roofline
    qtbot.waitUntil(lambda: not roofline._tidy_timer.isActive(), timeout=3000)
    for key in (Qt.Key.Key_1, Qt.Key.Key_Backspace):  # the first edits: from whatever the window was laid out with
        QTest.keyClick(line, key)
    others_before = {k: v for k, v in _label_places(window).items() if k != "operation 0"}
    for key in (Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_1):
        QTest.keyClick(line, key)
        places = _label_places(window)
        assert {k: v for k, v in places.items() if k != "operation 0"} == others_before
        assert roofline.label_layout.faults() == []  # held or not, nothing overlaps, covers a point or a roof
        assert roofline._tidy_timer.isActive()
    # typing pauses: the labels are laid out afresh, as a window opened on this session lays them out
    qtbot.waitUntil(lambda: not roofline._tidy_timer.isActive(), timeout=3000)
    assert roofline.label_layout.layout.placements == _afresh(window).placements
    assert line.text() == "gemm(M=40961, N=4096, K=4096, dtype=fp16)"


def test_a_change_that_moves_several_points_lays_the_labels_out_afresh_at_once(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """Labels are held only while one operation's point moves: counting a multiply-add as one FLOP (mac) moves
    every point in the same view, and the labels are laid out afresh at once, not around where they were."""
    window, line = typing_window(operations=6)
    roofline = window.roofline
    roofline._hold_view()  # as a zoom or pan by hand: the view stays where it is through the changes below
    QTest.keyClick(line, Qt.Key.Key_1)  # typing: labels held, the tidy-up pending
    assert roofline._tidy_timer.isActive()
    view = roofline.plot.getViewBox().viewRange()
    window.document.set_setting("convention", "mac")
    assert roofline.plot.getViewBox().viewRange() == view  # the same view: only the rule tells the change apart
    assert roofline.label_layout.layout.placements == _afresh(window).placements
