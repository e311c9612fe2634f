"""Presentation mode: larger text everywhere, Ctrl+0 back to the start-up size, its own layout."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QApplication

from workbench import cli
from workbench.devices.nvml import NO_DRIVER, Detection
from workbench.gui import app as gui_app
from workbench.gui.window import DEFAULT_FONT_POINTS, FONT_RANGE, PRESENTATION_MIN_POINTS


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
    assert window.font_points() == pytest.approx(10.0)


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
