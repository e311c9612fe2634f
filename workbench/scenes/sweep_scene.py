"""The bound-versus-size plot as data: `sweep_scene(...)` decides what the Bound vs size tab draws, the window's
view (gui/sweep_view.py) draws what it returns, and tests read it without Qt.

The plot is log2 of the swept size against log10 of time; the operation's other fields are held as declared.
Decided here:

- the lines: the combined bound, the compute and memory bounds and every further term (an interface, the host
  link, a collective's link), each with its legend text and the sizes it has a figure for;
- the operation as declared: its point on the bound and its label's text and side (the half with room);
- the sizes beyond the device's memory (shaded) and the size where the limiter changes, with their texts;
- the axes' ranges (the measured medians' spans included), the bottom axis's title and the caption;
- or, when there is nothing to draw, the message that says why.

Where the as-declared label goes once its size in pixels is known is `declared_label_place`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from workbench.errors import WorkbenchError
from workbench.model.analysis import sweep
from workbench.model.analysis.sweep import limiter_crossover
from workbench.model.analysis.terms import TERM_COMPUTE
from workbench.model.declaration_text import split_call
from workbench.model.devices import BANDWIDTH, Device
from workbench.model.units import format_bytes, format_time

SWEEP_POINTS = 241
LINE_BOUND = "bound"
MARGIN = 0.3  # log10 units of time above the highest and below the lowest figure
LABEL_OFFSET = 0.3  # log2 units between the declared point and its label
Box = tuple[float, float, float, float]  # left, bottom, right, top in data units (y up)


def default_range(fields: tuple[str, ...]) -> tuple[int, int]:
    """Exponents of 2 to sweep: 2^10..2^30 for one size, narrower when sizes multiply."""
    return {1: (10, 30), 2: (8, 20)}.get(len(fields), (4, 16))


@dataclass(frozen=True)
class SweepState:
    """What the user chose on the tab: the fields swept together and the range, as exponents of 2."""

    fields: tuple[str, ...] = ()
    low: int = 10
    high: int = 30


@dataclass(frozen=True)
class SweepInputs:
    """What the scene reads of the document: the selected operation's name and analysis (None: none), the device
    (None: no rates) and the key the session names it by, the settings, and the measured medians' spans
    (log2 size, log10 low, log10 high)."""

    name: str
    analysis: Any
    device: Device | None
    device_key: str
    convention: str
    overlap: str
    binary: bool
    measured: Sequence[tuple[float, float, float]] = ()


@dataclass(frozen=True)
class SweepLine:
    """One line: `key` is LINE_BOUND, TERM_COMPUTE, BANDWIDTH or a further term's name; y is log10 seconds, NaN or
    −inf where the size has no figure."""

    key: str
    legend: str
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class Declared:
    """The operation as declared: its point (log2 size, log10 s), its label, and whether it is in the right half
    of the plot (its label then goes to its left)."""

    x: float
    y: float
    text: str
    right_half: bool


@dataclass(frozen=True)
class Marker:
    """A vertical line or the start of a shaded region (log2 size), its text, and where the text goes: `label_at`
    in data units, `anchor` as pyqtgraph's (0, 0: the text's top left at that point)."""

    x: float
    text: str
    label_at: tuple[float, float] = (0.0, 0.0)
    anchor: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True)
class SweepScene:
    message: str | None = None
    lines: tuple[SweepLine, ...] = ()
    declared: Declared | None = None
    beyond: Marker | None = None  # sizes from here on exceed the device's memory
    limiter: Marker | None = None  # where the limiting side changes
    x_range: tuple[float, float] = (0.0, 1.0)
    y_range: tuple[float, float] = (0.0, 1.0)
    bottom_title: str = "Swept size"
    caption: str = ""
    fields: tuple[str, ...] = ()
    choices: tuple[tuple[str, ...], ...] = ()
    sizes: np.ndarray = field(default_factory=lambda: np.array([]))

    def line(self, key: str) -> SweepLine | None:
        return next((line for line in self.lines if line.key == key), None)


def sweep_scene(inputs: SweepInputs, state: SweepState, choices: Sequence[tuple[str, ...]]) -> SweepScene:
    """The scene for the selected operation swept over `state.fields` (the first of `choices` when those are not
    among them) from 2^low to 2^high."""
    analysis = inputs.analysis
    if analysis is None:
        return SweepScene(message="Declare an operation to see its bounds against size.")
    choices = tuple(choices)
    fields = state.fields if state.fields in choices else (choices[0] if choices else ())
    if not fields:
        return SweepScene(message=f"{analysis.declaration.op} has no size field to sweep.", choices=choices)
    low, high = state.low, state.high
    if low >= high:
        return SweepScene(message="Choose a range whose start is below its end.", fields=fields, choices=choices)
    sizes = np.unique(np.round(2.0 ** np.linspace(low, high, SWEEP_POINTS)))
    try:
        result = sweep(analysis.declaration, {name: sizes for name in fields}, device=inputs.device,
                       convention=inputs.convention, overlap=inputs.overlap)
    except WorkbenchError as exc:
        return SweepScene(message=f"No bounds to plot: {exc}", fields=fields, choices=choices)
    if not result.valid.any():
        return SweepScene(message=f"No bounds to plot: {result.first_error}", fields=fields, choices=choices)
    x = np.log2(sizes)
    lines = _lines(result, x)
    measured = [end for at, bottom, top in inputs.measured if low <= at <= high for end in (bottom, top)]
    finite = np.concatenate([*(line.y[np.isfinite(line.y)] for line in lines), np.array(measured, dtype=float)])
    y_low, y_high = (float(finite.min()), float(finite.max())) if finite.size else (-9.0, 0.0)
    beyond, limiter = _beyond(inputs, result, x), _limiter(inputs, result, sizes, fields)
    # the shade's text right-aligned at the top right (a narrow shade still shows it whole); the limiter's at the
    # plot's foot, right of its line
    if beyond is not None:
        beyond = replace(beyond, label_at=(high - 0.05 * (high - low) / 20, y_high + MARGIN - 0.05), anchor=(1.0, 0.0))
    if limiter is not None:
        limiter = replace(limiter, label_at=(limiter.x + 0.1, y_low - MARGIN + 0.05), anchor=(0.0, 1.0))
    return SweepScene(
        lines=lines,
        declared=_declared(analysis, fields, low, high),
        beyond=beyond,
        limiter=limiter,
        x_range=(float(low), float(high)),
        y_range=(y_low - MARGIN, y_high + MARGIN),
        bottom_title=f"{' = '.join(fields)} (swept; {len(sizes)} sizes)",
        caption=_caption(inputs, fields, sizes, result),
        fields=fields,
        choices=choices,
        sizes=sizes,
    )


def _lines(result: Any, x: np.ndarray) -> tuple[SweepLine, ...]:
    """The combined bound, the compute and memory bounds, then each further term in the sweep's order."""

    def log_of(seconds: Any) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log10(np.asarray(seconds, dtype=float))

    lines = [
        SweepLine(LINE_BOUND, "combined bound", x, log_of(result.bound_time)),
        SweepLine(TERM_COMPUTE, "compute bound (dashed)", x, log_of(result.compute_time)),
        SweepLine(BANDWIDTH, "memory bound (dashed)", x, log_of(result.memory_time)),
    ]
    lines += [SweepLine(term.name, f"{term.title} bound (dashed)", x, log_of(term.time_s))
              for term in result.terms if term.name not in (TERM_COMPUTE, BANDWIDTH)]
    return tuple(lines)


