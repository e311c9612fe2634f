"""Measured runs on the plots: the roofline (achieved FLOP/s against intensity) and bound vs size (median time).

Each layer owns long-lived pyqtgraph items — a scatter of valid runs, a
hollow grey scatter of runs that are not valid, a scatter of runs measured
on another device than the session shows (their own device's style, since
these roofs are not theirs), a red scatter of impossible runs (faster than
their own device allows), vertical spread bars from the p10 and p90 times,
and labels — created once and changed with `setData`. The plot view asks a layer where its marks go (`compute`), makes
room for them in its range, then hands them back (`show`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from workbench.model.declare import Declaration
from workbench.gui.document import Document
from workbench.gui.legend_strip import LegendStrip
from workbench.gui.measure_runs import MeasuredRun, document_runs
from workbench.gui.plain_text import html_text, tooltip
from workbench.measure.record import CANCELLED
from workbench.measure.sweep import swept_size
from workbench.model.units import format_bandwidth, format_flop_rate, format_intensity, format_percent, format_time

MEASURED_COLOUR = "#2e7d32"  # green, as the device panel's "measured" source
NOT_VALID_COLOUR = "#9e9e9e"
OTHER_DEVICE_COLOUR = "#6a1b9a"  # purple: a run on another device than the one whose roofs are drawn
IMPOSSIBLE_COLOUR = "#c62828"
MEASURED_LEGEND = "measured run: median, bar p10–p90"
NOT_VALID_LEGEND = "run not valid (check failed or missing): not a result"
IMPOSSIBLE_LEGEND = "impossible: faster than its own device's bound (hover for why)"
SWEEP_LEGEND = "measured median, bar p10–p90"

VALID = "valid"
NOT_VALID = "not valid"
OTHER_DEVICE = "other device"
IMPOSSIBLE = "impossible"


@dataclass(frozen=True)
class MeasuredMark:
    """Where one run goes, in the plot's log coordinates, with its spread bar and hover text."""

    x: float
    y: float  # the median
    low: float  # the lower end of the spread bar
    high: float  # the upper end of the spread bar
    valid: bool
    label: str  # shown beside a run that is not valid, impossible, or from another device
    run: Any = field(compare=False, repr=False)  # the MeasuredRun: its hover text is built when hovered
    run_index: int = -1
    style: str = VALID  # valid, not valid, other device, impossible
    device: str = ""  # the device the run ran on (short name)
    binary: bool = field(default=False, compare=False)  # bytes in MiB/GiB in the hover text

    @property
    def tip(self) -> str:
        """Hover text (run_tip), made when asked: a session of thousands of runs would build a string per run at
        every refresh for the few a pointer ever rests on."""
        return run_tip(self.run, self.binary)


def status_line(run: MeasuredRun) -> str:
    """'status: passed — 256 sampled outputs within tolerance (…)': the check's own first word is the
    status, so it is said once ('status: passed — passed: …' said it twice)."""
    check = run.check.strip()
    head, colon, rest = check.partition(":")
    if colon and head.strip().lower() in (run.status_text.lower(), run.status.lower(), "passed", "failed", "cancelled"):
        check = rest.strip()
    return f"status: {run.status_text}" + (f" — {check}" if check and check.lower() != run.status_text.lower() else "")


def run_tip(run: MeasuredRun, binary: bool) -> str:
    """Hover text of a run: what ran, where, its median and spread, achieved rates, bound, check, flag."""
    lines = [
        f"{run.operation_name}: {run.declaration_text}",
        f"{run.backend} {run.mode} on {run.run.where}".strip(),
        status_line(run),
    ]
    if run.stats is not None:
        s = run.stats
        lines.append(
            f"median {format_time(s.median_s)} (p10 {format_time(s.p10_s)}, p90 {format_time(s.p90_s)}), {s.count} samples"
        )
    if run.achieved_byte_per_s is not None:
        lines.append(f"{format_bandwidth(run.achieved_byte_per_s, binary)} compulsory bytes over the median")
    if run.achieved_flop_per_s is not None:
        lines.append(f"{format_flop_rate(run.achieved_flop_per_s)} logical FLOP over the median")
    if run.intensity is not None:
        lines.append(f"intensity {format_intensity(run.intensity)}")
    if run.fraction_of_bound is not None:
        lines.append(f"{format_percent(100 * run.fraction_of_bound)} of the bound ({format_time(run.bound_time_s or 0.0)} on {run.device_name})")
    if run.device_note:
        lines.append(run.device_note)
    if run.missed:
        lines.append(f"short of the bound: {run.missed}")
    if run.impossible is not None:
        lines.append(run.impossible.as_text())
    return "\n".join(lines)


