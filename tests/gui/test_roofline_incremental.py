"""The roofline's refresh after an edit or a selection restyles and moves only the marks that changed
(RooflineView._patch_edit): after every step of a sequence of keystrokes and selections, what the view shows equals
what a new view of the same document draws from nothing — the operations' marks in every scatter, their points at
further levels, which operations are labelled and how, the range, the ridge, the legend's rows, and (once the
labels held during typing are laid out afresh, as the view does when typing pauses) every label's place."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.gui.test_roofline_edit_patch import _scatter, _session


def _marks(roofline) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """What the view draws of the operations, independent of how it got there."""
    return {
        "points": _scatter(roofline.points),
        # few marks: one item each, with the look it draws (selected, plain, stale)
        "point items": [(item.pos().x(), item.pos().y(), item.shown) for item in roofline.points.items[: roofline.points.used]],
        "level points": _scatter(roofline.level_points),
        "level spots": list(roofline._shown_level_spots or []),
        "level tips": list(roofline._level_tips),
        "positions": list(roofline._point_positions),
        "names": list(roofline._point_names),
        "levels": dict(roofline.operation_levels),
        "labelled": list(roofline._labelled),
        "label texts": [(item.toPlainText(), item.color.name())
                        for item in roofline.point_labels.items[: roofline.point_labels.used]],
        "roof texts": [(item.toPlainText(), item.color.name())
                       for item in roofline.roof_labels.items[: roofline.roof_labels.used]],
        "range": roofline._range,
        "ridge": roofline._ridge,
        "connector": (roofline.level_connector.isVisible(), roofline._level_connector_ends),
        "legend": list(roofline._legend_rows),
    }


def _labels(roofline) -> dict[str, object]:  # type: ignore[no-untyped-def]
    placed = roofline.label_layout
    return {"marks": placed.marks, "placements": placed.layout.placements, "listed": set(roofline._listed)}


def _fresh_view(roofline):  # type: ignore[no-untyped-def]
    """A new roofline view of the same document at the same size and text size: everything drawn from nothing."""
    from workbench.gui.roofline_view import RooflineView

    view = RooflineView(roofline.document)
    font = getattr(roofline, "_plot_font", None)
    if font is not None:
        view.set_plot_font(font)
    view.set_label_mode(roofline.label_mode)
    # pyqtgraph widens an axis for its longest tick text and never narrows it again: the axes as the view's are
    view.plot.getAxis("left").setWidth(roofline.plot.getAxis("left").width())
    view.plot.getAxis("bottom").setHeight(roofline.plot.getAxis("bottom").height())
    view.resize(roofline.size())
    view.show()
    view.refresh()
    return view


@pytest.mark.parametrize("count,named", [(12, False), (450, True)])
def test_edits_and_selections_show_what_a_new_view_draws(qtbot, window, tmp_path, monkeypatch, count: int, named: bool) -> None:  # type: ignore[no-untyped-def]
    window.resize(1600, 1000)
    assert window.open_session(str(_session(tmp_path / "session.json", count, named)))
    window.tabs.setCurrentWidget(window.roofline)
    roofline, document = window.roofline, window.document
    import numpy as np

    from workbench.scenes import roofline_scene

    laid_out = roofline_scene.layout_labels

    def layout_labels(*args, marks_array=None, **kwargs):  # type: ignore[no-untyped-def]
        # the marks' array the view joins from what it keeps up to date is the marks it lays out against
        assert np.array_equal(marks_array, np.array(args[3], dtype=float).reshape(-1, 4))
        return laid_out(*args, marks_array=marks_array, **kwargs)

    monkeypatch.setattr(roofline_scene, "layout_labels", layout_labels)
    patched: list[bool] = []
    patch = roofline._patch_edit
    roofline._patch_edit = lambda: patched.append(patch()) or patched[-1]  # type: ignore[method-assign]
    line = window.editor.line
    views = []

    def check(step: str) -> None:
        assert patched and all(patched), f"{step}: drawn afresh, not patched"
        patched.clear()
        fresh = _fresh_view(roofline)
        views.append(fresh)
        qtbot.addWidget(fresh)
        assert fresh.plot.getViewBox().size() == roofline.plot.getViewBox().size()
        assert _marks(roofline) == _marks(fresh), step
        roofline._place_labels(fresh=True)  # the labels laid out afresh, as when typing pauses
        assert _labels(roofline) == _labels(fresh), step
        assert roofline.label_layout.faults() == []
        fresh.close()

    patched.clear()
    for step, row in enumerate((4, 1, 6)):  # GEMMs and the others, each selected from another
        document.select(row)
        roofline.refresh()  # drawn at once (the window otherwise refreshes when the event loop runs)
        check(f"select {row}")
        line.setFocus()
        line.setCursorPosition(line.text().index(",") if "," in line.text() else 6)
        for key in (Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_2) if step != 1 else (Qt.Key.Key_3,):
            QTest.keyClick(line, key)
            roofline.refresh()
            check(f"operation {row}, key {key}")
    assert document.current == 6
