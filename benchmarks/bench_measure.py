"""How faithful is the measurement harness? Its figures against bare loops and other timing tools.

CPU (always): the harness's achieved GB/s for add(n=2**24, dtype=fp32) against
a bare `np.add(a, b, out=c)` loop timed with perf_counter_ns in the same
process (target ≥ 95 %, reported as the ratio of medians over alternating
rounds).

GPU (when CuPy sees one): vector add of 2^24 and 2^28 fp32 against the same
run's device-copy bandwidth (≥ 90 %); a 4096³ fp16 GEMM against torch.matmul
timed with the same cold protocol (≥ 95 %, needs PyTorch); the warm-mode
median against cupyx.profiler.benchmark and the cold-mode median against
triton.testing.do_bench (within 3 % for kernels over 50 µs, needs Triton).
What is not installed is skipped and said so.

    PYTHONPATH=. python benchmarks/bench_measure.py [--cpu-only] [--gpu-only] [--json FILE] [--strict]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.units import format_bandwidth, format_flop_rate, format_time  # noqa: E402

PASS, FAIL, SKIP, INFO = "PASS", "FAIL", "SKIP", "INFO"
ITERATIONS = 50
LONG_KERNEL_S = 50e-6  # tool agreement is judged only for kernels longer than this


@dataclass
class Row:
    """One line of the report: what was compared, the figures, the target and the verdict."""

    check: str
    measured: str
    target: str
    verdict: str
    ratio: float | None = None


def _verdict(ok: bool) -> str:
    return PASS if ok else FAIL


# ----------------------------------------------------------------------------- CPU


def _bare_add_samples(n: int, iterations: int, warmup: int) -> list[float]:
    """Seconds of each np.add(a, b, out=c) timed with perf_counter_ns, no harness in between."""
    import numpy as np

    rng = np.random.default_rng(1)
    a = rng.random(n, dtype=np.float32) * 2 - 1
    b = rng.random(n, dtype=np.float32) * 2 - 1
    c = np.empty_like(a)
    np.add(a, b, out=c)  # untimed first call
    for _ in range(warmup):
        np.add(a, b, out=c)
    clock = time.perf_counter_ns
    samples = []
    for _ in range(iterations):
        start = clock()
        np.add(a, b, out=c)
        samples.append((clock() - start) * 1e-9)
    return samples


def cpu_rows(rounds: int) -> list[Row]:
    """Harness and bare loop in alternating order (ABBA…), samples pooled: the ratio of the two medians."""
    from workbench.measure import measure

    n = 2**24
    moved = 3 * n * 4  # a and b read, c written
    harness: list[float] = []
    bare: list[float] = []
    per_round = []
    for index in range(rounds):
        def run_harness() -> list[float]:
            record = measure("add(n=2**24, dtype=fp32)", backend="numpy", iterations=ITERATIONS, device=None)
            assert record.valid, record.message
            return list(record.samples_s)

        if index % 2 == 0:
            ours, theirs = run_harness(), _bare_add_samples(n, ITERATIONS, warmup=10)
        else:
            theirs, ours = _bare_add_samples(n, ITERATIONS, warmup=10), run_harness()
        harness += ours
        bare += theirs
        per_round.append(statistics.median(theirs) / statistics.median(ours))
    ratio = statistics.median(bare) / statistics.median(harness)  # = harness GB/s / bare GB/s
    return [
        Row(
            "CPU add 2^24 fp32: harness vs bare np.add loop",
            f"{format_bandwidth(moved / statistics.median(harness))} vs {format_bandwidth(moved / statistics.median(bare))} "
            f"= {ratio:.1%} (ratio of pooled medians; per round {', '.join(f'{r:.0%}' for r in per_round)})",
            "≥ 95%",
            _verdict(ratio >= 0.95),
            ratio,
        )
    ]


# ----------------------------------------------------------------------------- GPU


def _torch_gemm_cold_median(n: int, iterations: int, flush_bytes: int) -> float:
    """torch.matmul of n³ fp16 timed like the harness's cold mode: flush, event, call, event."""
    import torch

    a = torch.rand(n, n, device="cuda", dtype=torch.float16) * 2 - 1
    b = torch.rand(n, n, device="cuda", dtype=torch.float16) * 2 - 1
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    cache = torch.empty(flush_bytes, dtype=torch.uint8, device="cuda")
    torch.matmul(a, b, out=c)
    for _ in range(10):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    for start, end in zip(starts, ends):
        cache.zero_()
        start.record()
        torch.matmul(a, b, out=c)
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) * 1e-3 for start, end in zip(starts, ends))


def _agreement(check: str, ours: float, theirs: float, tool: str) -> Row:
    difference = ours / theirs - 1
    text = f"{format_time(ours)} vs {tool} {format_time(theirs)} ({difference:+.1%})"
    if theirs < LONG_KERNEL_S:
        return Row(check, text, "±3% (kernels > 50 µs)", INFO + " (under 50 µs)", difference)
    return Row(check, text, "±3%", _verdict(abs(difference) <= 0.03), difference)


