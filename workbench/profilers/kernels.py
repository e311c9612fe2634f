"""Kernels: the launches of one kernel name gathered, with medians the comparison and plots use.

ncu profiles every launch separately; a user thinks of "the vector add
kernel". `Kernel` holds a name's launches (or nsys's summary row) and the
median duration, DRAM bytes, L2 bytes and achieved FLOP across them, and
says when launches disagree by more than a few percent (a changed shape
rather than noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

from workbench.model.devices.interfaces import HBM, L2, SMEM
from workbench.profilers.counters import (
    DramTraffic,
    FlopCount,
    Reading,
    dram_traffic,
    duration,
    flop_count,
    LEVEL_METHOD_TITLES,
    LEVEL_METHODS,
    NCU_LEVELS,
    NERSC_LEVELS,
    l1_traffic,
    l2_traffic,
    median_flop,
    ncu_l1_traffic,
    ncu_l2_traffic,
    median_reading,
)
from workbench.profilers.names import kernel_base_name, kernel_base_names
from workbench.model.units import format_bytes, format_intensity
from workbench.profilers.records import (
    NCU,
    NSYS,
    JSON_ROWS,
    EncodedItems,
    KernelLaunch,
    KernelTimes,
    KernelTimesTable,
    encode_optional_floats,
    encode_text,
    json_rows,
    SharedTexts,
)

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
class LevelBytes:
    """A kernel's bytes at L2 and at L1 by one method of counting them (counters.level_traffic)."""

    method: str  # "ncu" or "nersc"
    l2: Reading | None
    l1: Reading | None

    @property
    def title(self) -> str:
        return LEVEL_METHOD_TITLES[self.method]

    def describe(self) -> str:
        """'L2 = lts__lts2xbar_cycles_active.sum × 32 B; L1 = … (Nsight Compute's hierarchical-roofline sections)'."""
        parts = [f"{name} = {reading.source}" for name, reading in (("L2", self.l2), ("L1", self.l1)) if reading is not None]
        return "; ".join(parts or ["no level counters in the file"]) + f" ({self.title})"

    def points(self, flop: float | None) -> list[tuple[str, str, Reading, float | None]]:
        """(interface key, 'L2'/'L1', bytes, FLOP per byte or None) per level the method counted."""
        found = []
        for key, name, reading in ((L2, "L2", self.l2), (SMEM, "L1", self.l1)):
            if reading is not None and reading.value > 0:
                found.append((key, name, reading, flop / float(reading.value) if flop else None))
        return found

    def text(self, flop: float | None, binary: bool = False) -> str:
        """'L2 2.147 GB = lts__lts2xbar_cycles_active.sum × 32 B, 64 FLOP/B; L1 …': what a report shows per kernel."""
        parts = []
        for _, name, reading, intensity in self.points(flop):
            part = f"{name} {format_bytes(float(reading.value), binary)} = {reading.source}"
            parts.append(part + (f", {format_intensity(intensity)}" if intensity is not None else ""))
        return "; ".join(parts) if parts else "no level counters in the file"

    # by hand: figures derived from the readings and the FLOP given, not the fields
    def to_dict(self, flop: float | None = None) -> dict[str, object]:
        """The method, and per level its bytes, the metrics they came from and (given the FLOP) the intensity."""
        levels: dict[str, object] = {}
        for name, reading in (("l2", self.l2), ("l1", self.l1)):
            if reading is None:
                levels[name] = None
                continue
            intensity = flop / float(reading.value) if flop and reading.value > 0 else None
            levels[name] = {"bytes": reading.value, "metrics": reading.source, "intensity_flop_per_byte": intensity}
        return {"method": self.method, "method_title": self.title, **levels}


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
    l1_bytes: Reading | None = None  # L1 / shared memory into the SM (counters.l1_traffic), for the hierarchical roofline
    ncu_levels: LevelBytes | None = None  # L2 and L1 bytes as ncu's own hierarchical-roofline sections count them

    def levels(self, method: str = NCU_LEVELS) -> LevelBytes:
        """The L2 and L1 bytes by `method`: 'ncu' (its sections' metrics) or 'nersc' (lts__t_bytes, l1tex__t_bytes
        + shared wavefronts; also the L2 traffic the comparison shows)."""
        if method == NERSC_LEVELS:
            return LevelBytes(NERSC_LEVELS, self.l2_bytes, self.l1_bytes)
        if method != NCU_LEVELS:
            raise ValueError(f"no level method '{method}'; choose one of {', '.join(LEVEL_METHODS)}")
        return self.ncu_levels or LevelBytes(NCU_LEVELS, None, None)

    def bytes_across(self, method: str = NCU_LEVELS) -> dict[str, float]:
        """Measured bytes per interface key (devices/interfaces.py): DRAM (hbm), L2 → SM (l2), L1/shared (smem),
        the levels counted by `method` (see levels())."""
        levels = self.levels(method)
        readings = {HBM: self.dram.total, L2: levels.l2, SMEM: levels.l1}
        return {key: float(reading.value) for key, reading in readings.items() if reading is not None and reading.value > 0}

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

    # by hand: the CLI's figures, derived from the launches under the convention given
    def to_dict(self, convention: str = "fma2") -> dict[str, object]:
        """The per-kernel figures the CLI prints as JSON (base units), with both methods' level bytes (ncu)."""
        data: dict[str, object] = {
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
        if self.tool == NCU:  # nsys has no counters
            flop = self.achieved_flop(convention)
            data["levels"] = {method: self.levels(method).to_dict(flop) for method in LEVEL_METHODS}
        return data


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
        l1_bytes=median_reading([l1_traffic(launch.metrics) for launch in launches]),
        ncu_levels=LevelBytes(
            NCU_LEVELS,
            median_reading([ncu_l2_traffic(launch.metrics) for launch in launches]),
            median_reading([ncu_l1_traffic(launch.metrics, launch.compute_capability) for launch in launches]),
        ),
    )


