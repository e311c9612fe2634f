"""Issue 15, one test per reproduced failure: hostile files and arguments give the project's own error.

Each test is the reproduction from the issue (numbered as there), turned into
an assertion that fails on the code before the fix: a traceback, a hang, a
memory blow-up or a silently wrong answer. The profile-reader items (4, 12,
13 and the profile values of 3) live with the profile tests.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from workbench.documents.autosave import Autosaver, find_recoverable, read_recovery_file
from workbench.cli import main
from workbench.model.declare import parse
from workbench.errors import DeclarationError, UnitError
from workbench.measure.errors import MeasurementError
from workbench.documents.report import ReportError, render_csv, render_markdown, render_samples_csv, write_report
from workbench.model.scratchpad import evaluate
from workbench.documents.session import (
    OperationEntry,
    Session,
    SessionError,
    load,
    loads,
    remove_stale_temporaries,
    save,
)

ADD = "add(n=2**24, dtype=fp32)"
BOMB = "elementwise(n=1, inputs=2**40)"  # only ever parsed in a child under a memory limit (old code ate the machine)
MANY_INPUTS = "elementwise(n=1, inputs=100000)"  # the same fault, small enough to try in-process on any code
DEEP_MINUS = "add(n=" + "-" * 1000 + "1)"
GONE_PID = 2_000_000_001  # beyond any pid limit: a process that is surely gone
FIXTURE = json.loads((Path(__file__).parent / "data" / "session_v1.json").read_text(encoding="utf-8"))


def session_text(**changes: Any) -> str:
    """The valid fixture session with top-level keys replaced."""
    data = json.loads(json.dumps(FIXTURE))
    data.update(changes)
    return json.dumps(data)


def one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    """Run the CLI in-process; it must print one error line on stderr and exit 2. Returns that line."""
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("workbench: error: ") and err.count("\n") == 1, err
    return err


def finishes_within(seconds: float, action: Callable[[], Any]) -> Any:
    """Run `action` in a thread; fail (instead of hanging the suite) when it does not return in time."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = action()
        except BaseException as exc:  # handed back to the test
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s (a hang)"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


# ---------------------------------------------------------------- 1. memory bomb


def test_1_a_count_that_becomes_objects_is_limited_in_the_declaration() -> None:
    with pytest.raises(DeclarationError, match=r"inputs \(arrays read\) must be at most 64; got 100,000") as caught:
        parse(MANY_INPUTS)
    assert caught.value.field == "inputs"
    with pytest.raises(DeclarationError) as caught:
        parse("elementwise(n=1, outputs=65)")
    assert caught.value.field == "outputs"
    assert len(parse("elementwise(n=2**20, inputs=64, outputs=64)").workload().tensors) == 128


MEMORY_BOMB_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    limit = 1536 * 2**20  # far below what building 2**40 tensors takes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from workbench.cli import main
    codes = [main(args) for args in json.loads(sys.argv[1])]
    print(json.dumps(codes))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memory limit via RLIMIT_AS")
def test_1_the_memory_bomb_is_refused_on_every_path_under_a_memory_limit(tmp_path: Path) -> None:
    bomb_in_operations = tmp_path / "operations.json"
    bomb_in_operations.write_text(session_text(operations=[{"name": "x", "declaration": BOMB}]))
    bomb_in_runs = tmp_path / "runs.json"
    bomb_in_runs.write_text(session_text(runs=[{"id": "r", "declaration": BOMB, "median_s": 1e-3}]))
    nsys = Path(__file__).parent / "data" / "nsys_cuda_gpu_kern_sum.csv"
    cases = [
        ["calc", BOMB],
        ["report", str(bomb_in_operations), "-o", str(tmp_path / "a.md"), "--no-plot"],
        ["report", str(bomb_in_runs), "-o", str(tmp_path / "b.md"), "--no-plot"],
        ["import-nsys", str(nsys), "--match", f"cupy_add={BOMB}"],
        ["measure", BOMB, "--backend", "numpy"],
    ]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", MEMORY_BOMB_CHILD, json.dumps(cases)],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # the session whose run names the bomb still reports (the run is shown without a bound)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [2, 2, 0, 2, 2]
    assert "Traceback" not in done.stderr
    assert all(line.startswith("workbench: error: ") for line in done.stderr.splitlines())
    assert "runs[0]" not in done.stderr and (tmp_path / "b.md").exists()