def gpu_rows() -> list[Row]:
    from workbench.measure import backend_status, measure
    from workbench.measure.backends import select_backend
    from workbench.measure.run import prepared_kernel

    status = next(s for s in backend_status() if s.name == "cupy")
    if not status.available:
        return [Row("GPU checks", status.message, "–", SKIP)]
    backend = select_backend("cupy")
    rows = [Row("device", backend.describe(), "–", INFO)]
    env = backend.environment()
    rows.append(Row("versions", ", ".join(f"{k} {env[k]}" for k in ("cupy", "cuda_runtime", "driver") if env.get(k)), "–", INFO))

    def run(declaration: str, mode: str) -> Any:
        """The run's figures, derived as the window, reports and CLI derive them (workbench.runs)."""
        from workbench.runs import FigureContext, record_run, run_figures

        record = measure(declaration, backend=backend, iterations=ITERATIONS, mode=mode, device=None)
        if not record.valid:
            raise SystemExit(f"{declaration} ({mode}) was not valid: {record.message}")
        return run_figures(record_run(record), FigureContext())

    copy = run("copy(n=2**28, dtype=fp32)", "cold")
    copy_bw = copy.achieved_bytes_per_s
    rows.append(Row("device copy 2^28 fp32, cold (bytes read + written)", format_bandwidth(copy_bw), "reference", INFO))
    for exponent in (24, 28):
        add = run(f"add(n=2**{exponent}, dtype=fp32)", "cold")
        ratio = add.achieved_bytes_per_s / copy_bw
        rows.append(
            Row(
                f"vector add 2^{exponent} fp32, cold, vs device copy",
                f"{format_bandwidth(add.achieved_bytes_per_s)} = {ratio:.1%} (median {format_time(add.median_s)})",
                "≥ 90%",
                _verdict(ratio >= 0.90),
                ratio,
            )
        )
        warm = run(f"add(n=2**{exponent}, dtype=fp32)", "warm")
        rows.append(
            Row(
                f"vector add 2^{exponent} fp32, warm (synchronised per call, as cupyx)",
                f"{format_bandwidth(warm.achieved_bytes_per_s)} = {warm.achieved_bytes_per_s / copy_bw:.1%}",
                "–",
                INFO,
            )
        )

    gemm_text = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
    gemm = run(gemm_text, "cold")
    try:
        import torch  # noqa: F401
    except ImportError:
        rows.append(Row("4096³ fp16 GEMM vs torch.matmul", format_flop_rate(gemm.achieved_flop_per_s), "≥ 95%", SKIP + " (PyTorch not installed)"))
    else:
        theirs = _torch_gemm_cold_median(4096, ITERATIONS, backend.flush_bytes())
        ratio = theirs / gemm.median_s
        rows.append(
            Row(
                "4096³ fp16 GEMM, cold, vs torch.matmul (same protocol)",
                f"{format_flop_rate(gemm.achieved_flop_per_s)} vs {format_flop_rate(gemm.flop / theirs)} = {ratio:.1%}",
                "≥ 95%",
                _verdict(ratio >= 0.95),
                ratio,
            )
        )

    compared = ("add(n=2**26, dtype=fp32)", gemm_text, "softmax(rows=8192, cols=8192, dtype=fp16)")
    try:
        from cupyx.profiler import benchmark
    except ImportError:
        rows.append(Row("warm median vs cupyx.profiler.benchmark", "–", "±3%", SKIP + " (cupyx.profiler missing)"))
    else:
        import numpy as np

        for declaration in compared:
            ours = run(declaration, "warm").median_s
            with prepared_kernel(declaration, backend) as kernel:
                result = benchmark(kernel, n_repeat=ITERATIONS, n_warmup=10)
                theirs = float(np.median(result.gpu_times[0]))
            rows.append(_agreement(f"warm median vs cupyx.profiler.benchmark: {declaration}", ours, theirs, "cupyx"))

    try:
        import triton.testing
    except ImportError:
        rows.append(Row("cold median vs triton.testing.do_bench", "–", "±3%", SKIP + " (Triton not installed)"))
    else:
        for declaration in compared:
            ours = run(declaration, "cold").median_s
            with prepared_kernel(declaration, backend) as kernel:
                theirs = _do_bench_median(triton.testing.do_bench, kernel) * 1e-3
            rows.append(_agreement(f"cold median vs triton.testing.do_bench: {declaration}", ours, theirs, "triton"))
    return rows


def _do_bench_median(do_bench: Callable[..., Any], call: Callable[[], None]) -> float:
    """triton's median in milliseconds (older Triton takes quantiles instead of return_mode)."""
    try:
        return float(do_bench(call, warmup=25, rep=100, return_mode="median"))
    except TypeError:
        return float(do_bench(call, warmup=25, rep=100, quantiles=[0.5])[0])


# ----------------------------------------------------------------------------- report


def print_table(rows: list[Row]) -> None:
    headers = ("check", "measured", "target", "result")
    cells = [headers] + [(r.check, r.measured, r.target, r.verdict) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(4)]
    for index, row in enumerate(cells):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-only", action="store_true", help="skip the GPU checks")
    parser.add_argument("--gpu-only", action="store_true", help="skip the CPU check")
    parser.add_argument("--rounds", type=int, default=10, help="alternating harness / bare-loop rounds on the CPU")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    if not args.gpu_only:
        rows += cpu_rows(args.rounds)
    if not args.cpu_only:
        rows += gpu_rows()
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 1 if args.strict and any(r.verdict == FAIL for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
