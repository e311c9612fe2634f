"""Hostile and broken profiles (issue 15): huge, zero, negative and unit-less values; the symptom of a
misread format; the fuzz suite under a memory limit; streaming memory independent of row count."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.profilers import ProfileError, compare_profile, parse_match, read_profile, read_profile_text

DATA = Path(__file__).parent / "data"
FORMATS = DATA / "formats"
RAW = (DATA / "ncu_raw.csv").read_text()
NSYS = (DATA / "nsys_cuda_gpu_kern_sum.csv").read_text()
NINES = "9" * 400


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, timeout=120, check=False)


def _one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    for fragment in fragments:
        assert fragment in result.stderr


# ---------------------------------------------------------------- item 3: 400-digit values


@pytest.mark.parametrize(
    ("tool", "text", "fragment"),
    [
        ("import-ncu", RAW.replace('"134,221,312"', f'"{NINES}"'), "line 10: 'dram__bytes_read.sum' is '999999999999…999999' (400 digits): out of range"),
        ("import-ncu", RAW.replace('"48,352"', '"1e400"'), "line 10: 'gpu__time_duration.sum' is '1e400': out of range"),
        ("import-ncu", RAW.replace('"48,352"', f'"{NINES}.5"'), "'gpu__time_duration.sum' is"),
        ("import-nsys", NSYS.replace('"5,712,096"', f'"{NINES}"'), "line 5: 'Total Time (ns)' is '999999999999…999999' (400 digits)"),
        ("import-nsys", NSYS.replace('"30"', f'"{NINES}"', 1), "line 5: 'Instances' is"),
        ("import-ncu", RAW.replace('"0","51007"', f'"{NINES}","51007"', 1), "the ID column should hold a launch number"),
    ],
)
def test_400_digit_values_are_the_projects_error_not_an_overflow(tmp_path: Path, tool: str, text: str, fragment: str) -> None:
    path = tmp_path / "huge.csv"
    path.write_text(text)
    _one_line_error(_run(tool, str(path), "--match", "cupy_add=add(n=2**24, dtype=fp32)", "--device", "h200-sxm"), fragment)


# ---------------------------------------------------------------- item 4: a zero duration


def test_a_zero_duration_with_a_match_gives_no_rate_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    text = RAW.replace('"48,352"', '"0"').replace('"48,189"', '"0"')
    profile = read_profile_text(text, "zero.csv")
    comparisons = compare_profile(profile, [parse_match("cupy_add=add(n=2**24, dtype=fp32)")], device="h200-sxm")
    (comparison,) = comparisons
    assert comparison.duration is None and comparison.achieved_bandwidth is None and comparison.roofline is None
    assert "2 of 2 launches give a duration of 0 s" in comparison.derivation_text()
    kernel = profile.kernels()[0]
    assert kernel.roofline_point() is None
    assert kernel.dram.total is not None  # the bytes are still compared


def test_a_zero_duration_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "zero.csv"
    path.write_text(RAW.replace('"48,352"', '"0"'))
    result = _run("import-ncu", str(path), "--match", "cupy_add=add(n=2**24, dtype=fp32)")
    assert result.returncode == 0, result.stderr
    assert "1 of 2 launches give a duration of 0 s" in result.stdout


def test_a_zero_nsys_time_gives_no_rate() -> None:
    text = NSYS.replace('"190,112.0"', '"0"').replace('"190,403.2"', '"0"')
    profile = read_profile_text(text, "zero.csv")
    kernels = profile.kernels()
    assert kernels[0].duration is None
    (comparison,) = compare_profile(profile, [parse_match("regex:xmma=gemm(M=4096, N=4096, K=4096, dtype=fp16)")], device="h200-sxm")
    assert comparison.duration is None


# ---------------------------------------------------------------- item 12: values validated


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (RAW.replace('"134,221,312"', '"-5"'), "line 10: 'dram__bytes_read.sum' is -5 B: a count, size or time cannot be negative"),
        (RAW.replace('"48,352"', '"-125"'), "line 10: 'gpu__time_duration.sum' is -125 s: a count, size or time cannot be negative"),
        (RAW.replace('"byte","byte","nsecond"', '"parsec","byte","nsecond"'), "line 9: the column 'dram__bytes_read.sum' is in 'parsec', which is not a unit of bytes"),
        (RAW.replace('"byte","byte","nsecond"', '"byte","byte","furlong"'), "the column 'gpu__time_duration.sum' is in 'furlong', which is not a unit of time"),
        (NSYS.replace('"190,112.0"', '"-190,112.0"'), "line 5: 'Med (ns)' is -190,112.0: a time cannot be negative"),
        (NSYS.replace('"Avg (ns)"', '"Avg (parsec)"'), "the column 'Avg (parsec)' is not in a time unit"),
        (NSYS.replace('"30"', '"-30"', 1), "'Instances' is -30"),
    ],
)
def test_negative_counts_and_unknown_units_are_refused_naming_the_column(text: str, fragment: str) -> None:
    with pytest.raises(ProfileError) as caught:
        read_profile_text(text, "bad.csv")
    assert fragment in str(caught.value)


def test_a_details_page_metric_in_an_unknown_unit_is_refused() -> None:
    text = (DATA / "ncu_details.csv").read_text().replace('"dram__bytes_read.sum","Mbyte"', '"dram__bytes_read.sum","parsec"', 1)
    with pytest.raises(ProfileError, match="the metric 'dram__bytes_read.sum' is in 'parsec', which is not a unit of bytes"):
        read_profile_text(text, "parsec.csv")


def test_metrics_the_workbench_does_not_read_keep_odd_cells_as_text() -> None:
    text = RAW.replace('"13.47"', '"-13.47"').replace('"%","inst"', '"%","warp"', 1)
    profile = read_profile_text(text, "odd.csv")
    metric = profile.launches[0].metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"]
    assert metric.value == pytest.approx(-13.47) and metric.raw_value == "-13.47"  # a percentage may be anything


# ---------------------------------------------------------------- the symptom guard (issue 16)


def test_a_kernel_faster_than_its_device_is_flagged_naming_the_number_format(tmp_path: Path) -> None:
    # A comma-decimal page whose durations were written with a comma: 231,552 ns read as 231.552 ns.
    text = (FORMATS / "ncu_details_comma_decimal.csv").read_text().replace('"231.552"', '"231,552"')
    path = tmp_path / "misread.csv"
    path.write_text(text)
    result = _run("import-ncu", str(path), "--device", "rtx-3090", "--match", "ampere_sgemm=gemm(M=1024, N=1024, K=1024, dtype=fp32)")
    assert result.returncode == 0, result.stderr
    # 13,631,488 B / 231.552 ns = 58.87 TB/s against the RTX 3090's 936 GB/s: 62.9×
    assert "warning: ampere_sgemm_128x64_nn: 13.63 MB in 231.6 ns = 58.87 TB/s, 62.9× the 936 GB/s peak" in result.stdout
    assert "possible cause: a misread number format" in result.stdout
    # first among the impossible flag's reasons (the kernel beats its bound by 260×)
    flagged = result.stdout[result.stdout.index("IMPOSSIBLE"):]
    assert flagged.splitlines()[1].startswith("    - likely: misread number format")


def test_the_same_kernel_read_right_is_not_flagged() -> None:
    profile = read_profile(FORMATS / "ncu_details_comma_decimal.csv")
    (comparison,) = compare_profile(profile, [parse_match("ampere_sgemm=gemm(M=1024, N=1024, K=1024, dtype=fp32)")], device="rtx-3090")
    assert all(cause.name != "misread number format" for cause in comparison.time_causes)
    assert comparison.impossible is None
    # 13.63 MB in 231.6 µs = 58.87 GB/s: a plausible 6 % of the 936 GB/s
    assert comparison.achieved_bandwidth == pytest.approx(13_631_488 / 231.552e-6)


def test_a_symptom_on_an_assumed_reading_is_likely_and_suggests_the_comma(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.model.devices.catalogue import find_device
    from workbench.profilers.symptoms import bandwidth_symptom

    text = (FORMATS / "ncu_details_all_ambiguous.csv").read_text().replace('"Kbyte","1.234"', '"Gbyte","1.234"')
    profile = read_profile_text(text, "ambiguous.csv")
    symptom = bandwidth_symptom(profile.kernels()[0], find_device("h100-sxm"), profile.number_format)
    assert symptom is not None and symptom.likely
    assert "by assumption" in symptom.explanation and "--decimal-mark ," in symptom.explanation
    assert symptom.ratio == pytest.approx(2 * 1.234e9 / 1.234e-6 / find_device("h100-sxm").peak["hbm"].value)


# ---------------------------------------------------------------- the fuzz suite, under a memory limit


def test_fuzzed_profiles_give_a_result_or_the_projects_error_within_budget() -> None:
    """Every input: a Profile (grouped, recorded, printed, compared) or a ProfileError; 1.5 GiB, ≤ 10 s each."""
    script = Path(__file__).parent / "profile_fuzz.py"
    result = subprocess.run([sys.executable, str(script), "120"], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    counts = dict(item.split("=") for item in result.stdout.split())
    assert int(counts["mutated-export"]) >= 120 and int(counts["garbage"]) >= 120
    assert float(counts["slowest"]) < 10


# ---------------------------------------------------------------- item 13: streaming


def test_reading_memory_does_not_grow_with_the_rows_beyond_what_is_kept(tmp_path: Path) -> None:
    """Peak traced memory of reading an nsys file, less what the result holds, is the same for 20,000 and 80,000 rows."""
    probe = r'''
import sys, tracemalloc
sys.path.insert(0, "benchmarks")
from pathlib import Path
from bench_profile_import import big_nsys_summary
from workbench.profilers import read_profile
read_profile(Path("tests/data/nsys_cuda_gpu_kern_sum.csv"))  # imports and caches first
for rows in (20_000, 80_000):
    path = Path(sys.argv[1]) / f"{rows}.csv"
    size = big_nsys_summary(path, rows)
    tracemalloc.start()
    profile = read_profile(path)
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(size, kept, peak, len(profile.summaries))
    del profile
'''
    root = Path(__file__).parent.parent
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, timeout=300, cwd=root, check=False)
    assert result.returncode == 0, result.stderr
    (small_size, small_kept, small_peak, small_rows), (big_size, big_kept, big_peak, big_rows) = (
        [int(value) for value in line.split()] for line in result.stdout.splitlines()
    )
    assert (small_rows, big_rows) == (20_000, 80_000)
    small_transient, big_transient = small_peak - small_kept, big_peak - big_kept
    # Four times the rows (and the file, 2.8 to 11 MB): the same few MB of buffers beyond what is kept,
    # those of one batch of rows read at once (nsys._READ_ROWS, 4,096 rows of ~140 bytes here), not the file's.
    assert big_size > 3.9 * small_size
    assert big_transient < small_transient + 1_000_000, (small_transient, big_transient)
    assert big_transient < 12_000_000, big_transient
