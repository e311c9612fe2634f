"""A profiled kernel against its declared operation: actual traffic over the compulsory floor.

The seed's point: compulsory bytes are a floor, and counters tell whether a
kernel reaches it. `compare()` puts one imported kernel beside the
`Analysis` of the operation it implements and derives, as steps written the
way the calculator panel writes its own:

- actual DRAM bytes read and written against the compulsory bytes (the
  ratio, and the likely causes when they differ: re-reads, write-allocate,
  partial sectors, a working set larger than L2);
- achieved FLOP from the counters against the logical FLOP (padding,
  recompute, the wrong instruction path);
- the profiled duration against the time bound, with the note that ncu
  locks base clocks and flushes caches between replay passes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from workbench.model.analysis import Analysis, DerivationLine, analyze
from workbench.model.devices.catalogue import Device
from workbench.model.devices.provenance import GPU, STATED_BY_FILE, DeviceProvenance, catalogue_device, match_catalogue
from workbench.model.plausibility import Evidence, ImpossibleResult, Reason, impossible_result, uses_nominal_rate
from workbench.profilers.causes import (  # noqa: F401  (Cause and traffic_causes re-exported)
    TENSOR_PATH_HINT,
    TOLERANCE,
    Cause,
    bytes_text,
    flop_causes,
    flop_text,
    is_tensor_path,
    ratio_of,
    time_causes,
    times_text,
    traffic_causes,
    within_tolerance,
)
from workbench.profilers.counters import Reading
from workbench.profilers.kernels import Kernel, RooflinePoint, kernel_from_times
from workbench.profilers.names import select_names
from workbench.profilers.matching import MatchRule, match_kernels
from workbench.profilers.numbers import NumberFormat
from workbench.profilers.profile import Profile
from workbench.profilers.records import NCU, NCU_CONDITIONS_NOTE, NSYS, NSYS_CONDITIONS_NOTE, KernelTimesTable
from workbench.profilers.symptoms import BandwidthSymptom, bandwidth_symptom
from workbench.records import to_plain
from workbench.model.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_rate,
    format_int,
    format_number,
    format_time,
)

@dataclass(frozen=True)
class Comparison:
    """One matched kernel against its declared operation: traffic, work and time, with the derivation."""

    kernel_name: str
    declaration: str
    tool: str
    launches: int
    convention: str
    path: str
    compulsory_read: int
    compulsory_write: int
    compulsory_bytes: int
    footprint_bytes: int
    l2_capacity: int | None
    actual_read: float | None
    actual_write: float | None
    actual_bytes: float | None
    l2_bytes: float | None
    logical_flop: int
    achieved_flop: float | None
    duration: float | None
    bound_time: float | None
    bandwidth: float | None
    compute_rate: float | None
    traffic_causes: tuple[Cause, ...]
    flop_causes: tuple[Cause, ...]
    time_causes: tuple[Cause, ...]
    steps: tuple[DerivationLine, ...]
    notes: tuple[str, ...]
    roofline: RooflinePoint | None
    impossible: ImpossibleResult | None = None  # faster than its own device's bound: flagged, with reasons

    @property
    def traffic_ratio(self) -> float | None:
        """Actual DRAM bytes / compulsory bytes: 1 at the floor, above it when data moves more than once."""
        return ratio_of(self.actual_bytes, self.compulsory_bytes)

    @property
    def read_ratio(self) -> float | None:
        return ratio_of(self.actual_read, self.compulsory_read)

    @property
    def write_ratio(self) -> float | None:
        return ratio_of(self.actual_write, self.compulsory_write)

    @property
    def flop_ratio(self) -> float | None:
        """Achieved FLOP (counters) / logical FLOP (declaration)."""
        return ratio_of(self.achieved_flop, self.logical_flop)

    @property
    def duration_ratio(self) -> float | None:
        """Profiled duration / time bound: 1 at the bound, larger when the kernel falls short of it."""
        return ratio_of(self.duration, self.bound_time)

    @property
    def achieved_bandwidth(self) -> float | None:
        """Actual DRAM bytes per second of profiled duration."""
        if self.actual_bytes is None or not self.duration:
            return None
        return float(self.actual_bytes) / self.duration

    @property
    def traffic_verdict(self) -> str:
        ratio = self.traffic_ratio
        if ratio is None:
            return "no DRAM byte counters"
        if within_tolerance(ratio):
            return "at the compulsory floor"
        return "above the compulsory floor" if ratio > 1 else "below the compulsory floor"

    def derivation_text(self) -> str:
        """The comparison as plain text: steps, then causes, then notes (the CLI prints this)."""
        width = max((len(step.label) for step in self.steps), default=0)
        lines = [f"{self.kernel_name}  ⟷  {self.declaration}    [{self.convention}]"]
        lines += [f"  {step.label.ljust(width)}  {step.body}" for step in self.steps]
        for title, causes in (
            ("traffic", self.traffic_causes),
            ("work", self.flop_causes),
            ("time", self.time_causes),
        ):
            if causes:
                lines.append(f"  why the {title} differs:")
                lines += [f"    - {cause.as_text()}" for cause in causes]
        if self.impossible is not None:
            lines.append(f"  IMPOSSIBLE: {self.impossible.headline}; check:")
            lines += [f"    - {reason.as_text()}" for reason in self.impossible.reasons]
        if self.notes:
            lines.append("  notes:")
            lines += [f"    - {note}" for note in self.notes]
        return "\n".join(lines)

    # by hand: the import commands' figures, derived from the kernel, its analysis and its roofline point
    def to_dict(self) -> dict[str, Any]:
        """Everything `workbench import-ncu --match … --json` prints for one match (base units)."""
        point = self.roofline
        return {
            "kernel": self.kernel_name,
            "declaration": self.declaration,
            "tool": self.tool,
            "launches": self.launches,
            "convention": self.convention,
            "path": self.path,
            "compulsory_read_bytes": self.compulsory_read,
            "compulsory_write_bytes": self.compulsory_write,
            "compulsory_bytes": self.compulsory_bytes,
            "footprint_bytes": self.footprint_bytes,
            "l2_capacity_bytes": self.l2_capacity,
            "actual_read_bytes": self.actual_read,
            "actual_write_bytes": self.actual_write,
            "actual_bytes": self.actual_bytes,
            "l2_bytes": self.l2_bytes,
            "traffic_ratio": self.traffic_ratio,
            "read_ratio": self.read_ratio,
            "write_ratio": self.write_ratio,
            "traffic_verdict": self.traffic_verdict,
            "logical_flop": self.logical_flop,
            "achieved_flop": self.achieved_flop,
            "flop_ratio": self.flop_ratio,
            "duration_s": self.duration,
            "bound_time_s": self.bound_time,
            "duration_ratio": self.duration_ratio,
            "achieved_bandwidth_byte_per_s": self.achieved_bandwidth,
            "bandwidth_byte_per_s": self.bandwidth,
            "traffic_causes": to_plain(self.traffic_causes),
            "flop_causes": to_plain(self.flop_causes),
            "time_causes": to_plain(self.time_causes),
            "roofline": None
            if point is None
            else {"intensity_flop_per_byte": point.intensity, "flop_per_s": point.flop_rate, "flop_source": point.flop_source},
            "steps": to_plain(self.steps),
            "notes": list(self.notes),
            "impossible": to_plain(self.impossible),
        }


# ---------------------------------------------------------------- causes


@dataclass(frozen=True)
class _Figures:
    """The numbers a comparison is built from, gathered once: declared bytes, counters, duration."""

    compulsory_read: int
    compulsory_write: int
    readers: tuple[tuple[str, int], ...]  # (tensor name, bytes read)
    writers: tuple[tuple[str, int], ...]
    footprint: int
    l2_capacity: int | None
    actual_read: float | None
    actual_write: float | None
    actual_bytes: float | None
    l2_bytes: float | None
    achieved_flop: int | float | None
    duration: float | None
    over_launches: str  # "median of 3 launches", or "" for one launch


def _figures(kernel: Kernel, analysis: Analysis, device: Device | None) -> _Figures:
    workload = analysis.declaration.workload()
    dram = kernel.dram

    def value(reading: Reading | None) -> float | None:
        return None if reading is None else float(reading.value)

    return _Figures(
        compulsory_read=int(sum(t.bytes_each * t.reads for t in workload.tensors)),
        compulsory_write=int(sum(t.bytes_each * t.writes for t in workload.tensors)),
        readers=tuple((t.name, int(t.bytes_each * t.reads)) for t in workload.tensors if t.reads),
        writers=tuple((t.name, int(t.bytes_each * t.writes)) for t in workload.tensors if t.writes),
        footprint=int(workload.footprint_bytes),
        l2_capacity=device.l2_bytes if device is not None else None,
        actual_read=value(dram.read),
        actual_write=value(dram.write),
        actual_bytes=value(dram.total),
        l2_bytes=value(kernel.l2_bytes),
        achieved_flop=kernel.achieved_flop(analysis.convention),
        duration=value(kernel.duration),
        over_launches=f"{kernel.statistic} of {kernel.instances} launches" if kernel.instances > 1 else "",
    )


def _traffic_steps(kernel: Kernel, analysis: Analysis, fig: _Figures, binary: bool) -> list[DerivationLine]:
    """Actual DRAM bytes, compulsory bytes, their ratios, L2 traffic and the working set against L2."""
    dram, many = kernel.dram, fig.over_launches
    steps: list[DerivationLine] = []
    if dram.read is not None and fig.actual_read is not None:
        steps.append(DerivationLine(f"Actual DRAM read ({dram.read.source})", many, bytes_text(fig.actual_read, binary, dram.read.scaled)))
    if dram.write is not None and fig.actual_write is not None:
        steps.append(DerivationLine(f"Actual DRAM write ({dram.write.source})", many, bytes_text(fig.actual_write, binary, dram.write.scaled)))
    if dram.total is not None and fig.actual_bytes is not None:
        expression = many
        if fig.actual_read is not None and fig.actual_write is not None:
            expression = f"{format_bytes(fig.actual_read, binary)} + {format_bytes(fig.actual_write, binary)}"
        steps.append(DerivationLine("Actual DRAM traffic", expression, bytes_text(fig.actual_bytes, binary, dram.total.scaled)))
    elif kernel.tool == NCU:
        steps.append(DerivationLine("Actual DRAM traffic", "", "no DRAM byte counters in the file (collect dram__bytes_read.sum, dram__bytes_write.sum)"))
    else:
        steps.append(DerivationLine("Actual DRAM traffic", "", "nsys records no memory counters: profile the kernel with ncu for DRAM bytes"))

    for label, parts, total, nothing in (
        ("Compulsory read (declared)", fig.readers, fig.compulsory_read, "nothing read"),
        ("Compulsory write (declared)", fig.writers, fig.compulsory_write, "nothing written"),
    ):
        expression = " + ".join(f"{name} {format_int(size)} B" for name, size in parts) or nothing
        steps.append(DerivationLine(label, expression, bytes_text(total, binary)))

    for label, actual, declared in (
        ("Traffic ratio, actual / compulsory", fig.actual_bytes, analysis.bytes),
        ("Read ratio", fig.actual_read, fig.compulsory_read),
        ("Write ratio", fig.actual_write, fig.compulsory_write),
    ):
        ratio = ratio_of(actual, declared)
        if ratio is not None and actual is not None:
            steps.append(DerivationLine(label, f"{format_bytes(actual, binary)} / {format_bytes(declared, binary)}", times_text(ratio)))

    if kernel.l2_bytes is not None and fig.l2_bytes is not None:
        steps.append(DerivationLine(f"L2 traffic ({kernel.l2_bytes.source})", many, bytes_text(fig.l2_bytes, binary, kernel.l2_bytes.scaled)))
        if fig.actual_bytes:
            steps.append(
                DerivationLine(
                    "L2 traffic / DRAM traffic",
                    f"{format_bytes(fig.l2_bytes, binary)} / {format_bytes(fig.actual_bytes, binary)}",
                    f"{times_text(fig.l2_bytes / fig.actual_bytes)} (L2 bytes per DRAM byte: the reuse L2 served)",
                )
            )
    if fig.l2_capacity is not None:
        larger = fig.footprint > fig.l2_capacity
        steps.append(
            DerivationLine(
                "Working set against L2",
                f"{format_bytes(fig.footprint, binary)} {'>' if larger else '≤'} {format_bytes(fig.l2_capacity, binary)}",
                "larger than L2" if larger else "fits in L2",
                relation="⇒",
            )
        )
    traffic_ratio = ratio_of(fig.actual_bytes, analysis.bytes)
    if traffic_ratio is not None:
        if within_tolerance(traffic_ratio):
            verdict = "at the compulsory floor: the assumed reuse is realised"
        elif traffic_ratio > 1:
            verdict = f"{times_text(traffic_ratio)} the compulsory floor: data moves more than once"
        else:
            verdict = f"{times_text(traffic_ratio)} the compulsory floor: below it, some data never crossed DRAM"
        steps.append(DerivationLine("Traffic", f"within ±{format_number(TOLERANCE * 100)} % is the floor", verdict, relation="⇒"))
    return steps


def _work_steps(kernel: Kernel, analysis: Analysis, fig: _Figures) -> list[DerivationLine]:
    """Achieved FLOP from the counters against the logical FLOP."""
    convention = analysis.convention
    if kernel.flop is None or fig.achieved_flop is None:
        if kernel.tool != NCU:
            return []
        return [
            DerivationLine(
                "Achieved FLOP",
                "",
                "no SASS or tensor-pipe FLOP counters in the file "
                "(collect smsp__sass_thread_inst_executed_op_{f,h,d}{add,mul,fma}_pred_on.sum)",
            )
        ]
    achieved = float(fig.achieved_flop)
    steps = [
        DerivationLine(f"Achieved FLOP (counters, {convention})", kernel.flop.expression(convention), flop_text(achieved)),
        DerivationLine("Logical FLOP (declared)", "", flop_text(analysis.flop)),
    ]
    ratio = ratio_of(achieved, analysis.flop)
    if ratio is not None:
        steps.append(DerivationLine("Work ratio, achieved / logical", f"{format_flop(achieved)} / {format_flop(analysis.flop)}", times_text(ratio)))
    if kernel.flop.tensor_pipe_percent is not None:
        steps.append(
            DerivationLine("Tensor pipe active", "sm__pipe_tensor_*cycles_active", f"{format_number(kernel.flop.tensor_pipe_percent)} % of peak")
        )
    return steps


def _time_steps(kernel: Kernel, analysis: Analysis, fig: _Figures, binary: bool) -> list[DerivationLine]:
    """The profiled duration against the bound, and the bandwidth and rate it implies."""
    duration = fig.duration
    if kernel.duration is None or not duration:
        return []
    spread = ""
    if kernel.duration_min is not None and kernel.duration_max is not None and kernel.instances > 1:
        spread = f"{fig.over_launches}; {format_time(kernel.duration_min)} to {format_time(kernel.duration_max)}"
    steps = [DerivationLine(f"Profiled duration ({kernel.duration.source})", spread, format_time(duration))]
    if analysis.bound_time is not None:
        tc, tm = format_time(analysis.compute_time or 0.0), format_time(analysis.memory_time or 0.0)
        combined = {"full": f"max({tc}, {tm})", "none": f"{tc} + {tm}"}.get(
            analysis.overlap.label, f"compute {tc}, memory {tm}, overlap f = {analysis.overlap.label}"
        )
        steps.append(DerivationLine(f"Time bound ({analysis.overlap.label} overlap)", combined, format_time(analysis.bound_time)))
        ratio = duration / analysis.bound_time
        steps.append(
            DerivationLine(
                "Duration / bound",
                f"{format_time(duration)} / {format_time(analysis.bound_time)}",
                f"{times_text(ratio)}: the kernel reaches {format_number(100 / ratio, 3)} % of the bound",
            )
        )
    if fig.actual_bytes is not None:
        achieved_bandwidth = fig.actual_bytes / duration
        share = ""
        if analysis.bandwidth is not None:
            share = (
                f" = {format_number(100 * achieved_bandwidth / analysis.bandwidth.value, 3)} % of "
                f"{format_bandwidth(analysis.bandwidth.value, binary)} ({analysis.bandwidth.source})"
            )
        steps.append(
            DerivationLine(
                "Achieved DRAM bandwidth",
                f"{format_bytes(fig.actual_bytes, binary)} / {format_time(duration)}",
                f"{format_bandwidth(achieved_bandwidth, binary)}{share}",
            )
        )
    if analysis.flop > 0:
        # Useful work per second: the logical FLOP, which is what the compute bound divides.
        share = ""
        if analysis.compute_rate is not None:
            share = (
                f" = {format_number(100 * analysis.flop / duration / analysis.compute_rate.value, 3)} % of "
                f"{format_flop_rate(analysis.compute_rate.value)} ({analysis.path})"
            )
        steps.append(
            DerivationLine(
                "Rate of useful work (logical FLOP)",
                f"{format_flop(analysis.flop)} / {format_time(duration)}",
                f"{format_flop_rate(analysis.flop / duration)}{share}",
            )
        )
    return steps


def _notes(kernel: Kernel, analysis: Analysis) -> list[str]:
    notes = [NCU_CONDITIONS_NOTE if kernel.tool == NCU else NSYS_CONDITIONS_NOTE, *kernel.notes]
    if kernel.flop is not None and is_tensor_path(analysis.path) and not kernel.flop.has_tensor_counters:
        notes.append(f"the declared path is {analysis.path}: {TENSOR_PATH_HINT}")
    dram = kernel.dram
    if any(reading is not None and reading.scaled for reading in (dram.read, dram.write, dram.total, kernel.l2_bytes)):
        notes.append(
            "ncu rounded some byte counts to about four significant digits (auto-scaled units); "
            "ratios near 1 carry that rounding"
        )
    if analysis.bound_time is None:
        notes.append("no time bound: choose a device (or enter rates) to compare the duration with the bound")
    return notes


def compare(
    kernel: Kernel,
    analysis: Analysis,
    device: Device | None = None,
    binary: bool = False,
    provenance: DeviceProvenance | None = None,
    *,
    number_format: NumberFormat | None = None,
) -> Comparison:
    """Put one imported kernel beside the analysis of the operation it implements.

    `device` supplies the L2 capacity for the working-set test (the analysis
    carries only the device's name); the convention is the analysis's own.
    `provenance` is what the file states about its GPU (`profile_provenance`):
    it tells the impossible-result check whether the device was stated.
    `number_format` is how the file's numbers were read (`Profile.number_format`),
    named when the kernel moves more bytes per second than the device can.
    """
    fig = _figures(kernel, analysis, device)
    steps = _traffic_steps(kernel, analysis, fig, binary) + _work_steps(kernel, analysis, fig)
    steps += _time_steps(kernel, analysis, fig, binary)
    excess_read = None if fig.actual_read is None else fig.actual_read - fig.compulsory_read
    symptom = bandwidth_symptom(kernel, device, number_format, binary)
    impossible = _with_misread_format(
        impossible_kernel(
            analysis, fig.duration, fig, kernel.tool, device, provenance or DeviceProvenance(kind="", name=""), binary
        ),
        symptom,
    )
    return Comparison(
        kernel_name=kernel.name,
        declaration=str(analysis.declaration),
        tool=kernel.tool,
        launches=kernel.instances,
        convention=analysis.convention,
        path=analysis.path,
        compulsory_read=fig.compulsory_read,
        compulsory_write=fig.compulsory_write,
        compulsory_bytes=analysis.bytes,
        footprint_bytes=fig.footprint,
        l2_capacity=fig.l2_capacity,
        actual_read=fig.actual_read,
        actual_write=fig.actual_write,
        actual_bytes=fig.actual_bytes,
        l2_bytes=fig.l2_bytes,
        logical_flop=analysis.flop,
        achieved_flop=None if fig.achieved_flop is None else float(fig.achieved_flop),
        duration=fig.duration,
        bound_time=analysis.bound_time,
        bandwidth=None if analysis.bandwidth is None else analysis.bandwidth.value,
        compute_rate=None if analysis.compute_rate is None else analysis.compute_rate.value,
        traffic_causes=traffic_causes(
            ratio_of(fig.actual_read, fig.compulsory_read),
            ratio_of(fig.actual_write, fig.compulsory_write),
            ratio_of(fig.actual_bytes, analysis.bytes),
            excess_read,
            fig.compulsory_write,
            fig.footprint,
            fig.l2_capacity,
            binary,
        ),
        flop_causes=flop_causes(analysis, kernel, analysis.convention),
        # The misread format is among the impossible flag's reasons where there is a flag, else a time cause.
        time_causes=(() if impossible is not None else _misread_format_causes(symptom))
        + time_causes(analysis, fig.duration, fig.actual_bytes, fig.footprint, fig.l2_capacity, kernel.tool),
        steps=tuple(steps),
        notes=tuple(_notes(kernel, analysis)),
        roofline=_roofline(kernel, analysis, fig.achieved_flop),
        impossible=impossible,
    )


def _with_misread_format(impossible: ImpossibleResult | None, symptom: BandwidthSymptom | None) -> ImpossibleResult | None:
    """The impossible-result flag with a misread number format first among its reasons, where the counters
    imply more bytes per second than the device has (profiles only: a measured run reads no numbers)."""
    if impossible is None or symptom is None:
        return impossible
    reason = Reason("misread number format", symptom.explanation, symptom.evidence, likely=symptom.likely)
    reasons = sorted((reason, *impossible.reasons), key=lambda item: not item.likely)
    return replace(impossible, reasons=tuple(reasons))


def _misread_format_causes(symptom: BandwidthSymptom | None) -> tuple[Cause, ...]:
    """The misread-number-format cause, first, where the counters imply more than the device's bandwidth."""
    if symptom is None:
        return ()
    return (Cause("misread number format", symptom.explanation, symptom.evidence, likely=symptom.likely),)


def _roofline(kernel: Kernel, analysis: Analysis, achieved: int | float | None) -> RooflinePoint | None:
    """The kernel's point: counted FLOP when they agree with the declaration within 2×, else logical FLOP.

    Counters that miss the work (tensor cores without tensor counters) would
    put the point orders of magnitude too low; the declared work places it.
    """
    ratio = ratio_of(achieved, analysis.flop)
    if ratio is not None and 0.5 <= ratio <= 2.0:
        return kernel.roofline_point(analysis.convention)
    return kernel.roofline_point(analysis.convention, declared_flop=analysis.flop, prefer_declared=True)


_CLOCK_METRICS = {
    "SM Frequency": "sm",
    "gpc__cycles_elapsed.avg.per_second": "sm",
    "DRAM Frequency": "dram",
    "dram__cycles_elapsed.avg.per_second": "dram",
}


def profile_provenance(profile: Profile) -> DeviceProvenance:
    """The GPU the file states (a device name, else a compute capability, and the clocks it printed).

    A compute capability alone names an architecture: its first catalogue
    entry is taken and `matched_by` says so. A file that states nothing
    (nsys summaries) has an empty provenance.
    """
    name, capability = profile.device_name, profile.compute_capability
    if not name and not capability:
        return DeviceProvenance(kind="", name="")
    device, how = match_catalogue(GPU, name, capability)
    clocks: dict[str, float] = {}
    for launch in profile.launches:
        for metric, key in _CLOCK_METRICS.items():
            value = launch.value(metric)
            if key not in clocks and isinstance(value, (int, float)) and value > 0:
                clocks[key] = float(value)
    return DeviceProvenance(
        kind=GPU,
        name=name,
        catalogue_key=device.key if device is not None else "",
        matched_by=how,
        stated_by=STATED_BY_FILE,
        compute_capability=capability,
        clocks_hz=clocks,
    )


def profile_device(profile: Profile) -> Device | None:
    """The catalogue device the file states (by name, else by compute capability), if any."""
    provenance = profile_provenance(profile)
    return catalogue_device(provenance) if provenance.kind else None


def impossible_kernel(
    analysis: Analysis,
    duration: float | None,
    fig: "_Figures",
    tool: str,
    device: Device | None,
    provenance: DeviceProvenance,
    binary: bool = False,
) -> ImpossibleResult | None:
    """A profiled kernel faster than its own device's bound (`workbench.model.plausibility`), with the reasons to check."""
    if device is None or analysis.bound_time is None or not duration:
        return None
    sources = tuple(rate.source for rate in (analysis.compute_rate, analysis.bandwidth) if rate is not None)
    return impossible_result(
        Evidence(
            fraction_of_bound=analysis.bound_time / duration,
            slow_fraction=None,  # a profile gives one duration per kernel, no spread
            device_name=device.name,
            device_stated=provenance.stated,
            device_note=provenance.matched_by if provenance.matched_by.startswith("compute") else "",
            rate_sources=sources,
            nominal_rates=uses_nominal_rate(sources),
            limiter=analysis.limiter,
            warm=None if tool == NCU else True,  # ncu flushes caches unless told not to; nsys sees the app's own
            working_set_bytes=fig.footprint,
            cache_bytes=fig.l2_capacity,
            declared_bytes=analysis.bytes,
            moved_bytes=fig.actual_bytes,
            measured_time_s=duration,
            binary=binary,
            bandwidth_byte_per_s=analysis.bandwidth.value if analysis.bandwidth else None,
            compute_rate_flop_per_s=analysis.compute_rate.value if analysis.compute_rate else None,
        )
    )


MAX_COMPARED_KERNELS = 1_000  # past this many kernels selected, a rule is too broad to compare each


class Comparisons(list):  # type: ignore[type-arg]
    """compare_profile's comparisons (a list), and how many kernels the rules selected: more than were
    compared where they selected over MAX_COMPARED_KERNELS."""

    selected: int = 0


def compare_profile(
    profile: Profile,
    rules: Sequence[MatchRule] | None = None,
    device: Device | str | None = None,
    convention: str = "fma2",
    overlap: Any = "full",
    binary: bool = False,
    limit: int = MAX_COMPARED_KERNELS,
) -> Comparisons:
    """Every kernel a rule selects (the first `limit` of them, in the file's order), compared with that
    rule's declaration on `device`; `selected` on the result counts them all.

    `rules` default to the profile's saved matches; `device` defaults to the
    GPU the file names when the catalogue knows it (without one, bytes and
    FLOP are still compared, and the time bound is left out). Each rule's
    declaration is analysed once, however many kernels it selects.
    """
    from workbench.model.devices.catalogue import find_device

    chosen = find_device(device) if isinstance(device, str) else device
    provenance = profile_provenance(profile)
    if chosen is None:
        chosen = profile_device(profile)
    comparisons = Comparisons()
    chosen_rules = list(rules if rules is not None else profile.matches)
    if not chosen_rules:
        return comparisons
    analyses: dict[str, Analysis] = {}
    if profile.tool == NSYS and isinstance(profile.summaries, KernelTimesTable):
        # A summary of a million kernels is matched by its names column; Kernels are made for those compared.
        # Each rule tests the names no rule before it took, all at once (select_names): the first that selects
        # a kernel takes it, as first_rule() would.
        import numpy as np

        names = profile.summaries.names
        rule_of = np.full(len(names), -1, dtype=np.int64)
        left = np.arange(len(names))
        for number, rule in enumerate(chosen_rules):
            if not len(left):
                break
            asked = names if len(left) == len(names) else [names[i] for i in left.tolist()]
            hits = np.array(select_names(rule.pattern, asked), dtype=bool)
            rule_of[left[hits]] = number
            left = left[~hits]
        rows = np.flatnonzero(rule_of >= 0)
        comparisons.selected = len(rows)
        pairs = [(kernel_from_times(profile.summaries[index]), chosen_rules[rule_of[index]]) for index in rows[:limit].tolist()]
    else:
        pairs = match_kernels(profile.iter_kernels(), chosen_rules)
        comparisons.selected = len(pairs)
    for kernel, rule in pairs[:limit]:
        analysis = analyses.get(rule.declaration)
        if analysis is None:
            analysis = analyses[rule.declaration] = analyze(rule.declaration, device=chosen, convention=convention,
                                                            overlap=overlap, binary=binary)
        comparisons.append(compare(kernel, analysis, chosen, binary, provenance, number_format=profile.number_format))
    return comparisons
