"""The roofline's refresh: everything drawn afresh, or, when one operation's analysis or the selection is
all that changed, only that operation's marks moved or restyled in place (`_patch_edit`).

`RooflineRefresh` is a part of `RooflineView` (a mixin, gui/roofline_view.py): it reads the items and state the
view's `__init__` creates and calls the drawing, label and level parts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.model.analysis import Analysis
from workbench.model.devices import BANDWIDTH, Device
from workbench.model.devices.interfaces import HOST
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.roofline_records import Position, _Drawn, _PointFacts
from workbench.scenes.roofline import LevelPoint, Roof, RoofLevel, device_levels, device_roofs
from workbench.scenes.roofline_marks import marks_extent


class RooflineRefresh:
    """The refresh part of `RooflineView`: what is drawn from the document, and when all of it is."""

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
            others=marks_extent(others_x, others_y),
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
