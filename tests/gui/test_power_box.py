"""A sweep's size field reads what is typed into it as the declaration language would: 2^12 is 2^12."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from workbench.gui.power_box import PowerOfTwoBox


@pytest.fixture
def box(qtbot):  # type: ignore[no-untyped-def]
    made = PowerOfTwoBox()
    qtbot.addWidget(made)
    made.setValue(10)
    made.show()
    qtbot.waitExposed(made)
    return made


def _type_over(box: PowerOfTwoBox, text: str) -> None:
    box.setFocus()
    box.selectAll()  # the value after the prefix, as a double click or Ctrl+A selects it
    QTest.keyClicks(box, text)
    QTest.keyClick(box, Qt.Key.Key_Return)


@pytest.mark.parametrize("typed", ["2^12", "12", "2**12", "4096"])
def test_a_power_typed_over_the_value_is_that_power(box, typed: str) -> None:  # type: ignore[no-untyped-def]
    _type_over(box, typed)
    assert box.value() == 12 and box.text() == "2^12"


@pytest.mark.parametrize("typed", ["4095", "2^63", "3^2", "abc"])
def test_what_is_not_a_power_in_range_leaves_the_value(box, typed: str) -> None:  # type: ignore[no-untyped-def]
    _type_over(box, typed)
    box.clearFocus()
    assert box.value() == 10 and box.text() == "2^10"


def test_the_whole_text_typed_again_prefix_and_all(box) -> None:  # type: ignore[no-untyped-def]
    box.setFocus()
    box.lineEdit().selectAll()  # the prefix too
    QTest.keyClicks(box, "2^14")
    QTest.keyClick(box, Qt.Key.Key_Return)
    assert box.value() == 14
