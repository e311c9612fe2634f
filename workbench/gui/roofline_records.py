"""The roofline view's constants and the records its parts share: what a full refresh drew (`_Drawn`), an
operation's points (`_PointFacts`), a label layout (`PlacedLabels`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from workbench.model.analysis import Analysis
from workbench.model.devices import Device
from workbench.model.devices.interfaces import HOST
from workbench.scenes.label_layout import Box, LabelLayout, PointLabel, RoofLabel, Segment, layout_faults
from workbench.scenes.roofline import (
    LevelPoint,
    Position,
    Roof,
    RoofLevel,
    level_positions,
    lowered_roof,
    operation_levels,
)
from workbench.scenes.plot_style import pen_colour
from workbench.scenes.roofline_marks import Extent
from workbench.documents.session import OperationEntry

LOWERED_COLOUR = pen_colour("lowered")  # an operation's own roof below the memory's: loads in flight (Little's law)
LOWERED_PEN = pg.mkPen(LOWERED_COLOUR, width=1.5, style=Qt.PenStyle.DashLine)
LEADER_PEN = pg.mkPen(pen_colour("leader"), width=0)  # a label's leader to its point: a grey hairline at any zoom


@dataclass(frozen=True)
class PlacedLabels:
    """The roofline's last label layout with what it was laid out against (pixels of the view box)."""

    layout: LabelLayout
    width: float
    height: float
    roofs: tuple[Segment, ...]
    marks: tuple[Box, ...]
    roof_labels: tuple[RoofLabel, ...] = ()
    point_labels: tuple[PointLabel, ...] = ()

    def faults(self) -> list[str]:
        return layout_faults(self.layout, self.width, self.height, self.roofs, self.marks, self.roof_labels)



@dataclass
class _Drawn:
    """What the last full refresh drew the operations from, kept so that an edit of one operation moves its points
    alone (`RooflineView._patch_edit`): what the drawing depended on (device, selection, list, levels, pins) and
    the placed operations with their positions in arrays (index: the operation's place among those drawn)."""

    device: Device
    current: int
    operations: list[OperationEntry]
    count: int
    entries: list[int]  # id of each operation drawn, in order (a rename must leave them as they are)
    hidden: frozenset[str]
    pins: tuple[int, ...]
    binary: bool
    placed: list[tuple[int, Analysis, bool]]  # row, analysis, stale
    facts: list["_PointFacts"]
    index_of_row: dict[int, int]
    shown_keys: frozenset[str]
    further: list[RoofLevel]
    hbm_shown: bool
    roofs: list["Roof"]
    ridges: list[float]
    xs: np.ndarray  # each operation's labelled point (log intensity, log rate)
    ys: np.ndarray
    extra: list[tuple[int, bool, LevelPoint, Position]]  # row, stale, a point at a further level, where
    spans: list[tuple[int, int]]  # each operation's first point in `extra` and how many it has there
    extra_xs: np.ndarray
    times: np.ndarray  # each operation's bound time (its share of the session's decides its label)
    pin_indices: list[int]
    others: Extent  # the least and greatest log intensity and log rate of the kernels' and runs' marks
    lowered: bool  # some operation has a lowered roof (drawn from every point's place: not patched)
    spots: list[dict[str, Any]] = field(default_factory=list)  # the operations' marks as given to the scatter


class _PointFacts:
    """An operation's points on the roofline, from its analysis alone: at every interface it has a term for, whether
    it moves bytes over the host link, and (for the interfaces shown) the point that carries its label and the
    points drawn beside it."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.levels = operation_levels(analysis)
        self.uses_host = any(term.name == HOST for term in analysis.terms)
        self.lowered = lowered_roof(analysis)  # its own roof below the memory's, or None (most operations)
        self._shown: tuple[frozenset[str], Position | None, tuple[tuple[LevelPoint, Position], ...]] | None = None

    def points(self, shown_keys: frozenset[str]) -> tuple[Position | None, tuple[tuple[LevelPoint, Position], ...]]:
        """Where the labelled point sits (log intensity, log rate; at HBM, or with HBM switched off at the first
        interface shown; None if no interface shown has a rate) and the operation's points at the further ones,
        each with where it sits."""
        if self._shown is None or self._shown[0] != shown_keys:
            self._shown = (shown_keys, *level_positions(self.levels, shown_keys))
        return self._shown[1], self._shown[2]


def _roof_text(item: pg.TextItem) -> pg.TextItem:
    """A roof label drawn above the roof lines, so one written on its roof hides the line under its text."""
    item.setZValue(5)
    return item