def test_1_a_session_file_with_the_bomb_is_a_session_error(tmp_path: Path) -> None:
    path = tmp_path / "bomb.json"
    path.write_text(session_text(operations=[{"name": "x", "declaration": MANY_INPUTS}]))
    with pytest.raises(SessionError, match=r"operations\[0\]\.declaration: inputs \(arrays read\) must be at most 64"):
        load(path)


# ---------------------------------------------------------------- 2. deep nesting in a declaration


def test_2_a_thousand_minus_signs_is_a_declaration_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(DeclarationError, match="nested too deeply") as caught:
        parse(DEEP_MINUS)
    assert caught.value.field == "n"
    with pytest.raises(DeclarationError, match="nested too deeply"):
        parse("add(n=" + "1+" * 900 + "1)")
    assert parse("add(n=" + "-" * 60 + "4)").params["n"] == 4  # an even number of signs, within the limit
    assert "nested too deeply" in one_line_exit_2(capsys, ["calc", DEEP_MINUS])


def test_2_in_a_session_file_it_is_a_session_error() -> None:
    with pytest.raises(SessionError, match=r"operations\[0\]\.declaration: n: the value is nested too deeply"):
        loads(session_text(operations=[{"name": "x", "declaration": DEEP_MINUS}]))


# ---------------------------------------------------------------- 3. integers beyond a float


def test_3_a_310_digit_number_in_units_is_a_unit_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UnitError, match="too large"):
        evaluate("9" * 310)
    with pytest.raises(UnitError, match="too large"):
        evaluate("10**64 * 10**64 * 10**64 * 10**64 * 10**64")  # each part fits, the product does not
    assert "too large" in one_line_exit_2(capsys, ["units", "9" * 310 + " B"])


def test_3_a_400_digit_rate_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert "too large" in one_line_exit_2(capsys, ["calc", ADD, "--rate", "9" * 400 + " FLOP/s"])


def test_3_a_400_digit_median_in_a_session_is_refused_where_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = session_text(runs=[{"id": "r", "declaration": ADD, "median_s": 10**400}])
    with pytest.raises(SessionError, match=r"runs\[0\]\.median_s: a number of 401 digits"):
        loads(text)
    path = tmp_path / "huge.json"
    path.write_text(text)
    assert "runs[0].median_s" in one_line_exit_2(capsys, ["report", str(path), "-o", str(tmp_path / "r.md")])


# ---------------------------------------------------------------- 5. FIFOs


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_5_a_fifo_as_a_session_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "session.json"
    os.mkfifo(fifo)
    with pytest.raises(SessionError, match="named pipe"):
        finishes_within(10, lambda: load(fifo))
    err = finishes_within(10, lambda: one_line_exit_2(capsys, ["report", str(fifo), "-o", str(tmp_path / "r.md")]))
    assert "named pipe" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_5_a_fifo_in_the_autosave_folder_does_not_hang_the_recovery_scan(tmp_path: Path) -> None:
    folder = tmp_path / "autosave"
    folder.mkdir()
    left = Autosaver(folder, pid=GONE_PID)
    left.write(Session(title="left behind", operations=[OperationEntry("a", ADD)]))
    fifo = folder / "autosave-planted-1.json"
    os.mkfifo(fifo)
    try:
        found = finishes_within(10, lambda: find_recoverable(folder))
    finally:
        unblock = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # releases a reader the old code left blocked
        os.close(unblock)
    assert [recovery.title for recovery in found] == ["left behind"]
    with pytest.raises(SessionError, match="named pipe"):
        read_recovery_file(fifo)


# ---------------------------------------------------------------- 7. lone surrogates


def test_7_a_lone_surrogate_in_a_session_file_is_refused_where_it_is() -> None:
    with pytest.raises(SessionError, match=r"^title: text holding a lone surrogate \(U\+DCFF\)"):
        loads(session_text(title="\udcff"))
    with pytest.raises(SessionError, match=r"runs\[0\]\.conditions: a key holding a lone surrogate"):
        loads(session_text(runs=[{"id": "r", "conditions": {"\ud800x": 1}}]))


def test_7_saving_autosaving_and_reporting_a_lone_surrogate_is_the_project_s_error(tmp_path: Path) -> None:
    session = Session(title="\udcff", operations=[OperationEntry("a", ADD)])
    target = tmp_path / "s.json"
    target.write_text("previous")
    with pytest.raises(SessionError, match=r"cannot save .*title: text holding a lone surrogate"):
        save(session, target)
    assert target.read_text() == "previous"
    saver = Autosaver(tmp_path / "autosave")
    with pytest.raises(SessionError, match=r"recovery file: session\.title: text holding a lone surrogate"):
        saver.write(session)
    assert not saver.exists
    with pytest.raises(ReportError, match="lone surrogate U\\+DCFF"):
        write_report(session, tmp_path / "r.md")
    assert not (tmp_path / "r.md").exists()


