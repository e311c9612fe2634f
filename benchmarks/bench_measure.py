"""How faithful is the measurement harness? Its figures against bare loops and other timing tools.

CPU (always): the harness's achieved GB/s for add(n=2**24, dtype=fp32) against
a bare `np.add(a, b, out=c)` loop timed with perf_counter_ns in the same
process (target ≥ 95 %, reported as the ratio of medians over alternating
rounds).

GPU (when CuPy sees one): vector add (cupy.add, CuPy's generated elementwise
loop) of 2^24 and 2^28 fp32 against a copy made by the same generator with
the same 4-byte accesses (≥ 90 %), beside the device copy (cupy.copyto, a
cudaMemcpy device to device) as INFO, and diagnostic INFO rows — the
elementwise copy and RawKernel copy and add with 16-byte (float4) accesses,
cold and warm — that say how much of the gap to the device copy is the
access width (on an H200 the add reached 57–60 % of the device copy); a
4096³ fp16 GEMM against torch.matmul timed with the same cold protocol
(≥ 95 %, needs PyTorch); the warm-mode median against
cupyx.profiler.benchmark (within 3 % for kernels over 50 µs), timed as cupyx
times, without the launch cover, beside the harness's covered median (INFO);
the cold-mode median against triton.testing.do_bench with as many
iterations and as much warm-up as do_bench gives itself (within 3 %, needs
Triton), with the SM clock and power after each, beside the harness's
default 50-iteration median (INFO: a long run of a large GEMM can lower the
clock). What is not installed is skipped and said so. The chapter's lab
demo: the same fp32 GEMM as the naive and the tiled RawKernel and as cuBLAS,
each median beside the bound analyze() predicts for its `impl=` and the
model's bytes across L2 → SM and HBM → L2 (INFO rows: a model, not a target).

A check that fails to run (a reference tool raising, an invalid run) becomes
an ERROR row with the reason; the others still run. Each row is printed as it
completes and the JSON file, when asked for, is rewritten after every row, so
what was measured before a crash is kept.

    PYTHONPATH=. python benchmarks/bench_measure.py [--cpu-only] [--gpu-only] [--quick] [--json FILE] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.model.units import format_bandwidth, format_flop_rate, format_time  # noqa: E402

PASS, FAIL, SKIP, INFO, ERROR = "PASS", "FAIL", "SKIP", "INFO", "ERROR"
BENCH_FORMAT = "perf-workbench-bench-measure"
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


class CheckFailed(Exception):
    """A check could not produce its figure (an invalid run, a tool that raised)."""


@dataclass
class Report:
    """Rows as they complete: each printed at once and, with a JSON path, written out again after every row."""

    json_path: Path | None = None
    notes: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"[{row.verdict}] {row.check}: {row.measured} (target {row.target})", flush=True)
        self.write(complete=False)

    def run(self, check: str, target: str, produce: Callable[[], Iterable[Row] | None]) -> None:
        """Add the rows a check yields (or adds itself); if it raises, one ERROR row with the reason, and carry on."""
        try:
            for row in produce() or ():
                self.add(row)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a reference tool may raise anything, SystemExit included
            reason = " ".join(str(exc).split()) or type(exc).__name__
            self.add(Row(check, f"{type(exc).__name__}: {reason}"[:400], target, ERROR))

    def write(self, complete: bool) -> None:
        if self.json_path is None:
            return
        data = {
            "format": BENCH_FORMAT,
            "version": 1,
            "created": self.created,
            "complete": complete,
            "python": platform.python_version(),
            "notes": self.notes,
            "rows": [asdict(r) for r in self.rows],
        }
        self.json_path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.json_path.with_name(self.json_path.name + ".partial")
        partial.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(partial, self.json_path)


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


def cpu_rows(rounds: int) -> Iterator[Row]:
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
            if not record.valid:
                raise CheckFailed(f"the harness run was not valid: {record.message}")
            return list(record.samples_s)

        if index % 2 == 0:
            ours, theirs = run_harness(), _bare_add_samples(n, ITERATIONS, warmup=10)
        else:
            theirs, ours = _bare_add_samples(n, ITERATIONS, warmup=10), run_harness()
        harness += ours
        bare += theirs
        per_round.append(statistics.median(theirs) / statistics.median(ours))
    ratio = statistics.median(bare) / statistics.median(harness)  # = harness GB/s / bare GB/s
    yield from [
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


def cupyx_median(benchmark: Callable[..., Any], kernel: Callable[[], None], declaration: str, repeat: int) -> float:
    """cupyx.profiler.benchmark's median GPU time in seconds for a kernel object.

    `name=` is given because benchmark() otherwise reads `func.__name__`,
    which a kernel object does not have.
    """
    import numpy as np

    result = benchmark(kernel, n_repeat=repeat, n_warmup=10, name=declaration)
    return float(np.median(result.gpu_times[0]))


@dataclass(frozen=True)
class Sizes:
    """What the GPU checks measure: the full set, or a quick one for a smoke test."""

    copy: str
    adds: tuple[int, ...]
    gemm_edge: int
    compared: tuple[str, ...]
    lab_edge: int = 4096  # the lab demo's fp32 GEMM: naive, tiled and cuBLAS

    @classmethod
    def choose(cls, quick: bool) -> "Sizes":
        if quick:
            return cls("copy(n=2**24, dtype=fp32)", (22,), 1024, ("add(n=2**22, dtype=fp32)",), lab_edge=512)
        return cls(
            "copy(n=2**28, dtype=fp32)",
            (24, 28),
            4096,
            ("add(n=2**26, dtype=fp32)", "gemm(M=4096, N=4096, K=4096, dtype=fp16)", "softmax(rows=8192, cols=8192, dtype=fp16)"),
        )


LAB_IMPLEMENTATIONS = (
    ("naive", "impl=naive"),
    ("tiled 64×64×16", "impl=tiled, tile_m=64, tile_n=64, tile_k=16"),
    ("tiled 128×128×8", "impl=tiled, tile_m=128, tile_n=128, tile_k=8"),
    ("cuBLAS", "impl=compulsory"),
)
LAB_ITERATIONS = 30


def lab_rows(backend: Any, edge: int) -> Iterator[Row]:
    """Naive vs tiled vs cuBLAS on one fp32 GEMM: measured median beside the predicted bound and the model's bytes."""
    from workbench.model.declare import parse
    from workbench.model.devices.interfaces import HBM, L2
    from workbench.measure import measure
    from workbench.measure.kernels import kernel_for
    from workbench.measure.runs import FigureContext, parse_run, run_figures

    for label, keywords in LAB_IMPLEMENTATIONS:
        declaration = f"gemm(M={edge}, N={edge}, K={edge}, dtype=fp32, {keywords})"
        record = measure(declaration, backend=backend, iterations=LAB_ITERATIONS, mode="cold")
        if not record.valid:
            raise CheckFailed(f"{declaration} was not valid: {record.message}")
        median = record.median_s
        bound = record.bound.bound_time_s if record.bound else None
        predicted = f"bound {format_time(bound)} ({record.bound.limiter})" if bound and record.bound else "no bound"
        ratio = bound / median if bound and median else None
        text = f"{format_time(median)}, {format_flop_rate(record.flop / median)}; {predicted}"
        if ratio is not None:
            text += f" = {ratio:.1%} of measured"
        if keywords != "impl=compulsory":
            physical = kernel_for(parse(declaration), backend).predicted  # the model on this GPU
            loads, hbm = physical.bytes_by_interface[L2], physical.bytes_by_interface[HBM]
            text += (f"; model L2 → SM {loads:,} B ({format_bandwidth(loads / median)} if all of it moved), "
                     f"HBM → L2 {hbm:,} B")
        missed = run_figures(parse_run(record.to_dict(), 0), FigureContext()).missed  # as the window and CLI say it
        if missed:
            text += f"; short of the bound: {missed}"
        yield Row(f"lab demo {edge}³ fp32, cold: {label}", text, "predicted vs measured", INFO, ratio)


