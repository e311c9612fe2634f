"""A sweep's size field: a spin box of exponents shown as 2^N that reads what a user types as the declaration
language would (`12`, `2^12`, `2**12`, `4096` all mean 2^12), never a different number.

A plain QSpinBox with the prefix "2^" drops the characters it does not expect: "2^12" typed over a selected
"2^10" became 2^212, clamped, or 2^21. This one interprets the text after its prefix with
`workbench.model.declare.power_of_two_exponent` once the typing is done (Enter, or the focus leaving), and keeps
the value it had when the text is no power of two in range.
"""

from __future__ import annotations

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox, QWidget

from workbench.model.declare import power_of_two_exponent
from workbench.errors import DeclarationError

PREFIX = "2^"


class PowerOfTwoBox(QSpinBox):
    """Exponents 0 … `largest`, shown and typed as powers of two."""

    def __init__(self, largest: int = 62, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(0, largest)
        self.setPrefix(PREFIX)
        self.setKeyboardTracking(False)  # "4095" passes through 2^4 and 2^40 on its way: the value waits for Enter
        self.setToolTip(f"A power of two: type 12, 2^12 or 4096 (2^0 … 2^{largest})")

    def _typed(self, text: str) -> str:
        """The text a user typed, without the prefix the box shows (typed again, or kept)."""
        typed = text.strip()
        return typed[len(PREFIX) :] if typed.startswith(PREFIX) else typed

    def _exponent(self, text: str) -> int | None:
        typed = self._typed(text)
        if not typed:
            return None
        try:
            exponent = power_of_two_exponent(typed, "size", self.maximum())
        except DeclarationError:
            return None
        return exponent if exponent >= self.minimum() else None

    def validate(self, text: str, pos: int) -> object:  # noqa: D102 (Qt's)
        if self._exponent(text) is not None:
            return QValidator.State.Acceptable, text, pos
        return QValidator.State.Intermediate, text, pos  # typing on the way to a value; fixed up on leaving

    def valueFromText(self, text: str) -> int:  # noqa: N802 (Qt's name)
        exponent = self._exponent(text)
        return self.value() if exponent is None else exponent

    def fixup(self, text: str) -> str:
        return self.textFromValue(self.value())
