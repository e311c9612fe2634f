"""GEMM-like kernels (GEMM, conv2d as an implicit GEMM): the naive and the tiled model, with the L2 rule and
tile and wave quantization."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.model.devices.catalogue import Device
from workbench.model.devices.interfaces import HBM, L2, SMEM
from workbench.model.implementations.base import (
    NAIVE,
    TILED,
    Case,
    PhysicalWork,
    Quantization,
    ceil_div,
    choose,
    count_text,
    smaller,
    tensor_named,
    whole,
)
from workbench.model.ops import Workload

# The lab kernels' thread block: 16 × 16 threads. The naive kernel gives each thread one output
# element; the tiled SIMT kernel gives each thread a micro-tile of (tile_m/16) × (tile_n/16) outputs.
THREAD_ROWS = 16
THREAD_COLS = 16


def _flop_per_fma(convention: str) -> int:
    return 2 if convention == "fma2" else 1


@dataclass(frozen=True)
class _Operands:
    """One GEMM's sizes and per-element bytes, read from a declaration and its workload."""

    batch: Any
    m: Any
    n: Any
    k: Any
    a_bits: int
    b_bits: int
    a_bytes: Any  # one pass over A (all batch entries)
    b_bytes: Any
    b_bytes_each: Any  # B of one batch entry: what has to stay in L2 for B to be read once
    c_bytes: Any  # C's compulsory traffic: written once (and read once when β ≠ 0)

    def elements_bytes(self, elements: Any, bits: int) -> Any:
        return ceil_div(elements * bits, 8)


def _operands(workload: Workload) -> _Operands:
    values = workload.values
    batch, m, n, k = values["batch"], values["M"], values["N"], values["K"]
    a, b, c = tensor_named(workload, "A"), tensor_named(workload, "B"), tensor_named(workload, "C")
    return _Operands(
        batch=batch, m=m, n=n, k=k,
        a_bits=a.dtype.bits, b_bits=b.dtype.bits,
        a_bytes=a.bytes_each, b_bytes=b.bytes_each,
        b_bytes_each=ceil_div(k * n * b.dtype.bits, 8),
        c_bytes=c.bytes,
    )


def _hbm_reads(ops: _Operands, block_m: int, block_n: int, device: Device | None) -> tuple[Any, list[str]]:
    """Bytes of A and B from HBM into L2 under the L2 rule, and the sentences that state it.

    The rule: blocks (CTAs) are assumed to run in row-major order over C, a
    row of blocks at a time. The A panel a block row needs (block_m × K) is
    read once and stays in L2 while that row runs, if it fits; otherwise A is
    read again for every block of the row. B is read once if all of B (one
    batch entry) fits in L2 beside the panel; otherwise B is read again for
    every block row. Without an L2 size, the operands are assumed to fit.
    """
    passes_a = ceil_div(ops.n, block_n)  # blocks along N: how often each A value is loaded
    passes_b = ceil_div(ops.m, block_m)  # block rows: how often each B value is loaded
    if device is None or not device.l2_bytes:
        where = "no device chosen" if device is None else f"{device.name} has no L2 size"
        return ops.a_bytes + ops.b_bytes, [
            f"HBM → L2: {where}, so the L2 rule cannot be applied; A and B are assumed to fit in L2 "
            "and are read from HBM once (the compulsory bytes, an optimistic floor)"
        ]
    l2 = device.l2_bytes
    panel = ops.elements_bytes(block_m * ops.k, ops.a_bits)
    panel_fits = panel <= l2
    b_fits = ops.b_bytes_each + panel <= l2
    a_reads = ops.a_bytes * choose(panel_fits, 1, passes_a)
    b_reads = ops.b_bytes * choose(b_fits, 1, passes_b)
    l2_text = f"{device.name}'s L2 ({count_text(l2)} B)"
    sentences = [
        "HBM → L2 (the L2 rule): blocks run a row of C at a time; the A panel of a block row "
        f"({count_text(block_m)} × K) stays in L2 while the row runs if it fits, and B is read once if it fits in L2 "
        "beside that panel, otherwise once per block row"
    ]
    if isinstance(panel_fits, bool) and isinstance(b_fits, bool):
        sentences.append(
            f"A panel {count_text(panel)} B {'fits in' if panel_fits else 'does not fit in'} {l2_text}: A is read "
            + ("once" if panel_fits else f"{count_text(passes_a)} times")
            + f"; B + panel {count_text(ops.b_bytes_each + panel)} B {'fits' if b_fits else 'does not fit'}: B is read "
            + ("once" if b_fits else f"{count_text(passes_b)} times")
        )
    return a_reads + b_reads, sentences


