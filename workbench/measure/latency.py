"""HBM latency, measured on a GPU: idle (a pointer chase) and under load (Little's law from a kernel of known bytes in flight).

Idle latency: one thread follows a random cycle through a buffer far larger than L2, one 8-byte load at
a time, each address the value the last load returned, so no two loads overlap:

    idle latency = chase time ÷ steps

The cycle visits one slot every 128 B (a cache line each), in an order cupy.random.permutation draws, so
neither the caches nor the prefetchers help; the buffer's pages are few enough (2 MiB pages) that the
TLB reach is not what is timed.

Latency under load: the library copy (CuPy's elementwise kernel, one 4-byte load a thread, 2,048
threads an SM on Hopper) keeps a known number of bytes in flight; Little's law run backwards gives the
time each load spends in flight at the rate measured:

    loaded latency = SMs × bytes in flight per SM ÷ (bytes read ÷ time)

`loaded_latency` is that inversion of analysis/mlp.py's `little` (the same occupancy, the same launch), so
the figure calibration stores is the one the memory-level-parallelism term then uses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from workbench.model.devices.catalogue import LATENCY_LOADS, MAX_LATENCY_S, MEASURED, MIN_LATENCY_S, Device
from workbench.measure.errors import MeasurementError
from workbench.records import from_plain, record, to_plain

SLOT_BYTES = 128  # one cache line per step of the chase
CHASE_BYTES = 1 << 30  # 1 GiB: twenty times an H100's L2
CHASE_STEPS = 100_000
LOADED_COPY = "copy(n=2**26, dtype=fp32, impl=library)"  # 268 MB each way: far beyond L2

CHASE_SOURCE = r"""
extern "C" __global__ void pointer_chase(const long long* __restrict__ next, long long steps, long long* out)
{
    long long p = 0;
    for (long long s = 0; s < steps; ++s) p = next[p];
    *out = p;
}
"""


@dataclass(frozen=True)
class LatencyReading:
    """One latency measured: seconds, idle or loaded, and how."""

    load: str  # "idle" | "loaded"
    seconds: float
    how: str

    def apply(self, device: Device) -> Device:
        """The device with this latency across HBM, labelled measured."""
        return device.with_latency("hbm", self.load, self.seconds, MEASURED, self.how)

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> "LatencyReading":
        """A reading as to_dict wrote it; MeasurementError for anything else."""
        if not isinstance(data, Mapping) or data.get("load") not in LATENCY_LOADS:
            raise MeasurementError(f"a latency reading needs load 'idle' or 'loaded'; got {str(data)[:80]!r}")
        return from_plain(data, cls)


def _latency_seconds(seconds: Any) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not MIN_LATENCY_S <= seconds <= MAX_LATENCY_S:
        raise MeasurementError(f"a latency reading needs seconds from {MIN_LATENCY_S:g} to {MAX_LATENCY_S:g}; got {str(seconds)[:40]!r}")
    return float(seconds)


record(
    LatencyReading,
    missing={"seconds": None, "how": ""},
    load={"seconds": _latency_seconds, "how": lambda how: str(how)[:2000]},  # a file's note, bounded
)


def loaded_latency(time_s: float, launches: Any, device: Device) -> float:
    """Little's law run backwards: SMs × bytes in flight per SM ÷ (bytes read ÷ time), for one measured launch.

    `launches` are the model's (implementations.KernelLaunch) for the kernel that ran; the device supplies
    the SM count and the occupancy limits. Only the first launch counts (a one-kernel measurement).
    """
    from workbench.model.analysis.mlp import little
    from workbench.model.devices.catalogue import Latency, Rate

    if not launches or not time_s > 0:
        raise ValueError("a loaded latency needs one launch and a positive time")
    # any latency will do to read the occupancy: bytes in flight per SM do not depend on it
    probe = replace(device, latency={"hbm": {"loaded": Latency(1.0, "nominal", "probe")}})
    found = little(launches[:1], probe, Rate(float("inf"), "entered", "uncapped"))
    if found is None:
        raise ValueError(f"{device.name}: no SM count or compute capability to read the occupancy from")
    kernel = found.kernels[0]
    read_rate = kernel.launch.read_bytes / time_s
    return float(found.sm_count * kernel.in_flight_per_sm / read_rate)


def measure_idle_latency(backend: Any, working_set: int = CHASE_BYTES, steps: int = CHASE_STEPS) -> LatencyReading:
    """The pointer chase on the backend's GPU (CuPy): median of five timed chases ÷ steps."""
    import cupy
    import numpy as np

    slots = working_set // SLOT_BYTES
    stride = SLOT_BYTES // 8
    order = cupy.random.permutation(slots).astype(cupy.int64)
    chain = cupy.zeros(slots * stride, dtype=cupy.int64)
    chain[order * stride] = cupy.roll(order, -1) * stride
    out = cupy.zeros(1, dtype=cupy.int64)
    kernel = cupy.RawKernel(CHASE_SOURCE, "pointer_chase")

    def chase() -> None:
        kernel((1,), (1,), (chain, np.int64(steps), out))

    chase()  # compile and warm the TLB
    times = backend.time_calls(chase, 5, None, True)  # no flush: the chain is far beyond L2 anyway
    seconds = float(np.median(times)) / steps
    how = (f"pointer chase: one thread, {steps:,} dependent 8-byte loads over a random cycle of {slots:,} "
           f"cache lines ({working_set / 2**30:g} GiB), median of 5")
    del chain, order, out
    return LatencyReading("idle", seconds, how)


def measure_loaded_latency(backend: Any, device: Device, **options: Any) -> LatencyReading:
    """The library copy measured, then Little's law backwards (loaded_latency) on the device's occupancy."""
    from workbench.model.declare import parse
    from workbench.model.implementations import physical_work
    from workbench.measure.run import measure

    record = measure(LOADED_COPY, backend=backend, **{"device": device, **options})
    if record.median_s is None or not record.valid:
        raise MeasurementError(f"the copy for the loaded latency gave no valid time: {record.message}")
    decl = parse(LOADED_COPY)
    launches = physical_work(decl, decl.workload(), device).launches
    try:
        seconds = loaded_latency(record.median_s, launches, device)
    except ValueError as exc:
        raise MeasurementError(str(exc)) from None
    how = (f"{LOADED_COPY} measured in {record.median_s * 1e6:.4g} µs (median); Little's law backwards: "
           f"SMs × bytes in flight per SM ÷ (bytes read ÷ time)")
    return LatencyReading("loaded", seconds, how)


__all__ = ["LatencyReading", "loaded_latency", "measure_idle_latency", "measure_loaded_latency"]
