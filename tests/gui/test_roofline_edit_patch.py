"""An edit of one operation moves its points alone on the roofline (RooflineView._patch_edit): what the view then
shows is what drawing everything afresh shows, for a small session and for one past the scatter's many-marks
threshold and the labelled few, through valid and invalid keystrokes."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

KINDS = ("gemm", "add", "softmax", "rmsnorm")


def _session(path, count: int, named: bool = True):  # type: ignore[no-untyped-def]
    """`count` operations of four kinds and many shapes; without `named`, each name follows its declaration (a
    keystroke then renames the operation too)."""
    operations = []
    for index in range(count):
        kind, rows, cols = KINDS[index % 4], 256 * (1 + index % 7), 128 * (4 + index % 13)
        if kind == "gemm":
            text = f"gemm(M={rows}, N={cols}, K={128 * (4 + index % 11)}, dtype=bf16)"
        elif kind == "add":
            text = f"add(n={rows * cols}, dtype=bf16)"
        else:
            text = f"{kind}(rows={rows}, cols={cols}, dtype=bf16)"
        operations.append({"name": f"op_{index}_{kind}", "declaration": text, "notes": ""})
        if not named:
            operations[-1]["name_automatic"] = True
    path.write_text(json.dumps({
        "format": "perf-workbench-session", "version": 1, "title": f"{count} operations",
        "device": {"key": "h100-sxm", "overrides": {}, "detected": None},
        "settings": {"convention": "fma2", "overlap": 1.0, "binary": False}, "operations": operations}))
    return path


def _scatter(marks) -> object:  # type: ignore[no-untyped-def]
    """What a MarkSet shows: its positions, and per look (many marks) each scatter's points."""
    xs, ys = marks.getData()
    looks = {}
    for key, (scatter, shown, _) in marks._looks.items():
        if scatter.isVisible():
            drawn = scatter.getData()
            assert (drawn[0].tolist(), drawn[1].tolist()) == (list(shown[0]), list(shown[1]))  # what it draws
            looks[key] = (drawn[0].tolist(), drawn[1].tolist(), list(shown[2]))
    return xs.tolist(), ys.tolist(), looks


def _shown(roofline) -> dict[str, object]:  # type: ignore[no-untyped-def]
    placed = roofline.label_layout
    return {
        "points": _scatter(roofline.points),
        "level points": _scatter(roofline.level_points),
        "level spots": list(roofline._shown_level_spots or []),
        "level tips": list(roofline._level_tips),
        "positions": list(roofline._point_positions),
        "levels": dict(roofline.operation_levels),
        "labelled": list(roofline._labelled),
        "label texts": [item.toPlainText() for item in roofline.point_labels.items[: roofline.point_labels.used]],
        "range": roofline._range,
        "view": roofline.plot.getViewBox().viewRange(),
        "ridge": roofline._ridge,
        "connector": (roofline.level_connector.isVisible(), roofline._level_connector_ends),
        "marks": placed.marks,
        "placements": placed.layout.placements,
    }


@pytest.mark.parametrize("count", [12, 450])
def test_an_edit_shows_what_drawing_everything_afresh_shows(qtbot, window, tmp_path, count: int) -> None:  # type: ignore[no-untyped-def]
    window.resize(1600, 1000)
    assert window.open_session(str(_session(tmp_path / "session.json", count)))
    window.tabs.setCurrentWidget(window.roofline)
    roofline, document = window.roofline, window.document
    document.select(4)  # a GEMM
    patched: list[bool] = []
    patch = roofline._patch_edit
    roofline._patch_edit = lambda: patched.append(patch()) or patched[-1]  # type: ignore[method-assign]
    line = window.editor.line
    line.setFocus()
    line.setCursorPosition(line.text().index(","))
    keys = [Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_2, Qt.Key.Key_5, Qt.Key.Key_X, Qt.Key.Key_Backspace, Qt.Key.Key_Backspace]
    patched_edits = []
    for key in keys:
        patched.clear()
        QTest.keyClick(line, key)
        patched_edits.append(patched[0])
        after_edit = _shown(roofline)
        roofline.mark_dirty()  # draw everything again, as any change but an edit does
        assert patched[1:] == [False]
        assert _shown(roofline) == after_edit, f"after {key}"
    # the valid edits moved the point alone; the invalid one (the point goes stale) and the one that made the
    # declaration valid again drew everything
    assert patched_edits == [True, True, True, True, False, False, True]
    assert line.text().startswith("gemm(M=12802,")
