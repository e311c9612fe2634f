"""Readers for ncu and nsys CSV exports, unit conversion, match rules and session records.

The files under tests/data are written by hand to match what the tools
print: `==PROF==` lines before the header, auto-scaled units, thousands
separators, n/a, rule rows, older column sets, two kernels with several
launches each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.errors import DeclarationError, WorkbenchError
from workbench.profilers import (
    MatchError,
    MatchRule,
    Profile,
    ProfileError,
    kernel_base_name,
    match_kernels,
    parse_match,
    read_ncu_csv,
    read_nsys_csv,
    read_profile,
    read_profile_text,
    suggest_operation,
)
from workbench.profilers.metric_units import base_unit, is_auto_scaled, to_base
from workbench.profilers.table import parse_number
from workbench.model.units import registry

DATA = Path(__file__).parent / "data"
ADD = "cupy_add__float32_float32_float32"
GEMM = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"


# ---------------------------------------------------------------- numbers and units


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234.56", 1234.56),
        ("33,554,432", 33_554_432),
        ("137,438,953,472", 137_438_953_472),
        ("33554432", 33_554_432),
        ("4.0e-05", 4.0e-05),
        ("0", 0),
        ("-3.5", -3.5),
    ],
)
def test_numbers_as_the_tools_print_them(text: str, expected: float) -> None:
    value = parse_number(text)
    assert value == expected
    assert type(value) is type(expected)  # counts stay exact ints


@pytest.mark.parametrize("text", ["1,23", "12abc", "n/a", "", "1.2.3", "1,2345"])
def test_text_that_is_not_a_number_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number(text)


@pytest.mark.parametrize(
    ("unit", "number", "registry_unit", "base", "symbol"),
    [
        ("byte", 512, "byte", "byte", "B"),
        ("Kbyte", 512, "kilobyte", "byte", "B"),
        ("Mbyte", 134.22, "megabyte", "byte", "B"),
        ("Gbyte", 1.64, "gigabyte", "byte", "B"),
        ("nsecond", 48352, "nanosecond", "second", "s"),
        ("usecond", 48.35, "microsecond", "second", "s"),
        ("us", 48.35, "microsecond", "second", "s"),
        ("msecond", 5.91, "millisecond", "second", "s"),
        ("Gbyte/second", 34.07, "gigabyte / second", "byte / second", "B/s"),
        ("Gbyte/s", 34.07, "gigabyte / second", "byte / second", "B/s"),
        ("cycle/nsecond", 0.88, "cycle / nanosecond", "cycle / second", "cycle/s"),
        ("Ghz", 1.59, "gigahertz", "hertz", "Hz"),
        ("cycle", 76877, "cycle", "cycle", "cycle"),
    ],
)
def test_ncu_units_convert_through_the_registry(
    unit: str, number: float, registry_unit: str, base: str, symbol: str
) -> None:
    converted = to_base(number, base_unit(unit))
    expected = registry().Quantity(number, registry_unit).to(base).magnitude
    assert converted == pytest.approx(expected, rel=1e-12)
    assert base_unit(unit).symbol == symbol


def test_every_ncu_spelling_has_the_registry_factor() -> None:
    """base_unit reads prefixes from workbench.model.units without pint: each prefix with each measured word, and each
    pair of them as a rate, gives the factor the registry gives for the same units."""
    from workbench.profilers import metric_units as mu

    prefix_names = {"k": "kilo", "M": "mega", "G": "giga", "T": "tera", "P": "peta", "m": "milli", "µ": "micro",
                    "n": "nano", "p": "pico", "": ""}
    binary_names = {"Ki": "kibi", "Mi": "mebi", "Gi": "gibi", "Ti": "tebi"}
    spellings: dict[str, tuple[str, str]] = {}  # ncu spelling -> (registry expression, its base unit)
    for word, (unit, _) in mu._MEASURED_WORDS.items():
        spellings[word] = (unit, unit)
        for letter, symbol in mu._PREFIXES.items():
            spellings[letter + word] = (prefix_names[symbol] + unit, unit)
    for word, (symbol, base) in mu._WHOLE_WORDS.items():
        if base == "s":
            spellings[word] = (prefix_names[symbol] + "second", "second")
    for binary, name in binary_names.items():
        spellings[binary + "B"] = (name + "byte", "byte")
    assert set(binary_names) == set(mu._BINARY_PREFIXES)
    reg = registry()
    rates = [
        (f"{a}/{b}", (f"{spellings[a][0]} / {spellings[b][0]}", f"{spellings[a][1]} / {spellings[b][1]}"))
        for a in ("Gbyte", "Kbyte", "cycle")
        for b in spellings
    ]
    for spelling, (expression, base) in [*spellings.items(), *rates]:
        expected = reg.Quantity(1, expression).to(base).magnitude
        found = base_unit(spelling)
        assert found.known, spelling
        assert found.factor == pytest.approx(expected, rel=1e-12), spelling


def test_counts_and_percentages_keep_their_words() -> None:
    assert base_unit("inst").symbol == "inst" and to_base(16_777_216, base_unit("inst")) == 16_777_216
    assert to_base(3, base_unit("Kinst")) == 3000
    assert base_unit("%").symbol == "%" and to_base(86.72, base_unit("%")) == 86.72
    assert base_unit("register/thread").symbol == "register/thread"
    unknown = base_unit("furlong/fortnight")
    assert not unknown.known and unknown.symbol == "furlong/fortnight" and unknown.factor == 1


def test_only_larger_prefixes_count_as_scaled() -> None:
    assert is_auto_scaled("Mbyte") and is_auto_scaled("usecond") and is_auto_scaled("msecond")
    assert not is_auto_scaled("byte") and not is_auto_scaled("nsecond") and not is_auto_scaled("inst")


# ---------------------------------------------------------------- ncu details page


@pytest.fixture(scope="module")
def details() -> Profile:
    return read_ncu_csv(DATA / "ncu_details.csv")


def test_details_page_has_every_launch_after_the_log_lines(details: Profile) -> None:
    assert (details.tool, details.layout, details.source) == ("ncu", "details", "ncu_details.csv")
    assert [launch.launch_id for launch in details.launches] == [0, 1, 2, 3, 4]
    assert [launch.kernel_name for launch in details.launches] == [ADD, GEMM, ADD, GEMM, ADD]
    # the header sits on line 10, after nine log and application lines
    assert details.launches[0].line == 11


def test_details_page_groups_launches_by_kernel(details: Profile) -> None:
    kernels = details.kernels()
    assert [(kernel.name, kernel.instances) for kernel in kernels] == [(ADD, 3), (GEMM, 2)]
    add = kernels[0]
    assert [launch.launch_id for launch in add.launches] == [0, 2, 4]
    # durations 48.35, 48.19, 48.42 µs: the median is the middle one
    assert add.duration is not None and add.duration.value == pytest.approx(48.35e-6)
    assert (add.duration_min, add.duration_max) == (pytest.approx(48.19e-6), pytest.approx(48.42e-6))


def test_details_page_values_in_base_units_with_their_printed_text(details: Profile) -> None:
    first = details.launches[0]
    read = first.metric("dram__bytes_read.sum")
    assert read is not None
    assert read.value == pytest.approx(134.22e6)
    assert (read.unit, read.raw_value, read.raw_unit) == ("B", "134.22", "Mbyte")
    assert read.section == "Command line profiler metrics"
    assert read.scaled
    assert first.value("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum") == 16_777_216
    assert first.value("SM Frequency") == pytest.approx(1.59e9)
    duration = first.metric("Duration")
    assert duration is not None and duration.section == "GPU Speed Of Light Throughput"
    assert duration.value == pytest.approx(48.35e-6) and duration.unit == "s"
    gemm_l2 = details.launches[1].metric("lts__t_bytes.sum")
    assert gemm_l2 is not None and gemm_l2.value == pytest.approx(1.64e9) and gemm_l2.raw_unit == "Gbyte"


def test_details_page_identity_columns(details: Profile) -> None:
    first = details.launches[0]
    assert first.grid_size == (131072, 1, 1) and first.block_size == (128, 1, 1)
    assert (first.process_id, first.process_name, first.compute_capability, first.device) == (48213, "python3.11", "9.0", "0")
    # a device index, not a name: the details page does not say which GPU it was
    assert details.device_name == ""


def test_n_a_is_no_value_and_rule_rows_are_kept_apart(details: Profile) -> None:
    gemm = details.launches[1]
    tensor = gemm.metric("sm__ops_path_tensor_src_fp16_dst_fp32.sum")
    assert tensor is not None and tensor.value is None and tensor.raw_value == "n/a"
    assert details.kernels()[1].flop is not None and not details.kernels()[1].flop.has_tensor_counters
    assert details.launches[0].rules == (
        "SOLBottleneck: Memory is more heavily utilized than Compute: look at the Memory Workload "
        "Analysis section to find the DRAM bottleneck.",
    )
    assert "" not in details.launches[0].metrics


def test_scaled_units_are_noted(details: Profile) -> None:
    assert any("--print-units base" in note for note in details.notes)


# ---------------------------------------------------------------- ncu raw page


@pytest.fixture(scope="module")
def raw() -> Profile:
    return read_ncu_csv(DATA / "ncu_raw.csv")


def test_raw_page_reads_the_unit_row_and_exact_counts(raw: Profile) -> None:
    assert (raw.tool, raw.layout) == ("ncu", "raw")
    assert [launch.launch_id for launch in raw.launches] == [0, 1, 2, 3]  # the unit row is not a launch
    first = raw.launches[0]
    assert first.value("dram__bytes_read.sum") == 134_221_312
    assert first.value("gpu__time_duration.sum") == pytest.approx(48_352e-9)
    assert first.value("launch__grid_size") == 131_072
    assert first.value("sm__ops_path_tensor_src_fp16_dst_fp32.sum") is None  # printed n/a
    assert raw.launches[1].value("sm__ops_path_tensor_src_fp16_dst_fp32.sum") == 137_438_953_472
    # base units throughout: nothing was rounded; the one note says how the numbers were read
    assert raw.notes == (
        "numbers read with the period as decimal mark (1,234.5), decided from line 10: '134,221,312' "
        "(two or more commas group thousands)",
    )


def test_raw_page_names_the_gpu(raw: Profile) -> None:
    assert raw.device_name == "NVIDIA H200"
    assert raw.compute_capability == "9.0"
    display = raw.launches[0].metric("device__attribute_display_name")
    assert display is not None and display.value is None and display.raw_value == "NVIDIA H200"


def test_raw_page_kernels_take_medians_of_exact_counts(raw: Profile) -> None:
    add, gemm = raw.kernels()
    # reads 134,221,312 and 134,225,408: the median of two is their mean, 134,223,360
    assert add.dram.read is not None and add.dram.read.value == 134_223_360
    assert add.dram.read.source == "dram__bytes_read.sum" and not add.dram.read.scaled
    # per-launch totals 201,330,944 and 201,334,784 → 201,332,864
    assert add.dram.total is not None and add.dram.total.value == 201_332_864
    assert gemm.flop is not None and gemm.flop.tensor_flop() == 137_438_953_472
    assert gemm.grid_block == "(132, 1, 1) × (384, 1, 1)"


def test_a_raw_page_without_its_unit_row_assumes_base_units() -> None:
    text = '"ID","Kernel Name","dram__bytes_read.sum","gpu__time_duration.sum","launch__grid_size"\n"0","k","1,024","2,500","8"\n'
    profile = read_profile_text(text, "no-units.csv")
    (kernel,) = profile.kernels()
    assert kernel.dram.read is not None and kernel.dram.read.value == 1024
    assert kernel.duration is not None and kernel.duration.value == pytest.approx(2.5e-6)
    assert profile.launches[0].metric("launch__grid_size").unit == ""
    assert any("no unit row" in note for note in profile.notes)


def test_kernels_and_launches_are_hashable_values(raw: Profile) -> None:
    assert len(set(raw.kernels())) == 2 and len(set(raw.launches)) == 4


def test_a_kernels_launches_that_disagree_are_flagged() -> None:
    text = (DATA / "ncu_raw.csv").read_text().replace('"134,225,408"', '"268,450,816"')
    add = read_profile_text(text, "changed.csv").kernels()[0]
    assert any("may not share one shape" in note for note in add.notes)


# ---------------------------------------------------------------- older ncu column set


def test_older_column_set_with_kernel_time_and_demangled_names() -> None:
    legacy = read_ncu_csv(DATA / "ncu_details_legacy.csv")
    (kernel,) = legacy.kernels()
    assert kernel.name == "void naive_sgemm<float>(int, int, int, float const*, float const*, float*)"
    assert kernel.base_name == "naive_sgemm"
    assert kernel.instances == 2 and kernel.grid_block == ""
    first = legacy.launches[0]
    assert first.value("gpu__time_duration.sum") == pytest.approx(5.91e-3)
    assert first.value("SM Frequency") == pytest.approx(1268.30e6) and first.metric("SM Frequency").unit == "cycle/s"
    assert first.value("dram__bytes_read.sum.per_second") == pytest.approx(34.07e9)
    # fadd 0 + fmul 0 + 2 × ffma 1,073,741,824 = 2,147,483,648 FLOP; one FLOP per FMA under mac
    assert kernel.achieved_flop("fma2") == 2_147_483_648
    assert kernel.achieved_flop("mac") == 1_073_741_824


# ---------------------------------------------------------------- nsys


def test_nsys_kernel_summary() -> None:
    profile = read_nsys_csv(DATA / "nsys_cuda_gpu_kern_sum.csv")
    assert (profile.tool, profile.layout) == ("nsys", "cuda_gpu_kern_sum")
    gemm, add = profile.summaries
    assert gemm.kernel_name == GEMM and gemm.instances == 30
    assert gemm.total_time == pytest.approx(5_712_096e-9)
    assert gemm.median == pytest.approx(190_112e-9) and gemm.average == pytest.approx(190_403.2e-9)
    assert (gemm.minimum, gemm.maximum) == (pytest.approx(188_991e-9), pytest.approx(194_335e-9))
    assert gemm.stddev == pytest.approx(1_187.4e-9) and gemm.time_percent == pytest.approx(79.8)
    assert add.line == 6
    kernel = profile.kernels()[1]
    assert kernel.duration is not None and kernel.duration.value == pytest.approx(48_064e-9)
    assert kernel.statistic == "median" and kernel.dram.total is None and kernel.roofline_point() is None


def test_older_nsys_gpukernsum_has_averages_only() -> None:
    profile = read_nsys_csv(DATA / "nsys_gpukernsum_legacy.csv")
    assert profile.layout == "gpukernsum"
    gemm, add = profile.kernels()
    assert gemm.duration is not None and gemm.duration.value == pytest.approx(196_896.0e-9)
    assert gemm.statistic == "mean"
    assert add.base_name == "at::native::vectorized_elementwise_kernel"
    assert profile.summaries[1].median is None and profile.summaries[1].stddev == pytest.approx(588.1e-9)


def test_nsys_time_unit_is_read_from_the_column_titles() -> None:
    text = (
        '"Time (%)","Total Time (us)","Instances","Avg (us)","Med (us)","Min (us)","Max (us)","StdDev (us)","Name"\n'
        '"100.0","1,443.3","30","48.1","48.06","47.8","48.8","0.2","k"\n'
    )
    (times,) = read_profile_text(text, "us.csv").summaries
    assert times.total_time == pytest.approx(1443.3e-6) and times.median == pytest.approx(48.06e-6)


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("ncu_details.csv", "ncu"),
        ("ncu_raw.csv", "ncu"),
        ("ncu_details_legacy.csv", "ncu"),
        ("nsys_cuda_gpu_kern_sum.csv", "nsys"),
        ("nsys_gpukernsum_legacy.csv", "nsys"),
    ],
)
def test_read_profile_tells_the_tools_apart(name: str, tool: str) -> None:
    assert read_profile(DATA / name).tool == tool


# ---------------------------------------------------------------- malformed files

NCU_HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
    '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
)


def _row(launch: str, kernel: str, metric: str = "gpu__time_duration.sum", value: str = "48.35") -> str:
    return (
        f'"{launch}","1","p","h","{kernel}","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0",'
        f'"Command line profiler metrics","{metric}","usecond","{value}"'
    )


MALFORMED = [
    ("", "the file is empty", None),
    ("==PROF== Connected to process 1\n==ERROR== The application returned an error code (1).\n", "==ERROR==", 2),
    ("==PROF== Connected to process 1\nhello\n", "no Nsight Compute or Nsight Systems table found", None),
    (f"{NCU_HEADER}\n{_row('0', 'k')}\n\"0\",\"1\",\"p\"\n", "3 fields where the header (line 1) has 15", 3),
    (f"==PROF== x\n{NCU_HEADER}\n{_row('zero', 'k')}\n", "the ID column should hold a launch number; found 'zero'", 3),
    (f"{NCU_HEADER}\n{_row('0', 'k')}\n{_row('0', 'other')}\n", "launch 0 is 'k' on line 2 but 'other' here", 3),
    (f"{NCU_HEADER}\n{_row('0', '')}\n", "the Kernel Name cell is empty", 2),
    (
        '"ID","Kernel Name","Section Name","Metric Name","Metric Unit"\n"0","k","s","m","byte"\n',
        "the header has no 'Metric Value' column",
        1,
    ),
    (f'{NCU_HEADER}\n"0","1","p","h","k\n', "not valid CSV", 2),
    (f"==PROF== x\n{NCU_HEADER}\n==PROF== Disconnected\n", "the table has a header but no kernel launches", 2),
    (
        '"ID","Kernel Name","dram__bytes_read.sum"\n"","","byte"\n"0","k","1"\n"0","k","2"\n',
        "launch 0 appears twice (first on line 3)",
        4,
    ),
    (
        '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Name"\n"50.0","1,000","thirty","33.3","k"\n',
        "Instances should be a whole number; found 'thirty'",
        2,
    ),
    (
        '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Name"\n"50.0","lots","3","33.3","k"\n',
        "the 'Total Time (ns)' cell should be a number; found 'lots'",
        2,
    ),
    (
        "Processing [r.sqlite] with [cuda_gpu_kern_sum.py]...\n\nSKIPPED: r.sqlite does not contain CUDA kernel data.\n",
        "nsys wrote no kernel table: SKIPPED",
        None,
    ),
    ("PK\x03\x04\x00\x00binary", "binary file, not CSV", None),
]


@pytest.mark.parametrize(("text", "message", "line"), MALFORMED)
def test_malformed_files_give_one_clear_line(text: str, message: str, line: int | None) -> None:
    with pytest.raises(ProfileError) as caught:
        read_profile_text(text, "bad.csv")
    error = caught.value
    assert isinstance(error, WorkbenchError)
    assert message in str(error)
    assert "\n" not in str(error)
    assert error.line == line
    assert str(error).startswith("bad.csv" + (f", line {line}: " if line else ": "))


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="no such file"):
        read_profile(tmp_path / "missing.csv")
    report = tmp_path / "capture.ncu-rep"
    report.write_bytes(b"\x00\x01")
    with pytest.raises(ProfileError, match=r"binary \.ncu-rep report; export CSV first: ncu --import capture\.ncu-rep"):
        read_profile(report)
    with pytest.raises(ProfileError, match="a folder, not a regular file"):
        read_profile(tmp_path)


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (DATA / "nsys_cuda_gpu_kern_sum.csv").read_bytes())
    assert len(read_profile(path).summaries) == 2


# ---------------------------------------------------------------- matching


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("cupy_add__float32_float32_float32", "cupy_add__float32_float32_float32"),
        ("void naive_sgemm<float>(int, int, int, float const*, float const*, float*)", "naive_sgemm"),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
            "at::native::vectorized_elementwise_kernel",
        ),
        ("vectorAdd(float const*, float const*, float*, int)", "vectorAdd"),
    ],
)
def test_kernel_base_names(name: str, base: str) -> None:
    assert kernel_base_name(name) == base


def test_patterns_plain_glob_and_regex() -> None:
    assert MatchRule("cupy_add", "add(n=8)").matches(ADD)
    assert MatchRule("naive_sgemm", "gemm(M=2, N=2, K=2)").matches("void naive_sgemm<float>(int, float*)")
    assert not MatchRule("naive", "gemm(M=2, N=2, K=2)").matches("cupy_add__float32_float32_float32")
    assert MatchRule("*xmma_gemm*", "gemm(M=2, N=2, K=2)").matches(GEMM)
    assert not MatchRule("xmma_gemm*", "gemm(M=2, N=2, K=2)").matches(GEMM)  # globs match the whole name
    assert MatchRule("regex:^sm90_.*gemm", "gemm(M=2, N=2, K=2)").matches(GEMM)
    assert not MatchRule("regex:^gemm", "gemm(M=2, N=2, K=2)").matches(GEMM)


def test_match_rules_from_the_command_line() -> None:
    rule = parse_match("vector_add = add(n=16777216, dtype=fp32)")
    assert rule.pattern == "vector_add" and rule.declaration == "add(n=2**24, dtype=fp32)"  # canonical line
    with pytest.raises(MatchError, match="PATTERN=DECLARATION"):
        parse_match("vector_add")
    with pytest.raises(MatchError, match="needs a kernel-name pattern"):
        parse_match("=add(n=8)")
    with pytest.raises(MatchError, match="bad regular expression"):
        parse_match("regex:(=add(n=8)")
    with pytest.raises(DeclarationError):
        parse_match("vector_add=add(n=-1)")


def test_first_matching_rule_wins(raw: Profile) -> None:
    rules = [MatchRule("regex:gemm", "gemm(M=4096, N=4096, K=4096)"), MatchRule("regex:.", "add(n=2**24)")]
    pairs = match_kernels(raw.kernels(), rules)
    assert [(kernel.name, rule.pattern) for kernel, rule in pairs] == [(ADD, "regex:."), (GEMM, "regex:gemm")]


def test_suggested_operation_for_the_import_dialog() -> None:
    entries = {"vector add": "add(n=2**24, dtype=fp32)", "square GEMM": "gemm(M=4096, N=4096, K=4096, dtype=fp16)"}
    assert suggest_operation(ADD, entries) == "vector add"
    assert suggest_operation(GEMM, entries) == "square GEMM"
    assert suggest_operation("void softmax_warp_forward<float>(float*)", entries) is None
    two_gemms = {**entries, "tall GEMM": "gemm(M=65536, N=128, K=128)"}
    assert suggest_operation(GEMM, two_gemms) is None  # two candidates: let the user choose


# ---------------------------------------------------------------- session records


@pytest.mark.parametrize("name", ["ncu_details.csv", "ncu_raw.csv", "ncu_details_legacy.csv", "nsys_cuda_gpu_kern_sum.csv"])
def test_profile_records_round_trip_through_json(name: str) -> None:
    profile = read_profile(DATA / name).with_matches([MatchRule("add", "add(n=2**24)", "vector add")])
    everything = Profile.from_dict(json.loads(json.dumps(profile.to_dict(all_metrics=True))))
    assert everything == profile
    # the session's default keeps only what the workbench reads, and every figure with it
    kept = Profile.from_dict(json.loads(json.dumps(profile.to_dict())))
    assert [k.to_dict() for k in kept.kernels()] == [k.to_dict() for k in profile.kernels()]
    assert kept.matches[0].name == "vector add"


def test_session_records_leave_out_metrics_the_workbench_never_reads() -> None:
    profile = read_profile(DATA / "ncu_details.csv")
    first = Profile.from_dict(profile.to_dict()).launches[0]
    assert "dram__bytes_read.sum" in first.metrics and "Duration" in first.metrics
    assert "SM Frequency" not in first.metrics and "Memory Throughput" not in first.metrics
    assert "SM Frequency" in Profile.from_dict(profile.to_dict(all_metrics=True)).launches[0].metrics


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(format="something-else"), "not a profile record"),
        (lambda r: r.update(version=99), "newer than this workbench reads"),
        (lambda r: r.update(tool="rocprof"), "unknown tool 'rocprof'"),
        (lambda r: r["launches"][0].update(id="zero"), "launch id must be an integer"),
        (lambda r: r["launches"][0]["metrics"].append(["m", "lots", "B", "x", "", ""]), "has a value that is not a number"),
        (lambda r: r["launches"][0].update(grid=[1, 2]), "grid must be three integers"),
        (lambda r: r.update(matches=[{"pattern": "regex:(", "declaration": "add(n=8)"}]), "bad regular expression"),
    ],
)
def test_bad_profile_records_are_refused_with_one_message(change, message: str) -> None:  # type: ignore[no-untyped-def]
    record = json.loads(json.dumps(read_profile(DATA / "ncu_raw.csv").to_dict()))
    change(record)
    with pytest.raises(WorkbenchError, match=message) as caught:
        Profile.from_dict(record)
    assert "\n" not in str(caught.value)


def test_imported_counters_are_saved_in_the_session_file(tmp_path: Path) -> None:
    from workbench.documents.session import Session, load, save

    profile = read_profile(DATA / "ncu_raw.csv").with_matches([parse_match("cupy_add=add(n=2**24, dtype=fp32)")])
    session = Session(profiles=[profile.to_dict()])
    path = tmp_path / "with-profile.json"
    save(session, path)
    restored = Profile.from_dict(load(path).profiles[0])
    assert [k.to_dict() for k in restored.kernels()] == [k.to_dict() for k in profile.kernels()]
    assert restored.matches == profile.matches
    # the counters survive exactly: 134,221,312 B read by the first launch
    assert restored.launches[0].value("dram__bytes_read.sum") == 134_221_312


def test_normalisation_kernels_are_guessed_before_the_generic_words_in_their_names() -> None:
    # "fused_add_rms_norm" also says "add"; the normalisation's own words rank first.
    lines = {"norm": "rmsnorm(rows=8, cols=64, dtype=fp16)", "sum": "add(n=64, dtype=fp16)"}
    assert suggest_operation("void vllm::fused_add_rms_norm_kernel<c10::Half, 8>(...)", lines) == "norm"
    lines = {"ln": "layernorm(rows=8, cols=64, dtype=fp16)", "sum": "add(n=64, dtype=fp16)"}
    assert suggest_operation("vectorized_layer_norm_kernel", lines) == "ln"
