"""Memory-level parallelism: Little's law applied to a kernel whose launch the model knows.

Little's law (L = λ·W) says a memory can deliver no more than the bytes in flight divided by the
time each byte spends in flight:

    achievable read rate = SMs × bytes in flight per SM ÷ latency

Bytes in flight per SM come from the occupancy: the threads resident on one SM (as many blocks as fit
in the SM's thread and block limits, and no more threads than the launch has for each SM), each holding
`loads_in_flight` loads of `bytes_per_load` bytes. Stores are posted, so only loads are in flight; the
writes go out beside the reads at the same pace, so the kernel's whole traffic moves at the read rate ×
(all bytes ÷ bytes read), and never faster than the memory's own rate:

    achievable bandwidth = min(rate, read rate × bytes ÷ bytes read)
    time = bytes ÷ achievable bandwidth

Read forwards, the same law says what the memory's rate needs in flight, and a launch holding less is below its
roof for that reason (`shortfall` says so in one sentence):

    needed per SM = rate × latency × (bytes read ÷ bytes) ÷ SMs

A library kernel made of several launches (triad as two ufunc calls) takes the sum of their times. The
figures come from `little()`, which the term (analysis), the derivation, the roofline's lowered roof and
the CLI all read. The latency is the device's loaded latency across HBM (catalogue, or calibration's
measured figure); without one, or without an SM count or a compute capability, there is no term.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from workbench.model.analysis.terms import MLP, TRANSFER_KIND, Term
from workbench.model.devices.catalogue import DERIVED, Device, Latency, Rate
from workbench.model.units import format_bandwidth, format_bytes, format_time

LATENCY_INTERFACE = "hbm"  # the interface whose latency the term uses (DRAM on a CPU is keyed the same)


@dataclass(frozen=True)
class KernelLittle:
    """Little's law for one kernel launch on one device."""

    launch: Any  # implementations.KernelLaunch
    blocks_per_sm: Any  # resident blocks on one SM: min(block limit, thread limit ÷ threads per block)
    threads_per_sm: Any  # resident threads on one SM (no more than the launch has for each SM)
    in_flight_per_sm: Any  # threads_per_sm × loads_in_flight × bytes_per_load
    read_rate: Any  # SMs × in_flight_per_sm ÷ latency (B/s of reads)
    achievable: Any  # min(memory rate, read rate × bytes ÷ bytes read), B/s of all traffic
    time_s: Any  # bytes ÷ achievable
    needed_per_sm: Any = 0.0  # bytes in flight per SM the memory's rate needs: rate × latency × (bytes read ÷ bytes) ÷ SMs

    @property
    def short(self) -> bool:
        """True when the launch holds fewer bytes in flight than the memory's rate needs (the roof is lowered)."""
        held, needed = self.in_flight_per_sm, self.needed_per_sm
        if _is_number(held) and _is_number(needed):
            return bool(held < needed)
        import numpy as np

        return bool(np.any(np.asarray(held) < np.asarray(needed)))


@dataclass(frozen=True)
class Little:
    """Little's law for every launch of an operation's kernel(s), and the term's totals."""

    kernels: tuple[KernelLittle, ...]
    sm_count: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    latency: Latency
    rate: Rate  # the memory's rate the achievable bandwidth is capped at
    bytes: Any  # all kernels' bytes
    time_s: Any  # the sum of their times

    @property
    def achievable(self) -> Any:
        """The bandwidth the kernels reach together: bytes ÷ time (the lowered roof)."""
        return self.bytes / self.time_s


