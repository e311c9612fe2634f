"""benchmarks/bench_measure.py's GPU rows, run on the CPU against stand-ins for CuPy, cupyx and Triton.

The figures mean nothing here: the stand-in "GPU" is NumPy, its RawKernel and
ElementwiseKernel compute in NumPy, cupyx and do_bench time with perf_counter.
What this proves is that every GPU check runs to its rows (no ERROR), that the
diagnostic kernels compute the right thing (each passes the harness's reference
check, and a wrong one is an ERROR row), that the cupyx comparison times the
harness without the launch cover and the triton comparison with do_bench's own
counts. The real figures come from the gpu-marked smoke test and gpu_check.sh.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workbench.measure.backend_base import BackendStatus
from workbench.measure.numpy_backend import NumpyBackend

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_measure.py"


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_measure_rows", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_measure_rows"] = bench
    spec.loader.exec_module(bench)
    return bench


class Event:
    def record(self) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        pass


def _raw_kernel(wrong: bool) -> Any:
    class RawKernel:
        def __init__(self, source: str, name: str) -> None:
            assert name in source
            self.name = name

        def __call__(self, grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
            *arrays, n4 = args
            assert grid[0] * block[0] >= int(n4) * 1 and int(n4) * 4 == arrays[0].size
            if self.name == "workbench_copy_float4":
                np.copyto(arrays[1], arrays[0])
            elif self.name == "workbench_add_float4":
                np.add(arrays[0], arrays[1], out=arrays[2])
                if wrong:
                    arrays[2][::4] = arrays[0][::4]  # one lane of each float4 forgets b
            else:  # the launch cover (never queued: the stand-in is a NumpyBackend)
                raise AssertionError(self.name)

    return RawKernel


def stand_in_xp(wrong_add: bool = False) -> Any:
    xp = types.ModuleType("stand_in_cupy")
    xp.__dict__.update({name: getattr(np, name) for name in dir(np) if not name.startswith("__")})

    def elementwise_kernel(in_params: str, out_params: str, operation: str, name: str) -> Any:
        assert (in_params, out_params, operation) == ("T a", "T c", "c = a")
        return lambda a, c: np.copyto(c, a)

    xp.__version__ = np.__version__
    xp.ElementwiseKernel = elementwise_kernel  # type: ignore[attr-defined]
    xp.RawKernel = _raw_kernel(wrong_add)  # type: ignore[attr-defined]
    xp.cuda = types.SimpleNamespace(Event=Event, get_elapsed_time=lambda a, b: (b.at - a.at) * 1e3)  # type: ignore[attr-defined]
    return xp


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """CuPy, cupyx.profiler and triton.testing as stand-ins; what each was asked is recorded."""
    seen: dict[str, Any] = {"covers": [], "do_bench": [], "cupyx": []}

    class StandInCupy(NumpyBackend):
        name = "cupy"

        def __init__(self, device_index: int | None = None, *, cover_launch: bool = True, wrong_add: bool = False) -> None:
            super().__init__()
            self.xp = stand_in_xp(wrong_add)
            self.cover_launch = cover_launch

        def time_calls(self, call: Any, count: int, flush: Any, sync_each: bool) -> list[float]:
            seen["covers"].append(self.cover_launch)
            return super().time_calls(call, count, flush, sync_each)

    import workbench.measure as measure_package
    import workbench.measure.backends as backends

    gpu = StandInCupy()
    status = [BackendStatus("cupy", True, "stand-in"), BackendStatus("numpy", True, "CPU")]
    monkeypatch.setattr(measure_package, "backend_status", lambda refresh=False: status)
    monkeypatch.setattr(backends, "backend_status", lambda refresh=False: status)
    monkeypatch.setattr(backends, "select_backend", lambda name="auto", device_index=None: name if not isinstance(name, str) else gpu)
    monkeypatch.setattr(backends, "CupyBackend", StandInCupy)

    def benchmark(kernel: Any, n_repeat: int, n_warmup: int, name: str) -> Any:
        seen["cupyx"].append((name, n_repeat))
        times = []
        for _ in range(n_repeat):
            start = time.perf_counter()
            kernel()
            times.append(time.perf_counter() - start)
        return types.SimpleNamespace(gpu_times=[np.array(times)])

    def do_bench(call: Any, warmup: int, rep: int, return_mode: str) -> float:
        seen["do_bench"].append((warmup, rep, return_mode))
        times = []
        for _ in range(30):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return float(np.median(times)) * 1e3

    cupyx = types.ModuleType("cupyx")
    profiler = types.ModuleType("cupyx.profiler")
    profiler.benchmark = benchmark  # type: ignore[attr-defined]
    cupyx.profiler = profiler  # type: ignore[attr-defined]
    triton = types.ModuleType("triton")
    testing = types.ModuleType("triton.testing")
    testing.do_bench = do_bench  # type: ignore[attr-defined]
    triton.testing = testing  # type: ignore[attr-defined]
    for name, module in (("cupyx", cupyx), ("cupyx.profiler", profiler), ("triton", triton), ("triton.testing", testing)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(sys.modules, "torch", None)  # the torch row says SKIP
    seen["gpu"] = gpu
    seen["class"] = StandInCupy
    return seen


SMALL = "add(n=2**12, dtype=fp32)"


def run_quick(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The --quick GPU rows at CPU-friendly sizes (2^12 elements; the figures are not the point)."""
    bench = load_bench()
    bench.lab_rows = lambda backend, edge: iter(())  # the raw GEMM kernels have tests of their own
    bench.Sizes.choose = classmethod(lambda cls, quick: cls("copy(n=2**12, dtype=fp32)", (12,), 64, (SMALL,), lab_edge=64))
    bench.do_bench_counts = lambda *args: (7, 37)  # do_bench's counts (tested below): the harness must run as many
    path = tmp_path / "bench.json"
    assert bench.main(["--gpu-only", "--quick", "--json", str(path)]) == 0
    return {row["check"]: row for row in json.loads(path.read_text())["rows"]}