# ---------------------------------------------------------------- 8. deep nesting in a session


def test_8_a_list_nested_900_deep_is_refused_on_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = json.loads("[" * 900 + "]" * 900)
    text = session_text(runs=[{"id": "r", "declaration": ADD, "conditions": {"x": deep}}])
    with pytest.raises(SessionError, match=r"^runs\[0\]\.conditions\.x\[0\].*: nested more than 64 levels deep"):
        loads(text)
    path = tmp_path / "deep.json"
    path.write_text(text)
    assert "nested more than 64 levels" in one_line_exit_2(capsys, ["report", str(path), "-o", str(tmp_path / "r.md")])
    shallow = json.loads("[" * 20 + "1" + "]" * 20)  # what real files hold still opens and reports
    session = loads(session_text(runs=[{"id": "r", "declaration": ADD, "conditions": {"x": shallow}}]))
    assert "Conditions of r: x: 1" in render_markdown(session)


# ---------------------------------------------------------------- 9. -o path errors


def test_9_a_300_character_file_name_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_file = tmp_path / "s.json"
    save(Session(operations=[OperationEntry("a", ADD)]), session_file)
    err = one_line_exit_2(capsys, ["report", str(session_file), "-o", str(tmp_path / ("r" * 300 + ".md")), "--no-plot"])
    assert "File name too long" in err


def test_9_write_atomic_turns_a_permission_error_in_its_checks_into_a_session_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_dir", refused)  # what stat() of a folder one may not search does
    with pytest.raises(SessionError, match="cannot save session .*Permission denied"):
        save(Session(), tmp_path / "locked" / "s.json")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_9_an_unwritable_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_file = tmp_path / "s.json"
    save(Session(operations=[OperationEntry("a", ADD)]), session_file)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        err = one_line_exit_2(capsys, ["report", str(session_file), "-o", str(locked / "inner" / "r.md"), "--no-plot"])
    finally:
        locked.chmod(stat.S_IRWXU)
    assert "Permission denied" in err or "does not exist" in err


def test_9_the_cli_turns_any_os_error_into_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import workbench.model.scratchpad

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", "/somewhere/locked.json")

    monkeypatch.setattr(workbench.model.scratchpad, "evaluate", fails)
    err = one_line_exit_2(capsys, ["units", "1 s"])
    assert err == "workbench: error: Permission denied: /somewhere/locked.json\n"


# ---------------------------------------------------------------- 10. CSV formula injection with a bare CR


INJECTION = "vector add\r@SUM(1+1)*cmd|' /C calc'!A0"


def test_10_a_bare_cr_cannot_start_a_formula_cell() -> None:
    session = Session(
        operations=[OperationEntry(INJECTION, ADD)],
        runs=[{"id": "r1\n=1+1", "declaration": ADD, "samples_s": [1e-3, 2e-3]}],
    )
    for text in (render_samples_csv(session), render_csv(session)):  # the raw samples and the summary
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        assert rows[0]["operation"] == "vector add\r'@SUM(1+1)*cmd|' /C calc'!A0"
        # a reader that splits rows on any CR or LF sees no cell starting with a formula mark
        for line in re.split(r"\r\n|\r|\n", text):
            for cell in line.split(","):
                assert cell.strip('"')[:1] not in ("=", "+", "-", "@"), line
        assert re.search(r'"vector add\r\'@SUM', text)  # the field is quoted, its CR inside the quotes
    samples = list(csv.DictReader(io.StringIO(render_samples_csv(session), newline="")))
    assert [row["run_id"] for row in samples] == ["r1\n'=1+1"] * 2


def test_10_formula_marks_after_spaces_and_full_width_ones_are_neutralised() -> None:
    session = Session(
        operations=[OperationEntry("  =HYPERLINK(1)", ADD)],
        runs=[{"id": "＝1+1", "declaration": ADD, "samples_s": [1e-3]}, {"id": "-5 °C run", "declaration": ADD, "samples_s": [1e-3]}],
    )
    rows = list(csv.DictReader(io.StringIO(render_samples_csv(session), newline="")))
    assert rows[0]["operation"] == "'  =HYPERLINK(1)" and rows[0]["run_id"] == "'＝1+1"
    assert rows[1]["run_id"] == "'-5 °C run"


