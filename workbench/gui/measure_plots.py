"""Measured runs on the plots: the roofline (achieved FLOP/s against intensity) and bound vs size (median time).

Each layer owns long-lived pyqtgraph items — a scatter of valid runs, a
hollow grey scatter of runs that are not valid, vertical spread bars from
the p10 and p90 times, "invalid" labels — created once and changed with
`setData`. The plot view asks a layer where its marks go (`compute`), makes
room for them in its range, then hands them back (`show`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg

from workbench.declare import Declaration
from workbench.gui.document import Document
from workbench.gui.measure_runs import MeasuredRun, document_runs, on_sweep
from workbench.measure.record import CANCELLED
from workbench.units import format_bandwidth, format_flop_rate, format_intensity, format_time

MEASURED_COLOUR = "#2e7d32"  # green, as the device panel's "measured" source
NOT_VALID_COLOUR = "#9e9e9e"
MEASURED_LEGEND = "measured run: median, bar p10–p90"
NOT_VALID_LEGEND = "run not valid (check failed or missing): not a result"
SWEEP_LEGEND = "measured median, bar p10–p90"


@dataclass(frozen=True)
class MeasuredMark:
    """Where one run goes, in the plot's log coordinates, with its spread bar and hover text."""

    x: float
    y: float  # the median
    low: float  # the lower end of the spread bar
    high: float  # the upper end of the spread bar
    valid: bool
    label: str  # shown beside a run that is not valid
    tip: str
    run_index: int


def run_tip(run: MeasuredRun, binary: bool) -> str:
    """Hover text of a run: what ran, where, its median and spread, achieved rates, check."""
    lines = [
        f"{run.operation_name}: {run.declaration_text}",
        f"{run.backend} {run.mode} on {run.device}".strip(),
        f"status: {run.status_text} — {run.check}",
    ]
    if run.stats is not None:
        s = run.stats
        lines.append(
            f"median {format_time(s.median_s)} (p10 {format_time(s.p10_s)}, p90 {format_time(s.p90_s)}), {s.count} samples"
        )
    if run.achieved_bytes_per_s is not None:
        lines.append(f"{format_bandwidth(run.achieved_bytes_per_s, binary)} compulsory bytes over the median")
    if run.achieved_flop_per_s is not None:
        lines.append(f"{format_flop_rate(run.achieved_flop_per_s)} logical FLOP over the median")
    if run.intensity is not None:
        lines.append(f"intensity {format_intensity(run.intensity)}")
    if run.fraction_of_bound is not None:
        lines.append(f"{run.fraction_of_bound:.0%} of the bound ({format_time(run.bound_time_s or 0.0)} on {run.bound_device})")
    return "\n".join(lines)


def _not_valid_label(run: MeasuredRun) -> str:
    return {"unchecked": "not checked"}.get(run.status, "invalid")


class _MarkItems:
    """A scatter, its spread bars and a pool of labels, for one kind of mark (valid or not)."""

    def __init__(self, plot: pg.PlotItem, colour: str, filled: bool, symbol: str, z: float) -> None:
        self.plot = plot
        self.colour = colour
        self.scatter = pg.ScatterPlotItem(
            symbol=symbol,
            size=11,
            pen=pg.mkPen(colour, width=1.8),
            brush=pg.mkBrush(colour) if filled else pg.mkBrush(255, 255, 255, 230),
            hoverable=True,
            tip=None,
            hoverSize=15,
        )
        self.bars = pg.ErrorBarItem(pen=pg.mkPen(colour, width=1.4), beam=0.0)
        self.scatter.setZValue(z)
        self.bars.setZValue(z - 0.1)
        plot.addItem(self.bars)
        plot.addItem(self.scatter)
        self.labels: list[pg.TextItem] = []
        self.shown = 0  # marks drawn now

    def show(self, marks: Sequence[MeasuredMark], beam: float, with_labels: bool) -> None:
        if not marks and not self.shown:
            return  # nothing drawn, nothing to draw: the common case on every edit of a session without runs
        self.shown = len(marks)
        x = np.array([m.x for m in marks], dtype=float)
        y = np.array([m.y for m in marks], dtype=float)
        self.scatter.setData(x=x, y=y, data=[m.run_index for m in marks])
        self.bars.setData(
            x=x,
            y=y,
            top=np.array([max(m.high - m.y, 0.0) for m in marks], dtype=float),
            bottom=np.array([max(m.y - m.low, 0.0) for m in marks], dtype=float),
            beam=beam,
        )
        self.bars.setVisible(bool(marks))
        wanted = len(marks) if with_labels else 0
        while len(self.labels) < wanted:
            label = pg.TextItem(anchor=(0, 0.5), color=self.colour)
            label.setZValue(self.scatter.zValue())
            self.plot.addItem(label)
            self.labels.append(label)
        for index, label in enumerate(self.labels):
            label.setVisible(index < wanted)
            if index < wanted:
                mark = marks[index]
                label.setText(mark.label)
                label.setPos(mark.x + 0.06, mark.y)


