"""What the Compare tab shows besides the document: the devices chosen (in the order they were ticked) and the
operation selected; and what follows from them and a comparison: the devices that can be chosen, the columns,
each cell's look, and the plot of the selected operation (its range, each device's roof, the marks, the label).

Plain data and pure functions, no Qt: the window's `CompareView` holds one `CompareViewState` and draws what
`compare_plot` returns; tests check the decisions without a window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

from workbench.documents.device_compare import DeviceBound, DeviceComparison, roofline_points
from workbench.errors import WorkbenchError
from workbench.model.devices import Device

SESSION_DEVICE = "__session__"  # the choice standing for the session's device, overrides included
DEFAULT_OTHERS = ("h200-sxm", "a100-sxm-80gb")  # shown beside the session's device the first time
CELL_PLAIN, CELL_FASTEST, CELL_NONE = "plain", "fastest", "none"  # a cell's look: a bound, the shortest, none
DECADES_AROUND = 30.0  # the plot reaches this factor below the lowest and above the highest intensity or ridge
ASSUMED_SOURCES = ("datasheet", "derived")  # a roof from these rates is drawn dashed: not measured or entered
LABEL_OFFSET = 0.12  # the operation's name this far (log10 units) right of its marks

Choice = tuple[str, str, "Device | None"]  # (key, label, device) of one device that can be chosen


@dataclass(frozen=True)
class CompareViewState:
    """One Compare tab's own settings: `chosen`, the device keys in the order they were ticked (SESSION_DEVICE for
    the session's device); `row`, the operation whose roofs the plot shows (the document's selection)."""

    chosen: tuple[str, ...] = (SESSION_DEVICE, *DEFAULT_OTHERS)
    row: int = 0

    def choosing(self, keys: Iterable[str]) -> CompareViewState:
        """The devices `keys` chosen, in their order, each once."""
        return replace(self, chosen=tuple(dict.fromkeys(keys)))

    def ticking(self, key: str, checked: bool) -> CompareViewState:
        """`key` ticked (added after the others) or unticked (taken out)."""
        if checked and key not in self.chosen:
            return replace(self, chosen=(*self.chosen, key))
        if not checked and key in self.chosen:
            return replace(self, chosen=tuple(chosen for chosen in self.chosen if chosen != key))
        return self

    def chosen_devices(self, choices: Sequence[Choice]) -> list[Device]:
        """The chosen devices among `choices`, in the order they were chosen (a choice no longer offered, such as a
        GPU no longer detected, is left out)."""
        by_key = {key: device for key, _, device in choices if device is not None}
        return [by_key[key] for key in self.chosen if key in by_key]

    def shown_row(self, rows: int) -> int:
        """The selected row kept inside a comparison of `rows` operations (the last when it is beyond them)."""
        return min(max(self.row, 0), rows - 1)


def device_choices(session_device: Device | None, detected: Mapping[str, Device], host: Device,
                   catalogue: Iterable[Device]) -> list[Choice]:
    """Every device that can be chosen, in the list's order: the session's (its rates as measured or entered), the
    GPUs detected, this machine, the catalogue."""
    choices: list[Choice] = []
    if session_device is not None:
        measured = " (measured/entered rates)" if session_device.overrides else ""
        choices.append((SESSION_DEVICE, f"Session: {session_device.name}{measured}", session_device))
    choices += [(key, f"{device.name} ({key})", device) for key, device in detected.items()]
    choices.append((host.key, host.name, host))
    choices += [(device.key, device.name, device) for device in catalogue]
    return choices


def cell_look(comparison: DeviceComparison, row: int, column: int, fastest: Sequence[int] | None = None) -> str:
    """CELL_NONE where the device gives no bound, CELL_FASTEST for the shortest bound of a row of several devices,
    else CELL_PLAIN (`fastest`: `comparison.fastest(row)` when the caller has it already)."""
    cells = comparison.rows[row]
    cell = cells[column]
    if cell.analysis is None or cell.bound_time_s is None:
        return CELL_NONE
    fastest = comparison.fastest(row) if fastest is None else fastest
    return CELL_FASTEST if column in fastest and len(cells) > 1 else CELL_PLAIN


@dataclass(frozen=True)
class Roof:
    """One device's roofline for the selected operation's path, in log10 units; `assumed`: datasheet or derived
    rates (drawn dashed)."""

    column: int
    cell: DeviceBound
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    assumed: bool


@dataclass(frozen=True)
class Mark:
    """A mark at the operation's intensity on one device's column: its attainable rate, or (`measured`) the rate
    a run of it reached there. log10 units."""

    column: int
    x: float
    y: float
    measured: bool = False


@dataclass(frozen=True)
class ComparePlot:
    """What the plot shows for one operation: the roofs and marks, the label beside the marks, and the range
    (log10 units; `y_range` None when nothing has a rate)."""

    roofs: tuple[Roof, ...]
    marks: tuple[Mark, ...]
    label: tuple[str, float, float] | None  # (text, x, y)
    x_range: tuple[float, float]
    y_range: tuple[float, float] | None


def _cell_marks(column: int, cell: DeviceBound) -> tuple[list[Mark], list[float]]:
    """The cell's marks and the achieved rates the plot's range must include."""
    analysis = cell.analysis
    if analysis is None or not (analysis.bytes and analysis.attainable_rate):
        return [], []
    x = math.log10(analysis.intensity)
    marks = [Mark(column, x, math.log10(analysis.attainable_rate))]
    if cell.measured_time_s and analysis.flop:
        achieved = analysis.flop / cell.measured_time_s  # FLOP/s the run reached on this device
        return [*marks, Mark(column, x, math.log10(achieved), measured=True)], [achieved]
    return marks, []


def intensity_range(cells: Sequence[DeviceBound]) -> tuple[float, float]:
    """The intensities the roofs span (FLOP/B): DECADES_AROUND below and above the operation's intensities and the
    devices' ridges (around 1 when there are none)."""
    intensities = [c.analysis.intensity for c in cells
                   if c.analysis is not None and math.isfinite(c.analysis.intensity) and c.analysis.intensity > 0]
    ridges = [c.analysis.ridge for c in cells if c.analysis is not None and c.analysis.ridge]
    spots = [*intensities, *ridges] or [1.0]
    return min(spots) / DECADES_AROUND, max(spots) * DECADES_AROUND