def _declared(analysis: Any, fields: tuple[str, ...], low: float, high: float) -> Declared | None:
    declared = analysis.declaration.params[fields[0]]
    if not analysis.bound_time:
        return None
    at = math.log2(declared)
    return Declared(at, math.log10(analysis.bound_time),
                    f"as declared: {fields[0]}={declared:,}, {format_time(analysis.bound_time)}", at > (low + high) / 2)


def _beyond(inputs: SweepInputs, result: Any, x: np.ndarray) -> Marker | None:
    capacity = inputs.device.memory_bytes if inputs.device is not None else None
    first = result.first_beyond(capacity)
    if first is None or capacity is None:
        return None
    start = float(x[first] if first == 0 else (x[first - 1] + x[first]) / 2)
    return Marker(start, f"beyond {format_bytes(capacity, inputs.binary)} of device memory:\na model only")


def _limiter(inputs: SweepInputs, result: Any, sizes: np.ndarray, fields: tuple[str, ...]) -> Marker | None:
    """Where the limiting side first changes: at the exact first size of the new limiter when it can be found,
    else between the two sampled sizes."""
    changes = result.limiter_changes()
    if not changes:
        return None
    i = changes[0]
    before, now = result.limiter[i - 1], result.limiter[i]
    swept = " = ".join(fields)
    size = limiter_crossover(inputs.analysis.declaration, fields, int(sizes[i - 1]), int(sizes[i]),
                             inputs.device, inputs.convention, inputs.overlap)
    if size is not None:
        return Marker(math.log2(size), f"{before}- → {now}-limited\nfrom {swept} = {size:,}")
    at = float((math.log2(sizes[i - 1]) + math.log2(sizes[i])) / 2)
    return Marker(at, f"{before}- → {now}-limited\nnear {swept} ≈ {int(round(2.0**at)):,}")