def device_tip(run: MeasuredRun) -> str:
    """Where the run ran, as stated, and which catalogue entry its bound uses."""
    p = run.run.provenance
    lines = [f"ran on {p.label}" + (f" (stated by {p.stated_by})" if p.stated_by else "")]
    details = [f"{label} {value}" for label, value in (
        ("UUID", p.uuid), ("PCI", p.pci_bus_id), ("driver", p.driver_version), ("CUDA", p.cuda_version),
        ("compute capability", p.compute_capability)) if value]
    if details:
        lines.append(", ".join(details))
    if run.device is not None:
        lines.append(f"bound on {run.device.name}" + (f" (matched by {p.matched_by})" if p.matched_by else ""))
    lines.append(run.device_note or ("the device the session shows" if run.on_session_device else ""))
    return "\n".join(line for line in lines if line)


def _short(name: str) -> str:
    return name.split(" (")[0]


def mark_style(run: MeasuredRun) -> tuple[str, str]:
    """How a run is drawn and the label beside it: impossible, not valid, another device's, or a valid result."""
    if not run.valid:
        return NOT_VALID, {"unchecked": "not checked"}.get(run.status, "invalid")
    if run.impossible is not None:
        return IMPOSSIBLE, f"impossible ({_short(run.device_name)})"
    if run.device_note and not run.on_session_device:
        return OTHER_DEVICE, _short(run.device_name)
    return VALID, ""


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
        # A session of thousands of runs: drawn once into a pixmap and copied on each repaint (Qt's device-coordinate
        # cache), not painted point by point whenever a label or an edited operation's point near them is.
        for item in (self.scatter, self.bars):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
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
        labelled = labelled_marks(marks) if with_labels else []
        while len(self.labels) < len(labelled):
            label = pg.TextItem(anchor=(0, 0.5), color=self.colour)
            label.setZValue(self.scatter.zValue())
            self.plot.addItem(label)
            self.labels.append(label)
        for index, label in enumerate(self.labels):
            if label.isVisible() != (index < len(labelled)):
                label.setVisible(index < len(labelled))
            if index < len(labelled):
                mark = labelled[index]
                if label.toPlainText() != mark.label:
                    label.setText(mark.label)
                label.setPos(mark.x + 0.06, mark.y)


def labelled_marks(marks: Sequence[MeasuredMark]) -> list[MeasuredMark]:
    """The marks that carry their label: the first of those with the same label at the same x (the runs of one
    declaration on one device, or one size of a sweep). A session's thousands of runs of a few declarations
    otherwise stacked as many copies of one text beside one column of marks, each painted on every repaint."""
    seen: set[tuple[str, float]] = set()
    chosen = []
    for mark in marks:
        key = (mark.label, mark.x)
        if mark.label and key not in seen:
            seen.add(key)
            chosen.append(mark)
    return chosen


