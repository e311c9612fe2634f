"""The roofline's roofs and points as data: `roofline_marks(device, operations, state, current)` decides every roof
(its ends in log10 data coordinates, its label's full and short texts, its pen's role), every operation's points at
each memory level shown (NumPy arrays: position, operation, level, selected, stale, mark role), each operation's
lowered roof, the selected path's ridge and the axes' range; the window and the reports draw what it returns, and
tests read it without Qt.

What the roofline shows (`workbench.scenes.roofline`): the memory roof of each interface shown, rising until the
highest compute roof (the HBM roof until the last ridge); one compute roof per rate in use, from its ridge to
`ROOF_REACH` decades past the fitted range; datasheet figures under an override as faint ghosts; each operation
at every interface shown, the point at HBM (or the first level shown) carrying its label. The range fits every
point, the ridges and the roofs, with room right of the points for the compute roofs' labels
(`roofline_range`); a range the user fixed (`RooflineViewState.fixed_range`) is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from workbench.model.devices import BANDWIDTH, Device
from workbench.model.devices.interfaces import HOST
from workbench.model.units import format_bandwidth, format_flop_rate, format_intensity
from workbench.scenes.label_layout import Box, PixelView, Segment
from workbench.scenes.roofline import (
    LEVEL_KEYS,
    LoweredRoof,
    Position,
    Roof,
    RoofLevel,
    device_levels,
    device_roofs,
    is_assumed,
    shown_level_points,
    lowered_roof,
    operation_levels,
    roof_names,
)
from workbench.scenes.roofline_range import ROOF_REACH, fitted_range, label_room_end
from workbench.scenes.roofline_scene import Measure, Operations, RoofText, RooflineInputs
from workbench.scenes.roofline_state import RooflineViewState, ViewRange

LEVEL_SHORT_NAMES = {"l2": "L2", "smem": "Shared mem.", "host": "Host link"}
ROOF_LABEL_AIR = 20.0  # pixels right of the widest compute roof label the fitted range leaves (a kernel's mark)


@dataclass(frozen=True)
class PlacedOperation:
    """An operation the roofline may draw: its row in the session, name, analysis (None: not analysed) and whether
    it is stale (its declaration has an error; the analysis is its last good one)."""

    row: int
    name: str
    analysis: Any
    stale: bool = False


@dataclass(frozen=True)
class RoofMark:
    """A roof line: its label's layout key ("memory", "memory l2", "roof 0"; a ghost's is "ghost " + its roof's),
    its ends in log10 coordinates, its label's full and short texts (a ghost has none), its pen's role
    (`plot_style.PENS`), whether it is dashed (its rate is an assumption) and whether its label is placed."""

    key: str
    segment: Segment
    full: str
    short: str
    role: str
    dashed: bool
    labelled: bool = True


@dataclass(frozen=True)
class LoweredMark:
    """An operation's own memory roof below the device's (loads in flight): its row, the line, its label's text and
    the point its label's bottom left sits at (left of the operation's point, on the line)."""

    row: int
    segment: Segment
    text: str
    at: Position


@dataclass(frozen=True)
class PointMarks:
    """Every operation's points, one row per point (arrays of equal length): position (log10), the operation's row
    in the session, its interface (`LEVEL_KEYS` index), whether it is the operation's labelled point (at HBM, or
    the first level shown), selected or stale."""

    xs: np.ndarray
    ys: np.ndarray
    rows: np.ndarray
    levels: np.ndarray
    primary: np.ndarray
    selected: np.ndarray
    stale: np.ndarray

    def __len__(self) -> int:
        return len(self.xs)

    def roles(self) -> list[str]:
        """Each point's mark role (`plot_style.point_role`): 'operation', 'operation selected', 'operation stale'
        for a labelled point, 'level l2', 'level l2 selected', 'level l2 stale' for one at a further level."""
        keys = np.array(LEVEL_KEYS)[self.levels]
        base = np.where(self.primary, "operation", np.char.add("level ", keys))
        suffix = np.char.add(np.where(self.selected, " selected", ""), np.where(self.stale, " stale", ""))
        return [str(role) for role in np.char.add(base, suffix)]


@dataclass(frozen=True)
class RooflineMarks:
    """What the roofline draws besides labels: its roofs (the selected path's last), lowered roofs, points, the
    dotted line joining the selected operation's points, the ridge, and the range. `operations` lists the
    operations drawn (rows, names, stale, bound times, labelled positions) in the order the scene reads them."""

    range: ViewRange
    fitted: ViewRange
    start: float  # log intensity where the memory roofs start
    top: float  # log rate of the highest compute roof
    roofs: tuple[RoofMark, ...]
    lowered: tuple[LoweredMark, ...]
    points: PointMarks
    connector: Segment | None
    ridge: Position | None
    ridge_line: Segment | None
    ridge_text: str
    rows: tuple[int, ...]
    names: tuple[str, ...]
    stale: tuple[bool, ...]
    positions: tuple[Position, ...]
    times: np.ndarray
    current: int
    further_keys: tuple[str, ...]  # the levels beyond HBM shown (the x axis then counts bytes per interface)
    memory_name: str = "HBM"  # the device's memory ('DRAM' on a GDDR card or a CPU)

    def operations(self, pins: Sequence[int] = ()) -> Operations:
        """The operations drawn as the label scene reads them (`pins`: rows whose labels the user pinned)."""
        wanted = set(pins)
        pinned = [index for index, row in enumerate(self.rows) if row in wanted]
        return Operations(list(self.rows), list(self.positions), list(self.names), list(self.stale), self.times,
                          self.current, pinned)

    def scene_inputs(self, view: PixelView, measure: Measure | None = None, pins: Sequence[int] = ()) -> RooflineInputs:
        """The label scene's inputs in `view`: the labelled roofs, every line labels keep off, the operations, their
        points at further levels, the ridge, and the lowered roofs' labels' boxes (measured with `measure`)."""
        roofs = [RoofText(roof.key, roof.segment, roof.full, roof.short, memory=roof.key.startswith("memory"))
                 for roof in self.roofs if roof.labelled]
        lines = [roof.segment for roof in self.roofs] + [mark.segment for mark in self.lowered]
        further = ~self.points.primary
        level_marks = list(zip(self.points.xs[further].tolist(), self.points.ys[further].tolist()))
        boxes: list[Box] = []
        if measure is not None:
            for mark in self.lowered:
                w, h = measure.label(mark.text)
                x, y = view.px(mark.at[0]), view.py(mark.at[1])
                boxes.append((x, y - h, x + w, y))
        return RooflineInputs(view, roofs, lines, self.operations(pins), lowered_label_marks=boxes, ridge=self.ridge,
                              ridge_text=self.ridge_text, level_marks=level_marks)


# The least and greatest log intensity, and the least and greatest log rate, of marks besides the operations'
Extent = tuple[tuple[float, float], tuple[float, float]]
NO_OTHERS: Extent = ((math.inf, -math.inf), (math.inf, -math.inf))


def marks_extent(xs: Sequence[float], ys: Sequence[float]) -> Extent:
    """The extent of marks at log intensities `xs` and log rates `ys` (bars' ends among them): what the window's
    and the report's ranges must show besides the operations."""
    return (min(xs, default=math.inf), max(xs, default=-math.inf)), (min(ys, default=math.inf), max(ys, default=-math.inf))


@dataclass(frozen=True)
class OtherMark:
    """A mark besides the operations' (a measured run, an imported kernel): its place (log10), its look's role
    (`plot_style.MARKS`), its spread bar's ends in log rate (a run's p10–p90; None: no bar) and pen role, the label
    beside it ('' for none), and the point a dotted line joins it to (a kernel's operation's; None: no line)."""

    x: float
    y: float
    role: str
    low: float | None = None
    high: float | None = None
    bar: str = ""
    label: str = ""
    link: Position | None = None


@dataclass(frozen=True)
class OtherMarks:
    """The marks besides the operations' the roofline draws, and the legend's row for each kind present: (the
    mark role of its sample, its text), in order."""

    marks: tuple[OtherMark, ...] = ()
    legend: tuple[tuple[str, str], ...] = ()

    def extent(self) -> tuple[tuple[float, float], float]:
        """The least and greatest log intensity and the least and greatest log rate the range must show
        (`roofline_marks`' `others`): every mark, and each bar's ends."""
        ends = [end for mark in self.marks for end in (mark.low, mark.high) if end is not None]
        return marks_extent([mark.x for mark in self.marks], [*(mark.y for mark in self.marks), *ends])


def placeable(analysis: Any) -> bool:
    """Whether an analysis has a place on the roofline: FLOP, bytes and an attainable rate."""
    return analysis is not None and analysis.flop > 0 and analysis.bytes > 0 and analysis.attainable_rate is not None


def roofline_marks(
    device: Device,
    operations: Sequence[PlacedOperation],
    state: RooflineViewState = RooflineViewState(),
    current: int = -1,
    binary: bool = False,
    width: float = 0.0,
    text_width: Callable[[str], float] | None = None,
    others: Extent = NO_OTHERS,
) -> RooflineMarks:
    """The roofs, points, ridge and range of `operations` on `device` in `state` (levels hidden, range fixed),
    operation row `current` selected, bytes in `binary` units. `width`: the plot's width in pixels, and
    `text_width`: a compute roof label's width in pixels, for the room the range leaves right of the points for
    those labels; `others`: the least and greatest log intensity and log rate of other marks the range must show
    (imported kernels, measured runs)."""
    bandwidth = device.bandwidth.value
    log_bw = math.log10(bandwidth)
    roofs = device_roofs(device)
    ridges = [math.log10(roof.rate.value / bandwidth) for roof in roofs]
    placed = [operation for operation in operations if placeable(operation.analysis)]
    levels_of = [operation_levels(operation.analysis) for operation in placed]
    host_used = any(term.name == HOST for operation in placed for term in operation.analysis.terms)
    levels = [level for level in device_levels(device) if level.key != HOST or host_used]
    hidden = state.hidden_levels
    hbm_shown = BANDWIDTH not in hidden
    further = [level for level in levels if level.key != BANDWIDTH and level.key not in hidden]
    shown = frozenset({level.key for level in further} | ({BANDWIDTH} if hbm_shown else set()))
    points, drawn, positions = _points(placed, levels_of, shown, current)
    (x_low, x_high, y_low, y_high), top = _fit(points, roofs, ridges, log_bw, others)
    start = x_low - ROOF_REACH
    current_analysis = next((op.analysis for op in operations if op.row == current), None)
    used_path = current_analysis.path if current_analysis is not None else None
    marks = roof_marks(device, roofs, ridges, further, hbm_shown, used_path, start, x_high, top, binary)
    labels = [roof.full for roof in marks if roof.key.startswith("roof ")]
    need = max((text_width(text) for text in labels), default=0.0) + ROOF_LABEL_AIR if text_width else 0.0
    high_x = float(points.xs.max(initial=-math.inf))
    rightmost = max(high_x, others[0][1]) if max(high_x, others[0][1]) > -math.inf else x_low
    x_end = label_room_end(width, need, rightmost, ridges, x_low, x_high)
    fitted = (x_low, x_end, y_low, y_high)
    ridge, ridge_line, ridge_text = ridge_mark(current_analysis if hbm_shown else None, y_low, y_high)
    # the selected roof drawn last, over the others
    marks.sort(key=lambda roof: roof.role == "compute selected")
    return RooflineMarks(
        range=state.fixed_range if state.fixed_range is not None else fitted, fitted=fitted, start=start, top=top,
        roofs=tuple(marks), lowered=tuple(_lowered(drawn, positions, start, top, binary)), points=points,
        connector=_connector(points), ridge=ridge, ridge_line=ridge_line, ridge_text=ridge_text,
        rows=tuple(op.row for op in drawn), names=tuple(op.name for op in drawn),
        stale=tuple(op.stale for op in drawn), positions=tuple(positions[op.row] for op in drawn),
        times=np.array([op.analysis.bound_time or 0.0 for op in drawn], dtype=float), current=current,
        further_keys=tuple(level.key for level in further), memory_name=device.memory_name,
    )


def _points(
    placed: Sequence[PlacedOperation], levels_of: Sequence[Any], shown: frozenset[str], current: int
) -> tuple[PointMarks, list[PlacedOperation], dict[int, Position]]:
    """Every operation's points at the levels shown (its labelled point first), the operations with a point, and
    each one's labelled point by row."""
    order = {key: index for index, key in enumerate(LEVEL_KEYS)}
    xs: list[float] = []
    ys: list[float] = []
    rows: list[int] = []
    levels: list[int] = []
    primary: list[bool] = []
    stale: list[bool] = []
    drawn: list[PlacedOperation] = []
    positions: dict[int, Position] = {}
    for operation, levels_at in zip(placed, levels_of):
        points = shown_level_points(levels_at, shown)
        if not points:
            continue
        drawn.append(operation)
        positions[operation.row] = points[0][1]
        for index, (point, (x, y)) in enumerate(points):
            xs.append(x)
            ys.append(y)
            rows.append(operation.row)
            levels.append(order[point.key])
            primary.append(index == 0)
            stale.append(operation.stale)
    row_array = np.array(rows, dtype=int)
    marks = PointMarks(np.array(xs, dtype=float), np.array(ys, dtype=float), row_array, np.array(levels, dtype=int),
                       np.array(primary, dtype=bool), row_array == current, np.array(stale, dtype=bool))
    return marks, drawn, positions


def _fit(points: PointMarks, roofs: Sequence[Any], ridges: Sequence[float], log_bw: float,
         others: Extent) -> tuple[ViewRange, float]:
    """The range fitted to every point and the other marks, and the top roof's height (`fitted_range`)."""
    (other_low, other_high), (other_bottom, other_top) = others
    labelled_ys = points.ys[points.primary]
    low_x = min(float(points.xs.min(initial=math.inf)), other_low)
    high_x = max(float(points.xs.max(initial=-math.inf)), other_high)
    low_y = min(float(labelled_ys.min(initial=math.inf)), other_bottom)
    return fitted_range((low_x, high_x), low_y, ridges, [math.log10(roof.rate.value) for roof in roofs], log_bw,
                        other_top)


def roof_marks(device: Device, roofs: Sequence[Roof], ridges: Sequence[float], further: Sequence[RoofLevel],
               hbm_shown: bool, used_path: str | None, start: float, x_high: float, top: float,
               binary: bool) -> list[RoofMark]:
    """Every roof drawn: the memory roof (with `hbm_shown`) up to the last of `ridges`, the compute `roofs` from
    their ridges to `ROOF_REACH` decades past `x_high` (the selected operation's path, `used_path`, in the
    selected role), a roof per `further` level rising from `start` to the top compute roof's height `top`, and
    the datasheet ghosts beneath overrides; in that order, each roof's ghost after it."""
    bandwidth = device.bandwidth.value
    return [*_memory_roofs(device, hbm_shown, ridges, x_high, start, binary),
            *_compute_roofs(roofs, ridges, used_path, x_high, bandwidth), *_level_roofs(further, start, top, binary)]


def _memory_roofs(device: Device, shown: bool, ridges: Sequence[float], x_high: float, start: float,
                  binary: bool) -> list[RoofMark]:
    """The memory roof up to the last ridge, and its datasheet ghost beneath an override (none when switched off)."""
    if not shown:
        return []
    rate = device.bandwidth
    log_bw = math.log10(rate.value)
    end = max(ridges) if ridges else x_high
    text = f"{device.memory_name} {format_bandwidth(rate.value, binary)}"
    marks = [RoofMark("memory", (start, log_bw + start, end, log_bw + end), f"{text} ({rate.source})", text, "memory",
                      is_assumed(rate))]
    ghost = device.peak.get(BANDWIDTH) if BANDWIDTH in device.overrides else None
    if ghost is not None:
        g = math.log10(ghost.value)
        marks.append(RoofMark("ghost memory", (start, g + start, end, g + end), "", "", "ghost", is_assumed(ghost),
                              labelled=False))
    return marks


def _compute_roofs(roofs: Sequence[Any], ridges: Sequence[float], used_path: str | None, x_high: float,
                   bandwidth: float) -> list[RoofMark]:
    """One roof per compute rate in use from its ridge on (the selected operation's path in the selected role),
    named by its paths and rate (and source, where measured or entered); and the datasheet ghosts beneath."""
    marks = []
    end = x_high + ROOF_REACH
    for index, (roof, ridge) in enumerate(zip(roofs, ridges)):
        y = math.log10(roof.rate.value)
        names, short = roof_names(roof.paths, used_path)
        source = "" if is_assumed(roof.rate) else f" ({roof.rate.source})"  # dashed already says datasheet
        rate_text = format_flop_rate(roof.rate.value)
        role = "compute selected" if used_path in roof.paths else "compute"
        marks.append(RoofMark(f"roof {index}", (ridge, y, end, y), f"{names}  {rate_text}{source}",
                              f"{short}  {rate_text}", role, is_assumed(roof.rate)))
        if roof.datasheet is not None:
            gy = math.log10(roof.datasheet.value)
            marks.append(RoofMark(f"ghost roof {index}", (math.log10(roof.datasheet.value / bandwidth), gy, end, gy),
                                  "", "", "ghost", is_assumed(roof.datasheet), labelled=False))
    return marks


def _level_roofs(further: Sequence[Any], start: float, top: float, binary: bool) -> list[RoofMark]:
    """A roof per further interface shown (L2, shared memory, host), each rising until the highest compute roof."""
    marks = []
    for level in further:
        log_bw = math.log10(level.rate.value)
        end = top - log_bw
        rate_text = format_bandwidth(level.rate.value, binary)
        marks.append(RoofMark(f"memory {level.key}", (start, log_bw + start, end, log_bw + end),
                              f"{level.title} {rate_text} ({level.rate.source})",
                              f"{LEVEL_SHORT_NAMES.get(level.key, level.title)} {rate_text}", f"level {level.key}",
                              is_assumed(level.rate)))
        if level.datasheet is not None:
            g = math.log10(level.datasheet.value)
            marks.append(RoofMark(f"ghost memory {level.key}", (start, g + start, top - g, top), "", "", "ghost",
                                  is_assumed(level.datasheet), labelled=False))
    return marks


def _lowered(drawn: Sequence[PlacedOperation], positions: dict[int, Position], start: float, top: float,
             binary: bool) -> list[LoweredMark]:
    marks = []
    for operation in drawn:
        roof = lowered_roof(operation.analysis)
        if roof is not None:
            marks.append(lowered_mark(operation, roof, positions[operation.row], start, top, binary))
    return marks


def lowered_mark(operation: PlacedOperation, roof: LoweredRoof, position: Position, start: float, top: float,
                 binary: bool) -> LoweredMark:
    """An operation's lowered roof (`roof`: its loads in flight allow less than the memory) from `start`, rising
    until its own path's compute roof (the roofs above are not that kernel's; `top` without one), named left of
    its point (at `position`), on the line."""
    log_bw = math.log10(roof.rate.value)
    compute = operation.analysis.compute_rate
    end = (math.log10(compute.value) if compute is not None else top) - log_bw
    at = position[0] - 1.5
    return LoweredMark(operation.row, (start, log_bw + start, end, log_bw + end),
                       f"{operation.name}: {roof.title} {format_bandwidth(roof.rate.value, binary)}", (at, log_bw + at))


def _connector(points: PointMarks) -> Segment | None:
    """The dotted line through the selected operation's points at their common height (None: fewer than two)."""
    chosen = points.selected
    if int(chosen.sum()) < 2:
        return None
    xs = points.xs[chosen]
    y = float(points.ys[chosen][0])
    return float(xs.min()), y, float(xs.max()), y


def ridge_mark(analysis: Any, y_low: float, y_high: float) -> tuple[Position | None, Segment | None, str]:
    """The selected operation's path's ridge point (against the HBM roof), its vertical line and its label."""
    ridge = analysis.ridge if analysis is not None else None
    if ridge is None or ridge <= 0 or analysis.compute_rate is None:
        return None, None, ""
    rx, ry = math.log10(ridge), math.log10(analysis.compute_rate.value)
    return (rx, ry), (rx, y_low - ROOF_REACH, rx, y_high + ROOF_REACH), f"ridge {format_intensity(ridge)}"
