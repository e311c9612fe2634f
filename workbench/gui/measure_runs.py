"""The session's measurement runs as the views read them, and adding or removing one (an undo step of the document's).

Reading is the core's (`workbench.measure.runs`): each dict of `Session.runs` is
parsed once into a typed `Run`, and `run_figures` derives its median, spread,
achieved rates and % of bound from the raw samples, the declaration, the
device the run ran on and the session's convention — the same function the
reports and the CLI call, so the table, the roofline, the bound-vs-size plot
and an exported report agree. A run measured on another device than the
session shows keeps its own device's bound and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def add_run(document: "Document", record: RunRecord, operation_name: str) -> None:
    """Push the undoable command that stores a finished run (with the operation it was started from)."""
    data = record.to_dict()
    data[OPERATION_NAME_KEY] = operation_name
    document.core.add_run(data, f"Measure {record.declaration}")


def remove_run(document: "Document", index: int) -> None:
    document.core.remove_run(index)
