"""Wide Nsight Compute raw pages (`--set full`: a thousand-odd metric columns) read quickly and exactly.

The raw reader parses each column's unit once and builds a launch's
metrics when they are read; these tests hold it to the same figures a
cell-by-cell read gives, and check that grouping kernels parses only the
cells the workbench reads.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import workbench.profilers.ncu as ncu
from workbench.profilers import Kernel, Profile, read_profile, read_profile_text
from workbench.profilers.counters import is_used_metric
from workbench.profilers.numbers import NumberFormat
from workbench.profilers.table import ProfileError, parse_number

DATA = Path(__file__).parent / "data"

IDENTITY = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC"'
# (title, unit, cell for launch n): exact counts, scaled units, n/a, text, floats, a duplicated title.
COLUMNS = [
    ("dram__bytes_read.sum", "byte", lambda n: f"{134_221_312 + n * 4096:,}"),
    ("dram__bytes_write.sum", "Mbyte", lambda n: f"{67.11 + n / 100:.2f}"),
    ("gpu__time_duration.sum", "usecond", lambda n: f"{48.35 + n:.2f}"),
    ("lts__t_bytes.sum", "Gbyte", lambda n: "n/a" if n % 3 == 0 else f"{0.2 + n / 1000:.3f}"),
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", lambda n: f"{16_777_216 * (n + 1):,}"),
    ("sm__ops_path_tensor_src_fp16_dst_fp32.sum", "", lambda n: "n/a" if n % 2 == 0 else f"{137_438_953_472:,}"),
    ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "%", lambda n: f"{12.5 + n:.1f}"),
    ("device__attribute_display_name", "", lambda n: "NVIDIA H200"),
    ("smsp__synthetic_metric_0000.sum", "Kinst", lambda n: f"{n * 7919 % 1000:,}.5"),
    ("smsp__synthetic_metric_0001.sum", "inst", lambda n: f"{(n * 104_729) % 1_000_003:,}"),
    ("smsp__synthetic_metric_0001.sum", "warp", lambda n: f"{n}"),  # the same title again: the last column wins
    ("launch__grid_size", "", lambda n: f"{131_072:,}"),
    *[(f"smsp__synthetic_metric_{i:04d}.sum", "inst", lambda n, i=i: f"{n * i:,}") for i in range(2, 40)],
]
LAUNCHES = 12


def _wide_page(launches: int = LAUNCHES, units: bool = True) -> str:
    names = ",".join(f'"{title}"' for title, _, _ in COLUMNS)
    lines = ["==PROF== Connected to process 51007 (/usr/bin/python3.11)", f"{IDENTITY},{names}"]
    if units:
        lines.append(",".join('""' for _ in range(11)) + "," + ",".join(f'"{unit}"' for _, unit, _ in COLUMNS))
    for n in range(launches):
        kernel = "vector_add" if n % 2 == 0 else "gemm_kernel"
        identity = f'"{n}","51007","python3.11","127.0.0.1","{kernel}","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0"'
        lines.append(identity + "," + ",".join(f'"{cell(n)}"' for _, _, cell in COLUMNS))
    return "\n".join(lines) + "\n"


def _figures(profile: Profile) -> list[Kernel]:
    """Each kernel's figures (medians, FLOP, notes) without its launches' metric lists."""
    return [replace(kernel, launches=()) for kernel in profile.kernels()]


def _cell_by_cell(text: str) -> list[dict[str, ncu.Metric]]:
    """Every launch's metrics the plain way: one Metric per cell, in a dict (what the reader must equal)."""
    import csv

    rows = [row for row in csv.reader(line for line in text.splitlines() if not line.startswith("=="))]
    header, units, launches = rows[0], rows[1], rows[2:]
    return [
        {
            header[i].strip(): ncu._Values(NumberFormat(), "wide.csv").metric(header[i].strip(), row[i], units[i].strip(), "", None)
            for i in range(len(header))
            if ncu._is_metric_column(header[i])
        }
        for row in launches
    ]