# Why the lab GEMMs have no Little's-law term (analysis/mlp.py) beside their interface terms.
LAB_LITTLE_SENTENCE = (
    "loads in flight (Little's law): not a term here — this kernel's loads are served partly by L1 and partly by L2, "
    "whose latencies differ and whose split the model does not know, so no one latency gives a floor; a measured "
    "run that falls short of the bound is read backwards instead (the latency its loads in flight imply, or the wait "
    "each k step shows), beside the run"
)


def naive_gemm(case: Case) -> PhysicalWork:
    """One thread per output element, each loading its row of A and column of B: 2·M·N·K element loads."""
    workload, device, convention = case.workload, case.device, case.convention
    ops = _operands(workload)
    products = ops.batch * ops.m * ops.n * ops.k
    loads = ops.elements_bytes(products, ops.a_bits) + ops.elements_bytes(products, ops.b_bits)
    hbm_reads, hbm_sentences = _hbm_reads(ops, THREAD_ROWS, THREAD_COLS, device)
    flop = workload.flop(convention)
    batch_text = "batch·" if not (isinstance(ops.batch, int) and ops.batch == 1) else ""
    return PhysicalWork(
        implementation=NAIVE,
        logical_flop=flop,
        physical_flop=flop,
        logical_bytes=workload.bytes,
        bytes_by_interface={
            HBM: hbm_reads + ops.c_bytes,
            L2: loads + ops.c_bytes,
            SMEM: loads + ops.c_bytes,
        },
        assumptions=(
            f"naive GEMM: one thread per element of C in {THREAD_ROWS} × {THREAD_COLS} blocks; each thread "
            f"loads its row of A and its column of B, so {batch_text}M·N·K values of A and as many of B are "
            f"loaded ({count_text(loads)} B), and C is written once",
            "no shared memory, and L1 is assumed to catch nothing: every load crosses L2 → SM and reaches "
            "the registers (threads of a warp that share a value are not counted as sharing it)",
            *hbm_sentences,
            "no padding: threads outside C return early, so physical FLOP equal logical FLOP",
            LAB_LITTLE_SENTENCE,
        ),
    )


def _is_tensor_core(path: str) -> bool:
    return path.endswith("_tc") or "_tc_" in path


def tiled_gemm(case: Case) -> PhysicalWork:
    """Shared-memory tiles of tile_m × tile_n outputs, k steps of tile_k; tile and wave quantization."""
    ops = _operands(case.workload)
    tm, tn = whole(case.params["tile_m"]), whole(case.params["tile_n"])
    return _tiled(case, ops, _hbm_reads(ops, tm, tn, case.device), "tiled GEMM")


def tiled_conv2d(case: Case) -> PhysicalWork:
    """conv2d as an implicit GEMM (M = N·P·Q, N = K/groups, K = Cg·R·S per group), tiled as tiled_gemm is."""
    workload = case.workload
    values = workload.values
    groups = whole(case.params["groups"])
    x, w, y = tensor_named(workload, "x"), tensor_named(workload, "w"), tensor_named(workload, "y")
    m, n, k = values["N"] * values["P"] * values["Q"], values["K"] // groups, values["Cg"] * values["R"] * values["S"]
    # A is the im2col matrix the kernel gathers from x on the fly: M × K values per group, never stored
    ops = _Operands(
        batch=groups, m=m, n=n, k=k,
        a_bits=x.dtype.bits, b_bits=w.dtype.bits,
        a_bytes=ceil_div(groups * m * k * x.dtype.bits, 8), b_bytes=w.bytes_each,
        b_bytes_each=ceil_div(k * n * w.dtype.bits, 8),
        c_bytes=y.bytes,
    )
    hbm = (x.bytes + w.bytes, [
        "implicit GEMM: A is the im2col matrix (M = N·P·Q rows, K = Cg·R·S columns per group) gathered from x "
        "on the fly, B the filters (K = Cg·R·S × N = K/groups), C the output y; groups are the batch of GEMMs",
        "HBM → L2: x and w are read once (the overlapping im2col windows assumed caught in L2), y written once",
    ])
    return _tiled(case, ops, hbm, "tiled implicit GEMM")