def compare_plot(comparison: DeviceComparison, row: int) -> ComparePlot:
    """The plot of operation `row`: a roof per device that has the rates for its path, its marks, its name beside
    them, and a range that holds every roof corner and mark."""
    cells = comparison.rows[row]
    low, high = intensity_range(cells)
    roofs: list[Roof] = []
    marks: list[Mark] = []
    rates: list[float] = []
    for column, cell in enumerate(cells):
        analysis = cell.analysis
        if analysis is None or analysis.compute_rate is None or analysis.bandwidth is None:
            continue
        try:
            corners = roofline_points(cell.device, analysis.path, low, high)
        except WorkbenchError:
            continue
        roofs.append(Roof(column, cell, tuple(math.log10(x) for x, _ in corners), tuple(math.log10(y) for _, y in corners),
                          analysis.compute_rate.source in ASSUMED_SOURCES))
        rates += [y for _, y in corners]
        cell_marks, achieved = _cell_marks(column, cell)
        marks += cell_marks
        rates += achieved
    label = None
    if marks:
        heights = [mark.y for mark in marks]
        label = (cells[0].operation, marks[0].x + LABEL_OFFSET, (max(heights) + min(heights)) / 2)
    y_range = (math.log10(min(rates)) - 0.3, math.log10(max(rates)) + 0.2) if rates else None
    return ComparePlot(tuple(roofs), tuple(marks), label, (math.log10(low), math.log10(high)), y_range)


__all__ = [
    "CELL_FASTEST", "CELL_NONE", "CELL_PLAIN", "Choice", "ComparePlot", "CompareViewState", "DEFAULT_OTHERS", "Mark",
    "Roof", "SESSION_DEVICE", "cell_look", "compare_plot", "device_choices", "intensity_range",
]
