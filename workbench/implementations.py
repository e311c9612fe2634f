"""Implementation models: the physical work a real kernel does for a declared operation.

Logical work follows from the algorithm (the operation's FLOP terms and its
compulsory bytes: each input read once, each output written once). Physical
work follows from the implementation: a kernel pads dimensions to whole tiles,
computes masked values it then discards, and loads the same value many times.
Two kernels with the same logical FLOP can put very different demands on each
interface between HBM and the registers.

An implementation model turns a declaration into `PhysicalWork`: logical and
physical FLOP, the compulsory bytes, the physical bytes across every named
interface (`workbench.devices.interfaces`), and the assumptions the model
makes, written as sentences the derivation prints. The model in use is the
declaration's `impl` keyword; `compulsory` (the default) is today's ideal
reuse, where each interface carries the compulsory bytes once.

No Qt here; this module imports the operations, the declaration language and
the devices only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from workbench.declare import Declaration
from workbench.devices.catalogue import Device
from workbench.devices.interfaces import HBM, L2, SMEM
from workbench.ops import Workload

COMPULSORY = "compulsory"
NAIVE = "naive"
TILED = "tiled"
LIBRARY = "library"  # the array library's own kernel (CuPy's elementwise kernels): what a user's code runs
VECTORIZED = "vectorized"  # the lab's 16-byte-load RawKernel (measure/kernels/stream_raw.py)

# The launch the library kernels use: CuPy's elementwise kernels run 128 threads a block, one element a thread.
LIBRARY_THREADS_PER_BLOCK = 128
# The lab's vectorized stream kernels: 256 threads a block, one 16-byte load (float4, double2) per array a thread.
VECTOR_THREADS_PER_BLOCK = 256
VECTOR_BYTES = 16
# What a declared launch defaults to when only some of threads_per_block, bytes_per_load, loads_in_flight are given.
LAUNCH_DEFAULTS = {"threads_per_block": 256, "bytes_per_load": 4, "loads_in_flight": 1}

# The interfaces a model accounts for, from HBM inwards. The host interface is never implied:
# a host ↔ device term appears only when the declaration asks for it.
MODEL_INTERFACES: tuple[str, ...] = (HBM, L2, SMEM)


@dataclass(frozen=True)
class Quantization:
    """Tile and wave quantization of a tiled GEMM-like kernel (NVIDIA's Matrix Multiplication Background).

    Tile quantization: each dimension is padded up to a whole number of tiles
    and the padded work is computed. Wave quantization: the output tiles (one
    CTA each) run in waves of SMs × resident CTAs per SM; the last wave may
    leave SM slots idle.
    """

    tile_m: int
    tile_n: int
    tile_k: int
    padded: Mapping[str, int]  # dimension -> padded size ("M": 4224)
    tiles: int  # output tiles (CTAs)
    sm_count: int | None
    ctas_per_sm: int
    waves: int | None  # ceil(tiles / (SMs × CTAs per SM)); None without an SM count
    slot_use: float | None  # tiles / (waves × SMs × CTAs per SM)
    tile_flop: Any = None  # one tile's share of the physical FLOP: ⌈physical FLOP / tiles⌉

    @property
    def slots(self) -> int | None:
        """SM slots in one wave: SMs × resident CTAs per SM (None without an SM count)."""
        return None if self.sm_count is None else self.sm_count * self.ctas_per_sm

    @property
    def wave_flop(self) -> Any:
        """FLOP the SM slots could do in the waves' time: waves × slots × tile FLOP (None without waves).

        The compute term's time is this over the path's rate (`wave_time`): every wave, the partial
        last one too, takes one tile's time, because a tile runs on one slot at the per-slot rate.
        """
        if self.waves is None or self.tile_flop is None:
            return None
        return self.waves * self.slots * self.tile_flop


def wave_time(quantization: "Quantization | None", rate: Any) -> Any:
    """The compute time under wave quantization: waves × (tile FLOP ÷ (rate ÷ slots)); None without waves.

    The one place this figure is computed: analyze(), sweeps, the derivation and the CLI read it.
    """
    if quantization is None or quantization.wave_flop is None:
        return None
    return quantization.wave_flop / rate


def tile_time(quantization: Quantization, rate: Any) -> Any:
    """One tile's time on one SM slot: tile FLOP ÷ (rate ÷ (SMs × CTAs per SM))."""
    return quantization.tile_flop * quantization.slots / rate


@dataclass(frozen=True)
class KernelLaunch:
    """One kernel's launch as far as memory-level parallelism needs it (analysis/mlp.py applies Little's law).

    Each thread issues `loads_in_flight` independent loads of `bytes_per_load` bytes before it waits for
    the first; stores are posted (a thread does not wait for them), so only loads hold bytes in flight.
    """

    title: str  # "CuPy elementwise add", "float4 RawKernel add", "the declared launch"
    threads: Any  # threads launched in all
    threads_per_block: int
    bytes_per_load: int
    loads_in_flight: int
    read_bytes: Any  # bytes the kernel's loads bring from HBM
    write_bytes: Any  # bytes its stores send back

    @property
    def bytes(self) -> Any:
        return self.read_bytes + self.write_bytes


@dataclass(frozen=True)
class PhysicalWork:
    """Logical and physical FLOP and bytes of one declaration under one implementation model."""

    implementation: str  # "compulsory", "naive", "tiled"
    logical_flop: int  # the op's counted FLOP (today's figure)
    physical_flop: int  # with padding / masked work computed and discarded
    logical_bytes: int  # the compulsory bytes (today's figure)
    bytes_by_interface: Mapping[str, int]  # interface key -> physical bytes across it
    assumptions: tuple[str, ...]  # sentences the derivation prints
    quantization: Quantization | None = None
    launches: tuple[KernelLaunch, ...] = ()  # the kernels' launches, where the model knows them (Little's law)

    @property
    def extra_flop(self) -> int:
        """Physical FLOP above logical: padding and masked work."""
        return self.physical_flop - self.logical_flop

    def bytes_across(self, key: str) -> int:
        """Physical bytes across one interface (KeyError for an interface the model does not cover)."""
        return self.bytes_by_interface[key]


@dataclass(frozen=True)
class Case:
    """What a model reads: the declaration, its field values (swept ones as arrays), workload, device, convention."""

    decl: Declaration
    params: Mapping[str, Any]
    workload: Workload
    device: Device | None
    convention: str


Model = Callable[[Case], PhysicalWork]


def physical_work(
    decl: Declaration,
    workload: Workload,
    device: Device | None,
    convention: str = "fma2",
    params: Mapping[str, Any] | None = None,
) -> PhysicalWork:
    """The physical work of `decl` under its implementation model on `device` (None: no device chosen).

    `workload` is `decl.workload()` (passed in because the caller has built it
    already). The device supplies the L2 size and SM count the models need;
    without one, a model says what it could not decide. A vectorised sweep
    passes the fields it swept in `params` (numpy arrays, e.g. {"M": ...} or
    {"tile_m": ...}) with the workload built from them; every figure then
    comes back as an array and the sentences say "(swept)" where a number
    would stand.
    """
    fields = dict(decl.params)
    if params:
        fields.update(params)
    model = _MODELS[decl.implementation]
    return model(Case(decl, fields, workload, device, convention))


def compulsory(case: Case) -> PhysicalWork:
    """Ideal reuse: physical equals logical, and every interface carries the compulsory bytes once."""
    workload = case.workload
    flop = workload.flop(case.convention)
    moved = workload.bytes
    return PhysicalWork(
        launches=declared_launch(case),
        implementation=COMPULSORY,
        logical_flop=flop,
        physical_flop=flop,
        logical_bytes=moved,
        bytes_by_interface={key: moved for key in MODEL_INTERFACES},
        assumptions=(
            "compulsory traffic: ideal on-chip reuse, so each input crosses each interface once "
            "and each output crosses it once on the way back; physical work equals logical work",
        ),
    )


# --- shared pieces -------------------------------------------------------------

# The lab kernels' thread block: 16 × 16 threads. The naive kernel gives each thread one output
# element; the tiled SIMT kernel gives each thread a micro-tile of (tile_m/16) × (tile_n/16) outputs.
THREAD_ROWS = 16
THREAD_COLS = 16


def _ceil_div(a: Any, b: Any) -> Any:
    """⌈a / b⌉: exact for ints; for a sweep's float64 arrays ceil(a / b) (floor division of floats is slow)."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    import numpy as np

    quotient = np.divide(a, b)  # a fresh array: rounded up in place (a new array per step costs page faults)
    return np.ceil(quotient, out=quotient) if isinstance(quotient, np.ndarray) else np.ceil(quotient)


def _smaller(a: Any, b: Any) -> Any:
    """min() that also works when either side is a sweep's numpy array."""
    if isinstance(a, int) and isinstance(b, int):
        return a if a <= b else b
    import numpy as np

    return np.minimum(a, b)


def _where(condition: Any, yes: Any, no: Any) -> Any:
    """`yes if condition else no`, elementwise when a sweep passes numpy arrays."""
    if isinstance(condition, bool):
        return yes if condition else no
    import numpy as np

    return np.where(condition, yes, no)


def _flop_per_fma(convention: str) -> int:
    return 2 if convention == "fma2" else 1


def _tensor(workload: Workload, name: str) -> Any:
    for tensor in workload.tensors:
        if tensor.name == name:
            return tensor
    raise KeyError(name)  # pragma: no cover - every GEMM workload has A, B and C


def _n(value: Any) -> str:
    """A count in a sentence: 1,024 (a sweep's array is described, not printed)."""
    if isinstance(value, int):
        return f"{value:,}"
    if getattr(value, "ndim", None) == 0 and float(value).is_integer():
        return f"{int(value):,}"
    return "(swept)"


def _whole(value: Any) -> Any:
    """A field's value as a Python int when it is one number, else the (swept) array unchanged."""
    return int(value) if getattr(value, "ndim", 0) == 0 else value


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
        return _ceil_div(elements * bits, 8)


def _operands(workload: Workload) -> _Operands:
    values = workload.values
    batch, m, n, k = values["batch"], values["M"], values["N"], values["K"]
    a, b, c = _tensor(workload, "A"), _tensor(workload, "B"), _tensor(workload, "C")
    return _Operands(
        batch=batch, m=m, n=n, k=k,
        a_bits=a.dtype.bits, b_bits=b.dtype.bits,
        a_bytes=a.bytes_each, b_bytes=b.bytes_each,
        b_bytes_each=_ceil_div(k * n * b.dtype.bits, 8),
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
    passes_a = _ceil_div(ops.n, block_n)  # blocks along N: how often each A value is loaded
    passes_b = _ceil_div(ops.m, block_m)  # block rows: how often each B value is loaded
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
    a_reads = ops.a_bytes * _where(panel_fits, 1, passes_a)
    b_reads = ops.b_bytes * _where(b_fits, 1, passes_b)
    l2_text = f"{device.name}'s L2 ({_n(l2)} B)"
    sentences = [
        "HBM → L2 (the L2 rule): blocks run a row of C at a time; the A panel of a block row "
        f"({_n(block_m)} × K) stays in L2 while the row runs if it fits, and B is read once if it fits in L2 "
        "beside that panel, otherwise once per block row"
    ]
    if isinstance(panel_fits, bool) and isinstance(b_fits, bool):
        sentences.append(
            f"A panel {_n(panel)} B {'fits in' if panel_fits else 'does not fit in'} {l2_text}: A is read "
            + ("once" if panel_fits else f"{_n(passes_a)} times")
            + f"; B + panel {_n(ops.b_bytes_each + panel)} B {'fits' if b_fits else 'does not fit'}: B is read "
            + ("once" if b_fits else f"{_n(passes_b)} times")
        )
    return a_reads + b_reads, sentences


# Why the lab GEMMs have no Little's-law term (analysis/mlp.py) beside their interface terms.
LAB_LITTLE_SENTENCE = (
    "loads in flight (Little's law): not a term here — this kernel's loads are served partly by L1 and partly by L2, "
    "whose latencies differ and whose split the model does not know, so no one latency gives a floor; a measured "
    "run that falls short of the bound is read backwards instead (the latency its loads in flight imply, or the wait "
    "each k step shows), beside the run"
)


# --- GEMM: naive ---------------------------------------------------------------------


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
            f"loaded ({_n(loads)} B), and C is written once",
            "no shared memory, and L1 is assumed to catch nothing: every load crosses L2 → SM and reaches "
            "the registers (threads of a warp that share a value are not counted as sharing it)",
            *hbm_sentences,
            "no padding: threads outside C return early, so physical FLOP equal logical FLOP",
            LAB_LITTLE_SENTENCE,
        ),
    )


