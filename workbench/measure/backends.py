"""Array backends: NumPy on the CPU and CuPy on an NVIDIA GPU, behind one small interface.

Kernels are written once against `backend.xp` (numpy or cupy); what differs
between the two — timing, synchronisation, memory, random fills, GEMM
dispatch, the conditions worth recording — lives here.

Timing follows two references. NumPy: `time.perf_counter_ns()` around each
call. CuPy: CUDA events recorded on the current stream around each call and
read with `cupy.cuda.get_elapsed_time` (milliseconds, converted to seconds).
In warm mode every iteration is synchronised before the next starts, as
`cupyx.profiler.benchmark` does; in cold mode a flush buffer is written
before each iteration and the host does not wait between iterations, as
`triton.testing.do_bench` does.

CuPy is imported lazily: its absence is a normal state, reported by
`backend_status()` and by `select_backend("cupy")` as BackendUnavailable.
An installed CuPy counts as available only after a probe has used it (its
CUDA libraries load, a kernel compiles with NVRTC and runs, memory is
allocated): a wheel without its CUDA libraries, or no driver, is one clear
line naming what is missing, never a failure deep inside the first run.
Nothing here changes GPU clocks or any device setting.
"""

from __future__ import annotations

import os
import platform
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from workbench.errors import WorkbenchError
from workbench.devices import host
from workbench.measure.errors import (
    BackendUnavailable,
    MeasurementError,
    MemoryRefused,
    UnsupportedMeasurement,
)

BACKEND_CHOICES = ("auto", "cupy", "numpy")

# Storage types of the workbench dtypes that arrays can hold (tf32 is stored as fp32).
_STORAGE = {"fp64": "float64", "fp32": "float32", "tf32": "float32", "fp16": "float16", "bool": "bool"}

# Elements generated per step when filling inputs: bounded host/device memory, and a stop check per chunk.
_FILL_CHUNK_CPU = 1 << 22
_FILL_CHUNK_GPU = 1 << 25

TRITON_FLUSH_BYTES = 256_000_000  # triton.testing.do_bench clears a 256 MB buffer before each call


@dataclass(frozen=True)
class BackendStatus:
    """Whether a backend can run here, and why not when it cannot."""

    name: str
    available: bool
    message: str


class Backend(ABC):
    """One array library on one device: arrays, timing, memory, GEMM dispatch, conditions."""

    name: str = ""
    kind: str = ""  # "cpu" or "gpu"
    xp: Any = None

    # -- identity ------------------------------------------------------------
    @abstractmethod
    def describe(self) -> str:
        """The device in words, e.g. 'CPU: AMD EPYC 9654 (2 logical cores)'."""

    @abstractmethod
    def environment(self) -> dict[str, Any]:
        """Library versions, driver, device identity: recorded with every run."""

    @abstractmethod
    def conditions(self) -> dict[str, Any]:
        """Clocks, temperature, power or load now (recorded before and after timing)."""

    # -- data types and arrays -------------------------------------------------
    @abstractmethod
    def storage_dtype(self, name: str) -> Any:
        """The array dtype holding workbench dtype `name`; UnsupportedMeasurement if none."""

    def empty(self, shape: Sequence[int], dtype_name: str) -> Any:
        return self.xp.empty(tuple(int(x) for x in shape), dtype=self.storage_dtype(dtype_name))

    @abstractmethod
    def fill_uniform(self, array: Any, low: float, high: float, seed: int, should_stop: Callable[[], bool]) -> bool:
        """Fill `array` with uniform random values in [low, high); False if stopped part-way."""

    def fill_value(self, array: Any, value: float) -> None:
        array.fill(value)

    @abstractmethod
    def to_host(self, array: Any) -> Any:
        """A NumPy copy (or view) of a device array or view."""

    @abstractmethod
    def take(self, array: Any, flat_indices: Any) -> Any:
        """Elements of a contiguous array at flat indices, as a NumPy array."""

    @abstractmethod
    def as_strided(self, array: Any, shape: Sequence[int], strides: Sequence[int]) -> Any:
        """A strided view (strides in bytes) of an array, for im2col."""

    def checksum(self, arrays: Sequence[Any]) -> float:
        """Sum of every output element in float64: finite exactly when no output is NaN or infinite."""
        total = 0.0
        for array in arrays:
            total += float(self.xp.sum(array, dtype=self.xp.float64))
        return total

    # -- memory ------------------------------------------------------------------
    @abstractmethod
    def free_memory(self) -> tuple[int, str]:
        """Bytes a run may allocate, and where that figure came from."""

    @abstractmethod
    def flush_bytes(self) -> int:
        """Size of the buffer cold mode writes before each iteration (≥ the last-level cache)."""

    @abstractmethod
    def make_flush(self, nbytes: int) -> Callable[[], None]:
        """A call that writes an `nbytes` buffer, evicting the cache (cold mode)."""

    def release(self) -> None:
        """Give cached memory back after a run (the CuPy pool keeps freed blocks)."""

    # -- timing ------------------------------------------------------------------
    @abstractmethod
    def synchronize(self) -> None:
        """Wait until all queued device work has finished."""

    def wall_time(self, call: Callable[[], None]) -> float:
        """Seconds of one call including its completion (for the first call and warm-up)."""
        start = time.perf_counter()
        call()
        self.synchronize()
        return time.perf_counter() - start

    @abstractmethod
    def time_calls(
        self, call: Callable[[], None], count: int, flush: Callable[[], None] | None, sync_each: bool
    ) -> list[float]:
        """Seconds of each of `count` calls, timed by the backend's clock."""

    @property
    @abstractmethod
    def timer_name(self) -> str:
        """How iterations are timed, in words (recorded with each run)."""

    # -- matrix products -----------------------------------------------------------
    @abstractmethod
    def matmul(self, a: Any, b: Any, out: Any, *, beta: float = 0.0, scratch: Any = None, tf32: bool = False) -> None:
        """out = a @ b + beta·out over broadcast batch dimensions (`scratch` holds a @ b where needed)."""

    @abstractmethod
    def matmul_algorithm(self, dtype_name: str, beta: float = 0.0) -> str:
        """Which library routine runs a matrix product of this dtype."""

    @abstractmethod
    def executed_matrix_path(self, dtype_name: str) -> str:
        """The instruction path a matrix product of this dtype runs on here."""

    def matmul_scratch_needed(self, beta: float) -> bool:
        """True when `matmul` needs a scratch array the size of `out` (β ≠ 0 without native β)."""
        return beta != 0

    def accumulates_in_fp32(self, dtype_name: str) -> bool:
        """True when matrix products of 16-bit inputs accumulate in fp32 (both backends do)."""
        return dtype_name in ("fp16", "bf16")

    # -- errors ------------------------------------------------------------------
    def translate(self, exc: BaseException) -> WorkbenchError | None:
        """A library exception as one clear WorkbenchError, or None to let it through."""
        if isinstance(exc, MemoryError):
            return MemoryRefused(f"out of {'GPU' if self.kind == 'gpu' else 'host'} memory during the run ({exc or 'MemoryError'})")
        return None


