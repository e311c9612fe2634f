"""Kernels: the launches of one kernel name gathered, with medians the comparison and plots use.

ncu profiles every launch separately; a user thinks of "the vector add
kernel". `Kernel` holds a name's launches (or nsys's summary row) and the
median duration, DRAM bytes, L2 bytes and achieved FLOP across them, and
says when launches disagree by more than a few percent (a changed shape
rather than noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from workbench.profilers.counters import (
    DramTraffic,
    FlopCount,
    Reading,
    dram_traffic,
    duration,
    flop_count,
    l2_traffic,
    median_flop,
    median_reading,
)
from workbench.profilers.matching import kernel_base_name
from workbench.profilers.records import NCU, NSYS, KernelLaunch, KernelTimes

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.profilers.records import Profile

SPREAD_WARNING = 0.05  # launches whose DRAM bytes differ by more than this fraction get a note


@dataclass(frozen=True)
class RooflinePoint:
    """Where a profiled kernel sits on the roofline: FLOP per DRAM byte and FLOP per second.

    flop_source says which FLOP figure placed it: "counters" (achieved, from
    ncu) or "declared" (the matched operation's logical FLOP).
    """

    label: str
    intensity: float
    flop_rate: float
    flop_source: str


@dataclass(frozen=True)
class Kernel:
    """One kernel name from an imported file, with figures across its launches."""

    name: str
    tool: str
    launches: tuple[KernelLaunch, ...]
    instances: int
    duration: Reading | None  # median seconds per launch
    duration_min: float | None
    duration_max: float | None
    total_time: float | None  # all launches together, seconds
    dram: DramTraffic  # medians
    l2_bytes: Reading | None
    flop: FlopCount | None
    notes: tuple[str, ...] = ()

    @property
    def statistic(self) -> str:
        """'mean' where the duration is an average (older nsys reports have no median), else 'median'."""
        return "mean" if self.duration is not None and "Avg" in self.duration.source else "median"

    @property
    def base_name(self) -> str:
        return kernel_base_name(self.name)

    @property
    def grid_block(self) -> str:
        """'(65536, 1, 1) × (256, 1, 1)' from the first launch, '' when the file does not say."""
        first = self.launches[0] if self.launches else None
        if first is None or first.grid_size is None or first.block_size is None:
            return ""
        grid = ", ".join(str(v) for v in first.grid_size)
        block = ", ".join(str(v) for v in first.block_size)
        return f"({grid}) × ({block})"

    def achieved_flop(self, convention: str = "fma2") -> int | float | None:
        return None if self.flop is None else self.flop.total(convention)

    def roofline_point(
        self, convention: str = "fma2", declared_flop: int | None = None, prefer_declared: bool = False
    ) -> RooflinePoint | None:
        """The kernel's roofline point from its counters, or from `declared_flop` (when it has none,
        or with `prefer_declared`); None without a duration and DRAM bytes."""
        if self.duration is None or self.duration.value <= 0 or self.dram.total is None or self.dram.total.value <= 0:
            return None
        achieved = None if prefer_declared and declared_flop else self.achieved_flop(convention)
        if achieved:
            flop, source = float(achieved), "counters"
        elif declared_flop:
            flop, source = float(declared_flop), "declared"
        else:
            return None
        return RooflinePoint(self.base_name, flop / float(self.dram.total.value), flop / float(self.duration.value), source)

    def to_dict(self, convention: str = "fma2") -> dict[str, object]:
        """The per-kernel figures the CLI prints as JSON (base units)."""
        return {
            "kernel": self.name,
            "base_name": self.base_name,
            "tool": self.tool,
            "launches": self.instances,
            "launch_ids": [launch.launch_id for launch in self.launches],
            "grid_block": self.grid_block,
            "duration_s": None if self.duration is None else self.duration.value,
            "duration_min_s": self.duration_min,
            "duration_max_s": self.duration_max,
            "total_time_s": self.total_time,
            "dram_read_bytes": None if self.dram.read is None else self.dram.read.value,
            "dram_write_bytes": None if self.dram.write is None else self.dram.write.value,
            "dram_bytes": None if self.dram.total is None else self.dram.total.value,
            "l2_bytes": None if self.l2_bytes is None else self.l2_bytes.value,
            "achieved_flop": self.achieved_flop(convention),
            "convention": convention,
            "notes": list(self.notes),
        }


def kernel_from_launches(name: str, launches: list[KernelLaunch]) -> Kernel:
    """Medians across the launches of one kernel name (ncu)."""
    traffics = [dram_traffic(launch.metrics) for launch in launches]
    timed = [duration(launch.metrics) for launch in launches]
    # No launch takes no time: a zero duration is a broken export, kept out of medians and rates.
    zero = sum(1 for reading in timed if reading is not None and reading.value <= 0)
    durations = [reading if reading is not None and reading.value > 0 else None for reading in timed]
    present = [reading.value for reading in durations if reading is not None]
    dram = DramTraffic(
        median_reading([t.read for t in traffics]),
        median_reading([t.write for t in traffics]),
        median_reading([t.total for t in traffics]),
    )
    notes: list[str] = []
    totals = [t.total.value for t in traffics if t.total is not None]
    if len(totals) > 1 and min(totals) > 0 and (max(totals) - min(totals)) / min(totals) > SPREAD_WARNING:
        notes.append(
            f"DRAM bytes differ across the {len(totals)} launches ({min(totals):,.0f} to {max(totals):,.0f} B): "
            "the launches may not share one shape; the median is used"
        )
    if zero:
        notes.append(
            f"{zero} of {len(launches)} launch{'es' if len(launches) != 1 else ''} give a duration of 0 s, which no "
            "launch takes: left out of the duration, and with no duration no rate or time bound is compared"
        )
    return Kernel(
        name=name,
        tool=NCU,
        launches=tuple(launches),
        instances=len(launches),
        duration=median_reading(durations),
        duration_min=min(present) if present else None,
        duration_max=max(present) if present else None,
        total_time=sum(present) if present else None,
        dram=dram,
        l2_bytes=median_reading([l2_traffic(launch.metrics) for launch in launches]),
        flop=median_flop([flop_count(launch.metrics) for launch in launches]),
        notes=tuple(notes),
    )


def kernel_from_times(times: KernelTimes) -> Kernel:
    """An nsys summary row as a Kernel: time figures only (nsys has no memory counters)."""
    typical = times.median if times.median is not None else times.average
    if typical is None and times.instances:
        typical = times.total_time / times.instances
    if typical is not None and typical <= 0:
        typical = None  # no kernel runs in no time: no rate is derived from it
    source = "Med (ns)" if times.median is not None else "Avg (ns)"
    return Kernel(
        name=times.kernel_name,
        tool=NSYS,
        launches=(),
        instances=times.instances,
        duration=None if typical is None else Reading(typical, f"nsys {source}"),
        duration_min=times.minimum,
        duration_max=times.maximum,
        total_time=times.total_time,
        dram=DramTraffic(None, None, None),
        l2_bytes=None,
        flop=None,
    )


def group_kernels(profile: "Profile") -> Iterator[Kernel]:
    """The profile's kernels in order of first appearance, made one at a time."""
    if profile.tool == NSYS:
        yield from (kernel_from_times(times) for times in profile.summaries)
        return
    groups: dict[str, list[KernelLaunch]] = {}
    for launch in profile.launches:
        groups.setdefault(launch.kernel_name, []).append(launch)
    yield from (kernel_from_launches(name, launches) for name, launches in groups.items())
