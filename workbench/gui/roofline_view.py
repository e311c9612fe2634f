"""The roofline view: the current device's roofs with every declared operation on it.

Log-log: log10 of arithmetic intensity against log10 of attainable rate. The
memory roof rises to the highest compute roof; one compute roof per rate in
use, datasheet figures dashed and measured ones solid; the selected
operation's path and ridge point in red. Imported profiler kernels and
measured runs are drawn by their own layers (`profile_view`, `measure_plots`).
Where the labels, the ridge label and the legend go is decided by `workbench.scenes.roofline_scene`
(so none covers a point, a roof or another label); the view hands it what the plot shows and draws what it
returns. The view's own settings (range fixed or fitted, levels shown, label mode, legend corner) are a
`RooflineViewState`.

`RooflineView` builds the plot's items, its controls and its state, holds or
fits the view, and names a hovered point; its other jobs are its parts
(mixins, each reading the items and state built here): the refresh and the
one-operation patch (`roofline_refresh`), the roofs, range, ridge and marks
(`roofline_drawing`), the scene's labels drawn (`roofline_labels`), the legend
drawn and measured (`roofline_legend`) and the further memory levels (`roofline_levels`).
What they share is in `roofline_records`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont, QFontMetricsF, QMouseEvent
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from workbench.model.devices.interfaces import interface
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.measure_plots import MeasuredRooflineLayer
from workbench.gui.plain_text import tooltip
from workbench.gui.plot_common import (
    LEVEL_COLOURS,
    LEVEL_MARKS,
    MEMORY_COLOUR,
    SELECTED_COLOUR,
    LogAxis,
    with_font,
    intensity_tick,
    log_plot_widget,
    ItemPool,
    PlotLabel,
    SegmentItem,
    apply_plot_font,
    si_tick,
    tight_text,
)
from workbench.gui.plot_marks import MarkSet
from workbench.gui.profile_layer import ProfiledKernelLayer
from workbench.gui.roofline_drawing import RooflineDrawing
from workbench.gui.roofline_labels import RooflineLabels
from workbench.gui.roofline_legend import RooflineLegend
from workbench.gui.roofline_levels import RoofLevels
from workbench.gui.roofline_records import (
    LOWERED_COLOUR,
    LOWERED_PEN,
    LEADER_PEN,
    PlacedLabels,
    _Drawn,
    _PointFacts,
    _roof_text,
)
from workbench.gui.roofline_refresh import RooflineRefresh
from workbench.scenes.label_layout import Segment
from workbench.scenes.legend_corner import Corner
from workbench.scenes.roofline_range import ROOF_LABEL_ROOM
from workbench.scenes.roofline_scene import OPERATION_RADIUS, RooflineScene
from workbench.scenes.roofline_state import LABEL_MODES, LABELS_ALL, LABELS_NONE, LABELS_SELECTED, RooflineViewState
from workbench.scenes.roofline import LEVEL_KEYS, LevelPoint, RoofLevel, device_roofs, level_title
from workbench.documents.session import OperationEntry
from workbench.model.units import format_flop_rate, format_intensity, format_time

__all__ = [
    "FIT_SHORTCUT",
    "LABEL_MODES",
    "LABELS_ALL",
    "LABELS_NONE",
    "LABELS_SELECTED",
    "OPERATION_RADIUS",
    "ROOF_LABEL_ROOM",
    "RooflineView",
    "device_roofs",
]

FIT_SHORTCUT = "Ctrl+Shift+F"  # View ▸ Fit plot to data (Ctrl+0 is the normal text size)
HELD_TEXT = f"View held — {FIT_SHORTCUT} fits"
TIDY_AFTER_MS = 700  # after the last edit that held labels in place, they are laid out afresh (typing has paused)


class RooflineView(RooflineRefresh, RooflineDrawing, RooflineLabels, RooflineLegend, RoofLevels, RefreshWhenShown, QWidget):
    """Log-log roofline of the current device with every declared operation on it."""

    redraw_off_screen_windows = True  # a window never shown (scripts, tests) still draws its roofline on each change
    levels_changed = Signal(list)  # the interface keys switched off, after a toggle (the window saves them)

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.state = RooflineViewState()  # range fixed or fitted, levels shown, label mode, legend corner
        self._build_plot()
        self._build_layers(document)
        self._build_state()
        self._connect_view(document)
        self._build_controls()
        self._dirty = True
        document.analysis_changed.connect(self._analysis_changed)
        document.selection_changed.connect(lambda *_: RefreshWhenShown.mark_dirty(self))  # restyled: _patch_edit
        document.device_changed.connect(self.mark_dirty)
        document.operations_changed.connect(self._operations_changed)
        self.refresh()

    def _build_plot(self) -> None:
        """The plot widget, its axes, and the memory roof, ridge, operation marks and message items."""
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

    def _build_layers(self, document: Document) -> None:
        """The item pools of the roofs, labels and leaders, the further levels' and lowered roofs' items, and the
        imported kernels' and measured runs' layers (each redrawn when the document's profiles or runs change)."""
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

    def _build_state(self) -> None:
        """What the view keeps between refreshes and layouts, and the timer that lays held labels out afresh."""
        self._range: tuple[float, float, float, float] | None = None  # the range the data asks for
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
        self._level_segments: list[Segment] = []  # the further levels' roofs (their labels lie along them)
        self._level_segment_keys: list[str] = []  # the interface of each of those roofs
        self._level_marks: list[tuple[float, float]] = []  # the operations' points at further levels
        self._kernel_level_marks: list[tuple[float, float]] = []  # imported kernels at further levels
        self._level_tips: list[tuple[int, LevelPoint]] = []  # what each level point's tooltip names (built on hover)
        self.operation_levels: dict[int, list[LevelPoint]] = {}  # row -> the operation at every interface
        self._legend_rows: list[tuple[str, str, str]] = []
        self._legend_samples: list[Any] = []
        self.scene: RooflineScene | None = None  # the last scene drawn (its memory holds labels and legend still)
        self.label_layout: PlacedLabels | None = None  # the last layout, for tests and benchmarks
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
        self._ridge_text = ""  # its label's text

    def _connect_view(self, document: Document) -> None:
        """A resize, zoom or pan places the labels again (a zoom or pan by hand holds the view); the A button, a
        double-click and another session fit it."""
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

    def _build_controls(self) -> None:
        """The caption, the "view held" note, the row of memory-roof check boxes (with the View menu's actions
        mirroring them) and the tab's layout."""
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

    # ------------------------------------------------------------------ the view: fitted or held
    @property
    def view_held(self) -> bool:
        """True once the user zoomed or panned: edits then keep the view until a fit."""
        return self._held

    @property
    def _held(self) -> bool:
        return self.state.held

    @_held.setter
    def _held(self, held: bool) -> None:
        """Held: the range is the user's (the view box's now); not held: fitted to the data."""
        if held != self.state.held:
            (x_low, x_high), (y_low, y_high) = self.plot.getViewBox().viewRange()
            self.state = replace(self.state, fixed_range=(x_low, x_high, y_low, y_high) if held else None)

    @property
    def _hidden_levels(self) -> frozenset[str]:
        return self.state.hidden_levels

    @_hidden_levels.setter
    def _hidden_levels(self, keys: Iterable[str]) -> None:
        self.state = replace(self.state, hidden_levels=frozenset(keys))

    @property
    def _listed(self) -> set[str]:
        """The layout keys whose labels the legend lists for want of room."""
        return set(self.scene.memory.listed) if self.scene is not None else set()

    @property
    def _legend_corner(self) -> Corner | None:
        return self.scene.memory.legend_corner if self.scene is not None else None

    @property
    def _layout_context(self) -> tuple[Any, ...] | None:
        """What the last layout was made for: a layout for the same context keeps the labels whose points did not
        move where they are; None (set by a benchmark) lays the next one out whole."""
        return self.scene.memory.layout_context if self.scene is not None else None

    @_layout_context.setter
    def _layout_context(self, context: tuple[Any, ...] | None) -> None:
        if self.scene is not None:
            self.scene = replace(self.scene, memory=replace(self.scene.memory, layout_context=context))

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
