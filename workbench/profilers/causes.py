"""Why a profiled kernel's figures differ from its declared operation's: traffic over the compulsory floor,
achieved FLOP over the logical FLOP, the duration against the bound. Each cause is a sentence with how
likely it is; `profilers/kernel_compare.py` puts them beside the steps of one comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.model.analysis import Analysis
from workbench.model.ops import REGISTRY
from workbench.profilers.kernels import Kernel
from workbench.profilers.records import NCU
from workbench.model.units import format_bytes, format_flop, format_int, format_time
from workbench.records import record

TOLERANCE = 0.05  # within ±5 % of the floor counts as reaching it (counter noise, rounding by ncu)
SHORT_KERNEL_S = 10e-6  # below this, launch ramp-up and the tail wave weigh on the duration

TENSOR_PATH_HINT = (
    "collect the tensor-pipe counters (sm__ops_path_tensor_src_<type>_dst_<type>.sum) to count "
    "tensor-core work; some tensor instructions (e.g. Hopper's warpgroup MMA) are not counted by "
    "them in every ncu release"
)


@dataclass(frozen=True)
class Cause:
    """One reason actual and declared figures can differ, and whether the numbers point at it."""

    name: str
    explanation: str
    evidence: str = ""
    likely: bool = False

    def as_text(self) -> str:
        flag = "likely" if self.likely else "possible"
        tail = f" [{self.evidence}]" if self.evidence else ""
        return f"{flag}: {self.name} — {self.explanation}{tail}"



record(Cause)


def ratio_of(actual: float | None, declared: float | None) -> float | None:
    if actual is None or declared is None or declared <= 0:
        return None
    return float(actual) / float(declared)


def times_text(ratio: float) -> str:
    """A ratio to four significant figures, trailing zeros kept: '1.000×', '1.468×', '0.0001221×'."""
    return f"{ratio:#.4g}×"


def bytes_text(value: float, binary: bool, scaled: bool = False) -> str:
    """'134,217,728 B ≈ 134.2 MB', or only '134.2 MB' when ncu had already rounded the figure."""
    if not scaled and float(value).is_integer():
        return f"{format_int(int(value))} B ≈ {format_bytes(value, binary)}"
    return format_bytes(value, binary)


def flop_text(value: float) -> str:
    if float(value).is_integer():
        return f"{format_int(int(value))} FLOP ≈ {format_flop(value)}"
    return format_flop(value)


def pads_to_tiles(op: str) -> bool:
    """Whether the operation's kernels pad dimensions to tile sizes (its OpSpec says)."""
    spec = REGISTRY.get(op)
    return spec is not None and spec.pads_to_tiles


def within_tolerance(ratio: float | None) -> bool:
    return ratio is not None and abs(ratio - 1.0) <= TOLERANCE


def is_tensor_path(path: str) -> bool:
    return "_tc" in path


def traffic_causes(
    read_ratio: float | None,
    write_ratio: float | None,
    traffic_ratio: float | None,
    excess_read: float | None,
    compulsory_write: int,
    footprint: int,
    l2_capacity: int | None,
    binary: bool = False,
) -> tuple[Cause, ...]:
    """Why actual DRAM traffic differs from the compulsory floor, likeliest first (empty at the floor)."""
    if traffic_ratio is None or within_tolerance(traffic_ratio):
        return ()
    if traffic_ratio < 1:
        return _below_floor(traffic_ratio, footprint, l2_capacity, binary)
    return _above_floor(read_ratio, write_ratio, excess_read, compulsory_write, footprint, l2_capacity, binary)


