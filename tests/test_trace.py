"""Nsight Systems trace import (SQLite export and cuda_gpu_trace CSV) and its match to a step's operations."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from step_fixtures import DP_STEP
from trace_fixtures import (
    AXPY_KERNEL,
    CHAPTER_ROWS,
    FILL_KERNEL,
    GEMM_KERNEL,
    NCCL_KERNEL,
    SPLITK_GEMM_KERNEL,
    SPLITK_REDUCE_KERNEL,
    create_tables,
    csv_text,
    insert_rows,
    splitk_rows,
    write_sqlite,
)
from workbench.model.devices.catalogue import find_device
from workbench.profilers import trace_csv, trace_csv_fast, trace_sqlite
from workbench.profilers.trace import TraceError, read_trace_csv, read_trace_sqlite, read_trace_text
from workbench.profilers.trace_reader import read_trace
from workbench.steps import TRACE, StepError, match_trace, parse_step, parse_trace_match, step_timeline

# The chapter's device: an H100 SXM that sustains 100 TFLOP/s on the fp16 tensor-core path for this GEMM
# (the chapter's measured rate; the datasheet's 989 TFLOP/s would give a 139 µs bound).
CHAPTER_STEP = "gemm = gemm(M=4096, N=4096, K=4096, dtype=fp16)\n"


@pytest.fixture
def chapter_h100():  # type: ignore[no-untyped-def]
    return find_device("h100-sxm").with_rate("fp16_tc", 100e12, "measured", "the chapter's sustained rate")


def both_formats(tmp_path: Path, rows=CHAPTER_ROWS):  # type: ignore[no-untyped-def]
    sqlite_path = write_sqlite(tmp_path / "report1.sqlite", rows)
    csv_path = tmp_path / "report1_cuda_gpu_trace.csv"
    csv_path.write_text(csv_text(rows), encoding="utf-8")
    return [read_trace(sqlite_path), read_trace(csv_path)]


# -- reading ---------------------------------------------------------------------------


def test_sqlite_and_csv_read_the_same_intervals(tmp_path: Path) -> None:
    from_sqlite, from_csv = both_formats(tmp_path)
    assert (from_sqlite.format, from_csv.format) == ("sqlite", "csv")
    for trace in (from_sqlite, from_csv):
        assert len(trace) == 6
        assert trace.stream_labels() == ["stream 7"]
        gemm = [trace.interval(i) for i in range(len(trace)) if trace.interval(i).name == GEMM_KERNEL]
        assert len(gemm) == 1
        assert gemm[0].kind == "kernel"
        assert gemm[0].end_ns - gemm[0].start_ns == 1_800_000  # 2,850,000 − 1,050,000 ns
        assert gemm[0].duration_s == pytest.approx(1.8e-3)
        copies = sorted(trace.interval(i).name for i in range(len(trace)) if trace.interval(i).kind == "memcpy")
        assert copies == ["[CUDA memcpy Device-to-Host]", "[CUDA memcpy Host-to-Device]", "[CUDA memcpy Host-to-Device]"]
        memset = next(trace.interval(i) for i in range(len(trace)) if trace.interval(i).kind == "memset")
        assert memset.name == "[CUDA memset]"
        assert trace.origin_ns() == 1_000_000
    # Bytes: exact in the database; the CSV prints 33.554 MB (3 decimals), read back as 33,554,000 B.
    sqlite_bytes = {from_sqlite.interval(i).bytes for i in range(6) if from_sqlite.interval(i).kind == "memcpy"}
    csv_bytes = {from_csv.interval(i).bytes for i in range(6) if from_csv.interval(i).kind == "memcpy"}
    assert sqlite_bytes == {33_554_432} and csv_bytes == {33_554_000}


def test_nccl_kernels_and_peer_copies_are_communication(tmp_path: Path) -> None:
    rows = [("kernel", NCCL_KERNEL, 10, 20, 13, None), ("memcpy", "Peer-to-Peer", 30, 40, 13, 1024), ("kernel", GEMM_KERNEL, 50, 60, 7, None)]
    for trace in both_formats(tmp_path, rows):
        flags = {trace.interval(i).name: trace.interval(i).communication for i in range(3)}
        assert flags == {NCCL_KERNEL: True, "[CUDA memcpy Peer-to-Peer]": True, GEMM_KERNEL: False}
        assert trace.stream_labels() == ["stream 13", "stream 7"]


def test_several_devices_name_their_lanes(tmp_path: Path) -> None:
    path = tmp_path / "two.sqlite"
    connection = sqlite3.connect(path)
    create_tables(connection)
    insert_rows(connection, [("kernel", GEMM_KERNEL, 10, 20, 7, None)], device=0)
    insert_rows(connection, [("kernel", GEMM_KERNEL, 10, 22, 7, None)], device=1)
    connection.commit()
    connection.close()
    assert read_trace(path).stream_labels() == ["GPU 0 · stream 7", "GPU 1 · stream 7"]


def test_untimed_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    rows = [("kernel", GEMM_KERNEL, 0, 0, 7, None), ("kernel", GEMM_KERNEL, 5, 9, 7, None)]
    trace = read_trace(write_sqlite(tmp_path / "t.sqlite", rows))
    assert len(trace) == 1
    assert any("1 rows without timestamps" in note for note in trace.notes)


def test_csv_time_unit_is_read_from_the_title() -> None:
    text = "Start (us),Duration (us),CorrId,Strm,Name\n1050.000,1800.000,1,7,gemm_kernel\n"
    trace = read_trace_text(text)
    assert (trace.start[0], trace.end[0]) == (1_050_000, 2_850_000)


def test_csv_without_the_newer_columns() -> None:
    # Older releases: no GreenCtx, no Throughput, no SrcMemKd/DstMemKd.
    text = "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Device,Ctx,Strm,Name\n" \
           "100,30,11,2,1,1,64,1,1,24,0,0,,NVIDIA A100-SXM4-80GB (0),1,7,void k(float*)\n" \
           "170,5,13,,,,,,,,,,0.004,NVIDIA A100-SXM4-80GB (0),1,7,[CUDA memcpy HtoD]\n"
    trace = read_trace_text(text)
    assert len(trace) == 2 and trace.interval(1).kind == "memcpy" and trace.interval(1).bytes == 4000


# -- hostile files ------------------------------------------------------------------------


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text
    return text


def test_sqlite_is_opened_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_sqlite(tmp_path / "r.sqlite")
    before = path.read_bytes()
    opened: list[tuple] = []
    real_connect = sqlite3.connect

    def connect(*args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append((args, kwargs))
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    read_trace_sqlite(path)
    monkeypatch.undo()
    (args, kwargs), = opened
    assert args[0].startswith("file:") and args[0].endswith("?mode=ro") and kwargs == {"uri": True}
    reopened = real_connect(args[0], uri=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reopened.execute("CREATE TABLE t (x)")  # what that URI refuses
    reopened.close()
    os.chmod(path, 0o444)
    try:
        read_trace_sqlite(path)
    finally:
        os.chmod(path, 0o644)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]  # no journal, no WAL left behind


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["pipe.sqlite", "pipe.csv"])
def test_fifo_is_refused_without_blocking(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    with pytest.raises(TraceError) as caught:
        read_trace(fifo)
    assert "named pipe" in one_line(caught.value) and name in str(caught.value)


def test_device_is_refused() -> None:
    with pytest.raises(TraceError) as caught:
        read_trace_sqlite("/dev/zero")
    assert "device" in one_line(caught.value)


def test_non_database_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("hello, not a database\n")
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert "not an SQLite database" in one_line(caught.value)


def test_damaged_database_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert one_line(caught.value).startswith("broken.sqlite: ")


def test_missing_tables_are_named(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    connection.commit()
    connection.close()
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert "no CUPTI_ACTIVITY_KIND_KERNEL or CUPTI_ACTIVITY_KIND_MEMCPY table" in one_line(caught.value)


def test_missing_string_table_is_named(tmp_path: Path) -> None:
    path = tmp_path / "nostrings.sqlite"
    connection = sqlite3.connect(path)
    create_tables(connection)
    insert_rows(connection, [("kernel", GEMM_KERNEL, 5, 9, 7, None)])
    connection.execute("DROP TABLE StringIds")
    connection.commit()
    connection.close()
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert "no StringIds table" in one_line(caught.value)


@pytest.mark.parametrize("orphan", [999, None])
def test_kernel_name_id_missing_from_the_strings_is_named(tmp_path: Path, orphan: int | None) -> None:
    # Found while the rows are read (no scan beforehand): the row and the id are still named.
    path = tmp_path / "orphan.sqlite"
    connection = sqlite3.connect(path)
    create_tables(connection)
    insert_rows(connection, [("kernel", GEMM_KERNEL, 5, 9, 7, None), ("kernel", FILL_KERNEL, 10, 19, 7, None)])
    connection.execute("PRAGMA ignore_check_constraints = ON")
    connection.execute("CREATE TABLE k2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL")  # demangledName without NOT NULL
    connection.execute("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
    connection.execute("ALTER TABLE k2 RENAME TO CUPTI_ACTIVITY_KIND_KERNEL")
    connection.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = ? WHERE start = 10", (orphan,))
    connection.commit()
    connection.close()
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert f"CUPTI_ACTIVITY_KIND_KERNEL row 2: the name id {orphan!r} (demangledName) is not in StringIds" in one_line(caught.value)


def test_missing_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "nostream.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    connection.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, shortName INT)")
    connection.commit()
    connection.close()
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert "CUPTI_ACTIVITY_KIND_KERNEL has no column streamId" in one_line(caught.value)


@pytest.mark.parametrize(
    ("start", "end", "fragment"),
    [
        (-5, 10, "'start' is -5: a time cannot be negative"),
        (100, 50, "'end' is before 'start'"),
        (100, 100 + 2 * 86_400 * 10**9, "longer than a day"),
    ],
)
def test_bad_times_in_the_database_name_the_column(tmp_path: Path, start: int, end: int, fragment: str) -> None:
    path = write_sqlite(tmp_path / "bad.sqlite", [("kernel", GEMM_KERNEL, 1, 2, 7, None), ("kernel", GEMM_KERNEL, start, end, 7, None)])
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    text = one_line(caught.value)
    assert fragment in text and "CUPTI_ACTIVITY_KIND_KERNEL row 2" in text


def test_text_in_a_time_column_of_the_database(tmp_path: Path) -> None:
    path = write_sqlite(tmp_path / "text.sqlite", [("kernel", GEMM_KERNEL, 1, 2, 7, None)])
    connection = sqlite3.connect(path)
    connection.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon'")
    connection.commit()
    connection.close()
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert "'start' is 'soon', not a time in ns" in one_line(caught.value)


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ("-5,30,1,7,k\n", "line 2: 'Start (ns)' is -5: a time cannot be negative"),
        ("5,-30,1,7,k\n", "line 2: 'Duration (ns)' is -30: a duration cannot be negative"),
        ("5,abc,1,7,k\n", "line 2: 'Duration (ns)' is 'abc': expected a time"),
        ("5,,1,7,k\n", "line 2: 'Duration (ns)' is empty"),
        ("5,100000000000000000,1,7,k\n", "longer than a day"),
        ("5,nan,1,7,k\n", "not a finite time"),
        ("5,30,1,7\n", "line 2: the row has 4 cells"),
        ("5,30,1,7,\n", "line 2: the Name cell is empty"),
    ],
)
def test_bad_csv_rows_name_the_column_and_line(row: str, fragment: str) -> None:
    with pytest.raises(TraceError) as caught:
        read_trace_text("Start (ns),Duration (ns),CorrId,Strm,Name\n" + row, "t.csv")
    assert fragment in one_line(caught.value)


def test_csv_missing_columns_are_named() -> None:
    with pytest.raises(TraceError) as caught:
        read_trace_text("Start (ns),Duration (ns),CorrId,Name\n1,2,3,k\n", "t.csv")
    assert "the cuda_gpu_trace header has no column Strm" in one_line(caught.value)


def test_kernel_summary_is_not_a_trace() -> None:
    summary = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n50,100,2,50,50,40,60,1,k\n"
    with pytest.raises(TraceError) as caught:
        read_trace_text(summary, "sum.csv")
    assert "no cuda_gpu_trace header" in one_line(caught.value)


def test_csv_over_the_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.csv"
    path.write_text(csv_text())
    monkeypatch.setattr(trace_csv, "MAX_CSV_BYTES", 100)
    with pytest.raises(TraceError) as caught:
        read_trace_csv(path)
    assert "over the limit" in one_line(caught.value)


def test_binary_report_asks_for_an_export(tmp_path: Path) -> None:
    path = tmp_path / "report1.nsys-rep"
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert "nsys export --type sqlite report1.nsys-rep" in one_line(caught.value)


def test_binary_csv_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "junk.csv"
    path.write_bytes(b"\x00" * 100)
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert "binary" in one_line(caught.value)


def test_row_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for reader in (trace_sqlite, trace_csv, trace_csv_fast):  # each reads the limit
        monkeypatch.setattr(reader, "MAX_TRACE_ROWS", 3)
    for trace_path in (write_sqlite(tmp_path / "rows.sqlite"),):
        with pytest.raises(TraceError) as caught:
            read_trace(trace_path)
        assert "more than 3 intervals" in one_line(caught.value)
    with pytest.raises(TraceError):
        read_trace_text(csv_text())


# -- matched to a step: the chapter's GEMM against its bound ------------------------------------


def test_chapter_gemm_interval_beside_its_bound(tmp_path: Path, chapter_h100) -> None:  # type: ignore[no-untyped-def]
    # Bound: 2 × 4096³ = 137,438,953,472 FLOP / 100 TFLOP/s = 1.37439 ms (compute);
    # HBM: 3 × 4096² × 2 B = 100,663,296 B / 3.35 TB/s = 30.05 µs, so compute-limited at 1.374 ms.
    # Trace: the GEMM's interval runs 1,050,000 → 2,850,000 ns = 1.8 ms, 1.8 / 1.37439 = 1.310× the bound
    # (the kernel reaches 1.37439 / 1.8 = 76.4 % of the sustained rate).
    for trace in both_formats(tmp_path):
        timeline = step_timeline(CHAPTER_STEP, chapter_h100, trace=trace)
        time = timeline.times["gemm"]
        assert time.source == TRACE
        assert time.seconds == pytest.approx(1.8e-3)
        assert time.bound_s == pytest.approx(137_438_953_472 / 100e12)
        assert time.seconds / time.bound_s == pytest.approx(1.3097, abs=1e-4)
        assert time.trace is not None and time.trace.first.name == GEMM_KERNEL
        assert time.trace.rule == "suggested (gemm)"
        assert timeline.step_time == pytest.approx(1.8e-3)
        # Unmatched: the fill kernel and the copies are listed, largest total first.
        unmatched = [(u.name, u.count) for u in timeline.measured.unmatched]
        assert unmatched[0] == ("[CUDA memcpy Host-to-Device]", 2)  # 11.3 µs + 11.3 µs = 22.6 µs
        assert (FILL_KERNEL, 1) in unmatched
        text = timeline.summary_text()
        assert "1.8 ms measured, bound 1.374 ms (1.31× the bound)" in text
        assert "unmatched kernels (4 names)" in text
        data = timeline.to_dict()
        op = data["operations"][0]
        assert op["source"] == "trace" and op["bound_s"] == pytest.approx(1.37439e-3, rel=1e-5)
        assert op["trace"]["first_start_s"] == pytest.approx(50e-6)  # 1,050,000 − 1,000,000 ns
        assert data["trace"]["intervals"] == 6 and data["trace"]["matched"] == {"gemm": 1}
        json.dumps(data)


def test_without_a_device_the_trace_still_times_the_step(tmp_path: Path) -> None:
    trace = both_formats(tmp_path)[0]
    timeline = step_timeline(CHAPTER_STEP, None, trace=trace)
    assert timeline.times["gemm"].bound_s is None and timeline.step_time == pytest.approx(1.8e-3)
    with pytest.raises(StepError, match="import a trace"):
        step_timeline(CHAPTER_STEP + "x = axpy(n=2**20, dtype=fp32)\n", None, trace=trace)


def dp_rows(offset: int, gemm_ns: tuple[int, int, int]) -> list[tuple[str, str, int, int, int, int | None]]:
    g1, g2, g3 = gemm_ns
    return [
        ("kernel", GEMM_KERNEL, offset, offset + g1, 7, None),
        ("kernel", GEMM_KERNEL, offset + g1, offset + g1 + g2, 7, None),
        ("kernel", NCCL_KERNEL, offset + g1 + g2, offset + g1 + g2 + 1_100_000, 13, None),
        ("kernel", GEMM_KERNEL, offset + g1 + g2, offset + g1 + g2 + g3, 7, None),
        ("kernel", NCCL_KERNEL, offset + g1 + g2 + g3, offset + g1 + g2 + g3 + 1_200_000, 13, None),
        ("kernel", AXPY_KERNEL, offset + g1 + g2 + g3 + 1_200_000, offset + g1 + g2 + g3 + 1_500_000, 7, None),
        ("kernel", FILL_KERNEL, offset + 10_000_000, offset + 10_010_000, 7, None),
    ]


def test_repeated_operations_are_dealt_in_time_order_and_take_the_median(tmp_path: Path) -> None:
    # Two iterations of the example step. GEMMs: iteration 1 1.2/1.3/1.4 ms, iteration 2 1.0/1.1/1.6 ms;
    # dealt in time order fwd, bwd1, bwd2, fwd, bwd1, bwd2 → fwd median(1.2, 1.0) = 1.1 ms,
    # bwd1 median(1.3, 1.1) = 1.2 ms, bwd2 median(1.4, 1.6) = 1.5 ms. all-reduces: ar1 1.1 ms, ar2 1.2 ms.
    rows = dp_rows(0, (1_200_000, 1_300_000, 1_400_000)) + dp_rows(20_000_000, (1_000_000, 1_100_000, 1_600_000))
    device = find_device("h100-sxm")
    for trace in both_formats(tmp_path, rows):
        timeline = step_timeline(DP_STEP, device, trace=trace)
        seconds = {name: t.seconds for name, t in timeline.times.items()}
        assert seconds == pytest.approx({"fwd": 1.1e-3, "bwd1": 1.2e-3, "bwd2": 1.5e-3, "ar1": 1.1e-3, "ar2": 1.2e-3, "opt": 0.3e-3})
        assert {t.source for t in timeline.times.values()} == {TRACE}
        assert timeline.times["fwd"].trace.first.start_ns == 0
        assert len(timeline.times["bwd2"].trace.intervals) == 2
        assert timeline.times["ar1"].trace.rule == "suggested (allreduce)"
        assert timeline.times["ar1"].trace.first.communication
        # The model: fwd 1.1, bwd1 1.2 → 2.3; bwd2 1.5 → 3.8; ar2 3.8 + 1.2 = 5.0; opt 5.0 + 0.3 = 5.3 ms.
        assert timeline.step_time == pytest.approx(5.3e-3)
        assert [u.name for u in timeline.measured.unmatched] == [FILL_KERNEL]


def test_explicit_rules_win_over_suggestions(tmp_path: Path) -> None:
    plan = parse_step(DP_STEP)
    trace = both_formats(tmp_path, dp_rows(0, (1_000_000, 1_000_000, 1_000_000)))[0]
    rules = [parse_trace_match("regex:FillFunctor=opt", plan)]
    measured = match_trace(plan, trace, rules)
    assert measured.matches["opt"].first.name == FILL_KERNEL and measured.matches["opt"].rule == "regex:FillFunctor"
    assert [u.name for u in measured.unmatched] == [AXPY_KERNEL]  # no longer suggested: opt has a rule
    # One pattern for several operations deals its intervals among them in time order too.
    rules = [parse_trace_match(f"{GEMM_KERNEL}=bwd1", plan), parse_trace_match(f"{GEMM_KERNEL}=fwd", plan)]
    measured = match_trace(plan, trace, rules)
    assert measured.matches["bwd1"].first.start_ns == 0 and len(measured.matches["bwd1"].intervals) == 2
    assert "bwd2" in measured.unmatched_operations


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("gemm", "--match wants PATTERN=OPERATION"), ("gemm=nope", "no operation 'nope'"), ("regex:(=fwd", "bad regular expression")],
)
def test_bad_match_rules(text: str, fragment: str) -> None:
    with pytest.raises(StepError, match=fragment.replace("(", r"\(")):
        parse_trace_match(text, parse_step(DP_STEP))


def test_operations_without_an_interval_keep_their_bound(tmp_path: Path) -> None:
    trace = both_formats(tmp_path, [("kernel", NCCL_KERNEL, 0, 1_000_000, 13, None)])[0]
    timeline = step_timeline(DP_STEP, find_device("h100-sxm"), trace=trace)
    assert timeline.times["ar1"].source == TRACE and timeline.times["ar2"].source == "bound"
    assert set(timeline.measured.unmatched_operations) == {"fwd", "bwd1", "bwd2", "ar2", "opt"}


# -- an operation made of several kernels: a split-K GEMM and its reduction ------------------------

SPLITK_RULES = ("*splitk_kernel*=gemm", "splitKreduce*=gemm")


def test_split_k_gemm_is_one_operation_timed_per_iteration(tmp_path: Path) -> None:
    # tests/trace_fixtures.py splitk_rows(): iterations span 1.61, 1.725, 1.56 ms (first start → last end),
    # busy 1.6, 1.72, 1.54 ms (GEMM + reduction durations) → median span 1.61 ms, median busy 1.6 ms.
    plan = parse_step(CHAPTER_STEP)
    for trace in both_formats(tmp_path, splitk_rows()):
        match = match_trace(plan, trace, [parse_trace_match(text, plan) for text in SPLITK_RULES]).matches["gemm"]
        assert match.median_s == pytest.approx(1.61e-3) and match.median_busy_s == pytest.approx(1.6e-3)
        assert match.iterations == 3 and len(match.intervals) == 6 and match.left_out == 1  # the reduction at 0.5 ms
        assert [part.kernel for part in match.parts] == [SPLITK_GEMM_KERNEL, SPLITK_REDUCE_KERNEL]
        assert [part.median_s for part in match.parts] == pytest.approx([1.5e-3, 0.1e-3])
        assert match.first_rows == (1, 2) and match.first.start_ns == 1_000_000 and match.first_end_ns == 2_610_000
        assert match.rule == "*splitk_kernel* + splitKreduce*"
        assert "median of 3 iterations of" in match.detail() and "kernels busy 1.6 ms" in match.detail()
        timeline = step_timeline(plan, find_device("h100-sxm"), trace=trace, rules=[parse_trace_match(t, plan) for t in SPLITK_RULES])
        assert timeline.step_time == pytest.approx(1.61e-3) and timeline.times["gemm"].source == TRACE
        assert [u.name for u in timeline.measured.unmatched] == [FILL_KERNEL]
        # Kernel by kernel (one rule) the operation would be the GEMM kernel alone: median(1.5, 1.6, 1.45) = 1.5 ms.
        alone = match_trace(plan, trace, [parse_trace_match(SPLITK_RULES[0], plan)]).matches["gemm"]
        assert alone.median_s == pytest.approx(1.5e-3) and not alone.parts


def test_the_first_rule_starts_each_iteration(tmp_path: Path) -> None:
    # Rules the other way round: the reductions start the iterations. Windows [0.5, 2.51), [2.51, 4.605),
    # [4.605, 6.47) ms hold the GEMMs at 1.0, 3.0, 5.0 → spans 2.5 − 0.5 = 2.0, 4.6 − 2.51 = 2.09,
    # 6.45 − 4.605 = 1.845 ms; the last reduction (6.47) has no GEMM after it: left out. Median 2.0 ms.
    plan = parse_step(CHAPTER_STEP)
    trace = both_formats(tmp_path, splitk_rows())[1]
    match = match_trace(plan, trace, [parse_trace_match(text, plan) for text in reversed(SPLITK_RULES)]).matches["gemm"]
    assert match.median_s == pytest.approx(2.0e-3) and match.iterations == 3 and match.left_out == 1


def test_several_split_k_operations_share_their_kernels_in_time_order(tmp_path: Path) -> None:
    # Without the early reduction: GEMMs at 1.0, 3.0, 5.0 ms dealt fwd, bwd, fwd; reductions at 2.51, 4.605,
    # 6.47 dealt fwd, bwd, fwd. fwd: spans 2.61 − 1.0 = 1.61 and 6.56 − 5.0 = 1.56 → median 1.585 ms;
    # bwd: 4.725 − 3.0 = 1.725 ms.
    plan = parse_step("fwd = gemm(M=4096, N=4096, K=4096, dtype=fp16)\nbwd = gemm(M=4096, N=4096, K=4096, dtype=fp16) after fwd\n")
    texts = ["*splitk_kernel*=fwd", "*splitk_kernel*=bwd", "splitKreduce*=fwd", "splitKreduce*=bwd"]
    trace = both_formats(tmp_path, splitk_rows()[1:])[0]
    matches = match_trace(plan, trace, [parse_trace_match(text, plan) for text in texts]).matches
    assert matches["fwd"].median_s == pytest.approx(1.585e-3) and matches["fwd"].iterations == 2
    assert matches["bwd"].median_s == pytest.approx(1.725e-3) and matches["bwd"].median_busy_s == pytest.approx(1.72e-3)


def test_an_operation_whose_parts_never_meet_is_not_matched(tmp_path: Path) -> None:
    # Every reduction comes before the only GEMM: no iteration holds both, so the GEMM keeps its bound.
    rows = [("kernel", SPLITK_REDUCE_KERNEL, 0, 10, 7, None), ("kernel", SPLITK_GEMM_KERNEL, 100, 200, 7, None)]
    plan = parse_step(CHAPTER_STEP)
    trace = both_formats(tmp_path, rows)[0]
    measured = match_trace(plan, trace, [parse_trace_match(text, plan) for text in reversed(SPLITK_RULES)])
    assert measured.matches["gemm"].median_s == pytest.approx(200e-9)  # the reduction first: 0 → 200 ns holds both
    measured = match_trace(plan, trace, [parse_trace_match(text, plan) for text in SPLITK_RULES])
    assert measured.unmatched_operations == ("gemm",) and not measured.matches


# -- the CLI --------------------------------------------------------------------------------------


def test_cli_step_with_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    step = tmp_path / "chapter.step"
    step.write_text(CHAPTER_STEP)
    database = write_sqlite(tmp_path / "report1.sqlite")
    assert main(["step", str(step), "--device", "h100-sxm", "--trace", str(database), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    op = data["operations"][0]
    # On the datasheet H100 (989 TFLOP/s fp16 tensor): 137,438,953,472 / 989e12 = 139.0 µs; 1.8 ms is 12.95× that.
    assert op["source"] == "trace" and op["time_s"] == pytest.approx(1.8e-3)
    assert op["bound_s"] == pytest.approx(137_438_953_472 / 989e12)
    assert data["trace"]["format"] == "sqlite" and data["trace"]["unmatched_names"] == 4
    assert main(["step", str(step), "--device", "h100-sxm", "--trace", str(database), "--match", f"{FILL_KERNEL}=gemm"]) == 0
    out = capsys.readouterr().out
    assert "trace report1.sqlite (sqlite): 6 intervals on 1 streams" in out and "11 µs measured" in out


def test_cli_split_k_gemm_with_two_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    step = tmp_path / "chapter.step"
    step.write_text(CHAPTER_STEP)
    path = tmp_path / "splitk_cuda_gpu_trace.csv"
    path.write_text(csv_text(splitk_rows()))
    rules = [arg for text in SPLITK_RULES for arg in ("--match", text)]
    assert main(["step", str(step), "--device", "h100-sxm", "--trace", str(path), *rules, "--json"]) == 0
    op = json.loads(capsys.readouterr().out)["operations"][0]
    # Hand figures in trace_fixtures.splitk_rows: median span 1.61 ms, median busy 1.6 ms over 3 iterations.
    assert op["time_s"] == pytest.approx(1.61e-3) and op["source"] == "trace"
    block = op["trace"]
    assert block["iterations"] == 3 and block["intervals"] == 6 and block["left_out_intervals"] == 1
    assert block["median_s"] == pytest.approx(1.61e-3) and block["median_busy_s"] == pytest.approx(1.6e-3)
    # The first iteration, from the trace's first interval (the early reduction at 0.5 ms): 0.5 → 2.11 ms.
    assert (block["first_start_s"], block["first_end_s"]) == pytest.approx((0.5e-3, 2.11e-3))
    assert [(part["rule"], part["intervals"]) for part in block["parts"]] == [("*splitk_kernel*", 3), ("splitKreduce*", 3)]
    assert block["parts"][1]["median_s"] == pytest.approx(0.1e-3) and block["combined"].startswith("span")
    assert main(["step", str(step), "--device", "h100-sxm", "--trace", str(path), *rules]) == 0
    out = capsys.readouterr().out
    # Bound on the datasheet H100: 137,438,953,472 FLOP / 989 TFLOP/s = 139.0 µs; 1.61 ms is 11.59× that.
    assert "gemm: 1.61 ms measured, bound 139 µs (11.59× the bound)" in out
    assert "splitKreduce*: 3 × splitKreduce_kernel, median 100 µs" in out
    assert main(["step", str(step), "--device", "h100-sxm", "--trace", str(path), *rules, "--match", "splitKreduce*=nope"]) == 2
    err = capsys.readouterr().err
    assert "--match 'splitKreduce*=nope': the step has no operation 'nope'" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--trace", "missing.sqlite"], "missing.sqlite: no such file"),
        (["--trace", "STEP"], "no cuda_gpu_trace header"),
        (["--match", "x=gemm"], "give the trace with --trace"),
        (["--trace", "DB", "--match", "x=nope"], "no operation 'nope'"),
    ],
)
def test_cli_bad_trace_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str) -> None:
    from workbench.cli import main

    step = tmp_path / "chapter.step"
    step.write_text(CHAPTER_STEP)
    database = write_sqlite(tmp_path / "report1.sqlite")
    extra = [str(step) if e == "STEP" else str(database) if e == "DB" else str(tmp_path / e) if e.endswith(".sqlite") else e for e in extra]
    assert main(["step", str(step), "--device", "h100-sxm", *extra]) == 2
    captured = capsys.readouterr()
    assert fragment in captured.err and captured.err.count("\n") == 1 and "Traceback" not in captured.err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_cli_fifo_trace_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    step = tmp_path / "chapter.step"
    step.write_text(CHAPTER_STEP)
    fifo = tmp_path / "report1.sqlite"
    os.mkfifo(fifo)
    assert main(["step", str(step), "--device", "h100-sxm", "--trace", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert "report1.sqlite: it is a named pipe (FIFO), not a regular file" in err and err.count("\n") == 1


@pytest.mark.parametrize(("chunk", "block"), [(2, 1), (3, 40), (20_000, 97), (20_000, 4 * 2**20)])
def test_csv_chunks_of_any_size_read_the_same(monkeypatch: pytest.MonkeyPatch, chunk: int, block: int) -> None:
    # Small chunks and blocks put record boundaries everywhere: a quoted name with commas, one spanning two
    # lines, a quote in another column (the csv module's path), CRLF line ends, a blank line, then the next report.
    monkeypatch.setattr(trace_csv, "_CSV_CHUNK", chunk)
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", block)
    text = (
        "Start (ns),Duration (ns),CorrId,Device,Strm,Name\r\n"
        '10,5,1,GPU (0),7,"void k<4, F>(int, T2)"\r\n'
        "20,6,2,GPU (0),7,plain_kernel\r\n"
        '30,7,3,GPU (0),7,"a ""quoted"" name,\nover two lines"\r\n'
        '40,8,4,"GPU (0)",7,plain_kernel\r\n'
        "\r\n"
        "50,9,5,GPU (0),9,[CUDA memset]\r\n"
        "\r\n"
        "** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\r\n"
        "Time (%),Total Time (ns),Instances,Name\r\n"
    )
    trace = read_trace_text(text)
    names = [trace.interval(i).name for i in range(len(trace))]
    assert names == ["void k<4, F>(int, T2)", "plain_kernel", 'a "quoted" name,\nover two lines', "plain_kernel", "[CUDA memset]"]
    assert [trace.interval(i).end_ns for i in range(len(trace))] == [15, 26, 37, 48, 59]
    assert trace.stream_labels() == ["stream 7", "stream 9"]
    assert trace.interval(4).kind == "memset"


def test_csv_error_after_many_rows_names_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_csv, "_CSV_CHUNK", 4)
    rows = "".join(f'{i * 10},5,{i},GPU (0),7,"k<1, 2>"\n' for i in range(9)) + "95,-5,9,GPU (0),7,k\n"
    with pytest.raises(TraceError) as caught:
        read_trace_text("Start (ns),Duration (ns),CorrId,Device,Strm,Name\n" + rows, "t.csv")
    assert "t.csv, line 11: 'Duration (ns)' is -5" in one_line(caught.value)


# -- the CSV's two ways: NumPy's, for plain blocks, and the csv module's, the reference ---------------


def mixed_rows(count: int) -> list[tuple[str, str, int, int, int, int | None]]:
    """Kernels (names with commas and doubled quotes), copies with sizes, memsets, on three streams."""
    kernels = [GEMM_KERNEL, FILL_KERNEL, NCCL_KERNEL, 'void k<"x", 2>(int)']
    rows: list[tuple[str, str, int, int, int, int | None]] = []
    clock = 1_000
    for i in range(count):
        if i % 7 == 3:
            rows.append(("memcpy", "Device-to-Host" if i % 2 else "Host-to-Device", clock, clock + 500 + i, 21, 4_000 * (i + 1)))  # MB with 3 decimals: kB exact
        elif i % 11 == 5:
            rows.append(("memset", "", clock, clock + 40, 7, 2**20))
        else:
            rows.append(("kernel", kernels[i % 4], clock, clock + 1_000 + 37 * i, 7 if i % 3 else 13, None))
        clock += 997 + i
    return rows


def trace_rows(trace) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(iv.name, iv.kind, iv.stream, iv.start_ns, iv.end_ns, iv.bytes) for iv in map(trace.interval, range(len(trace)))]


def csv_module_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_csv, "_csv_block_fast", lambda data, state, line: None)


@pytest.mark.parametrize("block", [64, 1000, 4 * 2**20])
@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_numpy_way_reads_what_the_csv_module_reads(monkeypatch: pytest.MonkeyPatch, block: int, line_end: str) -> None:
    text = csv_text(mixed_rows(300)).replace("\n", line_end)
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", block)
    taken = []
    fast = trace_csv._csv_block_fast
    monkeypatch.setattr(trace_csv, "_csv_block_fast", lambda *args: taken.append(fast(*args)) or taken[-1])
    numpy_way = read_trace_text(text)
    assert taken and all(lines for lines in taken[1:]), "every block after the header's went NumPy's way"
    monkeypatch.undo()
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", block)
    csv_module_only(monkeypatch)
    reference = read_trace_text(text)
    assert trace_rows(numpy_way) == trace_rows(reference)
    assert numpy_way.names == reference.names and numpy_way.streams == reference.streams
    rows = trace_rows(numpy_way)
    assert len(rows) == 300 and rows[3][1:] == ("memcpy", "stream 21", rows[3][3], rows[3][3] + 503, 16_000)
    assert rows[1][0] == FILL_KERNEL and rows[3][0] == "[CUDA memcpy Device-to-Host]"
    assert 'void k<"x", 2>(int)' in numpy_way.names


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ('-5,30,1,GPU (0),7,"k"\n', "line 13: 'Start (ns)' is -5: a time cannot be negative"),
        ('5,-30,1,GPU (0),7,"k"\n', "line 13: 'Duration (ns)' is -30: a duration cannot be negative"),
        ('5,3e1,1,GPU (0),7,"k"\n', None),  # a valid float: the csv module's way reads it as 30 ns
        ('5,x1,1,GPU (0),7,"k"\n', "line 13: 'Duration (ns)' is 'x1': expected a time"),
        ('5,,1,GPU (0),7,"k"\n', "line 13: 'Duration (ns)' is empty"),
        ('5,1234567890123456789,1,GPU (0),7,"k"\n', "line 13: 'Duration (ns)' − 'Start (ns)' is 1.23457e+09 s: longer than a day"),
        ('4611686018427387900,300,1,GPU (0),7,"k"\n', "line 13: 'Start (ns)' is 4611686018427387900: too large to be a timestamp"),
        ('5,30,1,GPU (0),7\n', "line 13: the row has 5 cells"),
        ('5,30,1,GPU (0),7,\n', "line 13: the Name cell is empty"),
        # a quoted cell left open to the file's end, taking the last row into the name: refused, not read as a name
        ('5,30,1,GPU (0),7,"unterminated\n', "runs on over lines that look like rows"),
    ],
)
def test_bad_row_after_numpy_blocks_names_its_line(monkeypatch: pytest.MonkeyPatch, row: str, fragment: str | None) -> None:
    # Eleven plain rows (lines 2–12) fill blocks of 64 bytes NumPy's way; line 13 is the bad one.
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", 64)
    rows = "".join(f'{i * 100},50,{i},GPU (0),7,"k<1, 2>"\n' for i in range(11))
    text = "Start (ns),Duration (ns),CorrId,Device,Strm,Name\n" + rows + row + '9000,5,99,GPU (0),7,"k<1, 2>"\n'
    if fragment is None:
        trace = read_trace_text(text, "t.csv")
        assert len(trace) in (12, 13)
        return
    with pytest.raises(TraceError) as caught:
        read_trace_text(text, "t.csv")
    assert f"t.csv, {fragment}" in one_line(caught.value) or ("t.csv (at line 13 or later" in one_line(caught.value)
                                                            and fragment in one_line(caught.value))


@pytest.mark.parametrize("size", ["inf", "nan", "1e300", "-4", "many"])
def test_bad_copy_size_is_one_line_either_way(monkeypatch: pytest.MonkeyPatch, size: str) -> None:
    # An infinite or absurd byte count once escaped as OverflowError (a traceback).
    text = "Start (ns),Duration (ns),Bytes (MB),Device,Strm,Name\n10,5,1.5,GPU (0),7,[CUDA memcpy Host-to-Device]\n" \
           f"20,5,{size},GPU (0),7,[CUDA memcpy Host-to-Device]\n"
    for way in ("numpy", "csv module"):
        if way == "csv module":
            csv_module_only(monkeypatch)
        with pytest.raises(TraceError) as caught:
            read_trace_text(text, "t.csv")
        assert "t.csv, line 3: 'Bytes (MB)' is" in one_line(caught.value)


def test_a_line_without_end_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_csv, "MAX_CSV_LINE_BYTES", 1000)
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", 100)
    text = "Start (ns),Duration (ns),Strm,Name\n1,2,7,k\n" + "x" * 5000
    with pytest.raises(TraceError) as caught:
        read_trace_text(text, "t.csv")
    assert "t.csv, line 3: no line end in" in one_line(caught.value)


def test_numpy_way_keeps_the_row_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_csv_fast, "MAX_TRACE_ROWS", 5)
    rows = "".join(f"{i * 10},5,GPU (0),7,k\n" for i in range(8))
    with pytest.raises(TraceError) as caught:
        read_trace_text("Start (ns),Duration (ns),Device,Strm,Name\n" + rows, "t.csv")
    assert "t.csv, line 7: more than 5 intervals" in one_line(caught.value)


def test_columns_in_another_order_go_the_csv_module_s_way(monkeypatch: pytest.MonkeyPatch) -> None:
    # The lane's cells before the times (a key would be new on every row), or the Name not last: the csv module reads it.
    taken = []
    fast = trace_csv._csv_block_fast
    monkeypatch.setattr(trace_csv, "_csv_block_fast", lambda *args: taken.append(1) or fast(*args))
    trace = read_trace_text("Strm,Start (ns),Duration (ns),Name\n7,10,5,k\n9,20,6,\"k, 2\"\n")
    assert trace_rows(trace) == [("k", "kernel", "stream 7", 10, 15, None), ("k, 2", "kernel", "stream 9", 20, 26, None)]
    trace = read_trace_text("Start (ns),Duration (ns),Name,Strm\n10,5,k,7\n")
    assert trace_rows(trace) == [("k", "kernel", "stream 7", 10, 15, None)]
    assert not taken
    read_trace_text("Start (ns),Duration (ns),Strm,Name\n10,5,7,k\n")
    assert taken


def test_a_stray_quote_parses_as_the_whole_file_would(monkeypatch: pytest.MonkeyPatch) -> None:
    # A quote inside an unquoted cell is text to the csv module, but it upsets the quote count that blocks end
    # by; a later name missing its closing quote then runs on past a block's end. Small blocks must read the
    # file as one block (one csv.reader over the whole text) does.
    plain = "".join(f'{i * 100},50,{i},GPU (0),7,"k<1, 2>"\n' for i in range(10))
    text = ("Start (ns),Duration (ns),CorrId,Device,Strm,Name\n" + plain + '1000,50,1"0,GPU (0),7,"k<1, 2>"\n' + plain
            + '2000,50,20,GPU (0),7,"open name\n' + plain + '3000,50,30,GPU (0),7,"k"\n')
    # The name left open takes the next row into it (up to the next quote): refused, the same at any block size.
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", 4 * 2**20)
    with pytest.raises(TraceError) as caught:
        read_trace_text(text)
    whole = one_line(caught.value)
    assert "the Name cell 'open name' runs on over lines that look like rows" in whole and "line 23 or later" in whole
    for block in (40, 64, 300):
        monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", block)
        with pytest.raises(TraceError) as caught:
            read_trace_text(text)
        assert one_line(caught.value) == whole, block


def test_numpy_way_and_csv_module_agree_on_damaged_files(monkeypatch: pytest.MonkeyPatch) -> None:
    # A seeded fuzz: 200 copies of a mixed trace, each with a few characters changed, inserted or deleted
    # (quotes, commas, line ends, digits, signs, NUL, non-ASCII), read in blocks of 64, 300 or 4 MiB bytes:
    # NumPy's way (falling back per block) gives the same intervals, or the same one-line error, as the
    # csv module's way alone.
    import random

    base = csv_text(mixed_rows(40))
    alphabet = ['"', ",", "\n", "\r", "0", "9", "-", " ", "x", "\x00", ".", "é", '""', "\r\n"]
    rng = random.Random(13)
    fast = trace_csv._csv_block_fast

    def read(text: str, way) -> tuple:  # type: ignore[no-untyped-def]
        monkeypatch.setattr(trace_csv, "_csv_block_fast", way)
        try:
            trace = read_trace_text(text, "t.csv")
        except TraceError as exc:
            return ("error", one_line(exc))
        return ("trace", trace_rows(trace), trace.names, trace.streams)

    for _ in range(200):
        text = list(base)
        for _ in range(rng.randint(1, 4)):
            position, choice = rng.randrange(len(text)), rng.random()
            if choice < 0.4:
                text[position] = rng.choice(alphabet)
            elif choice < 0.7:
                text.insert(position, rng.choice(alphabet))
            else:
                del text[position]
        damaged = "".join(text)
        monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", rng.choice([64, 300, 4 * 2**20]))
        assert read(damaged, fast) == read(damaged, lambda data, state, line: None), damaged


def test_a_writer_that_quotes_every_text_cell_is_read_numpy_s_way(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python's csv.writer with QUOTE_NONNUMERIC: numbers bare, every text cell quoted ("" when empty), a
    # device name holding a comma. The commas before the lane's cells are outside quotes (an even count of
    # quotes before each), so the blocks go NumPy's way and read what the csv module reads.
    import csv as csv_module
    import io

    out = io.StringIO()
    writer = csv_module.writer(out, quoting=csv_module.QUOTE_NONNUMERIC, lineterminator="\n")
    writer.writerow(["Start (ns)", "Duration (ns)", "CorrId", "Bytes (MB)", "SrcMemKd", "Device", "Ctx", "Strm", "Name"])
    for i, (kind, name, start, end, stream, size) in enumerate(mixed_rows(200)):
        label = name if kind == "kernel" else f"[CUDA memcpy {name}]" if kind == "memcpy" else "[CUDA memset]"
        writer.writerow([start, end - start, i, "" if size is None else size / 1e6, "Pageable" if kind == "memcpy" else "",
                         "NVIDIA H100, SXM (0)", 1, stream, label])
    text = out.getvalue()
    assert '"Pageable","NVIDIA H100, SXM (0)",1,' in text
    monkeypatch.setattr(trace_csv, "_CSV_BLOCK_BYTES", 1000)
    taken = []
    fast = trace_csv._csv_block_fast
    monkeypatch.setattr(trace_csv, "_csv_block_fast", lambda *args: taken.append(fast(*args)) or taken[-1])
    numpy_way = read_trace_text(text)
    assert len(taken) > 5 and all(taken[1:]), "every block after the header's went NumPy's way"
    csv_module_only(monkeypatch)
    reference = read_trace_text(text)
    assert trace_rows(numpy_way) == trace_rows(reference) and len(reference) == 200
    assert numpy_way.streams == reference.streams == [("NVIDIA H100, SXM (0)", "13"), ("NVIDIA H100, SXM (0)", "7"), ("NVIDIA H100, SXM (0)", "21")]