# --- GEMM: tiled ---------------------------------------------------------------------


def _is_tensor_core(path: str) -> bool:
    return path.endswith("_tc") or "_tc_" in path


def tiled_gemm(case: Case) -> PhysicalWork:
    """Shared-memory tiles of tile_m × tile_n outputs, k steps of tile_k; tile and wave quantization."""
    ops = _operands(case.workload)
    tm, tn = _whole(case.params["tile_m"]), _whole(case.params["tile_n"])
    return _tiled(case, ops, _hbm_reads(ops, tm, tn, case.device), "tiled GEMM")


def tiled_conv2d(case: Case) -> PhysicalWork:
    """conv2d as an implicit GEMM (M = N·P·Q, N = K/groups, K = Cg·R·S per group), tiled as tiled_gemm is."""
    workload = case.workload
    values = workload.values
    groups = _whole(case.params["groups"])
    x, w, y = _tensor(workload, "x"), _tensor(workload, "w"), _tensor(workload, "y")
    m, n, k = values["N"] * values["P"] * values["Q"], values["K"] // groups, values["Cg"] * values["R"] * values["S"]
    # A is the im2col matrix the kernel gathers from x on the fly: M × K values per group, never stored
    ops = _Operands(
        batch=groups, m=m, n=n, k=k,
        a_bits=x.dtype.bits, b_bits=w.dtype.bits,
        a_bytes=_ceil_div(groups * m * k * x.dtype.bits, 8), b_bytes=w.bytes_each,
        b_bytes_each=_ceil_div(k * n * w.dtype.bits, 8),
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
    tm, tn, tk = _whole(params["tile_m"]), _whole(params["tile_n"]), _whole(params["tile_k"])
    ctas_per_sm = _whole(params.get("ctas_per_sm", 1))
    mp, np_, kp = _ceil_div(ops.m, tm) * tm, _ceil_div(ops.n, tn) * tn, _ceil_div(ops.k, tk) * tk
    tiles = ops.batch * _ceil_div(ops.m, tm) * _ceil_div(ops.n, tn)
    padded_products = ops.batch * mp * np_ * kp
    products = ops.batch * ops.m * ops.n * ops.k
    logical = workload.flop(convention)
    physical = logical + _flop_per_fma(convention) * (padded_products - products)

    # Global loads into shared memory: each A value once per tile column, each B value once per tile row.
    passes_a, passes_b = _ceil_div(ops.n, tn), _ceil_div(ops.m, tm)
    loads = ops.a_bytes * passes_a + ops.b_bytes * passes_b
    hbm_reads, hbm_sentences = hbm

    # Shared memory → registers: each staged value of A is read by every reader along N (and B's along M)
    # at each k step; padded rows and columns are read too (they hold zeros).
    if _is_tensor_core(workload.path):
        readers_n, readers_m = _smaller(2, tn), _smaller(2, tm)
        smem_sentence = (
            f"shared memory → registers ({workload.path}): the tile is split among 2 × 2 warps, each reading "
            "its A and B fragments once per k step, so every staged value is read by two warps: "
            f"padded M·N·K·(2/{_n(tn)} + 2/{_n(tm)}) values"
        )
    else:
        readers_n, readers_m = _smaller(THREAD_COLS, tn), _smaller(THREAD_ROWS, tm)
        micro_m, micro_n = _ceil_div(tm, THREAD_ROWS), _ceil_div(tn, THREAD_COLS)
        smem_sentence = (
            f"shared memory → registers ({workload.path}, no tensor cores): {THREAD_ROWS} × {THREAD_COLS} "
            f"threads per tile, each computing a {_n(micro_m)} × {_n(micro_n)} micro-tile; per k step each thread "
            f"reads {_n(micro_m)} values of A and {_n(micro_n)} of B: padded M·N·K·({THREAD_COLS}/{_n(tn)} + "
            f"{THREAD_ROWS}/{_n(tm)}) values"
        )
    smem = (
        ops.elements_bytes(ops.batch * mp * kp * passes_a * readers_n, ops.a_bits)
        + ops.elements_bytes(ops.batch * np_ * kp * passes_b * readers_m, ops.b_bits)
    )

    sm_count = device.sm_count if device is not None else None
    if sm_count:
        slots = sm_count * ctas_per_sm
        waves = _ceil_div(tiles, slots)
        slot_use: Any = tiles / (waves * slots)
    else:
        waves = slot_use = None
    quantization = Quantization(
        tile_m=tm, tile_n=tn, tile_k=tk,
        padded={"M": mp, "N": np_, "K": kp},
        tiles=tiles, sm_count=sm_count or None, ctas_per_sm=ctas_per_sm,
        waves=waves, slot_use=slot_use, tile_flop=_ceil_div(physical, tiles),
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
            f"{title}: each CTA computes a {_n(tm)} × {_n(tn)} tile of C in k steps of {_n(tk)}, staging a "
            f"{_n(tm)} × {_n(tk)} slice of A and a {_n(tk)} × {_n(tn)} slice of B in shared memory; C is written once",
            f"L2 → shared memory: each value of A is loaded once per tile column (⌈N/{_n(tn)}⌉ = {_n(passes_a)} "
            f"times) and each value of B once per tile row (⌈M/{_n(tm)}⌉ = {_n(passes_b)} times): "
            f"about M·N·K·(1/{_n(tn)} + 1/{_n(tm)}) values ({_n(loads)} B); L1 catches nothing beyond the tiles",
            *hbm_sentences,
            smem_sentence,
            _tile_sentence(quantization, ops, logical, physical),
            _wave_sentence(quantization, device),
            _wave_time_sentence(quantization),
            *((LAB_LITTLE_SENTENCE,) if title == "tiled GEMM" else ()),
        ),
        quantization=quantization,
    )


