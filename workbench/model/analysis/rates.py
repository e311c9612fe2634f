"""Rate resolution: which rate each term of an analysis is divided by, and how the terms combine.

Resolved once per `analyze()` or `sweep()` call, in this order: the FLOP
convention, the overlap, the device, the entered rates. A rate typed as text
("100 TFLOP/s") is parsed by pint once per distinct text and remembered; a
text that fails is refused every time.

Each term's rate comes from one place:
- the compute term: an entered rate, else the device's rate for the
  instruction path (after the device's fallbacks, e.g. fp16_tc_fp16acc → fp16_tc);
- the HBM term: an entered bandwidth, else the device's memory bandwidth;
- every other interface (L2, shared memory, host): the device's rate for that
  interface key, a measured override before the catalogue's figure;
- a collective's link: the link the declaration names, else the device's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from workbench.model.devices.catalogue import ENTERED, MAX_RATE, MIN_RATE, Device, Rate, find_device, rate_problem
from workbench.model.devices.interfaces import HBM
from workbench.errors import UnitError
from workbench.model.ops.base import CONVENTIONS
from workbench.model.units import format_number


@dataclass(frozen=True)
class Overlap:
    """How the time terms combine: fraction f of every term but the longest hidden under the longest.

    time = max(terms) + (1 − f)·(sum(terms) − max(terms)): f = 1 (full) is the
    maximum, f = 0 (none) the sum. For two terms this is max + (1 − f)·min.
    """

    fraction: float

    @property
    def label(self) -> str:
        if self.fraction == 1.0:
            return "full"
        if self.fraction == 0.0:
            return "none"
        return format_number(self.fraction)

    def combine(self, compute_time: Any, memory_time: Any) -> Any:
        """time = max(tc, tm) + (1 − f)·min(tc, tm), for two floats or two numpy arrays (sweeps)."""
        return _larger(compute_time, memory_time) + (1.0 - self.fraction) * _smaller(compute_time, memory_time)

    def combine_all(self, times: list[Any]) -> Any:
        """max(times) + (1 − f)·(sum(times) − max(times)) for floats or numpy arrays of one length.

        Two times go through `combine` (the rest is then the smaller one,
        exactly, with no rounding from a subtraction), so a two-term bound is
        the very figure it has always been.
        """
        if len(times) == 1:
            return times[0]
        if len(times) == 2:
            return self.combine(times[0], times[1])
        longest = times[0]
        for time in times[1:]:
            longest = _larger(longest, time)
        return longest + (1.0 - self.fraction) * (_total(times) - longest)


def _total(times: list[Any]) -> Any:
    total: Any = 0
    for time in times:
        total = total + time
    return total


def _larger(a: Any, b: Any) -> Any:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return max(a, b)
    import numpy as np

    return np.maximum(a, b)


def _smaller(a: Any, b: Any) -> Any:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return min(a, b)
    import numpy as np

    return np.minimum(a, b)


def parse_overlap(value: Any) -> Overlap:
    """'full' (max), 'none' (sum), or a fraction f in [0, 1]."""
    if isinstance(value, Overlap):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "full":
            return Overlap(1.0)
        if text == "none":
            return Overlap(0.0)
        try:
            value = float(text)
        except ValueError:
            raise UnitError(f"overlap must be full, none or a fraction 0–1; got '{value}'") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise UnitError(f"overlap must be full, none or a fraction 0–1; got {value!r}")
    return Overlap(float(value))


def as_rate(value: Any, unit: str, what: str) -> Rate | None:
    """A user-entered rate (text with units, a pint quantity, a number in base units, or a Rate)."""
    if value is None or isinstance(value, Rate):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        number = _rate_text_value(value, unit, what)
    else:
        from workbench.model.units import require_dimension

        number = require_dimension(value, unit, what)
    if not (number > 0) or not math.isfinite(number):
        raise UnitError(f"{what} must be a positive {unit} figure; got {value}")
    if rate_problem(number) is not None:
        raise UnitError(f"{what} must be {MIN_RATE:g} to {MAX_RATE:g} {unit}: its bounds would overflow or mean nothing; got {value}")
    return _entered(number)


@lru_cache(maxsize=256)
def _entered(number: float) -> Rate:
    """The Rate of an entered figure (one object per distinct figure: rates are immutable)."""
    return Rate(number, ENTERED, "entered by the user")


@lru_cache(maxsize=256)
def _rate_text_value(text: str, unit: str, what: str) -> float:
    """A rate typed as text ('100 TFLOP/s') in base units, parsed by pint once per distinct text.

    pint takes a few hundred µs per parse; the rate fields and the CLI repeat
    the same few texts on every analysis. A text that fails raises each time
    (errors are not cached).
    """
    from workbench.model.scratchpad import parse_quantity, rate_spelling
    from workbench.model.units import require_dimension

    # Datasheet spellings ("67 TFLOPS") read as rates here, in the one place rate texts are parsed.
    return float(require_dimension(parse_quantity(rate_spelling(text), require_number=True), unit, what))


@dataclass(frozen=True)
class Setting:
    """What analyze() and sweep() resolve once per call, in this order: convention, overlap, device, entered rates."""

    convention: str
    overlap: Overlap
    device: Device | None
    entered_rate: Rate | None
    entered_bandwidth: Rate | None


def resolve_setting(device: Any, rate: Any, bandwidth: Any, convention: str, overlap: Any) -> Setting:
    """The call's setting; UnitError / DeviceError for a bad convention, overlap, device or rate."""
    if convention not in CONVENTIONS:
        raise UnitError(f"convention must be fma2 or mac; got '{convention}'")
    combine = parse_overlap(overlap)
    dev = find_device(device) if isinstance(device, str) else device
    return Setting(convention, combine, dev, as_rate(rate, "FLOP/s", "rate"), as_rate(bandwidth, "B/s", "bandwidth"))


def compute_rate(path: str, setting: Setting) -> tuple[Rate | None, str]:
    """(the rate of the compute term, the path whose rate it is): entered first, else the device's."""
    dev = setting.device
    if setting.entered_rate is not None:
        return setting.entered_rate, path
    if dev is None:
        return None, path
    return dev.rate(path), dev.resolve_path(path) or path


def interface_rate(key: str, setting: Setting) -> Rate | None:
    """The rate bytes cross interface `key` at: the entered bandwidth for HBM, else the device's (override first)."""
    if key == HBM and setting.entered_bandwidth is not None:
        return setting.entered_bandwidth
    dev = setting.device
    if dev is None:
        return None
    if key == HBM:
        return dev.bandwidth  # DeviceError when the device has none: the HBM term always needs a rate
    return dev.interface_rate(key)


__all__ = [
    "Overlap",
    "Setting",
    "as_rate",
    "compute_rate",
    "interface_rate",
    "parse_overlap",
    "resolve_setting",
]
