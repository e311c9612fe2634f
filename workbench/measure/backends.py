"""Array backends: which can run here, and the one a run uses (NumPy on the CPU, CuPy on an NVIDIA GPU).

The interface is `workbench.measure.backend_base.Backend`; the two
implementations are `numpy_backend.NumpyBackend` and `cupy_backend.CupyBackend`
(with the cuBLAS call planned in `cublas_plan` and the GPU's facts read in
`gpu_facts`). This module probes them and picks one, and re-exports the names
the rest of the measurement layer imports from here.

Timing follows two references. NumPy: `time.perf_counter_ns()` around each
call. CuPy: CUDA events recorded on the current stream around each call and
read with `cupy.cuda.get_elapsed_time` (milliseconds, converted to seconds).
In warm mode every iteration is synchronised before the next starts, as
`cupyx.profiler.benchmark` does; in cold mode a flush buffer is written
before each iteration and the host does not wait between iterations, as
`triton.testing.do_bench` does. Unlike either tool, each start event is
queued behind a short device-side delay that keeps the stream busy while the
host queues the call (`launch_cover`): without it an idle stream stamps the
start event at once and the sample includes the host's launch time, which
for a small kernel is as long as the kernel.

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

from workbench.model.devices import host
from workbench.measure import cupy_install
from workbench.measure.backend_base import TRITON_FLUSH_BYTES, Backend, BackendStatus
from workbench.measure.cublas_plan import GemmPlan, plan_gemm
from workbench.measure.cupy_backend import CupyBackend
from workbench.measure.errors import BackendUnavailable, MeasurementError, one_line
from workbench.measure.gpu_facts import cuda_version_text, optional_figure
from workbench.measure.numpy_backend import NumpyBackend

__all__ = [
    "BACKEND_CHOICES",
    "Backend",
    "BackendStatus",
    "CupyBackend",
    "GemmPlan",
    "NumpyBackend",
    "TRITON_FLUSH_BYTES",
    "backend_status",
    "plan_gemm",
    "probe_cuda_libraries",
    "select_backend",
]

BACKEND_CHOICES = ("auto", "cupy", "numpy")


# What the probe runs on the GPU: one trivial kernel compiled with NVRTC.
_PROBE_KERNEL = r"""
extern "C" __global__ void workbench_probe(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i] + 1.0f;
}
"""
_PROBE_ELEMENTS = 1 << 18  # 1 MiB of fp32


def _missing_library(label: str, exc: BaseException) -> str:
    """'cuBLAS (libcublasLt.so.12 not found)' from a loader error, or the label and the error's first words."""
    import re

    text = one_line(exc)
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
            return BackendStatus("cupy", False, f"CuPy is not installed: {cupy_install.install_hint()}")
        return BackendStatus("cupy", False, f"CuPy is installed but does not import ({one_line(exc)}): {cupy_install.install_hint()}")
    except Exception as exc:  # a broken install can raise anything on import
        return BackendStatus("cupy", False, f"CuPy is installed but does not import ({one_line(exc)}): {cupy_install.install_hint()}")

    runtime = cupy.cuda.runtime
    problems = []
    driver = optional_figure(runtime.driverGetVersion)
    if not driver:
        problems.append("no NVIDIA driver was found (libcuda.so.1 is not loaded)")
    missing = probe_cuda_libraries()
    if missing:
        problems.append(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    if problems:
        hint = f": {cupy_install.install_hint()}" if missing else ""
        return BackendStatus("cupy", False, f"CuPy is installed but {' and '.join(problems)}{hint}")

    try:
        count = runtime.getDeviceCount()
    except Exception as exc:  # cudaErrorInsufficientDriver, cudaErrorNoDevice, ...
        if "NoDevice" in str(exc):
            hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
            where = f" (CUDA_VISIBLE_DEVICES={hidden!r})" if hidden is not None else ""
            return BackendStatus("cupy", False, f"CuPy is installed but CUDA sees no GPU{where}")
        needed = cuda_version_text(optional_figure(runtime.runtimeGetVersion))
        return BackendStatus(
            "cupy",
            False,
            f"CuPy is installed but the driver cannot run it ({one_line(exc)}; driver CUDA {cuda_version_text(driver)}, "
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
        return BackendStatus("cupy", False, f"CuPy is installed but could not {step} ({one_line(exc)})")
    finally:
        optional_figure(cupy.get_default_memory_pool().free_all_blocks)
    return BackendStatus(
        "cupy", True, f"{count} CUDA device{'s' if count != 1 else ''} (driver CUDA {cuda_version_text(driver)}, CuPy {cupy.__version__})"
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
