"""backend_status() proves CuPy usable before calling it available, checked on the CPU with a stand-in CuPy.

The stand-in answers like CuPy 14 on the machines the issue describes: a
wheel without its CUDA libraries (the loader's own ImportError and
DynamicLibNotFoundError texts), no driver (cudaDriverGetVersion answers 0),
NVRTC that cannot compile, a GPU whose allocation fails. Each must be one
clear line and "not available" — in backend_status, from `workbench measure`
(exit code 2) — never a traceback.
"""

from __future__ import annotations

import importlib.abc
import sys
import types
from typing import Any

import numpy as np
import pytest

from workbench.cli import main
from workbench.measure import backends, cupy_install
from workbench.measure.backends import backend_status, select_backend
from workbench.measure.errors import BackendUnavailable

CUBLAS_MISSING = 'Failure finding "libcublasLt.so.13 or libcublasLt.so.12": No such file: libcublasLt.so.13 or libcublasLt.so.12'
CURAND_MISSING = "libcurand.so.10: cannot open shared object file: No such file or directory"
NVRTC_MISSING = 'Failure finding "libnvrtc.so.13 or libnvrtc.so.12": No such file: libnvrtc.so.13 or libnvrtc.so.12'


class DynamicLibNotFoundError(RuntimeError):
    """As cuda.pathfinder raises it when NVRTC is not found."""


class BindingsWithoutPreload(importlib.abc.MetaPathFinder):
    """Importing `cupy_backends.cuda.libs.<name>` by its full name skips CuPy's preload and fails, as in CuPy 14.

    CuPy loads cuBLAS and cuRAND through the package's __getattr__ (cuda.pathfinder first, then the
    binding); the binding module imported directly fails on its linked library even when the toolkit
    wheels are installed.
    """

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        name = fullname.rsplit(".", 1)[-1]
        if fullname.startswith("cupy_backends.cuda.libs.") and name in ("cublas", "curand"):
            raise ImportError(f"lib{name}.so: cannot open shared object file: No such file or directory")
        return None


class StandInCupy:
    """What the probe touches of CuPy, on NumPy, with one fault switched on at a time."""

    def __init__(self, driver: int = 12040, devices: int = 1, compile_error: str = "", alloc_error: str = "") -> None:
        self.driver, self.devices = driver, devices
        self.compile_error, self.alloc_error = compile_error, alloc_error
        self.pool_freed = 0

    def module(self) -> types.ModuleType:
        stand_in = self
        cupy = types.ModuleType("cupy")
        cupy.__version__ = "14.2.0"  # type: ignore[attr-defined]
        cupy.float32 = np.float32  # type: ignore[attr-defined]

        class Device:
            def __init__(self, index: int = 0) -> None:
                self.id = index

            def __enter__(self) -> "Device":
                return self

            def __exit__(self, *exc: object) -> None:
                return None

        def get_device_count() -> int:
            if stand_in.devices == -2:
                raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
            if stand_in.devices < 0:
                raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")
            return stand_in.devices

        runtime = types.SimpleNamespace(
            driverGetVersion=lambda: stand_in.driver, runtimeGetVersion=lambda: 12090, getDeviceCount=get_device_count
        )
        cupy.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
            runtime=runtime, Device=Device, is_available=lambda: stand_in.devices > 0,
            device=types.SimpleNamespace(get_cublas_handle=lambda: 1),
        )

        def empty(n: int, dtype: Any) -> np.ndarray:
            if stand_in.alloc_error:
                raise MemoryError(stand_in.alloc_error)
            return np.empty(n, dtype=dtype)

        class RawKernel:
            def __init__(self, code: str, name: str) -> None:
                assert name in code

            def compile(self) -> None:
                if stand_in.compile_error:
                    raise RuntimeError(stand_in.compile_error)

            def __call__(self, grid: Any, block: Any, arguments: tuple[Any, ...]) -> None:
                values, count = arguments
                values[: int(count)] = 2 * values[: int(count)] + 1

        class RandomState:
            def __init__(self, seed: int) -> None:
                self.rng = np.random.default_rng(seed)

            def random_sample(self, size: int, dtype: Any) -> np.ndarray:
                return self.rng.random(size, dtype=dtype)

        class Pool:
            def free_all_blocks(self) -> None:
                stand_in.pool_freed += 1

        cupy.empty = empty  # type: ignore[attr-defined]
        cupy.RawKernel = RawKernel  # type: ignore[attr-defined]
        cupy.random = types.SimpleNamespace(RandomState=RandomState)  # type: ignore[attr-defined]
        cupy.asnumpy = lambda array: np.array(array)  # type: ignore[attr-defined]
        cupy.get_default_memory_pool = lambda: Pool()  # type: ignore[attr-defined]
        return cupy


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Install a stand-in CuPy (and which CUDA libraries fail to load); the probe's cached answer is dropped after."""
    monkeypatch.setattr(backends, "_cupy_status", None)
    monkeypatch.setattr(cupy_install, "cupy_extra", lambda: "cuda12")

    def put(cupy: StandInCupy, missing: dict[str, str] | None = None, nvrtc_error: str = "") -> StandInCupy:
        missing = dict(missing or {})
        packages = {name: types.ModuleType(name) for name in ("cupy_backends", "cupy_backends.cuda", "cupy_backends.cuda.libs")}
        for name, module in packages.items():
            module.__path__ = []  # type: ignore[attr-defined]
            monkeypatch.setitem(sys.modules, name, module)
        libs = packages["cupy_backends.cuda.libs"]

        def load(name: str) -> types.ModuleType:  # CuPy's lazy loader: pathfinder, then the binding
            if name in missing:
                raise ImportError(missing[name])
            if name in ("cublas", "curand"):
                return types.ModuleType(name)
            raise AttributeError(name)

        libs.__getattr__ = load  # type: ignore[attr-defined]
        for name in ("cublas", "curand"):
            monkeypatch.delitem(sys.modules, f"cupy_backends.cuda.libs.{name}", raising=False)
        nvrtc = types.ModuleType("cupy_backends.cuda.libs.nvrtc")

        def get_version() -> tuple[int, int]:
            if nvrtc_error:
                raise DynamicLibNotFoundError(nvrtc_error + "\n")
            return (12, 9)

        nvrtc.getVersion = get_version  # type: ignore[attr-defined]
        packages["cupy_backends.cuda.libs"].nvrtc = nvrtc  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "cupy_backends.cuda.libs.nvrtc", nvrtc)
        monkeypatch.setitem(sys.modules, "cupy", cupy.module())
        monkeypatch.setattr(sys, "meta_path", [BindingsWithoutPreload(), *sys.meta_path])
        return cupy

    return put


