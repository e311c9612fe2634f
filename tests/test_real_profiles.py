"""Profiler files taken unmodified from public projects (../shared/real-profiles, see its SOURCES.md), read in place.

Every figure below was read off the file by hand (the row it comes from is named beside it). The files are
not copied into the project: where ../shared is absent (a clone outside this layout) these tests skip.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.profilers import read_profile
from workbench.profilers.trace_reader import read_trace

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "real-profiles"


def real(name: str) -> Path:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{path} is absent: the real profiler files live beside the checkout in ../shared/real-profiles")
    return path


# ---------------------------------------------------------------- Nsight Compute


def test_cutlass_gemm_details_page_whose_rows_end_early() -> None:
    """RTX 5090 details page: metric rows have 16 of the header's 20 cells (the rule columns left off)."""
    profile = read_profile(real("ncu-details-rtx5090-cutlass-gemm.csv"))
    (kernel,) = profile.kernels()
    assert kernel.name == "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>(Params)"
    assert kernel.instances == 1
    (launch,) = kernel.launches
    assert launch.device == "0" and launch.compute_capability == "12.0" and launch.process_id == 1742833
    assert launch.grid_size == (332, 1, 1) and launch.block_size == (256, 1, 1)
    assert kernel.duration is not None and kernel.duration.value == pytest.approx(111.81e-6)  # "gpu__time_duration.sum","us","111.81"
    assert kernel.dram.read is not None and kernel.dram.read.value == pytest.approx(17.50e6)  # "dram__bytes_read.sum","Mbyte","17.50"
    assert kernel.dram.write is not None and kernel.dram.write.value == 0  # "dram__bytes_write.sum","byte","0"
    assert kernel.achieved_flop() == 12_532_580_352  # "sm__ops_path_tensor_src_bf16_dst_fp32.sum","","12,532,580,352"
    # the rows that carry a rule (their cells run to the header's width) are read as rules
    assert any(rule.startswith("SOLBottleneck: This workload exhibits low compute throughput") for rule in launch.rules)
    assert launch.metrics["L2 Hit Rate"].value == pytest.approx(80.44)  # Memory Workload Analysis, "%","80.44"


def test_gemv_details_page() -> None:
    (kernel,) = read_profile(real("ncu-details-rtx5090-gemv.csv")).kernels()
    assert kernel.name.startswith("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16")
    assert kernel.duration is not None and kernel.duration.value == pytest.approx(6.75e-6)  # "us","6.75"
    assert kernel.dram.read is not None and kernel.dram.read.value == pytest.approx(2.33e6)  # "Mbyte","2.33"
    assert kernel.achieved_flop() == 0  # sm__ops_path_tensor_src_bf16_dst_fp32.sum "0" (bf16_dst_bf16 "n/a")
    (launch,) = kernel.launches
    assert launch.grid_size == (224, 1, 1) and launch.block_size == (32, 4, 1)
    assert launch.metrics["Elapsed Cycles"].value == 13_485  # "cycle","13,485"


def test_roofline_section_exported_alone_with_a_body_item_label_column() -> None:
    """A section on its own: 21 columns (Body Item Label before Metric Name), rows of 17 cells."""
    (kernel,) = read_profile(real("ncu-section-roofline-rtx5090-gemv.csv")).kernels()
    (launch,) = kernel.launches
    metrics = launch.metrics
    assert metrics["Theoretical Predicated-On FFMA Thread Instructions Executed"].value == 21_760  # "inst/cycle","21,760"
    assert metrics["SM Frequency"].value == pytest.approx(2.15e9)  # first under 'Single Precision Roofline', "Ghz","2.15"
    assert metrics["DRAM Frequency"].value == pytest.approx(13.72e9)
    # the same label under another body item is kept apart by that item's label
    assert metrics["DRAM Bandwidth"].value == pytest.approx(345.14e9)  # 'Single Precision Achieved Value', "Gbyte/s"
    assert metrics["DRAM Bandwidth [Double Precision Achieved Value]"].value == pytest.approx(345.14e9)
    assert metrics["Predicated-On FFMA Operations Per Cycle"].value == pytest.approx(158.12)
    assert launch.rules and launch.rules[0].startswith("SOLFPRoofline: The ratio of peak float (fp32) to double (fp64)")


