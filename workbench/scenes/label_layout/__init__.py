"""Where plot labels go: off the roofs, off every point, off each other, at any text size.

Pure geometry in a plot's pixels (x to the right, y down), no Qt: the
roofline view measures its label texts, hands their sizes, the roofs (as line
segments) and the marks (as boxes) to `layout_labels`, and draws what comes
back. A label that had to move away from its point gets a leader line to it.

Rules, in order of placement:

1. Roof labels stay with their own roof. First choice: just above or below
   it, at the first free place from the right end of the visible roof
   leftwards (the memory roof's from its left end rightwards). Second: written
   on the roof itself (a horizontal roof only; the view breaks the line under
   the text), again at any free place along it. Then the same with the
   label's shorter text, if it has one. Last: stepped off the roof in whole
   text lines, with a leader, never further than `ROOF_REACH_LINES` text
   lines from it. A roof label with no such place is left unplaced rather
   than drawn far from its roof (the view lists it in the legend).
2. Operation labels take the first free place around their point, nearest
   first (eight directions, widening rings), then the nearest free place
   anywhere in the view, with a leader line.
   Leader lines count too: each crossing of another leader, each label or
   other point a leader runs through, and each earlier leader running
   through the label costs `TANGLE_COST` pixels of leader length; a crowded
   label takes the free place (around its point, or among the
   `ANYWHERE_CHOICES` nearest anywhere) with the least cost; once all are
   placed, each label still tangled is placed once more among all the
   others (an early label cannot know the later leaders). With points
   packed along a roof, "which label is whose" must not need crossing
   leaders untangled by eye. (Beyond `UNTANGLED_LABELS` operation labels,
   each takes the first free place: weighing leaders would cost an edit
   its frame.)

Which points get a label at all (`labelled_points`): every one up to `EVERY_LABEL_UP_TO`; beyond that (a traced
model's thousands of operations) the selected one, the user's pins and the largest by share of time,
`FEW_LABELS` in all besides the pins. So a layout places a bounded number of labels, whatever the points.

A place is free when the box lies inside the view, covers no mark, overlaps
no label already placed (with `PADDING` of air) and no roof segment passes
through it (except, for a label written on its roof, that roof). A label with
no free place anywhere is left unplaced (`box` None): the view lists it in
the legend rather than draw it over something. `layout_faults` checks a
finished layout against the same rules; tests use it.

Two leaders that cross count `CROSSING_WEIGHT` tangles, and two labels whose
leaders still cross once all are placed trade places when that tangles less.
A label does not go further than `LEADER_REACH` of the view's diagonal from its
point to spare a tangle. Roofs a leader crosses are named by `leader_tangles`
but not weighed (`ROOF_WEIGHT`, measured).

Speed: a label's places (beside its roof, around its point, anywhere in the
view) are checked and weighed in bulk with NumPy: boxes against the marks and
labels near them, segments against boxes and against segments, as tables; the
search of the whole view goes nearest first in growing batches; a grid of cells
indexes the view for the one-place check only (built when first asked); with many marks (beyond
`RASTER_FROM`) a raster of them in cells of `RASTER_CELL` pixels, summed, answers whether a box covers one in
constant time (`_MarkRaster`, exact), so a layout costs the labels' places times a constant, plus one pass over the
marks; `MarkGrid` indexes marks by cell for the view's own questions (which marks a legend corner or the ridge
label would cover) and follows a mark that moves; and a layout asked for again with the same inputs (an edit
undone, a repaint) comes from a small cache.

One module per job: `labels` (the labels, the layout given back and the rules' constants), `marks` (which points
get a label; the marks' boxes), `geometry` (boxes and segments), `room` (what one layout's view holds, indexed),
`places` (where a label may go and which place it takes), `layout` (laying out, held layouts, the ridge label) and
`faults` (checking a layout). The names callers use are re-exported here.
"""

from workbench.scenes.label_layout.faults import layout_faults, leader_tangles
from workbench.scenes.label_layout.geometry import (
    box_to_segment_distance,
    boxes_overlap,
    clip_to_view,
    inside,
    leader_segment,
    nearest_on_box,
    roof_reach,
    segment_crosses_box,
    segments_cross,
)
from workbench.scenes.label_layout.labels import (
    ANYWHERE_CHOICES,
    CACHE_SIZE,
    CELL,
    CROSSING_WEIGHT,
    EVERY_LABEL_UP_TO,
    FEW_LABELS,
    FIRST_RING,
    GAP,
    LEADER_AIR,
    LEADER_REACH,
    LEADER_START,
    PADDING,
    POINT_GAP,
    RASTER_CELL,
    RASTER_FROM,
    RINGS,
    ROOF_REACH_LINES,
    ROOF_STEP,
    ROOF_WEIGHT,
    TANGLE_COST,
    UNTANGLED_LABELS,
    Box,
    LabelLayout,
    Placement,
    PointLabel,
    RoofLabel,
    Segment,
)
from workbench.scenes.label_layout.layout import (
    PixelView,
    clear_layout_cache,
    held_layout,
    layout_labels,
    ridge_at_foot,
    ridge_up_the_line,
)
from workbench.scenes.label_layout.marks import MarkGrid, PointMarks, labelled_points
from workbench.scenes.label_layout.places import _boxes_to_segment_distance, _leaders_to
from workbench.scenes.label_layout.room import _MarkRaster, _Room, _segments_cross_boxes, _segments_cross_many


__all__ = [
    "ANYWHERE_CHOICES",
    "Box",
    "CACHE_SIZE",
    "CELL",
    "CROSSING_WEIGHT",
    "EVERY_LABEL_UP_TO",
    "FEW_LABELS",
    "FIRST_RING",
    "GAP",
    "LEADER_AIR",
    "LEADER_REACH",
    "LEADER_START",
    "LabelLayout",
    "MarkGrid",
    "PADDING",
    "POINT_GAP",
    "PixelView",
    "Placement",
    "PointLabel",
    "PointMarks",
    "RASTER_CELL",
    "RASTER_FROM",
    "RINGS",
    "ROOF_REACH_LINES",
    "ROOF_STEP",
    "ROOF_WEIGHT",
    "RoofLabel",
    "Segment",
    "TANGLE_COST",
    "UNTANGLED_LABELS",
    "_MarkRaster",
    "_Room",
    "_boxes_to_segment_distance",
    "_leaders_to",
    "_segments_cross_boxes",
    "_segments_cross_many",
    "box_to_segment_distance",
    "boxes_overlap",
    "clip_to_view",
    "clear_layout_cache",
    "held_layout",
    "inside",
    "labelled_points",
    "layout_faults",
    "layout_labels",
    "leader_segment",
    "leader_tangles",
    "nearest_on_box",
    "ridge_at_foot",
    "ridge_up_the_line",
    "roof_reach",
    "segment_crosses_box",
    "segments_cross",
]