class _MeasuredLayer:
    """Valid and not-valid marks with hover text and legend rows (shared by both plots)."""

    legend_valid = MEASURED_LEGEND

    def __init__(self, plot: pg.PlotItem, document: Document) -> None:
        self.plot = plot
        self.document = document
        self.valid_items = _MarkItems(plot, MEASURED_COLOUR, True, "s", 5)
        self.not_valid_items = _MarkItems(plot, NOT_VALID_COLOUR, False, "s", 4.5)
        self.marks: list[MeasuredMark] = []
        self._tips: dict[int, str] = {}
        self._legend_rows: dict[str, bool] = {}
        for items in (self.valid_items, self.not_valid_items):
            items.scatter.sigHovered.connect(self._hovered)

    def show(self, marks: Sequence[MeasuredMark], beam: float = 0.0) -> None:
        self.marks = list(marks)
        self._tips = {mark.run_index: mark.tip for mark in self.marks}
        valid = [m for m in self.marks if m.valid]
        not_valid = [m for m in self.marks if not m.valid]
        self.valid_items.show(valid, beam, with_labels=False)
        self.not_valid_items.show(not_valid, beam, with_labels=True)
        self._legend(self.valid_items.scatter, self.legend_valid, bool(valid))
        self._legend(self.not_valid_items.scatter, NOT_VALID_LEGEND, bool(not_valid))

    def _legend(self, item: pg.ScatterPlotItem, text: str, wanted: bool) -> None:
        if self._legend_rows.get(text, False) == wanted:
            return
        legend = self.plot.addLegend(offset=(12, 10))  # the plot's one legend (created by whoever asks first)
        if wanted:
            legend.setBrush(pg.mkBrush(255, 255, 255, 220))
            legend.addItem(item, text)
        else:
            legend.removeItem(item)
        self._legend_rows[text] = wanted

    def tip(self, run_index: Any) -> str:
        if not isinstance(run_index, (int, np.integer)):
            return ""
        return self._tips.get(int(run_index), "")

    def _hovered(self, item: Any, points: Any, event: Any) -> None:
        # On the scatter itself, so it never clears the operations' or the kernels' hover text.
        item.setToolTip("\n\n".join(self.tip(point.data()) for point in list(points)[:3]))


class MeasuredRooflineLayer(_MeasuredLayer):
    """The session's runs on the roofline: logical FLOP/s over the median against FLOP per compulsory byte."""

    def compute(self) -> list[MeasuredMark]:
        """Where each run goes; runs without FLOP (a copy), without samples, or cancelled are left off."""
        binary = self.document.binary
        marks = []
        for run in document_runs(self.document):
            spread = run.flop_per_s_spread
            rate = run.achieved_flop_per_s
            if run.status == CANCELLED or run.intensity is None or rate is None or spread is None:
                continue
            slow, fast = spread
            marks.append(
                MeasuredMark(
                    x=math.log10(run.intensity),
                    y=math.log10(rate),
                    low=math.log10(slow),
                    high=math.log10(fast),
                    valid=run.valid,
                    label=_not_valid_label(run),
                    tip=run_tip(run, binary),
                    run_index=run.index,
                )
            )
        return marks


class MeasuredSweepLayer(_MeasuredLayer):
    """Runs of the selected operation at other sizes on the bound-vs-size plot: median time, p10–p90 bar."""

    legend_valid = SWEEP_LEGEND

    def compute(self, declaration: Declaration, fields: Sequence[str]) -> list[MeasuredMark]:
        """Runs whose declaration differs from `declaration` only in the swept `fields`."""
        binary = self.document.binary
        marks = []
        for run in document_runs(self.document):
            size = on_sweep(run, declaration, fields)
            if size is None or run.stats is None or run.status == CANCELLED or run.stats.p10_s <= 0:
                continue
            s = run.stats
            marks.append(
                MeasuredMark(
                    x=math.log2(size),
                    y=math.log10(s.median_s),
                    low=math.log10(s.p10_s),
                    high=math.log10(s.p90_s),
                    valid=run.valid,
                    label=_not_valid_label(run),
                    tip=run_tip(run, binary),
                    run_index=run.index,
                )
            )
        return marks
