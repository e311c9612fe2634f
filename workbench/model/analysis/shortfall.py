"""Which assumption of the bound a measured run misses, as far as the model can tell (issue 28).

The bounds are floors: a run slower than its bound is no error, but a student looking at 40 % wants to
know why. Where the model knows the kernel's launch it can name the assumption the run missed:

- a kernel whose loads in flight lower the memory's roof (Little's law, analysis/mlp.py): the bound already
  says so, and the sentence repeats why (`mlp.shortfall`);
- the lab's naive GEMM: the bound lets every load cross at the interface's rate; Little's law read backwards
  on the measured time gives the latency the loads would need to wait to be that slow, from the bytes the
  kernel's threads hold in flight;
- the lab's tiled GEMM: the bound lets the next k step's loads overlap this one's arithmetic; the kernel stages
  one k step at a time (load, __syncthreads, multiply, __syncthreads), so the excess over the bound is spread over
  the k steps each SM slot runs in turn — the wait each k step shows.

`missed_assumption` is the one function the run figures (and through them the CLI, the reports and the
window's run details) call. A run within 10 % of its bound misses nothing worth a sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.model.analysis.mlp import little, noted, shortfall
from workbench.model.analysis.terms import MLP
from workbench.model.devices.interfaces import L2
from workbench.model.units import format_bandwidth, format_bytes, format_int, format_time

if TYPE_CHECKING:
    from workbench.model.analysis.model import Analysis

SHORT_OF_BOUND = 0.9  # bound ÷ measured below this: the run falls short of its bound
NAIVE_LOADS_IN_FLIGHT = 2  # the naive kernel's next k step: one value of A and one of B (its loop is not unrolled by hand)
LAB_THREADS_PER_BLOCK = 256  # 16 × 16 threads, both lab GEMMs
LOAD_BYTES = 4  # fp32 loads


def missed_assumption(analysis: "Analysis", measured_s: float | None, binary: bool = False) -> str:
    """The assumption of `analysis`'s bound that a run of `measured_s` seconds misses, or '' (close to the bound,
    no figures, or a kernel the model does not know)."""
    if measured_s is None or not measured_s > 0 or analysis.basis is None:
        return ""
    physical = analysis.physical
    implementation = physical.implementation if physical is not None else "compulsory"
    if analysis.declaration.op == "gemm" and implementation in ("naive", "tiled") and _short(analysis.bound_time, measured_s):
        return (_naive_gemm if implementation == "naive" else _tiled_gemm)(analysis, measured_s, binary)
    # Loads in flight: judged against the roofline's own bound (compute and HBM), which the lowered roof sits under,
    # so a run at its lowered roof still hears why it is below the memory's.
    roof = max((time for time in (analysis.compute_time, analysis.memory_time) if isinstance(time, (int, float))), default=None)
    return _loads_in_flight(analysis, measured_s, binary) if _short(roof, measured_s) else ""


def _short(bound: Any, measured_s: float) -> bool:
    """The run falls short of `bound`: it took more than bound ÷ 0.9."""
    return isinstance(bound, (int, float)) and bound > 0 and bound / measured_s < SHORT_OF_BOUND


def _loads_in_flight(analysis: "Analysis", measured_s: float, binary: bool) -> str:
    term, hbm = analysis.term(MLP), analysis.term("hbm")
    if term is None or hbm is None or analysis.physical is None:
        return ""
    found = little(analysis.physical.launches, analysis.basis.device, hbm.rate)
    if found is None:
        return ""
    reasons = [shortfall(found, kernel, binary) for kernel in found.kernels if noted(found, kernel)]
    reasons = [reason for reason in reasons if reason]
    if not reasons:
        return ""
    reached = format_bandwidth(found.bytes / measured_s, binary)
    return f"{'; '.join(reasons)} (the run reached {reached} over the same bytes)"


def _naive_threads_per_sm(analysis: "Analysis") -> int | None:
    """Threads of the naive kernel resident on one SM: as many 256-thread blocks as the SM holds, and no more
    threads than the launch has for each SM (one thread an element of C)."""
    device = analysis.basis.device
    if device is None or not device.sm_count or device.max_threads_per_sm is None or device.max_blocks_per_sm is None:
        return None
    resident = min(device.max_blocks_per_sm, device.max_threads_per_sm // LAB_THREADS_PER_BLOCK) * LAB_THREADS_PER_BLOCK
    values = analysis.basis.workload.values
    launched = int(values["batch"]) * int(values["M"]) * int(values["N"])
    return min(resident, -(-launched // device.sm_count))


def _naive_gemm(analysis: "Analysis", measured_s: float, binary: bool) -> str:
    device, physical = analysis.basis.device, analysis.physical
    assert physical is not None
    threads = _naive_threads_per_sm(analysis)
    if device is None or not device.sm_count or threads is None:
        return ""
    loads = int(physical.bytes_by_interface[L2])
    in_flight = threads * NAIVE_LOADS_IN_FLIGHT * LOAD_BYTES
    rate = loads / measured_s
    latency = device.sm_count * in_flight / rate  # Little's law backwards: W = L ÷ λ
    return (
        f"naive GEMM: the bound lets its loads cross at the interface's rate, but each thread holds only "
        f"{NAIVE_LOADS_IN_FLIGHT} loads of {LOAD_BYTES} B in flight (A and B for its next k step): "
        f"{format_int(threads)} threads × {NAIVE_LOADS_IN_FLIGHT * LOAD_BYTES} B = {format_bytes(in_flight, binary)} per SM; "
        f"the {format_bytes(loads, binary)} its threads load moved at {format_bandwidth(rate, binary)} in the measured "
        f"{format_time(measured_s)}, which Little's law gives for {device.sm_count} SMs × {format_bytes(in_flight, binary)} "
        f"÷ {format_bandwidth(rate, binary)} = {format_time(latency)} a load: the loads wait on their latency, not the rate"
    )


def _tiled_gemm(analysis: "Analysis", measured_s: float, binary: bool) -> str:
    physical = analysis.physical
    assert physical is not None
    q = physical.quantization
    bound = analysis.bound_time
    if q is None or q.waves is None or not isinstance(bound, (int, float)):
        return ""
    k = analysis.basis.workload.values["K"]
    k_steps = -(-int(k) // int(q.tile_k))
    in_turn = int(q.waves) * k_steps
    excess = measured_s - bound
    per_step = excess / in_turn
    loads = (q.tile_m * q.tile_k + q.tile_k * q.tile_n) // LAB_THREADS_PER_BLOCK
    per_cta = (q.tile_m * q.tile_k + q.tile_k * q.tile_n) * LOAD_BYTES
    return (
        f"tiled GEMM: the bound lets the next k step's loads overlap this one's arithmetic, but the kernel stages one "
        f"k step at a time (load {format_bytes(per_cta, binary)} of A and B a CTA, {loads} loads of {LOAD_BYTES} B a thread, "
        f"__syncthreads, multiply, __syncthreads); the run's {format_time(excess)} over the bound is "
        f"{format_time(per_step)} for each of the {format_int(in_turn)} k steps a slot runs in turn "
        f"({format_int(int(q.waves))} wave{'s' if q.waves != 1 else ''} × {format_int(k_steps)}): the wait each k step shows "
        f"with {format_int(q.ctas_per_sm)} CTA{'s' if q.ctas_per_sm != 1 else ''} resident an SM to cover it"
    )


__all__ = ["SHORT_OF_BOUND", "missed_assumption"]
