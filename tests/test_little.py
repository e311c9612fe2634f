"""Memory-level parallelism (Little's law) for kernels whose launch the model knows (issue 28).

The H200 setting (catalogue): 132 SMs, compute capability 9.0 (2,048 resident threads and 32 resident
blocks per SM), HBM 4.8 TB/s, loaded latency 1.35 µs (nominal: fitted to the first H200 run's CuPy copy).
Little's law: read rate = SMs × bytes in flight per SM ÷ latency; stores are posted, so the whole traffic
moves at read rate × bytes ÷ bytes read, never above 4.8 TB/s.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.analysis import analyze, sweep
from workbench.model.analysis.mlp import little
from workbench.model.declare import parse
from workbench.model.devices.catalogue import catalogue
from workbench.model.implementations import physical_work

H200 = "h200-sxm"
N = 2**24  # 16,777,216 fp32 elements: 67,108,864 B an array
ARRAY = 67_108_864


def mlp_time(text: str, device: str = H200) -> float:
    a = analyze(text, device)
    term = a.term("mlp")
    assert term is not None, text
    return term.time_s


def test_library_copy_holds_8_kib_in_flight_per_sm() -> None:
    # CuPy elementwise: 128 threads a block, min(32 blocks, 2048 / 128 = 16) = 16 blocks = 2,048 threads per SM;
    # one 4-byte load each: 2,048 × 4 B = 8,192 B (8 KiB) in flight per SM
    decl = parse(f"copy(n={N}, dtype=fp32, impl=library)")
    found = little(physical_work(decl, decl.workload(), catalogue()[H200]).launches, catalogue()[H200], catalogue()[H200].bandwidth)
    (kernel,) = found.kernels
    assert (kernel.blocks_per_sm, kernel.threads_per_sm, kernel.in_flight_per_sm) == (16, 2048, 8192)
    # reads: 132 × 8,192 B ÷ 1.35 µs = 1,081,344 B ÷ 1.35e-6 s = 0.801 TB/s; with the writes (copy: 2 × the reads) 1.602 TB/s
    assert kernel.read_rate == pytest.approx(0.801e12, rel=1e-3)
    assert kernel.achievable == pytest.approx(1.602e12, rel=1e-3)  # the measured CuPy copy: 1.602 TB/s
    # time: 134,217,728 B ÷ 1.602 TB/s = 83.78 µs
    assert mlp_time(f"copy(n={N}, dtype=fp32, impl=library)") == pytest.approx(83.78e-6, rel=1e-3)


def test_library_add_reaches_2_4_tb_s_as_measured() -> None:
    # two 4-byte loads a thread: 2,048 × 2 × 4 B = 16 KiB per SM; 132 × 16,384 B ÷ 1.35 µs = 1.602 TB/s of reads;
    # with the write (3 arrays for 2 read): 1.602 × 3/2 = 2.403 TB/s; 201,326,592 B ÷ 2.403 TB/s = 83.78 µs
    a = analyze(f"add(n={N}, dtype=fp32, impl=library)", H200)
    term = a.term("mlp")
    assert term.amount == 3 * ARRAY
    assert term.rate.value == pytest.approx(2.403e12, rel=1e-3)
    assert term.time_s == pytest.approx(83.78e-6, rel=1e-3)
    # the first H200 run measured 2.393 TB/s (84.13 µs): the prediction is 0.4 % faster, within 15 %
    assert abs(term.time_s - 84.13e-6) / 84.13e-6 < 0.005
    # the term limits the bound (the HBM term alone says 41.94 µs), and the limiter names it
    assert a.term("hbm").time_s == pytest.approx(3 * ARRAY / 4.8e12)
    assert a.bound_time == pytest.approx(term.time_s) and a.limiter_term == "mlp" and a.limiter == "memory"


def test_vectorized_copy_and_add_are_capped_by_the_memory() -> None:
    # 256 threads a block: min(32, 2048 / 256 = 8) = 8 blocks = 2,048 threads; one 16-byte load per array:
    # copy 2,048 × 16 B = 32 KiB per SM → 132 × 32,768 B ÷ 1.35 µs = 3.204 TB/s of reads, × 2 = 6.41 TB/s > 4.8 TB/s
    copy = analyze(f"copy(n={N}, dtype=fp32, impl=vectorized)", H200)
    assert copy.term("mlp").rate.value == pytest.approx(4.8e12)
    assert copy.term("mlp").time_s == pytest.approx(2 * ARRAY / 4.8e12)  # 27.96 µs, the HBM term's
    # add: 64 KiB per SM → 6.408 TB/s of reads, × 3/2 = 9.61 TB/s > 4.8 TB/s: the memory's rate, 41.94 µs
    add = analyze(f"add(n={N}, dtype=fp32, impl=vectorized)", H200)
    assert add.term("mlp").time_s == pytest.approx(3 * ARRAY / 4.8e12)
    assert add.term("mlp").time_s == pytest.approx(41.94e-6, rel=1e-3)
    # the same logical work and compulsory bytes as the library add: only the achievable bandwidth differs
    library = analyze(f"add(n={N}, dtype=fp32, impl=library)", H200)
    assert (add.flop, add.bytes) == (library.flop, library.bytes)
    # 83.78 µs / 41.94 µs = 4.8 TB/s ÷ 2.403 TB/s = 1.9975
    assert library.bound_time / add.bound_time == pytest.approx(4.8e12 / (132 * 16_384 / 1.35e-6 * 1.5))


def test_the_derivation_has_the_little_lines() -> None:
    a = analyze(f"add(n={N}, dtype=fp32, impl=library)", H200)
    bodies = {step.label: step.body for step in a.steps}
    assert bodies["Bytes in flight per SM"] == "2,048 threads × 2 loads × 4 B = 16,384 B ≈ 16.38 kB"
    assert bodies["Reads the loads in flight allow (HBM loaded latency, nominal)"] == "132 SMs × 16.38 kB ÷ 1.35 µs = 1.602 TB/s"
    assert bodies["Achievable bandwidth"] == "min(4.8 TB/s, 1.602 TB/s × 201.3 MB ÷ 134.2 MB read) = 2.403 TB/s"
    line = next(step for step in a.steps if step.label.startswith("Memory-level-parallelism time bound"))
    assert line.body == "201.3 MB / (2.403 TB/s) = 83.78 µs"
    assert any("Little's law" in note and "nominal" in note for note in a.notes)
    # the CLI's JSON carries the term and the launch it rests on
    data = a.to_dict()
    assert any(term["name"] == "mlp" and term["time_s"] == a.term("mlp").time_s for term in data["terms"])
    assert data["physical"]["launches"] == [{
        "title": "CuPy elementwise add", "threads": N, "threads_per_block": 128, "bytes_per_load": 4,
        "loads_in_flight": 2, "read_bytes": 2 * ARRAY, "write_bytes": ARRAY,
    }]


def test_the_compulsory_pair_is_unchanged() -> None:
    a = analyze(f"add(n={N}, dtype=fp32)", H200)
    assert a.term("mlp") is None
    assert [term.name for term in a.terms][:2] == ["compute", "hbm"]
    assert a.memory_time == pytest.approx(3 * ARRAY / 4.8e12) and a.bound_time == pytest.approx(a.memory_time)


def test_two_library_kernels_add_their_times() -> None:
    # triad through two ufunc calls: multiply (1 load in flight: 1.602 TB/s, 134.2 MB: 83.78 µs) then
    # add (2 loads: 2.403 TB/s, 201.3 MB: 83.78 µs) = 167.6 µs over 335.5 MB (5 array passes)
    a = analyze(f"triad(n={N}, dtype=fp32, impl=library)", H200)
    assert a.term("mlp").amount == 5 * ARRAY
    assert a.term("mlp").time_s == pytest.approx(2 * 83.78e-6, rel=1e-3)


def test_a_small_launch_holds_fewer_threads_than_the_sm_could() -> None:
    # add(n=4096): ⌈4,096 threads ÷ 132 SMs⌉ = 32 threads per SM, 32 × 2 × 4 B = 256 B in flight:
    # 132 × 256 B ÷ 1.35 µs = 25.03 GB/s of reads, × 3/2 = 37.55 GB/s; 49,152 B ÷ 37.55 GB/s = 1.309 µs
    a = analyze("add(n=4096, dtype=fp32, impl=library)", H200)
    assert a.term("mlp").time_s == pytest.approx(49_152 / (132 * 256 / 1.35e-6 * 1.5), rel=1e-9)
    assert a.term("mlp").time_s == pytest.approx(1.309e-6, rel=1e-3)
    assert any("⌈4,096 threads ÷ 132 SMs⌉" in step.body for step in a.steps)


def test_a_declared_launch_gets_the_term() -> None:
    # 1,024 threads a block: min(32, 2048 / 1024 = 2) = 2 blocks = 2,048 threads; 1 load of 4 B: 8 KiB per SM:
    # 0.801 TB/s of reads, × 3/2 = 1.2015 TB/s; 201,326,592 B ÷ 1.2015 TB/s = 167.6 µs
    text = f"add(n={N}, dtype=fp32, threads_per_block=1024, bytes_per_load=4, loads_in_flight=1)"
    assert mlp_time(text) == pytest.approx(3 * ARRAY / (132 * 8192 / 1.35e-6 * 1.5))
    assert mlp_time(text) == pytest.approx(167.6e-6, rel=1e-3)
    # the keywords round-trip, all three written once one is given
    assert str(parse("add(n=2**24, loads_in_flight=2)")) == "add(n=2**24, dtype=fp32, threads_per_block=256, bytes_per_load=4, loads_in_flight=2)"


def test_no_latency_no_term() -> None:
    # the H100 SXM has no loaded latency in the catalogue: no term, and the bound is the HBM term
    a = analyze(f"add(n={N}, dtype=fp32, impl=library)", "h100-sxm")
    assert a.term("mlp") is None and a.limiter_term == "hbm"
    # nor on a CPU entry (its latency is nominal, but a CPU's launch is not modelled: no compute capability)
    assert analyze(f"add(n={N}, dtype=fp32, impl=library)", "cpu-generic").term("mlp") is None
    assert catalogue()["cpu-generic"].latency_of("hbm").origin == "nominal"


def test_a_sweep_has_the_term_analyze_has() -> None:
    sizes = np.array([2**10, 2**14, 2**18, 2**22, 2**24])
    swept = sweep("add(n=1024, dtype=fp32, impl=library)", {"n": sizes}, H200)
    term = swept.term("mlp")
    assert term is not None
    for index, n in enumerate(sizes):
        alone = analyze(f"add(n={int(n)}, dtype=fp32, impl=library)", H200)
        assert term.time_s[index] == pytest.approx(alone.term("mlp").time_s)
        assert swept.bound_time[index] == pytest.approx(alone.bound_time)
    declared = sweep("add(n=1024, dtype=fp32, loads_in_flight=1)", {"n": sizes}, H200)
    assert declared.term("mlp") is not None
