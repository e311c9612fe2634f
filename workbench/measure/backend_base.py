"""What every array backend provides: arrays, timing, memory, GEMM dispatch, the conditions of a run.

`Backend` is the interface kernels are written against (`backend.xp` is numpy or cupy);
`workbench.measure.numpy_backend` and `workbench.measure.cupy_backend` implement it, and
`workbench.measure.backends` probes which can run here and picks one.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from workbench.errors import WorkbenchError
from workbench.measure.errors import MemoryRefused, UnsupportedMeasurement

# Storage types of the workbench dtypes that arrays can hold (tf32 is stored as fp32).
STORAGE_TYPES = {"fp64": "float64", "fp32": "float32", "tf32": "float32", "fp16": "float16", "bool": "bool"}

# Elements generated per step when filling inputs: bounded host/device memory, and a stop check per chunk.
FILL_CHUNK_CPU = 1 << 22
FILL_CHUNK_GPU = 1 << 25

TRITON_FLUSH_BYTES = 256_000_000  # triton.testing.do_bench clears a 256 MB buffer before each call


def fill_in_chunks(
    array: Any, chunk: int, draw: Callable[[int], Any], low: float, high: float, should_stop: Callable[[], bool]
) -> bool:
    """Fill `array` with uniform values in [low, high), `chunk` elements at a time from `draw(count)` (values in
    [0, 1)), asking `should_stop` between chunks: False when it stopped early, True when the array is full."""
    flat = array.reshape(-1)
    for start in range(0, flat.size, chunk):
        stop = min(start + chunk, flat.size)
        values = draw(stop - start)
        values *= high - low
        values += low
        flat[start:stop] = values
        if should_stop():
            return False
    return True


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

    def prepare_timing(self) -> None:
        """A run's timing begins (after its first call, before warm-up): forget what earlier runs taught the timer."""

    def iteration_overhead_s(self) -> float:
        """Untimed device time the timer adds to each timed iteration (sizes the batches between stop checks)."""
        return 0.0

    def timing_notes(self) -> list[str]:
        """What the timer did to the timed calls since `prepare_timing`, in words for the run record."""
        return []

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


def refuse_dtype(name: str, library: str, hint: str) -> UnsupportedMeasurement:
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
