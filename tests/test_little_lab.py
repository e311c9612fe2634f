"""Memory-level parallelism for the reductions and the assumption each lab kernel misses (issue 28).

Device figures are the catalogue's H200 SXM (/work/shared/DATASHEETS.md: 4.8 TB/s HBM, 132 SMs, 67 TFLOP/s
fp32), compute capability 9.0 (2,048 resident threads and 32 resident blocks an SM), and its nominal loaded HBM
latency of 1.35 µs. Little's law: reads ≤ SMs × bytes in flight per SM ÷ latency; to read at the rate's share of
reads an SM must hold rate × latency × (bytes read ÷ bytes) ÷ SMs in flight.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.model.analysis import analyze, sweep
from workbench.model.analysis.mlp import little
from workbench.model.analysis.shortfall import missed_assumption
from workbench.cli import main
from workbench.model.devices.catalogue import catalogue
from workbench.model.implementations.reduction import _block_reduce_threads
from workbench.measure import OK, measure
from workbench.documents.report import report_run
from workbench.documents.report.tables import run_notes
from workbench.measure.runs import FigureContext, parse_run, run_figures

H200 = "h200-sxm"
ROWS = COLS = 8192
X32 = ROWS * COLS * 4  # 268,435,456 B
X16 = ROWS * COLS * 2  # 134,217,728 B
NAIVE = "gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=naive)"
TILED = "gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=tiled, tile_m=64, tile_n=64, tile_k=16)"


def lines(declaration: str) -> dict[str, str]:
    return {step.label: step.body for step in analyze(declaration, H200).steps}


def test_the_fp32_row_sum_holds_enough_in_flight_to_reach_the_roof() -> None:
    # CUB's segmented reduction: 256 threads a block, min(32, 2,048 ÷ 256 = 8) = 8 blocks = 2,048 threads an SM;
    # 64 B a thread as 4 loads of 16 B: 2,048 × 4 × 16 B = 131,072 B in flight per SM
    a = analyze(f"reduce(rows={ROWS}, n={COLS}, dtype=fp32, impl=library)", H200)
    found = little(a.physical.launches, a.basis.device, a.term("hbm").rate)
    (kernel,) = found.kernels
    assert (kernel.threads_per_sm, kernel.in_flight_per_sm) == (2048, 131_072)
    # reads: 132 × 131,072 B ÷ 1.35 µs = 17,301,504 B ÷ 1.35e-6 s = 12.82 TB/s > 4.8 TB/s: the memory's rate
    assert kernel.read_rate == pytest.approx(17_301_504 / 1.35e-6)
    assert kernel.achievable == 4.8e12
    # needed: 4.8 TB/s × 1.35 µs × 268,435,456 read ÷ 268,468,224 B ÷ 132 = 49,090.9 × 0.999878 = 49,084.9 B
    assert kernel.needed_per_sm == pytest.approx(4.8e12 * 1.35e-6 * X32 / (X32 + ROWS * 4) / 132)
    assert kernel.needed_per_sm == pytest.approx(49_084.9, abs=0.1)
    # so the term equals the HBM term: 268,468,224 B ÷ 4.8 TB/s = 55.93 µs, and no line says why it is short
    assert a.term("mlp").time_s == pytest.approx(a.term("hbm").time_s) == pytest.approx(55.93e-6, rel=1e-3)
    assert not any(label.startswith("Why below") for label in lines(f"reduce(rows={ROWS}, n={COLS}, dtype=fp32, impl=library)"))


def test_the_fp16_row_sum_in_fp32_is_held_to_1_6_tb_s() -> None:
    # cupy.sum(x, axis=1, dtype=float32) of fp16: CuPy's CUB block reduction, ⌈8,192 / 4⌉ = 2,048 threads → 512 (cap);
    # min(32, 2,048 ÷ 512 = 4) = 4 blocks = 2,048 threads; 4 loads of 2 B: 2,048 × 4 × 2 B = 16,384 B per SM
    text = f"reduce(rows={ROWS}, n={COLS}, dtype=fp16, impl=library)"
    a = analyze(text, H200)
    found = little(a.physical.launches, a.basis.device, a.term("hbm").rate)
    reduction, copy = found.kernels
    assert (reduction.launch.threads_per_block, reduction.in_flight_per_sm) == (512, 16_384)
    # reads: 132 × 16,384 B ÷ 1.35 µs = 2,162,688 B ÷ 1.35e-6 s = 1.602 TB/s; with the fp32 sums written
    # (32,768 B) the kernel's 134,250,496 B move at 1.602 × 134,250,496 ÷ 134,217,728 = 1.6024 TB/s: 83.78 µs
    assert reduction.achievable == pytest.approx(2_162_688 / 1.35e-6 * (X16 + 32_768) / X16)
    assert reduction.time_s == pytest.approx(X16 * 1.35e-6 / 2_162_688)
    assert reduction.time_s == pytest.approx(83.78e-6, rel=1e-3)
    # then the copy of 8,192 fp32 sums into fp16: ⌈8,192 threads ÷ 132⌉ = 63 threads an SM × 4 B = 252 B in flight:
    # 132 × 252 B ÷ 1.35 µs = 24.64 GB/s of reads, × 49,152 ÷ 32,768 = 36.96 GB/s; 49,152 B ÷ 36.96 GB/s = 1.33 µs
    assert copy.in_flight_per_sm == 252
    assert copy.time_s == pytest.approx(32_768 * 1.35e-6 / (132 * 252))
    # the term: 83.78 + 1.33 = 85.11 µs, three times the HBM term's 134,234,112 B ÷ 4.8 TB/s = 27.97 µs
    assert a.term("mlp").time_s == pytest.approx(85.11e-6, rel=1e-3)
    assert a.limiter_term == "mlp" and a.bound_time == pytest.approx(a.term("mlp").time_s)
    body = lines(text)
    # needed: 4.8 TB/s × 1.35 µs × 134,217,728 ÷ 134,250,496 ÷ 132 = 49,090.9 × 0.999756 = 49,078.9 B ≈ 49.08 kB
    assert body["Bytes in flight Little's law needs per SM (CuPy CUB block reduction)"] == (
        "4.8 TB/s × 1.35 µs × 134.2 MB read ÷ 134.3 MB ÷ 132 SMs = 49.08 kB")
    assert body["Why below the memory's roof (CuPy CUB block reduction)"] == (
        "CuPy CUB block reduction issues 2-byte loads, 4 a thread: 16.38 kB in flight per SM < the 49.08 kB "
        "Little's law needs at 4.8 TB/s and 1.35 µs, so the memory roof is lowered to 1.602 TB/s")
    # the copy is 1.33 ÷ 85.11 = 1.6 % of the term's time (under 5 %): it gets its Little's-law lines but no sentence of its own
    assert "Why below the memory's roof (CuPy elementwise copy of the fp32 sums)" not in body


@pytest.mark.parametrize(("n", "threads"), [(1, 32), (100, 32), (129, 64), (1000, 256), (2048, 512), (8192, 512)])
def test_cupys_block_size_rounds_up_to_a_power_of_two(n: int, threads: int) -> None:
    # ⌈n/4⌉ up to a power of two, within 32 … 512: 100 → 25 → 32; 129 → 33 → 64; 1,000 → 250 → 256; 2,048 → 512
    assert _block_reduce_threads(n) == threads
    assert _block_reduce_threads(np.array([n]))[0] == threads


def test_a_sweep_of_the_fp16_row_sum_has_each_points_term() -> None:
    sizes = np.array([100, 1000, 8192, 65536])
    swept = sweep(f"reduce(rows={ROWS}, n=100, dtype=fp16, impl=library)", {"n": sizes}, H200)
    for index, n in enumerate(sizes):
        alone = analyze(f"reduce(rows={ROWS}, n={int(n)}, dtype=fp16, impl=library)", H200)
        assert swept.term("mlp").time_s[index] == pytest.approx(alone.term("mlp").time_s)


def test_numpy_measures_the_library_row_sum() -> None:
    record = measure("reduce(rows=4, n=4096, dtype=fp32, impl=library)", backend="numpy", iterations=30, warmup=1)
    assert record.status == OK and record.check is not None and record.check.passed, record.message


def test_the_library_add_says_why_its_roof_is_lowered() -> None:
    # the example: 2 loads of 4 B, 2,048 threads: 16,384 B per SM; needed: 4.8 TB/s × 1.35 µs × 2/3 ÷ 132 =
    # 32,727 B ≈ 32.73 kB; reads 1.602 TB/s × 3/2 = 2.403 TB/s
    body = lines("add(n=2**24, dtype=fp32, impl=library)")
    assert body["Bytes in flight Little's law needs per SM"] == "4.8 TB/s × 1.35 µs × 134.2 MB read ÷ 201.3 MB ÷ 132 SMs = 32.73 kB"
    assert body["Why below the memory's roof"] == (
        "CuPy elementwise add issues 4-byte loads, 2 a thread: 16.38 kB in flight per SM < the 32.73 kB Little's law "
        "needs at 4.8 TB/s and 1.35 µs, so the memory roof is lowered to 2.403 TB/s")
    # the vectorized add holds 2 × 16 B × 2,048 = 65,536 B > 32,727 B: nothing to explain
    assert "Why below the memory's roof" not in lines("add(n=2**24, dtype=fp32, impl=vectorized)")


def test_the_naive_gemm_is_read_backwards_through_littles_law() -> None:
    # loads L2 → SM: every thread loads its row of A and column of B: 2 × 4,096³ × 4 B = 549,755,813,888 B, + C
    # written once 67,108,864 B = 549,822,922,752 B; at the first H200 run's 41.29 ms: 13.316 TB/s.
    # In flight: 16 × 16 blocks, min(32, 2,048 ÷ 256) × 256 = 2,048 threads × 2 loads × 4 B = 16,384 B per SM.
    # Little's law backwards: W = 132 × 16,384 B ÷ 13.316 TB/s = 2,162,688 ÷ 1.3316e13 = 162.4 ns a load
    a = analyze(NAIVE, H200)
    rate = 549_822_922_752 / 41.29e-3
    assert 132 * 16_384 / rate == pytest.approx(162.4e-9, rel=1e-3)
    text = missed_assumption(a, 41.29e-3)
    assert "2,048 threads × 8 B = 16.38 kB per SM" in text
    assert "moved at 13.32 TB/s in the measured 41.29 ms" in text
    assert "132 SMs × 16.38 kB ÷ 13.32 TB/s = 162.4 ns a load" in text
    # the model says why it gives no forward term for the lab GEMMs
    assert any("loads in flight (Little's law): not a term here" in note for note in a.notes)
    assert a.term("mlp") is None


def test_the_tiled_gemm_shows_the_wait_of_each_k_step() -> None:
    # bound (compute, whole waves): 4,096 tiles of 64 × 64 over 132 SMs = ⌈31.03⌉ = 32 waves; a tile's
    # 137,438,953,472 ÷ 4,096 = 33,554,432 FLOP at 67 TFLOP/s ÷ 132: 32 × 132 × 33,554,432 ÷ 67e12 = 2.1154 ms.
    # Measured 7.515 ms: 7.515 − 2.1154 = 5.3996 ms over 32 waves × 4,096/16 = 256 k steps = 8,192 in turn: 659.1 ns each
    a = analyze(TILED, H200)
    assert a.bound_time == pytest.approx(32 * 132 * 33_554_432 / 67e12)
    text = missed_assumption(a, 7.515e-3)
    assert "(load 8.192 kB of A and B a CTA, 8 loads of 4 B a thread" in text  # (64·16 + 16·64) × 4 B; 2,048 ÷ 256
    assert "the run's 5.4 ms over the bound is 659.1 ns for each of the 8,192 k steps a slot runs in turn (32 waves × 256)" in text
    assert (7.515e-3 - a.bound_time) / 8192 == pytest.approx(659.1e-9, rel=1e-3)


def test_nothing_is_said_near_the_bound_or_for_a_kernel_the_model_does_not_know() -> None:
    # within 10 %: 2.1154 ms ÷ 2.3 ms = 92 %
    assert missed_assumption(analyze(TILED, H200), 2.3e-3) == ""
    # cuBLAS (impl=compulsory) at 2.677 ms, 76.6 % of its bound: the model knows no launch to read backwards
    assert missed_assumption(analyze("gemm(M=4096, N=4096, K=4096, dtype=fp32)", H200), 2.677e-3) == ""
    # the library add at its lowered roof is still far below the memory's (41.94 µs ÷ 84.13 µs = 50 %): it says why
    text = missed_assumption(analyze("add(n=2**24, dtype=fp32, impl=library)", H200), 84.13e-6)
    assert text.startswith("CuPy elementwise add issues 4-byte loads") and "the run reached 2.393 TB/s" in text
    assert missed_assumption(analyze("add(n=2**24, dtype=fp32, impl=library)", H200), None) == ""


def test_a_run_carries_the_sentence_to_the_table_the_report_and_the_json() -> None:
    run = {"declaration": NAIVE, "backend": "cupy", "samples_s": [41.29e-3] * 3, "valid": True}
    context = FigureContext(session_device=catalogue()[H200])
    figures = run_figures(parse_run(run, 0), context)
    assert figures.missed.startswith("naive GEMM: the bound lets its loads cross")
    assert figures.to_dict()["missed_assumption"] == figures.missed
    reported = report_run(run, 0, context)
    assert reported.missed == figures.missed
    assert f"run 1, short of its bound: {figures.missed}." in run_notes([reported])


def test_workbench_runs_prints_why_a_lab_run_is_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a real run record (NumPy's, of a small GEMM) given the naive lab declaration, an H200's provenance and the
    # first H200 run's 41.29 ms: `workbench runs` says why it is short, as the window and reports do
    record = measure("gemm(M=64, N=64, K=64, dtype=fp32)", backend="numpy", iterations=30, warmup=1).to_dict()
    record.update(declaration=NAIVE, backend="cupy", device="GPU 0: NVIDIA H200", samples_s=[41.29e-3] * 30)
    record["provenance"] = {**record["provenance"], "kind": "gpu", "name": "NVIDIA H200", "catalogue_key": H200}
    path = tmp_path / "lab.json"
    assert main(["measure", "add(n=4096)", "--backend", "numpy", "--save-to", str(path)]) == 0
    session = json.loads(path.read_text())
    session["runs"].append(record)
    path.write_text(json.dumps(session))
    capsys.readouterr()
    assert main(["runs", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "    why short: naive GEMM: the bound lets its loads cross" in printed
    assert "= 162.4 ns a load" in printed
    assert printed.count("why short") == 1  # the CPU add (a nominal bound) says nothing


def test_a_small_naive_gemm_holds_only_the_threads_it_launches() -> None:
    # 64 × 64 = 4,096 threads over 132 SMs: ⌈4,096 / 132⌉ = 32 threads an SM × 8 B = 256 B in flight; loads
    # 2 × 64³ × 4 B + C 16,384 B = 2,113,536 B; at 1 ms: 2.114 GB/s; 132 × 256 B ÷ 2.114 GB/s = 15.99 µs a load
    text = missed_assumption(analyze("gemm(M=64, N=64, K=64, dtype=fp32, impl=naive)", H200), 1e-3)
    assert "32 threads × 8 B = 256 B per SM" in text
    assert f"= {132 * 256 / (2_113_536 / 1e-3) * 1e6:.4g} µs a load" in text
