"""benchmarks/bench_measure.py's lab-demo rows name the assumption each lab kernel misses, on the CPU.

The measurement is stood in: each "measured" record is a real run record (NumPy's, of a small GEMM) given the
lab declaration, an H200's provenance and the first H200 run's median for that kernel (issue 28: naive
41.29 ms, tiled 64×64×16 7.515 ms, tiled 128×128×8 7.816 ms, cuBLAS 2.677 ms). What this proves is that the
rows reach the sentence through the run figures (the window's and CLI's path), so a GPU session prints them.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from workbench.model.devices.catalogue import catalogue
from workbench.model.implementations import physical_work
from workbench.measure import measure as real_measure
from workbench.measure.record import RunRecord

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_measure.py"
FIRST_H200_RUN = {"impl=naive": 41.29e-3, "tile_m=64": 7.515e-3, "tile_m=128": 7.816e-3, "impl=compulsory": 2.677e-3}


def load_bench() -> Any:
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("bench_measure_lab_rows", SCRIPT)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_measure_lab_rows"] = bench
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture
def stood_in(monkeypatch: pytest.MonkeyPatch) -> None:
    import workbench.measure as measure_package
    import workbench.measure.kernels as kernels

    template = real_measure("gemm(M=64, N=64, K=64, dtype=fp32)", backend="numpy", iterations=30, warmup=1).to_dict()
    h200 = catalogue()["h200-sxm"]

    def measure(declaration: str, **options: Any) -> Any:
        median = next(time for key, time in FIRST_H200_RUN.items() if key in declaration)
        data = {**template, "declaration": declaration, "backend": "cupy", "device": "GPU 0: NVIDIA H200",
                "samples_s": [median] * 30,
                "provenance": {**template["provenance"], "kind": "gpu", "name": "NVIDIA H200", "catalogue_key": "h200-sxm",
                               "matched_by": "name"}}
        return RunRecord.from_dict(data)

    def kernel_for(declaration: Any, backend: Any) -> Any:
        return types.SimpleNamespace(predicted=physical_work(declaration, declaration.workload(), h200))

    monkeypatch.setattr(measure_package, "measure", measure)
    monkeypatch.setattr(kernels, "kernel_for", kernel_for)


def test_each_lab_kernel_row_says_what_it_misses(stood_in: None) -> None:
    rows = {row.check: row.measured for row in load_bench().lab_rows(backend=None, edge=4096)}
    naive = rows["lab demo 4096³ fp32, cold: naive"]
    # 132 SMs × 16,384 B ÷ (549,822,922,752 B ÷ 41.29 ms) = 162.4 ns (tests/test_little_lab.py has the arithmetic)
    assert "short of the bound: naive GEMM" in naive and "= 162.4 ns a load" in naive
    assert "short of the bound: tiled GEMM" in rows["lab demo 4096³ fp32, cold: tiled 64×64×16"]
    assert "659.1 ns for each of the 8,192 k steps" in rows["lab demo 4096³ fp32, cold: tiled 64×64×16"]
    # 128 × 128 tiles: 1,024 tiles over 132 slots = 8 waves × 4,096/8 = 512 k steps = 4,096 in turn;
    # (7.816 − 2.1154) ms ÷ 4,096 = 1.392 µs
    assert "1.392 µs for each of the 4,096 k steps" in rows["lab demo 4096³ fp32, cold: tiled 128×128×8"]
    # cuBLAS: the model knows no launch to read backwards
    assert "short of the bound" not in rows["lab demo 4096³ fp32, cold: cuBLAS"]
