"""benchmarks/bench_measure.py keeps what it measured when a check fails, and calls cupyx correctly.

The GPU comparisons themselves need a GPU (the gpu-marked smoke test in
test_measure_gpu.py runs the script there); what is checked here is the
bookkeeping that decides whether a crash in one reference loses the others.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_measure.py"


@pytest.fixture(scope="module")
def bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_measure", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_measure"] = module
    spec.loader.exec_module(module)
    return module


def test_a_failing_check_is_an_error_row_and_the_rest_are_kept(bench: Any, tmp_path: Path) -> None:
    path = tmp_path / "results" / "bench.json"
    report = bench.Report(path)
    seen_on_disk: list[list[str]] = []

    def first() -> Iterator[Any]:
        yield bench.Row("first", "1 GB/s", "–", bench.INFO)

    def broken() -> Iterator[Any]:
        seen_on_disk.append([row["check"] for row in json.loads(path.read_text())["rows"]])
        yield bench.Row("partial", "2 GB/s", "–", bench.INFO)
        raise AttributeError("'AddKernel' object has no attribute '__name__'")

    def last() -> Iterator[Any]:
        yield bench.Row("last", "3 GB/s", "≥ 90%", bench.PASS, 0.95)

    report.run("first", "–", first)
    report.run("torch reference", "≥ 95%", broken)
    report.run("last", "≥ 90%", last)
    assert seen_on_disk == [["first"]]  # rows are on disk as they complete, before a later check runs
    data = json.loads(path.read_text())
    assert data["complete"] is False
    assert [(r["check"], r["verdict"]) for r in data["rows"]] == [
        ("first", "INFO"), ("partial", "INFO"), ("torch reference", "ERROR"), ("last", "PASS")
    ]
    assert "AttributeError: 'AddKernel' object has no attribute '__name__'" == data["rows"][2]["measured"]
    report.write(complete=True)
    assert json.loads(path.read_text())["complete"] is True


def test_main_writes_the_table_and_json_when_a_check_raises(bench: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    def crashing_cpu_rows(rounds: int) -> Iterator[Any]:
        raise SystemExit("add(n=2**24, dtype=fp32) (warm) was not valid: invalid")
        yield  # pragma: no cover

    monkeypatch.setattr(bench, "cpu_rows", crashing_cpu_rows)
    path = tmp_path / "bench.json"
    assert bench.main(["--cpu-only", "--json", str(path), "--note", "gpu tests: 5 passed"]) == 0
    out = capsys.readouterr().out
    assert "check" in out and "ERROR" in out.split("\n\n")[-1]  # the closing table has the row
    data = json.loads(path.read_text())
    assert data["complete"] is True and data["notes"] == ["gpu tests: 5 passed"]
    assert data["rows"][0]["verdict"] == "ERROR" and "was not valid" in data["rows"][0]["measured"]
    assert bench.main(["--cpu-only", "--json", str(path), "--strict"]) == 1


def test_cupyx_benchmark_is_given_a_name_for_a_kernel_object(bench: Any) -> None:
    class Kernel:  # like the measured kernels: callable, no __name__
        calls = 0

        def __call__(self) -> None:
            Kernel.calls += 1

    def benchmark(func: Any, args: tuple = (), kwargs: dict = {}, n_repeat: int = 10000, *,  # noqa: B006
                  name: str | None = None, n_warmup: int = 10) -> Any:
        if name is None:  # what cupyx.profiler.benchmark does
            name = func.__name__
        assert isinstance(name, str)
        for _ in range(n_warmup + n_repeat):
            func(*args, **kwargs)
        import numpy as np

        return type("Result", (), {"name": name, "gpu_times": np.array([[1e-3, 2e-3, 4e-3]])})()

    kernel = Kernel()
    assert not hasattr(kernel, "__name__")
    median = bench.cupyx_median(benchmark, kernel, "add(n=2**26, dtype=fp32)", 3)
    assert math.isclose(median, 2e-3) and Kernel.calls == 13
