"""The plots' colours, pens and marks by role, and their axes' tick texts: defined once, without Qt, for the
window (which makes Qt pens of them) and the reports (which write them into SVG) alike.

A scene names the style of what it draws by role ("memory", "compute selected", "level l2", "operation stale");
`PENS` and `MARKS` say what each role looks like. Colours are plain RGB; `hex_colour` writes one as '#rrggbb'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.model.units import format_number, format_si

RGB = tuple[int, int, int]


def rgb(text: str) -> RGB:
    """'#1565c0' → (21, 101, 192)."""
    return int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16)


def hex_colour(colour: RGB) -> str:
    """(21, 101, 192) → '#1565c0'."""
    return "#{:02x}{:02x}{:02x}".format(*colour)


# Every colour the roofline draws with, by name.
COLOURS: dict[str, RGB] = {
    "memory": rgb("#1565c0"),  # the memory (HBM, DRAM) roof and its points
    "compute": rgb("#ef6c00"),
    "selected": rgb("#c62828"),  # the selected operation, its path's roof and its ridge
    "roof": rgb("#616161"),  # a compute roof not on the selected operation's path
    "ghost": rgb("#bdbdbd"),  # a datasheet figure beneath a measured or entered one
    "point": rgb("#37474f"),
    "stale": rgb("#9e9e9e"),  # an operation whose declaration has an error (its last analysis is drawn)
    "host": rgb("#6a1b9a"),  # the hierarchical roofline's levels, host inwards
    "hbm": rgb("#1565c0"),
    "l2": rgb("#00838f"),
    "smem": rgb("#2e7d32"),
    "link": rgb("#6d4c41"),  # a collective's link between chips
    "lowered": rgb("#e65100"),  # an operation's own roof below the memory's: loads in flight (Little's law)
    "leader": rgb("#757575"),  # a label's line to its point
    "ridge": rgb("#9e9e9e"),  # the ridge's vertical
    "label": rgb("#212121"),  # an operation's label
    "note": rgb("#424242"),  # the ridge's label, messages
    "axis": rgb("#202020"),
    "grid": rgb("#e4e4e4"),
    "frame": rgb("#9e9e9e"),  # the legend's frame
    "measured": rgb("#2e7d32"),  # a valid measured run (green, as the device panel's "measured" source)
    "not valid": rgb("#9e9e9e"),  # a run whose check failed or is missing: not a result
    "other device": rgb("#6a1b9a"),  # a run or kernel on another device than the one whose roofs are drawn
    "impossible": rgb("#c62828"),  # a run or kernel faster than its own device's bound
    "kernel": rgb("#6a1b9a"),  # an imported profiler kernel: apart from the operations' grey and the memory's blue
    "kernel faint": rgb("#ce93d8"),  # its fill, unless its operation is selected
    "white": rgb("#ffffff"),
}

SOLID, DASHED, DOTTED = "solid", "dashed", "dotted"


@dataclass(frozen=True)
class Pen:
    """A line's look: its colour's name (`COLOURS`), width in pixels and dash (`SOLID`, `DASHED`, `DOTTED`). A roof
    whose rate is an assumption (datasheet, derived, nominal) is drawn dashed whatever its role says."""

    colour: str
    width: float
    dash: str = SOLID


@dataclass(frozen=True)
class Mark:
    """A point's look: its outline's colour, its fill's (None: white), its size in pixels across and its symbol
    ("circle", "square", "diamond", "triangle", "x", "star")."""

    edge: str
    fill: str | None
    size: float
    symbol: str = "circle"


LEVEL_KEYS_STYLED = ("host", "hbm", "l2", "smem")
LEVEL_SYMBOLS = {"host": "diamond", "hbm": "circle", "l2": "square", "smem": "triangle"}

PENS: dict[str, Pen] = {
    "memory": Pen("memory", 2.5),
    "compute": Pen("roof", 1.5),
    "compute selected": Pen("selected", 2.5),
    "ghost": Pen("ghost", 1.5),
    "lowered": Pen("lowered", 1.5, DASHED),
    "ridge": Pen("ridge", 1.0, DOTTED),
    "connector": Pen("selected", 1.0, DOTTED),  # the selected operation's points joined across the levels
    "leader": Pen("leader", 0.8),
    "kernel link": Pen("kernel", 1.2, DOTTED),  # an imported kernel's star to its operation's point
    **{f"run {kind} bar": Pen(colour, 1.4) for kind, colour in (
        ("valid", "measured"), ("not valid", "not valid"), ("other device", "other device"),
        ("impossible", "impossible"))},  # a measured run's p10–p90 bar
    **{f"level {key}": Pen(key, 2.0) for key in LEVEL_KEYS_STYLED},
}

MARKS: dict[str, Mark] = {
    "operation": Mark("point", "point", 10),
    "operation selected": Mark("selected", "selected", 13),
    "operation stale": Mark("stale", None, 10),
    "operation selected stale": Mark("stale", None, 13),
    "ridge": Mark("selected", None, 9, "diamond"),
    **{f"level {key}": Mark(key, None, 9, LEVEL_SYMBOLS[key]) for key in LEVEL_KEYS_STYLED},
    # measured runs, by kind (`workbench.measure.run_marks`): valid, not valid, on another device, impossible
    "run valid": Mark("measured", "measured", 11, "square"),
    "run not valid": Mark("not valid", None, 11, "square"),
    "run other device": Mark("other device", None, 11, "diamond"),
    "run impossible": Mark("impossible", "impossible", 11, "x"),
    # imported profiler kernels: compared with the session's device (filled when their operation is selected), with
    # the file's own GPU, or faster than its bound; and their stars at the further levels ncu counted
    "kernel": Mark("kernel", "kernel faint", 13, "star"),
    "kernel selected": Mark("kernel", "kernel", 18, "star"),
    "kernel other device": Mark("other device", None, 13, "star"),
    "kernel impossible": Mark("impossible", None, 13, "star"),
    **{f"kernel level {key}": Mark(key, None, 12, "star") for key in LEVEL_KEYS_STYLED},
    **{f"level {key} selected": Mark("selected", key, 12, LEVEL_SYMBOLS[key]) for key in LEVEL_KEYS_STYLED},
    **{f"level {key} stale": Mark("stale", None, 9, LEVEL_SYMBOLS[key]) for key in LEVEL_KEYS_STYLED},
    **{f"level {key} selected stale": Mark("stale", None, 12, LEVEL_SYMBOLS[key]) for key in LEVEL_KEYS_STYLED},
}


def kernel_role(style: str, selected: bool) -> str:
    """The mark role of an imported kernel of `style` ("session", "other device", "impossible"; the window's
    `KernelMark.style`), its operation `selected` or not."""
    if style != "session":
        return f"kernel {style}"
    return "kernel selected" if selected else "kernel"


def point_role(level: str | None, selected: bool, stale: bool) -> str:
    """The mark role of an operation's point: its labelled point (`level` None) or its point at a further level
    ('l2'), larger when selected, grey and hollow when stale."""
    return ("operation" if level is None else f"level {level}") + (" selected" if selected else "") + (
        " stale" if stale else "")


def pen_colour(role: str) -> str:
    """The '#rrggbb' of a pen role's colour."""
    return hex_colour(COLOURS[PENS[role].colour])


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def intensity_tick(v: float) -> str:
    """'0.01' … '1000' as figures; beyond that '10⁴', '10⁻³': short, so ticks stay apart at large text."""
    exponent = round(v)
    if abs(v - exponent) < 1e-9 and not -2 <= exponent <= 3:
        return "10" + str(exponent).translate(_SUPERSCRIPT)
    return format_number(10**v, 3)


def si_tick_text(v: float, unit: str) -> str:
    """The tick at log10 value `v` of an SI unit: '100 TFLOP/s'."""
    return format_si(10**v, unit, digits=3).strip()


def decade_ticks(low: float, high: float, pixels: float, need: float) -> list[float]:
    """Whole decades from `low` to `high` (log10 units), every `step`-th one, with `step` the least that puts
    ticks at least `need` pixels apart on an axis `pixels` long."""
    span = max(high - low, 1e-9)
    step = max(1, math.ceil(need * span / max(pixels, 1e-9)))
    return [float(k) for k in range(math.ceil(low), math.floor(high) + 1) if k % step == 0]
