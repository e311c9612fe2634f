"""ncu CSV as ncu writes it: rows that end after their value, captured stdout around and between tables,
several processes, base and scaled units; and the rows that are still refused, each in one line."""

from __future__ import annotations

import pytest

from workbench.profilers import ProfileError, read_profile_text

HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",'
    '"Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description",'
    '"Estimated Speedup Type","Estimated Speedup"'
)


def row(launch: int, pid: int, kernel: str, metric: str, unit: str, value: str) -> str:
    """A metric row as current ncu writes it: the rule cells left off, a trailing comma."""
    return (
        f'"{launch}","{pid}","app","127.0.0.1","{kernel}","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0",'
        f'"Command line profiler metrics","{metric}","{unit}","{value}",'
    )


def test_two_processes_with_program_output_between_their_tables() -> None:
    text = "\n".join([
        "==PROF== Connected to process 100 (/usr/bin/app)",
        "step 1, loss 0.25",  # the program's own output, commas and all
        "==PROF== Disconnected from process 100",
        HEADER,
        row(0, 100, "k_a", "gpu__time_duration.sum", "nsecond", "2000"),
        row(0, 100, "k_a", "dram__bytes_read.sum", "byte", "4096"),
        "==PROF== Connected to process 200 (/usr/bin/app)",
        "step 2, loss 0.125",
        "==WARNING== a warning in between",
        HEADER,  # the second process's table under the same header
        row(0, 200, "k_b", "gpu__time_duration.sum", "usecond", "3.5"),
        row(0, 200, "k_b", "dram__bytes_read.sum", "Kbyte", "8.19"),
        "==PROF== Disconnected from process 200",
        "done",
    ]) + "\n"
    profile = read_profile_text(text, "two.log")
    assert [(launch.process_id, launch.launch_id, launch.kernel_name) for launch in profile.launches] == [
        (100, 0, "k_a"), (200, 0, "k_b")
    ]
    a, b = profile.kernels()
    assert a.duration is not None and a.duration.value == pytest.approx(2e-6)  # 2000 nsecond
    assert b.duration is not None and b.duration.value == pytest.approx(3.5e-6)  # 3.5 usecond
    assert b.dram.read is not None and b.dram.read.value == pytest.approx(8190)  # 8.19 Kbyte
    notes = " ".join(profile.notes)
    assert "2 lines of other output among ncu's rows passed over (lines 8, 14)" in notes
    assert "the header is repeated on line 10 (one table per process): read as one table" in notes


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (row(0, 1, "k", "m", "byte", "1") + '"x","y","z","w","v","u"', "line 3: 21 fields where the header (line 1) has 20"),
        ('"0","1","app","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","S","m","byte"', "line 3: 14 fields where the header (line 1) has 20"),
        ('"0","1","app","h","k","1', "line 3: not valid CSV"),  # a quote opened and never closed
    ],
)
def test_a_row_longer_than_the_header_short_of_its_value_or_with_an_open_quote_is_refused(bad: str, message: str) -> None:
    text = "\n".join([HEADER, row(0, 1, "k", "gpu__time_duration.sum", "nsecond", "5"), bad]) + "\n"
    with pytest.raises(ProfileError) as raised:
        read_profile_text(text, "bad.csv")
    assert message in str(raised.value)


def test_an_unquoted_line_as_wide_as_a_row_is_read_as_a_row_not_passed_over() -> None:
    unquoted = "1,1,app,h,k2,1,7,\"(1, 1, 1)\",\"(1, 1, 1)\",0,9.0,S,gpu__time_duration.sum,nsecond,7"
    text = "\n".join([HEADER, row(0, 1, "k", "gpu__time_duration.sum", "nsecond", "5"), unquoted]) + "\n"
    profile = read_profile_text(text, "unquoted.csv")
    assert [launch.kernel_name for launch in profile.launches] == ["k", "k2"]
    assert not any("passed over" in note for note in profile.notes)