# ---------------------------------------------------------------- 11. Markdown report


SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
TRACKER = "![x](https://tracker.example/track.png)"
FENCE = "```"


def hostile_markdown_session() -> Session:
    text = f"{SCRIPT} {IMG} {TRACKER} {FENCE}"
    return loads(
        session_text(
            title=text,
            description=f"{FENCE}\n# not a heading\n{IMG}\n~~~\n{TRACKER}",
            operations=[
                {"name": text, "declaration": f"add(n=2**24, dtype=fp32)  # {FENCE} {SCRIPT}", "notes": f"{FENCE}python\n{SCRIPT}\n- {TRACKER}"},
                {"name": "", "declaration": "gemm(M=64, N=64, K=64, dtype=fp16)", "notes": ""},
            ],
            runs=[{"id": text, "declaration": ADD, "median_s": 1e-3, "conditions": {IMG: TRACKER, "n": FENCE}}],
            profiles=[{"kernel": text, f"{SCRIPT}": IMG}],
        )
    )


def outside_code(markdown: str) -> str:
    """The Markdown with fenced blocks and code spans removed (text in them renders literally)."""
    without_fences = re.sub(r"^(`{3,})text\n.*?\n\1$", "", markdown, flags=re.S | re.M)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", without_fences)


def test_11_untrusted_text_is_inert_in_the_markdown_report() -> None:
    text = render_markdown(hostile_markdown_session())
    assert "<" not in outside_code(text)  # no raw HTML anywhere (in code it is shown as text)
    assert "&lt;script&gt;" in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert not re.search(r"(?<!\\)!\[", text.replace("![Roofline", ""))  # no image syntax but our own plot
    assert "\\!\\[x\\](https://tracker.example/track.png)" in text
    assert "\n# not a heading" not in text and "\\# not a heading" in text


def test_11_fences_stay_balanced_and_the_derivation_stays_inside_its_own() -> None:
    text = render_markdown(hostile_markdown_session())
    fence_lines = [line for line in text.splitlines() if re.match(r"^\s{0,3}(`{3,}|~{3,})", line)]
    assert len(fence_lines) % 2 == 0 and fence_lines  # every fence that opens, closes
    opened = [line for line in fence_lines[::2]]
    assert all(line.startswith("```text") for line in opened)  # only the derivations open fences
    derivation = re.search(r"```text\n(.*?)\n```", text, re.S)
    assert derivation is not None and "Work: add" in derivation.group(1)
    # the declaration's comment is inside a code span that its own backticks cannot close
    assert "\nDeclaration: ````add(n=2**24, dtype=fp32)  # ``` <script>alert(1)</script>````\n" in text
    assert "\n`gemm(M=64, N=64, K=64, dtype=fp16)`\n" in text  # a plain declaration is shown as before


# ---------------------------------------------------------------- 14. measure --warmup