DIAGNOSTIC_SOURCE = r"""
extern "C" __global__ void workbench_copy_float4(const float4* __restrict__ a, float4* __restrict__ c,
                                                 unsigned long long n4) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) c[i] = a[i];
}
extern "C" __global__ void workbench_add_float4(const float4* __restrict__ a, const float4* __restrict__ b,
                                                float4* __restrict__ c, unsigned long long n4) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
"""
DIAGNOSTIC_THREADS = 256


def diagnostic_kernels() -> dict[str, Any]:
    """Stream kernels the harness does not register, for the diagnostic rows: each runs through the ordinary
    protocol and reference check of the operation it computes (copy or add)."""
    from workbench.measure.kernels.stream import AddKernel, CopyKernel

    class ElementwiseCopy(CopyKernel):
        """c = a by CuPy's elementwise code generator: the loop cupy.add runs, 4-byte loads and stores."""

        def algorithm(self) -> str:
            return "cupy.ElementwiseKernel('T a', 'T c', 'c = a') (CuPy's generated elementwise loop, 4-byte accesses)"

        def prepare(self) -> None:
            self._copy = self.xp.ElementwiseKernel("T a", "T c", "c = a", "workbench_elementwise_copy")

        def __call__(self) -> None:
            self._copy(self.arrays["a"], self.arrays["c"])

    class Float4Mixin:
        kernel_name = ""
        operands: tuple[str, ...] = ()

        def prepare(self) -> None:
            n = self.n  # type: ignore[attr-defined]
            if n % 4:
                raise CheckFailed(f"the float4 kernels need n divisible by 4; got {n}")
            xp = self.xp  # type: ignore[attr-defined]
            self._kernel = xp.RawKernel(DIAGNOSTIC_SOURCE, self.kernel_name)
            self._n4 = xp.uint64(n // 4)
            self._blocks = (n // 4 + DIAGNOSTIC_THREADS - 1) // DIAGNOSTIC_THREADS

        def algorithm(self) -> str:
            return f"RawKernel {self.kernel_name}: one float4 (16-byte) load per operand and one store per thread"

        def __call__(self) -> None:
            arrays = self.arrays  # type: ignore[attr-defined]
            self._kernel((self._blocks,), (DIAGNOSTIC_THREADS,), (*(arrays[name] for name in self.operands), self._n4))

    class Float4Copy(Float4Mixin, CopyKernel):  # type: ignore[misc]
        kernel_name = "workbench_copy_float4"
        operands = ("a", "c")

    class Float4Add(Float4Mixin, AddKernel):  # type: ignore[misc]
        kernel_name = "workbench_add_float4"
        operands = ("a", "b", "c")

    return {"elementwise copy": ElementwiseCopy, "float4 copy": Float4Copy, "float4 add": Float4Add}


def do_bench_counts(backend: Any, kernel: Callable[[], None], flush: Callable[[], None],
                    warmup_ms: float = 25, rep_ms: float = 100) -> tuple[int, int]:
    """The warm-up calls and timed iterations triton.testing.do_bench gives itself for warmup=25, rep=100:
    5 flushed calls timed together estimate one; then warmup / estimate and rep / estimate (at least 1 each)."""
    cuda = backend.xp.cuda
    backend.synchronize()
    start, end = cuda.Event(), cuda.Event()
    start.record()
    for _ in range(5):
        flush()
        kernel()
    end.record()
    end.synchronize()
    estimate_ms = cuda.get_elapsed_time(start, end) / 5
    return max(1, int(warmup_ms / estimate_ms)), max(1, int(rep_ms / estimate_ms))


def _clock_text(conditions: dict[str, Any]) -> str:
    clock, power = conditions.get("sm_clock_mhz"), conditions.get("power_w")
    parts = [f"SM {clock:.0f} MHz" if isinstance(clock, (int, float)) else "SM clock –"]
    if isinstance(power, (int, float)):
        parts.append(f"{power:.0f} W")
    return " ".join(parts)


def gpu_checks(report: Report, quick: bool = False) -> None:
    """Every GPU comparison, each guarded: one that fails is an ERROR row and the rest still run."""
    from workbench.measure import backend_status, measure
    from workbench.measure.backends import CupyBackend, select_backend
    from workbench.measure.run import MAX_WARMUP_CALLS, prepared_kernel

    status = next(s for s in backend_status() if s.name == "cupy")
    if not status.available:
        report.add(Row("GPU checks", status.message, "–", SKIP))
        return
    backend = select_backend("cupy")
    sizes = Sizes.choose(quick)
    report.add(Row("device", backend.describe(), "–", INFO))
    env = backend.environment()
    report.add(Row("versions", ", ".join(f"{k} {env[k]}" for k in ("cupy", "cuda_runtime", "driver") if env.get(k)), "–", INFO))

    def record_of(declaration: str, mode: str, using: Any = None, **options: Any) -> Any:
        options.setdefault("iterations", ITERATIONS)
        record = measure(declaration, backend=using or backend, mode=mode, device=None, **options)
        if not record.valid:
            raise CheckFailed(f"{declaration} ({mode}) was not valid: {record.message}")
        return record

    def run(declaration: str, mode: str, using: Any = None, **options: Any) -> Any:
        """The run's figures, derived as the window, reports and CLI derive them (workbench.measure.runs)."""
        from workbench.measure.runs import FigureContext, record_run, run_figures

        return run_figures(record_run(record_of(declaration, mode, using, **options)), FigureContext())

    copy_bw: list[float] = []

    def copy_rows() -> Iterator[Row]:
        copy = run(sizes.copy, "cold")
        copy_bw.append(copy.achieved_byte_per_s)
        yield Row(f"device {sizes.copy}, cold (cupy.copyto = cudaMemcpy device to device; bytes read + written)",
                  format_bandwidth(copy.achieved_byte_per_s), "reference", INFO)

    report.run("device copy", "reference", copy_rows)
    diagnostics = diagnostic_kernels()

    def add_rows(exponent: int) -> Iterator[Row]:
        if not copy_bw:
            raise CheckFailed("no device-copy bandwidth to compare with (the copy check failed)")
        vector = f"n=2**{exponent}, dtype=fp32"
        same_kind = run(f"copy({vector})", "cold", kernel_class=diagnostics["elementwise copy"])
        add = run(f"add({vector})", "cold")
        ratio = add.achieved_byte_per_s / same_kind.achieved_byte_per_s
        yield Row(
            f"vector add 2^{exponent} fp32, cold, vs CuPy elementwise copy (same generated loop, 4-byte accesses)",
            f"{format_bandwidth(add.achieved_byte_per_s)} vs {format_bandwidth(same_kind.achieved_byte_per_s)} = {ratio:.1%} "
            f"(median {format_time(add.median_s)})",
            "≥ 90%",
            _verdict(ratio >= 0.90),
            ratio,
        )
        versus_copy = add.achieved_byte_per_s / copy_bw[0]
        yield Row(
            f"vector add 2^{exponent} fp32, cold, vs device copy (cudaMemcpy)",
            f"{format_bandwidth(add.achieved_byte_per_s)} = {versus_copy:.1%} of the device copy",
            "– (different kernels: see the diagnostic rows)",
            INFO,
            versus_copy,
        )
        warm = run(f"add({vector})", "warm")
        yield Row(
            f"vector add 2^{exponent} fp32, warm (synchronised per call, launch covered)",
            f"{format_bandwidth(warm.achieved_byte_per_s)} = {warm.achieved_byte_per_s / copy_bw[0]:.1%} of the device copy",
            "–",
            INFO,
        )
        for label, kernel_class in diagnostics.items():
            operation = "add" if label.endswith("add") else "copy"
            for mode in ("cold", "warm"):
                figures = (same_kind if (label, mode) == ("elementwise copy", "cold")
                           else run(f"{operation}({vector})", mode, kernel_class=kernel_class))
                share = figures.achieved_byte_per_s / copy_bw[0]
                yield Row(
                    f"diagnostic 2^{exponent} fp32, {mode}: {label}",
                    f"{format_bandwidth(figures.achieved_byte_per_s)} = {share:.1%} of the device copy "
                    f"(median {format_time(figures.median_s)})",
                    "–",
                    INFO,
                    share,
                )

    for exponent in sizes.adds:
        report.run(f"vector add 2^{exponent} fp32 vs device copy", "≥ 90%", lambda exponent=exponent: add_rows(exponent))

    edge = sizes.gemm_edge
    gemm_text = f"gemm(M={edge}, N={edge}, K={edge}, dtype=fp16)"
    check = f"{edge}³ fp16 GEMM, cold, vs torch.matmul (same protocol)"

    def gemm_rows() -> Iterator[Row]:
        gemm = run(gemm_text, "cold")
        try:
            import torch  # noqa: F401
        except ImportError:
            yield Row(check, format_flop_rate(gemm.achieved_flop_per_s), "≥ 95%", SKIP + " (PyTorch not installed)")
            return
        theirs = _torch_gemm_cold_median(edge, ITERATIONS, backend.flush_bytes())
        ratio = theirs / gemm.median_s
        yield Row(
            check,
            f"{format_flop_rate(gemm.achieved_flop_per_s)} vs {format_flop_rate(gemm.flop / theirs)} = {ratio:.1%}",
            "≥ 95%",
            _verdict(ratio >= 0.95),
            ratio,
        )

    report.run(check, "≥ 95%", gemm_rows)

    report.run(f"lab demo {sizes.lab_edge}³ fp32: naive vs tiled vs cuBLAS", "predicted vs measured",
               lambda: lab_rows(backend, sizes.lab_edge))

    try:
        from cupyx.profiler import benchmark
    except ImportError:
        report.add(Row("warm median vs cupyx.profiler.benchmark", "–", "±3%", SKIP + " (cupyx.profiler missing)"))
    else:
        uncovered = CupyBackend(cover_launch=False)
        for declaration in sizes.compared:
            def cupyx_rows(declaration: str = declaration) -> Iterator[Row]:
                # cupyx records its start event on an idle stream before calling: its times include the launch.
                # Like with like: the harness's warm protocol without the launch cover.
                ours = run(declaration, "warm", using=uncovered).median_s
                with prepared_kernel(declaration, backend) as kernel:
                    theirs = cupyx_median(benchmark, kernel, declaration, ITERATIONS)
                yield _agreement(f"warm median vs cupyx.profiler.benchmark (both with the launch in the events): "
                                 f"{declaration}", ours, theirs, "cupyx")
                covered = run(declaration, "warm").median_s
                yield Row(
                    f"warm median with the launch covered (the harness's figure): {declaration}",
                    f"{format_time(covered)} vs {format_time(ours)} uncovered: uncovered − covered = "
                    f"{(ours - covered) * 1e6:+.1f} µs, the launch inside each uncovered sample ({ours / covered - 1:+.1%})",
                    "–",
                    INFO,
                    covered / ours,
                )

            report.run(f"warm median vs cupyx.profiler.benchmark: {declaration}", "±3%", cupyx_rows)

    try:
        import triton.testing
    except ImportError:
        report.add(Row("cold median vs triton.testing.do_bench", "–", "±3%", SKIP + " (Triton not installed)"))
    else:
        for declaration in sizes.compared:
            def triton_rows(declaration: str = declaration) -> Iterator[Row]:
                short = record_of(declaration, "cold")
                with prepared_kernel(declaration, backend) as kernel:
                    warmup_calls, repeats = do_bench_counts(backend, kernel, backend.make_flush(backend.flush_bytes()))
                    theirs = _do_bench_median(triton.testing.do_bench, kernel) * 1e-3
                    theirs_after = backend.conditions()
                # do_bench runs about 25 ms of warm-up and 100 ms of timed calls: the harness runs as many.
                ours = record_of(declaration, "cold", iterations=max(repeats, 30),
                                 warmup=min(warmup_calls, MAX_WARMUP_CALLS))
                row = _agreement(f"cold median vs triton.testing.do_bench: {declaration}", ours.median_s, theirs, "triton")
                row.measured += (f"; {ours.iterations} iterations after {ours.warmup_calls} warm-up calls each "
                                 f"(do_bench's own counts); after ours {_clock_text(ours.conditions_after)}, "
                                 f"after triton {_clock_text(theirs_after)}")
                yield row
                yield Row(
                    f"cold median, the harness's default {ITERATIONS} iterations: {declaration}",
                    f"{format_time(short.median_s)} ({short.median_s / theirs - 1:+.1%} vs triton); after it "
                    f"{_clock_text(short.conditions_after)}",
                    "–",
                    INFO,
                    short.median_s / theirs - 1,
                )

            report.run(f"cold median vs triton.testing.do_bench: {declaration}", "±3%", triton_rows)


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
    parser.add_argument("--quick", action="store_true", help="small sizes and one compared kernel (a smoke test, not a verdict)")
    parser.add_argument("--rounds", type=int, default=10, help="alternating harness / bare-loop rounds on the CPU")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON (rewritten after every row)")
    parser.add_argument("--note", action="append", default=[], help="a line to keep in the JSON (repeatable)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed or a check fails to run")
    args = parser.parse_args(argv)
    report = Report(Path(args.json) if args.json else None, notes=list(args.note))
    if not args.gpu_only:
        report.run("CPU add 2^24 fp32: harness vs bare np.add loop", "≥ 95%", lambda: cpu_rows(args.rounds))
    if not args.cpu_only:
        report.run("GPU checks", "–", lambda: gpu_checks(report, args.quick))
    return finish(report, args.strict)


def finish(report: Report, strict: bool) -> int:
    """The table of every row, the JSON marked complete, and the exit status (1 under --strict when a target is missed)."""
    print()
    print_table(report.rows)
    report.write(complete=True)
    return 1 if strict and any(r.verdict in (FAIL, ERROR) for r in report.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
