"""The session's measurement runs as the views read them, and the undo commands that add or remove one.

Reading is the core's (`workbench.measure.runs`): each dict of `Session.runs` is
parsed once into a typed `Run`, and `run_figures` derives its median, spread,
achieved rates and % of bound from the raw samples, the declaration, the
device the run ran on and the session's convention — the same function the
reports and the CLI call, so the table, the roofline, the bound-vs-size plot
and an exported report agree. A run measured on another device than the
session shows keeps its own device's bound and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from PySide6.QtGui import QUndoCommand

from workbench.measure.record import RunRecord
from workbench.measure.runs import OPERATION_NAME_KEY, FigureContext, RunFigures, all_run_figures

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.gui.document import Document

MeasuredRun = RunFigures  # what every view of the runs holds: a run and its figures


def document_context(document: "Document") -> FigureContext:
    """The session's convention, overlap and units, and the device it shows (with its measured/entered rates)."""
    settings = document.session.settings
    return FigureContext(settings.convention, settings.overlap, document.device, settings.binary)


def document_runs(document: "Document") -> list[MeasuredRun]:
    """The document's runs as the views show them."""
    return all_run_figures(document.session.runs, document_context(document))


# ---------------------------------------------------------------- undo commands


class AddRun(QUndoCommand):
    """Store one finished run in Session.runs; undo takes it out again."""

    def __init__(self, document: "Document", run: dict[str, Any], text: str) -> None:
        super().__init__(text)
        self.document = document
        self.run = run

    def redo(self) -> None:
        self.document.session.runs.append(self.run)
        self.document.runs_changed.emit()

    def undo(self) -> None:
        runs = self.document.session.runs
        for position in range(len(runs) - 1, -1, -1):
            if runs[position] is self.run:
                del runs[position]
                break
        self.document.runs_changed.emit()


class RemoveRun(QUndoCommand):
    """Take one run out of Session.runs; undo puts the same dict back where it was."""

    def __init__(self, document: "Document", index: int) -> None:
        run = document.session.runs[index]
        described = run.get("declaration", f"run {index + 1}") if isinstance(run, Mapping) else f"run {index + 1}"
        super().__init__(f"Remove run of {described}")
        self.document = document
        self.index = index
        self.run = run

    def redo(self) -> None:
        del self.document.session.runs[self.index]
        self.document.runs_changed.emit()

    def undo(self) -> None:
        self.document.session.runs.insert(self.index, self.run)
        self.document.runs_changed.emit()


def add_run(document: "Document", record: RunRecord, operation_name: str) -> None:
    """Push the undoable command that stores a finished run (with the operation it was started from)."""
    data = record.to_dict()
    data[OPERATION_NAME_KEY] = operation_name
    document.undo_stack.push(AddRun(document, data, f"Measure {record.declaration}"))


def remove_run(document: "Document", index: int) -> None:
    if 0 <= index < len(document.session.runs):
        document.undo_stack.push(RemoveRun(document, index))
