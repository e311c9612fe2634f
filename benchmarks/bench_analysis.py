"""Benchmarks of the calculation core (a script, not a test): prints medians against the targets.

    python benchmarks/bench_analysis.py

- analyze() of the seed's worked example on an H100 SXM, every term      target ≤ 1 ms
  (compute, HBM, shared memory, host ↔ device with resident=host: N = 4 terms)
- the same with rates given as text                 target ≤ 0.1 ms (issue 11; parsed texts and
  declarations are cached, the derivation is built on first access)
- the derivation of one analysis (steps and notes), for scale: not a target
- beside it, PyTorch's FlopCounterMode counting one matmul of the same shape, where torch is installed
- a vectorised sweep over 100,000 GEMM shapes, every term's array         target ≤ 100 ms
- `workbench --version` from process start          target ≤ 0.3 s
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import numpy as np

from workbench.model.analysis import analyze, sweep
from workbench.model.devices import find_device

WORKED = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
WORKED_ON_HOST = "gemm(M=4096, N=4096, K=4096, dtype=fp16, resident=host)"  # adds the host ↔ device term


def median_seconds(fn, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    device = find_device("h100-sxm")
    analyze(WORKED_ON_HOST, device=device)  # warm the catalogue and caches
    terms = len(analyze(WORKED_ON_HOST, device=device).terms)
    analyze_s = median_seconds(lambda: analyze(WORKED_ON_HOST, device=device), 2000)
    analyze_text_s = median_seconds(lambda: analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s"), 2000)
    derivation_s = median_seconds(lambda: analyze(WORKED, device=device).derivation_text(), 300)

    rng = np.random.default_rng(0)
    shapes = {name: rng.integers(1, 2**14, size=100_000) for name in ("M", "N", "K")}
    swept = sweep(WORKED, shapes, device=device)
    assert [term.name for term in swept.terms] == ["compute", "hbm", "smem"], "the sweep gives every term"
    sweep_s = median_seconds(lambda: sweep(WORKED, shapes, device=device), 30)

    def version() -> None:
        subprocess.run([sys.executable, "-m", "workbench", "--version"], check=True, capture_output=True)

    version()
    version_s = median_seconds(version, 15)

    rows = [
        (f"analyze() worked example, {terms} terms", analyze_s, 1e-3),
        ("analyze() with rates given as text", analyze_text_s, 0.1e-3),
        ("sweep of 100,000 GEMM shapes", sweep_s, 100e-3),
        ("workbench --version, process start to exit", version_s, 0.3),
    ]
    flop_counter_s = _flop_counter_mode_seconds()
    print(f"{'benchmark':46s} {'median':>10s} {'target':>10s}  ratio")
    failed = False
    for name, value, target in rows:
        ratio = value / target
        failed |= ratio > 1
        print(f"{name:46s} {value * 1e3:8.3f} ms {target * 1e3:8.1f} ms  {ratio:5.2f}")
    print(f"{'derivation of one analysis (lazy; for scale)':46s} {derivation_s * 1e3:8.3f} ms")
    if flop_counter_s is None:
        print("torch FlopCounterMode on one matmul: torch is not installed here, not timed")
    else:
        print(f"{'torch FlopCounterMode, one 4096³ fp16 matmul':46s} {flop_counter_s * 1e3:8.3f} ms "
              f"(analyze with text rates is {analyze_text_s / flop_counter_s:.2f}× that)")
    return 1 if failed else 0


def _flop_counter_mode_seconds() -> float | None:
    """Median time of PyTorch's FlopCounterMode counting one matmul on meta tensors (FLOP only), or None."""
    try:
        import torch
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    a = torch.empty(4096, 4096, dtype=torch.float16, device="meta")
    b = torch.empty(4096, 4096, dtype=torch.float16, device="meta")

    def count() -> None:
        with FlopCounterMode(display=False) as counter:
            torch.matmul(a, b)
        counter.get_total_flops()

    count()
    return median_seconds(count, 500)


if __name__ == "__main__":
    sys.exit(main())