def test_14_the_warm_up_is_capped_like_the_iterations(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.measure.run import MAX_WARMUP_CALLS, MeasurementRun

    with pytest.raises(MeasurementError, match="warm-up must be at most 10,000 calls; got 1,000,000,000"):
        MeasurementRun("add(n=1024, dtype=fp32)", warmup=1_000_000_000)
    MeasurementRun("add(n=1024, dtype=fp32)", warmup=MAX_WARMUP_CALLS)  # the cap itself is allowed
    err = one_line_exit_2(capsys, ["measure", "add(n=1024)", "--backend", "numpy", "--warmup", "1000000000"])
    assert "at most 10,000" in err


# ---------------------------------------------------------------- 15. recovery writes to the right file


def test_15_the_autosave_keeps_the_source_path_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = tmp_path / "first" / "sub" / "work.json"
    original.parent.mkdir(parents=True)
    save(Session(operations=[OperationEntry("a", ADD)]), original)
    monkeypatch.chdir(tmp_path / "first")
    Autosaver(tmp_path / "autosave", pid=GONE_PID).write(Session(title="edited"), "sub/work.json")
    elsewhere = tmp_path / "second"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (recovery,) = find_recoverable(tmp_path / "autosave")
    assert recovery.source_path == str(original)


def test_15_a_relative_source_path_in_an_old_recovery_file_is_not_trusted(tmp_path: Path) -> None:
    saver = Autosaver(tmp_path, pid=GONE_PID)
    saver.write(Session(title="old"), "/abs/work.json")
    record = json.loads(saver.path.read_text())
    record["source_path"] = "sub/work.json"
    saver.path.write_text(json.dumps(record))
    (recovery,) = find_recoverable(tmp_path)
    assert recovery.title == "old" and recovery.source_path is None  # offered as unsaved work, not bound to a guess


# ---------------------------------------------------------------- 16. the smaller ones


def test_16_temporary_files_of_killed_saves_are_removed_by_the_next_save(tmp_path: Path) -> None:
    target = tmp_path / "work.json"
    stale = [tmp_path / ".work.json.abcd1234.tmp", tmp_path / ".work.json.zz_9zz_9.tmp"]
    fresh = tmp_path / ".work.json.inflight.tmp"  # another window's save of the same file, in progress
    other = tmp_path / ".other.json.abcd1234.tmp"
    for path in (*stale, fresh, other):
        path.write_bytes(b"x" * 1024)
    an_hour_ago = time.time() - 3600
    for path in (*stale, other):
        os.utime(path, (an_hour_ago, an_hour_ago))
    save(Session(operations=[OperationEntry("a", ADD)]), target)
    assert [path.exists() for path in stale] == [False, False]
    assert fresh.exists() and other.exists()
    assert load(target).operations[0].declaration == ADD
    assert remove_stale_temporaries(target) == []


@pytest.mark.parametrize("expression", ["1e999", "1e999 - 1e999", "1..2", "1e300 * 1e300 * 0", "(-1)**0.5"])
def test_16_the_scratchpad_refuses_what_is_not_a_finite_real_number(expression: str) -> None:
    with pytest.raises(UnitError):
        evaluate(expression)


def test_16_a_rate_without_a_number_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_exit_2(capsys, ["calc", ADD, "--rate", "TFLOP/s"])
    assert "'TFLOP/s' has no number" in err
    one_line_exit_2(capsys, ["calc", ADD, "--bandwidth", "TB/s"])


def test_16_a_session_of_64_mib_and_one_byte_is_refused_with_its_exact_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as stream:
        stream.truncate(64 * 2**20 + 1)  # sparse: no 64 MiB written
    err = one_line_exit_2(capsys, ["report", str(path), "-o", str(tmp_path / "r.md")])
    assert "67,108,865 B (64 MiB + 1 B) is over the limit of 67,108,864 B (64 MiB) for a session file" in err


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_16_autosave_does_not_follow_a_link_planted_at_its_name(tmp_path: Path) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("do not overwrite")
    saver = Autosaver(tmp_path / "autosave")
    saver.directory.mkdir()
    saver.path.symlink_to(victim)
    saver.write(Session(title="unsaved"))
    assert victim.read_text() == "do not overwrite"
    assert not saver.path.is_symlink() and json.loads(saver.path.read_text())["session"]["title"] == "unsaved"
    saver.discard()
    assert victim.exists()


def test_16_a_saved_session_still_follows_its_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    save(Session(title="one"), real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    save(Session(title="two"), link)
    assert link.is_symlink() and load(real).title == "two"  # a session file's link keeps pointing at it


def test_autosave_data_with_impossible_numbers_is_skipped_not_a_crash(tmp_path: Path) -> None:
    saver = Autosaver(tmp_path, pid=GONE_PID)
    saver.write(Session(title="odd header"))
    record = json.loads(saver.path.read_text())
    record.update(pid=10**400, saved_at=10**400)
    saver.path.write_text(json.dumps(record))
    (recovery,) = find_recoverable(tmp_path)
    assert recovery.title == "odd header" and recovery.saved_at == 0.0
    assert recovery.describe().startswith("odd header (0 operations), autosaved ")


def test_10_11_the_device_comparison_exports_neutralise_names_too() -> None:
    from workbench.documents.device_compare import compare_session, comparison_csv, comparison_markdown
    from workbench.model.devices import find_device

    session = Session(operations=[OperationEntry(f"{INJECTION} {SCRIPT} {TRACKER}", ADD)])
    comparison = compare_session(session, [find_device("h100-sxm")])
    rows = list(csv.DictReader(io.StringIO(comparison_csv(comparison), newline="")))
    assert rows[0]["operation"].startswith("vector add\r'@SUM(1+1)")
    markdown = comparison_markdown(comparison)
    assert "<" not in markdown and "\\!\\[x\\]" in markdown and "\r" not in markdown
