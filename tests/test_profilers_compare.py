"""A profiled kernel against its declared operation: traffic ratio, work ratio, duration over bound.

Each expected figure has its hand calculation beside it, as the seed's
worked example does: the vector add reads a and b and writes c, 2^24 fp32
elements each, so its compulsory traffic is 3 × 2^24 × 4 B = 201,326,592 B.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.model.analysis import analyze
from workbench.model.devices import find_device
from workbench.profilers import (
    NCU_CONDITIONS_NOTE,
    Comparison,
    MatchRule,
    compare,
    compare_profile,
    read_profile,
    read_profile_text,
)
from workbench.profilers.kernel_compare import profile_provenance, traffic_causes

DATA = Path(__file__).parent / "data"
H200 = find_device("h200-sxm")
ADD = "add(n=2**24, dtype=fp32)"
GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
RULES = [MatchRule("cupy_add", ADD), MatchRule("regex:xmma_gemm", GEMM)]


def _comparisons(name: str, device: object = H200, convention: str = "fma2") -> dict[str, Comparison]:
    profile = read_profile(DATA / name)
    return {c.declaration: c for c in compare_profile(profile, RULES, device, convention=convention)}


# ---------------------------------------------------------------- the vector add at the floor


def test_vector_add_traffic_ratio_from_exact_counters() -> None:
    add = _comparisons("ncu_raw.csv")[ADD]
    # compulsory: a and b read, c written, 2^24 × 4 B each
    #   read 2 × 67,108,864 = 134,217,728 B; write 67,108,864 B; total 201,326,592 B
    assert (add.compulsory_read, add.compulsory_write, add.compulsory_bytes) == (134_217_728, 67_108_864, 201_326_592)
    # actual, median of two launches: (134,221,312 + 67,109,632) = 201,330,944 and
    # (134,225,408 + 67,109,376) = 201,334,784 → median 201,332,864 B
    assert add.actual_bytes == 201_332_864
    # ratio 201,332,864 / 201,326,592 = 1 + 6,272 / 201,326,592 = 1.0000312
    assert add.traffic_ratio == pytest.approx(1.0000312, abs=1e-7)
    # reads: median(134,221,312, 134,225,408) = 134,223,360; / 134,217,728 = 1.0000420
    assert add.read_ratio == pytest.approx(1.0000420, abs=1e-7)
    assert add.traffic_verdict == "at the compulsory floor"
    assert add.traffic_causes == ()


def test_vector_add_traffic_ratio_from_auto_scaled_units() -> None:
    add = _comparisons("ncu_details.csv")[ADD]
    # per launch 134.22 + 67.11, 134.23 + 67.11, 134.21 + 67.11 MB → median 201.33 MB
    # 201,330,000 / 201,326,592 = 1.0000169
    assert add.actual_bytes == pytest.approx(201.33e6)
    assert add.traffic_ratio == pytest.approx(1.0000169, abs=1e-7)
    assert any("four significant digits" in note for note in add.notes)


def test_vector_add_work_and_time() -> None:
    add = _comparisons("ncu_raw.csv")[ADD]
    # fadd 16,777,216 + fmul 0 + 2 × ffma 0 = 16,777,216 FLOP = n logical additions
    assert add.achieved_flop == add.logical_flop == 16_777_216
    assert add.flop_ratio == 1.0 and add.flop_causes == ()
    # bound on the H200: 201,326,592 B / 4.8 TB/s = 41.943 µs (memory-limited)
    assert add.bound_time == pytest.approx(201_326_592 / 4.8e12)
    # duration: median(48,352, 48,189) ns = 48,270.5 ns; 48.2705 / 41.943 = 1.1509
    assert add.duration == pytest.approx(48_270.5e-9)
    assert add.duration_ratio == pytest.approx(48_270.5e-9 / (201_326_592 / 4.8e12))
    assert add.duration_ratio == pytest.approx(1.1509, abs=1e-4)
    # achieved bandwidth: 201,332,864 B / 48.2705 µs = 4.171 TB/s
    assert add.achieved_bandwidth == pytest.approx(4.171e12, rel=1e-3)


def test_vector_add_derivation_reads_like_the_worked_example() -> None:
    add = _comparisons("ncu_raw.csv")[ADD]
    labels = [step.label for step in add.steps]
    for label in (
        "Actual DRAM read (dram__bytes_read.sum)",
        "Actual DRAM write (dram__bytes_write.sum)",
        "Compulsory read (declared)",
        "Traffic ratio, actual / compulsory",
        "Achieved FLOP (counters, fma2)",
        "Work ratio, achieved / logical",
        "Profiled duration (gpu__time_duration.sum)",
        "Duration / bound",
    ):
        assert label in labels
    text = add.derivation_text()
    assert "201.3 MB / 201.3 MB = 1.000×" in text
    assert "fadd 16,777,216 + fmul 0 + 2 × ffma 0 = 16,777,216 FLOP" in text
    assert "a 67,108,864 B + b 67,108,864 B = 134,217,728 B ≈ 134.2 MB" in text
    assert "at the compulsory floor" in text


def test_the_ncu_conditions_note_travels_with_every_ncu_comparison() -> None:
    for comparison in _comparisons("ncu_raw.csv").values():
        assert comparison.notes[0] == NCU_CONDITIONS_NOTE
        assert "locks the GPU clocks to base" in comparison.notes[0]
        assert "flushes the caches" in comparison.notes[0]


# ---------------------------------------------------------------- the GEMM above the floor


def test_gemm_with_a_working_set_larger_than_l2_rereads_its_inputs() -> None:
    gemm = _comparisons("ncu_raw.csv")[GEMM]
    # compulsory: A, B read and C written, 4096² × 2 B = 33,554,432 B each → 100,663,296 B
    assert gemm.compulsory_bytes == 100_663_296
    # actual: reads median(118,730,752, 118,792,192) = 118,761,472; writes 33,556,352
    # (118,761,472 + 33,556,352) / 100,663,296 = 152,317,824 / 100,663,296 = 1.5131
    assert gemm.traffic_ratio == pytest.approx(1.5131, abs=1e-4)
    # 118,761,472 / 67,108,864 = 1.7697
    assert gemm.read_ratio == pytest.approx(1.7697, abs=1e-4)
    assert gemm.traffic_verdict == "above the compulsory floor"
    likely = {cause.name for cause in gemm.traffic_causes if cause.likely}
    assert likely == {"re-reads", "working set larger than L2"}
    # working set 100.7 MB against the H200's 50 MiB L2 (52,428,800 B = 52.43 MB)
    assert "100.7 MB working set > 52.43 MB L2" in next(
        cause.evidence for cause in gemm.traffic_causes if cause.name == "working set larger than L2"
    )
    assert [cause.name for cause in gemm.traffic_causes][:2] in (
        ["re-reads", "working set larger than L2"],
        ["working set larger than L2", "re-reads"],
    )


def test_gemm_tensor_counters_account_for_the_logical_work() -> None:
    gemm = _comparisons("ncu_raw.csv")[GEMM]
    # tensor pipe 137,438,953,472 + fmul 16,777,216 (alpha epilogue) = 137,455,730,688
    # / 2 × 4096³ = 137,438,953,472 → 1.000122, within 5 %: no cause to list
    assert gemm.achieved_flop == 137_455_730_688
    assert gemm.flop_ratio == pytest.approx(1.000122, abs=1e-6)
    assert gemm.flop_causes == ()
    assert gemm.roofline is not None and gemm.roofline.flop_source == "counters"
    # intensity 137,455,730,688 FLOP / 152,317,824 B = 902.4 FLOP/B
    assert gemm.roofline.intensity == pytest.approx(902.4, abs=0.1)


def test_gemm_without_tensor_counters_points_at_the_uncounted_pipe() -> None:
    gemm = _comparisons("ncu_details.csv")[GEMM]
    # only the epilogue's 16,777,216 fmul were counted: 16,777,216 / 137,438,953,472 = 1.22e-4
    assert gemm.flop_ratio == pytest.approx(16_777_216 / 137_438_953_472)
    first = gemm.flop_causes[0]
    assert first.name == "work on a pipe these counters miss" and first.likely
    assert any("sm__ops_path_tensor" in note for note in gemm.notes)
    # the roofline point falls back to the declared work rather than the 10^4-times-low count
    assert gemm.roofline is not None and gemm.roofline.flop_source == "declared"
    assert gemm.roofline.flop_rate == pytest.approx(137_438_953_472 / gemm.duration)


def test_naive_gemm_on_a_small_l2() -> None:
    profile = read_profile(DATA / "ncu_details_legacy.csv")
    (naive,) = compare_profile(
        profile, [MatchRule("naive_sgemm", "gemm(M=1024, N=1024, K=1024, dtype=fp32)")], "v100-sxm2"
    )
    # compulsory 3 × 1024² × 4 B = 12,582,912 B; actual median(201.33 + 4.19, 201.36 + 4.19) MB = 205.535 MB
    # 205,535,000 / 12,582,912 = 16.335
    assert naive.traffic_ratio == pytest.approx(16.335, abs=1e-3)
    assert naive.traffic_causes[0].likely
    # 2 × ffma 1,073,741,824 = 2 × 1024³: the work is exactly the logical work
    assert naive.flop_ratio == 1.0
    # bound: 2 × 1024³ FLOP / 15.7 TFLOP/s = 136.8 µs; duration median(5.91, 5.93) ms = 5.92 ms → 43.28×
    assert naive.duration_ratio == pytest.approx(5.92e-3 / (2 * 1024**3 / 15.7e12))
    names = [cause.name for cause in naive.time_causes]
    assert "extra DRAM traffic" in names and "base clocks under ncu" in names


def test_mac_convention_counts_each_fma_once() -> None:
    profile = read_profile(DATA / "ncu_details_legacy.csv")
    (naive,) = compare_profile(
        profile, [MatchRule("naive_sgemm", "gemm(M=1024, N=1024, K=1024, dtype=fp32)")], "v100-sxm2", convention="mac"
    )
    # mac: logical 1024³ = 1,073,741,824; achieved ffma 1,073,741,824 counted once
    assert naive.logical_flop == naive.achieved_flop == 1_073_741_824


# ---------------------------------------------------------------- causes from the numbers


def test_excess_reads_the_size_of_the_output_point_at_write_allocate() -> None:
    # a copy of 64 MiB that fits a 96 MiB L2: reads 128 MiB where 64 MiB were compulsory;
    # the 64 MiB excess equals the 64 MiB written
    mib = 2**20
    causes = traffic_causes(
        read_ratio=2.0,
        write_ratio=1.0,
        traffic_ratio=1.5,
        excess_read=64 * mib,
        compulsory_write=64 * mib,
        footprint=128 * mib,
        l2_capacity=256 * mib,
    )
    likely = [cause.name for cause in causes if cause.likely]
    assert likely[0] == "write-allocate" and "re-reads" not in likely


def test_writes_above_the_output_size_point_at_partial_sectors() -> None:
    causes = traffic_causes(1.0, 2.0, 1.33, 0, 100, 300, 10**9)
    assert [cause.name for cause in causes if cause.likely] == ["partial sectors"]


def test_traffic_below_the_floor() -> None:
    causes = traffic_causes(0.5, 0.5, 0.5, -50, 100, 300, 10**9)
    assert causes[0].name == "data already on chip" and causes[0].likely
    causes = traffic_causes(0.5, 0.5, 0.5, -50, 100, 300, 10)
    assert causes[0].name == "declaration larger than the kernel's work" and causes[0].likely


RAW_HEADER = (
    '"ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum",'
    '"sm__ops_path_tensor_src_tf32_dst_fp32.sum","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"\n'
    '"","","byte","byte","nsecond","","inst"\n'
)


def test_an_fp32_gemm_on_tensor_cores_ran_on_the_wrong_path() -> None:
    # gemm 1024³ fp32 declared (fp32 CUDA-core path); the kernel used TF32 tensor cores:
    # 2 × 1024³ = 2,147,483,648 tensor ops
    text = RAW_HEADER + '"0","cutlass_tf32_gemm","12,582,912","4,194,304","60,000","2,147,483,648","0"\n'
    kernel = read_profile_text(text, "tf32.csv").kernels()[0]
    comparison = compare(kernel, analyze("gemm(M=1024, N=1024, K=1024, dtype=fp32)", "h100-sxm"), find_device("h100-sxm"))
    assert comparison.flop_ratio == 1.0
    assert comparison.flop_causes[0].name == "wrong path" and comparison.flop_causes[0].likely
    assert "fp32 rate" in comparison.flop_causes[0].explanation


def test_an_fp16_gemm_on_cuda_cores_ran_on_the_wrong_path() -> None:
    # declared fp16 on tensor cores; the kernel issued 1024³ FFMA and no tensor ops
    text = RAW_HEADER + '"0","naive_hgemm","12,582,912","4,194,304","600,000","0","1,073,741,824"\n'
    kernel = read_profile_text(text, "naive.csv").kernels()[0]
    comparison = compare(kernel, analyze("gemm(M=1024, N=1024, K=1024, dtype=fp16)", "h100-sxm"))
    assert comparison.flop_ratio == 1.0
    cause = comparison.flop_causes[0]
    assert cause.name == "wrong path" and cause.likely and "fp16_tc" in cause.explanation


def test_padded_tiles_do_more_than_the_logical_work() -> None:
    # declared 4000³; the kernel computed 4096³ tiles: 2 × 4096³ / (2 × 4000³) = 1.0737
    text = RAW_HEADER.replace("tf32", "fp16") + '"0","padded_gemm","96,000,000","32,000,000","200,000","137,438,953,472","0"\n'
    kernel = read_profile_text(text, "padded.csv").kernels()[0]
    comparison = compare(kernel, analyze("gemm(M=4000, N=4000, K=4000, dtype=fp16)", "h100-sxm"))
    assert comparison.flop_ratio == pytest.approx(4096**3 / 4000**3)
    assert comparison.flop_causes[0].name == "padding" and comparison.flop_causes[0].likely


# ---------------------------------------------------------------- devices, nsys, JSON


def test_the_gpu_named_in_the_file_supplies_the_bound() -> None:
    comparisons = compare_profile(read_profile(DATA / "ncu_raw.csv"), RULES)
    assert all(c.bound_time is not None and c.l2_capacity == H200.l2_bytes for c in comparisons)


def test_a_compute_capability_alone_places_the_kernel_on_a_gpu_of_that_architecture() -> None:
    profile = read_profile(DATA / "ncu_details.csv")  # no device name, only "CC 9.0" and its clocks
    provenance = profile_provenance(profile)
    assert provenance.kind == "gpu" and provenance.compute_capability == "9.0" and provenance.stated
    assert provenance.catalogue_key == "h200-sxm"  # the first Hopper entry; the others are named
    assert "compute capability 9.0" in provenance.matched_by and "H100" in provenance.matched_by
    assert provenance.clocks_hz["dram"] == pytest.approx(3.20e9) and provenance.clocks_hz["sm"] == pytest.approx(1.59e9)
    add = {c.declaration: c for c in compare_profile(profile, RULES)}[ADD]
    # 201,326,592 B / 4.8 TB/s = 41.94 µs, never a CPU's or another session device's bound
    assert add.bound_time == pytest.approx(201_326_592 / 4.8e12)


def test_without_a_device_bytes_and_work_are_still_compared() -> None:
    from dataclasses import replace

    stated = read_profile(DATA / "ncu_details.csv")
    profile = replace(stated, launches=tuple(replace(launch, compute_capability="") for launch in stated.launches))
    assert not profile_provenance(profile).kind
    add = {c.declaration: c for c in compare_profile(profile, RULES)}[ADD]
    assert add.bound_time is None and add.duration_ratio is None
    assert add.traffic_ratio == pytest.approx(1.0000169, abs=1e-7)
    assert any("no time bound" in note for note in add.notes)


def test_nsys_kernel_time_against_the_bound() -> None:
    comparisons = _comparisons("nsys_cuda_gpu_kern_sum.csv")
    add = comparisons[ADD]
    # median 48,064 ns against 41.943 µs: 1.1459
    assert add.duration_ratio == pytest.approx(48_064e-9 / (201_326_592 / 4.8e12))
    assert add.actual_bytes is None and add.traffic_ratio is None
    assert "nsys times each kernel" in add.notes[0]
    assert "nsys records no memory counters" in add.derivation_text()


def test_comparisons_serialise_to_json() -> None:
    for comparison in _comparisons("ncu_raw.csv").values():
        data = json.loads(json.dumps(comparison.to_dict()))
        assert data["traffic_ratio"] == pytest.approx(comparison.traffic_ratio)
        assert data["steps"][0]["label"].startswith("Actual DRAM read")
        assert data["roofline"]["intensity_flop_per_byte"] > 0
