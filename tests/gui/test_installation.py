"""What an installation shows: the icon, the About box's optional parts, and `workbench gui --check`."""

from __future__ import annotations

import pytest

from workbench import cli
from workbench.gui.app import application_icon, build_window


def test_application_icon_renders(qtbot) -> None:  # type: ignore[no-untyped-def]
    icon = application_icon()
    assert not icon.isNull()
    assert not icon.pixmap(64, 64).isNull()


def test_about_lists_version_and_optional_parts(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = build_window()
    qtbot.addWidget(window)
    box = window.show_about()
    text = box.informativeText()
    assert "0.1.0" in box.text()
    for part in ("CuPy:", "NVML:", "PyTorch:"):
        assert part in text
    box.close()
    window.wait_for_workers()


def test_check_opens_an_example_and_reports_it(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert cli.main(["gui", "--example", "vector-add", "--check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("window shown: True;")
    assert "memory-limited" in out


def test_check_with_an_unknown_example_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert cli.main(["gui", "--example", "no-such-example", "--check"]) == 2
    assert "unknown example 'no-such-example'" in capsys.readouterr().err
