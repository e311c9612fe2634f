"""The report's roofline: the session's roofs and operations drawn as SVG from the scenes the window draws too
(`workbench.scenes.roofline_marks`, `roofline_scene`, `roofline_svg`), without Qt or a window."""

from __future__ import annotations

from typing import Sequence

from workbench.errors import WorkbenchError
from workbench.model.devices import BANDWIDTH
from workbench.documents.report.model import Report
from workbench.documents.session import Session
from workbench.scenes.roofline_marks import OtherMarks, PlacedOperation, roofline_marks
from workbench.scenes.roofline_state import RooflineViewState
from workbench.scenes.roofline_svg import label_width, plot_width, roofline_svg

REPORT_PLOT_SIZE = (960.0, 600.0)  # pixels of the roofline in reports


def session_operations(session: Session) -> list[PlacedOperation]:
    """Every operation of the session analysed on its device (None where the analysis fails)."""
    try:
        device = session.device.resolve()
    except WorkbenchError:
        return []
    results = session.analyze_all(device)
    return [PlacedOperation(row, entry.name, result if not isinstance(result, WorkbenchError) else None)
            for row, (entry, result) in enumerate(zip(session.operations, results))]


def report_operations(report: Report) -> list[PlacedOperation]:
    """The operations of a built report with the analyses it made: the plot drawn beside it does not analyse the
    session again."""
    return [PlacedOperation(row, operation.entry.name, operation.analysis)
            for row, operation in enumerate(report.operations)]


def roofline_plot(
    session: Session,
    state: RooflineViewState = RooflineViewState(),
    current: int | None = None,
    pins: Sequence[int] = (),
    operations: Sequence[PlacedOperation] | None = None,
    size: tuple[float, float] = REPORT_PLOT_SIZE,
    level_method: str = "ncu",
) -> str | None:
    """The session's roofline as one `<svg>` element, or None where it has none (no device, or one without a
    memory bandwidth). `state`: the view's levels shown, range, label mode and legend corner (the window's, when
    it exports); `current`: the selected operation's row (the first when None); `pins`: rows whose labels are
    pinned; `operations`: the operations with their analyses (the window's, stale ones marked), else analysed
    here. The session's measured runs and imported kernels are drawn as the window draws them (`level_method`:
    whose method counted a kernel's bytes at the further levels)."""
    try:
        device = session.device.resolve()
    except WorkbenchError:
        return None
    if BANDWIDTH not in {*device.peak, *device.overrides}:
        return None
    if operations is None:
        operations = session_operations(session)
    if current is None:
        current = 0 if session.operations else -1
    others = OtherMarks()
    if session.runs or session.profiles:  # read only where there are any: a large session's plot costs nothing more
        from workbench.documents.report.plot_marks import other_marks

        others = other_marks(session, device, operations, current, state, level_method)
    marks = roofline_marks(device, operations, state, current, session.settings.binary, width=plot_width(size),
                           text_width=label_width, others=others.extent())
    title = f"Roofline of {session.title}" if session.title else "Roofline of the session"
    return roofline_svg(marks, state, size, pins, title, others)

