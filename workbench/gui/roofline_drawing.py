"""The roofline's roofs, fitted range, ridge and operation marks: the roofs, lowered roofs, ridge and the marks'
styles as the scene decides them (`workbench.scenes.roofline_marks`, which the reports draw too), the range
fitted to every point with room for the roof labels, and which operations carry a label.

`RooflineDrawing` is a part of `RooflineView` (a mixin, gui/roofline_view.py): it draws into the items the
view's `__init__` creates."""

from __future__ import annotations

import math
from typing import Any, Sequence

import pyqtgraph as pg

from workbench.model.analysis import Analysis
from workbench.model.devices import BANDWIDTH
from workbench.gui.plot_common import colour_of, point_brush, point_pen, role_pen
from workbench.gui.roofline_records import Position, _Drawn
from workbench.scenes.roofline_scene import KERNEL_RADIUS
from workbench.scenes.plot_style import MARKS, pen_colour, point_role
from workbench.scenes.roofline_marks import PlacedOperation, RoofMark, lowered_mark, ridge_mark, roof_marks
from workbench.scenes.roofline_range import ROOF_REACH, fitted_range, label_room_end


class RooflineDrawing:
    """The drawing part of `RooflineView`: roofs, range, ridge and the operations' marks."""

    def _fit(self, drawn: "_Drawn", current_analysis: Analysis | None) -> tuple[float, float, float, float, float, float]:
        """The range fitted to the points (every operation's, the kernels' and the runs'), the roofs drawn where
        what they show changed, and the selected path's ridge: (x_low, x_high, y_low, y_high, where the roofs
        start, the top roof's height)."""
        device, roofs, ridges, binary = drawn.device, drawn.roofs, drawn.ridges, drawn.binary
        assert device is not None
        bandwidth = device.bandwidth.value
        (others_low_x, others_high_x), (others_low_y, others_high_y) = drawn.others
        low_x = min(float(drawn.xs.min(initial=math.inf)), float(drawn.extra_xs.min(initial=math.inf)), others_low_x)
        high_x = max(float(drawn.xs.max(initial=-math.inf)), float(drawn.extra_xs.max(initial=-math.inf)), others_high_x)
        low_y = min(float(drawn.ys.min(initial=math.inf)), others_low_y)
        (x_low, x_high, y_low, y_high), top = fitted_range(
            (low_x, high_x), low_y, ridges, [math.log10(roof.rate.value) for roof in roofs], math.log10(bandwidth),
            others_high_y)

        used_path = current_analysis.path if current_analysis is not None else None
        bw_rate = device.overrides.get(BANDWIDTH) or device.peak[BANDWIDTH]
        start = x_low - ROOF_REACH
        # Most edits move points, not roofs: the roofs are worked out (by the scene, as the reports' are) and drawn
        # again only when what they show changes.
        roofs_shown = (roofs, bw_rate, device.peak.get(BANDWIDTH), device.memory_name, binary, used_path, start, x_high,
                       drawn.hbm_shown, tuple(drawn.further))
        if roofs_shown != self._roofs_shown:
            self._roofs_shown = roofs_shown
            self._draw_roofs(roof_marks(device, roofs, ridges, drawn.further, drawn.hbm_shown, used_path, start, x_high,
                                        top, binary), device.memory_name, bool(drawn.further))
        labels = self.roof_labels.take(len(roofs))
        self._roof_heights = [math.log10(roof.rate.value) for roof in roofs]
        self._roof_starts = list(ridges)
        rightmost = high_x if high_x > -math.inf else x_low
        self._label_room_inputs = (labels, x_low, x_high, rightmost)
        x_high = self._room_for_roof_labels(*self._label_room_inputs)

        # ridge point of the selected operation's path (against the HBM roof: shown with it)
        ridge, line, text = ridge_mark(current_analysis if drawn.hbm_shown else None, y_low, y_high)
        if ridge is not None and line is not None:
            self.ridge_line.setData([line[0], line[2]], [line[1], line[3]])
            if ridge != self._ridge:  # it moves only with the selected operation's path
                self.ridge_marker.setData([ridge[0]], [ridge[1]])
                self._ridge_text = text
                self.ridge_label.setText(text)
        self._ridge = ridge  # its label is placed at the bottom of the view
        for item in (self.ridge_line, self.ridge_marker):
            item.setVisible(ridge is not None)
        return x_low, x_high, y_low, y_high, start, top

    def _operation_spot(self, row: int, position: Position, stale: bool) -> dict[str, Any]:
        """An operation's mark in the scene's style (`plot_style.MARKS`): red and larger when selected, hollow grey
        when stale."""
        mark = MARKS[point_role(None, row == self.document.current, stale)]
        return {
            "pos": position,
            "size": mark.size,
            "pen": point_pen(colour_of(mark.edge)),  # the same pen object each time: the symbol atlas keys on it
            "brush": point_brush("w" if mark.fill is None else colour_of(mark.fill)),
            "data": row,
        }

    def _show_point_labels(self, drawn: "_Drawn") -> None:
        """Which operations carry a label (all of a small session; of a large one the selected, the pinned and the
        largest by share of the session's time: the scene's choice, `roofline_scene.Operations.labelled`); only those get an item."""
        self._labelled = self._operations_drawn(drawn).labelled()
        chosen = [drawn.placed[index] for index in self._labelled]
        texts = self.point_labels.take(len(chosen))
        for (row, a, stale), text in zip(chosen, texts):
            name = self.document.operations[row].name + (" (stale)" if stale else "")
            colour = colour_of("stale" if stale else "selected" if row == self.document.current else "label")
            if (name, colour) != getattr(text, "_shown", None):  # most labels keep their text and colour
                text._shown = (name, colour)
                text.setText(name, color=colour)

    def _draw_lowered_roofs(
        self, placed: Sequence[tuple[int, Analysis, bool]], positions: dict[int, Position], start: float, top: float, binary: bool
    ) -> None:
        """Each operation's lowered roof (its loads in flight allow less than the memory), dashed, named at its left,
        rising until its own path's compute roof (the roofs above are not that kernel's)."""
        lowered = [(row, a, stale, roof) for row, a, stale in placed if (roof := self._facts_of(a).lowered) is not None]
        lines = self.lowered_lines.take(len(lowered))
        labels = self.lowered_labels.take(len(lowered))
        self._lowered_segments = []
        for (row, a, stale, roof), line, label in zip(lowered, lines, labels):
            operation = PlacedOperation(row, self.document.operations[row].name, a, stale)
            mark = lowered_mark(operation, roof, positions[row], start, top, binary)
            x1, y1, x2, y2 = mark.segment
            line.setData([x1, x2], [y1, y2])
            self._lowered_segments.append(mark.segment)
            label.setText(mark.text)
            label.setPos(*mark.at)

    def _draw_roofs(self, marks: Sequence[RoofMark], memory_name: str, hierarchical: bool) -> None:
        """The roofs the scene worked out (`roofline_marks.roof_marks`): the memory roof (hidden with the HBM level
        switched off), one compute roof per rate in use, one roof per further level, the datasheet ghosts, and
        their labels' texts; every roof line kept for the label layout."""
        by_key = {mark.key: mark for mark in marks}
        memory, ghost = by_key.get("memory"), by_key.get("ghost memory")
        self.memory_line.setVisible(memory is not None)  # hidden while a device had no bandwidth, or HBM is off
        self.memory_ghost.setVisible(ghost is not None)
        if memory is None:
            self.memory_label.setVisible(False)
        for item, mark in ((self.memory_line, memory), (self.memory_ghost, ghost)):
            if mark is not None:
                item.setData([mark.segment[0], mark.segment[2]], [mark.segment[1], mark.segment[3]])
                item.setPen(role_pen(mark.role, mark.dashed))
        self._roof_texts = {mark.key: (mark.full, mark.short) for mark in marks if mark.labelled}
        if memory is not None:
            self.memory_label.setText(memory.full)
        self._memory_segment = memory.segment if memory is not None else None
        if memory_name != self._axis_memory:  # relabel only on a change: a label change relays the plot out
            self._axis_memory = memory_name
            self._fit_axis_title()
        compute = [mark for mark in marks if mark.key.startswith("roof ")]
        for mark, line, label in zip(compute, self.roof_lines.take(len(compute)), self.roof_labels.take(len(compute))):
            self._draw_line(line, mark)
            selected = mark.role == "compute selected"
            line.setZValue(2 if selected else 1)
            label.setText(mark.full, color=pen_colour(mark.role))
        ghosts = [mark for mark in marks if mark.key.startswith("ghost roof ")]
        for mark, line in zip(ghosts, self.ghost_lines.take(len(ghosts))):
            self._draw_line(line, mark)
        levels = [mark for mark in marks if mark.role.startswith("level ")]
        for mark, line, label in zip(levels, self.level_lines.take(len(levels)), self.level_labels.take(len(levels))):
            self._draw_line(line, mark)
            label.setText(mark.full, color=pen_colour(mark.role))
        level_ghosts = [mark for mark in marks if mark.key.startswith("ghost memory ")]
        for mark, line in zip(level_ghosts, self.level_ghosts.take(len(level_ghosts))):
            self._draw_line(line, mark)
        self._level_segments = [mark.segment for mark in levels]
        self._level_segment_keys = [mark.key.split(" ", 1)[1] for mark in levels]
        others = [mark.segment for mark in marks if not mark.key.startswith(("memory ", "ghost memory "))]
        self._roof_segments = others + [mark.segment for mark in level_ghosts] + self._level_segments
        if hierarchical != self._axis_hierarchical:  # refit only on a change: a label change relays the plot out
            self._axis_hierarchical = hierarchical
            self._fit_axis_title()

    @staticmethod
    def _draw_line(line: Any, mark: RoofMark) -> None:
        x1, y1, x2, y2 = mark.segment
        line.setData([x1, x2], [y1, y2])
        line.setPen(role_pen(mark.role, mark.dashed))

    def _room_for_roof_labels(self, labels: Sequence[pg.TextItem], x_low: float, x_high: float, rightmost: float) -> float:
        """The fitted range's right end with room for the widest compute roof label, measured in the labels' font
        (`workbench.scenes.roofline_range.label_room_end`)."""
        width = self.plot.getViewBox().width()
        texts = [self._roof_texts.get(f"roof {index}", (label.toPlainText(),) * 2) for index, label in enumerate(labels)]
        need = max((self._text_width(label, full) for label, (full, _) in zip(labels, texts)), default=0.0) + 2 * KERNEL_RADIUS
        return label_room_end(width, need, rightmost, self._roof_starts, x_low, x_high)

    _label_room_inputs: tuple[Any, ...] | None = None  # what the last refresh measured the label room from
    _refreshing = False  # a full refresh is setting the range: it lays the labels out itself, once, after
    # Another session shown: its first refresh lays the labels out afresh at once (nothing of the last session's
    # layout is kept, and no tidy-up follows it).
    _fresh_layout = False

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