def typical_time(median: float | None, average: float | None, total: float, instances: int) -> float | None:
    """The duration per launch an nsys summary row gives: the median, else the mean, else the total
    over the instances; None where that is no time (no kernel runs in no time: no rate is derived)."""
    typical = median if median is not None else average
    if typical is None and instances:
        typical = total / instances
    if typical is not None and typical <= 0:
        return None
    return typical


def kernel_from_times(times: KernelTimes) -> Kernel:
    """An nsys summary row as a Kernel: time figures only (nsys has no memory counters, and no notes)."""
    typical = typical_time(times.median, times.average, times.total_time, times.instances)
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


def with_none(column: Sequence[float]) -> list[float | None]:
    """A KernelTimesTable float column with None for its NaNs (no value)."""
    return [None if value != value else value for value in column]


def typical_times(table: KernelTimesTable, start: int = 0, stop: int | None = None) -> list[float | None]:
    """typical_time() of the table's rows start:stop, read from its columns."""
    stop = len(table) if stop is None else stop
    medians = table.figure("median")[start:stop]
    total = sum(medians)
    if total == total and (not medians or min(medians) > 0):  # no NaN (no value) and every median a time
        return medians.tolist()
    return list(
        map(
            typical_time,
            with_none(table.figure("median")[start:stop]),
            with_none(table.figure("average")[start:stop]),
            table.figure("total_time")[start:stop],
            table.instances[start:stop],
        )
    )


def group_kernels(tool: str, launches: Sequence[KernelLaunch], summaries: Sequence[KernelTimes]) -> Iterator[Kernel]:
    """A profile's kernels in order of first appearance, made one at a time."""
    if tool == NSYS:
        yield from (kernel_from_times(times) for times in summaries)
        return
    groups: dict[str, list[KernelLaunch]] = {}
    for launch in launches:
        groups.setdefault(launch.kernel_name, []).append(launch)
    yield from (kernel_from_launches(name, launches) for name, launches in groups.items())


def times_kernel_dict(index: int, times: KernelTimes) -> dict[str, object]:
    """An nsys kernel in the import commands' JSON: its row of the profile record's `summaries` (which holds
    its name, launches and the tool's own times) and the figures the workbench derives from that row."""
    return {
        "summary": index,
        "base_name": kernel_base_name(times.kernel_name),
        "duration_s": typical_time(times.median, times.average, times.total_time, times.instances),
    }


def kernels_json(
    tool: str,
    launches: Sequence[KernelLaunch],
    summaries: Sequence[KernelTimes],
    convention: str = "fma2",
    shared: SharedTexts | None = None,
) -> "Iterator[dict[str, object]] | EncodedItems":
    """The `kernels` list of the import commands' JSON, lazily: `Kernel.to_dict(convention)` of each ncu
    kernel (its launches gathered), and for nsys, whose summary rows are already one a kernel,
    `times_kernel_dict` of each row (written from the columns a block at a time for a large table, the
    durations' texts through `shared` where the document writes the summary's medians too)."""
    if tool == NSYS:
        if isinstance(summaries, KernelTimesTable):
            table = summaries
            return EncodedItems(
                lambda between: _times_kernels_json(table, shared or SharedTexts(()), between),
                lambda: (times_kernel_dict(index, times) for index, times in enumerate(table)),
            )
        return (times_kernel_dict(index, times) for index, times in enumerate(summaries))
    return (kernel.to_dict(convention) for kernel in group_kernels(tool, launches, summaries))


# times_kernel_dict()'s JSON cut where its three values go (json_rows' parts).
_TIMES_KERNEL_PARTS = ('{"summary": ', ', "base_name": ', ', "duration_s": ', "}")


def _times_kernels_json(
    table: KernelTimesTable, shared: SharedTexts, between: str = "\n", size: int = JSON_ROWS
) -> Iterator[str]:
    """The JSON text of `times_kernel_dict(index, row)` for every row, `between` between them, from the columns."""
    for start in range(0, len(table), size):
        stop = min(start + size, len(table))
        names = table.names[start:stop]
        medians = table.figure("median")[start:stop]
        if sum(medians) == sum(medians) and min(medians) > 0:  # no NaN, every median a time: the duration
            durations = shared.floats(table, "median", start, stop)
        else:
            durations = encode_optional_floats(typical_times(table, start, stop))
        columns = [list(map(int.__repr__, range(start, stop))), list(map(encode_text, kernel_base_names(names))), durations]
        yield json_rows(_TIMES_KERNEL_PARTS, columns, between)
