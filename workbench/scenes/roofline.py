"""The hierarchical roofline's figures: one memory roof per interface, the operation at each interface's intensity.

As Nsight Compute's hierarchical roofline and Intel Advisor's cache-aware
roofline draw it: every named interface the device has a rate for
(`devices/interfaces.py`: host ↔ device, HBM → L2, L2 → SM, shared memory →
registers) is a roof of slope one — rate = intensity × bandwidth — and an
operation is plotted once per interface, at the FLOP it does per byte across
*that* interface. All of an operation's points share one height: the rate the
model attains when every roof applies at once,

    attainable = min(compute rate, min over interfaces of intensityᵢ × bandwidthᵢ),

so the point touching its roof names the interface that limits, and the
horizontal distance of any other point to its roof is that level's headroom.
A link between chips (a collective's NVLink) is no roof here; a
link-limited operation's points sit at what its link bound allows (FLOP over
the link time), below every roof, never above its own bound.
Under the compulsory model every interface carries the compulsory bytes and
the faster inner levels lie to the right of the HBM roof; a naive kernel's
reloads move its L2 and shared-memory points left, onto their roofs.

The figures come from `Analysis.terms` (one `Term` per compute path and
interface); nothing here knows Qt, so the window, reports and tests read the
same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from workbench.model.devices import DATASHEET, DERIVED, NOMINAL
from workbench.model.devices.catalogue import Device, Rate
from workbench.model.devices.interfaces import HBM, INTERFACES, interface

# The levels a roofline may draw, in the registry's order (host inwards).
LEVEL_KEYS: tuple[str, ...] = tuple(item.key for item in INTERFACES)


@dataclass(frozen=True)
class RoofLevel:
    """One memory roof: an interface with the rate the device has for it."""

    key: str  # interface key: "host", "hbm", "l2", "smem"
    title: str  # the roof's name on the plot: "HBM", "L2", "shared memory"
    rate: Rate  # the rate in use (measured or entered before datasheet)
    datasheet: Rate | None  # the datasheet figure beneath an override, drawn faintly


@dataclass(frozen=True)
class LevelPoint:
    """An operation at one interface: FLOP per byte across it, and the rate the model attains."""

    key: str  # interface key
    flop: int  # FLOP on the compute path (the compute term's amount)
    bytes: int  # bytes across this interface (the transfer term's amount)
    intensity: float  # flop / bytes
    rate: float | None  # attainable FLOP/s, equal for every level of one operation (None without rates)


def level_title(key: str, memory_name: str = "HBM") -> str:
    """The roof's name: the memory the bytes come from ('HBM', 'DRAM', 'L2', 'shared memory', 'host memory')."""
    if key == HBM:
        return memory_name
    return interface(key).source


def rate_of(device: Device, key: str) -> Rate | None:
    """The rate in use for `key` on `device`: an override (measured, entered) before the catalogue's figure."""
    return device.overrides.get(key) or device.peak.get(key)


def device_levels(device: Device) -> list[RoofLevel]:
    """Every interface the device has a rate for, host inwards: the roofs a hierarchical roofline can draw."""
    levels = []
    for key in LEVEL_KEYS:
        rate = rate_of(device, key)
        if rate is None:
            continue
        under = device.peak.get(key) if key in device.overrides else None
        levels.append(RoofLevel(key, level_title(key, device.memory_name), rate, under))
    return levels


def _parts(analysis: Any) -> tuple[int, Rate | None, list[tuple[str, int, Rate | None]]]:
    """(compute FLOP, compute rate, [(interface key, bytes, rate)]) from the analysis's terms."""
    flop, compute_rate = analysis.flop, analysis.compute_rate
    transfers: list[tuple[str, int, Rate | None]] = []
    for term in analysis.terms:
        if term.kind == "compute":
            flop, compute_rate = term.amount, term.rate
        elif term.name in LEVEL_KEYS:
            transfers.append((term.name, term.amount, term.rate))
    return flop, compute_rate, transfers


def attainable(compute_rate: float | None, levels: Iterable[tuple[float, float | None]]) -> float | None:
    """min(compute rate, intensityᵢ × bandwidthᵢ over every (intensityᵢ, bandwidthᵢ)); None without a compute rate."""
    if compute_rate is None:
        return None
    rate = compute_rate
    for intensity, bandwidth in levels:
        if bandwidth is not None:
            rate = min(rate, intensity * bandwidth)
    return rate


@dataclass(frozen=True)
class LoweredRoof:
    """An operation's own memory roof below the device's: the bandwidth its loads in flight allow (Little's law)."""

    rate: Rate  # the achievable bandwidth (the memory-level-parallelism term's rate)
    intensity: float  # the operation's FLOP per byte across HBM (its point sits on this roof there)
    title: str  # "loads in flight 2.403 TB/s"


def lowered_roof(analysis: Any) -> LoweredRoof | None:
    """The memory-level-parallelism roof of an operation whose launch the model knows, when it lies below the memory's."""
    term = next((term for term in analysis.terms if term.name == "mlp"), None)
    hbm = next((term for term in analysis.terms if term.name == HBM), None)
    if term is None or term.rate is None or hbm is None or hbm.rate is None or term.amount <= 0:
        return None
    if term.rate.value >= hbm.rate.value:
        return None  # capped by the memory itself: the device's roof is the kernel's
    flop = next((t.amount for t in analysis.terms if t.kind == "compute"), analysis.flop)
    return LoweredRoof(term.rate, flop / term.amount, "loads in flight")