def _below_floor(traffic_ratio: float, footprint: int, l2_capacity: int | None, binary: bool) -> tuple[Cause, ...]:
    """Less DRAM traffic than the compulsory bytes: data already on chip, or a declaration larger than the kernel."""
    fits = l2_capacity is not None and footprint <= l2_capacity
    below = (
        Cause(
            "data already on chip",
            "part of the inputs was served from L2 left warm by an earlier pass or kernel "
            "(ncu flushes caches only with --cache-control all, its default)",
            f"working set {format_bytes(footprint, binary)} fits in L2" if fits else "",
            likely=fits,
        ),
        Cause(
            "declaration larger than the kernel's work",
            "the declared sizes or dtypes move more bytes than this kernel does "
            "(a smaller shape, a narrower type, or one kernel of several)",
            f"actual traffic is {times_text(traffic_ratio)} the floor",
            likely=not fits,
        ),
        Cause(
            "compressed memory",
            "compressible memory (Ampere and later) can move fewer bytes for data with runs of equal values",
        ),
    )
    return tuple(sorted(below, key=lambda cause: not cause.likely))


def _above_floor(
    read_ratio: float | None, write_ratio: float | None, excess_read: float | None, compulsory_write: int,
    footprint: int, l2_capacity: int | None, binary: bool,
) -> tuple[Cause, ...]:
    """More DRAM traffic than the compulsory bytes: re-reads, write-allocate, partial sectors, L2 overflow."""
    causes: list[Cause] = []
    larger_than_l2 = l2_capacity is not None and footprint > l2_capacity
    fits = l2_capacity is not None and footprint <= l2_capacity
    excess_matches_writes = (
        excess_read is not None
        and compulsory_write > 0
        and excess_read > 0
        and abs(excess_read - compulsory_write) <= 0.1 * compulsory_write
    )
    reads_high = read_ratio is not None and read_ratio > 1 + TOLERANCE
    # Excess reads the size of the output point at write-allocate, unless the working set
    # overflows L2: then re-reads are as good an explanation and the likelier one.
    write_allocate = excess_matches_writes and not larger_than_l2
    rereads = reads_high and (not excess_matches_writes or larger_than_l2)
    partial_writes = write_ratio is not None and write_ratio > 1 + TOLERANCE

    causes.append(
        Cause(
            "re-reads",
            "inputs were fetched from DRAM more than once: tiles evicted before their reuse, or no tiling",
            f"reads are {times_text(read_ratio)} the compulsory reads" if read_ratio is not None else "",
            likely=rereads,
        )
    )
    causes.append(
        Cause(
            "write-allocate",
            "output sectors were read from DRAM before being written (partial writes to a sector, or a "
            "read-modify-write epilogue)",
            f"excess reads {format_bytes(excess_read, binary)} ≈ bytes written {format_bytes(compulsory_write, binary)}"
            if excess_matches_writes and excess_read is not None
            else "",
            likely=write_allocate,
        )
    )
    causes.append(
        Cause(
            "partial sectors",
            "DRAM moves whole 32-byte sectors: strided, misaligned or scattered accesses carry unused bytes",
            f"writes are {times_text(write_ratio)} the output size"
            if partial_writes and write_ratio is not None
            else ("the working set fits in L2, so re-fetches from DRAM are unlikely" if fits and rereads else ""),
            likely=partial_writes or (fits and rereads),
        )
    )
    causes.append(
        Cause(
            "working set larger than L2",
            "the tensors do not fit in L2 together, so reuse that spans the whole working set goes back to DRAM",
            f"{format_bytes(footprint, binary)} working set > {format_bytes(l2_capacity, binary)} L2"
            if larger_than_l2 and l2_capacity is not None
            else (f"{format_bytes(footprint, binary)} fits in {format_bytes(l2_capacity, binary)} L2" if l2_capacity else ""),
            likely=larger_than_l2 and reads_high,
        )
    )
    return tuple(sorted(causes, key=lambda cause: not cause.likely))


def flop_causes(
    analysis: Analysis,
    kernel: Kernel,
    convention: str,
) -> tuple[Cause, ...]:
    """Why achieved FLOP differs from the logical FLOP, or why it ran on another path."""
    flop = kernel.flop
    if flop is None or analysis.flop <= 0:
        return ()
    achieved = float(flop.total(convention))
    ratio = achieved / analysis.flop
    tensor = float(flop.tensor_flop(convention))
    sass = float(flop.sass_flop(convention))
    declared_tensor = is_tensor_path(analysis.path)
    causes = _path_causes(analysis, flop, tensor, sass, declared_tensor)
    if within_tolerance(ratio):
        return tuple(causes)
    if ratio > 1:
        causes += _excess_flop_causes(analysis, ratio)
    else:
        causes += _missing_flop_causes(flop, ratio, declared_tensor, convention)
    return tuple(sorted(causes, key=lambda cause: not cause.likely))


