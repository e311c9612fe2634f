"""Wave quantization in the time bound (issue 28): NVIDIA's Matrix Multiplication Background examples.

The guide's setting: an A100 (108 SMs), 256 × 128 tiles, fp16 on tensor cores at 312 TFLOP/s dense,
M = 2304, K = 4096. One tile is 2 · 256 · 128 · 4096 = 268,435,456 FLOP; one SM does 312e12 / 108
= 2.888…e12 FLOP/s, so one tile takes 268,435,456 / 2.888…e12 = 92.92 µs, and so does every wave.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.analysis import analyze, sweep

A100 = "a100-sxm-80gb"
TILE = 2 * 256 * 128 * 4096  # 268,435,456 FLOP a tile
TILE_TIME = TILE / (312e12 / 108)  # 92.92 µs on one of 108 SMs


def guide(n: int, m: int = 2304, batch: int = 1) -> str:
    extra = f", batch={batch}" if batch != 1 else ""
    return f"gemm(M={m}, N={n}, K=4096{extra}, dtype=fp16, impl=tiled, tile_m=256, tile_n=128, tile_k=32)"


def test_the_tile_time_is_the_guides_92_9_us() -> None:
    assert TILE_TIME == pytest.approx(92.92e-6, abs=0.005e-6)


def test_n_1536_is_108_tiles_in_one_full_wave() -> None:
    a = analyze(guide(1536), A100)
    q = a.physical.quantization
    # 2304 / 256 = 9 tile rows, 1536 / 128 = 12 tile columns: 9 × 12 = 108 tiles on 108 SMs, one wave
    assert (q.tiles, q.waves, q.slot_use) == (108, 1, 1.0)
    assert q.tile_flop == TILE
    # a full wave: whole waves and FLOP / rate agree, 2 · 2304 · 1536 · 4096 / 312e12 = 92.92 µs
    assert a.compute_time == pytest.approx(TILE_TIME)
    assert a.compute_time == pytest.approx(2 * 2304 * 1536 * 4096 / 312e12)


def test_n_1544_is_117_tiles_in_two_waves_and_takes_two_waves_time() -> None:
    a = analyze(guide(1544), A100)
    q = a.physical.quantization
    # 1544 / 128 = 12.06 → 13 tile columns (N padded to 1,664): 9 × 13 = 117 tiles; 117 / 108 = 1.08 → 2 waves,
    # the second with 9 of 108 SMs busy: 117 of 216 slots (54.2 %)
    assert (q.tiles, q.waves) == (117, 2)
    assert q.padded["N"] == 1664 and f"{q.slot_use:.1%}" == "54.2%"
    # physical FLOP 2 · 2304 · 1664 · 4096 = 31,406,948,352 = 117 tiles × 268,435,456
    assert a.physical.physical_flop == 31_406_948_352 == 117 * TILE
    # FLOP / rate would say 31,406,948,352 / 312e12 = 100.66 µs (what the workbench said before);
    # two whole waves take 2 × 92.92 = 185.84 µs
    assert a.physical.physical_flop / 312e12 == pytest.approx(100.66e-6, abs=0.01e-6)
    assert a.compute_time == pytest.approx(2 * TILE_TIME)
    assert a.compute_time == pytest.approx(185.84e-6, abs=0.01e-6)
    # the derivation states it as an assumption and as its own line
    step = next(step for step in a.steps if step.label.startswith("Compute time bound, whole waves"))
    assert step.body.startswith("2 waves × 268.4 MFLOP a tile / (312 TFLOP/s ÷ 108 SMs) = 2 × 92.92 µs")
    assert step.result == "185.8 µs"
    assert any("wave timing (assumed)" in note and "partial last one" in note for note in a.notes)
    # and the CLI's JSON carries the same figure (one function: implementations.wave_time)
    assert a.to_dict()["compute_time_s"] == a.compute_time


def test_a_tile_grid_under_one_wave_still_takes_one_tiles_time() -> None:
    # 1792 × 1792: 1792 / 256 = 7 and 1792 / 128 = 14, 98 tiles on 108 SMs: one wave, 10 SMs idle (90.7 %)
    a = analyze(guide(1792, m=1792), A100)
    q = a.physical.quantization
    assert (q.tiles, q.waves, f"{q.slot_use:.1%}") == (98, 1, "90.7%")
    # one wave = one tile's time, 92.92 µs, where FLOP / rate would give 98/108 of it (84.32 µs)
    assert a.compute_time == pytest.approx(TILE_TIME)
    assert a.physical.physical_flop / 312e12 == pytest.approx(TILE_TIME * 98 / 108)


def test_batched_gemm_waves_count_every_batch_entrys_tiles() -> None:
    # batch 2 of the N = 1536 product: 2 × 108 = 216 tiles = exactly 2 waves: 185.84 µs
    a = analyze(guide(1536, batch=2), A100)
    assert (a.physical.quantization.tiles, a.physical.quantization.waves) == (216, 2)
    assert a.compute_time == pytest.approx(2 * TILE_TIME)
    # batch 3 of N = 1544: 3 × 117 = 351 tiles, ⌈351 / 108⌉ = ⌈3.25⌉ = 4 waves
    b = analyze(guide(1544, batch=3), A100)
    assert (b.physical.quantization.tiles, b.physical.quantization.waves) == (351, 4)
    assert b.compute_time == pytest.approx(4 * TILE_TIME)


def test_conv2d_as_implicit_gemm_has_the_guides_waves() -> None:
    # a 1 × 1 convolution over 48 × 48 pixels is the guide's GEMM: M = N·P·Q = 2304, K = C·R·S = 4096,
    # N = K (output channels)
    text = "conv2d(N=1, C=4096, H=48, W=48, K={k}, R=1, S=1, dtype=fp16, impl=tiled, tile_m=256, tile_n=128, tile_k=32)"
    one = analyze(text.format(k=1536), A100)
    assert (one.physical.quantization.tiles, one.physical.quantization.waves) == (108, 1)
    assert one.compute_time == pytest.approx(TILE_TIME)
    two = analyze(text.format(k=1544), A100)
    assert (two.physical.quantization.tiles, two.physical.quantization.waves) == (117, 2)
    assert two.compute_time == pytest.approx(2 * TILE_TIME)
    # HBM under the implicit GEMM: x and w read once, y written once (the compulsory bytes)
    assert two.term("hbm").amount == two.bytes
    assert any("im2col" in note for note in two.notes)
    # a 3 × 3 convolution: K = C·R·S = 64 · 9 = 576, grouped: groups are a batch of GEMMs
    grouped = analyze("conv2d(N=2, C=64, H=56, W=56, K=128, R=3, S=3, pad=1, groups=2, dtype=fp16, impl=tiled)", A100)
    q = grouped.physical.quantization
    # per group M = 2 · 56 · 56 = 6,272 → ⌈6272/128⌉ = 49 tile rows, N = 64 → 1 tile column: 2 groups × 49 = 98 tiles
    assert q.tiles == 98 and q.waves == 1


def test_without_an_sm_count_the_compute_term_is_flop_over_rate() -> None:
    a = analyze(guide(1544), None, rate="312 TFLOP/s", bandwidth="2 TB/s")
    assert a.physical.quantization.waves is None
    assert a.compute_time == pytest.approx(31_406_948_352 / 312e12)
    assert not any(step.label.startswith("Compute time bound, whole waves") for step in a.steps)


def test_a_sweep_across_the_wave_boundary_steps_as_analyze_does() -> None:
    ns = np.arange(1528, 1560, 4)
    swept = sweep(guide(1536), {"N": ns}, A100)
    for index, n in enumerate(ns):
        alone = analyze(guide(int(n)), A100)
        assert swept.compute_time[index] == pytest.approx(alone.compute_time)
    # N ≤ 1536: 12 tile columns, one wave; N ≥ 1540: 13 columns, 117 tiles, two waves
    assert set(np.round(swept.compute_time[ns <= 1536] / TILE_TIME, 6)) == {1.0}
    assert set(np.round(swept.compute_time[ns > 1536] / TILE_TIME, 6)) == {2.0}
