"""Summary statistics of raw timing samples: median, min, p10, p90, mean, max.

Quantiles interpolate linearly between order statistics (NumPy's default
"linear" method), so anyone can recompute them from the raw samples a run
record keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from workbench.records import from_plain, record, to_plain


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 ≤ q ≤ 1) of already sorted values, linear between neighbours."""
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    weight = position - below
    return sorted_values[below] + (sorted_values[above] - sorted_values[below]) * weight


@dataclass(frozen=True)
class TimingStats:
    """Order statistics of one run's timed iterations, in seconds."""

    count: int
    median_s: float
    min_s: float
    p10_s: float
    p90_s: float
    mean_s: float
    max_s: float

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TimingStats":
        return from_plain(data, cls)


record(TimingStats)


def summarize(samples: Sequence[float]) -> TimingStats:
    """Median, min, p10, p90, mean and max of raw samples (seconds)."""
    ordered = sorted(float(s) for s in samples)
    if not ordered:
        raise ValueError("no samples to summarise")
    return TimingStats(
        count=len(ordered),
        median_s=quantile(ordered, 0.5),
        min_s=ordered[0],
        p10_s=quantile(ordered, 0.1),
        p90_s=quantile(ordered, 0.9),
        mean_s=math.fsum(ordered) / len(ordered),
        max_s=ordered[-1],
    )


def per_second(amount: int | float | None, seconds: float | None) -> float | None:
    """An amount (bytes, FLOP) over a time: the one division every achieved rate is made of.

    None when either is missing, the amount is zero or the time is not positive.
    """
    if not amount or seconds is None or not seconds > 0:
        return None
    return amount / seconds