def _tiled(case: Case, ops: _Operands, hbm: tuple[Any, list[str]], title: str) -> PhysicalWork:
    """The tiled model of one (batched) GEMM's operands: loads, shared-memory reads, tile and wave quantization."""
    workload, device, convention, params = case.workload, case.device, case.convention, case.params
    tm, tn, tk = whole(params["tile_m"]), whole(params["tile_n"]), whole(params["tile_k"])
    ctas_per_sm = whole(params.get("ctas_per_sm", 1))
    mp, np_, kp = ceil_div(ops.m, tm) * tm, ceil_div(ops.n, tn) * tn, ceil_div(ops.k, tk) * tk
    tiles = ops.batch * ceil_div(ops.m, tm) * ceil_div(ops.n, tn)
    padded_products = ops.batch * mp * np_ * kp
    products = ops.batch * ops.m * ops.n * ops.k
    logical = workload.flop(convention)
    physical = logical + _flop_per_fma(convention) * (padded_products - products)

    # Global loads into shared memory: each A value once per tile column, each B value once per tile row.
    passes_a, passes_b = ceil_div(ops.n, tn), ceil_div(ops.m, tm)
    loads = ops.a_bytes * passes_a + ops.b_bytes * passes_b
    hbm_reads, hbm_sentences = hbm

    smem, smem_sentence = _smem_reads(workload.path, ops, (tm, tn), (mp, np_, kp), (passes_a, passes_b))

    sm_count = device.sm_count if device is not None else None
    if sm_count:
        slots = sm_count * ctas_per_sm
        waves = ceil_div(tiles, slots)
        slot_use: Any = tiles / (waves * slots)
    else:
        waves = slot_use = None
    quantization = Quantization(
        tile_m=tm, tile_n=tn, tile_k=tk,
        padded={"M": mp, "N": np_, "K": kp},
        tiles=tiles, sm_count=sm_count or None, ctas_per_sm=ctas_per_sm,
        waves=waves, slot_use=slot_use, tile_flop=ceil_div(physical, tiles),
    )
    return PhysicalWork(
        implementation=TILED,
        logical_flop=logical,
        physical_flop=physical,
        logical_bytes=workload.bytes,
        bytes_by_interface={
            HBM: hbm_reads + ops.c_bytes,
            L2: loads + ops.c_bytes,
            SMEM: smem + ops.c_bytes,
        },
        assumptions=(
            f"{title}: each CTA computes a {count_text(tm)} × {count_text(tn)} tile of C in k steps of {count_text(tk)}, staging a "
            f"{count_text(tm)} × {count_text(tk)} slice of A and a {count_text(tk)} × {count_text(tn)} slice of B in shared memory; C is written once",
            f"L2 → shared memory: each value of A is loaded once per tile column (⌈N/{count_text(tn)}⌉ = {count_text(passes_a)} "
            f"times) and each value of B once per tile row (⌈M/{count_text(tm)}⌉ = {count_text(passes_b)} times): "
            f"about M·N·K·(1/{count_text(tn)} + 1/{count_text(tm)}) values ({count_text(loads)} B); L1 catches nothing beyond the tiles",
            *hbm_sentences,
            smem_sentence,
            _tile_sentence(quantization, ops, logical, physical),
            _wave_sentence(quantization, device),
            _wave_time_sentence(quantization),
            *((LAB_LITTLE_SENTENCE,) if title == "tiled GEMM" else ()),
        ),
        quantization=quantization,
    )


