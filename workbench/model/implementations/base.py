"""What every implementation model shares: the models' names, their result types, and arithmetic that also
takes a sweep's numpy arrays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from workbench.model.declare import Declaration
from workbench.model.devices.catalogue import Device
from workbench.model.devices.interfaces import HBM, L2, SMEM
from workbench.model.ops import Workload

COMPULSORY = "compulsory"
NAIVE = "naive"
TILED = "tiled"
LIBRARY = "library"  # the array library's own kernel (CuPy's elementwise kernels): what a user's code runs
VECTORIZED = "vectorized"  # the lab's 16-byte-load RawKernel (measure/kernels/stream_raw.py)

# The launch the library kernels use: CuPy's elementwise kernels run 128 threads a block, one element a thread.
LIBRARY_THREADS_PER_BLOCK = 128
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


def ceil_div(a: Any, b: Any) -> Any:
    """⌈a / b⌉: exact for ints; for a sweep's float64 arrays ceil(a / b) (floor division of floats is slow)."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    import numpy as np

    quotient = np.divide(a, b)  # a fresh array: rounded up in place (a new array per step costs page faults)
    return np.ceil(quotient, out=quotient) if isinstance(quotient, np.ndarray) else np.ceil(quotient)


def smaller(a: Any, b: Any) -> Any:
    """min() that also works when either side is a sweep's numpy array."""
    if isinstance(a, int) and isinstance(b, int):
        return a if a <= b else b
    import numpy as np

    return np.minimum(a, b)


def choose(condition: Any, yes: Any, no: Any) -> Any:
    """`yes if condition else no`, elementwise when a sweep passes numpy arrays."""
    if isinstance(condition, bool):
        return yes if condition else no
    import numpy as np

    return np.where(condition, yes, no)


def _flop_per_fma(convention: str) -> int:
    return 2 if convention == "fma2" else 1


def tensor_named(workload: Workload, name: str) -> Any:
    for tensor in workload.tensors:
        if tensor.name == name:
            return tensor
    raise KeyError(name)  # pragma: no cover - every GEMM workload has A, B and C


def count_text(value: Any) -> str:
    """A count in a sentence: 1,024 (a sweep's array is described, not printed)."""
    if isinstance(value, int):
        return f"{value:,}"
    if getattr(value, "ndim", None) == 0 and float(value).is_integer():
        return f"{int(value):,}"
    return "(swept)"


def whole(value: Any) -> Any:
    """A field's value as a Python int when it is one number, else the (swept) array unchanged."""
    return int(value) if getattr(value, "ndim", 0) == 0 else value