def cupy_status() -> backends.BackendStatus:
    return next(status for status in backend_status(refresh=True) if status.name == "cupy")


def test_a_wheel_without_its_cuda_libraries_is_not_available_and_says_what_to_install(install) -> None:  # type: ignore[no-untyped-def]
    install(StandInCupy(), missing={"cublas": CUBLAS_MISSING, "curand": CURAND_MISSING}, nvrtc_error=NVRTC_MISSING)
    status = cupy_status()
    assert not status.available
    assert "\n" not in status.message
    for fragment in ("cuBLAS (libcublasLt.so.13 or libcublasLt.so.12 not found)", "cuRAND (libcurand.so.10 not found)",
                     "NVRTC (libnvrtc.so.13 or libnvrtc.so.12 not found)", 'pip install "perf-workbench[cuda12]"'):
        assert fragment in status.message
    assert "driver" not in status.message  # the driver is there: only the libraries are named


def test_one_missing_library_is_enough_to_refuse(install) -> None:  # type: ignore[no-untyped-def]
    install(StandInCupy(), nvrtc_error=NVRTC_MISSING)
    status = cupy_status()
    assert not status.available and status.message.startswith("CuPy is installed but NVRTC (libnvrtc.so")
    assert "cuBLAS" not in status.message


def test_no_driver_is_named(install) -> None:  # type: ignore[no-untyped-def]
    install(StandInCupy(driver=0, devices=0))
    status = cupy_status()
    assert not status.available and status.message == "CuPy is installed but no NVIDIA driver was found (libcuda.so.1 is not loaded)"


@pytest.mark.parametrize(
    "cupy, fragment",
    [
        (StandInCupy(devices=0), "the NVIDIA driver reports no GPU"),
        (StandInCupy(devices=-1), "the driver cannot run it (cudaErrorInsufficientDriver"),
        (StandInCupy(devices=-2), "CuPy is installed but CUDA sees no GPU"),
        (StandInCupy(compile_error="nvrtc: error: invalid value for --gpu-architecture"), "could not compile a kernel with NVRTC (nvrtc: error"),
        (StandInCupy(alloc_error="Out of memory allocating 1,048,576 bytes"), "could not allocate 1 MiB on GPU 0 (Out of memory"),
    ],
)
def test_a_gpu_that_cannot_compile_allocate_or_answer_is_not_available(install, cupy: StandInCupy, fragment: str) -> None:  # type: ignore[no-untyped-def]
    install(cupy)
    status = cupy_status()
    assert not status.available and fragment in status.message and "\n" not in status.message


def test_a_working_cupy_is_available_after_the_probe_ran_on_the_gpu(install) -> None:  # type: ignore[no-untyped-def]
    cupy = install(StandInCupy())
    status = cupy_status()
    assert status.available, status.message
    assert status.message == "1 CUDA device (driver CUDA 12.4, CuPy 14.2.0)"
    assert cupy.pool_freed == 1  # the probe gives its memory back


def test_the_answer_is_kept_until_asked_again(install) -> None:  # type: ignore[no-untyped-def]
    cupy = install(StandInCupy())
    assert cupy_status().available
    cupy.compile_error = "broken since"
    assert next(s for s in backend_status() if s.name == "cupy").available
    assert not cupy_status().available


def test_select_and_the_cli_refuse_in_one_line_with_exit_code_2(install, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    install(StandInCupy(driver=0, devices=0), missing={"cublas": CUBLAS_MISSING, "curand": CURAND_MISSING}, nvrtc_error=NVRTC_MISSING)
    with pytest.raises(BackendUnavailable, match="no NVIDIA driver"):
        select_backend("cupy")
    assert select_backend("auto").name == "numpy"
    assert main(["measure", "add(n=2**20, dtype=fp32)", "--backend", "cupy"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no NVIDIA driver" in err and "libcublasLt.so.12" in err and "perf-workbench[cuda12]" in err


def test_without_cupy_the_hint_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "_cupy_status", None)
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    monkeypatch.setattr(cupy_install, "cupy_extra", lambda: "cuda13")
    status = cupy_status()
    assert not status.available and status.message == 'CuPy is not installed: pip install "perf-workbench[cuda13]"'