def _refuse_dtype(name: str, library: str, hint: str) -> UnsupportedMeasurement:
    """The one-line refusal for a dtype an array library cannot hold."""
    if name in ("int8", "int4", "int32", "int64"):
        return UnsupportedMeasurement(
            f"{name}: integer kernels are not measured yet; declare a floating-point dtype (fp16, fp32, fp64)"
        )
    if name.startswith(("fp8", "fp4")):
        return UnsupportedMeasurement(
            f"{name}: neither NumPy nor CuPy has {name} arrays, so {name} kernels are not measured; "
            "analyse them with the bounds, or declare fp16/bf16"
        )
    return UnsupportedMeasurement(f"{name}: {library} has no {name} arrays; {hint}")


# ============================================================================ NumPy


class NumpyBackend(Backend):
    """NumPy on the host CPU, timed with time.perf_counter_ns()."""

    name = "numpy"
    kind = "cpu"

    def __init__(self) -> None:
        import numpy

        self.xp = numpy
        self._flush_buffers: list[Any] = []

    def describe(self) -> str:
        return f"CPU: {host.cpu_model()} ({host.logical_cores()} logical cores)"

    def environment(self) -> dict[str, Any]:
        np = self.xp
        env: dict[str, Any] = {
            "backend": self.name,
            "device": self.describe(),
            "numpy": np.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu": host.cpu_model(),
            "logical_cores": host.logical_cores(),
            "last_level_cache_bytes": host.last_level_cache_bytes(),
        }
        blas = _numpy_blas(np)
        if blas:
            env["blas"] = blas
        threads = {key: os.environ[key] for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if key in os.environ}
        if threads:
            env["thread_settings"] = threads
        return env

    def conditions(self) -> dict[str, Any]:
        return host.cpu_conditions()

    def storage_dtype(self, name: str) -> Any:
        storage = _STORAGE.get(name)
        if storage is None:
            raise _refuse_dtype(name, "NumPy", "measure it on a GPU (--backend cupy), or declare fp16/fp32/fp64")
        return self.xp.dtype(storage)

    def fill_uniform(self, array: Any, low: float, high: float, seed: int, should_stop: Callable[[], bool]) -> bool:
        np = self.xp
        rng = np.random.default_rng(seed)
        flat = array.reshape(-1)
        generated = np.float64 if array.dtype == np.float64 else np.float32
        for start in range(0, flat.size, _FILL_CHUNK_CPU):
            stop = min(start + _FILL_CHUNK_CPU, flat.size)
            values = rng.random(stop - start, dtype=generated)
            values *= high - low
            values += low
            flat[start:stop] = values
            if should_stop():
                return False
        return True

    def to_host(self, array: Any) -> Any:
        return self.xp.asarray(array)

    def take(self, array: Any, flat_indices: Any) -> Any:
        return array.reshape(-1)[flat_indices]

    def as_strided(self, array: Any, shape: Sequence[int], strides: Sequence[int]) -> Any:
        from numpy.lib.stride_tricks import as_strided

        return as_strided(array, shape=tuple(shape), strides=tuple(strides), writeable=False)

    def free_memory(self) -> tuple[int, str]:
        return host.available_memory()

    def flush_bytes(self) -> int:
        cache = host.last_level_cache_bytes()
        return max(2 * cache, 64 * 1024**2) if cache else 256 * 1024**2

    def make_flush(self, nbytes: int) -> Callable[[], None]:
        buffer = self.xp.empty(nbytes, dtype=self.xp.uint8)
        self._flush_buffers.append(buffer)
        counter = [0]

        def flush() -> None:
            counter[0] = (counter[0] + 1) & 0xFF
            buffer.fill(counter[0])

        return flush

    def release(self) -> None:
        self._flush_buffers.clear()

    def synchronize(self) -> None:
        """NumPy calls return when their work is done: nothing to wait for."""

    def time_calls(
        self, call: Callable[[], None], count: int, flush: Callable[[], None] | None, sync_each: bool
    ) -> list[float]:
        clock = time.perf_counter_ns
        samples = []
        for _ in range(count):
            if flush is not None:
                flush()
            start = clock()
            call()
            samples.append((clock() - start) * 1e-9)
        return samples

    @property
    def timer_name(self) -> str:
        return "time.perf_counter_ns() around each call"

    def matmul(self, a: Any, b: Any, out: Any, *, beta: float = 0.0, scratch: Any = None, tf32: bool = False) -> None:
        np = self.xp
        if beta == 0:
            np.matmul(a, b, out=out)
            return
        if scratch is None:
            raise MeasurementError("internal: β ≠ 0 needs a scratch array on NumPy")
        np.matmul(a, b, out=scratch)
        np.multiply(out, beta, out=out)
        np.add(out, scratch, out=out)

    def matmul_algorithm(self, dtype_name: str, beta: float = 0.0) -> str:
        blas = _numpy_blas(self.xp) or "BLAS"
        if dtype_name == "fp16":
            routine = "numpy.matmul (no BLAS for fp16: NumPy's own loop, fp32 accumulation)"
        else:
            routine = f"numpy.matmul ({blas})"
        if beta != 0:
            routine += ", then out = β·out + product with two ufuncs"
        return routine

    def executed_matrix_path(self, dtype_name: str) -> str:
        return "fp64" if dtype_name == "fp64" else "fp32"


