"""Issue 29, one test per reproduced failure class (numbered as there) and per "also seen" item: the step,
trace, match-rule, compare and report surfaces give the project's own one-line error, a stated figure, or
refuse to write, never a traceback, a hang, a NaN or an overwritten FIFO.

Each test is the reproduction as the issue wrote it, turned into an assertion that fails on the code
before the fix. Speed is the benchmark's business (benchmarks/bench_hostile_scale.py); where a test
would hang on the old code, it runs under finishes_within so the suite fails instead of hanging.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from workbench.cli import main
from workbench.model.devices.catalogue import find_device
from workbench.errors import DeviceError, UnitError, WorkbenchError
from workbench.measure import measure
from workbench.profilers.matching import MatchError, MatchRule, match_kernels, operation_suggester, suggest_operation
from workbench.profilers.trace import TraceError, read_trace_text
from workbench.profilers.trace_reader import read_trace
from workbench.documents.report import ReportError, spreadsheet_text, write_report
from workbench.documents.session import OperationEntry, Session, SessionError, load, loads, save
from workbench.steps import StepError, lay_out, operation_times, parse_step, step_timeline

sys.path.insert(0, str(Path(__file__).parent))

from test_hostile_input import finishes_within, one_line_exit_2  # noqa: E402
from trace_fixtures import CSV_HEADER, GEMM_KERNEL, csv_row, create_tables, insert_rows  # noqa: E402

H100 = "h100-sxm"
KERN_SUM_HEADER = '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"\n'


def kern_sum(path: Path, names: list[str]) -> Path:
    """An `nsys stats --report cuda_gpu_kern_sum` CSV of the given kernels."""
    rows = "".join(f'"1.0","48064","1","48064.0","48064.0","48064","48064","0.0","{name}"\n' for name in names)
    path.write_text(KERN_SUM_HEADER + rows)
    return path


def trace_file(path: Path, rows: list[tuple[str, str, int, int, int, int | None]]) -> Path:
    path.write_text(CSV_HEADER + "".join(csv_row(*row) for row in rows))
    return path


# ---------------------------------------------------------------- 1. recursion in the step cycle check


def test_1_a_thousand_lines_each_after_the_next_is_a_step_error_not_a_recursion_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "\n".join(f"a{i} = add(n=4, dtype=fp32) after a{i + 1}" for i in range(1000))
    with pytest.raises(StepError, match="defined later on line 2"):
        parse_step(text)
    ring = "\n".join(f"a{i} = add(n=4, dtype=fp32) after a{(i + 1) % 1000}" for i in range(1000))
    with pytest.raises(StepError) as caught:
        parse_step(ring)
    assert str(caught.value).startswith("line 1: cycle: a0 → a1 → a2") and str(caught.value).endswith("a999 → a0")
    step = tmp_path / "chain.step"
    step.write_text(text)
    assert "defined later" in one_line_exit_2(capsys, ["step", str(step), "--device", H100])
    session = tmp_path / "lab.json"  # a session holding such a step: every command that reads it says so in one line
    session.write_text(json.dumps({**json.loads(_minimal_session()), "steps": [{"name": "s", "text": ring}]}))
    assert "cycle" in one_line_exit_2(capsys, ["step", str(session)])


def _minimal_session() -> str:
    from workbench.documents.session import dumps

    return dumps(Session(operations=[OperationEntry("a", "add(n=4, dtype=fp32)")]))


# ---------------------------------------------------------------- 2. catastrophic regular expressions


def test_2_a_catastrophic_rule_from_a_shared_session_does_not_freeze_the_report(tmp_path: Path, capsys) -> None:
    from workbench.profilers.reader import read_profile

    profile = read_profile(str(kern_sum(tmp_path / "k.csv", ["a" * 60])))  # backtracking: 2**60 steps
    profile = profile.with_matches([MatchRule("regex:(a+)+b", "add(n=4, dtype=fp32)")])
    session = Session(operations=[OperationEntry("a", "add(n=4, dtype=fp32)")], profiles=[profile.to_dict()])
    save(session, tmp_path / "lab.json")
    code = finishes_within(60, lambda: main(["report", str(tmp_path / "lab.json"), "-o", str(tmp_path / "r.md"), "--no-plot"]))
    assert code == 0 and (tmp_path / "r.md").exists()


def test_2_step_match_and_import_nsys_match_run_catastrophic_patterns_in_linear_time(tmp_path: Path, capsys) -> None:
    trace = trace_file(tmp_path / "t.csv", [("kernel", "a" * 60, 0, 1000, 7, None)])
    step = tmp_path / "s.step"
    step.write_text("x = add(n=4, dtype=fp32)\n")
    assert finishes_within(60, lambda: main(["step", str(step), "--device", H100, "--trace", str(trace),
                                             "--match", "regex:(a+)+b=x"])) == 0
    summary = kern_sum(tmp_path / "k.csv", ["a" * 60])
    assert finishes_within(60, lambda: main(["import-nsys", str(summary), "--match", "regex:(a|a)*b=add(n=4, dtype=fp32)"])) == 0
    assert MatchRule("*a" * 500, "x").matches("a" * 3000 + "b") is False  # a glob of many stars, too
    assert MatchRule("regex:(a+)+b", "x").matches("a" * 100_000 + "b") is True


def test_2_what_re2_cannot_run_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for pattern in ("regex:(a)\\1", "regex:(?=a)b", "regex:a{1000}{1000}", "regex:\udcff", "*" * 1001):
        with pytest.raises(MatchError) as caught:
            MatchRule(pattern, "add(n=4, dtype=fp32)")
        assert "\n" not in str(caught.value)
    summary = kern_sum(tmp_path / "k.csv", ["k"])
    assert "bad regular expression" in one_line_exit_2(capsys, ["import-nsys", str(summary), "--match", "regex:(a)\\1=add(n=4, dtype=fp32)"])


def test_2_globs_on_re2_select_what_fnmatch_selects() -> None:
    import fnmatch

    cases = [("[!a]*", "b"), ("[]]x", "]x"), ("[a-", "[a-"), ("a[b-a]c", "abc"), ("*.cu", "k.cu"), ("?", "\n"),
             ("[\\]", "\\"), ("a*b*c", "a\nb\nc"), ("[^a]", "^"), ("void *add*", "void at::add_kernel")]
    for pattern, name in cases:
        assert MatchRule(pattern, "x").matches(name, name) is fnmatch.fnmatchcase(name, pattern), pattern


# ---------------------------------------------------------------- 3. overflow tracebacks


@pytest.mark.parametrize("size", ["inf", "1e308", "1e400", "nan", "-1"])
def test_3_devices_match_memory_gib_out_of_range_is_one_line(capsys: pytest.CaptureFixture[str], size: str) -> None:
    assert "--memory-gib" in one_line_exit_2(capsys, ["devices", "--match", "NVIDIA H100 80GB HBM3", "--memory-gib", size])


@pytest.mark.parametrize("value", ["inf", "1e400"])
def test_3_a_trace_csv_in_microseconds_with_inf_or_1e400_is_a_trace_error(value: str) -> None:
    for row in (f"{value},1,GPU 0,7,k\n", f"1,{value},GPU 0,7,k\n"):
        with pytest.raises(TraceError, match="not a finite time"):
            read_trace_text("Start (us),Duration (us),Device,Strm,Name\n" + row)


@pytest.fixture(scope="module")
def huge_sample_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    record = measure("add(n=2**10, dtype=fp32)", backend="numpy", iterations=30, warmup=2).to_dict()
    record["samples_s"] = [1.7e308] * 30  # fsum of these overflowed
    path = tmp_path_factory.mktemp("runs") / "lab.json"
    save(Session(operations=[OperationEntry("a", "add(n=2**10, dtype=fp32)")], runs=[record]), path)
    return path


def test_3_run_samples_of_1_7e308_are_an_invalid_run_not_a_traceback(huge_sample_session: Path, capsys) -> None:
    assert main(["runs", str(huge_sample_session)]) == 0
    out = capsys.readouterr().out
    assert "[INVALID" in out
    assert main(["report", str(huge_sample_session), "-o", str(huge_sample_session.with_suffix(".md")), "--no-plot"]) == 0
    assert main(["step", str(huge_sample_session)]) in (0, 2)  # no step: one line, not a traceback
    figures = load(huge_sample_session).run_figures()[0]
    assert figures.status == "invalid" and "samples must be seconds from 0 to 1e+06" in figures.run.check


@pytest.mark.parametrize("rate", [5e-324, 1e-300, 1.7e308, float("inf"), float("nan")])
def test_3_and_9_an_override_out_of_range_is_refused_at_the_root(rate: float) -> None:
    device = find_device(H100)
    with pytest.raises(DeviceError, match="rate"):
        device.with_rate("fp32", rate, "entered")


def test_3_the_window_s_rate_entry_refuses_tiny_and_huge_rates_before_the_roofline_sees_them() -> None:
    from workbench.model.analysis import as_rate

    for text in ("5e-324 B/s", "1e-300 B/s", "1.7e308 FLOP/s"):
        with pytest.raises(UnitError, match="overflow"):
            as_rate(text, "B/s" if "B/s" in text else "FLOP/s", "bandwidth")


# ---------------------------------------------------------------- 4. streams and devices


def test_4_lane_labels_are_found_once_per_lane_count_and_stay_right(tmp_path: Path) -> None:
    rows = [("kernel", GEMM_KERNEL, 1000 * i, 1000 * i + 800, i + 1, None) for i in range(2000)]
    trace = read_trace(trace_file(tmp_path / "t.csv", rows))
    assert trace.stream_labels()[:2] == ["stream 1", "stream 2"] and len(trace.stream_labels()) == 2000
    trace.streams.append(("GPU 9", "1"))  # a second device: every label names its device from now on
    assert trace.stream_label(0) == f"{trace.streams[0][0]} · stream 1"
    labels = trace.stream_labels()
    assert len(labels) == 2001 and labels[-1] == "GPU 9 · stream 1"


# ---------------------------------------------------------------- 5. many distinct names


def test_5_the_suggester_parses_the_declarations_once_and_suggests_as_suggest_operation(monkeypatch) -> None:
    import workbench.model.declare as declare

    declarations = {"fwd": "gemm(M=64, N=64, K=64, dtype=bf16)", "ar": "allreduce(n=2**20, dtype=fp32, ranks=8)"}
    names = [f"sm90_gemm_{i}" for i in range(200)] + ["ncclDevKernel_AllReduce_Sum_f32", "axpy", "x" * 1000]
    expected = [suggest_operation(name, declarations) for name in names]
    parsed = 0
    real = declare.parse

    def counting(text: str) -> Any:
        nonlocal parsed
        parsed += 1
        return real(text)

    monkeypatch.setattr(declare, "parse", counting)
    suggest = operation_suggester(declarations)
    assert [suggest(name) for name in names] == expected
    assert parsed == len(declarations)  # once each, not once per name


def test_5_a_rule_selecting_a_million_kernels_compares_the_first_thousand_and_says_so(tmp_path: Path, capsys) -> None:
    summary = kern_sum(tmp_path / "k.csv", [f"kernel_{i}" for i in range(1500)])
    assert main(["import-nsys", str(summary), "--match", "*=add(n=4, dtype=fp32)", "--device", H100, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["comparisons"]) == 1000 and data["kernels_selected"] == 1500
    assert "select 1,500 kernels; the first 1,000 are compared" in data["comparisons_note"]
    assert main(["import-nsys", str(summary), "--match", "*=add(n=4, dtype=fp32)", "--device", H100]) == 0
    assert "the first 1,000 are compared" in capsys.readouterr().out


# ---------------------------------------------------------------- 6. compare validates like calc


@pytest.mark.parametrize("overlap", ["7", "nan", "inf", "1e400", "0x1"])
def test_6_compare_refuses_the_overlap_calc_refuses(capsys: pytest.CaptureFixture[str], overlap: str) -> None:
    calc = one_line_exit_2(capsys, ["calc", "add(n=4, dtype=fp32)", "--device", H100, "--overlap", overlap])
    compare = one_line_exit_2(capsys, ["compare", "add(n=4, dtype=fp32)", "--devices", H100, "--overlap", overlap])
    assert compare == calc


# ---------------------------------------------------------------- 7. reports never overwrite what is not a file


@pytest.fixture()
def lab(tmp_path: Path) -> Path:
    path = tmp_path / "lab.json"
    save(Session(operations=[OperationEntry("a", "add(n=4, dtype=fp32)")]), path)
    return path


def test_7_a_report_onto_a_fifo_socket_or_a_link_to_one_or_to_a_device_is_refused(lab: Path, capsys) -> None:
    folder = lab.parent
    os.mkfifo(folder / "fifo.md")
    os.symlink(folder / "fifo.md", folder / "link.md")
    os.symlink("/dev/null", folder / "device.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.md"))
    try:
        for name, kind in (("fifo.md", "named pipe"), ("link.md", "named pipe"), ("device.md", "device"), ("sock.md", "socket")):
            line = one_line_exit_2(capsys, ["report", str(lab), "-o", str(folder / name), "--no-plot"])
            assert kind in line and "nothing was written" in line
        assert os.path.islink(folder / "device.md") and os.readlink(folder / "device.md") == "/dev/null"
        assert os.path.islink(folder / "link.md") and (folder / "fifo.md").is_fifo()
    finally:
        sock.close()
    with pytest.raises(SessionError, match="named pipe"):  # a session saved onto one: the same check
        save(Session(), folder / "fifo.md")


def test_7_companions_never_follow_a_planted_link(lab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = lab.parent
    target = folder / "precious.txt"
    target.write_text("keep me")
    os.symlink(target, folder / "r-samples.csv")
    line = one_line_exit_2(capsys, ["report", str(lab), "-o", str(folder / "r.csv")])
    assert "r-samples.csv: it is a symbolic link" in line and not (folder / "r.csv").exists()
    os.symlink(target, folder / "m-plot.svg")
    with pytest.raises(ReportError, match="symbolic link"):
        write_report(load(lab), folder / "m.md", '<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    assert target.read_text() == "keep me" and not (folder / "m.md").exists()


# ---------------------------------------------------------------- 8. terminal escapes


def test_8_kernel_names_from_a_trace_reach_the_terminal_escaped(tmp_path: Path, capsys) -> None:
    evil = "evil\x1b]0;pwned\x07\x1b[2J_kernel"
    trace = trace_file(tmp_path / "t.csv", [("kernel", GEMM_KERNEL, 0, 5_000_000, 7, None), ("kernel", evil, 6_000_000, 6_000_100, 7, None)])
    step = tmp_path / "s.step"
    step.write_text("fwd = gemm(M=8192, N=8192, K=8192, dtype=bf16)\n")
    assert main(["step", str(step), "--device", H100, "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "evil\\x1b]0;pwned\\x07\\x1b[2J_kernel" in out
    assert main(["step", str(step), "--device", H100, "--trace", str(trace), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["trace"]["unmatched"][0]["name"] == evil  # JSON keeps the text exact


# ---------------------------------------------------------------- 9. tiny positive rates


@pytest.mark.parametrize("option", [["--bandwidth", "5e-324 B/s"], ["--bandwidth", "1e-300 B/s"], ["--rate", "5e-324 FLOP/s"]])
def test_9_a_tiny_rate_is_refused_in_one_line_not_nan(capsys: pytest.CaptureFixture[str], option: list[str]) -> None:
    assert "would overflow" in one_line_exit_2(capsys, ["calc", "add(n=2**20, dtype=fp32)", "--device", H100, *option])
    assert "would overflow" in one_line_exit_2(capsys, ["calc", "add(n=2**20, dtype=fp32)", "--device", H100, *option, "--json"])


def test_9_a_tiny_link_override_in_a_session_is_refused_where_it_is() -> None:
    data = json.loads(_minimal_session())
    data["device"] = {"key": H100, "overrides": {"link:nvlink4": {"value": 5e-324, "source": "entered"}}}
    with pytest.raises(SessionError, match="overrides"):
        loads(json.dumps(data))


def test_9_the_json_writer_refuses_nan_and_infinity(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli.output import print_json

    for bad in ({"x": float("nan")}, {"x": [float("inf")] * 200}, [float("-inf")]):
        with pytest.raises(WorkbenchError, match="not a finite number"):
            print_json(bad)
    assert "NaN" not in capsys.readouterr().out


def test_9_step_json_with_every_kind_of_time_is_strict_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    step = tmp_path / "s.step"
    step.write_text("a = add(n=2**20, dtype=fp32)\nb = allreduce(n=2**20, dtype=fp32, ranks=8) on comm after a\n")
    assert main(["step", str(step), "--device", H100, "--json"]) == 0
    json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))


# ---------------------------------------------------------------- 10. more ranks than elements


def test_10_reduction_adds_per_rank_stay_between_zero_and_n() -> None:
    from workbench.model.analysis import analyze

    for n, ranks, adds in ((2**20, 8, 2**20 - 2**17), (4, 8, 4), (5, 4, 4), (1, 2**20, 1), (2**20, 2**20, 2**20 - 1)):
        for op in ("allreduce", "reducescatter"):
            analysis = analyze(f"{op}(n={n}, dtype=fp32, ranks={ranks})", device=H100)
            assert 0 <= analysis.flop <= n and analysis.flop == adds, (op, n, ranks, analysis.flop)
    assert "n − ⌊n/ranks⌋" in analyze("allreduce(n=4, dtype=fp32, ranks=8)", device=H100).derivation_text()


def test_10_ranks_are_bounded_and_refused_on_sendrecv(capsys: pytest.CaptureFixture[str]) -> None:
    assert "at most 1048576" in one_line_exit_2(capsys, ["calc", "allreduce(n=2**20, dtype=fp32, ranks=2**40)", "--device", H100])
    assert "sendrecv has no field 'ranks'" in one_line_exit_2(capsys, ["calc", "sendrecv(n=16, dtype=fp32, ranks=8)"])
    assert main(["calc", "sendrecv(n=16, dtype=fp32)", "--device", H100]) == 0


# ---------------------------------------------------------------- also seen


def test_also_an_unterminated_quote_that_swallows_rows_is_refused_not_read_as_a_name() -> None:
    header = "Start (ns),Duration (ns),Device,Strm,Name\n"
    with pytest.raises(TraceError, match="never closed"):
        read_trace_text(header + '1,5,GPU,7,k0\n10,5,GPU,7,"abc\n20,5,GPU,7,k2\n30,5,GPU,7,k3\n')
    trace = read_trace_text(header + '10,5,GPU,7,"a name,\nover two lines"\n')  # a quoted name on two lines is one
    assert trace.names == ["a name,\nover two lines"]


def test_also_a_traced_time_below_its_bound_is_flagged_impossible(tmp_path: Path, capsys) -> None:
    # 8192³ bf16 on an H100 SXM is bounded by 1.11 ms; a trace saying 0.1 ms is impossible
    trace = trace_file(tmp_path / "t.csv", [("kernel", GEMM_KERNEL, 0, 100_000, 7, None)])
    step = tmp_path / "s.step"
    step.write_text("fwd = gemm(M=8192, N=8192, K=8192, dtype=bf16)\n")
    assert main(["step", str(step), "--device", H100, "--trace", str(trace)]) == 0
    assert "IMPOSSIBLE: 0.09× its bound" in capsys.readouterr().out
    assert main(["step", str(step), "--device", H100, "--trace", str(trace), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["operations"][0]["impossible"] is True
    slower = trace_file(tmp_path / "u.csv", [("kernel", GEMM_KERNEL, 0, 2_000_000, 7, None)])
    assert main(["step", str(step), "--device", H100, "--trace", str(slower), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["operations"][0]["impossible"] is False


@pytest.mark.parametrize("number", ["1_000", "１０００", "٣", "+ 5"])
def test_also_underscores_and_non_ascii_digits_are_not_numbers_in_a_trace(number: str) -> None:
    plain = "".join(f"{100 * i},50,GPU,7,k\n" for i in range(30))  # plain rows first: the fast paths see the block
    for header in ("Start (ns),Duration (ns),Device,Strm,Name\n", "Start (us),Duration (us),Device,Strm,Name\n"):
        for row in (f"{number},5,GPU,7,k\n", f"5,{number},GPU,7,k\n"):
            with pytest.raises(TraceError, match="ASCII digits"):
                read_trace_text(header + plain + row)
    with pytest.raises(TraceError, match="ASCII digits"):
        read_trace_text(f"Start (ns),Duration (ns),Bytes (MB),Device,Strm,Name\n1,5,{number},GPU,7,[CUDA memcpy Host-to-Device]\n")


def test_also_5e_324_is_written_in_powers_of_ten() -> None:
    from workbench.model.units import format_number, format_time

    assert format_number(5e-324) == "4.941e-324" and format_time(5e-324) == "4.941e-312 ps"
    assert format_number(1e300) == "1e300" and format_number(123.456) == "123.5"


def test_also_a_run_record_from_a_newer_version_says_so_and_version_minus_1_is_refused(
    huge_sample_session: Path, tmp_path: Path, capsys
) -> None:
    data = json.loads(huge_sample_session.read_text())
    record = data["runs"][0]
    for version, status in ((3, "written by a newer version"), (-1, "INVALID"), (True, "INVALID")):
        data["runs"] = [{**record, "version": version, "samples_s": [1e-3] * 30}]
        path = tmp_path / f"v{version}.json"
        path.write_text(json.dumps(data))
        assert main(["runs", str(path)]) == 0
        out = capsys.readouterr().out
        assert f"[{status}" in out, out
    data["runs"] = [{**record, "version": 3}]
    (tmp_path / "v3.json").write_text(json.dumps(data))
    figures = load(tmp_path / "v3.json").run_figures()[0]
    assert figures.status == "newer" and "run record version 3; this one reads up to 2" in figures.run.check
    data["runs"] = [{**record, "version": -1}]
    (tmp_path / "v-1.json").write_text(json.dumps(data))
    assert "version -1 is not one the workbench writes" in load(tmp_path / "v-1.json").run_figures()[0].run.check


def test_also_what_if_over_tens_of_thousands_of_dependencies_is_each_step_laid_out_again() -> None:
    import random
    import string

    letters, more = string.ascii_letters, string.ascii_letters + string.digits
    names = [letters[i // 62] + more[i % 62] for i in range(300)]
    rng = random.Random(29)
    lines = []
    for i, name in enumerate(names):
        deps = rng.sample(names[:i], min(i, rng.randint(0, 40)))
        stream = rng.choice(["", " on comm", " on s2"])
        lines.append(f"{name} = add(n={rng.randint(1, 2**24)}, dtype=fp32){stream}" + (f" after {', '.join(deps)}" if deps else ""))
    plan = parse_step("\n".join(lines))
    times = operation_times(plan, find_device(H100))
    timeline = lay_out(plan, times)
    for name in rng.sample(names, 20):  # the what-if of an operation is the step laid out with it changed
        assert timeline.what_if[name].if_free == pytest.approx(lay_out(plan, times, {name: math.inf}).step_time, rel=1e-12)
        assert timeline.what_if[name].if_2x_faster == pytest.approx(lay_out(plan, times, {name: 2.0}).step_time, rel=1e-12)


def test_also_a_generated_column_in_an_activity_table_is_refused_deliberately(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    connection = sqlite3.connect(path)
    create_tables(connection)
    insert_rows(connection, [("kernel", GEMM_KERNEL, 0, 1000, 7, None)])
    connection.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN twice INT GENERATED ALWAYS AS (start * 2)")
    connection.commit()
    connection.close()
    with pytest.raises(TraceError, match="twice of CUPTI_ACTIVITY_KIND_KERNEL is a generated column"):
        read_trace(path)


@pytest.mark.parametrize("lead", ["\u00a0", "\v", "\f", "\u3000", "\u200b", " \u00a0 "])
def test_also_formula_neutralising_skips_no_break_spaces_and_vertical_tabs(lead: str) -> None:
    assert spreadsheet_text(f"{lead}=HYPERLINK(1)").startswith("'")
    assert spreadsheet_text(f"{lead}name") == f"{lead}name"


def test_2_a_profile_record_cannot_ask_for_more_rules_than_the_limit(tmp_path: Path) -> None:
    from workbench.profilers.profile import MAX_PROFILE_RULES, Profile
    from workbench.profilers.reader import read_profile
    from workbench.profilers.table import ProfileError

    record = read_profile(str(kern_sum(tmp_path / "k.csv", ["k"]))).to_dict()
    record["matches"] = [{"pattern": f"k{i}*", "declaration": "add(n=4, dtype=fp32)"} for i in range(MAX_PROFILE_RULES + 1)]
    with pytest.raises(ProfileError, match="at most 1,000 are read"):
        Profile.from_dict(record)
    record["matches"] = record["matches"][:MAX_PROFILE_RULES]
    assert len(Profile.from_dict(record).matches) == MAX_PROFILE_RULES
