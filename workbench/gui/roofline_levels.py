"""The roofline's further memory levels: the operations' points at each level's intensity (their roofs are the
scene's, drawn with the others: `roofline_drawing`), imported kernels' stars at the levels ncu counted, and the
controls that switch levels on and off.

`RoofLevels` is a part of `RooflineView` (a mixin): it draws into the view's plot and reads the items and state
the view's `__init__` creates — `plot`, `level_points`, `level_connector`, `kernel_levels`, `level_boxes`,
`level_actions`, `_levels`, `_hidden_levels` — and the view's `document`, `levels_changed` and `mark_dirty`.
"""

from __future__ import annotations

from typing import Any, Sequence

import pyqtgraph as pg

from workbench.model.devices import BANDWIDTH
from workbench.model.devices.interfaces import interface
from workbench.gui.plot_common import LEVEL_COLOURS, LEVEL_MARKS, LEVEL_SYMBOLS, colour_of, point_brush, point_pen
from workbench.gui.plain_text import tooltip
from workbench.scenes.plot_style import MARKS, point_role
from workbench.scenes.roofline import LEVEL_KEYS, LevelPoint, RoofLevel
from workbench.model.units import format_flop_rate, format_intensity


class RoofLevels:
    """The further levels of a `RooflineView` (see the module text for what it reads from the view)."""

    def _show_level_points(
        self, extra: Sequence[tuple[int, bool, LevelPoint, tuple[float, float]]], positions: dict[int, tuple[float, float]]
    ) -> None:
        """The operations at the further interfaces: the level's symbol in its colour, filled for the selected one.

        Pens and brushes are one object per colour (`point_pen`: pyqtgraph's symbol atlas renders each new pen
        object anew), and the scatter is set only when a spot changed: an edit moves one operation's points at
        most. A tooltip is written when its point is hovered (`_level_tips` holds what it names)."""
        current = self.document.current
        spots = []
        self._level_marks = []
        self._level_tips = []
        for row, stale, point, position in extra:
            spots.append(_level_spot(row == current, stale, point, position, len(self._level_tips)))
            self._level_marks.append(position)
            self._level_tips.append((row, point))
        if spots != self._shown_level_spots:
            self._shown_level_spots = spots
            self.level_points.setData([_spot_dict(spot) for spot in spots])
        # the selected operation's points joined at their common height, so they read as one operation
        xs = [x for (row, _, _, _), (x, _) in zip(extra, self._level_marks) if row == current]
        if current in positions and xs:
            self._join_level_points(xs, positions[current])
        self.level_connector.setVisible(current in positions and bool(xs))

    def _patch_level_points(
        self, first: int, extra: Sequence[tuple[int, bool, LevelPoint, tuple[float, float]]], position: tuple[float, float]
    ) -> None:
        """One operation's points at the further interfaces moved (an edit): `extra` (its points, as many as before)
        replaces those from `first` on; only their spots are set again; `position` is its point at HBM."""
        current = self.document.current
        shown = self._shown_level_spots
        whole = shown is None
        for offset, (row, stale, point, at) in enumerate(extra):
            index = first + offset
            spot = _level_spot(row == current, stale, point, at, index)
            self._level_marks[index] = at
            self._level_tips[index] = (row, point)
            if shown is not None and shown[index] != spot:
                shown[index] = spot
                whole = whole or not self.level_points.patch(index, _spot_dict(spot))
        if whole and shown is not None:
            self.level_points.setData([_spot_dict(spot) for spot in shown])
        if extra and extra[0][0] == current:
            self._join_level_points([at[0] for _, _, _, at in extra], position)

    def _join_level_points(self, xs: list[float], position: tuple[float, float]) -> None:
        """The dotted line through the selected operation's points (`xs` at the further levels, `position` at HBM)."""
        x, y = position
        xs = [*xs, x]
        ends = ([min(xs), max(xs)], [y, y])
        if ends != self._level_connector_ends:
            self._level_connector_ends = ends
            self.level_connector.setData(*ends)

    _shown_level_spots: list[tuple[Any, ...]] | None = None  # what the level scatter holds (setData is skipped when equal)
    _level_connector_ends: tuple[list[float], list[float]] | None = None

    def _show_kernel_levels(self, marks: Sequence[Any], further_keys: set[str]) -> None:
        """Each imported kernel's stars at the further levels shown: same rate, FLOP over the bytes counted there."""
        spots = []
        self._kernel_level_tips = []
        self._kernel_level_marks = []
        current = self.document.current
        for mark in marks:
            for key, x in mark.levels:
                if key not in further_keys:
                    continue
                colour = LEVEL_COLOURS[key]
                spots.append(
                    {
                        "pos": (x, mark.y),
                        "size": 16 if mark.operation == current else 12,
                        "pen": pg.mkPen(colour, width=1.5),
                        "brush": pg.mkBrush(255, 255, 255, 230),
                        "data": len(self._kernel_level_tips),
                    }
                )
                self._kernel_level_marks.append((x, mark.y))
                title = interface(key).name
                first = mark.tip.split("\n", 1)[0]
                source = dict(mark.level_sources).get(key, "")
                self._kernel_level_tips.append(
                    f"{first}\nat {title}: intensity {format_intensity(10 ** x)} "
                    f"(the kernel's FLOP over the bytes ncu counted across {title})"
                    + (f"\nbytes: {source}" if source else "")
                )
        if spots or self._kernel_level_count:  # no kernels before and none now: nothing to set (most edits)
            self._kernel_level_count = len(spots)
            self.kernel_levels.setData(spots)

    _kernel_level_count = 0  # stars the kernel-level scatter holds

    def _kernel_level_hovered(self, item: Any, points: Any, event: Any) -> None:
        tips = [self._kernel_level_tips[int(p.data())] for p in list(points)[:3] if 0 <= int(p.data()) < len(self._kernel_level_tips)]
        self.kernel_levels.setToolTip(tooltip("\n\n".join(tips)))

    def _level_tip(self, row: int, point: LevelPoint) -> str:
        entry = self.document.operations[row]
        title = interface(point.key).name
        return "\n".join(
            [
                f"{entry.name} at {title}",
                f"intensity {format_intensity(point.intensity)} ({point.flop:,} FLOP over {point.bytes:,} B across {title})",
                f"attainable {format_flop_rate(point.rate or 0.0)} (every roof applied)",
            ]
        )

    def _level_hovered(self, data: Sequence[Any]) -> None:
        tips = [self._level_tip(*self._level_tips[int(datum)])
                for datum in list(data)[:3] if 0 <= int(datum) < len(self._level_tips)]
        self.plot.getViewBox().setToolTip(tooltip("\n\n".join(tips)))

    # ------------------------------------------------------------------ levels on and off
    def _show_level_choices(self, levels: Sequence[RoofLevel]) -> None:
        """A check box (and an enabled View-menu action) for every interface the device has a rate for."""
        have = {level.key for level in levels}
        memory = next((level.title for level in levels if level.key == BANDWIDTH), "HBM")
        self.level_boxes[BANDWIDTH].setText(f"{LEVEL_MARKS[BANDWIDTH]} {memory}")  # 'DRAM' on a GDDR card or a CPU
        if have == {level.key for level in self._levels} and len(levels) == len(self._levels):
            self._levels = list(levels)
            return
        self._levels = list(levels)
        for key in LEVEL_KEYS:
            self.level_boxes[key].setVisible(key in have and len(have) > 1)
            self.level_actions[key].setEnabled(key in have)
        self.levels_title.setVisible(len(have) > 1)  # no caption over an empty row (a CPU: one memory level)

    @property
    def hidden_levels(self) -> tuple[str, ...]:
        """Interface keys switched off, in registry order (the window keeps them in QSettings)."""
        return tuple(key for key in LEVEL_KEYS if key in self._hidden_levels)

    @property
    def shown_levels(self) -> tuple[str, ...]:
        """The interface keys drawn now: every level the device has a rate for that is not switched off."""
        return tuple(level.key for level in self._levels if level.key not in self._hidden_levels)

    def set_hidden_levels(self, keys: Sequence[str]) -> None:
        """Switch these levels off and every other on (unknown keys, from an older settings file, are ignored)."""
        hidden = {key for key in keys if key in LEVEL_KEYS}
        for key in LEVEL_KEYS:
            self._sync_level_controls(key, key not in hidden)
        if hidden != self._hidden_levels:
            self._hidden_levels = hidden
            self.levels_changed.emit(list(self.hidden_levels))
            self.mark_dirty()

    def set_level_shown(self, key: str, shown: bool) -> None:
        """Toggle one level: its roof and the operations' points at its intensity."""
        if key not in LEVEL_KEYS:
            raise ValueError(f"unknown roofline level {key!r}")
        self._sync_level_controls(key, shown)
        hidden = (self._hidden_levels - {key}) if shown else (self._hidden_levels | {key})
        if hidden != self._hidden_levels:
            self._hidden_levels = hidden
            self.levels_changed.emit(list(self.hidden_levels))
            self.mark_dirty()

    def _sync_level_controls(self, key: str, shown: bool) -> None:
        for control in (self.level_boxes[key], self.level_actions[key]):
            if control.isChecked() != shown:
                control.blockSignals(True)
                control.setChecked(shown)
                control.blockSignals(False)


def _level_spot(selected: bool, stale: bool, point: LevelPoint, position: tuple[float, float], index: int) -> tuple[Any, ...]:
    """An operation's point at a further interface in the scene's style (`plot_style.MARKS`): that level's symbol
    in its colour, filled for the selected one; (position, size, symbol, pen, brush, data: its index in the
    tooltips)."""
    mark = MARKS[point_role(point.key, selected, stale)]
    return (
        position,
        mark.size,
        LEVEL_SYMBOLS[point.key],
        point_pen(colour_of(mark.edge)),
        point_brush("w" if mark.fill is None else colour_of(mark.fill)),
        index,
    )


def _spot_dict(spot: tuple[Any, ...]) -> dict[str, Any]:
    pos, size, symbol, pen, brush, data = spot
    return {"pos": pos, "size": size, "symbol": symbol, "pen": pen, "brush": brush, "data": data}