def _numpy_blas(np: Any) -> str:
    """'scipy-openblas 0.3.31' from NumPy's build configuration, or '' when it does not say."""
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
        return f"{blas.get('name', '')} {blas.get('version', '')}".strip()
    except Exception:  # the configuration layout is not part of NumPy's API
        return ""


# ============================================================================ CuPy

# cuBLAS and CUDA enumerations (values from cublas_api.h / library_types.h), used when the
# bindings do not export a name.
_CUDA_R_32F, _CUDA_R_64F, _CUDA_R_16F, _CUDA_R_16BF = 0, 1, 2, 14
_CUBLAS_COMPUTE_32F, _CUBLAS_COMPUTE_64F, _CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 70, 77
_CUBLAS_GEMM_DEFAULT = -1
_CUBLAS_OP_N, _CUBLAS_OP_T = 0, 1
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class _Operand:
    """One matrix of a cuBLAS call: operation (N/T) and leading dimension."""

    op: int
    ld: int


@dataclass(frozen=True)
class GemmPlan:
    """How a row-major batched product maps onto one column-major cuBLAS call per outer index.

    cuBLAS sees C^T = B^T · A^T: its first operand is our B, its second our A.
    """

    m: int
    n: int
    k: int
    a: _Operand
    b: _Operand
    ldc: int
    inner_count: int
    inner_strides: tuple[int, int, int]  # elements between batch entries of a, b, out
    outer_offsets: tuple[tuple[int, int, int], ...]  # element offsets of each outer batch index


def _as_cublas_operand(rows: int, cols: int, row_stride: int, col_stride: int) -> _Operand | None:
    """Row-major X[rows, cols] as a column-major cuBLAS operand (cols × rows), or its transpose; None if neither."""
    if col_stride == 1 or cols == 1:  # rows are contiguous: X is column-major Xᵀ as it stands
        operand = _Operand(_CUBLAS_OP_N, row_stride if rows > 1 else cols)
        return operand if operand.ld >= cols else None
    if row_stride == 1 or rows == 1:  # columns are contiguous: cuBLAS transposes it
        operand = _Operand(_CUBLAS_OP_T, col_stride if cols > 1 else rows)
        return operand if operand.ld >= rows else None
    return None