def test_captured_stdout_of_a_cc_10_part_in_base_units() -> None:
    """SuperBench's captured ncu stdout: ==PROF== lines and the program's own output before the header; hz and ns."""
    profile = read_profile(real("ncu-details-sm100-cublaslt-fp8.log"))
    (kernel,) = profile.kernels()
    assert kernel.name == (
        "cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32_f16_f16_64x256x128_1x1x1_0_tnn_align4_1sm_bias_f16_relu_aux_scalemax"
    )
    (launch,) = kernel.launches
    assert launch.compute_capability == "10.0" and launch.process_name == "cublaslt_gemm" and launch.process_id == 371693
    assert launch.grid_size == (9, 32, 1) and launch.block_size == (384, 1, 1)
    assert kernel.duration is not None and kernel.duration.value == pytest.approx(406_240e-9)  # "Duration","ns","406240"
    assert launch.metrics["SM Frequency"].value == pytest.approx(1_239_496_049.13)  # "hz"
    assert launch.metrics["# SMs"].value == 152
    assert launch.metrics["Dynamic Shared Memory Per Block"].value == 205_696  # "byte/block"


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "name", ["ncu-details-rtx5090-cutlass-gemm.csv", "ncu-details-rtx5090-gemv.csv", "ncu-section-roofline-rtx5090-gemv.csv"]
)
def test_import_ncu_on_rows_that_end_early_gives_the_figures_of_the_page_padded(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = real(name)
    with source.open(newline="") as handle:
        rows = list(csv.reader(handle))
    width = len(rows[0])
    assert any(len(row) < width for row in rows[1:])  # the file as ncu wrote it: rows short of the header
    padded = tmp_path / name
    with padded.open("w", newline="") as handle:
        csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(row + [""] * (width - len(row)) for row in rows)
    as_written = _json(capsys, "import-ncu", str(source))
    as_padded = _json(capsys, "import-ncu", str(padded))
    assert as_written["kernels"] == as_padded["kernels"]
    assert as_written["profile"]["launches"] == as_padded["profile"]["launches"]
    assert as_written["kernels"]


def test_a_row_longer_than_the_header_or_stopping_before_its_value_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = real("ncu-details-rtx5090-gemv.csv").read_text().splitlines()
    longer = tmp_path / "longer.csv"
    longer.write_text("\n".join([lines[0], lines[1] + ',"a","b","c","d","e"', *lines[2:]]) + "\n")
    assert main(["import-ncu", str(longer)]) == 2
    assert "line 2: 21 fields where the header (line 1) has 20" in capsys.readouterr().err
    cut = tmp_path / "cut.csv"
    cut.write_text("\n".join([lines[0], lines[1].rsplit(",", 3)[0], *lines[2:]]) + "\n")  # stops at Metric Name
    assert main(["import-ncu", str(cut)]) == 2
    assert "line 2: 13 fields where the header (line 1) has 20" in capsys.readouterr().err
    open_quote = tmp_path / "open.csv"
    open_quote.write_text("\n".join([lines[0], lines[1] + '"still open']) + "\n")
    assert main(["import-ncu", str(open_quote)]) == 2
    assert "not valid CSV" in capsys.readouterr().err


# ---------------------------------------------------------------- Nsight Systems


def test_nsys_kernel_summary_rtx5090_all_stages() -> None:
    profile = read_profile(real("nsys-kern-sum-rtx5090-allstage.csv"))
    kernels = profile.kernels()
    assert len(kernels) == 113
    first = kernels[0]  # 24.9 %, 1,231,822,285 ns over 329,035 instances, median 3712.0 ns
    assert first.instances == 329_035
    assert first.total_time == pytest.approx(1.231822285)
    assert first.duration is not None and first.duration.value == pytest.approx(3.712e-6)
    assert sum(kernel.instances for kernel in kernels) == 1_695_983


def test_nsys_kernel_summary_rtx5090_prefill() -> None:
    kernels = read_profile(real("nsys-kern-sum-rtx5090-prefill.csv")).kernels()
    assert len(kernels) == 97
    first = kernels[0]  # 16,214,877 ns, 2035 instances, median 8000.0 ns
    assert first.name == "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(T1::Params)"
    assert first.instances == 2035 and first.duration is not None and first.duration.value == pytest.approx(8.0e-6)


def test_nsys_kernel_summary_rtx4090_from_a_report() -> None:
    kernels = read_profile(real("nsys-kern-sum-rtx4090-dotllm.csv")).kernels()
    assert len(kernels) == 15
    first = kernels[0]  # flash_attention_prefill_f16: 99,385,786 ns, 32 instances, median 3,041,179.0 ns
    assert first.name == "flash_attention_prefill_f16" and first.instances == 32
    assert first.duration is not None and first.duration.value == pytest.approx(3.041179e-3)


A100_TRACE = "nsys-trace-a100-unified-memory-add.sqlite"
STEP = "add1 = add(n=2**28, dtype=fp32)\n"


def test_nsys_sqlite_trace_names_its_gpu_and_its_migrations() -> None:
    trace = read_trace(real(A100_TRACE))
    assert len(trace) == 1_793  # one kernel and 1,792 migrations
    (gpu,) = trace.gpus
    assert (gpu.device_id, gpu.name, gpu.memory_bytes, gpu.bus) == (0, "NVIDIA A100-SXM4-40GB", 42_297_524_224, "0000:03:00.0")
    assert gpu.compute_capability == "8.0"
    counts = {name: count for name, count in ((trace.names[i], n) for i, n, _ in trace.name_totals())}
    assert counts == {
        "add(int, float *, float *)": 1,  # the demangled name (shortName 'add')
        "[CUDA memcpy Unified Host-to-Device]": 256,  # copyKind 11
        "[CUDA memcpy Unified Device-to-Host]": 1_536,  # copyKind 12
    }


def test_step_on_the_a100_trace_uses_the_a100_and_says_a_different_device_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    step = tmp_path / "um.step"
    step.write_text(STEP)
    trace = str(real(A100_TRACE))
    # add over 2**28 fp32: x and y read, y written, 3 × 2**28 × 4 B = 3,221,225,472 B over the HBM:
    a100 = 3_221_225_472 / 1555e9  # A100 SXM 40 GB, 1,555 GB/s: 2.0715 ms (an RTX 4090's 1,008 GB/s: 3.196 ms)

    assert main(["step", str(step), "--trace", trace]) == 0
    out = capsys.readouterr().out
    assert "ran on NVIDIA A100-SXM4-40GB" in out and "note:" not in out
    assert main(["step", str(step), "--trace", trace, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (op,) = data["operations"]
    assert op["bound_s"] == pytest.approx(a100)
    assert op["trace"]["name_full"] == "add(int, float *, float *)" and op["trace"]["name_short"] == "add"
    assert data["trace"]["ran_on"] == {"gpu": "NVIDIA A100-SXM4-40GB", "device": "a100-sxm-40gb", "note": ""}

    assert main(["step", str(step), "--trace", trace, "--device", "rtx-4090"]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if "A100-SXM4-40GB" in line and "note:" in line]
    assert notes == [
        "  note: the trace ran on GPU 0, NVIDIA A100-SXM4-40GB, not on the NVIDIA GeForce RTX 4090 chosen: "
        "its bounds use a100-sxm-40gb (NVIDIA A100 SXM 40 GB)"
    ]
    assert "[CUDA memcpy Unified Host-to-Device]" in out and "[CUDA memcpy Unified Device-to-Host]" in out
    assert "Unknown" not in out
    assert main(["step", str(step), "--trace", trace, "--device", "rtx-4090", "--json"]) == 0
    (op,) = json.loads(capsys.readouterr().out)["operations"]
    assert op["bound_s"] == pytest.approx(a100)  # never the RTX 4090's bound for what ran on the A100