def _caption(inputs: SweepInputs, fields: tuple[str, ...], sizes: np.ndarray, result: Any) -> str:
    """What is held, the overlap and the rates' device, what the shading means, which sizes are left out."""
    analysis, device = inputs.analysis, inputs.device
    written = split_call(str(analysis.declaration))
    held = [f"{name}={text}" for name, text in (written.fields.items() if written else ()) if name not in fields]
    refused = int((~result.valid).sum())
    left_out = f" {refused} of {len(sizes)} sizes are left out: {result.first_error}." if refused else ""
    device_name = device.name if device is not None else inputs.device_key
    memory = (
        f"Sizes whose tensors exceed its {format_bytes(device.memory_bytes, inputs.binary)} of memory are shaded: "
        "a model only."
        if device is not None and device.memory_bytes
        else "The device states no memory size, so no size is marked as too large."
    )
    return (
        f"{inputs.name}: {', '.join(held) or 'no other fields'} held as declared. Combined bound (grey) with "
        f"{analysis.overlap.label} overlap; rates of the {device_name} as in the device panel. {memory}{left_out}"
    )


def declared_label_place(
    scene: SweepScene, label_size: tuple[float, float], limiter_box: Box | None, plot_size: tuple[float, float],
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where the as-declared label goes, as (anchor, position in data units): beside its point, on the side with
    room, under it where the text reads along the rising bound; else above it, then on the other side, whichever
    first keeps clear of every line, of the limiter-change label at the plot's foot and of the plot's edges. With
    no such place: under it, or above it where under it would fall on the limiter label (a short plot).
    `label_size` is the label's width and height in pixels, `limiter_box` the limiter label's box in data units
    (None: not shown), `plot_size` the plot's width and height in pixels."""
    declared = scene.declared
    if declared is None:
        return (0.0, 0.0), (0.0, 0.0)
    sides = (True, False) if declared.right_half else (False, True)  # True: the label left of its point

    def place(left: bool, above: bool) -> tuple[tuple[float, float], tuple[float, float]]:
        return ((1.0 if left else 0.0, 1.0 if above else 0.0),
                (declared.x + (-LABEL_OFFSET if left else LABEL_OFFSET), declared.y + (0.05 if above else -0.05)))

    under, over = place(sides[0], False), place(sides[0], True)
    if not _drawable(scene, plot_size):
        return under
    for candidate in (under, over, place(sides[1], False), place(sides[1], True)):
        box = label_box(*candidate, label_size, scene, plot_size)
        crossed = any(line_crosses(line, box) for line in scene.lines)
        if _inside(box, scene) and not _meets(box, limiter_box) and not crossed:
            return candidate
    return over if _meets(label_box(*under, label_size, scene, plot_size), limiter_box) else under


def beyond_label_place(
    scene: SweepScene, label_size: tuple[float, float], limiter_box: Box | None, plot_size: tuple[float, float],
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where the text of the shade beyond memory goes, as (anchor, position in data units): right-aligned at the
    plot's top right (`scene.beyond.label_at`), or at its bottom right where a line runs through the top one (the
    bound rises to the top right) and none through the bottom one, clear of the limiter's label."""
    beyond = scene.beyond
    if beyond is None:
        return (0.0, 0.0), (0.0, 0.0)
    top = beyond.anchor, beyond.label_at
    if not _drawable(scene, plot_size):
        return top
    bottom = (1.0, 1.0), (beyond.label_at[0], scene.y_range[0] + 0.05)
    for candidate in (top, bottom):
        box = label_box(*candidate, label_size, scene, plot_size)
        if not _meets(box, limiter_box) and not any(line_crosses(line, box) for line in scene.lines):
            return candidate
    return top


def _meets(box: Box, other: Box | None) -> bool:
    return other is not None and box[0] < other[2] and other[0] < box[2] and box[1] < other[3] and other[1] < box[3]


def _inside(box: Box, scene: SweepScene) -> bool:
    (low, high), (y_low, y_high) = scene.x_range, scene.y_range
    return low <= box[0] and box[2] <= high and y_low <= box[1] and box[3] <= y_high


def line_crosses(line: SweepLine, box: Box) -> bool:
    """Whether `line` passes through `box`: its samples within the box's span, with the line's height at the box's
    two sides, taken as a polyline (across a gap, where sizes have no figure, as if drawn: it errs on the side of
    "crosses")."""
    left, bottom, right, top = box
    x, y = line.x, line.y
    finite = np.isfinite(y)
    if not finite.any():
        return False
    x, y = x[finite], y[finite]
    within = (x > left) & (x < right)
    xs = np.concatenate([[left], x[within], [right]])
    ys = np.concatenate([[np.interp(left, x, y, left=np.nan, right=np.nan)], y[within],
                         [np.interp(right, x, y, left=np.nan, right=np.nan)]])
    keep = np.isfinite(ys)
    xs, ys = xs[keep], ys[keep]
    if ys.size == 0:
        return False
    if ys.size == 1:
        return bool(bottom <= ys[0] <= top)
    lows, highs = np.minimum(ys[:-1], ys[1:]), np.maximum(ys[:-1], ys[1:])
    return bool(np.any((highs >= bottom) & (lows <= top)))


def label_box(anchor: tuple[float, float], position: tuple[float, float], label_size: tuple[float, float],
              scene: SweepScene, plot_size: tuple[float, float]) -> Box:
    """A label's box in data units (y up) from its anchor (pyqtgraph's: 0,0 its top left), its position and its
    size in pixels (a plot of no size: the point itself)."""
    if not _drawable(scene, plot_size):
        return position[0], position[1], position[0], position[1]
    (low, high), (y_low, y_high) = scene.x_range, scene.y_range
    width = label_size[0] * (high - low) / plot_size[0]
    height = label_size[1] * (y_high - y_low) / plot_size[1]
    left, top = position[0] - anchor[0] * width, position[1] + anchor[1] * height
    return left, top - height, left + width, top


def _drawable(scene: SweepScene, plot_size: tuple[float, float]) -> bool:
    """The plot has a size in pixels and its ranges a span, so pixels convert to data units."""
    (low, high), (y_low, y_high) = scene.x_range, scene.y_range
    return plot_size[0] > 0 and plot_size[1] > 0 and high > low and y_high > y_low


def follow_choices(state: SweepState, choices: Sequence[tuple[str, ...]]) -> SweepState:
    """The state for an operation whose sweepable field groups are `choices`: the fields and range kept while the
    operation still has those fields, else its first group over that group's default range."""
    if state.fields in choices:
        return state
    if not choices:
        return replace(state, fields=())
    return SweepState(choices[0], *default_range(choices[0]))