class _MeasuredLayer:
    """Valid, not-valid, other-device and impossible marks with hover text and legend rows (both plots)."""

    legend_valid = MEASURED_LEGEND

    def __init__(self, plot: pg.PlotItem, document: Document, legend: LegendStrip | None = None) -> None:
        self.plot = plot
        self.document = document
        self.legend = legend  # a legend beside the plot; without one, the rows go into the plot's own legend
        self.valid_items = _MarkItems(plot, MEASURED_COLOUR, True, "s", 5)
        self.not_valid_items = _MarkItems(plot, NOT_VALID_COLOUR, False, "s", 4.5)
        self.other_items = _MarkItems(plot, OTHER_DEVICE_COLOUR, False, "d", 4.8)
        self.impossible_items = _MarkItems(plot, IMPOSSIBLE_COLOUR, True, "x", 5.2)
        self.marks: list[MeasuredMark] = []
        self._by_run: dict[int, MeasuredMark] = {}
        self._legend_rows: dict[str, str] = {}  # kind of mark (VALID, …) → its legend text now
        for items in self._all_items():
            items.scatter.sigHovered.connect(self._hovered)

    def _all_items(self) -> tuple[_MarkItems, ...]:
        return (self.valid_items, self.not_valid_items, self.other_items, self.impossible_items)

    def label_items(self) -> tuple[_MarkItems, ...]:
        """The kinds of mark that carry labels (the roofline keeps its own labels off them)."""
        return (self.not_valid_items, self.other_items, self.impossible_items)

    def show(self, marks: Sequence[MeasuredMark], beam: float = 0.0) -> None:
        self.marks = list(marks)
        self._by_run = {mark.run_index: mark for mark in self.marks}
        by_style = {style: [m for m in self.marks if m.style == style] for style in (VALID, NOT_VALID, OTHER_DEVICE, IMPOSSIBLE)}
        self.valid_items.show(by_style[VALID], beam, with_labels=False)
        self.not_valid_items.show(by_style[NOT_VALID], beam, with_labels=True)
        self.other_items.show(by_style[OTHER_DEVICE], beam, with_labels=True)
        self.impossible_items.show(by_style[IMPOSSIBLE], beam, with_labels=True)
        others = sorted({m.device for m in by_style[OTHER_DEVICE]})
        other_legend = f"run on {', '.join(others)}: not against these roofs" if others else ""
        self._legend(VALID, self.valid_items.scatter, self.legend_valid if by_style[VALID] else "")
        self._legend(NOT_VALID, self.not_valid_items.scatter, NOT_VALID_LEGEND if by_style[NOT_VALID] else "")
        self._legend(OTHER_DEVICE, self.other_items.scatter, other_legend)
        self._legend(IMPOSSIBLE, self.impossible_items.scatter, IMPOSSIBLE_LEGEND if by_style[IMPOSSIBLE] else "")

    def _legend(self, kind: str, item: pg.ScatterPlotItem, text: str) -> None:
        """Show `item`, the scatter of the marks of `kind`, in the legend under `text` ('' removes its row)."""
        if self._legend_rows.get(kind, "") == text:
            return
        if self.legend is not None:
            self.legend.set_entry(f"measured {kind}", item, text)
            self._legend_rows[kind] = text
            return
        legend = self.plot.addLegend(offset=(12, 10))  # the plot's one legend (created by whoever asks first)
        if self._legend_rows.get(kind):
            legend.removeItem(item)
        if text:
            legend.setBrush(pg.mkBrush(255, 255, 255, 220))
            legend.addItem(item, html_text(text))  # pyqtgraph's legend rows are HTML; a run's device is outside text
        self._legend_rows[kind] = text

    def tip(self, run_index: Any) -> str:
        if not isinstance(run_index, (int, np.integer)):
            return ""
        mark = self._by_run.get(int(run_index))
        return mark.tip if mark is not None else ""

    def _hovered(self, item: Any, points: Any, event: Any) -> None:
        # On the scatter itself, so it never clears the operations' or the kernels' hover text.
        item.setToolTip(tooltip("\n\n".join(self.tip(point.data()) for point in list(points)[:3])))


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
            style, label = mark_style(run)
            marks.append(
                MeasuredMark(
                    x=math.log10(run.intensity),
                    y=math.log10(rate),
                    low=math.log10(slow),
                    high=math.log10(fast),
                    valid=run.valid,
                    label=label,
                    run=run,
                    run_index=run.index,
                    style=style,
                    device=_short(run.device_name),
                    binary=binary,
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
            size = swept_size(run.declaration, declaration, fields)
            if size is None or run.stats is None or run.status == CANCELLED or run.stats.p10_s <= 0:
                continue
            s = run.stats
            style, label = mark_style(run)
            marks.append(
                MeasuredMark(
                    x=math.log2(size),
                    y=math.log10(s.median_s),
                    low=math.log10(s.p10_s),
                    high=math.log10(s.p90_s),
                    valid=run.valid,
                    label=label,
                    run=run,
                    run_index=run.index,
                    style=style,
                    device=_short(run.device_name),
                    binary=binary,
                )
            )
        return marks
