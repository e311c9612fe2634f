"""The roofline's roofs, fitted range, ridge and operation marks: the memory and compute roofs with their
labels' texts, each operation's lowered roof, the range fitted to every point with room for the roof labels,
the selected path's ridge, and which operations carry a label.

`RooflineDrawing` is a part of `RooflineView` (a mixin, gui/roofline_view.py): it draws into the items the
view's `__init__` creates."""

from __future__ import annotations

import math
from typing import Any, Sequence

import pyqtgraph as pg

from workbench.model.analysis import Analysis
from workbench.model.devices import BANDWIDTH, Device, Rate
from workbench.gui.plot_common import (
    GHOST_COLOUR,
    MEMORY_COLOUR,
    POINT_COLOUR,
    ROOF_COLOUR,
    SELECTED_COLOUR,
    STALE_COLOUR,
    point_brush,
    point_pen,
    is_assumed,
    roof_pen,
)
from workbench.gui.roofline_records import KERNEL_RADIUS, Position, _Drawn
from workbench.scenes.label_layout import Segment
from workbench.scenes.roofline import Roof, roof_names
from workbench.scenes.roofline_range import ROOF_REACH, fitted_range, label_room_end
from workbench.model.units import format_bandwidth, format_flop_rate, format_intensity


class RooflineDrawing:
    """The drawing part of `RooflineView`: roofs, range, ridge and the operations' marks."""

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
        (x_low, x_high, y_low, y_high), top = fitted_range(
            (low_x, high_x), low_y, ridges, [math.log10(roof.rate.value) for roof in roofs], math.log10(bandwidth))

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
                self._ridge_text = f"ridge {format_intensity(ridge)}"
                self.ridge_label.setText(self._ridge_text)
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
        largest by share of the session's time: the scene's choice, `roofline_scene.Operations.labelled`); only those get an item."""
        self._labelled = self._operations_drawn(drawn).labelled()
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
