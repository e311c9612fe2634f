"""Benchmark of reading a session's runs (a script, not a test): prints medians against the targets.

    python benchmarks/bench_runs.py

The Measurement table and both plots ask for every run's figures on each
refresh, so reading them must stay well inside a frame:

- 100 stored runs (50 samples each, 10 declarations), first read: parse, analyse, figure   target ≤ 200 ms
- the same 100 runs again, as every refresh does (each dict parsed once, figures kept)      target ≤ 5 ms
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace

from workbench.model.devices import find_device
from workbench.model.devices.provenance import STATED_BY_OS, DeviceProvenance
from workbench.measure.record import BoundInfo, KernelInfo, RunRecord
from workbench.measure.runs import FigureContext, _analyses, _figured, _parsed, all_run_figures

RUNS = 100
SAMPLES = 50


def stored_runs() -> list[dict[str, object]]:
    """100 version-2 run records of vector adds at ten sizes, as a session stores them."""
    template = RunRecord(
        id="", created="2026-01-01T00:00:00+00:00", declaration="", operation="add", params={}, backend="numpy",
        device="CPU: bench", mode="warm", iterations=SAMPLES, warmup_calls=2, first_call_s=None, status="ok",
        message="", notes=(), samples_s=(), convention="fma2", flop=0, bytes=0,
        kernel=KernelInfo("stream", "numpy.add", "fp32", 0, ""), check=None, bound=None, timer="perf_counter_ns",
        provenance=DeviceProvenance(kind="cpu", name="bench CPU", catalogue_key="cpu-generic", stated_by=STATED_BY_OS),
    )
    runs = []
    for index in range(RUNS):
        n = 2 ** (16 + index % 10)
        samples = tuple(n * 4e-11 * (1 + (i % 7) / 50) for i in range(SAMPLES))
        record = replace(template, id=f"r{index}", declaration=f"add(n={n}, dtype=fp32)", samples_s=samples)
        runs.append(record.to_dict())
    return runs


def median_seconds(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    context = FigureContext(session_device=find_device("h100-sxm"))
    all_run_figures(stored_runs()[:1], context)  # the catalogue and the unit registry loaded once

    def first_read() -> None:
        _parsed.clear()
        _analyses.clear()
        _figured.clear()
        all_run_figures(stored_runs_fresh, context)

    stored_runs_fresh = stored_runs()
    first = median_seconds(first_read, 15)
    again = median_seconds(lambda: all_run_figures(stored_runs_fresh, context), 50)
    rows = [
        (f"{RUNS} runs, first read (parse, analyse, figure)", first, 0.200),
        (f"{RUNS} runs, read again (a refresh)", again, 0.005),
    ]
    ok = True
    for label, seconds, target in rows:
        verdict = "ok" if seconds <= target else "SLOW"
        ok &= seconds <= target
        print(f"{label:50s} median {seconds * 1e3:8.2f} ms   target ≤ {target * 1e3:.0f} ms   {verdict}")
    print(f"ratio first / again: {first / again:.1f}×")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