def plan_gemm(
    a_shape: Sequence[int],
    a_strides: Sequence[int],
    b_shape: Sequence[int],
    b_strides: Sequence[int],
    out_shape: Sequence[int],
    out_strides: Sequence[int],
) -> GemmPlan | None:
    """Map a @ b → out (strides in elements) onto strided-batched cuBLAS, or None if it cannot be.

    Batch dimensions broadcast as in numpy.matmul; adjacent batch dimensions
    merge when every operand steps through them uniformly, and any that do
    not merge become an outer loop of calls.
    """
    m, k = int(a_shape[-2]), int(a_shape[-1])
    n = int(b_shape[-1])
    if int(b_shape[-2]) != k or tuple(out_shape[-2:]) != (m, n) or min(m, n, k) < 1:
        return None
    if any(s < 0 for s in (*a_strides, *b_strides, *out_strides)):
        return None
    # out[m, n] row-major: column-major C^T (n × m) with leading dimension = row stride.
    if n > 1 and out_strides[-1] != 1:
        return None
    ldc = int(out_strides[-2]) if m > 1 else n
    if ldc < n:
        return None
    # b[k, n] is cuBLAS's first operand (n × k), a[m, k] its second (k × m).
    first = _as_cublas_operand(k, n, int(b_strides[-2]), int(b_strides[-1]))
    second = _as_cublas_operand(m, k, int(a_strides[-2]), int(a_strides[-1]))
    if first is None or second is None:
        return None

    batch_shape = tuple(int(x) for x in out_shape[:-2])
    rank = len(batch_shape)

    def batch_strides(shape: Sequence[int], strides: Sequence[int]) -> list[int]:
        lead = len(shape) - 2
        if lead > rank:
            return []
        padded_shape = (1,) * (rank - lead) + tuple(int(x) for x in shape[:-2])
        padded_strides = (0,) * (rank - lead) + tuple(int(x) for x in strides[:-2])
        result = []
        for size, stride, full in zip(padded_shape, padded_strides, batch_shape):
            if size not in (1, full):
                raise ValueError("shapes do not broadcast")
            result.append(0 if size == 1 else stride)
        return result

    try:
        sa = batch_strides(a_shape, a_strides)
        sb = batch_strides(b_shape, b_strides)
    except ValueError:
        return None
    if len(sa) != rank or len(sb) != rank:
        return None
    sc = [int(x) for x in out_strides[:-2]]
    dims = [(size, sa[i], sb[i], sc[i]) for i, size in enumerate(batch_shape) if size != 1]
    if any(dc == 0 for _size, _da, _db, dc in dims):
        return None  # batch entries would write the same output
    merged: list[tuple[int, int, int, int]] = []
    for size, da, db, dc in dims:
        if merged:
            p_size, pa, pb, pc = merged[-1]
            if pa == da * size and pb == db * size and pc == dc * size:
                merged[-1] = (p_size * size, da, db, dc)
                continue
        merged.append((size, da, db, dc))
    if merged:
        inner_count, ia, ib, ic = merged[-1]
        outer = merged[:-1]
    else:
        inner_count, ia, ib, ic = 1, 0, 0, 0
        outer = []
    offsets = [(0, 0, 0)]
    for size, da, db, dc in outer:
        offsets = [(oa + i * da, ob + i * db, oc + i * dc) for oa, ob, oc in offsets for i in range(size)]
    if max(m, n, k, first.ld, second.ld, ldc, inner_count) > _INT32_MAX:
        return None
    return GemmPlan(m, n, k, second, first, ldc, inner_count, (ia, ib, ic), tuple(offsets))


