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

from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from workbench.model.declare import Declaration
from workbench.gui.document import Document
from workbench.gui.legend_strip import LegendStrip
from workbench.gui.measure_runs import MeasuredRun, document_runs
from workbench.gui.plain_text import html_text, tooltip
from workbench.measure.run_marks import (
    IMPOSSIBLE,
    MEASURED_LEGEND,
    NOT_VALID,
    OTHER_DEVICE,
    STYLES,
    SWEEP_LEGEND,
    VALID,
    RunMark,
    labelled_marks,
    roofline_run_marks,
    run_legend,
    sweep_run_marks,
)
from workbench.model.units import format_bandwidth, format_flop_rate, format_intensity, format_percent, format_time
from workbench.scenes.plot_style import COLOURS, MARKS, hex_colour

# the kinds of run and how each is drawn are the core's (measure/run_marks.py, scenes/plot_style.py): the report's
# roofline draws them alike
MEASURED_COLOUR = hex_colour(COLOURS["measured"])  # green, as the device panel's "measured" source
NOT_VALID_COLOUR = hex_colour(COLOURS["not valid"])
OTHER_DEVICE_COLOUR = hex_colour(COLOURS["other device"])  # a run on another device than the one whose roofs are drawn
IMPOSSIBLE_COLOUR = hex_colour(COLOURS["impossible"])
PG_SYMBOLS = {"square": "s", "diamond": "d", "x": "x", "star": "star"}  # the scenes' symbols in pyqtgraph's


class MeasuredMark(RunMark):
    """A run's mark (`measure.run_marks.RunMark`: where it goes, its bar, kind and label) with its hover text."""

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


class _MarkItems:
    """A scatter, its spread bars and a pool of labels, for one kind of mark (valid or not)."""

    def __init__(self, plot: pg.PlotItem, style: str, z: float) -> None:
        mark = MARKS[f"run {style}"]  # the scenes' look of this kind of run (the report's roofline draws it too)
        self.plot = plot
        self.colour = colour = hex_colour(COLOURS[mark.edge])
        self.scatter = pg.ScatterPlotItem(
            symbol=PG_SYMBOLS[mark.symbol],
            size=mark.size,
            pen=pg.mkPen(colour, width=1.8),
            brush=pg.mkBrush(hex_colour(COLOURS[mark.fill])) if mark.fill else pg.mkBrush(255, 255, 255, 230),
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


class _MeasuredLayer:
    """Valid, not-valid, other-device and impossible marks with hover text and legend rows (both plots)."""

    legend_valid = MEASURED_LEGEND

    def __init__(self, plot: pg.PlotItem, document: Document, legend: LegendStrip | None = None) -> None:
        self.plot = plot
        self.document = document
        self.legend = legend  # a legend beside the plot; without one, the rows go into the plot's own legend
        self.valid_items = _MarkItems(plot, VALID, 5)
        self.not_valid_items = _MarkItems(plot, NOT_VALID, 4.5)
        self.other_items = _MarkItems(plot, OTHER_DEVICE, 4.8)
        self.impossible_items = _MarkItems(plot, IMPOSSIBLE, 5.2)
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
        by_style: dict[str, list[MeasuredMark]] = {style: [] for style in STYLES}
        for mark in self.marks:
            by_style[mark.style].append(mark)
        self.valid_items.show(by_style[VALID], beam, with_labels=False)
        self.not_valid_items.show(by_style[NOT_VALID], beam, with_labels=True)
        self.other_items.show(by_style[OTHER_DEVICE], beam, with_labels=True)
        self.impossible_items.show(by_style[IMPOSSIBLE], beam, with_labels=True)
        texts = run_legend(self.marks, self.legend_valid)
        for style, items in zip(STYLES, self._all_items()):
            self._legend(style, items.scatter, texts[style])

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
        """Where each run goes (`measure.run_marks.roofline_run_marks`, the report's roofline's function too)."""
        return roofline_run_marks(document_runs(self.document), self.document.binary, MeasuredMark)


class MeasuredSweepLayer(_MeasuredLayer):
    """Runs of the selected operation at other sizes on the bound-vs-size plot: median time, p10–p90 bar."""

    legend_valid = SWEEP_LEGEND

    def compute(self, declaration: Declaration, fields: Sequence[str]) -> list[MeasuredMark]:
        """Runs whose declaration differs from `declaration` only in the swept `fields` (`sweep_run_marks`)."""
        return sweep_run_marks(document_runs(self.document), declaration, fields, self.document.binary, MeasuredMark)