def _path_causes(analysis: Analysis, flop: Any, tensor: float, sass: float, declared_tensor: bool) -> list[Cause]:
    """The work on another instruction path than the bound's: CUDA cores for a tensor path, or the reverse."""
    causes: list[Cause] = []
    if declared_tensor and sass >= 0.5 * analysis.flop and tensor < 0.5 * analysis.flop:
        causes.append(
            Cause(
                "wrong path",
                f"the work ran as CUDA-core instructions, not on the {analysis.path} tensor path the bound assumes",
                f"CUDA-core FLOP {format_flop(sass)}, tensor-pipe FLOP {format_flop(tensor)}"
                + ("" if flop.has_tensor_counters else " (no tensor counters collected)"),
                likely=flop.has_tensor_counters or (flop.tensor_pipe_percent is not None and flop.tensor_pipe_percent < 1),
            )
        )
    if not declared_tensor and tensor >= 0.5 * analysis.flop:
        causes.append(
            Cause(
                "wrong path",
                f"the work ran on tensor cores while the bound uses the {analysis.path} rate "
                "(TF32 enabled for an fp32 product, for instance)",
                f"tensor-pipe FLOP {format_flop(tensor)}",
                likely=True,
            )
        )
    return causes


def _excess_flop_causes(analysis: Analysis, ratio: float) -> list[Cause]:
    """More FLOP counted than the operation's: padding, masked work, recompute, arithmetic around it."""
    op = analysis.declaration.op
    params = analysis.declaration.params
    causes = [
        Cause(
            "padding",
            "dimensions rounded up to the kernel's tile sizes: the padded rows and columns are computed too",
            f"achieved is {times_text(ratio)} the logical work",
            likely=pads_to_tiles(op),
        )
    ]
    if op == "attention":
        causes.append(
            Cause(
                "masked work",
                "scores a causal mask discards are computed before they are masked",
                "causal attention" if params.get("causal") else "",
                likely=bool(params.get("causal")),
            )
        )
    causes += [
        Cause(
            "recompute",
            "intermediates recomputed rather than stored (backward passes, fused kernels that rebuild a softmax)",
        ),
        Cause(
            "arithmetic outside the operation",
            "the counters also see index arithmetic done in floating point, scaling epilogues and conversions",
        ),
    ]
    return causes


def _missing_flop_causes(flop: Any, ratio: float, declared_tensor: bool, convention: str) -> list[Cause]:
    """Fewer FLOP counted than the operation's: a pipe the counters miss, packed fp16, one kernel of several."""
    uncounted = declared_tensor and not flop.has_tensor_counters
    packed = any(count.precision == "fp16" and count.flop(convention) > 0 for count in flop.sass)
    causes = [
        Cause(
            "work on a pipe these counters miss",
            "the arithmetic ran where the collected counters do not look (tensor cores without tensor-pipe "
            "counters, integer or special-function units)",
            "declared a tensor path; no tensor counters in the file" if uncounted else "",
            likely=uncounted,
        )
    ]
    if packed:
        causes.append(
            Cause(
                "packed half-precision instructions",
                "HADD2/HMUL2/HFMA2 do two operations per counted instruction, so fp16 SASS counts read half the work",
                f"fp16 SASS counters present, achieved is {times_text(ratio)} the logical work",
                likely=0.4 <= ratio <= 0.6,
            )
        )
    causes.append(
        Cause(
            "part of the operation",
            "the operation is split across kernels (split-K reduction, a separate epilogue or softmax kernel); "
            "this kernel did only its share",
            f"achieved is {times_text(ratio)} the logical work",
        )
    )
    return causes


