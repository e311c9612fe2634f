"""Measured runs as marks on the plots, without Qt: where each run goes (roofline: achieved FLOP/s over the median
against FLOP per compulsory byte; bound vs size: median time against the swept size), its p10–p90 spread bar, its
kind (valid, not valid, another device's, impossible), the short label beside a run that is not a valid result,
and the legend's text for each kind. The window's layers (gui/measure_plots.py) and the reports' roofline
(documents/report/plot_marks.py) draw what these functions return; hover texts stay with the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from workbench.measure.record import CANCELLED
from workbench.measure.runs import RunFigures
from workbench.measure.sweep import swept_size

VALID = "valid"
NOT_VALID = "not valid"
OTHER_DEVICE = "other device"
IMPOSSIBLE = "impossible"
STYLES = (VALID, NOT_VALID, OTHER_DEVICE, IMPOSSIBLE)  # in the order they are drawn and listed

MEASURED_LEGEND = "measured run: median, bar p10–p90"
SWEEP_LEGEND = "measured median, bar p10–p90"
NOT_VALID_LEGEND = "run not valid (check failed or missing): not a result"
IMPOSSIBLE_LEGEND = "impossible: faster than its own device's bound"
HOVER_WHY = " (hover for why)"  # said after IMPOSSIBLE_LEGEND where a mark can be hovered


@dataclass(frozen=True)
class RunMark:
    """Where one run goes, in the plot's log coordinates, with its spread bar, kind and label."""

    x: float
    y: float  # the median
    low: float  # the lower end of the spread bar
    high: float  # the upper end of the spread bar
    valid: bool
    label: str  # shown beside a run that is not valid, impossible, or from another device
    run: Any = field(compare=False, repr=False)  # the RunFigures it stands for
    run_index: int = -1
    style: str = VALID  # VALID, NOT_VALID, OTHER_DEVICE or IMPOSSIBLE
    device: str = ""  # the device the run ran on (short name)
    binary: bool = field(default=False, compare=False)  # bytes in MiB/GiB in texts made from the run


Made = TypeVar("Made", bound=RunMark)


def short_device(name: str) -> str:
    """'NVIDIA H100 SXM (80 GB)' → 'NVIDIA H100 SXM': a device's name beside a mark."""
    return name.split(" (")[0]


def mark_style(run: RunFigures) -> tuple[str, str]:
    """How a run is drawn and the label beside it: impossible, not valid, another device's, or a valid result."""
    if not run.valid:
        return NOT_VALID, {"unchecked": "not checked"}.get(run.status, "invalid")
    if run.impossible is not None:
        return IMPOSSIBLE, f"impossible ({short_device(run.device_name)})"
    if run.device_note and not run.on_session_device:
        return OTHER_DEVICE, short_device(run.device_name)
    return VALID, ""


def _mark(make: Callable[..., Made], run: RunFigures, position: tuple[float, float, float, float], binary: bool) -> Made:
    style, label = mark_style(run)
    x, y, low, high = position
    return make(x=x, y=y, low=low, high=high, valid=run.valid, label=label, run=run, run_index=run.index, style=style,
                device=short_device(run.device_name), binary=binary)


def roofline_run_marks(runs: Sequence[RunFigures], binary: bool = False,
                       make: Callable[..., Made] = RunMark) -> list[Made]:  # type: ignore[assignment]
    """Each run on the roofline: x = log10 intensity, y = log10 achieved FLOP/s over the median, the bar from the
    p90 (slow) to the p10 (fast) rate; runs without FLOP (a copy), without samples, or cancelled are left off.
    `make`: the mark's class (the window's adds its hover text)."""
    marks = []
    for run in runs:
        spread = run.flop_per_s_spread
        rate = run.achieved_flop_per_s
        if run.status == CANCELLED or run.intensity is None or rate is None or spread is None:
            continue
        slow, fast = spread
        position = (math.log10(run.intensity), math.log10(rate), math.log10(slow), math.log10(fast))
        marks.append(_mark(make, run, position, binary))
    return marks


def sweep_run_marks(runs: Sequence[RunFigures], declaration: Any, fields: Sequence[str], binary: bool = False,
                    make: Callable[..., Made] = RunMark) -> list[Made]:  # type: ignore[assignment]
    """The runs whose declaration differs from `declaration` only in the swept `fields`, on the bound-vs-size plot:
    x = log2 size, y = log10 median time, the bar from p10 to p90."""
    marks = []
    for run in runs:
        size = swept_size(run.declaration, declaration, fields)
        if size is None or run.stats is None or run.status == CANCELLED or run.stats.p10_s <= 0:
            continue
        s = run.stats
        position = (math.log2(size), math.log10(s.median_s), math.log10(s.p10_s), math.log10(s.p90_s))
        marks.append(_mark(make, run, position, binary))
    return marks


def labelled_marks(marks: Sequence[Made]) -> list[Made]:
    """The marks that carry their label: the first of those with the same label at the same x (the runs of one
    declaration on one device, or one size of a sweep). A session's thousands of runs of a few declarations
    otherwise stacked as many copies of one text beside one column of marks."""
    seen: set[tuple[str, float]] = set()
    chosen = []
    for mark in marks:
        key = (mark.label, mark.x)
        if mark.label and key not in seen:
            seen.add(key)
            chosen.append(mark)
    return chosen


def run_legend(marks: Sequence[RunMark], valid_text: str = MEASURED_LEGEND, hover: bool = True) -> dict[str, str]:
    """The legend's text for each kind of mark (every kind in `STYLES`; '' for a kind none of `marks` is):
    `valid_text` for valid runs, the devices of runs on another device, and why an impossible run is flagged
    ('hover for why' only where a mark can be hovered)."""
    present = {mark.style for mark in marks}
    others = sorted({mark.device for mark in marks if mark.style == OTHER_DEVICE})
    return {
        VALID: valid_text if VALID in present else "",
        NOT_VALID: NOT_VALID_LEGEND if NOT_VALID in present else "",
        OTHER_DEVICE: f"run on {', '.join(others)}: not against these roofs" if others else "",
        IMPOSSIBLE: IMPOSSIBLE_LEGEND + (HOVER_WHY if hover else "") if IMPOSSIBLE in present else "",
    }