def operation_levels(analysis: Any) -> list[LevelPoint]:
    """The operation at every interface its analysis has a transfer term for, host inwards.

    Interfaces whose term moves no bytes have no finite intensity and no point. All points share the
    height the model attains, a lowered roof (loads in flight, Little's law) included.
    """
    flop, compute_rate, transfers = _parts(analysis)
    moving = [(key, amount, rate) for key, amount, rate in transfers if amount > 0]
    lowered = lowered_roof(analysis)
    rate = attainable(
        compute_rate.value if compute_rate is not None else None,
        [*((flop / amount, r.value if r is not None else None) for _key, amount, r in moving),
         *(((lowered.intensity, lowered.rate.value),) if lowered is not None else ())],
    )
    # a link between chips is no roof here, but it bounds the operation: the points sit at what that bound allows
    # (below their roofs), never above it
    link_time = getattr(analysis, "link_time_s", None)
    if rate is not None and link_time:
        rate = min(rate, flop / link_time)
    points = [LevelPoint(key, flop, amount, flop / amount, rate) for key, amount, _r in moving]
    order = {key: index for index, key in enumerate(LEVEL_KEYS)}
    return sorted(points, key=lambda point: order[point.key])


def roof_span(bandwidth: float, top: float, start: float) -> tuple[float, float, float, float]:
    """A memory roof in log10 coordinates, from log intensity `start` up to the compute roof `top` (FLOP/s)."""
    log_bw = math.log10(bandwidth)
    end = math.log10(top / bandwidth)
    return (start, log_bw + start, end, log_bw + end)


def shown_levels(levels: Sequence[RoofLevel], hidden: Iterable[str]) -> list[RoofLevel]:
    """The levels left after the user's toggles (`hidden`: interface keys switched off)."""
    off = set(hidden)
    return [level for level in levels if level.key not in off]


def path_label(path: str) -> str:
    """'fp16_tc' → 'FP16 TC', 'fp16_tc_fp16acc' → 'FP16 TC (FP16 acc)', 'fp32' → 'FP32'."""
    base, tensor, rest = path.partition("_tc")
    text = base.upper() + (" TC" if tensor else "")
    if rest.endswith("fp16acc"):
        text += " (FP16 acc)"
    return text


def roof_names(paths: Sequence[str], used_path: str | None) -> tuple[str, str]:
    """A compute roof's name in full and short, for the paths that share its rate.

    Where the operation's path is among them (the highlighted roof) that path comes first and is the short name:
    an fp32 GEMM on a roof shared by FP64 TC and FP32 reads 'FP32 / FP64 TC' in full, 'FP32' short, never the
    other path alone. Elsewhere the paths keep the device's order and the short name is the first.
    """
    ordered = list(paths)
    if used_path in ordered:
        ordered.remove(used_path)
        ordered.insert(0, used_path)
    return " / ".join(path_label(p) for p in ordered), path_label(ordered[0])


def is_assumed(rate: Rate) -> bool:
    """Datasheet, derived and nominal figures are assumptions (drawn dashed); measured and entered ones are
    observations (solid)."""
    return rate.source in (DATASHEET, DERIVED, NOMINAL)


@dataclass(frozen=True)
class Roof:
    """One horizontal compute roof: the paths sharing one rate in use."""

    paths: tuple[str, ...]
    rate: Rate
    datasheet: Rate | None  # the datasheet figure beneath an override, drawn faintly


def device_roofs(device: Device) -> list[Roof]:
    """The compute roofs of a device, paths with the same rate and source merged, highest first."""
    groups: dict[tuple[float, str], list[str]] = {}
    for path in device.paths():
        rate = device.overrides.get(path) or device.peak[path]
        groups.setdefault((rate.value, rate.source), []).append(path)
    roofs = []
    for paths in groups.values():
        rate = device.overrides.get(paths[0]) or device.peak[paths[0]]
        under = device.peak.get(paths[0]) if paths[0] in device.overrides else None
        roofs.append(Roof(tuple(paths), rate, under))
    return sorted(roofs, key=lambda roof: -roof.rate.value)


Position = tuple[float, float]  # (log intensity, log rate) on the roofline


def shown_level_points(levels: Sequence[LevelPoint], shown_keys: frozenset[str] | set[str]) -> list[tuple[LevelPoint, Position]]:
    """An operation's points at the interfaces shown that have a rate, each with where it sits (log intensity, log
    rate), the one that carries its label first: at HBM, or with HBM switched off at the first interface shown."""
    drawn = [p for p in levels if p.key in shown_keys and p.rate is not None and p.rate > 0]
    at = [(p, (math.log10(p.intensity), math.log10(p.rate or 1.0))) for p in drawn]
    primary = next((i for i, p in enumerate(drawn) if p.key == HBM), 0)
    return [at[primary], *(pair for i, pair in enumerate(at) if i != primary)] if at else []


def level_positions(
    levels: Sequence[LevelPoint], shown_keys: frozenset[str] | set[str]
) -> tuple[Position | None, tuple[tuple[LevelPoint, Position], ...]]:
    """Where an operation's labelled point sits (None if no interface shown has a rate) and its points at the
    further interfaces shown (`shown_level_points`)."""
    points = shown_level_points(levels, shown_keys)
    return (points[0][1], tuple(points[1:])) if points else (None, ())