def little(launches: Sequence[Any], device: Device | None, rate: Rate | None) -> Little | None:
    """Little's law for `launches` on `device`, capped at `rate` (the HBM term's); None when a figure is missing."""
    if not launches or device is None or rate is None or not device.sm_count:
        return None
    latency = device.latency_of(LATENCY_INTERFACE)
    threads_limit, blocks_limit = device.max_threads_per_sm, device.max_blocks_per_sm
    if latency is None or threads_limit is None or blocks_limit is None:
        return None
    sms = device.sm_count
    kernels = []
    for launch in launches:
        blocks = _smaller(blocks_limit, threads_limit // launch.threads_per_block)
        threads = _smaller(blocks * launch.threads_per_block, _ceil_div(launch.threads, sms))
        in_flight = threads * launch.loads_in_flight * launch.bytes_per_load
        read_rate = sms * in_flight / latency.seconds
        reads = _any_reads(launch)
        achievable = _smaller(rate.value, read_rate * launch.bytes / launch.read_bytes) if reads else rate.value
        # Little's law forwards: to read at the rate's share of reads, rate × (read ÷ all) × latency bytes must be in flight
        needed = rate.value * latency.seconds * launch.read_bytes / launch.bytes / sms if reads else 0.0
        kernels.append(KernelLittle(launch, blocks, threads, in_flight, read_rate, achievable, launch.bytes / achievable, needed))
    total = sum((kernel.launch.bytes for kernel in kernels), 0)
    time = sum((kernel.time_s for kernel in kernels), 0.0)
    return Little(tuple(kernels), sms, threads_limit, blocks_limit, latency, rate, total, time)


def shortfall(found: Little, kernel: KernelLittle, binary: bool = False) -> str:
    """Why `kernel` misses the memory's roof, in one sentence ('' when its loads in flight suffice).

    'CuPy elementwise add issues 4-byte loads, 2 a thread: 16.38 kB in flight per SM < the 32.73 kB Little's law
    needs at 4.8 TB/s and 1.35 µs, so the memory roof is lowered to 2.403 TB/s'. The one place this sentence is
    written: the derivation, and through it the window's panel, the reports and the CLI, show it.
    """
    if not kernel.short or not _is_number(kernel.in_flight_per_sm) or not _is_number(kernel.needed_per_sm):
        return ""
    launch = kernel.launch
    loads = launch.loads_in_flight
    return (
        f"{launch.title} issues {launch.bytes_per_load}-byte loads, {loads} a thread: "
        f"{format_bytes(kernel.in_flight_per_sm, binary)} in flight per SM < the {format_bytes(kernel.needed_per_sm, binary)} "
        f"Little's law needs at {format_bandwidth(found.rate.value, binary)} and {format_time(found.latency.seconds)}, "
        f"so the memory roof is lowered to {format_bandwidth(kernel.achievable, binary)}"
    )


NOTED_SHARE = 0.05  # a launch whose time is under this share of the term's gets no sentence of its own


def noted(found: Little, kernel: KernelLittle) -> bool:
    """Whether `kernel`'s shortfall is worth a sentence: 5 % of the term's time or more (a sweep's arrays: always)."""
    if _is_number(kernel.time_s) and _is_number(found.time_s):
        return bool(kernel.time_s >= NOTED_SHARE * found.time_s)
    return True


def mlp_rate(found: Little) -> Rate:
    """The lowered roof as a Rate: the kernels' achievable bandwidth, derived from the latency it rests on."""
    origin = f"loaded latency {found.latency.seconds * 1e6:.4g} µs ({found.latency.origin}: {found.latency.citation})"
    achievable = found.achievable
    if not _is_number(achievable):  # a sweep's array: the rate is only a label there, the times are per point
        import numpy as np

        achievable = float(np.nanmax(achievable))
    return Rate(float(achievable), DERIVED, f"Little's law at the {origin}")


def mlp_term(physical: Any, device: Device | None, hbm: Term, memory: str = "HBM") -> Term | None:
    """The memory-level-parallelism term of `physical`'s launches beside the HBM term `hbm` (None without one).

    The one place analyze() and sweep() build it: the kernels' bytes at the bandwidth their loads in
    flight allow (`little`), on the memory side with the interfaces.
    """
    found = little(getattr(physical, "launches", ()), device, hbm.rate)
    if found is None:
        return None
    title = f"{memory} loads in flight (Little's law)"
    return Term(MLP, TRANSFER_KIND, hbm.resource, title, found.bytes, "B", mlp_rate(found), "B/s", found.time_s)


def _any_reads(launch: Any) -> bool:
    reads = launch.read_bytes
    return bool(reads) if isinstance(reads, int) else True


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _smaller(a: Any, b: Any) -> Any:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a if a <= b else b
    import numpy as np

    return np.minimum(a, b)


def _ceil_div(a: Any, b: int) -> Any:
    if isinstance(a, int):
        return -(-a // b)
    import numpy as np

    return np.ceil(np.divide(a, b))


__all__ = ["KernelLittle", "LATENCY_INTERFACE", "Little", "MLP", "little", "mlp_rate", "mlp_term", "noted", "shortfall"]
