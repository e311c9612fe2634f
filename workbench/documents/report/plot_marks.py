"""The report's roofline's marks besides the operations: the session's measured runs and imported profiler kernels,
placed, styled and named by the functions the window's layers call (`workbench.measure.run_marks`,
`workbench.documents.profiles`), handed to the SVG as scene marks (`scenes.roofline_marks.OtherMarks`)."""

from __future__ import annotations

from typing import Sequence

from workbench.errors import WorkbenchError
from workbench.documents.profiles import KERNEL_LEGEND, kernel_marks
from workbench.documents.session import Session
from workbench.measure.run_marks import STYLES, labelled_marks, roofline_run_marks, run_legend
from workbench.measure.runs import all_run_figures
from workbench.model.devices import Device
from workbench.scenes.plot_style import kernel_role
from workbench.scenes.roofline import device_levels
from workbench.scenes.roofline_marks import OtherMark, OtherMarks, PlacedOperation
from workbench.scenes.roofline_state import RooflineViewState


def run_marks(session: Session, device: Device) -> tuple[list[OtherMark], list[tuple[str, str]]]:
    """Each run the window's roofline draws (`roofline_run_marks`), valid runs first and the flagged ones over them,
    the first run of each label and intensity labelled; and a legend row per kind present (no hover wording)."""
    runs = roofline_run_marks(all_run_figures(session.runs, session.figure_context(device)), session.settings.binary)
    labelled = {id(mark) for mark in labelled_marks(runs)}
    marks = [OtherMark(mark.x, mark.y, f"run {style}", mark.low, mark.high, f"run {style} bar",
                       mark.label if id(mark) in labelled else "")
             for style in STYLES for mark in runs if mark.style == style]
    texts = run_legend(runs, hover=False)
    return marks, [(f"run {style}", texts[style]) for style in STYLES if texts[style]]


def profile_marks(session: Session, device: Device, operations: Sequence[PlacedOperation], current: int,
                  state: RooflineViewState, level_method: str) -> tuple[list[OtherMark], list[tuple[str, str]]]:
    """Each matched kernel's star (`documents.profiles.kernel_marks`) with its dotted link to its operation's point,
    its stars at the further levels shown, and the legend's row when there is any."""
    analyses = {operation.row: operation.analysis for operation in operations}
    settings = session.settings
    try:
        kernels = kernel_marks(session.profiles, session.operations, analyses.get, device, settings.binary,
                               settings.overlap, level_method)
    except WorkbenchError:  # a record that cannot be compared: no stars, as in the window
        return [], []
    shown = {level.key for level in device_levels(device)} - set(state.hidden_levels)
    marks = []
    for kernel in kernels:
        marks += [OtherMark(x, kernel.y, f"kernel level {key}") for key, x in kernel.levels if key in shown]
        marks.append(OtherMark(kernel.x, kernel.y, kernel_role(kernel.style, kernel.operation == current),
                               link=kernel.anchor))
    return marks, ([("kernel", KERNEL_LEGEND)] if kernels else [])


def other_marks(session: Session, device: Device, operations: Sequence[PlacedOperation], current: int,
                state: RooflineViewState = RooflineViewState(), level_method: str = "ncu") -> OtherMarks:
    """The session's runs and kernels on the roofline of `operations` on `device` (`current`: the selected row),
    with their legend rows; nothing is read where the session holds neither."""
    marks: list[OtherMark] = []
    legend: list[tuple[str, str]] = []
    if session.profiles:
        marks, legend = profile_marks(session, device, operations, current, state, level_method)
    if session.runs:
        runs, rows = run_marks(session, device)
        marks, legend = marks + runs, rows + legend  # the runs over the kernels, as in the window
    return OtherMarks(tuple(marks), tuple(legend))