class CupyBackend(Backend):
    """CuPy on one CUDA device, timed with CUDA events on the current stream."""

    name = "cupy"
    kind = "gpu"

    def __init__(self, device_index: int | None = None) -> None:
        import cupy

        self.xp = cupy
        self._cupy = cupy
        self._device = cupy.cuda.Device(device_index) if device_index is not None else cupy.cuda.Device()
        self._device.use()
        self._props = cupy.cuda.runtime.getDeviceProperties(self._device.id)
        self._flush_buffers: list[Any] = []
        self._bf16: Any = None
        self._bf16_checked = False
        self._bf16_reason = ""
        self._nvml_index: int | None = None
        self._nvml_looked_up = False

    # -- identity ------------------------------------------------------------
    @property
    def device_name(self) -> str:
        name = self._props.get("name", b"")
        return name.decode() if isinstance(name, bytes) else str(name)

    @property
    def compute_capability(self) -> str:
        return f"{self._props.get('major', 0)}.{self._props.get('minor', 0)}"

    @property
    def pci_bus_id(self) -> str:
        try:
            return str(self._device.pci_bus_id)
        except Exception:  # older CuPy: no pci_bus_id property
            return ""

    def describe(self) -> str:
        return f"GPU {self._device.id}: {self.device_name} (compute capability {self.compute_capability})"

    def nvml_index(self) -> int | None:
        """The NVML index of this CUDA device, matched by PCI bus id (CUDA and NVML orders can differ)."""
        if not self._nvml_looked_up:
            self._nvml_looked_up = True
            self._nvml_index = _nvml_index_for_pci(self.pci_bus_id)
            if self._nvml_index is None and not os.environ.get("CUDA_VISIBLE_DEVICES"):
                self._nvml_index = self._device.id  # without a PCI match, the orders agree when nothing is hidden
        return self._nvml_index

    def environment(self) -> dict[str, Any]:
        cupy = self._cupy
        import numpy

        runtime = cupy.cuda.runtime
        env: dict[str, Any] = {
            "backend": self.name,
            "device": self.describe(),
            "device_name": self.device_name,
            "device_index": self._device.id,
            "pci_bus_id": self.pci_bus_id,
            "compute_capability": self.compute_capability,
            "memory_total_bytes": int(self._props.get("totalGlobalMem", 0)),
            "l2_bytes": int(self._props.get("l2CacheSize", 0)),
            "sm_count": int(self._props.get("multiProcessorCount", 0)),
            "cupy": cupy.__version__,
            "numpy": numpy.__version__,
            "python": platform.python_version(),
            "cuda_runtime": _cuda_version(_optional(runtime.runtimeGetVersion)),
            "cuda_driver_api": _cuda_version(_optional(runtime.driverGetVersion)),
            "nvml_index": self.nvml_index(),
            "CUPY_TF32": os.environ.get("CUPY_TF32", ""),
        }
        driver = _nvml_driver_version()
        if driver:
            env["driver"] = driver
        uuid = _nvml_uuid(env["nvml_index"])
        if uuid:
            env["uuid"] = uuid  # with the PCI bus id: which physical GPU ran, for the run's provenance
        return env

    def conditions(self) -> dict[str, Any]:
        from workbench.devices.nvml import read_conditions

        index = self.nvml_index()
        return read_conditions(index) if index is not None else {}

    # -- data types and arrays -------------------------------------------------
    def storage_dtype(self, name: str) -> Any:
        if name == "bf16":
            dtype = self._bfloat16()
            if dtype is None:
                raise UnsupportedMeasurement(f"bf16: {self._bf16_reason}; declare fp16 instead")
            return dtype
        if name.startswith("fp8"):
            raise UnsupportedMeasurement(
                f"{name}: CuPy has no fp8 arrays and cublasGemmEx has no fp8 path (only cuBLASLt has), so {name} "
                "kernels are not measured; analyse them with the bounds, or declare fp16/bf16"
            )
        storage = _STORAGE.get(name)
        if storage is None:
            raise _refuse_dtype(name, "CuPy", "declare fp16, bf16, fp32 or fp64")
        if name == "tf32" and self._cc_major() < 8:
            raise UnsupportedMeasurement("tf32: TF32 tensor cores need compute capability 8.0 or newer")
        return self._cupy.dtype(storage)

    def _cc_major(self) -> int:
        return int(self._props.get("major", 0))

    def _bfloat16(self) -> Any:
        """CuPy's bfloat16 dtype when it can hold, convert, add and sum bf16 arrays here, else None (and why)."""
        if not self._bf16_checked:
            self._bf16_checked = True
            self._bf16 = None
            try:
                import ml_dtypes  # type: ignore[import-not-found]
            except ImportError:
                self._bf16_reason = f"CuPy holds bfloat16 only with ml_dtypes installed ({_install_hint()})"
                return None
            import numpy

            if numpy.lib.NumpyVersion(numpy.__version__) < "2.1.2":
                self._bf16_reason = f"CuPy holds bfloat16 only with NumPy 2.1.2 or newer (this is {numpy.__version__})"
                return None
            if self._cc_major() < 8:
                self._bf16_reason = f"bf16 tensor cores need compute capability 8.0 or newer (this GPU is {self.compute_capability})"
                return None
            cupy = self._cupy
            try:
                dtype = numpy.dtype(ml_dtypes.bfloat16)
                probe = cupy.arange(8, dtype=cupy.float32).astype(dtype)
                total = float(cupy.sum(probe + probe, dtype=cupy.float64))
                if total != 56.0:
                    raise ValueError(f"sum of a bf16 probe is {total}, expected 56")
                self._bf16 = dtype
            except Exception as exc:
                self._bf16_reason = f"this CuPy could not compute with bfloat16 arrays ({_one_line(exc)})"
        return self._bf16

    def fill_uniform(self, array: Any, low: float, high: float, seed: int, should_stop: Callable[[], bool]) -> bool:
        cupy = self._cupy
        state = cupy.random.RandomState(seed)
        flat = array.reshape(-1)
        generated = cupy.float64 if array.dtype == cupy.float64 else cupy.float32
        for start in range(0, flat.size, _FILL_CHUNK_GPU):
            stop = min(start + _FILL_CHUNK_GPU, flat.size)
            values = state.random_sample(size=stop - start, dtype=generated)
            values *= high - low
            values += low
            flat[start:stop] = values
            if should_stop():
                return False
        return True

    def to_host(self, array: Any) -> Any:
        return self._cupy.asnumpy(array)

    def take(self, array: Any, flat_indices: Any) -> Any:
        cupy = self._cupy
        return cupy.asnumpy(array.reshape(-1)[cupy.asarray(flat_indices)])

    def as_strided(self, array: Any, shape: Sequence[int], strides: Sequence[int]) -> Any:
        from cupy.lib.stride_tricks import as_strided

        return as_strided(array, shape=tuple(shape), strides=tuple(strides))

    # -- memory ------------------------------------------------------------------
    def free_memory(self) -> tuple[int, str]:
        free, _total = self._cupy.cuda.runtime.memGetInfo()
        pooled = self._cupy.get_default_memory_pool().free_bytes()
        return int(free) + int(pooled), "cudaMemGetInfo free bytes plus CuPy's pooled free blocks"

    def flush_bytes(self) -> int:
        return max(TRITON_FLUSH_BYTES, 2 * int(self._props.get("l2CacheSize", 0)))

    def make_flush(self, nbytes: int) -> Callable[[], None]:
        buffer = self._cupy.empty(nbytes, dtype=self._cupy.uint8)
        self._flush_buffers.append(buffer)

        def flush() -> None:
            buffer.fill(0)

        return flush

    def release(self) -> None:
        self._flush_buffers.clear()
        self._cupy.get_default_memory_pool().free_all_blocks()

    # -- timing ------------------------------------------------------------------
    def synchronize(self) -> None:
        self._device.synchronize()

    def time_calls(
        self, call: Callable[[], None], count: int, flush: Callable[[], None] | None, sync_each: bool
    ) -> list[float]:
        cuda = self._cupy.cuda
        starts = [cuda.Event() for _ in range(count)]
        ends = [cuda.Event() for _ in range(count)]
        for start, end in zip(starts, ends):
            if flush is not None:
                flush()
            start.record()
            call()
            end.record()
            if sync_each:
                end.synchronize()
        ends[-1].synchronize()
        # get_elapsed_time answers in milliseconds.
        return [cuda.get_elapsed_time(start, end) * 1e-3 for start, end in zip(starts, ends)]

    @property
    def timer_name(self) -> str:
        return "CUDA events on the current stream around each call (cupy.cuda.get_elapsed_time, ms → s)"

    # -- matrix products -----------------------------------------------------------
    def _gemm_types(self, dtype: Any, tf32: bool) -> tuple[int, int, Any]:
        """(cuda data type, cuBLAS compute type, numpy dtype of α and β) for an operand dtype."""
        import numpy

        from cupy_backends.cuda.libs import cublas

        runtime = self._cupy.cuda.runtime
        compute_32f = getattr(cublas, "CUBLAS_COMPUTE_32F", _CUBLAS_COMPUTE_32F)
        if dtype == numpy.float16:
            return getattr(runtime, "CUDA_R_16F", _CUDA_R_16F), compute_32f, numpy.float32
        if dtype == numpy.float32:
            compute = getattr(cublas, "CUBLAS_COMPUTE_32F_FAST_TF32", _CUBLAS_COMPUTE_32F_FAST_TF32) if tf32 else compute_32f
            return getattr(runtime, "CUDA_R_32F", _CUDA_R_32F), compute, numpy.float32
        if dtype == numpy.float64:
            return getattr(runtime, "CUDA_R_64F", _CUDA_R_64F), getattr(cublas, "CUBLAS_COMPUTE_64F", _CUBLAS_COMPUTE_64F), numpy.float64
        if self._bfloat16() is not None and dtype == self._bfloat16():
            return getattr(runtime, "CUDA_R_16BF", _CUDA_R_16BF), compute_32f, numpy.float32
        raise UnsupportedMeasurement(f"no cuBLAS GEMM for dtype {dtype}")

    def matmul(self, a: Any, b: Any, out: Any, *, beta: float = 0.0, scratch: Any = None, tf32: bool = False) -> None:
        """cuBLAS GemmEx / GemmStridedBatchedEx with an explicit compute type, β applied by cuBLAS.

        cupy.matmul is not used for these products: it casts batched fp16 to fp32
        before the GEMM (cupy PR #10317) and takes TF32 from process-wide state.
        """
        plan = self._plan(a, b, out)
        if plan is None and tf32 and (a.ndim > 2 or b.ndim > 2):
            # cupy.matmul's batched fp32 path never uses TF32: copy the operands into layouts cuBLAS takes.
            a, b = self._cupy.ascontiguousarray(a), self._cupy.ascontiguousarray(b)
            plan = self._plan(a, b, out)
        if plan is None:
            self._fallback_matmul(a, b, out, beta, scratch, tf32)
            return
        import numpy

        from cupy_backends.cuda.libs import cublas

        data_type, compute_type, scalar = self._gemm_types(out.dtype, tf32)
        alpha_value = numpy.array(1.0, dtype=scalar)
        beta_value = numpy.array(beta, dtype=scalar)
        handle = self._cupy.cuda.device.get_cublas_handle()
        algo = getattr(cublas, "CUBLAS_GEMM_DEFAULT", _CUBLAS_GEMM_DEFAULT)
        item = out.dtype.itemsize
        a_base, b_base, c_base = a.data.ptr, b.data.ptr, out.data.ptr
        ia, ib, ic = plan.inner_strides
        for oa, ob, oc in plan.outer_offsets:
            # Column-major C^T (n × m) = B^T (n × k) · A^T (k × m).
            first = b_base + ob * item
            second = a_base + oa * item
            target = c_base + oc * item
            if plan.inner_count == 1:
                cublas.gemmEx(
                    handle, plan.b.op, plan.a.op, plan.n, plan.m, plan.k,
                    alpha_value.ctypes.data,
                    first, data_type, plan.b.ld,
                    second, data_type, plan.a.ld,
                    beta_value.ctypes.data,
                    target, data_type, plan.ldc,
                    compute_type, algo,
                )
            else:
                cublas.gemmStridedBatchedEx(
                    handle, plan.b.op, plan.a.op, plan.n, plan.m, plan.k,
                    alpha_value.ctypes.data,
                    first, data_type, plan.b.ld, ib,
                    second, data_type, plan.a.ld, ia,
                    beta_value.ctypes.data,
                    target, data_type, plan.ldc, ic,
                    plan.inner_count, compute_type, algo,
                )

    def _plan(self, a: Any, b: Any, out: Any) -> GemmPlan | None:
        if not (a.dtype == b.dtype == out.dtype):
            return None
        item = out.dtype.itemsize
        strides = [tuple(s // item for s in x.strides) for x in (a, b, out)]
        if any(s % item for x in (a, b, out) for s in x.strides):
            return None
        return plan_gemm(a.shape, strides[0], b.shape, strides[1], out.shape, strides[2])

    def _fallback_matmul(self, a: Any, b: Any, out: Any, beta: float, scratch: Any, tf32: bool = False) -> None:
        """cupy.matmul for layouts cuBLAS cannot take as they stand, with fp32 products on the declared path.

        CuPy picks the compute type of fp32 products from process-wide state
        (first set from CUPY_TF32): it is set here for the call — TF32 exactly
        when declared, plain fp32 otherwise — and put back afterwards, so a
        record's path matches what ran whatever the environment says.
        """
        from cupy._core import _routines_linalg as linalg

        cupy = self._cupy
        wanted = linalg.COMPUTE_TYPE_TF32 if tf32 else linalg.COMPUTE_TYPE_DEFAULT
        previous = linalg.get_compute_type(cupy.float32)
        linalg.set_compute_type(cupy.float32, wanted)
        try:
            if beta == 0:
                cupy.matmul(a, b, out=out)
                return
            if scratch is None:
                raise MeasurementError("internal: β ≠ 0 needs a scratch array for cupy.matmul")
            cupy.matmul(a, b, out=scratch)
            cupy.multiply(out, beta, out=out)
            cupy.add(out, scratch, out=out)
        finally:
            linalg.set_compute_type(cupy.float32, previous)

    def matmul_scratch_needed(self, beta: float) -> bool:
        return False

    def matmul_algorithm(self, dtype_name: str, beta: float = 0.0) -> str:
        compute = {
            "fp16": "CUBLAS_COMPUTE_32F, fp16 operands",
            "bf16": "CUBLAS_COMPUTE_32F, bf16 operands",
            "tf32": "CUBLAS_COMPUTE_32F_FAST_TF32",
            "fp32": "CUBLAS_COMPUTE_32F",
            "fp64": "CUBLAS_COMPUTE_64F",
        }.get(dtype_name, "")
        beta_text = f", β = {beta:g} applied by cuBLAS" if beta != 0 else ""
        return f"cublasGemmEx / cublasGemmStridedBatchedEx ({compute}{beta_text})"

    def executed_matrix_path(self, dtype_name: str) -> str:
        if dtype_name == "fp64":
            # Double-precision tensor cores exist on the data-centre parts (8.0 A100, 9.0 H100/H200, 10.0 B200).
            return "fp64_tc" if self.compute_capability in ("8.0", "9.0", "10.0") else "fp64"
        return {"fp16": "fp16_tc", "bf16": "bf16_tc", "tf32": "tf32_tc"}.get(dtype_name, "fp32")

    def translate(self, exc: BaseException) -> WorkbenchError | None:
        translated = super().translate(exc)
        if translated is not None:
            return translated
        module = type(exc).__module__ or ""
        if module.startswith(("cupy", "cupy_backends")):
            return MeasurementError(f"CUDA error during the run: {type(exc).__name__}: {exc}")
        return None


def _optional(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception:  # an older runtime lacks the call: the figure is simply unknown
        return None


def _cuda_version(value: Any) -> str:
    """12040 → '12.4' (CUDA encodes versions as 1000·major + 10·minor)."""
    if not isinstance(value, int) or value <= 0:
        return ""
    return f"{value // 1000}.{value % 1000 // 10}"


def _nvml_index_for_pci(pci_bus_id: str) -> int | None:
    """The NVML index of the GPU on a PCI bus id (domain included), or None without NVML or a match."""
    from workbench.devices.nvml import index_for_pci_bus_id

    return index_for_pci_bus_id(pci_bus_id)


def _nvml_uuid(index: int | None) -> str:
    """The UUID NVML reports for the GPU at an NVML index ('GPU-…'), or '' without NVML or an index."""
    if index is None:
        return ""
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return ""
    try:
        pynvml.nvmlInit()
    except Exception:
        return ""
    try:
        uuid = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(index))
        return uuid.decode() if isinstance(uuid, bytes) else str(uuid)
    except Exception:
        return ""
    finally:
        _optional(pynvml.nvmlShutdown)


def _nvml_driver_version() -> str:
    from workbench.devices.nvml import detect

    detection = detect()
    return detection.gpus[0].driver_version if detection.gpus else ""


# ============================================================================ choice


# The distribution that provides the `cupy` module, and the project extra that installs it with its CUDA libraries.
_CUPY_EXTRAS = {"cupy-cuda13x": "cuda13", "cupy-cuda12x": "cuda12"}

# What the probe runs on the GPU: one trivial kernel compiled with NVRTC.
_PROBE_KERNEL = r"""
extern "C" __global__ void workbench_probe(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i] + 1.0f;
}
"""
_PROBE_ELEMENTS = 1 << 18  # 1 MiB of fp32


def _one_line(exc: BaseException) -> str:
    """An exception as one line: its text with whitespace collapsed, or its type name."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _cupy_extra() -> str:
    """The extra (cuda12 / cuda13) that matches the installed CuPy wheel, else the driver's CUDA major version."""
    from importlib import metadata

    for distribution, extra in _CUPY_EXTRAS.items():
        try:
            metadata.version(distribution)
            return extra
        except metadata.PackageNotFoundError:
            continue
    from workbench.devices.nvml import detect

    detection = detect()
    major = detection.gpus[0].cuda_driver_version.split(".")[0] if detection.gpus else ""
    return "cuda12" if major == "12" else "cuda13" if major.isdigit() and int(major) >= 13 else ""


def _install_hint() -> str:
    extra = _cupy_extra()
    if extra:
        return f'pip install "perf-workbench[{extra}]"'
    return 'pip install "perf-workbench[cuda12]" (or [cuda13] for a CUDA 13 driver)'


def _missing_library(label: str, exc: BaseException) -> str:
    """'cuBLAS (libcublasLt.so.12 not found)' from a loader error, or the label and the error's first words."""
    import re

    text = _one_line(exc)
    found = re.search(r'(lib[A-Za-z0-9_]+\.so(?:\.[0-9]+)?)(?: or (lib[A-Za-z0-9_]+\.so(?:\.[0-9]+)?))?', text)
    if found:
        names = " or ".join(name for name in found.groups() if name)
        return f"{label} ({names} not found)"
    return f"{label} ({text[:120]})"


def probe_cuda_libraries() -> list[str]:
    """The CUDA libraries CuPy needs that cannot be loaded here: cuBLAS, cuRAND, NVRTC (empty when all load).

    CuPy loads them at run time; a wheel without its `ctk` extra on a machine
    without a CUDA toolkit has none of them, and then only the first GEMM or
    random fill would fail. Loading needs no GPU and no driver.
    """
    import importlib

    missing = []
    for label, module in (("cuBLAS", "cublas"), ("cuRAND", "curand")):
        try:
            # As CuPy itself does: the package's __getattr__ has cuda.pathfinder load the library (from the
            # toolkit wheels, conda or the system) before the binding that links to it is imported.
            # Importing the binding module by its full name would skip that and fail even when the wheels are there.
            getattr(importlib.import_module("cupy_backends.cuda.libs"), module)
        except Exception as exc:  # ImportError from the loader, or cuda.pathfinder's DynamicLibNotFoundError
            missing.append(_missing_library(label, exc))
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as exc:
        missing.append(_missing_library("NVRTC", exc))
    return missing


def _probe_cupy() -> BackendStatus:
    """Whether CuPy can measure here, proved by using it: libraries, driver, a compiled kernel, an allocation."""
    try:
        import cupy
    except ImportError as exc:
        if getattr(exc, "name", "") in ("cupy", "cupy_backends"):
            return BackendStatus("cupy", False, f"CuPy is not installed: {_install_hint()}")
        return BackendStatus("cupy", False, f"CuPy is installed but does not import ({_one_line(exc)}): {_install_hint()}")
    except Exception as exc:  # a broken install can raise anything on import
        return BackendStatus("cupy", False, f"CuPy is installed but does not import ({_one_line(exc)}): {_install_hint()}")

    runtime = cupy.cuda.runtime
    problems = []
    driver = _optional(runtime.driverGetVersion)
    if not driver:
        problems.append("no NVIDIA driver was found (libcuda.so.1 is not loaded)")
    missing = probe_cuda_libraries()
    if missing:
        problems.append(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    if problems:
        hint = f": {_install_hint()}" if missing else ""
        return BackendStatus("cupy", False, f"CuPy is installed but {' and '.join(problems)}{hint}")

    try:
        count = runtime.getDeviceCount()
    except Exception as exc:  # cudaErrorInsufficientDriver, cudaErrorNoDevice, ...
        if "NoDevice" in str(exc):
            hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
            where = f" (CUDA_VISIBLE_DEVICES={hidden!r})" if hidden is not None else ""
            return BackendStatus("cupy", False, f"CuPy is installed but CUDA sees no GPU{where}")
        needed = _cuda_version(_optional(runtime.runtimeGetVersion))
        return BackendStatus(
            "cupy",
            False,
            f"CuPy is installed but the driver cannot run it ({_one_line(exc)}; driver CUDA {_cuda_version(driver)}, "
            f"CuPy built for CUDA {needed})",
        )
    if count < 1:
        return BackendStatus("cupy", False, "CuPy is installed but the NVIDIA driver reports no GPU")

    step = "allocate 1 MiB on GPU 0"
    try:
        import numpy

        with cupy.cuda.Device(0):
            values = cupy.empty(_PROBE_ELEMENTS, dtype=cupy.float32)
            step = "compile a kernel with NVRTC"
            kernel = cupy.RawKernel(_PROBE_KERNEL, "workbench_probe")
            kernel.compile()
            step = "fill an array with cuRAND"
            values[...] = cupy.random.RandomState(1).random_sample(_PROBE_ELEMENTS, dtype=cupy.float32)
            expected = 2 * cupy.asnumpy(values) + 1
            step = "run the compiled kernel"
            kernel(((_PROBE_ELEMENTS + 255) // 256,), (256,), (values, numpy.int32(_PROBE_ELEMENTS)))
            step = "create a cuBLAS handle"
            cupy.cuda.device.get_cublas_handle()
            step = "copy the result back"
            if not numpy.allclose(cupy.asnumpy(values), expected):
                return BackendStatus("cupy", False, "CuPy is installed but the probe kernel on GPU 0 gave wrong results")
            del values
    except Exception as exc:
        return BackendStatus("cupy", False, f"CuPy is installed but could not {step} ({_one_line(exc)})")
    finally:
        _optional(cupy.get_default_memory_pool().free_all_blocks)
    return BackendStatus(
        "cupy", True, f"{count} CUDA device{'s' if count != 1 else ''} (driver CUDA {_cuda_version(driver)}, CuPy {cupy.__version__})"
    )


_cupy_status: BackendStatus | None = None


def backend_status(refresh: bool = False) -> list[BackendStatus]:
    """Every backend and whether it can run here (for a backend chooser, the CLI and the tests).

    CuPy counts as available only once it has been used: its CUDA libraries
    load, a driver and a GPU answer, a kernel compiles with NVRTC and runs on
    an array filled by cuRAND, and a cuBLAS handle is created. The answer is
    kept for the process (`refresh=True` asks again).
    """
    global _cupy_status
    if _cupy_status is None or refresh:
        _cupy_status = _probe_cupy()
    return [_cupy_status, BackendStatus("numpy", True, f"CPU: {host.cpu_model()}")]


def select_backend(name: str | Backend = "auto", device_index: int | None = None) -> Backend:
    """A backend by name: 'auto' picks CuPy when it sees a GPU, else NumPy."""
    if isinstance(name, Backend):
        return name
    choice = (name or "auto").strip().lower()
    if choice not in BACKEND_CHOICES:
        raise MeasurementError(f"unknown backend '{name}'; choose one of {', '.join(BACKEND_CHOICES)}")
    if choice == "numpy":
        return NumpyBackend()
    status = next(s for s in backend_status() if s.name == "cupy")
    if status.available:
        try:
            return CupyBackend(device_index)
        except Exception as exc:
            if choice == "cupy":
                raise BackendUnavailable(f"CuPy could not open the GPU: {exc}") from None
            return NumpyBackend()
    if choice == "cupy":
        raise BackendUnavailable(f"{status.message}; use --backend numpy to measure on the CPU")
    return NumpyBackend()