def _tile_sentence(q: Quantization, ops: _Operands, logical: Any, physical: Any) -> str:
    padded = [f"{name} {_n(size)} → {_n(q.padded[name])}" for name, size in (("M", ops.m), ("N", ops.n), ("K", ops.k))
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
        return f"wave quantization: {_n(q.tiles)} tiles (CTAs); {where}, so waves are not counted"
    exact = q.tiles / q.slots if isinstance(q.tiles, int) and isinstance(q.slots, int) else None
    share = f"{exact:.2f} → " if exact is not None else ""
    use = f"{q.slot_use:.1%}" if isinstance(q.slot_use, float) else "(swept)"
    return (
        f"wave quantization: {_n(q.tiles)} tiles over {q.sm_count} SMs × {_n(q.ctas_per_sm)} CTA"
        f"{'' if isinstance(q.ctas_per_sm, int) and q.ctas_per_sm == 1 else 's'} per SM = {share}{_n(q.waves)} waves; "
        f"{_n(q.tiles)} of {_n(q.waves * q.slots) if isinstance(q.waves, int) else '(swept)'} SM slots used ({use})"
    )


def _wave_time_sentence(q: Quantization) -> str:
    if q.waves is None:
        return "wave timing: without an SM count the compute term is the physical FLOP over the path's rate"
    return (
        "wave timing (assumed): a tile runs on one SM slot at the per-slot rate (the path's rate ÷ "
        f"({q.sm_count} SMs × {_n(q.ctas_per_sm)})), and every wave, the partial last one too, takes one tile's "
        f"time: the compute time bound is {_n(q.waves)} waves × (⌈physical FLOP / {_n(q.tiles)} tiles⌉ = "
        f"{_n(q.tile_flop)} FLOP a tile) ÷ the per-slot rate"
    )


# --- stream and elementwise kernels: the library's launch and the vectorized one ----------------


def declared_launch(case: Case) -> tuple[KernelLaunch, ...]:
    """The launch a user declares (threads_per_block, bytes_per_load, loads_in_flight), else none.

    One kernel reading every input once and writing every output once; each thread's loads cover its share
    of the reads: threads = ⌈read bytes / (bytes_per_load × loads_in_flight)⌉.
    """
    params = case.params
    if not any(name in params for name in LAUNCH_DEFAULTS):
        return ()
    threads_per_block, bytes_per_load, loads = (
        _whole(params.get(name, default)) for name, default in LAUNCH_DEFAULTS.items())
    reads, writes = _reads_writes(case.workload)
    threads = _ceil_div(reads, bytes_per_load * loads) if not (isinstance(reads, int) and reads == 0) else 1
    return (KernelLaunch("the declared launch", threads, threads_per_block, bytes_per_load, loads, reads, writes),)


def _reads_writes(workload: Workload) -> tuple[Any, Any]:
    reads = sum((tensor.bytes_each * tensor.reads for tensor in workload.tensors), 0)
    writes = sum((tensor.bytes_each * tensor.writes for tensor in workload.tensors), 0)
    return reads, writes


def _stream_kernels(case: Case) -> list[tuple[str, int, int]]:
    """The library's kernels for a stream operation: (what it computes, arrays read, arrays written) each.

    copy, scale, add and elementwise are one CuPy elementwise kernel; triad is two ufunc calls
    (multiply into a, then add b), as measure/kernels/stream.py runs it.
    """
    op = case.decl.op
    if op == "triad":
        return [("multiply a = q·c", 1, 1), ("add a = a + b", 2, 1)]
    inputs = {"copy": 1, "scale": 1, "add": 2}.get(op)
    if inputs is not None:
        return [(op, inputs, 1)]
    return [(op, _whole(case.params["inputs"]), _whole(case.params["outputs"]))]


def library_stream(case: Case) -> PhysicalWork:
    """The array library's kernels (CuPy elementwise): 128 threads a block, one element and one load per array a thread."""
    workload, n = case.workload, case.workload.values["n"]
    itemsize = _tensor_itemsize(workload)
    kernels = _stream_kernels(case)
    launches = tuple(
        KernelLaunch(f"CuPy elementwise {what}", n, LIBRARY_THREADS_PER_BLOCK, itemsize, reads, n * itemsize * reads, n * itemsize * writes)
        for what, reads, writes in kernels
    )
    moved = sum((launch.bytes for launch in launches), 0)
    sentences = [
        f"the array library's own kernel{'s' if len(kernels) > 1 else ''} (CuPy elementwise, "
        f"{LIBRARY_THREADS_PER_BLOCK} threads a block), one element a thread: each thread issues one "
        f"{itemsize}-byte load per array it reads and waits for them before its store",
    ]
    if case.decl.op == "copy":
        sentences.append("for copy that is CuPy's generated elementwise loop (c = a); cupy.copyto of a contiguous array "
                         "is a cudaMemcpy instead, which impl=compulsory measures")
    if len(kernels) > 1:
        sentences.append(
            f"{len(kernels)} kernels ({'; '.join(what for what, _r, _w in kernels)}): the intermediate goes through HBM, "
            f"{_n(moved)} B where the fused kernel's compulsory bytes are {_n(workload.bytes)} B")
    return _stream_work(case, LIBRARY, launches, moved, sentences)


def vectorized_stream(case: Case) -> PhysicalWork:
    """The lab's RawKernel: 16-byte loads and stores (4 fp32, 2 fp64, 8 fp16 a thread); the tail done element by element."""
    workload, n = case.workload, case.workload.values["n"]
    itemsize = _tensor_itemsize(workload)
    per_thread = VECTOR_BYTES // itemsize
    what, reads, writes = case.decl.op, _VECTOR_READS[case.decl.op], 1
    threads = _ceil_div(n, per_thread)
    launch = KernelLaunch(f"{VECTOR_BYTES}-byte-load RawKernel {what}", threads, VECTOR_THREADS_PER_BLOCK, VECTOR_BYTES, reads,
                          n * itemsize * reads, n * itemsize * writes)
    sentences = [
        f"one fused RawKernel, {VECTOR_THREADS_PER_BLOCK} threads a block; each thread loads "
        f"{per_thread} elements of each array it reads with one {VECTOR_BYTES}-byte load and stores {per_thread} "
        f"with one {VECTOR_BYTES}-byte store, so it holds {reads} × {VECTOR_BYTES} B in flight; when n is not a "
        f"multiple of {per_thread} the last thread does the tail element by element",
    ]
    return _stream_work(case, VECTORIZED, (launch,), launch.bytes, sentences)


_VECTOR_READS = {"copy": 1, "scale": 1, "add": 2, "triad": 2}  # arrays each fused kernel reads (it writes one)


def _tensor_itemsize(workload: Workload) -> int:
    return workload.tensors[0].dtype.bits // 8


_STREAMED_ONCE = (
    "every byte a kernel loads or stores crosses HBM → L2 → SM once (a stream has no reuse); "
    "the arithmetic is the logical arithmetic"
)


def _stream_work(case: Case, name: str, launches: tuple[KernelLaunch, ...], moved: Any, sentences: list[str],
                 closing: str = _STREAMED_ONCE) -> PhysicalWork:
    """The physical work of library kernels that move each byte once: `moved` bytes across every interface."""
    workload = case.workload
    flop = workload.flop(case.convention)
    return PhysicalWork(
        implementation=name,
        logical_flop=flop,
        physical_flop=flop,
        logical_bytes=workload.bytes,
        bytes_by_interface={key: moved for key in MODEL_INTERFACES},
        assumptions=(*sentences, closing),
        launches=launches,
    )


# --- reductions: the library's row sums ---------------------------------------------------------
#
# What `cupy.sum(x, axis=1)` runs (CuPy's default accelerator on CUDA is CUB), as measure/kernels/reduction.py
# calls it: a row of x is one segment, one thread block a row.
# - Same-type sums (fp32, fp64): CUB's DeviceSegmentedReduce, tuning Policy600 (cub/device/dispatch/dispatch_reduce.cuh):
#   256 threads a block, 16 four-byte items a thread (8 eight-byte ones), read in vector loads of 4 items: 64 B a
#   thread in flight, as 4 loads of 16 B (16 loads of 4 B when a row does not start on a 16-byte boundary: the same 64 B).
# - 16-bit inputs summed in fp32 (`dtype=float32`, which CUB's device reduction refuses): CuPy's CUB block reduction
#   (cupy/_core/_cub_reduction.pyx): min(512, max(32, ⌈n/4⌉ rounded up to a power of two)) threads a block, 4 items
#   a thread loaded directly (4 loads of 2 B), then an elementwise copy of the fp32 sums into the 16-bit result.
SEGMENTED_THREADS = 256
SEGMENTED_BYTES_A_THREAD = 64  # 16 items × 4 B (Policy600's nominal 4-byte items)
SEGMENTED_LOAD = 16  # a vector load of 4 four-byte items
BLOCK_REDUCE_ITEMS = 4
BLOCK_REDUCE_MAX_THREADS = 512
WARP = 32


def _block_reduce_threads(n: Any) -> Any:
    """CuPy's CUB block size for a segment of n items: ⌈n/4⌉ up to a power of two, within 32 … 512."""
    per_thread = _ceil_div(n, BLOCK_REDUCE_ITEMS)
    if isinstance(per_thread, int):
        size = 1 << max(per_thread - 1, 0).bit_length()
        return min(BLOCK_REDUCE_MAX_THREADS, max(WARP, size))
    import numpy as np

    size = np.exp2(np.ceil(np.log2(np.maximum(per_thread, 1))))
    return np.clip(size, WARP, BLOCK_REDUCE_MAX_THREADS)


def library_reduce(case: Case) -> PhysicalWork:
    """cupy.sum(x, axis=1): CUB's segmented reduction for same-type sums, CuPy's CUB block reduction for 16-bit ones."""
    workload = case.workload
    rows, n = workload.values["rows"], workload.values["n"]
    itemsize = _tensor_itemsize(workload)
    x_bytes = rows * n * itemsize
    if itemsize >= 4:
        launches: tuple[KernelLaunch, ...] = (
            KernelLaunch("CUB segmented reduction", rows * SEGMENTED_THREADS, SEGMENTED_THREADS, SEGMENTED_LOAD,
                         SEGMENTED_BYTES_A_THREAD // SEGMENTED_LOAD, x_bytes, rows * itemsize),
        )
        sentences = [
            f"the array library's row sum (cupy.sum(x, axis=1), CUB's DeviceSegmentedReduce, tuning Policy600): one block "
            f"of {SEGMENTED_THREADS} threads a row, each thread loading {SEGMENTED_BYTES_A_THREAD} B of its row as "
            f"{SEGMENTED_BYTES_A_THREAD // SEGMENTED_LOAD} vector loads of {SEGMENTED_LOAD} B before it adds them "
            f"(16 loads of 4 B when a row does not start on a 16-byte boundary: the same {SEGMENTED_BYTES_A_THREAD} B in flight)",
        ]
    else:
        block = _whole(_block_reduce_threads(n))
        wide = rows * 4  # the fp32 sums: written by the reduction, read by the copy
        launches = (
            KernelLaunch("CuPy CUB block reduction", rows * block, block, itemsize, BLOCK_REDUCE_ITEMS, x_bytes, wide),
            KernelLaunch("CuPy elementwise copy of the fp32 sums", rows, LIBRARY_THREADS_PER_BLOCK, 4, 1, wide, rows * itemsize),
        )
        sentences = [
            f"the array library's row sum of {itemsize * 8}-bit values accumulating in fp32 (cupy.sum(x, axis=1, "
            f"dtype=float32), which CUB's device reduction does not take): CuPy's CUB block reduction, one block a row of "
            f"⌈n/4⌉ threads rounded up to a power of two within {WARP} … {BLOCK_REDUCE_MAX_THREADS} ({_n(block)} here), "
            f"each thread loading {BLOCK_REDUCE_ITEMS} items of {itemsize} B directly before it adds them; then an "
            "elementwise copy of the fp32 sums into the result",
        ]
    moved = sum((launch.bytes for launch in launches), 0)
    return _stream_work(case, LIBRARY, launches, moved, sentences, closing=(
        "every byte crosses HBM → L2 → SM once (each value of x is added once); a block's threads beyond the row's "
        "items hold nothing in flight, which the model does not subtract (the bound stays a floor)"))


# --- attention: naive ----------------------------------------------------------------


def naive_attention(case: Case) -> PhysicalWork:
    """Three kernels (Q·Kᵀ, softmax, P·V) with S and P through HBM; causal masks computed, then discarded."""
    workload, convention, params = case.workload, case.convention, case.params
    causal, fused = bool(params["causal"]), bool(params["fused"])
    unmasked = case.decl.spec.build({**params, "causal": False, "fused": False})  # the full Sq × Skv square
    physical_flop = unmasked.flop(convention)
    moved = unmasked.bytes
    sentences = [
        "naive attention: three kernels — Q·Kᵀ writes the scores S to HBM, softmax reads S and writes the "
        "probabilities P, P·V reads P — so S and P (B·H·Sq·Skv each) are written once and read once"
        + (" beyond the fused kernel's compulsory bytes" if fused else "; the declaration is already unfused (fused=false), so its compulsory bytes count them"),
    ]
    if causal:
        sentences.append(
            "causal mask applied after the fact: every one of the Sq·Skv scores is computed, the masked ones "
            "are set to −∞ before the softmax and their P·V products are computed with zeros, so the masked work "
            "is physical FLOP above the logical count (the select itself is not counted)"
        )
    else:
        sentences.append("no mask: the physical FLOP are the logical FLOP")
    sentences.append(
        "the products inside are assumed to reach compulsory reuse on chip: L2 → SM and shared memory → "
        "registers carry the same bytes as HBM"
    )
    return PhysicalWork(
        implementation=NAIVE,
        logical_flop=workload.flop(convention),
        physical_flop=physical_flop,
        logical_bytes=workload.bytes,
        bytes_by_interface={key: moved for key in MODEL_INTERFACES},
        assumptions=tuple(sentences),
    )


_OP_MODELS: dict[tuple[str, str], Model] = {
    ("gemm", NAIVE): naive_gemm,
    ("gemm", TILED): tiled_gemm,
    ("conv2d", TILED): tiled_conv2d,
    **{(op, LIBRARY): library_stream for op in ("copy", "scale", "add", "triad", "elementwise")},
    **{(op, VECTORIZED): vectorized_stream for op in ("copy", "scale", "add", "triad")},
    ("attention", NAIVE): naive_attention,
    ("reduce", LIBRARY): library_reduce,
}


def _dispatch(name: str) -> Model:
    def model(case: Case) -> PhysicalWork:
        return _OP_MODELS[(case.decl.op, name)](case)

    return model


_MODELS: dict[str, Model] = {
    COMPULSORY: compulsory,
    NAIVE: _dispatch(NAIVE),
    TILED: _dispatch(TILED),
    LIBRARY: _dispatch(LIBRARY),
    VECTORIZED: _dispatch(VECTORIZED),
}


def models() -> tuple[str, ...]:
    """Every implementation model's name (what `impl=` may say, per operation as its OpSpec allows)."""
    return tuple(_MODELS)
