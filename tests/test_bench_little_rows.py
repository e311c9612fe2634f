"""benchmarks/bench_little.py's rows, run on the CPU with the measurements stood in.

The figures mean nothing: every "measured" median is the model's own bound × 1.05, so each
Little's-law row is 5 % off and passes, the vectorized add is judged against the stood-in device copy,
and the wave sweep must find its boundary. What this proves is that every row runs to the end (no
ERROR) on an H200's description, so the next GPU session spends its minutes measuring, not debugging.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from workbench.model.analysis import analyze
from workbench.model.devices.catalogue import catalogue
from workbench.measure.backend_base import BackendStatus
from workbench.measure.latency import LatencyReading

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_little.py"


def load_bench() -> Any:
    sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("bench_little_rows", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_little_rows"] = bench
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture
def stood_in(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import workbench.measure as measure_package
    import workbench.measure.backends as backends
    import workbench.measure.latency as latency

    asked: list[str] = []
    h200 = catalogue()["h200-sxm"]
    gpu = types.SimpleNamespace(device_name="NVIDIA H200", _props={"multiProcessorCount": 132},
                                describe=lambda: "GPU 0: NVIDIA H200 (stand-in)")

    def measure(declaration: str, **options: Any) -> Any:
        asked.append(declaration)
        return types.SimpleNamespace(valid=True, median_s=analyze(declaration, h200).bound_time * 1.05, message="")

    monkeypatch.setattr(measure_package, "measure", measure)
    monkeypatch.setattr(backends, "backend_status", lambda refresh=False: [BackendStatus("cupy", True, "stand-in")])
    monkeypatch.setattr(backends, "select_backend", lambda name="auto", device_index=None: gpu)
    monkeypatch.setattr(latency, "measure_idle_latency", lambda backend: LatencyReading("idle", 0.6e-6, "stand-in chase"))
    monkeypatch.setattr(latency, "measure_loaded_latency", lambda backend, device, **o: LatencyReading("loaded", 1.3e-6, "stand-in copy"))
    return asked


def test_every_row_runs(tmp_path: Path, stood_in: list[str]) -> None:
    path = tmp_path / "little.json"
    assert load_bench().main(["--json", str(path)]) == 0
    rows = {row["check"]: row for row in json.loads(path.read_text())["rows"]}
    assert [row for row in rows.values() if row["verdict"] == "ERROR"] == []
    # the vectorized add judged against the device copy of the same run, the library add reported beside it
    judged = rows["add(n=2**26, dtype=fp32, impl=vectorized), cold, vs the device copy of this run"]
    assert judged["target"] == "≥ 90%" and judged["verdict"] == "PASS"
    assert rows["add(n=2**26, dtype=fp32, impl=library), cold, vs the device copy of this run"]["verdict"] == "INFO"
    # Little's law for the four kernels, each 5 % from its prediction (the stand-in), with the catalogue's latency
    little = [row for check, row in rows.items() if check.startswith("Little's law:") and "reduce(" not in check]
    assert len(little) == 4 and all(row["verdict"] == "PASS" and "(latency: catalogue)" in row["check"] for row in little)
    # the library's row sums: fp32 at the memory's rate, fp16 (summed in fp32) under its lowered roof
    sums = {check: row for check, row in rows.items() if check.startswith("Little's law: reduce(")}
    assert [row["verdict"] for row in sums.values()] == ["PASS", "PASS"]
    assert "(the memory's rate)" in sums["Little's law: reduce(rows=8192, n=8192, dtype=fp32, impl=library)"]["measured"]
    assert "(loads in flight)" in sums["Little's law: reduce(rows=8192, n=8192, dtype=fp16, impl=library)"]["measured"]
    assert all(row["ratio"] == pytest.approx(1 / 1.05 - 1) for row in [*little, *sums.values()])
    # waves: without the driver's occupancy, one CTA an SM: 132 slots; 33 tile rows × 3…6 columns = 99…198 tiles
    waves = [check for check in rows if check.startswith("waves: tiled GEMM")]
    assert len(waves) == 4 and "no kernel to ask" in waves[0] and "1 CTA per SM assumed" in waves[0]
    step = next(row for check, row in rows.items() if check.startswith("waves: the step"))
    assert "from 132 to 165 tiles (1 → 2 waves)" in step["check"] and step["verdict"] == "PASS"
    assert any("impl=tiled" in text for text in stood_in)