def _smem_reads(path: str, ops: _Operands, tile: tuple[Any, Any], padded: tuple[Any, Any, Any],
                passes: tuple[Any, Any]) -> tuple[Any, str]:
    """Bytes from shared memory into registers, and the sentence that states them.

    Each staged value of A is read by every reader along N (and B's along M) at
    each k step; padded rows and columns are read too (they hold zeros).
    """
    tm, tn = tile
    mp, np_, kp = padded
    passes_a, passes_b = passes
    if _is_tensor_core(path):
        readers_n, readers_m = smaller(2, tn), smaller(2, tm)
        smem_sentence = (
            f"shared memory → registers ({path}): the tile is split among 2 × 2 warps, each reading "
            "its A and B fragments once per k step, so every staged value is read by two warps: "
            f"padded M·N·K·(2/{count_text(tn)} + 2/{count_text(tm)}) values"
        )
    else:
        readers_n, readers_m = smaller(THREAD_COLS, tn), smaller(THREAD_ROWS, tm)
        micro_m, micro_n = ceil_div(tm, THREAD_ROWS), ceil_div(tn, THREAD_COLS)
        smem_sentence = (
            f"shared memory → registers ({path}, no tensor cores): {THREAD_ROWS} × {THREAD_COLS} "
            f"threads per tile, each computing a {count_text(micro_m)} × {count_text(micro_n)} micro-tile; per k step each thread "
            f"reads {count_text(micro_m)} values of A and {count_text(micro_n)} of B: padded M·N·K·({THREAD_COLS}/{count_text(tn)} + "
            f"{THREAD_ROWS}/{count_text(tm)}) values"
        )
    smem = (
        ops.elements_bytes(ops.batch * mp * kp * passes_a * readers_n, ops.a_bits)
        + ops.elements_bytes(ops.batch * np_ * kp * passes_b * readers_m, ops.b_bits)
    )
    return smem, smem_sentence


def _tile_sentence(q: Quantization, ops: _Operands, logical: Any, physical: Any) -> str:
    padded = [f"{name} {count_text(size)} → {count_text(q.padded[name])}" for name, size in (("M", ops.m), ("N", ops.n), ("K", ops.k))
              if not (isinstance(size, int) and isinstance(q.padded[name], int) and size == q.padded[name])]
    if not padded:
        return "tile quantization: M, N and K are whole multiples of the tile, so nothing is padded"
    extra = (f" (+{(physical - logical) / logical:.1%} FLOP)" if isinstance(logical, int) and isinstance(physical, int) and logical else "")
    return (
        "tile quantization: dimensions padded to whole tiles (" + ", ".join(padded) + "); the padded work "
        f"is computed and discarded{extra}; padded elements are zero-filled in shared memory, not loaded"
    )


def _wave_sentence(q: Quantization, device: Device | None) -> str:
    if q.waves is None:
        where = "no device chosen" if device is None else f"{device.name} has no SM count"
        return f"wave quantization: {count_text(q.tiles)} tiles (CTAs); {where}, so waves are not counted"
    exact = q.tiles / q.slots if isinstance(q.tiles, int) and isinstance(q.slots, int) else None
    share = f"{exact:.2f} → " if exact is not None else ""
    use = f"{q.slot_use:.1%}" if isinstance(q.slot_use, float) else "(swept)"
    return (
        f"wave quantization: {count_text(q.tiles)} tiles over {q.sm_count} SMs × {count_text(q.ctas_per_sm)} CTA"
        f"{'' if isinstance(q.ctas_per_sm, int) and q.ctas_per_sm == 1 else 's'} per SM = {share}{count_text(q.waves)} waves; "
        f"{count_text(q.tiles)} of {count_text(q.waves * q.slots) if isinstance(q.waves, int) else '(swept)'} SM slots used ({use})"
    )


def _wave_time_sentence(q: Quantization) -> str:
    if q.waves is None:
        return "wave timing: without an SM count the compute term is the physical FLOP over the path's rate"
    return (
        "wave timing (assumed): a tile runs on one SM slot at the per-slot rate (the path's rate ÷ "
        f"({q.sm_count} SMs × {count_text(q.ctas_per_sm)})), and every wave, the partial last one too, takes one tile's "
        f"time: the compute time bound is {count_text(q.waves)} waves × (⌈physical FLOP / {count_text(q.tiles)} tiles⌉ = "
        f"{count_text(q.tile_flop)} FLOP a tile) ÷ the per-slot rate"
    )