def test_a_wide_raw_page_holds_the_same_metrics_as_a_cell_by_cell_read() -> None:
    text = _wide_page()
    profile = read_profile_text(text, "wide.csv")
    expected = _cell_by_cell(text)
    assert [launch.line for launch in profile.launches] == list(range(4, 4 + LAUNCHES))  # after the log and unit rows
    for launch, metrics in zip(profile.launches, expected):
        assert list(launch.metrics) == list(metrics)  # same names, same order
        assert launch.metrics == metrics
        assert [(m.value, type(m.value)) for m in launch.metrics.values()] == [
            (m.value, type(m.value)) for m in metrics.values()
        ]
    first = profile.launches[0]
    assert first.value("dram__bytes_write.sum") == 67_110_000  # Mbyte → bytes
    assert first.value("smsp__synthetic_metric_0001.sum") == 0 and first.metric("smsp__synthetic_metric_0001.sum").unit == "warp"
    assert first.metric("lts__t_bytes.sum").raw_value == "n/a" and first.value("lts__t_bytes.sum") is None
    assert any("ncu scaled some units" in note for note in profile.notes)


def test_a_launchs_metrics_read_like_a_dict() -> None:
    launch = read_profile_text(_wide_page(), "wide.csv").launches[1]
    metrics = launch.metrics
    assert len(metrics) == len(COLUMNS) - 1  # the duplicated title counts once
    assert "dram__bytes_read.sum" in metrics and "no_such_metric" not in metrics
    assert metrics.get("no_such_metric") is None
    with pytest.raises(KeyError):
        metrics["no_such_metric"]
    assert metrics["gpu__time_duration.sum"] is metrics["gpu__time_duration.sum"]  # built once
    assert repr(metrics) == repr(dict(metrics))


def test_wide_records_round_trip_through_the_session_format() -> None:
    profile = read_profile_text(_wide_page(), "wide.csv")
    assert Profile.from_dict(profile.to_dict(all_metrics=True)) == profile
    assert _figures(Profile.from_dict(profile.to_dict())) == _figures(profile)


def test_grouping_kernels_parses_only_the_cells_the_workbench_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []

    def counting_parse(text: str) -> int | float:
        parsed.append(text)
        return parse_number(text)

    monkeypatch.setattr(ncu, "parse_number", counting_parse)
    profile = read_profile_text(_wide_page(), "wide.csv")
    add, gemm = profile.kernels()
    assert add.dram.read is not None and add.dram.read.value == 134_221_312 + 5 * 4096  # median of launches 0, 2, … 10
    assert gemm.flop is not None and gemm.flop.tensor_flop() == 137_438_953_472
    used = sum(1 for title, _, _ in COLUMNS if is_used_metric(title))
    # each launch's ID (checked, then stored) and at most its used metrics: never the 40 synthetic columns
    assert len(parsed) <= LAUNCHES * (2 + used)


def test_keeping_only_the_metrics_the_workbench_reads() -> None:
    text = _wide_page()
    everything = read_profile_text(text, "wide.csv")
    kept = read_profile_text(text, "wide.csv", keep=is_used_metric)
    for full, slim in zip(everything.launches, kept.launches):
        assert dict(slim.metrics) == {name: m for name, m in full.metrics.items() if is_used_metric(name)}
        assert "smsp__synthetic_metric_0000.sum" not in slim.metrics
    assert _figures(kept) == _figures(everything)
    assert kept.notes == everything.notes  # the scaled-units note describes the file, kept metric or not
    only_ids = read_profile_text(text, "wide.csv", keep=lambda name: name == "smsp__synthetic_metric_0000.sum")
    assert any("ncu scaled some units" in note for note in only_ids.notes)


def test_keeping_metrics_of_a_details_page() -> None:
    path = DATA / "ncu_details.csv"
    everything = read_profile(path)
    kept = read_profile(path, keep=is_used_metric)
    for full, slim in zip(everything.launches, kept.launches):
        assert dict(slim.metrics) == {key: m for key, m in full.metrics.items() if is_used_metric(key)}
        assert slim.rules == full.rules
    assert kept.notes == everything.notes and _figures(kept) == _figures(everything)


def test_a_repeated_launch_deep_in_a_wide_page_names_its_line() -> None:
    lines = _wide_page().splitlines()
    lines.append(lines[5])  # launch 2 again, at the end
    with pytest.raises(ProfileError) as caught:
        read_profile_text("\n".join(lines) + "\n", "wide.csv")
    assert str(caught.value) == f"wide.csv, line {len(lines)}: launch 2 appears twice (first on line 6)"


@pytest.mark.parametrize(("text", "expected"), [("١٢٣", 123), ("0042", 42), ("1,234", 1234), ("12.50", 12.5)])
def test_digits_the_pattern_accepts_still_read(text: str, expected: int | float) -> None:
    value = parse_number(text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("text", ["²", "1_000", "+", "１,２３４x", " "])
def test_digit_like_text_is_still_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number(text)
