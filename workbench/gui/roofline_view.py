"""The roofline view: the current device's roofs with every declared operation on it.

Log-log: log10 of arithmetic intensity against log10 of attainable rate. The
memory roof rises to the highest compute roof; one compute roof per rate in
use, datasheet figures dashed and measured ones solid; the selected
operation's path and ridge point in red. Imported profiler kernels and
measured runs are drawn by their own layers (`profile_view`, `measure_plots`).
Labels are laid out by `workbench.label_layout` so none covers a point, a roof
or another label.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont, QFontMetricsF, QMouseEvent
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from workbench.analysis import Analysis
from workbench.devices import BANDWIDTH, Device, Rate
from workbench.devices.interfaces import HOST, interface
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.measure_plots import MeasuredRooflineLayer
from workbench.gui.plot_common import (
    GHOST_COLOUR,
    LEVEL_COLOURS,
    LEVEL_MARKS,
    MEMORY_COLOUR,
    POINT_COLOUR,
    ROOF_COLOUR,
    SELECTED_COLOUR,
    STALE_COLOUR,
    LogAxis,
    point_brush,
    point_pen,
    box_around,
    with_font,
    intensity_tick,
    is_assumed,
    log_plot_widget,
    ItemPool,
    PlotLabel,
    SegmentItem,
    scene_box,
    apply_plot_font,
    legend_points,
    si_tick,
    tight_text,
    roof_pen,
)
from workbench.gui.plot_marks import MarkSet
from workbench.gui.profile_layer import ProfiledKernelLayer
from workbench.gui.roofline_levels import RoofLevels
from workbench.gui.plain_text import html_text, tooltip
from workbench.label_layout import (
    Box,
    labelled_points,
    LabelLayout,
    MarkGrid,
    PixelView,
    Placement,
    PointLabel,
    PointMarks,
    RoofLabel,
    ridge_at_foot,
    ridge_up_the_line,
    Segment,
    boxes_overlap,
    layout_faults,
    held_layout,
    layout_labels,
    leader_segment,
    nearest_on_box,
)
from workbench.legend_corner import CORNERS, MARGIN as LEGEND_MARGIN, Corner, Trial, choose_corner, corner_box, faults, mark_rows, try_corners
from workbench.legend_corner import list_unplaced as place_in_legend
from workbench.roofline import (
    LEVEL_KEYS,
    LevelPoint,
    RoofLevel,
    device_levels,
    level_title,
    lowered_roof,
    operation_levels,
    roof_names,
)
from workbench.session import OperationEntry
from workbench.units import format_bandwidth, format_flop_rate, format_intensity, format_time

FIT_SHORTCUT = "Ctrl+Shift+F"  # View ▸ Fit plot to data (Ctrl+0 is the normal text size)
HELD_TEXT = f"View held — {FIT_SHORTCUT} fits"
ROOF_REACH = 8.0  # decades the roofs run past the fitted range, so a panned view still shows them
TIDY_AFTER_MS = 700  # after the last edit that held labels in place, they are laid out afresh (typing has paused)
ROOF_LABEL_ROOM = 1.0  # decades the fitted range may grow to its right for the roof labels (_room_for_roof_labels)
# Pixel radius of each kind of mark that labels keep clear of (marker half-size plus a little air).
OPERATION_RADIUS = 8.0
KERNEL_RADIUS = 10.0
MEASURED_RADIUS = 7.5
RIDGE_RADIUS = 6.5
LOWERED_COLOUR = "#e65100"  # an operation's own roof below the memory's: loads in flight (Little's law)
LOWERED_PEN = pg.mkPen(LOWERED_COLOUR, width=1.5, style=Qt.PenStyle.DashLine)
LEADER_PEN = pg.mkPen("#757575", width=0)  # a label's leader to its point: a grey hairline at any zoom
LEGEND_ROW_EXTRA = 40.0  # pixels of a legend row besides its text: the sample, the spacing and the frame's air
LABELS_ALL, LABELS_SELECTED, LABELS_NONE = "all", "selected", "none"  # View ▸ Labels
LABEL_MODES = (LABELS_ALL, LABELS_SELECTED, LABELS_NONE)


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
class _Laid:
    """One layout of the roofline's labels with what it was made of: the roofs and marks in pixels, the labels
    laid out and their items (in the layout's order), and `near(boxes)`, the marks any of those boxes overlaps."""

    layout: LabelLayout
    roofs: list[Segment]
    marks: list[Box]
    roof_labels: list[RoofLabel]
    point_labels: list[PointLabel]
    roof_items: list[pg.TextItem]
    point_items: list[pg.TextItem]
    near: Callable[[Sequence[Box]], list[Box]]


@dataclass(frozen=True)
class Roof:
    """One horizontal compute roof: the paths sharing one rate in use."""

    paths: tuple[str, ...]
    rate: Rate
    datasheet: Rate | None  # the datasheet figure beneath an override, drawn faintly


Position = tuple[float, float]  # (log intensity, log rate) on the roofline


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
    others_x: tuple[float, float]  # the least and greatest log intensity of the kernels' and runs' marks
    others_y: float  # and the least log rate
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
            drawn = [p for p in self.levels if p.key in shown_keys and p.rate is not None and p.rate > 0]
            at = [(p, (math.log10(p.intensity), math.log10(p.rate or 1.0))) for p in drawn]
            primary = next((i for i, p in enumerate(drawn) if p.key == BANDWIDTH), 0 if drawn else None)
            position = at[primary][1] if primary is not None else None
            self._shown = (shown_keys, position, tuple(pair for i, pair in enumerate(at) if i != primary))
        return self._shown[1], self._shown[2]


def device_roofs(device: Device) -> list[Roof]:
    """The compute roofs of a device, paths with the same rate and source merged, highest first."""
    groups: dict[tuple[float, str], list[str]] = {}
    for path in device.paths():
        rate = device.overrides.get(path) or device.peak[path]
        groups.setdefault((rate.value, rate.source), []).append(path)
    roofs = []
    for (_, _), paths in groups.items():
        rate = device.overrides.get(paths[0]) or device.peak[paths[0]]
        under = device.peak.get(paths[0]) if paths[0] in device.overrides else None
        roofs.append(Roof(tuple(paths), rate, under))
    return sorted(roofs, key=lambda roof: -roof.rate.value)



class RooflineView(RoofLevels, RefreshWhenShown, QWidget):
    """Log-log roofline of the current device with every declared operation on it."""

    redraw_off_screen_windows = True  # exports render a roofline in a window never shown
    levels_changed = Signal(list)  # the interface keys switched off, after a toggle (the window saves them)

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.widget = log_plot_widget(
            LogAxis("bottom", intensity_tick), LogAxis("left", si_tick("FLOP/s"))
        )
        self.widget.setObjectName("rooflinePlot")
        self.plot: pg.PlotItem = self.widget.getPlotItem()
        self._axis_memory = "HBM"
        self._axis_hierarchical = False  # further interface roofs shown: the axis counts bytes per interface
        self._axis_title = ""
        self._fit_axis_title()
        self._roofs_shown: tuple[Any, ...] | None = None  # what the roof items show now (see refresh)
        self.plot.setLabel("left", "Attainable rate (FLOP/s)")

        self.memory_line = SegmentItem(cached=True)
        self.memory_ghost = SegmentItem(cached=True)
        self.memory_label = _roof_text(tight_text(PlotLabel(anchor=(0, 1), color=MEMORY_COLOUR)))
        self.memory_label.setRotation(0)
        # the ridge's vertical: a segment reaching as far past the fitted range as the roofs do (see refresh)
        self.ridge_line = SegmentItem(pg.mkPen("#9e9e9e", width=1, style=Qt.PenStyle.DotLine))
        # marks above the lines and labels at z 0, below the roofs (z 1 and 2): operations over their further levels
        self.ridge_marker = MarkSet(self.plot, symbol="d", size=9, pen=pg.mkPen(SELECTED_COLOUR), brush=pg.mkBrush("w"), z=0.01)
        self.ridge_label = tight_text(PlotLabel(anchor=(0, 1), color="#424242"))
        # Hover text is set from the signal, so it can name the operation from the document.
        self.points = MarkSet(self.plot, hover_size=14, z=0.03, on_hover=self._hovered)
        self.message = pg.TextItem(anchor=(0.5, 0.5), color="#424242")
        for item in (self.memory_ghost, self.memory_line, self.ridge_line, self.memory_label, self.ridge_label):
            self.plot.addItem(item)
        self.roof_lines = ItemPool(self.plot, lambda: SegmentItem(cached=True))
        self.ghost_lines = ItemPool(self.plot, lambda: SegmentItem(cached=True))
        self.roof_labels = ItemPool(self.plot, lambda: _roof_text(tight_text(PlotLabel(anchor=(1, 0)))))
        self.point_labels = ItemPool(self.plot, lambda: tight_text(PlotLabel(anchor=(0, 0), color="#212121")))
        self.leader_lines = ItemPool(self.plot, lambda: SegmentItem(LEADER_PEN))
        # the hierarchical roofline: a roof per further interface (L2, shared memory, host) and the
        # operations at each of those interfaces' intensities; the HBM roof and points are the ones above
        self.level_lines = ItemPool(self.plot, lambda: SegmentItem(cached=True))
        self.level_ghosts = ItemPool(self.plot, lambda: SegmentItem(cached=True))
        self.level_labels = ItemPool(self.plot, lambda: tight_text(PlotLabel(anchor=(0, 1))))
        self.level_points = MarkSet(self.plot, hover_size=14, z=0.02, on_hover=self._level_hovered)
        self.level_connector = SegmentItem(pg.mkPen(SELECTED_COLOUR, width=1, style=Qt.PenStyle.DotLine))
        self.plot.addItem(self.level_connector)
        # an operation's own lowered memory roof: the bandwidth its loads in flight allow (Little's law, roofline.py)
        self.lowered_lines = ItemPool(self.plot, lambda: SegmentItem(LOWERED_PEN))
        self.lowered_labels = ItemPool(self.plot, lambda: tight_text(PlotLabel(anchor=(0, 1), color=LOWERED_COLOUR)))
        self._lowered_segments: list[Segment] = []  # those roofs in log coordinates, for the label layout
        # imported ncu kernels at their L2 and L1 / shared-memory intensities (counters), beside their DRAM star
        self.kernel_levels = pg.ScatterPlotItem(symbol="star", hoverable=True, tip=None, hoverSize=17)
        self.kernel_levels.setZValue(4)
        self.kernel_levels.sigHovered.connect(self._kernel_level_hovered)
        self._kernel_level_tips: list[str] = []
        self.plot.addItem(self.kernel_levels)
        self.plot.addItem(self.message)
        # imported profiler kernels: a third kind of point (gui/profile_view.py)
        self.kernels = ProfiledKernelLayer(self.plot, document)
        document.profiles_changed.connect(self.mark_dirty)
        document.settings_changed.connect(self.mark_dirty)  # e.g. the level method, which places the kernels' stars
        # measured runs: achieved FLOP/s over the median, p10–p90 bars (gui/measure_plots.py)
        self.measured = MeasuredRooflineLayer(self.plot, document)
        document.runs_changed.connect(self.mark_dirty)
        self._range: tuple[float, float, float, float] | None = None  # the range the data asks for
        self._held = False  # the user zoomed or panned: edits keep the view until a fit
        self._device_key: str | None = None
        self._roof_heights: list[float] = []
        self._roof_texts: dict[str, tuple[str, str]] = {}  # layout key ("memory", "roof 2") -> full and short text
        self._text_widths: dict[tuple[str, str], float] = {}  # (font, text) -> advance: measured once per font
        self._roof_starts: list[float] = []  # log intensity where each roof begins (its ridge)
        self._point_positions: list[tuple[float, float]] = []
        self._shown_spots: list[tuple[Any, ...]] | None = None  # what the operation scatter holds (setData is skipped when equal)
        self._point_rows: list[int] = []  # the operation each position belongs to
        self._level_cache: dict[int, _PointFacts] = {}  # id(analysis) -> what is drawn of it
        self._drawn: _Drawn | None = None  # what the last full refresh drew (None: nothing to patch)
        self._patch_rows: set[int] | None = None  # operations whose analysis changed since (None: more changed)
        self._labelled: list[int] = []  # indices into the point lists of the operations that carry a label
        self.pinned: list[OperationEntry] = []  # operations whose label the user pinned (View ▸ Labels ▸ Pin)
        self._point_names: list[str] = []
        self._roof_segments: list[Segment] = []  # every roof line in log coordinates, for the label layout
        self._memory_segment: Segment | None = None  # the memory roof (its label lies along it)
        self._levels: list[RoofLevel] = []  # every interface the device has a rate for
        self._hidden_levels: set[str] = set()  # interface keys the user switched off
        self._level_segments: list[Segment] = []  # the further levels' roofs (their labels lie along them)
        self._level_segment_keys: list[str] = []  # the interface of each of those roofs
        self._hbm_segments: list[Segment] = []  # the HBM roof and its ghost
        self._level_marks: list[tuple[float, float]] = []  # the operations' points at further levels
        self._kernel_level_marks: list[tuple[float, float]] = []  # imported kernels at further levels
        self._level_tips: list[tuple[int, LevelPoint]] = []  # what each level point's tooltip names (built on hover)
        self.operation_levels: dict[int, list[LevelPoint]] = {}  # row -> the operation at every interface
        self._label_mode = LABELS_ALL
        self._legend_rows: list[tuple[str, str, str]] = []
        self._legend_samples: list[Any] = []
        self._legend_corner: Corner | None = None  # the corner of the view the legend takes (see _place_legend)
        self._legend_context: tuple[Any, ...] | None = None  # what that corner was chosen for
        self._legend_covering = 0  # how many marks the legend covers there (0 unless every corner covers some)
        # whether the corner chosen afresh in this placing of the labels covered no mark (None: none was chosen)
        self._legend_free: bool | None = None
        self._listed: set[str] = set()  # layout keys whose labels the legend lists for want of room
        self._listed_context: tuple[Any, ...] | None = None  # what `_listed` was found for (view size, font, points)
        self.label_layout: PlacedLabels | None = None  # the last layout, for tests and benchmarks
        # What the last layout was made for (view, range, roofs, labels, mode, font): a layout for the same
        # context keeps the labels whose points did not move where they are (see `layout_labels`' `keep`).
        self._layout_context: tuple[Any, ...] | None = None
        # Labels held while points move (typing) are laid out afresh once the edits pause.
        self._tidy_timer = QTimer(self)
        self._tidy_timer.setSingleShot(True)
        self._tidy_timer.setInterval(TIDY_AFTER_MS)
        self._tidy_timer.timeout.connect(lambda: self._place_labels(fresh=True))
        self._due_labels_timer = QTimer(self)  # labels left by a refresh on being shown (see showEvent)
        self._due_labels_timer.setSingleShot(True)
        self._due_labels_timer.setInterval(0)
        self._due_labels_timer.timeout.connect(self._place_due_labels)
        self._ridge: tuple[float, float] | None = None  # the selected path's ridge point
        view = self.plot.getViewBox()
        view.sigResized.connect(self._refit_label_room)  # first: the labels are then placed in the new range
        view.sigResized.connect(self._place_labels)
        view.sigResized.connect(self._fit_axis_title)
        view.sigRangeChanged.connect(self._place_labels)
        view.sigRangeChangedManually.connect(self._hold_view)
        # pyqtgraph's "A" button (shown while the view is held) and a double-click fit to the data
        self.plot.autoBtn.clicked.disconnect(self.plot.autoBtnClicked)
        self.plot.autoBtn.clicked.connect(self.fit_view)
        self.widget.viewport().installEventFilter(self)  # a double-click on the plot (see eventFilter)
        document.session_replaced.connect(self.fit_view)
        document.session_replaced.connect(self._lay_out_afresh)
        document.session_replaced.connect(lambda: self.pinned.clear())  # pins belong to the session's operations

        caption = QLabel(
            "Dashed roofs: datasheet or derived figures. Solid roofs: measured or entered rates. "
            "The selected operation and its path are red; hover a point for its figures."
        )
        caption.setWordWrap(True)
        caption.setObjectName("rooflineCaption")
        self.caption = caption  # presentation on a short screen hides it (its text then the tab's tooltip)
        self.held_label = QLabel(HELD_TEXT)
        self.held_label.setObjectName("rooflineHeld")
        self.held_label.setToolTip("You zoomed or panned, so edits keep this view. "
                                   f"View ▸ Fit plot to data ({FIT_SHORTCUT}), the A button or a double-click fits again.")
        self.held_label.setStyleSheet("color: #6d4c00; background: #fff3cd; padding: 1px 4px;")
        self.held_label.setVisible(False)  # shown only while the view is held
        # one check box per interface the device has a rate for; the View menu's actions mirror them
        self.level_boxes: dict[str, QCheckBox] = {}
        self.level_actions: dict[str, QAction] = {}
        levels_row = QHBoxLayout()
        levels_row.setContentsMargins(4, 0, 4, 0)
        levels_title = self.levels_title = QLabel("Memory roofs:")  # shown with the boxes (two levels or more)
        levels_title.setObjectName("levelsTitle")
        levels_title.setVisible(False)
        levels_title.setToolTip("One roof per interface the device has a rate for; each operation is drawn "
                                "at its FLOP per byte across that interface (hierarchical roofline)")
        levels_row.addWidget(levels_title)
        for key in LEVEL_KEYS:
            box = QCheckBox(f"{LEVEL_MARKS[key]} {level_title(key)}")  # short: the row must not widen the window
            box.setObjectName(f"level_{key}")
            box.setToolTip(f"{interface(key).name}: its roof, and each operation at its FLOP per byte across it")
            box.setStyleSheet(f"color: {LEVEL_COLOURS[key]};")
            box.setChecked(True)
            box.setVisible(False)
            box.toggled.connect(lambda checked, k=key: self.set_level_shown(k, checked))
            action = QAction(f"{interface(key).name} roof", self)
            action.setCheckable(True)
            action.setChecked(True)
            action.setEnabled(False)
            action.setToolTip(f"Show the {interface(key).name} roof and the operations at its intensity")
            action.toggled.connect(lambda checked, k=key: self.set_level_shown(k, checked))
            levels_row.addWidget(box)
            self.level_boxes[key] = box
            self.level_actions[key] = action
        levels_row.addStretch(1)
        caption_row = QHBoxLayout()
        caption_row.addWidget(caption, 1)
        caption_row.addWidget(self.held_label, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget, 1)
        layout.addLayout(levels_row)
        layout.addLayout(caption_row)

        self._dirty = True
        document.analysis_changed.connect(self._analysis_changed)
        document.selection_changed.connect(lambda *_: RefreshWhenShown.mark_dirty(self))  # restyled: _patch_edit
        document.device_changed.connect(self.mark_dirty)
        document.operations_changed.connect(self._operations_changed)
        self.refresh()

    # ------------------------------------------------------------------ drawing
    def mark_dirty(self, *_: object) -> None:
        """Something besides one operation's analysis changed: the next refresh draws everything."""
        self._patch_rows = None
        RefreshWhenShown.mark_dirty(self)

    def _operations_changed(self) -> None:
        """Operations renamed, added, removed or moved. A keystroke renames its operation when the name follows the
        declaration: that comes with the operation's own `analysis_changed`, and the next refresh may still move its
        points alone (`_patch_edit` checks the operations are the ones drawn and takes the new name); any other
        change comes with `analysis_changed(-1)` and draws everything."""
        self._renamed = True
        RefreshWhenShown.mark_dirty(self)

    def _analysis_changed(self, row: int) -> None:
        """An operation's analysis changed (`row`; -1: any): with nothing else changed, the next refresh moves that
        operation's points alone (`_patch_edit`)."""
        if row < 0:
            self.mark_dirty()
            return
        if self._patch_rows is not None:
            self._patch_rows.add(row)
        RefreshWhenShown.mark_dirty(self)

    def refresh(self, *_: object) -> None:
        self._dirty = False
        if self._patch_edit():
            self._patch_rows = set()
            self._renamed = False
            return
        self._drawn = None
        self._patch_rows = set()
        self._renamed = False
        device = self.document.device
        if device is None or BANDWIDTH not in {*device.peak, *device.overrides}:
            self._show_no_roofline()
            return
        self.message.setVisible(False)
        if self.document.session.device.key != self._device_key:  # another device: fit its roofs
            self._device_key = self.document.session.device.key
            self._release_view()
        current = self.document.current_entry
        current_analysis = self.document.state(current).analysis if current is not None else None
        drawn, positions, kernel_marks, measured_marks = self._collect(device)
        x_low, x_high, y_low, y_high, start, top = self._fit(drawn, current_analysis)

        # the operations
        spots = [self._operation_spot(row, positions[row], stale) for row, _a, stale in drawn.placed]
        shown_spots = [(spot["pos"], spot["size"], spot["pen"], spot["brush"], spot["data"]) for spot in spots]
        if shown_spots != self._shown_spots:  # an edit moves one point at most; often none
            self._shown_spots = shown_spots
            self.points.setData(spots)
        drawn.spots = spots
        self._show_level_points(drawn.extra, positions)
        self._draw_lowered_roofs(drawn.placed, positions, start, top, drawn.binary)
        self.kernels.show(kernel_marks)
        self._show_kernel_levels(kernel_marks, {level.key for level in drawn.further})
        self.measured.show(measured_marks)
        rows = [row for row, _, _ in drawn.placed]
        self._point_positions = [positions[row] for row in rows]
        self._point_rows = rows
        self._point_names = [self.document.operations[row].name for row in rows]
        self._drawn = drawn
        self._show_point_labels(drawn)
        # The range's change would lay the labels out at once (sigRangeChanged); they are laid out once, below.
        self._refreshing = True
        try:
            self._set_range(x_low, x_high, y_low, y_high)
        finally:
            self._refreshing = False
        fresh, self._fresh_layout = self._fresh_layout, False
        if self._showing:
            # Shown inside a tab, the view learns its size only after its show event (the tab widget lays out its
            # page once it is shown itself): the labels are laid out once, at that size (`showEvent`).
            self._labels_due = fresh or bool(self._labels_due)
            return
        self._place_labels(fresh=fresh)

    def _show_no_roofline(self) -> None:
        """No device, or one without a memory bandwidth: nothing but a message saying why."""
        self._hide_roofs()
        self.points.setData([])
        self._shown_spots = None
        self.kernels.show([])
        self.measured.show([])
        self.point_labels.take(0)
        why = self.document.device_error or "the device has no memory bandwidth: enter one in the device panel"
        self.message.setText(f"No roofline: {why}")
        self.message.setPos(0.5, 0.5)
        self.message.setVisible(True)
        self._release_view()  # the message sits in a fixed range
        self._set_range(-1.0, 2.0, 0.0, 1.0)

    def _placed_operations(self) -> list[tuple[int, Analysis, bool]]:
        """The operations that have a place on the roofline (FLOP, bytes and a rate): row, analysis, stale."""
        placed: list[tuple[int, Analysis, bool]] = []
        for row, entry in enumerate(self.document.operations):
            state = self.document.state(entry)
            a = state.analysis
            if a is not None and a.flop > 0 and a.bytes > 0 and a.attainable_rate is not None:
                placed.append((row, a, state.stale))
        return placed

    def _collect(self, device: Device) -> tuple["_Drawn", dict[int, Position], list[Any], list[Any]]:
        """What a full refresh draws on `device`: the operations with a point at an interface shown and their
        points at the further ones (`_Drawn`), each operation's position, the kernels' and the runs' marks."""
        placed = self._placed_operations()
        roofs, ridges, device_interfaces = self._device_facts(device)
        facts = [self._facts_of(a) for _, a, _ in placed]
        # The host link is a roof only where some operation moves bytes over it (resident=host): for
        # everything else it has no intensity, and its low roof would only cross the compute roofs.
        host_used = any(fact.uses_host for fact in facts)
        levels = [level for level in device_interfaces if level.key != HOST or host_used]
        self._show_level_choices(levels)
        hbm_shown = BANDWIDTH not in self._hidden_levels
        further = [level for level in levels if level.key != BANDWIDTH and level.key not in self._hidden_levels]
        further_keys = {level.key for level in further}
        # Each operation at every interface it has a term for: the point at HBM (or, with HBM switched
        # off, at the first level shown) carries the label; the others are drawn beside it at the same height.
        self.operation_levels = {row: fact.levels for (row, _, _), fact in zip(placed, facts)}
        shown_keys = frozenset(further_keys | ({BANDWIDTH} if hbm_shown else set()))
        positions: dict[int, tuple[float, float]] = {}
        extra: list[tuple[int, bool, LevelPoint, Position]] = []  # row, stale, the point at a further level, where
        spans: list[tuple[int, int]] = []  # each placed operation's first point in `extra` and how many it has there
        kept: list[tuple[tuple[int, Analysis, bool], _PointFacts]] = []
        for (row, _a, stale), fact in zip(placed, facts):
            position, further_points = fact.points(shown_keys)
            if position is not None:
                positions[row] = position
                spans.append((len(extra), len(further_points)))
                extra += [(row, stale, point, at) for point, at in further_points]
                kept.append(((row, _a, stale), fact))
        placed = [entry for entry, _ in kept]
        kernel_marks = self.kernels.compute()  # imported profiler kernels share the axes' range
        measured_marks = self.measured.compute()  # measured runs and their spread bars too
        others_x = [mark.x for mark in kernel_marks]
        others_x += [x for mark in kernel_marks for key, x in mark.levels if key in further_keys]
        others_x += [mark.x for mark in measured_marks]
        others_y = [mark.y for mark in kernel_marks]
        others_y += [end for mark in measured_marks for end in (mark.low, mark.high)]
        rows = [row for row, _, _ in placed]
        at = {id(self.document.operations[row]): index for index, row in enumerate(rows)}
        drawn = _Drawn(
            device=device, current=self.document.current, operations=self.document.operations,
            count=len(self.document.operations), entries=[id(entry) for entry in self.document.operations],
            hidden=frozenset(self._hidden_levels), pins=tuple(id(entry) for entry in self.pinned),
            binary=self.document.binary, placed=placed, facts=[fact for _, fact in kept],
            index_of_row={row: index for index, row in enumerate(rows)},
            shown_keys=shown_keys, further=further, hbm_shown=hbm_shown, roofs=roofs, ridges=ridges,
            xs=np.array([positions[row][0] for row in rows], dtype=float),
            ys=np.array([positions[row][1] for row in rows], dtype=float),
            extra=extra, spans=spans, extra_xs=np.array([where[0] for _, _, _, where in extra], dtype=float),
            times=np.array([a.bound_time or 0.0 for _, a, _ in placed], dtype=float),
            pin_indices=[at[id(entry)] for entry in self.pinned if id(entry) in at],
            others_x=(min(others_x, default=math.inf), max(others_x, default=-math.inf)),
            others_y=min(others_y, default=math.inf),
            lowered=any(fact.lowered is not None for _, fact in kept),
        )
        return drawn, positions, kernel_marks, measured_marks

    def _patch_edit(self) -> bool:
        """Since the last full refresh only the selection changed, or one operation's analysis (a keystroke in its
        declaration), or both: the marks that changed are restyled or moved in place (`_restyle_selection`,
        `_move_operation`), the range fitted from `_drawn`'s arrays, and the labels laid out as after any edit.
        False, when more changed than that (an edit that takes a point off the plot, makes it stale, gives it a
        lowered roof, changes which interfaces are drawn; another device, list, levels, pins or units): `refresh`
        then draws everything (what was restyled or moved is then drawn again with the rest)."""
        drawn, rows, document = self._drawn, self._patch_rows, self.document
        if drawn is None or rows is None or len(rows) > 1:
            return False
        if (document.device is not drawn.device or document.operations is not drawn.operations
                or len(document.operations) != drawn.count or frozenset(self._hidden_levels) != drawn.hidden
                or document.binary != drawn.binary or tuple(id(entry) for entry in self.pinned) != drawn.pins):
            return False
        if self._renamed and [id(entry) for entry in document.operations] != drawn.entries:
            return False
        if document.current != drawn.current:
            self._restyle_selection(drawn)
        if rows and not self._move_operation(drawn, next(iter(rows))):
            return False
        current = document.current_entry
        current_analysis = document.state(current).analysis if current is not None else None
        x_low, x_high, y_low, y_high, _start, _top = self._fit(drawn, current_analysis)
        self._show_point_labels(drawn)
        self._set_range(x_low, x_high, y_low, y_high)
        self._place_labels()
        return True

    def _lay_out_afresh(self) -> None:
        self._fresh_layout = True

    def _move_operation(self, drawn: "_Drawn", row: int) -> bool:
        """Operation `row`'s analysis changed: its entries in `_drawn`'s arrays, its spot and its level points move to
        where the new analysis puts them, and its name is taken (it may follow the declaration). False, changing
        nothing, when it leaves or joins the plot, goes stale or fresh, gains a lowered roof or another number of
        level points, or any operation has a lowered roof (drawn from every point's place)."""
        index = drawn.index_of_row.get(row)
        if index is None or drawn.lowered:
            return False
        state = self.document.state(self.document.operations[row])
        a, stale = state.analysis, state.stale
        if a is None or not (a.flop > 0 and a.bytes > 0 and a.attainable_rate is not None) or stale != drawn.placed[index][2]:
            return False
        fact = self._facts_of(a)
        if fact.uses_host != drawn.facts[index].uses_host or fact.lowered is not None:
            return False
        position, further_points = fact.points(drawn.shown_keys)
        first, count = drawn.spans[index]
        if position is None or len(further_points) != count:
            return False
        drawn.placed[index] = (row, a, stale)
        drawn.facts[index] = fact
        self.operation_levels[row] = fact.levels
        drawn.xs[index], drawn.ys[index] = position
        drawn.times[index] = a.bound_time or 0.0
        for offset, (point, where) in enumerate(further_points):
            drawn.extra[first + offset] = (row, stale, point, where)
            drawn.extra_xs[first + offset] = where[0]
        self._set_spot(drawn, index, self._operation_spot(row, position, stale))
        self._patch_level_points(first, drawn.extra[first: first + count], position)
        self._point_positions[index] = position
        self._point_names[index] = self.document.operations[row].name
        self._marks_moved = [*self._marks_moved, (index, first, count)]
        return True

    def _restyle_selection(self, drawn: "_Drawn") -> None:
        """Another operation selected: the previously and the newly selected operations' marks (their point and
        their points at further levels) restyled, the dotted line joined through the new one's, the kernels'
        sizes set again (a selected operation's kernels are larger); the roofs, ridge and labels follow in
        `_patch_edit`. No point moves."""
        before, now = drawn.current, self.document.current
        drawn.current = now
        for row in (before, now):
            index = drawn.index_of_row.get(row)
            if index is None:
                continue
            position, stale = self._point_positions[index], drawn.placed[index][2]
            self._set_spot(drawn, index, self._operation_spot(row, position, stale))
            first, count = drawn.spans[index]
            self._patch_level_points(first, drawn.extra[first: first + count], position)
        index = drawn.index_of_row.get(now)
        self.level_connector.setVisible(index is not None and drawn.spans[index][1] > 0)
        if self.kernels.marks:
            self.kernels.show(self.kernels.marks)

    def _set_spot(self, drawn: "_Drawn", index: int, spot: dict[str, Any]) -> None:
        """Operation `index`'s mark drawn as `spot`: only its look's scatter (or scatters, when its look changed) is
        set again, or with few marks its own item."""
        shown = (spot["pos"], spot["size"], spot["pen"], spot["brush"], spot["data"])
        drawn.spots[index] = spot
        if self._shown_spots is not None and self._shown_spots[index] != shown:
            self._shown_spots[index] = shown
            if not self.points.patch(index, spot):
                self.points.setData(drawn.spots)

    def _fit(self, drawn: "_Drawn", current_analysis: Analysis | None) -> tuple[float, float, float, float, float, float]:
        """The range fitted to the points (every operation's, the kernels' and the runs'), the roofs drawn where
        what they show changed, and the selected path's ridge: (x_low, x_high, y_low, y_high, where the roofs
        start, the top roof's height)."""
        device, roofs, ridges, binary = drawn.device, drawn.roofs, drawn.ridges, drawn.binary
        assert device is not None
        bandwidth = device.bandwidth.value
        low_x = min(float(drawn.xs.min(initial=math.inf)), float(drawn.extra_xs.min(initial=math.inf)), drawn.others_x[0])
        high_x = max(float(drawn.xs.max(initial=-math.inf)), float(drawn.extra_xs.max(initial=-math.inf)), drawn.others_x[1])
        low_y = min(float(drawn.ys.min(initial=math.inf)), drawn.others_y)
        x_low = math.floor(min([low_x, *ridges, 0.0]) - 1.0)
        x_high = math.ceil(max([high_x, *ridges, 1.0]) + 1.6)  # room for the roof labels right of every point
        top = max([math.log10(roof.rate.value) for roof in roofs] or [math.log10(bandwidth) + x_high])
        y_high = top + 0.45
        y_low = math.floor(min([low_y, math.log10(bandwidth) + x_low + 0.5, top - 4]) - 0.4)

        used_path = current_analysis.path if current_analysis is not None else None
        # memory roof: rises with intensity until the highest compute roof
        bw_rate = device.overrides.get(BANDWIDTH) or device.peak[BANDWIDTH]
        memory_end = max(ridges) if ridges else x_high
        start = x_low - ROOF_REACH
        # Most edits move points, not roofs: redraw the roofs only when what they show changes.
        roofs_shown = (roofs, bw_rate, device.peak.get(BANDWIDTH), device.memory_name, binary, used_path, start, x_high,
                       drawn.hbm_shown, tuple(drawn.further))
        if roofs_shown != self._roofs_shown:
            self._roofs_shown = roofs_shown
            self._draw_roofs(device, roofs, ridges, bw_rate, bandwidth, binary, used_path, start, memory_end, x_high)
            self._draw_level_roofs(drawn.further, drawn.hbm_shown, binary, start, top, device.memory_name)
        labels = self.roof_labels.take(len(roofs))
        self._roof_heights = [math.log10(roof.rate.value) for roof in roofs]
        self._roof_starts = list(ridges)
        rightmost = high_x if high_x > -math.inf else x_low
        self._label_room_inputs = (labels, x_low, x_high, rightmost)
        x_high = self._room_for_roof_labels(*self._label_room_inputs)

        # ridge point of the selected operation's path (against the HBM roof: shown with it)
        ridge = current_analysis.ridge if current_analysis is not None and drawn.hbm_shown else None
        if ridge is not None and current_analysis is not None and current_analysis.compute_rate is not None and ridge > 0:
            rx, ry = math.log10(ridge), math.log10(current_analysis.compute_rate.value)
            self.ridge_line.setData([rx, rx], [y_low - ROOF_REACH, y_high + ROOF_REACH])
            if (rx, ry) != self._ridge:  # it moves only with the selected operation's path
                self.ridge_marker.setData([rx], [ry])
                self.ridge_label.setText(f"ridge {format_intensity(ridge)}")
            self._ridge = (rx, ry)  # its label is placed at the bottom of the view
        else:
            self._ridge = None
        for item in (self.ridge_line, self.ridge_marker):
            item.setVisible(ridge is not None and ridge > 0)
        return x_low, x_high, y_low, y_high, start, top

    def _operation_spot(self, row: int, position: Position, stale: bool) -> dict[str, Any]:
        """An operation's mark: red and larger when selected, hollow grey when stale."""
        selected = row == self.document.current
        colour = STALE_COLOUR if stale else SELECTED_COLOUR if selected else POINT_COLOUR
        return {
            "pos": position,
            "size": 13 if selected else 10,
            "pen": point_pen(colour),  # the same pen object each time: the symbol atlas keys on it
            "brush": point_brush("w" if stale else colour),
            "data": row,
        }

    def _show_point_labels(self, drawn: "_Drawn") -> None:
        """Which operations carry a label (all of a small session; of a large one the selected, the pinned and the
        largest by share of the session's time: workbench.label_layout.labelled_points); only those get an item."""
        total = float(drawn.times.sum()) or 1.0
        current_index = drawn.index_of_row.get(self.document.current)
        self._labelled = labelled_points(drawn.times / total, current_index, drawn.pin_indices)
        chosen = [drawn.placed[index] for index in self._labelled]
        texts = self.point_labels.take(len(chosen))
        for (row, a, stale), text in zip(chosen, texts):
            name = self.document.operations[row].name + (" (stale)" if stale else "")
            colour = STALE_COLOUR if stale else SELECTED_COLOUR if row == self.document.current else "#212121"
            if (name, colour) != getattr(text, "_shown", None):  # most labels keep their text and colour
                text._shown = (name, colour)
                text.setText(name, color=colour)

    def _draw_lowered_roofs(
        self, placed: Sequence[tuple[int, Analysis, bool]], positions: dict[int, Position], start: float, top: float, binary: bool
    ) -> None:
        """Each operation's lowered roof (its loads in flight allow less than the memory), dashed, named at its left,
        rising until its own path's compute roof (the roofs above are not that kernel's)."""
        lowered = [(row, a, roof) for row, a, _stale in placed if (roof := self._facts_of(a).lowered) is not None]
        lines = self.lowered_lines.take(len(lowered))
        labels = self.lowered_labels.take(len(lowered))
        self._lowered_segments = []
        for (row, a, roof), line, label in zip(lowered, lines, labels):
            log_bw = math.log10(roof.rate.value)
            ceiling = math.log10(a.compute_rate.value) if a.compute_rate is not None else top
            end = ceiling - log_bw  # where it meets the operation's compute roof
            line.setData([start, end], [log_bw + start, log_bw + end])
            self._lowered_segments.append((start, log_bw + start, end, log_bw + end))
            name = self.document.operations[row].name
            label.setText(f"{name}: {roof.title} {format_bandwidth(roof.rate.value, binary)}")
            at = positions[row][0] - 1.5  # left of its point, on the line
            label.setPos(at, log_bw + at)

    def _facts_of(self, a: Analysis) -> "_PointFacts":
        """What the plot draws of an operation, worked out once per analysis (an edit replaces one; the other
        operations' analyses, and so their facts, stay as they were)."""
        known = self._level_cache.get(id(a))
        if known is None or known.analysis is not a:
            known = _PointFacts(a)
            self._level_cache[id(a)] = known
            if len(self._level_cache) > 4 * len(self.document.operations) + 16:  # analyses of past edits
                live = {id(self.document.state(entry).analysis) for entry in self.document.operations}
                self._level_cache = {key: value for key, value in self._level_cache.items() if key in live}
        return known

    def _operation_marks(self, view: tuple[float, float, float, float]) -> PointMarks:
        """The operations' marks in the view's pixels (`label_layout.PointMarks`): kept while the view and the
        operations drawn stay, with the points an edit moved (`_marks_moved`) worked out again."""
        kept, moved = self._marks_kept, self._marks_moved
        self._marks_moved = []
        if kept is not None and kept[0] is self._point_positions and kept[1] is self._level_marks and kept[2].view == view:
            for index, first, count in moved:
                kept[2].move(index, self._point_positions[index], first, self._level_marks[first: first + count])
            return kept[2]
        marks = PointMarks(view, self._point_positions, self._level_marks, OPERATION_RADIUS)
        self._marks_kept = (self._point_positions, self._level_marks, marks)
        return marks

    _marks_kept: tuple[list[Position], list[Position], PointMarks] | None = None

    def _other_marks(self, view: tuple[float, float, float, float], width: float, height: float) -> MarkGrid:
        """The imported kernels' marks (and their stars at further levels) and the measured runs' (each run's mark and
        spread bar) in the view's pixels, indexed by grid cell (`label_layout.MarkGrid`): made again only when the
        view or those marks change (an edit of an operation moves neither)."""
        kernels, levels, runs = self.kernels.marks, self._kernel_level_marks, self.measured.marks
        key = (view, width, height, len(kernels), len(levels), len(runs))
        kept = self._others_kept
        if kept is not None and kept[0] == key and kept[1] is kernels and kept[2] is levels and kept[3] is runs:
            return kept[4]
        x_low, y_high, per_x, per_y = view

        def px(x: float) -> float:
            return (x - x_low) * per_x

        def py(y: float) -> float:
            return (y_high - y) * per_y

        boxes = [box_around(px(kernel.x), py(kernel.y), KERNEL_RADIUS) for kernel in kernels]
        boxes += [box_around(px(x), py(y), KERNEL_RADIUS) for x, y in levels]
        for run in runs:
            cx = px(run.x)
            boxes.append(box_around(cx, py(run.y), MEASURED_RADIUS))
            boxes.append((cx - 2.0, py(run.high), cx + 2.0, py(run.low)))  # the spread bar
        grid = MarkGrid(boxes, width, height)
        self._others_kept = (key, kernels, levels, runs, grid)
        return grid

    _others_kept: tuple[Any, ...] | None = None
    _marks_moved: list[tuple[int, int, int]] = []  # (operation, its first level point, how many) moved since

    def _device_facts(self, device: Device) -> tuple[list[Roof], list[float], list[RoofLevel]]:
        """The device's compute roofs, where each meets its memory roof (log intensity) and its interfaces: once per
        device (a change of the device or of one of its rates resolves a new Device; an operation's edit does not)."""
        kept = self._device_facts_kept
        if kept is None or kept[0] is not device:
            roofs = device_roofs(device)
            bandwidth = device.bandwidth.value
            kept = (device, roofs, [math.log10(roof.rate.value / bandwidth) for roof in roofs], device_levels(device))
            self._device_facts_kept = kept
        return kept[1], kept[2], kept[3]

    _device_facts_kept: tuple[Device, list[Roof], list[float], list[RoofLevel]] | None = None
    _drawn: _Drawn | None = None
    _patch_rows: set[int] | None = None
    _renamed = False  # operations_changed since the last refresh (see _operations_changed)

    def _draw_roofs(
        self,
        device: Device,
        roofs: Sequence[Roof],
        ridges: Sequence[float],
        bw_rate: Rate,
        bandwidth: float,
        binary: bool,
        used_path: str | None,
        start: float,
        memory_end: float,
        x_high: float,
    ) -> None:
        """The memory roof, one compute roof per rate in use (and the datasheet ghosts), with their labels."""
        self.memory_line.setVisible(True)  # hidden while a device had no bandwidth
        self.memory_line.setData([start, memory_end], [math.log10(bandwidth) + start, math.log10(bandwidth) + memory_end])
        self.memory_line.setPen(roof_pen(MEMORY_COLOUR, bw_rate, 2.5))
        ghost = device.peak.get(BANDWIDTH) if BANDWIDTH in device.overrides else None
        if ghost is not None:
            g = math.log10(ghost.value)
            self.memory_ghost.setData([start, memory_end], [g + start, g + memory_end])
            self.memory_ghost.setPen(roof_pen(GHOST_COLOUR, ghost, 1.5))
        self.memory_ghost.setVisible(ghost is not None)
        memory_text = f"{device.memory_name} {format_bandwidth(bandwidth, binary)}"
        self._roof_texts = {"memory": (f"{memory_text} ({bw_rate.source})", memory_text)}
        self.memory_label.setText(self._roof_texts["memory"][0])
        if device.memory_name != self._axis_memory:  # relabel only on a change: a label change relays the plot out
            self._axis_memory = device.memory_name
            self._fit_axis_title()
        log_bw = math.log10(bandwidth)
        self._memory_segment = (start, log_bw + start, memory_end, log_bw + memory_end)  # its label is placed with the others
        segments: list[Segment] = [self._memory_segment]
        if ghost is not None:
            segments.append((start, g + start, memory_end, g + memory_end))
        self._hbm_segments = list(segments)  # left out when the HBM level is switched off

        lines = self.roof_lines.take(len(roofs))
        labels = self.roof_labels.take(len(roofs))
        ghosts = self.ghost_lines.take(sum(1 for roof in roofs if roof.datasheet is not None))
        ghost_index = 0
        for index, (roof, ridge, line, label) in enumerate(zip(roofs, ridges, lines, labels)):
            y = math.log10(roof.rate.value)
            selected = used_path in roof.paths
            colour = SELECTED_COLOUR if selected else ROOF_COLOUR
            line.setData([ridge, x_high + ROOF_REACH], [y, y])
            segments.append((ridge, y, x_high + ROOF_REACH, y))
            line.setPen(roof_pen(colour, roof.rate, 2.5 if selected else 1.5))
            line.setZValue(2 if selected else 1)
            names, short = roof_names(roof.paths, used_path)
            source = "" if is_assumed(roof.rate) else f" ({roof.rate.source})"  # dashed already says datasheet
            rate_text = format_flop_rate(roof.rate.value)
            # the short text, where the full one finds no room near the roof: one path (the operation's on the
            # highlighted roof), no source
            self._roof_texts[f"roof {index}"] = (f"{names}  {rate_text}{source}", f"{short}  {rate_text}")
            label.setText(self._roof_texts[f"roof {index}"][0], color=colour)
            if roof.datasheet is not None:
                ghost_line = ghosts[ghost_index]
                ghost_index += 1
                gy = math.log10(roof.datasheet.value)
                ghost_line.setData([math.log10(roof.datasheet.value / bandwidth), x_high + ROOF_REACH], [gy, gy])
                segments.append((math.log10(roof.datasheet.value / bandwidth), gy, x_high + ROOF_REACH, gy))
                ghost_line.setPen(roof_pen(GHOST_COLOUR, roof.datasheet, 1.5))
        self._roof_segments = segments

    def _room_for_roof_labels(self, labels: Sequence[pg.TextItem], x_low: float, x_high: float, rightmost: float) -> float:
        """The fitted range's right end: half a decade past the rightmost point or ridge (taken to the next half
        decade), and further (in half decades) until the widest roof label fits right of both, but never more than
        `ROOF_LABEL_ROOM` decades past the end fitted to the data (`x_high`).

        On a small plot, or at presentation size, the labels cannot all have that room (each added decade narrows
        every decade): a range stretched for them (it ran to 1e10) squeezed the points into a corner, their labels
        onto long leaders. A roof label without room right of the points goes along its roof between them, on it,
        or in its short text (workbench.label_layout).
        """
        width = self.plot.getViewBox().width()
        texts = [self._roof_texts.get(f"roof {index}", (label.toPlainText(),) * 2) for index, label in enumerate(labels)]
        need = max((self._text_width(label, full) for label, (full, _) in zip(labels, texts)), default=0.0) + 2 * KERNEL_RADIUS
        # Right of every point and of every roof's start (its ridge), taken to the next half decade: a point that
        # moves within a half decade (a digit typed and taken out again) keeps the range, which otherwise
        # flipped on each keystroke wherever the room needed fell between the two positions.
        clear = math.ceil(2 * max([rightmost, *self._roof_starts])) / 2
        end = math.ceil(2 * (clear + 0.5)) / 2
        limit = x_high + ROOF_LABEL_ROOM
        while width > 0 and end < limit and (end - clear) * width / (end - x_low) < need:
            end += 0.5
        return end

    _label_room_inputs: tuple[Any, ...] | None = None  # what the last refresh measured the label room from
    _refreshing = False  # a full refresh is setting the range: it lays the labels out itself, once, after
    # Another session shown: its first refresh lays the labels out afresh at once (nothing of the last session's
    # layout is kept, and no tidy-up follows it).
    _fresh_layout = False
    _showing = False  # a refresh on being shown: it leaves the labels to `showEvent`
    _labels_due: bool | None = None  # the labels wait to be laid out (True: afresh); None when they do not

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        """Redraw if stale (`RefreshWhenShown`), with the labels laid out at the size the view then gets: the
        resize that follows in the same show lays them out (`_place_labels` on `sigResized`), and what is still
        due when Qt next delivers its events is laid out then (no resize came: the size was final). A layout at
        the size before costs as much as one at the final size and is never seen."""
        self._showing = True
        try:
            super().showEvent(event)
        finally:
            self._showing = False
        if self._labels_due is not None:
            self._due_labels_timer.start()

    def _place_due_labels(self) -> None:
        if self._labels_due is not None:
            self._place_labels(fresh=self._labels_due)

    def _refit_label_room(self, *_: object) -> None:
        """The plot was resized: the room kept right of the points for the roof labels is measured in pixels, so
        the fitted range's right end is measured again (without this, the range fitted while the window was
        still being laid out stayed until the next edit, and the same operation could be fitted two ways)."""
        if self._label_room_inputs is None or self._range is None:
            return
        x_low, x_high, y_low, y_high = self._range
        end = self._room_for_roof_labels(*self._label_room_inputs)
        if end != x_high:
            self._set_range(x_low, end, y_low, y_high)

    def _place_labels(self, *_: object, fresh: bool = False) -> None:
        """Lay out the labels in the view's pixels so none covers a point, a roof or another label.

        The geometry is `workbench.label_layout`'s: every mark on the plot
        (operations, measured runs and their bars, profiled kernels, the ridge
        point) and the legend are marks to keep uncovered; the memory roof, the
        compute roofs and their datasheet ghosts are roofs no label may cross.
        Roof labels lie along their roof; operation labels take the nearest free
        place around their point, or further off with a leader line. Which
        operations are labelled follows View ▸ Labels. The view in use (fitted
        or held) is read from the view box, so a zoom or pan re-places them too.

        When only points moved (an edit; same view, roofs, labels and font), labels whose points stayed keep
        their places, and `TIDY_AFTER_MS` after the last such layout (or with `fresh`) they are laid out afresh.

        Operations and roofs whose label found no room (near its roof, for a roof) join the legend; the legend is
        itself a mark, so the labels are laid out again (`legend_corner.list_unplaced`). While only points move,
        those listed stay listed: the legend does not flicker (nor get rebuilt) on every keystroke.
        """
        if self._range is None or self._refreshing:
            return
        fresh = fresh or bool(self._labels_due)
        self._labels_due = None
        if fresh:
            self._tidy_timer.stop()  # laid out afresh now: a tidy-up asked for before has nothing left to do
        box = self.plot.getViewBox()
        (x_low, x_high), (y_low, y_high) = box.viewRange()
        view = PixelView(x_low, x_high, y_low, y_high, box.width(), box.height())
        if not view.usable:
            return
        context = (view.width, view.height, self._label_mode, tuple(self._point_rows), self.roof_labels.used,
                   self.point_labels.items[0].font_key() if self.point_labels.items else "")
        start = self._listed if context == self._listed_context else set()
        self._legend_free = None
        laid, listed, before, left_out = self._list_unplaced(view, fresh, start)
        if self._legend_free and before is not None and self._legend_corner is not None and (listed != before or left_out):
            # The corner was chosen afresh and labels lost their room to the legend there (each is listed in it, so
            # it grows): try the others too, and keep the one that covers no mark and takes the fewest labels' room.
            found = {}

            def trial_in(corner: Corner) -> Trial:
                found[corner] = self._list_unplaced(view, fresh, set(before), corner)
                _, kept, _, out = found[corner]
                return Trial(corner, self._legend_covering, len(kept - before), out)

            trials, best = try_corners(Trial(self._legend_corner, self._legend_covering, len(listed - before), left_out),
                                       trial_in)
            laid, listed = found[trials[-1].corner][:2]
            if best != trials[-1]:
                laid, listed, _, _ = self._list_unplaced(view, fresh, set(before), best.corner)
        self._ridge_up(view, laid)
        self._listed, self._listed_context = listed, context
        self.label_layout = PlacedLabels(laid.layout, view.width, view.height, tuple(laid.roofs), tuple(laid.marks),
                                         tuple(laid.roof_labels), tuple(laid.point_labels))
        self._draw_labels(view, laid)

    def _list_unplaced(
        self, view: PixelView, fresh: bool, listed: set[str], corner: Corner | None = None
    ) -> tuple["_Laid", set[str], set[str] | None, int]:
        """Lay out, listing each label that finds no room while the legend covers no more marks for it
        (`legend_corner.list_unplaced`; the legend in `corner`, or where `_place_legend` puts it); also what was
        listed when the legend first showed (None: it never did) and how many labels were left out."""
        before: set[str] | None = None
        laid: _Laid | None = None

        def shown(keys: frozenset[str]) -> tuple[frozenset[str], int]:
            nonlocal before, laid
            self._show_point_legend(set(keys))
            legend = self.plot.legend
            if legend is not None and legend.isVisible() != bool(legend.items):  # an empty legend is a white box
                legend.setVisible(bool(legend.items))  # over the plot's corner (it faded a roof label there)
            if before is None and legend is not None and legend.items:
                before = set(keys)
            laid = self._lay_out(view, fresh, corner)
            return frozenset(laid.layout.unplaced), self._legend_covering if legend is not None and legend.items else 0

        rounds = len(self._point_rows) + self.roof_labels.used + 2
        # a roof's name before an operation's (whose point names it on hover): "memory…", "roof…" first
        kept, left_out = place_in_legend(frozenset(listed), shown, rounds, first=lambda key: key.startswith("operation"))
        assert laid is not None
        return laid, set(kept), before, len(left_out)

    def _lay_out(self, view: PixelView, fresh: bool, corner: Corner | None) -> "_Laid":
        """One layout of every label with the legend as it is listed now (in `corner`, or where `_place_legend` puts
        it), the labels held where they were while one point moves (`label_layout.held_layout`)."""
        marks, near, as_array = self._layout_marks(view, fresh, corner)
        roofs: list[Segment] = [view.segment(segment) for segment in [*self._roof_segments, *self._lowered_segments]]
        for text in self.lowered_labels.items[: self.lowered_labels.used]:
            marks.append(scene_box(self.plot.getViewBox(), text))
        # the ridge label: at the foot of the ridge line, either side (where the foot is taken, as by a legend in a
        # bottom corner, it goes up the line once the other labels are placed: `_ridge_up`)
        ridge_box: Box | None = None
        if self._ridge is not None and view.x_low < self._ridge[0] < view.x_high:
            ridge_box = ridge_at_foot(*self._ridge_sides(view), view.height - 2, view.width, view.height, near, roofs)
        self._put(self.ridge_label, ridge_box, view)
        if ridge_box is not None:
            marks.append(ridge_box)
        roof_labels, roof_items = self._roof_label_inputs(view)
        point_labels, point_items = self._point_label_inputs(view)
        context = (view, tuple(roofs), tuple(label.key for label in roof_labels), self._label_mode,
                   self.point_labels.items[0].font_key() if self.point_labels.items else "")
        placed = self.label_layout
        held = held_layout(placed.layout if placed is not None else None, placed.point_labels if placed is not None else (),
                           point_labels, not fresh and context == self._layout_context)
        layout = layout_labels(view.width, view.height, roofs, marks, roof_labels, point_labels, keep=held,
                               marks_array=as_array())
        self._layout_context = context
        if held is not None:
            self._tidy_timer.start()  # (again): afresh once the edits pause
        return _Laid(layout, roofs, marks, roof_labels, point_labels, roof_items, point_items, near)

    def _layout_marks(
        self, view: PixelView, fresh: bool, corner: Corner | None
    ) -> tuple[list[Box], Callable[[Sequence[Box]], list[Box]], Callable[[], np.ndarray]]:
        """Every mark the labels keep clear of, in the view's pixels, with the legend put in its corner (a mark too);
        `near(boxes)`: the marks that overlap any of `boxes` (the points' found by NumPy, the kernels' and runs' by
        their grid's cells, the rest, few, one by one), what a box among them covers of the marks; and
        `as_array()`: the marks as rows, joined from the arrays the points and the grid keep (not made afresh from
        thousands of boxes on every keystroke)."""
        # the points, then their points at further levels apart from them (a level point on top of its operation's
        # point, as every level carrying the same bytes puts it, is kept clear already), then the kernels' and runs'
        point_marks = self._operation_marks(view.key())
        others = self._other_marks(view.key(), view.width, view.height)
        marks = point_marks.boxes()
        points, apart = len(self._point_positions), len(marks)
        marks += others.boxes

        def as_array() -> np.ndarray:
            rest = np.array(marks[apart + len(others):], dtype=float).reshape(-1, 4)
            return np.vstack((point_marks.array(), others.array, rest))

        def near(boxes: Sequence[Box]) -> list[Box]:
            rest = [*marks[points:apart], *marks[apart + len(others):]]
            return point_marks.overlapping_points(boxes) + [others.boxes[i] for i in others.overlapping(boxes)] + [
                mark for mark in rest if any(boxes_overlap(box, mark) for box in boxes)]

        for items in self.measured.label_items():
            for text in items.labels:
                if text.isVisible():
                    marks.append(scene_box(self.plot.getViewBox(), text))
        if self._ridge is not None:
            marks.append(box_around(view.px(self._ridge[0]), view.py(self._ridge[1]), RIDGE_RADIUS))
        view_range = (view.x_low, view.x_high, view.y_low, view.y_high)
        legend_box = self._place_legend(marks, view.width, view.height, view_range, fresh, corner, near)
        if legend_box is not None:
            marks.append(legend_box)
        return marks, near, as_array

    def _roof_label_inputs(self, view: PixelView) -> tuple[list[RoofLabel], list[pg.TextItem]]:
        """The roof labels to lay out (their sizes, full and short, and their roofs in pixels) and their items."""
        labels: list[RoofLabel] = []
        items: list[pg.TextItem] = []
        if self._memory_segment is not None:
            w, h, short_w = self._roof_size("memory", self.memory_label)
            labels.append(RoofLabel("memory", w, h, view.segment(self._memory_segment), from_left=True, short_width=short_w))
            items.append(self.memory_label)
        level_labels = self.level_labels.items[: self.level_labels.used]
        for label, segment, level in zip(level_labels, self._level_segments, self._level_segment_keys):
            w, h, short_w = self._roof_size(f"memory {level}", label)
            labels.append(RoofLabel(f"memory {level}", w, h, view.segment(segment), from_left=True, short_width=short_w))
            items.append(label)
        roof_texts = self.roof_labels.items[: self.roof_labels.used]
        for index, (label, y, start) in enumerate(zip(roof_texts, self._roof_heights, self._roof_starts)):
            w, h, short_w = self._roof_size(f"roof {index}", label)
            roof = (view.px(start), view.py(y), view.px(view.x_high) + 1e4, view.py(y))
            labels.append(RoofLabel(f"roof {index}", w, h, roof, short_width=short_w))
            items.append(label)
        return labels, items

    def _point_label_inputs(self, view: PixelView) -> tuple[list[PointLabel], list[pg.TextItem]]:
        """The labelled operations' labels to lay out (by View ▸ Labels) and their items; the others' are hidden."""
        labels: list[PointLabel] = []
        items: list[pg.TextItem] = []
        texts = self.point_labels.items[: self.point_labels.used]
        chosen = [(self._point_rows[index], self._point_positions[index]) for index in self._labelled]
        for label, (row, (x, y)) in zip(texts, chosen):
            if self._label_mode == LABELS_ALL or (self._label_mode == LABELS_SELECTED and row == self.document.current):
                w, h = label.pixel_size()
                labels.append(PointLabel(f"operation {row}", w, h, view.px(x), view.py(y)))
                items.append(label)
            else:
                label.setVisible(False)
        return labels, items

    def _put(self, label: pg.TextItem, box: Box | None, view: PixelView) -> None:
        """Show `label` with its top left at the box's (hidden for None). Most labels stay where they were (held
        while a point moves): the same box in the same view is the same place, and nothing but this moves a label."""
        if label.isVisible() != (box is not None):
            label.setVisible(box is not None)
        if box is None:
            return
        placed = (box, view.key())
        if getattr(label, "_placed_at", None) == placed:
            return
        label._placed_at = placed
        if tuple(label.anchor) != (0.0, 0.0):
            label.setAnchor((0, 0))
        at = view.at(box[0], box[1])
        if (label.pos().x(), label.pos().y()) != at:
            label.setPos(*at)

    def _roof_size(self, key: str, label: PlotLabel) -> tuple[float, float, float | None]:
        """The label's width with its full text and with its short one, and its height (from font metrics: the
        label may show either text now); worked out again only when a text, the font or the box changed."""
        shown = label.plain_text()
        full, short = self._roof_texts.get(key, (shown, shown))
        asked = (full, short, shown, label.font_key(), label.pixel_size())
        kept = getattr(label, "_roof_size_for", None)
        if kept is not None and kept[0] == asked:
            return kept[1]
        w, h = asked[4]
        margin = w - self._text_width(label, shown)
        full_width = margin + self._text_width(label, full)
        short_width = margin + self._text_width(label, short) if short != full else None
        label._roof_size_for = (asked, (full_width, h, short_width))
        return full_width, h, short_width

    def _ridge_sides(self, view: PixelView) -> tuple[tuple[float, float], list[float]]:
        """The ridge label's size, and the left edges of its places beside the ridge line (right, else left)."""
        assert self._ridge is not None
        w, h = self.ridge_label.pixel_size()
        left = view.px(self._ridge[0]) + 3
        return (w, h), [left, left - w - 6]

    def _ridge_up(self, view: PixelView, laid: "_Laid") -> None:
        """The ridge label whose foot was taken goes up its line, clear of every mark, label and leader (it is placed
        last, after the operations' and roofs' labels: `label_layout.ridge_up_the_line`), or not at all."""
        if self._ridge is None or not view.x_low < self._ridge[0] < view.x_high or self.ridge_label.isVisible():
            return
        placements = laid.layout.placements
        labels = [placement.box for placement in placements if placement.box is not None]
        lines = laid.roofs + [leader for leader in map(leader_segment, placements) if leader is not None]

        def covering(box: Box) -> list[Box]:
            return laid.near([box]) + [label for label in labels if boxes_overlap(box, label)]

        box = ridge_up_the_line(*self._ridge_sides(view), view.width, view.height, covering, lines)
        if box is not None:
            self._put(self.ridge_label, box, view)
            laid.marks.append(box)  # a mark of the layout the view keeps (its checks see the label)

    def _draw_labels(self, view: PixelView, laid: "_Laid") -> None:
        """The layout drawn: each roof label in its place with its full or short text (on its roof with a white
        ground), each operation label in its place, and the leaders."""
        placements = iter(laid.layout.placements)
        for item, label in zip(laid.roof_items, laid.roof_labels):
            placement = next(placements)
            texts = self._roof_texts.get(label.key)
            if texts is not None:
                item.setText(texts[1] if placement.short else texts[0])  # no work when the text is the same
            self._put(item, placement.box, view)
            _write_on_roof(item, placement)
        for item in laid.point_items:
            self._put(item, next(placements).box, view)
        leaders = [p for p in laid.layout.placements if p.box is not None and p.leader_to is not None]
        for line, placement in zip(self.leader_lines.take(len(leaders)), leaders):
            assert placement.box is not None and placement.leader_to is not None
            drawn = (placement.box, placement.leader_to, view.key())
            if getattr(line, "_drawn_for", None) == drawn:  # most leaders stay as they were (held labels)
                continue
            line._drawn_for = drawn
            (ax, ay), (bx, by) = view.at(*placement.leader_to), view.at(*nearest_on_box(placement.box, *placement.leader_to))
            line.setData([ax, bx], [ay, by])

    def set_pinned(self, entry: OperationEntry | None, pinned: bool) -> None:
        """View ▸ Labels ▸ Pin: the operation keeps its label however many operations the session has."""
        if entry is None or pinned == self.is_pinned(entry):
            return
        if pinned:
            self.pinned.append(entry)
        else:
            self.pinned = [other for other in self.pinned if other is not entry]
        self.mark_dirty()

    def is_pinned(self, entry: OperationEntry | None) -> bool:
        return any(other is entry for other in self.pinned)

    def set_label_mode(self, mode: str) -> None:
        """Which operations are labelled: LABELS_ALL, LABELS_SELECTED or LABELS_NONE (then the legend lists them)."""
        if mode not in LABEL_MODES:
            raise ValueError(f"unknown label mode {mode!r}")
        if mode != self._label_mode:
            self._label_mode = mode
            self._place_labels()

    @property
    def label_mode(self) -> str:
        return self._label_mode

    def _show_point_legend(self, listed: set[str]) -> None:
        """With labels off, the legend lists the operations not labelled on the plot; and the operations and roofs
        named in `listed` (layout keys: "operation 3", "roof 1", "memory") whose label found no room."""
        rows: list[tuple[str, str, str]] = []  # text, colour, "point" or "roof"
        roof_items = [self.memory_label, *self.level_labels.items[: self.level_labels.used], *self.roof_labels.items[: self.roof_labels.used]]
        keys = ["memory", *(f"memory {level}" for level in self._level_segment_keys), *(f"roof {index}" for index in range(self.roof_labels.used))]
        for key, item in zip(keys, roof_items):
            if key in listed:
                rows.append((self._roof_texts.get(key, (item.toPlainText(),))[0], item.color.name(), "roof"))
        current = self.document.current
        # the widest text a row may have: the legend (its sample, spacing and margins besides) within the view
        room = self.plot.getViewBox().width() - 2 * LEGEND_MARGIN[0] - LEGEND_ROW_EXTRA
        # A large session's legend names the operations that would carry a label (`labelled_points`) and counts
        # the others (hover names them, as does the operations list): a row each would run off the view.
        named = set(self._labelled)
        for index in self._labelled:  # in the points' order
            if index >= len(self._point_rows):
                continue
            row, (x, y), text = self._point_rows[index], self._point_positions[index], self._point_names[index]
            labelled = self._label_mode == LABELS_ALL or (self._label_mode == LABELS_SELECTED and row == current)
            if labelled and f"operation {row}" not in listed:
                continue
            colour = SELECTED_COLOUR if row == current else POINT_COLOUR
            figures = f"{format_intensity(10 ** x)}, {format_flop_rate(10 ** y)}"
            line = f"{text} — {figures}"
            if self._legend_text_width(line) > room:  # two lines rather than a legend wider than the plot
                line = f"{text}\n{figures}"  # a line break in the legend's HTML
            rows.append((line, colour, "point"))
        unnamed = len(self._point_rows) - len(named)
        if unnamed > 0:
            rows.append((f"+{unnamed:,} more operations (hover for names)", POINT_COLOUR, "point"))
        if rows == self._legend_rows:
            return
        if self._relabel_legend(rows):
            return
        legend = self.plot.addLegend(offset=LEGEND_MARGIN)  # the plot's one legend, shared with the measured runs
        font = getattr(self, "_plot_font", None)
        if font is not None:  # rows at the labels' size, also in a legend made after the text size was set
            legend.setLabelTextSize(f"{legend_points(font)}pt")
        for sample in self._legend_samples:
            legend.removeItem(sample)
        self._legend_samples = []
        for text, colour, kind in rows:
            if kind == "roof":
                sample = pg.PlotDataItem(pen=pg.mkPen(colour, width=2))
            else:
                sample = pg.ScatterPlotItem(symbol="o", size=10, pen=pg.mkPen(colour, width=2), brush=pg.mkBrush(colour))
            legend.addItem(sample, html_text(text))  # pyqtgraph's legend rows are HTML
            self._legend_samples.append(sample)
        legend.setBrush(pg.mkBrush(255, 255, 255, 220))
        self._legend_rows = rows

    def _legend_text_width(self, text: str) -> float:
        """The advance of `text` in the legend's rows (the labels' font at `_show_point_legend`'s row size)."""
        plot_font = getattr(self, "_plot_font", None)
        font = QFont(plot_font or self.font())
        # the rows' size, as set in _show_point_legend; pyqtgraph's 9 pt before a text size was set
        font.setPointSizeF(legend_points(plot_font) if plot_font is not None else 9)
        return self._advance(font.key(), text, lambda: font)

    def _advance(self, font_key: str, text: str, font: Callable[[], QFont]) -> float:
        """The advance of `text` in the font `font()` whose key is `font_key`, measured once per font and text."""
        key = (font_key, text)
        width = self._text_widths.get(key)
        if width is None:
            if len(self._text_widths) > 512:
                self._text_widths.clear()
            width = self._text_widths[key] = QFontMetricsF(font()).horizontalAdvance(text)
        return width

    def _relabel_legend(self, rows: list[tuple[str, str, str]]) -> bool:
        """When only the rows' texts changed (an edit moves the selected point: its figures change), set those
        texts in place rather than rebuild every row; False when the legend must be rebuilt."""
        legend = self.plot.legend
        old = self._legend_rows
        if legend is None or len(rows) != len(old) or any(a[1:] != b[1:] for a, b in zip(rows, old)):
            return False
        labels = {id(getattr(sample, "item", sample)): label for sample, label in legend.items}  # ItemSample wraps ours
        if any(id(sample) not in labels for sample in self._legend_samples):
            return False
        changed = False
        for (text, _, _), (old_text, _, _), sample in zip(rows, old, self._legend_samples):
            if text != old_text:
                labels[id(sample)].setText(html_text(text))
                changed = True
        if changed:  # the box grows with a longer text now (pyqtgraph sizes it only when a row is added or removed)
            legend.updateSize()
        self._legend_rows = rows
        return True

    def _place_legend(
        self,
        marks: Sequence[Box],
        width: float,
        height: float,
        view_range: tuple[float, float, float, float],
        fresh: bool,
        corner: Corner | None = None,
        near: Callable[[Sequence[Box]], list[Box]] | None = None,
    ) -> Box | None:
        """Put the legend, when shown, in the corner of the view that covers none of `marks` (the points, runs,
        kernels and their labels, in the view's pixels), and return its box there (a mark for the labels).

        The corner is chosen afresh (top left first, then bottom right: `workbench.legend_corner`) when the
        labels are laid out afresh, the view's size or range, the text size or the legend's rows change; otherwise
        it stays, unless a point moved under it: while one operation is edited the legend does not jump corners
        on each keystroke. The box is worked out from the corner, not read from the item: while the view is being
        resized the legend follows its corner only after this runs (pyqtgraph moves it on the view's
        geometryChanged, which comes after the resize that lays out the labels)."""
        legend = self.plot.legend
        if legend is None or not legend.isVisible() or not legend.items:
            return None
        size = (legend.width(), legend.height())
        if near is not None:  # only the marks some corner's box overlaps count (how many it covers)
            marks = near([corner_box(each, size, width, height) for each in CORNERS])
        marks = mark_rows(marks)  # counted at once for each corner tried
        context = (width, height, view_range, len(legend.items), tuple(row[1:] for row in self._legend_rows),
                   self.point_labels.items[0].font_key() if self.point_labels.items else "")
        if corner is None:
            keep = self._legend_corner if not fresh and context == self._legend_context else None
            corner = choose_corner(size, width, height, marks, keep=keep, keep_covering=self._legend_covering)
            if corner is not keep and self._legend_free is None:
                self._legend_free = faults(corner_box(corner, size, width, height), marks, width, height) == 0
        box = corner_box(corner, size, width, height)
        self._legend_context, self._legend_corner, self._legend_covering = context, corner, faults(box, marks, width, height)
        # pyqtgraph's offsets: negative ones are measured from the right and bottom edges
        offset = (-LEGEND_MARGIN[0] if corner.right else LEGEND_MARGIN[0], -LEGEND_MARGIN[1] if corner.bottom else LEGEND_MARGIN[1])
        if tuple(legend.opts["offset"]) != offset:
            legend.setOffset(offset)
        return box

    def _hide_roofs(self) -> None:
        self._roofs_shown = None
        for item in (self.memory_line, self.memory_ghost, self.memory_label, self.ridge_line, self.ridge_marker, self.ridge_label):
            item.setVisible(False)
        self._memory_segment = None
        self._roof_segments = []
        self._level_segments = []
        self._level_marks = []
        self.level_points.setData([])
        self._shown_level_spots = None
        self.kernel_levels.setData([])
        self._kernel_level_marks = []
        self.level_connector.setVisible(False)
        self.level_lines.take(0)
        self.level_labels.take(0)
        self.level_ghosts.take(0)
        self.lowered_lines.take(0)
        self.lowered_labels.take(0)
        self._lowered_segments = []
        self._ridge = None
        self._roof_heights = []
        self._roof_starts = []
        self.roof_lines.take(0)
        self.roof_labels.take(0)
        self.ghost_lines.take(0)

    # ------------------------------------------------------------------ the view: fitted or held
    @property
    def view_held(self) -> bool:
        """True once the user zoomed or panned: edits then keep the view until a fit."""
        return self._held

    def _set_range(self, x_low: float, x_high: float, y_low: float, y_high: float) -> None:
        target = (x_low, x_high, y_low, y_high)
        if target != self._range:
            self._range = target
            if not self._held:
                self._apply_range()

    def _apply_range(self) -> None:
        if self._range is not None:
            x_low, x_high, y_low, y_high = self._range
            self.plot.getViewBox().setRange(xRange=(x_low, x_high), yRange=(y_low, y_high), padding=0)

    def _hold_view(self, *_: object) -> None:
        if not self._held:
            self._held = True
            self._show_held()

    def _release_view(self) -> None:
        if self._held:
            self._held = False
            self._show_held()
            self._apply_range()

    def fit_view(self, *_: object) -> None:
        """Back to automatic ranging: the view fits the roofs and every point, and follows edits again."""
        self._held = False
        self._show_held()
        self._apply_range()

    def _show_held(self) -> None:
        self.held_label.setVisible(self._held)
        if self._held:
            self.plot.showButtons()
        else:
            self.plot.hideButtons()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """A left double-click inside the plot area fits the view (the event still reaches pyqtgraph)."""
        if (
            watched is self.widget.viewport()
            and event.type() == QEvent.Type.MouseButtonDblClick
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            scene_pos = self.widget.mapToScene(event.position().toPoint())
            if self.plot.getViewBox().sceneBoundingRect().contains(scene_pos):
                self.fit_view()
        return super().eventFilter(watched, event)

    def _hovered(self, data: Sequence[Any]) -> None:
        text = "\n\n".join(self._tip(datum) for datum in list(data)[:3])
        self.plot.getViewBox().setToolTip(tooltip(text))

    def _tip(self, data: Any) -> str:
        """Hover text of one operation point: its figures with units."""
        operations = self.document.operations
        if not isinstance(data, (int, np.integer)) or not 0 <= int(data) < len(operations):
            return ""
        entry = operations[int(data)]
        state = self.document.state(entry)
        a = state.analysis
        if a is None:
            return entry.name
        binary = self.document.binary
        lines = [
            entry.name + ("  (stale: the declaration has an error)" if state.stale else ""),
            str(a.declaration),
            f"intensity {format_intensity(a.intensity)}",
            f"attainable {format_flop_rate(a.attainable_rate or 0.0)} on {a.path}",
        ]
        if a.compute_time is not None and a.memory_time is not None and a.bound_time is not None:
            lines.append(f"compute {format_time(a.compute_time)}, memory {format_time(a.memory_time)}")
            lines.append(f"bound {format_time(a.bound_time)} ({a.limiter}-limited)")
        if a.link_time_s and a.attainable_rate is not None and a.compute_rate is not None and a.bandwidth is not None \
                and a.attainable_rate < min(a.compute_rate.value, a.intensity * a.bandwidth.value):
            lines.append(f"drawn below its roofs, at what its link bound allows ({format_time(a.link_time_s)}): "
                         "the link between chips is not a roof on this plot")
        lines.append(f"{a.flop:,} FLOP, {a.bytes:,} B" + (" (binary units)" if binary else ""))
        return "\n".join(lines)

    def set_plot_font(self, font: QFont) -> None:
        apply_plot_font(self.plot, font, [self.memory_label, self.ridge_label, self.message,
                                         *self.roof_labels.items, *self.point_labels.items, *self.level_labels.items])
        self.level_labels.make = lambda: with_font(tight_text(PlotLabel(anchor=(0, 1))), font)
        self.roof_labels.make = lambda: with_font(_roof_text(tight_text(PlotLabel(anchor=(1, 0)))), font)
        self.point_labels.make = lambda: with_font(tight_text(PlotLabel(anchor=(0, 0), color="#212121")), font)
        self._plot_font = QFont(font)
        self._fit_axis_title()
        self._place_labels()

    def _text_width(self, label: pg.TextItem, text: str) -> float:
        """The advance of `text` in the label's font, measured once per font and text (a layout asks often)."""
        font_key = label.font_key() if isinstance(label, PlotLabel) else label.textItem.font().key()
        return self._advance(font_key, text, label.textItem.font)

    def axis_titles(self) -> list[str]:
        """The x axis's title, longest first: the first that fits the axis's width at the label font is shown."""
        memory = self._axis_memory
        if self._axis_hierarchical:
            return [
                "Arithmetic intensity (FLOP per byte across each interface)",
                "Intensity (FLOP per byte across each interface)",
                "Intensity (FLOP/B per interface)",
                "FLOP/B per interface",
                "FLOP/B",
            ]
        return [
            f"Arithmetic intensity (FLOP/B, compulsory {memory} bytes)",
            f"Intensity (FLOP/B, compulsory {memory} bytes)",
            f"Intensity (FLOP per {memory} byte)",
            f"FLOP/B ({memory})",
        ]

    def _fit_axis_title(self, *_: object) -> None:
        """Show the longest x-axis title that fits the axis at the current text size (measured, not guessed)."""
        axis = self.plot.getAxis("bottom")
        font = getattr(self, "_plot_font", None) or QFont(self.font())
        metrics = QFontMetricsF(font)
        room = axis.width() - 2 * metrics.horizontalAdvance("0")
        titles = self.axis_titles()
        title = next((text for text in titles if metrics.horizontalAdvance(text) <= room), titles[-1])
        if axis.width() <= 0:
            title = titles[0]
        if title != self._axis_title:  # relabel only on a change: a label change relays the plot out
            self._axis_title = title
            axis.setLabel(title)
        shown = (title, font.key())
        if shown != getattr(self, "_axis_title_centred", None):
            # pyqtgraph centres the title on its axis only when the axis is resized, measured with the text (and
            # font) it had then: a longer title, or the presentation font, ran off the plot's right edge
            self._axis_title_centred = shown
            axis.resizeEvent()


# The further levels' roof labels when their full title finds no room beside the roof.


def _roof_text(item: pg.TextItem) -> pg.TextItem:
    """A roof label drawn above the roof lines, so one written on its roof hides the line under its text."""
    item.setZValue(5)
    return item


def _write_on_roof(item: PlotLabel, placement: Placement) -> None:
    """A roof label placed on its own roof gets a white ground that breaks the line under the text."""
    on_roof = placement.box is not None and placement.on_roof is not None
    if on_roof != (item.fill.style() != Qt.BrushStyle.NoBrush):
        item.set_ground(pg.mkBrush(255, 255, 255, 235) if on_roof else pg.mkBrush(None))
