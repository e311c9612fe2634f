"""Profiles as real machines write them: each format variant read to figures worked out by hand.

The fixtures under tests/data/formats/ are written after NVIDIA's documented
output and public examples of it (one file per variant); the figures below
are computed by hand from the text of each file, not by the reader.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.profilers import Kernel, ProfileError, read_profile, read_profile_text
from workbench.profilers.numbers import ASSUMED, CHOSEN, COMMA, DECIDED, PERIOD, classify, is_ambiguous

DATA = Path(__file__).parent / "data"
FORMATS = DATA / "formats"


def _kernel(path: Path, name: str, decimal_mark: str | None = None) -> Kernel:
    profile = read_profile(path, decimal_mark=decimal_mark)
    return next(kernel for kernel in profile.kernels() if kernel.base_name == name)


# ---------------------------------------------------------------- number formats, value by value


@pytest.mark.parametrize(
    ("text", "percent", "whole", "expected"),
    [
        ("9.437.184", False, False, COMMA),  # two grouping periods
        ("5,712,096", False, False, PERIOD),  # two grouping commas
        ("1,234.56", False, False, PERIOD),  # both marks, period last
        ("1.234,5", False, False, COMMA),  # both marks, comma last
        ("71,25", False, False, COMMA),  # a comma before two digits
        ("231.55", False, False, PERIOD),
        ("0.123", False, False, PERIOD),  # no grouping starts with 0
        ("1234,567", False, False, COMMA),  # nor with four digits
        ("1.5e-05", False, False, PERIOD),
        ("12.345", True, False, PERIOD),  # a percentage: 12,345 % is no share
        ("1.234", False, True, COMMA),  # whole launches: the period groups
        ("231.552", False, False, None),  # either way
        ("1,234", False, False, None),
        ("33554432", False, False, None),
        ("NVIDIA H100", False, False, None),
        ("(65536, 1, 1)", False, False, None),
    ],
)
def test_a_value_shows_its_decimal_mark_only_when_it_reads_one_way(
    text: str, percent: bool, whole: bool, expected: str | None
) -> None:
    found = classify(text, percent, whole)
    assert (found[0] if found else None) == expected
    assert is_ambiguous(text) == (text in ("231.552", "1,234", "12.345", "1.234"))


# ---------------------------------------------------------------- the corpus, variant by variant

# (file, kernel base name, launches, duration s, DRAM read B, DRAM write B, decimal mark, how decided)
NCU_FIGURES = [
    # ncu 2025 on a Windows machine with a German locale, --print-units base: "231.552" ns, "9.437.184" byte.
    ("ncu_details_comma_decimal.csv", "ampere_sgemm_128x64_nn", 1, 231_552e-9, 9_437_184, 4_194_304, COMMA, DECIDED),
    # --print-units base, period locale: 48,352 and 48,192 ns; median 48,272 ns; reads 134,221,312 and 134,225,408.
    ("ncu_details_base_units.csv", "cupy_add__float32_float32_float32", 2, 48_272e-9, 134_223_360, 67_108_864, PERIOD, DECIDED),
    # Two MPI ranks, IDs restarting at 0 in each: 4 launches; durations 1.021/1.019/1.025/1.023 ms, median 1.022 ms.
    ("ncu_details_two_processes.csv", "triad", 4, 1.022e-3, 268_440_000, 134_220_000, PERIOD, DECIDED),
    # Every value "1.234", no witness: the period assumed: 1.234 µs, 1.234 kB.
    ("ncu_details_all_ambiguous.csv", "scale_kernel", 1, 1.234e-6, 1_234, 1_234, PERIOD, ASSUMED),
    # Raw page with a unit row, comma locale: 168.224 and 167.904 µs in ns, median 168.064 µs.
    ("ncu_raw_comma_decimal.csv", "vector_add", 2, 168_064e-9, 134_223_360, 67_109_504, COMMA, DECIDED),
    # Raw page without a unit row: base units assumed, plain integers.
    ("ncu_raw_no_unit_row.csv", "copy_kernel", 1, 26_176e-9, 33_554_432, 33_554_432, PERIOD, ASSUMED),
    # The original corpus: auto-scaled units (details), base units with a unit row (raw), the old column set.
    ("../ncu_details.csv", "cupy_add__float32_float32_float32", 3, 48.35e-6, 134_220_000, 67_110_000, PERIOD, DECIDED),
    ("../ncu_raw.csv", "cupy_add__float32_float32_float32", 2, 48_270.5e-9, 134_223_360, 67_109_504, PERIOD, DECIDED),
]


@pytest.mark.parametrize(("name", "kernel", "launches", "seconds", "read", "write", "mark", "how"), NCU_FIGURES)
def test_ncu_variants_give_the_hand_worked_figures(
    name: str, kernel: str, launches: int, seconds: float, read: int, write: int, mark: str, how: str
) -> None:
    path = FORMATS / name
    profile = read_profile(path)
    found = _kernel(path, kernel)
    assert found.instances == launches
    assert found.duration is not None and found.duration.value == pytest.approx(seconds, rel=1e-9)
    assert found.dram.read is not None and found.dram.read.value == pytest.approx(read, rel=1e-9)
    assert found.dram.write is not None and found.dram.write.value == pytest.approx(write, rel=1e-9)
    assert profile.number_format is not None
    assert (profile.number_format.decimal, profile.number_format.how) == (mark, how)
    assert profile.number_format.note() in profile.notes


def test_the_comma_decimal_details_page_gives_231_552_us_and_exact_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    found = _kernel(FORMATS / "ncu_details_comma_decimal.csv", "ampere_sgemm_128x64_nn")
    assert found.duration is not None and found.duration.value == pytest.approx(231.552e-6, rel=1e-12)
    assert found.dram.read is not None and found.dram.read.value == 9_437_184
    assert found.dram.write is not None and found.dram.write.value == 4_194_304
    launch = found.launches[0]
    assert launch.value("Memory Throughput") == pytest.approx(71.25)  # "71,25" %
    assert launch.value("Elapsed Cycles") == 368_412  # "368.412" cycle
    assert found.achieved_flop() == 2 * 1_073_741_824  # "1.073.741.824" ffma
    assert main(["import-ncu", str(FORMATS / "ncu_details_comma_decimal.csv")]) == 0
    out = capsys.readouterr().out
    assert "231.6 µs" in out and "9.437 MB" in out and "4.194 MB" in out
    assert "numbers read with the comma as decimal mark (1.234,5), decided from line 5: '9.501.000.000'" in out


# (file, layout, [(kernel, instances, median-or-mean s, total s)], decimal mark)
NSYS_FIGURES = [
    ("../nsys_cuda_gpu_kern_sum.csv", "cuda_gpu_kern_sum", [("cupy_add__float32_float32_float32", 30, 48_064e-9, 1_443_328e-9)], PERIOD),
    ("../nsys_gpukernsum_legacy.csv", "gpukernsum", [("ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_nn", 30, 196_896e-9, 5_906_880e-9)], PERIOD),
    ("nsys_gpukernsum_no_stddev.csv", "gpukernsum", [("vectorized_elementwise_kernel", 60, 77_693.9e-9, 4_661_632e-9)], PERIOD),
    ("nsys_cuda_gpu_kern_sum_unquoted.csv", "cuda_gpu_kern_sum", [("add_kernel", 30, 48_064e-9, 1_443_328e-9)], PERIOD),
    ("nsys_cuda_gpu_kern_sum_usec.csv", "cuda_gpu_kern_sum", [("vector_add", 30, 48.064e-6, 1_443.328e-6)], PERIOD),
    ("nsys_cuda_gpu_kern_sum_comma_decimal.csv", "cuda_gpu_kern_sum", [("ampere_sgemm_128x64_nn", 30, 190_112e-9, 5_712_096e-9), ("vector_add", 30, 48_064e-9, 1_443_328e-9)], COMMA),
    ("nsys_multi_report.csv", "cuda_gpu_kern_sum", [("cupy_add__float32_float32_float32", 30, 48_064e-9, 1_443_328e-9)], PERIOD),
]


@pytest.mark.parametrize(("name", "layout", "kernels", "mark"), NSYS_FIGURES)
def test_nsys_variants_give_the_hand_worked_figures(name: str, layout: str, kernels: list[tuple[str, int, float, float]], mark: str) -> None:
    profile = read_profile(FORMATS / name)
    assert profile.layout == layout
    assert profile.number_format is not None and profile.number_format.decimal == mark
    by_name = {kernel.base_name: kernel for kernel in profile.kernels()}
    for kernel, instances, typical, total in kernels:
        found = by_name[kernel]
        assert found.instances == instances
        assert found.duration is not None and found.duration.value == pytest.approx(typical, rel=1e-9)
        assert found.total_time == pytest.approx(total, rel=1e-9)


def test_the_multi_report_file_gives_its_kernel_summary_and_names_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    profile = read_profile(FORMATS / "nsys_multi_report.csv")
    assert [summary.kernel_name for summary in profile.summaries] == [
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
        "cupy_add__float32_float32_float32",
    ]
    gemm = profile.summaries[0]
    assert (gemm.instances, gemm.median, gemm.stddev) == (30, pytest.approx(190_112e-9), pytest.approx(1_187.4e-9))
    assert [summary.line for summary in profile.summaries] == [16, 17]
    (skipped,) = [note for note in profile.notes if "passed over" in note]
    assert "'CUDA API Summary (cuda_api_sum)' (lines 6–9)" in skipped
    assert "'CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum)' (lines 23–24)" in skipped
    # cudaMalloc's 3 calls are not read as kernels
    assert "cudaMalloc" not in {summary.kernel_name for summary in profile.summaries}
    assert main(["import-nsys", str(FORMATS / "nsys_multi_report.csv")]) == 0
    assert "2 kernels, 60 launches" in capsys.readouterr().out


def test_a_multi_report_file_without_headings_still_finds_the_kernel_summary() -> None:
    text = (FORMATS / "nsys_multi_report.csv").read_text()
    bare = "\n".join(line for line in text.splitlines() if "**" not in line)
    profile = read_profile_text(bare, "bare.csv")
    assert len(profile.summaries) == 2 and profile.summaries[1].median == pytest.approx(48_064e-9)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("ncu_error_permission.csv", "line 2: the tool reported an error and wrote no table: ==ERROR== ERR_NVGPUCTRPERM"),
        ("nsys_no_kernel_data.csv", "nsys wrote no kernel table: SKIPPED: report6.sqlite does not contain CUDA kernel data."),
    ],
)
def test_files_without_a_table_say_why(name: str, fragment: str) -> None:
    with pytest.raises(ProfileError, match=".*") as caught:
        read_profile(FORMATS / name)
    assert fragment in str(caught.value)


# ---------------------------------------------------------------- assumed, chosen, contradicted


def test_an_all_ambiguous_file_is_read_with_the_period_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    path = FORMATS / "ncu_details_all_ambiguous.csv"
    assert main(["import-ncu", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[1].startswith("warning: number format assumed: no value shows which mark is the decimal one, so 5 values")
    assert "--decimal-mark ," in lines[1]
    row = next(line for line in lines if line.startswith("scale_kernel"))
    assert "1.234 µs" in row and "1.234 kB" in row

    assert main(["import-ncu", str(path), "--decimal-mark", ","]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("scale_kernel"))
    assert "1.234 ms" in row and "1.234 MB" in row  # 1,234 µs and 1,234 Kbyte
    assert "warning:" not in out
    assert "numbers read with the comma as decimal mark (1.234,5), as chosen" in out
    chosen = read_profile(path, decimal_mark=",")
    assert chosen.number_format is not None and chosen.number_format.how == CHOSEN
    assert chosen.kernels()[0].dram.read is not None and chosen.kernels()[0].dram.read.value == 1_234_000


def test_json_output_carries_the_reading_and_warns_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["import-ncu", str(FORMATS / "ncu_details_all_ambiguous.csv"), "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["profile"]["number_format"] == {"decimal_mark": ".", "how": "assumed", "evidence": "", "ambiguous": 5}
    assert captured.err.startswith("warning: ncu_details_all_ambiguous.csv: number format assumed")


def test_a_chosen_mark_overrides_the_files_evidence() -> None:
    # The comma-decimal page read with the period: its grouped values cannot be read so, and it says which.
    with pytest.raises(ProfileError) as caught:
        read_profile(FORMATS / "ncu_details_comma_decimal.csv", decimal_mark=".")
    message = str(caught.value)
    assert "line 11" in message and "'9.437.184' has the comma as decimal mark" in message and "as chosen" in message


def test_a_file_that_mixes_formats_is_refused_naming_both_lines() -> None:
    text = (DATA / "nsys_cuda_gpu_kern_sum.csv").read_text().replace('"48,064.0"', '"48.064,0"')
    with pytest.raises(ProfileError) as caught:
        read_profile_text(text, "mixed.csv")
    message = str(caught.value)
    assert "'48.064,0' has the comma as decimal mark" in message
    assert "decided from line 5: '79.8'" in message and "line 6" in message


def test_the_dialog_reading_survives_the_session_record() -> None:
    from workbench.profilers import Profile

    profile = read_profile(FORMATS / "ncu_details_comma_decimal.csv")
    restored = Profile.from_dict(profile.to_dict())
    assert restored.number_format == profile.number_format
    assert restored.kernels()[0].dram.read is not None and restored.kernels()[0].dram.read.value == 9_437_184


# ---------------------------------------------------------------- files that are not files (issue 15, items 5 and 6)


def _cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_import_ncu_of_a_fifo_is_one_line_exit_2_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "profile.csv"
    os.mkfifo(fifo)
    started = time.perf_counter()
    result = _cli("import-ncu", str(fifo))
    assert time.perf_counter() - started < 20
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "named pipe (FIFO)" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_import_ncu_of_a_link_to_dev_zero_is_one_line_exit_2_at_once(tmp_path: Path) -> None:
    link = tmp_path / "z.csv"
    link.symlink_to("/dev/zero")
    started = time.perf_counter()
    result = _cli("import-ncu", str(link))
    assert time.perf_counter() - started < 20
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "a device, not a regular file" in result.stderr


NSYS_TEXT = (
    '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"\n'
    '"100.0","1,000","1","1,000.0","1,000.0","1,000","1,000","0.0","void add_kernel<float>(float *, int)"\n'
)


def test_a_format_registered_once_is_sniffed_and_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile format is one entry in reader.PROFILE_FORMATS: its header is recognised and its reader called,
    with nothing else to change."""
    from workbench.profilers import reader

    read: list[str] = []

    def read_other(lines, source, keep, decimal_mark):  # type: ignore[no-untyped-def]
        read.append(source)
        return reader.read_profile_text(NSYS_TEXT, source)

    other = reader.ProfileFormat("other", "`other --csv`", lambda cells: cells[:2] == ["Other", "Header"], read_other)
    monkeypatch.setattr(reader, "PROFILE_FORMATS", (*reader.PROFILE_FORMATS, other))
    profile = reader.read_profile_text("Other,Header\n1,2\n", "other.csv")
    assert read == ["other.csv"] and profile.tool == "nsys"
    with pytest.raises(reader.ProfileError, match="`other --csv`"):
        reader.read_profile_text("not,a,table\n", "x.csv")
