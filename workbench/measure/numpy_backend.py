"""NumPy on the host CPU, timed with `time.perf_counter_ns()` around each call."""

from __future__ import annotations

import os
import platform
import time
from typing import Any, Callable, Sequence

from workbench.model.devices import host
from workbench.measure.backend_base import (
    FILL_CHUNK_CPU,
    STORAGE_TYPES,
    Backend,
    fill_in_chunks,
    refuse_dtype,
)
from workbench.measure.errors import MeasurementError


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
        storage = STORAGE_TYPES.get(name)
        if storage is None:
            raise refuse_dtype(name, "NumPy", "measure it on a GPU (--backend cupy), or declare fp16/fp32/fp64")
        return self.xp.dtype(storage)

    def fill_uniform(self, array: Any, low: float, high: float, seed: int, should_stop: Callable[[], bool]) -> bool:
        np = self.xp
        rng = np.random.default_rng(seed)
        generated = np.float64 if array.dtype == np.float64 else np.float32
        return fill_in_chunks(array, FILL_CHUNK_CPU, lambda count: rng.random(count, dtype=generated), low, high, should_stop)

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
