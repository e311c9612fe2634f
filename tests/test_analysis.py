"""analyze(): the seed's worked example to the digit, overlap, limiter, devices, sweeps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.model.analysis import analyze, parse_overlap, sweep
from workbench.model.devices import find_device
from workbench.errors import DeclarationError, DeviceError, UnitError
from workbench.model.scratchpad import evaluate

WORKED = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def worked() -> object:
    return analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s")


def test_worked_example_to_the_digit() -> None:
    a = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s")
    assert a.flop == 137_438_953_472
    assert [t.bytes for t in a.tensors] == [33_554_432] * 3
    assert a.bytes == 100_663_296
    # 137,438,953,472 / 1e14 = 1.37439 ms ; 100,663,296 / 2.5e12 = 40.265 µs
    assert a.compute_time == pytest.approx(1.37438953472e-3)
    assert a.memory_time == pytest.approx(40.2653184e-6)
    assert a.limiter == "compute"
    assert a.bound_time == a.compute_time
    assert a.ridge == pytest.approx(40.0)
    text = a.derivation_text()
    for figure in ("137,438,953,472 FLOP", "33,554,432 B", "100,663,296 B", "100.7 MB", "1.374 ms", "40.27 µs"):
        assert figure in text
    assert a.limiter_sentence() == "compute-limited: the fp16_tc path needs 1.374 ms, HBM traffic 40.27 µs"
    assert a.compute_rate.source == "entered" and a.bandwidth.source == "entered"


def test_vector_add_practice() -> None:
    a = analyze("add(n=2**24, dtype=fp32)", device="h100-sxm")
    assert a.flop == 16_777_216
    assert a.bytes == 201_326_592
    assert a.intensity == pytest.approx(1 / 12)
    assert "(= 1/12)" in a.derivation_text()
    assert a.limiter == "memory"
    # 201,326,592 B / 3.35e12 B/s = 60.1 µs
    assert a.memory_time == pytest.approx(201_326_592 / 3.35e12)


def test_knowledge_check_through_the_scratchpad() -> None:
    # 200 GFLOP / 80 GB = 2.5 FLOP/B
    assert evaluate("200 GFLOP / (80 GB)", to="FLOP/B").magnitude == pytest.approx(2.5)
    assert evaluate("137.4 GFLOP / (100 TFLOP/s)", to="ms").magnitude == pytest.approx(1.374)
    with pytest.raises(UnitError, match="information·time/computation"):
        evaluate("100.7 MB / (100 TFLOP/s)", to="s")


def test_overlap_combinations() -> None:
    full = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s", overlap="full")
    none = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s", overlap="none")
    half = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s", overlap=0.5)
    tc, tm = full.compute_time, full.memory_time
    assert full.bound_time == max(tc, tm)
    assert none.bound_time == pytest.approx(tc + tm)
    # max + (1 - 0.5) * min
    assert half.bound_time == pytest.approx(tc + 0.5 * tm)
    assert full.bound_no_overlap == none.bound_time
    assert any(step.label == "Bound, overlap f = 0.5" for step in half.steps)
    for bad in ("some", 1.5, -0.1, True):
        with pytest.raises(UnitError):
            parse_overlap(bad)


def test_mac_convention_halves_the_product() -> None:
    a = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s", convention="mac")
    assert a.flop == 68_719_476_736
    assert "MAC" in a.derivation_text()
    with pytest.raises(UnitError):
        analyze(WORKED, convention="fma3")


def test_device_rates_and_paths() -> None:
    a = analyze(WORKED, device="H100 SXM")
    assert a.path == "fp16_tc"
    assert a.compute_rate.value == 989e12 and a.compute_rate.source == "datasheet"
    assert a.bandwidth.value == 3.35e12
    # V100 has no FP64 tensor path: cuBLAS uses the FP64 units
    v = analyze("gemm(M=1024, N=1024, K=1024, dtype=fp64)", device="v100-sxm2")
    assert v.path == "fp64" and v.compute_rate.value == 7.8e12
    assert any("no fp64_tc rate" in note for note in v.notes)
    # fp32 elementwise → fp32 CUDA-core path
    assert analyze("triad(n=2**20, dtype=fp32)", device="a100-sxm-80gb").path == "fp32"
    # a GeForce card's fp16-accumulate path runs at twice the rate
    fast = analyze("gemm(M=4096, N=4096, K=4096, dtype=fp16, acc=fp16)", device="rtx-4090")
    slow = analyze(WORKED, device="rtx-4090")
    assert fast.compute_rate.value == 2 * slow.compute_rate.value
    # int8 runs on the tensor cores where the sheet gives a rate (H100 SXM: 1979 TOPS dense), and has no rate on a V100
    assert analyze("gemm(M=64, N=64, K=64, dtype=int8)", device="h100-sxm").compute_rate.value == 1979e12
    with pytest.raises(DeviceError, match="no rate for the int8_tc path"):
        analyze("gemm(M=64, N=64, K=64, dtype=int8)", device="v100-sxm2")
    with pytest.raises(DeviceError, match="unknown device"):
        analyze(WORKED, device="Voodoo 2")


def test_entered_rates_override_the_device_and_measured_override_datasheet() -> None:
    device = find_device("h100-sxm").with_rate("fp16_tc", 700e12, "measured")
    a = analyze(WORKED, device=device)
    assert a.compute_rate.value == 700e12 and a.compute_rate.source == "measured"
    b = analyze(WORKED, device=device, rate="100 TFLOP/s")
    assert b.compute_rate.source == "entered"
    with pytest.raises(UnitError, match="FLOP/s"):
        analyze(WORKED, rate="2.5 TB/s")
    with pytest.raises(UnitError, match="positive"):
        analyze(WORKED, rate="-1 TFLOP/s")


def test_device_memory_overflow_is_refused() -> None:
    # 3 * (2^17)^2 * 2 B ≈ 103 GB > 80 GB of an H100
    with pytest.raises(DeclarationError, match="more than the 80 GB"):
        analyze("gemm(M=2**17, N=2**17, K=2**17, dtype=fp16)", device="h100-sxm")


def test_without_rates_work_and_bytes_still_come() -> None:
    a = analyze(WORKED)
    assert a.flop == 137_438_953_472 and a.compute_time is None and a.limiter is None
    assert "choose a device" in a.limiter_sentence()


def test_copy_has_no_work_and_is_memory_limited() -> None:
    a = analyze("copy(n=2**20, dtype=fp32)", device="h200")
    assert a.flop == 0 and a.intensity == 0 and a.limiter == "memory"


def test_to_dict_is_what_the_cli_prints() -> None:
    d = worked().to_dict()
    for key in (
        "declaration", "convention", "flop", "bytes", "tensors", "intensity_flop_per_byte",
        "compute_rate_flop_per_s", "bandwidth_byte_per_s", "compute_time_s", "memory_time_s",
        "bound_time_s", "limiter", "ridge_flop_per_byte", "flop_terms", "steps",
    ):
        assert key in d
    assert d["flop"] == 137_438_953_472 and isinstance(d["flop"], int)
    assert d["bytes"] == 100_663_296
    assert d["tensors"][0] == {"name": "A", "role": "read", "shape": [4096, 4096], "dtype": "fp16", "bytes": 33_554_432, "note": ""}
    assert d["flop_terms"] == {"product A·B": 137_438_953_472}
    assert d["steps"][0]["label"].startswith("Work")


def test_binary_units_in_the_derivation() -> None:
    text = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s", binary=True).derivation_text()
    assert "96 MiB" in text and "100.7 MB" not in text


def test_l2_resident_working_set_is_flagged() -> None:
    a = analyze("add(n=2**20, dtype=fp32)", device="h100-sxm")  # 12.6 MB < 50 MB L2
    assert any("fits in L2" in note for note in a.notes)


def test_sweep_matches_analyze_at_sample_points() -> None:
    sizes = np.array([2**10, 2**12, 3000])
    s = sweep(WORKED, {"M": sizes, "N": sizes, "K": sizes}, device="h100-sxm")
    for i, size in enumerate(sizes):
        a = analyze(f"gemm(M={size}, N={size}, K={size}, dtype=fp16)", device="h100-sxm")
        assert s.flop[i] == pytest.approx(a.flop)
        assert s.bytes[i] == pytest.approx(a.bytes)
        assert s.bound_time[i] == pytest.approx(a.bound_time)


def test_sweep_of_batch_and_stream() -> None:
    batches = np.arange(1, 5)
    s = sweep("gemm(M=64, N=64, K=64, batch=2, dtype=fp32, beta=1)", {"batch": batches}, rate="1 TFLOP/s", bandwidth="1 TB/s")
    # per batch: 2*64^3 + 2*64^2 = 532,480 FLOP
    assert list(s.flop) == [532_480 * b for b in batches]
    s2 = sweep("attention(B=1, H=1, Sq=8, Skv=8, D=4, causal=true)", {"Sq": np.array([4, 8])}, device="h100-sxm")
    assert math.isclose(s2.flop[1], analyze("attention(B=1, H=1, Sq=8, Skv=8, D=4, causal=true)").flop)
    with pytest.raises(DeclarationError):
        sweep(WORKED, {"Z": np.array([1])}, device="h100-sxm")
    refused = sweep(WORKED, {"M": np.array([0, 1])}, device="h100-sxm")  # M=0 is refused as analyze refuses it
    assert list(refused.valid) == [False, True] and math.isnan(refused.flop[0])
    assert isinstance(refused.first_error, DeclarationError) and str(refused.first_error) == "M must be a positive integer; got 0"


def test_the_memory_roof_is_named_after_the_device_memory() -> None:
    # HBM parts say HBM; GDDR cards and CPUs say DRAM, in the derivation and the limiter sentence
    h100 = analyze("add(n=2**24, dtype=fp32)", device="h100-sxm")
    assert h100.interface == "HBM → on-chip caches" and "HBM traffic needs" in h100.limiter_sentence()
    for key in ("rtx-4090", "l40s", "cpu-generic"):
        a = analyze("add(n=2**24, dtype=fp32)", device=key)
        assert a.memory_name == "DRAM" and a.interface == "DRAM → on-chip caches"
        assert "DRAM traffic needs" in a.limiter_sentence()
        assert "HBM" not in a.derivation_text()
    assert analyze(WORKED).to_dict()["memory"] == "HBM"


def test_a_rate_typed_as_text_is_parsed_once() -> None:
    from workbench.model.analysis import _rate_text_value

    _rate_text_value.cache_clear()
    first = analyze(WORKED, rate="123 TFLOP/s", bandwidth="2.5 TB/s")
    second = analyze(WORKED, rate="123 TFLOP/s", bandwidth="2.5 TB/s")
    assert first.compute_rate == second.compute_rate and first.compute_rate.value == 123e12
    info = _rate_text_value.cache_info()
    assert (info.misses, info.hits) == (2, 2)
    for _ in range(2):  # a bad text is refused every time, not remembered as a number
        with pytest.raises(UnitError):
            analyze(WORKED, rate="123 TB/s")


def _byte_steps(declaration: str) -> dict[str, tuple[str, str]]:
    return {s.label.split("[")[0].removeprefix("Bytes: "): (s.expression, s.result) for s in analyze(declaration).steps if s.label.startswith("Bytes: ") and "[" in s.label}


def test_a_sub_byte_tensor_says_it_is_rounded_up_to_whole_bytes() -> None:
    """3 × 3 fp4 values are 4.5 B of data; the tensor takes 5 B, and the step says why."""
    steps = _byte_steps("gemm(M=3, N=3, K=3, dtype=fp4, beta=1)")
    expression, result = steps["A"]
    assert expression == "⌈M·K × 4 bit / 8⌉ = ⌈3 × 3 × 4 bit / 8⌉ = 4.5 B rounded up to whole bytes"
    assert result.startswith("5 B")
    expression, result = steps["C"]  # read and written: each pass takes whole bytes
    assert expression.endswith("= (4.5 B rounded up to 5 B) × 2 (read+write)")
    assert result.startswith("10 B")


def test_a_sub_byte_tensor_that_fills_its_bytes_keeps_the_plain_step() -> None:
    expression, result = _byte_steps("gemm(M=4, N=4, K=4, dtype=fp4)")["A"]
    assert expression == "M·K × 4 bit / 8 = 4 × 4 × 4 bit / 8"
    assert result.startswith("8 B")
