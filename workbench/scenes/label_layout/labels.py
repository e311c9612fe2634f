"""The labels a layout places and what it gives back, and the constants of its rules (pixels, counts,
weights); the package's docstring says what each rule is."""

from __future__ import annotations

from dataclasses import dataclass, field

Box = tuple[float, float, float, float]  # left, top, right, bottom
Segment = tuple[float, float, float, float]  # x0, y0, x1, y1

PADDING = 2.0  # pixels of air kept between two labels
GAP = 4.0  # pixels between a roof and its label
POINT_GAP = 9.0  # pixels between a point's centre and its own label
ROOF_STEP = 24.0  # pixels between places tried along a roof
RINGS = 6  # rings of places tried around a point before searching the whole view
FIRST_RING = 8  # places in the first ring (`_around_point`: right, the diagonals, left, above, below): no leader
ROOF_REACH_LINES = 2  # a roof label stepped off its roof goes at most this many text lines away
CELL = 40.0  # pixels per side of the grid cells that index what is already in the view
CACHE_SIZE = 8  # layouts remembered by their inputs
EVERY_LABEL_UP_TO = 20  # a plot of this many operations or fewer labels every one (as room allows)
FEW_LABELS = 10  # beyond that: the selected operation and the largest by share of time, this many in all, pins besides
RASTER_CELL = 4.0  # pixels per side of the cells of that raster
RASTER_FROM = 64  # marks beyond which a box is checked against them through a raster (`_MarkRaster`), not one by one
TANGLE_COST = 300.0  # pixels of leader line worth one tangle: a label goes this much further to avoid one
ANYWHERE_CHOICES = 48  # free places anywhere in the view (nearest first) weighed for a label that has none clean near
# Weighing leaders costs several times the plain search when many labels crowd (20 packed labels: about 6×, some
# 100 ms, on every edit that moves a point); beyond this many operation labels they take the first free place.
UNTANGLED_LABELS = 12
CROSSING_WEIGHT = 3  # two leaders crossing count as this many tangles: which label is whose must read at a glance
# A leader crossing a roof (away from its point) counts as this many tangles. Measured on the recorded window
# layouts (benchmarks/label_layout_inputs.json): every weight from 0.01 to 1 removed no roof crossing there (the
# places within reach all lie beyond the same packed compute roofs, the bands between them taken by roof labels)
# and traded them for leaders through labels, or (from 0.5) two crossing leaders at presentation size. So roofs
# crossed are reported (`leader_tangles`, the tests bound them) but not weighed.
ROOF_WEIGHT = 0.0
LEADER_REACH = 0.25  # of the view's diagonal: how far a label goes from its point to spare its leader a tangle
# Pixels around a label within which a leader counts as running through it; negative: only a leader half a pixel
# inside it counts (as for every other "through" test here). 2 px of air (a leader grazing a label's end reads as
# pointing at it) was measured on the recorded window layouts: it freed the small normal-size batched-GEMM layout of
# two leaders through labels, but at presentation size it sent two leaders through the "FP64 TC / FP32" roof label
# rather than one; so no air is kept.
LEADER_AIR = -0.5
LEADER_START = 4.0  # pixels of a leader at its point where crossing a roof does not count (a point drawn on its roof)


@dataclass(frozen=True)
class RoofLabel:
    """A label that belongs to a roof (the segment, in pixels)."""

    key: str
    width: float
    height: float
    roof: Segment
    from_left: bool = False  # try places from the roof's left end (the memory roof) rather than its right
    short_width: float | None = None  # the width of a shorter text for the same roof, tried where the full one fits nowhere near


@dataclass(frozen=True)
class PointLabel:
    """A label that belongs to a point (its centre in pixels)."""

    key: str
    width: float
    height: float
    x: float
    y: float


@dataclass(frozen=True)
class Placement:
    """Where one label went: its box (None when no place was free), the point a leader line runs to, and the
    roof it is written on (a roof label placed over its own horizontal roof; the view breaks the line there)."""

    key: str
    box: Box | None
    leader_to: tuple[float, float] | None = None
    on_roof: Segment | None = None
    short: bool = False  # a roof label placed with its shorter text


@dataclass
class LabelLayout:
    """Every label's placement, in the order asked."""

    placements: list[Placement] = field(default_factory=list)

    def placement(self, key: str) -> Placement | None:
        return next((p for p in self.placements if p.key == key), None)

    @property
    def unplaced(self) -> list[str]:
        return [p.key for p in self.placements if p.box is None]

    @property
    def boxes(self) -> list[Box]:
        return [p.box for p in self.placements if p.box is not None]