def time_causes(
    analysis: Analysis,
    duration: float | None,
    actual_bytes: float | None,
    footprint: int,
    l2_capacity: int | None,
    tool: str,
) -> tuple[Cause, ...]:
    """Why the profiled duration sits where it does against the bound."""
    ratio = ratio_of(duration, analysis.bound_time)
    if ratio is None or duration is None:
        return ()
    if ratio < 1 - TOLERANCE:
        return _faster_than_bound(analysis, actual_bytes, footprint, l2_capacity)
    if ratio <= 1 + TOLERANCE:
        return ()
    return _slower_than_bound(analysis, duration, actual_bytes, tool)


def _faster_than_bound(analysis: Analysis, actual_bytes: float | None, footprint: int, l2_capacity: int | None) -> tuple[Cause, ...]:
    """A duration below the bound: data from L2, or rates in use below what the device sustains."""
    causes: list[Cause] = []
    fits = l2_capacity is not None and footprint <= l2_capacity
    causes.append(
        Cause(
            "data served from L2",
            "the bound assumes every compulsory byte crosses HBM; L2-resident data arrives faster",
            "working set fits in L2" if fits else (
                "actual DRAM traffic is below the floor"
                if actual_bytes is not None and actual_bytes < analysis.bytes * (1 - TOLERANCE)
                else ""
            ),
            likely=fits or (actual_bytes is not None and actual_bytes < analysis.bytes * (1 - TOLERANCE)),
        )
    )
    causes.append(
        Cause(
            "rates below what the device sustains",
            "the compute rate or bandwidth in use is lower than this GPU reaches for this shape "
            "(check the device and the rate sources)",
        )
    )
    return tuple(sorted(causes, key=lambda cause: not cause.likely))


def _slower_than_bound(analysis: Analysis, duration: float, actual_bytes: float | None, tool: str) -> tuple[Cause, ...]:
    """A duration above the bound: extra traffic, base clocks under ncu, a short kernel, datasheet rates."""
    causes: list[Cause] = []
    memory_limited = analysis.limiter == "memory"
    if (
        actual_bytes is not None
        and analysis.bandwidth is not None
        and actual_bytes > analysis.bytes * (1 + TOLERANCE)
    ):
        actual_memory_time = actual_bytes / analysis.bandwidth.value
        causes.append(
            Cause(
                "extra DRAM traffic",
                "bytes above the compulsory floor take time the bound does not count",
                f"actual bytes at the bandwidth in use need {format_time(actual_memory_time)} "
                f"of the {format_time(duration)} profiled",
                likely=memory_limited or actual_memory_time > 0.5 * duration,
            )
        )
    if tool == NCU:
        causes.append(
            Cause(
                "base clocks under ncu",
                "ncu locks clocks to base while profiling, below the boost clocks datasheet rates assume",
                "compute-limited declaration" if not memory_limited else "",
                likely=not memory_limited,
            )
        )
    if duration < SHORT_KERNEL_S:
        causes.append(
            Cause(
                "launch and tail effects",
                "a short kernel spends a visible share of its time ramping up and draining its last wave",
                f"{format_time(duration)} duration",
                likely=True,
            )
        )
    if memory_limited and analysis.bandwidth is not None and analysis.bandwidth.source in ("datasheet", "derived"):
        causes.append(
            Cause(
                "datasheet bandwidth",
                "well-made stream kernels reach 83–95 % of HBM datasheet bandwidth; calibrate to bound with a measured rate",
                f"bandwidth source: {analysis.bandwidth.source}",
            )
        )
    if not memory_limited and analysis.compute_rate is not None and analysis.compute_rate.source in ("datasheet", "derived"):
        causes.append(
            Cause(
                "datasheet compute rate",
                "large GEMMs reach 70–85 % of the dense datasheet peak; calibrate to bound with a measured rate",
                f"rate source: {analysis.compute_rate.source}",
            )
        )
    return tuple(sorted(causes, key=lambda cause: not cause.likely))


# ---------------------------------------------------------------- comparison
