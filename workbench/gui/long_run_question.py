"""The question asked before a long run: run it, run a quicker variant, or not at all."""

from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from workbench.gui.plain_text import html_text, plain, tooltip
from workbench.model.declare import Declaration
from workbench.measure.estimate import (
    Alternative,
    RunEstimate,
    estimate_total,
    format_duration,
)

RUN_ANYWAY = "run anyway"


class LongRunQuestion(QDialog):
    """Asked before a run expected to take longer than LONG_RUN_S: run it, run a quicker one, or not at all.

    Each quicker offer (a smaller size, a faster dtype) is a button with its own
    estimate; "Don't run" is the default, so Enter or Escape never starts hours of
    work. `answered` carries the declarations to run, or None.
    """

    answered = Signal(object)  # tuple[Declaration, ...] or None

    def __init__(self, declarations: Sequence[Declaration], estimates: Sequence[RunEstimate],
                 offers: Sequence[Alternative], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("longRunQuestion")
        self.setWindowTitle("A long run")
        self.setModal(True)
        self.declarations = tuple(declarations)
        self.offers = tuple(offers)
        total = estimate_total(estimates)
        first = estimates[0]
        what = str(declarations[0]) if len(declarations) == 1 else f"{len(declarations)} sizes of {declarations[0].op}"
        where = "the CPU" if first.backend == "numpy" else "the GPU"
        headline = QLabel(f"<b>Measuring {html_text(what)} on {where} should take {format_duration(total or 0.0)}.</b>")
        headline.setTextFormat(Qt.TextFormat.RichText)
        headline.setObjectName("longRunHeadline")
        headline.setWordWrap(True)
        detail = plain(QLabel(first.text() if len(estimates) == 1 else
                        "; ".join(f"{e.declaration}: {format_duration(e.total_s or 0.0)}" for e in estimates)))
        detail.setObjectName("longRunDetail")
        detail.setWordWrap(True)
        detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(headline)
        layout.addWidget(detail)
        if self.offers:
            layout.addWidget(QLabel("Quicker instead (recorded as a run of the declaration named, "
                                    "under this operation):"))
        self.buttons: dict[str, QPushButton] = {}
        for offer in self.offers:
            button = QPushButton(offer.label)
            button.setObjectName(f"longRun_{offer.kind}")
            button.setToolTip(tooltip(offer.estimate.text()))
            button.clicked.connect(lambda _=False, kind=offer.kind: self.choose(kind))
            self.buttons[offer.kind] = button
            layout.addWidget(button)
        row = QHBoxLayout()
        anyway = QPushButton(f"Run anyway ({format_duration(total or 0.0)})")
        anyway.setObjectName("longRun_anyway")
        anyway.setAutoDefault(False)
        anyway.clicked.connect(lambda: self.choose(RUN_ANYWAY))
        dont = QPushButton("Don't run")
        dont.setObjectName("longRun_dont")
        dont.setDefault(True)
        dont.clicked.connect(lambda: self.choose(None))
        self.buttons[RUN_ANYWAY] = anyway
        self.buttons["dont"] = dont
        row.addStretch(1)
        row.addWidget(anyway)
        row.addWidget(dont)
        layout.addLayout(row)
        self.rejected.connect(lambda: self._answer(None))
        self._done = False

    def choose(self, kind: str | None) -> None:
        """Answer as the button of `kind` does: an offer's kind, RUN_ANYWAY, or None (don't run)."""
        if kind == RUN_ANYWAY:
            chosen: tuple[Declaration, ...] | None = self.declarations
        else:
            offer = next((o for o in self.offers if o.kind == kind), None)
            chosen = (offer.declaration,) if offer is not None else None
        self._answer(chosen)
        self.accept()

    def _answer(self, chosen: tuple[Declaration, ...] | None) -> None:
        if not self._done:
            self._done = True
            self.answered.emit(chosen)
