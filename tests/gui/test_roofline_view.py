"""The roofline as a user works with it all day: a zoomed view survives edits, and labels never hide a point."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from workbench.gui.plot_common import point_in_view
from workbench.gui.roofline_view import FIT_SHORTCUT
from workbench.documents.session import OperationEntry

DATA = Path(__file__).resolve().parent.parent / "data"
NCU_RAW = DATA / "ncu_raw.csv"
GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
ADD = "add(n=2**24, dtype=fp32)"


def view_range(window) -> tuple[float, float, float, float]:  # type: ignore[no-untyped-def]
    (x_low, x_high), (y_low, y_high) = window.roofline.plot.getViewBox().viewRange()
    return (x_low, x_high, y_low, y_high)


def zoom_in(qtbot, window, notch: int = 120) -> None:  # type: ignore[no-untyped-def]
    """Turn the mouse wheel three notches over the middle of the roofline, as a user zooms (in; out with notch < 0)."""
    widget = window.roofline.widget
    viewport = widget.viewport()
    centre = QPointF(viewport.width() / 2, viewport.height() / 2)
    for _ in range(3):
        event = QWheelEvent(
            centre,
            QPointF(viewport.mapToGlobal(centre.toPoint())),
            QPoint(0, 0),
            QPoint(0, notch),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(viewport, event)
    qtbot.wait(20)


def type_declaration(qtbot, window, text: str) -> None:  # type: ignore[no-untyped-def]
    line = window.editor.line
    line.selectAll()
    qtbot.keyClicks(line, text)
    assert window.document.operations[window.document.current].declaration == text


def assert_range(actual: tuple[float, ...], expected: tuple[float, ...]) -> None:
    assert actual == pytest.approx(expected, abs=1e-6)


def test_a_zoomed_view_survives_edits_until_the_user_fits_again(qtbot, window) -> None:
    roofline = window.roofline
    window.tabs.setCurrentWidget(roofline)
    fitted = view_range(window)
    assert not roofline.view_held and roofline.held_label.isHidden()

    zoom_in(qtbot, window)
    zoomed = view_range(window)
    assert zoomed[1] - zoomed[0] < 0.9 * (fitted[1] - fitted[0])  # the wheel zoomed in
    assert roofline.view_held
    assert roofline.held_label.isVisible() and roofline.held_label.text() == f"View held — {FIT_SHORTCUT} fits"

    # an edit that moves the point far (1365 → 0.5 FLOP/B) asks for another range, but the view stays
    type_declaration(qtbot, window, "gemm(M=1, N=1, K=4096, dtype=fp16)")
    assert roofline._range is not None and roofline._range != fitted
    assert_range(view_range(window), zoomed)
    type_declaration(qtbot, window, "gemm(M=1, N=1, K=64, dtype=fp16)")
    assert_range(view_range(window), zoomed)
    assert roofline.view_held

    # View ▸ Fit plot to data: back to the range the data asks for, and edits follow it again
    action = window.actions["fit_plot"]
    assert action.shortcut().toString() == FIT_SHORTCUT
    action.trigger()
    assert not roofline.view_held and roofline.held_label.isHidden()
    assert_range(view_range(window), roofline._range)
    type_declaration(qtbot, window, GEMM)
    assert_range(view_range(window), fitted)


def test_the_fit_shortcut_is_unique_and_in_the_view_menu(window) -> None:
    rows = window.shortcut_rows()
    keys = [keys for _, keys in rows]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
    assert ("Fit plot to data", FIT_SHORTCUT) in rows
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert window.actions["fit_plot"] in view_menu.actions()


def test_the_a_button_and_a_double_click_fit_the_view(qtbot, window) -> None:
    roofline = window.roofline
    window.tabs.setCurrentWidget(roofline)
    fitted = view_range(window)
    zoom_in(qtbot, window)
    assert roofline.view_held and not roofline.plot.buttonsHidden  # the "A" button offers itself on hover
    roofline.plot.autoBtn.clicked.emit(roofline.plot.autoBtn)
    assert not roofline.view_held and roofline.plot.buttonsHidden
    assert_range(view_range(window), fitted)  # our fit, not pyqtgraph's auto range over the long roofs

    zoom_in(qtbot, window)
    assert roofline.view_held
    viewport = roofline.widget.viewport()
    qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=QPoint(viewport.width() // 2, viewport.height() // 2))
    qtbot.waitUntil(lambda: not roofline.view_held, timeout=2000)
    assert_range(view_range(window), fitted)


def test_another_device_or_session_fits_the_view_and_a_rate_edit_keeps_it(qtbot, window) -> None:
    roofline = window.roofline
    window.tabs.setCurrentWidget(roofline)
    zoom_in(qtbot, window)
    zoomed = view_range(window)

    # a rate entered for this device: the user is studying this region, so it stays
    window.document.set_rate("hbm", "2 TB/s")
    assert roofline.view_held
    assert_range(view_range(window), zoomed)

    window.document.set_device("h200-sxm")
    assert not roofline.view_held and roofline.held_label.isHidden()
    assert_range(view_range(window), roofline._range)
    assert view_range(window) != pytest.approx(zoomed)

    zoom_in(qtbot, window)
    assert roofline.view_held
    window.open_example("vector-add")
    assert not roofline.view_held
    assert_range(view_range(window), roofline._range)


# ---------------------------------------------------------------------------- labels and points


def crowded_roofline(qtbot, window):  # type: ignore[no-untyped-def]
    """The 4096³ fp16 GEMM and a vector add on the H100, a measured run of the GEMM, both kernels of ncu_raw.csv."""
    doc = window.document
    doc.add_operation(OperationEntry("vector add", ADD))
    doc.select(0)
    # a loose run of the GEMM: 137.4 GFLOP over 0.2 ms = 687 TFLOP/s, just under the FP16 TC roof
    run = {"id": "gemm-1", "declaration": GEMM, "backend": "cupy", "mode": "warm",
           "samples_s": [0.00019, 0.0002, 0.00021], "valid": True}
    doc.core.add_run(run, "Measure")
    window.import_profile(str(NCU_RAW))
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10000)
    window.profile_importer.dialog.accept()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)
    window.tabs.setCurrentWidget(window.roofline)
    roofline = window.roofline
    assert len(roofline.kernels.marks) == 2 and len(roofline.measured.marks) == 1
    assert len(roofline._point_positions) == 2
    return roofline


def label_rects(roofline) -> dict[str, QRectF]:  # type: ignore[no-untyped-def]
    """Every label on screen by its text, as drawn (scene rectangles)."""
    texts = [roofline.memory_label, roofline.ridge_label, *roofline.roof_labels.items, *roofline.point_labels.items]
    return {text.toPlainText(): text.sceneBoundingRect() for text in texts if text.isVisible()}


def point_centres(roofline) -> dict[str, QPointF]:  # type: ignore[no-untyped-def]
    view = roofline.plot.getViewBox()
    rect = view.sceneBoundingRect()
    points = {f"operation {i}": point_in_view(view, x, y) for i, (x, y) in enumerate(roofline._point_positions)}
    points |= {f"kernel {i}": point_in_view(view, m.x, m.y) for i, m in enumerate(roofline.kernels.marks)}
    points |= {f"run {i}": point_in_view(view, m.x, m.y) for i, m in enumerate(roofline.measured.marks)}
    return {name: p for name, p in points.items() if rect.contains(p)}


def assert_labels_clear(qtbot, roofline) -> None:  # type: ignore[no-untyped-def]
    roofline.widget.repaint()  # a paint brings each text item's transform up to date
    qtbot.wait(20)
    labels = label_rects(roofline)
    points = point_centres(roofline)
    assert len(points) >= 4
    for (text, rect), (name, centre) in itertools.product(labels.items(), points.items()):
        mark = QRectF(centre.x() - 4, centre.y() - 4, 8, 8)  # the marker itself, at least
        assert not rect.intersects(mark), f"label {text!r} covers {name}"
    for (a, ra), (b, rb) in itertools.combinations(labels.items(), 2):
        overlap = ra.intersected(rb)
        assert overlap.width() * overlap.height() < 1.0, f"labels {a!r} and {b!r} overlap"


def test_labels_cover_no_operation_measured_run_or_profiled_kernel(qtbot, window) -> None:
    roofline = crowded_roofline(qtbot, window)
    labels = label_rects(roofline)
    assert any(text.startswith("FP16 TC") for text in labels)
    assert {"GEMM 4096³ fp16", "vector add"} <= set(labels)
    assert_labels_clear(qtbot, roofline)

    # a smaller window crowds the same marks into fewer pixels
    window.resize(1100, 700)
    qtbot.wait(50)
    assert_labels_clear(qtbot, roofline)


def test_labels_follow_a_zoomed_view_and_stay_clear_of_points(qtbot, window) -> None:
    roofline = crowded_roofline(qtbot, window)
    zoom_in(qtbot, window, -120)  # out: every mark stays in view, the labels must move with the scale
    assert roofline.view_held
    (x_low, x_high), (y_low, y_high) = roofline.plot.getViewBox().viewRange()
    view_box = QRectF(roofline.plot.getViewBox().sceneBoundingRect())
    roofline.widget.repaint()
    qtbot.wait(20)
    for text, rect in label_rects(roofline).items():
        assert view_box.adjusted(-1, -1, 1, 1).contains(rect), f"label {text!r} lies outside the zoomed view"
    assert_labels_clear(qtbot, roofline)


def test_a_resized_plot_keeps_the_range_an_edit_would_fit(qtbot, window) -> None:
    """The room right of the points for the roof labels is measured in pixels: after a resize the fitted range is
    the one a refresh at the new size gives, not the one fitted at the old size (which stayed until the next edit)."""
    roofline = window.roofline
    window.tabs.setCurrentWidget(roofline)
    ranges = []
    for width in (2400, 1500):  # (the window is at least ~1,470 px wide in normal mode)
        window.resize(width, 800)
        qtbot.wait(30)
        after_resize = view_range(window)
        roofline.refresh()
        assert_range(after_resize, view_range(window))
        ranges.append(after_resize)
    assert ranges[0][1] < ranges[1][1]  # the narrower plot keeps more decades for the same labels


def test_a_digit_typed_and_taken_out_keeps_the_fitted_range_at_any_dock_width(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """M=4096 ↔ 40961 moves the point a quarter decade: within its half decade, the fitted range (and the room kept
    for the roof labels) stays, at every width of the Analysis dock (at 365 px the range flipped between 10^5.5
    and 10^6 on every keystroke, and the whole plot was redrawn each time)."""
    from PySide6.QtWidgets import QDockWidget

    window.resize(1600, 1000)
    dock = window.findChild(QDockWidget, "analysisDock")
    line = window.editor.line
    line.setText("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    line.setFocus()
    flipped = []
    for width in range(300, 531, 15):
        window.resizeDocks([dock], [width], Qt.Orientation.Horizontal)
        qtbot.wait(5)
        line.setCursorPosition(len("gemm(M=4096"))
        ranges = []
        for key in (Qt.Key.Key_1, Qt.Key.Key_Backspace, Qt.Key.Key_1, Qt.Key.Key_Backspace):
            qtbot.keyClick(line, key)
            ranges.append(window.roofline._range)
        if len(set(ranges)) > 1:
            flipped.append((width, sorted(set(ranges))))
    assert flipped == []


def test_the_highlighted_roof_names_the_path_the_operation_uses(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    # an fp32 GEMM on the H100 SXM sits on the 67 TFLOP/s roof FP32 shares with FP64 tensor cores
    window.open_example("gemm-4096-fp16")
    window.document.edit_declaration(0, "gemm(M=4096, N=4096, K=4096, dtype=fp32)")
    window.document.set_device("h100-sxm")
    window.document.reset_rates()
    window.tabs.setCurrentWidget(window.roofline)
    texts = [full_short for key, full_short in window.roofline._roof_texts.items() if key.startswith("roof ")]
    shared = [pair for pair in texts if "FP64 TC" in pair[0] and "FP32" in pair[0]]
    assert shared == [("FP32 / FP64 TC  67 TFLOP/s", "FP32  67 TFLOP/s")]  # in full and in the short text
    labels = window.roofline.roof_labels
    drawn = [label.toPlainText() for label in labels.items[: labels.used] if "67 TFLOP/s" in label.toPlainText()]
    assert drawn and all(text.startswith("FP32") for text in drawn)