def test_every_gpu_row_runs_and_compares_like_with_like(tmp_path: Path, stand_ins: dict[str, Any]) -> None:
    rows = run_quick(tmp_path)
    errors = [row for row in rows.values() if row["verdict"] == "ERROR"]
    assert errors == []
    # The add against a copy from the same generated loop; the device copy and the diagnostics beside it as INFO.
    target = rows["vector add 2^12 fp32, cold, vs CuPy elementwise copy (same generated loop, 4-byte accesses)"]
    assert target["target"] == "≥ 90%" and target["ratio"] > 0
    assert rows["vector add 2^12 fp32, cold, vs device copy (cudaMemcpy)"]["verdict"] == "INFO"
    for label in ("elementwise copy", "float4 copy", "float4 add"):
        for mode in ("cold", "warm"):
            row = rows[f"diagnostic 2^12 fp32, {mode}: {label}"]  # each passed the harness's reference check
            assert row["verdict"] == "INFO" and row["ratio"] > 0 and "of the device copy" in row["measured"]
    assert rows["64³ fp16 GEMM, cold, vs torch.matmul (same protocol)"]["verdict"].startswith("SKIP")
    # cupyx: the harness timed without the launch cover, as cupyx times; the covered median beside it.
    compared = rows[f"warm median vs cupyx.profiler.benchmark (both with the launch in the events): {SMALL}"]
    assert compared["target"].startswith("±3%")
    covered = rows[f"warm median with the launch covered (the harness's figure): {SMALL}"]
    assert covered["verdict"] == "INFO" and "uncovered" in covered["measured"]
    assert stand_ins["covers"].count(False) == 1 and True in stand_ins["covers"]
    assert stand_ins["cupyx"] == [(SMALL, 50)]
    # triton: as many iterations and warm-up calls as do_bench gives itself, the clocks after each.
    compared = rows[f"cold median vs triton.testing.do_bench: {SMALL}"]
    assert stand_ins["do_bench"] == [(25, 100, "median")]
    assert "(do_bench's own counts)" in compared["measured"] and "after triton" in compared["measured"]
    assert "; 37 iterations after 7 warm-up calls each (do_bench's own counts)" in compared["measured"]
    short = rows[f"cold median, the harness's default 50 iterations: {SMALL}"]
    assert short["verdict"] == "INFO" and "vs triton" in short["measured"]


def test_do_bench_counts_follow_its_estimate() -> None:
    bench = load_bench()
    backend = types.SimpleNamespace(xp=stand_in_xp(), synchronize=lambda: None)
    calls: list[str] = []

    def kernel() -> None:
        calls.append("kernel")
        time.sleep(0.002)

    warmup, repeats = bench.do_bench_counts(backend, kernel, lambda: calls.append("flush"))
    assert calls == ["flush", "kernel"] * 5  # five flushed calls estimate one
    assert 1 <= warmup <= 12 and 4 <= repeats <= 50  # 25 ms and 100 ms of calls of about 2 ms


def test_a_wrong_float4_add_is_an_error_row(tmp_path: Path, stand_ins: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = stand_ins["class"](wrong_add=True)
    import workbench.measure.backends as backends

    monkeypatch.setattr(backends, "select_backend", lambda name="auto", device_index=None: name if not isinstance(name, str) else wrong)
    rows = run_quick(tmp_path)
    errors = {check: row["measured"] for check, row in rows.items() if row["verdict"] == "ERROR"}
    assert list(errors) == ["vector add 2^12 fp32 vs device copy"]
    assert "invalid: the reference check" in errors["vector add 2^12 fp32 vs device copy"]
