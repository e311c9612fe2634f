"""Several writers, one session file (workbench/documents/session_sync.py): the lock, the command line's append under it,
the merge of what another writer saved, and recovery that keeps runs which reached the file after a crash."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.documents import session_sync
from workbench.documents.autosave import Autosaver, Recovery, recover_session
from workbench.cli import main
from workbench.documents.session import OperationEntry, Session, SessionError, load, save
from workbench.documents.session_sync import (
    LOCK_TIMEOUT_S,
    SessionLockTimeout,
    Snapshot,
    lock_path,
    merge,
    read_session_file,
    save_merged,
    session_lock,
    update_session_file,
)

ROOT = Path(__file__).resolve().parents[1]
ADD = "add(n=2**12, dtype=fp32)"
WORKBENCH = [sys.executable, "-m", "workbench"]

# A writer through the command line's own save path (update_session_file with the CLI's _store_run), without
# the measurement: prints the seconds it waited for the lock (not counting its start, which a loaded machine
# makes slow).
WRITER = textwrap.dedent(
    """
    import sys, uuid
    from workbench.cli.measure import _new_measured_session
    from workbench.documents.session_sync import update_session_file
    run = {"id": uuid.uuid4().hex[:12], "declaration": "add(n=4096, dtype=fp32)", "samples_s": [1e-5] * 30}
    print(update_session_file(sys.argv[1], lambda session: session.runs.append(run), _new_measured_session)[2])
    """
)

# Takes the lock and holds it until killed.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from workbench.documents.session_sync import session_lock
    with session_lock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(600)
    """
)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _hold_lock(path: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True, env=_env())
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _session(*declarations: str) -> Session:
    return Session(operations=[OperationEntry.automatic(text) for text in declarations])


def _run(run_id: str, declaration: str = "add(n=4096, dtype=fp32)") -> dict[str, object]:
    return {"id": run_id, "declaration": declaration, "samples_s": [1e-5] * 30}


# ---------------------------------------------------------------- many writers at once


@pytest.mark.slow
def test_fifty_concurrent_measure_save_to_processes_leave_fifty_runs(tmp_path: Path) -> None:
    """The issue's first reproduction (6 at once left 5 runs), with 50 real `workbench measure --save-to`."""
    path = tmp_path / "race.json"
    command = [*WORKBENCH, "measure", ADD, "--backend", "numpy", "--iterations", "30", "--save-to", str(path)]
    processes = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        for _ in range(50)
    ]
    results = [(process.wait(timeout=900), process.stderr.read()) for process in processes]  # type: ignore[union-attr]
    for process in processes:
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]
    assert [code for code, _ in results] == [0] * 50, [err for _, err in results if err]
    session = load(path)
    assert len(session.runs) == 50
    assert len({run["id"] for run in session.runs}) == 50
    assert [entry.declaration for entry in session.operations] == [ADD]  # one operation, not one per writer


def test_a_writer_killed_holding_the_lock_blocks_none_of_the_next_ten(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    holder = _hold_lock(path)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    holder.stdout.close()  # type: ignore[union-attr]
    assert lock_path(path).exists()  # the lock file stays; the kernel dropped the lock itself
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=_env())
        for _ in range(10)
    ]
    outputs = [writer.communicate(timeout=300) for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * 10, [err for _, err in outputs]
    waits = [float(out) for out, _ in outputs]
    assert max(waits) < LOCK_TIMEOUT_S
    assert len(load(path).runs) == 10


def test_a_writer_that_cannot_get_the_lock_says_so_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save(_session(ADD), path)
    before = path.read_bytes()
    holder = _hold_lock(path)
    try:
        with pytest.raises(SessionLockTimeout, match=r"lab\.json.*lock \(lab\.json\.lock\).*over 0\.3 s"):
            update_session_file(path, lambda session: session.runs.append(_run("x")), Session, timeout=0.3)
    finally:
        holder.kill()
        holder.wait(timeout=30)
        holder.stdout.close()  # type: ignore[union-attr]
    assert path.read_bytes() == before


def test_a_writer_keeps_its_place_while_the_writers_ahead_replace_the_file(tmp_path: Path) -> None:
    """The wait is for one holder at a time: a lock that changes hands with each write is waited for on."""
    path = tmp_path / "lab.json"
    save(_session(ADD), path)
    busy = textwrap.dedent(
        """
        import os, sys, time
        from workbench.documents.session_sync import session_lock
        with session_lock(sys.argv[1]):
            print("held", flush=True)
            for step in range(10):  # 3 s in all, replacing the file every 0.3 s
                time.sleep(0.3)
                os.utime(sys.argv[1], ns=(step * 10**9, step * 10**9))
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", busy, str(path)], stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with session_lock(path, timeout=2.0) as waited:
            assert waited > 2.0  # longer than the timeout in all, never that long without a write
    finally:
        holder.wait(timeout=60)
        holder.stdout.close()  # type: ignore[union-attr]


def test_measure_that_cannot_get_the_lock_keeps_its_run_beside_the_file_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lab.json"
    save(_session(ADD), path)
    before = path.read_bytes()
    monkeypatch.setattr(session_sync, "LOCK_TIMEOUT_S", 0.3)
    holder = _hold_lock(path)
    try:
        code = main(["measure", ADD, "--backend", "numpy", "--iterations", "30", "--save-to", str(path)])
    finally:
        holder.kill()
        holder.wait(timeout=30)
        holder.stdout.close()  # type: ignore[union-attr]
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.count("\n") == 1 and "lock" in captured.err and "saved to" in captured.err
    assert "median" in captured.out  # the run's table is printed all the same
    assert path.read_bytes() == before
    (kept,) = tmp_path.glob("lab (run *).json")
    assert str(kept) in captured.err
    assert len(load(kept).runs) == 1


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="a read-only folder needs a non-root POSIX user")
def test_a_read_only_folder_is_one_line_before_the_measurement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code = main(["measure", ADD, "--backend", "numpy", "--save-to", str(folder / "lab.json")])
    finally:
        folder.chmod(0o755)
    captured = capsys.readouterr()
    assert code == 2 and captured.err.count("\n") == 1 and "not writable" in captured.err
    assert captured.out == ""  # said before measuring: nothing ran, nothing is lost


def test_the_lock_is_reentrant_in_one_process(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    with session_lock(path, timeout=0.5):
        with session_lock(path, timeout=0.5) as waited:
            assert waited < 0.5


# ---------------------------------------------------------------- the merge


def test_runs_another_writer_appended_are_merged_and_removed_runs_stay_removed(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    start = _session(ADD)
    start.runs = [_run("a"), _run("b")]
    save(start, path)
    mine, data = read_session_file(path)
    base = Snapshot.of(mine, data)
    theirs = copy.deepcopy(mine)
    theirs.runs.append(_run("c"))  # a terminal appended c
    del mine.runs[0]  # the window removed a
    mine.runs.append(_run("d"))  # and measured d
    result = merge(base, mine, theirs)
    assert [run["id"] for run in result.session.runs] == ["b", "d", "c"]
    assert [run["id"] for run in result.new_runs] == ["c"] and result.only_appended and not result.conflicts
    # and the other way round: a run the file lost (removed elsewhere) that this side kept as it was
    del theirs.runs[1]
    assert [run["id"] for run in merge(base, mine, theirs).session.runs] == ["d", "c"]


def test_an_operation_edited_on_both_sides_is_a_conflict_and_others_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save(_session(ADD, "copy(n=4096, dtype=fp32)"), path)
    mine, data = read_session_file(path)
    base = Snapshot.of(mine, data)
    theirs = copy.deepcopy(mine)
    theirs.operations[0].notes = "their notes"
    mine.operations[0].notes = "my notes"
    theirs.operations[1].notes = "only theirs"
    theirs.operations.append(OperationEntry.automatic("gemm(M=64, N=64, K=64, dtype=fp16)"))
    result = merge(base, mine, theirs)
    assert result.conflicts == [f"operation 1 ({mine.operations[0].name})"]
    notes = [entry.notes for entry in result.session.operations]
    assert notes == ["my notes", "only theirs", ""]  # mine kept where both changed; theirs taken elsewhere
    assert len(result.session.operations) == 3


def test_save_merged_writes_nothing_on_a_conflict_until_told_to_keep_mine(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save(_session(ADD), path)
    mine, data = read_session_file(path)
    base = Snapshot.of(mine, data)
    theirs = copy.deepcopy(mine)
    theirs.settings.overlap = 0.0
    theirs.runs.append(_run("t"))
    save(theirs, path)
    before = path.read_bytes()
    mine.settings.overlap = 0.5
    outcome = save_merged(path, mine, base)
    assert not outcome.written and outcome.merge is not None and outcome.merge.conflicts == ["the settings"]
    assert path.read_bytes() == before
    outcome = save_merged(path, mine, base, keep_mine_in_conflicts=True)
    written = load(path)
    assert outcome.written and written.settings.overlap == 0.5 and [run["id"] for run in written.runs] == ["t"]


def test_a_file_not_changed_since_it_was_read_is_simply_written(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save(_session(ADD), path)
    mine, data = read_session_file(path)
    mine.title = "mine"
    outcome = save_merged(path, mine, Snapshot.of(mine, data))
    assert outcome.written and outcome.merge is None and load(path).title == "mine"


def test_a_snapshot_survives_a_recovery_file_and_a_damaged_one_is_unknown() -> None:
    snapshot = Snapshot.of(_session(ADD), b"{}")
    assert Snapshot.from_dict(json.loads(json.dumps(snapshot.to_dict()))) == snapshot
    for damaged in (None, [], {"digest": 3}, {"digest": "x", "parts": {}, "runs": [1]}):
        assert Snapshot.from_dict(damaged) is None


# ---------------------------------------------------------------- recovery


def test_a_recovered_session_keeps_runs_that_reached_the_file_after_the_crash(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    start = _session(ADD)
    start.runs = [_run("a")]
    save(start, path)
    mine, data = read_session_file(path)
    base = Snapshot.of(mine, data)
    mine.operations[0].notes = "unsaved notes"
    autosaver = Autosaver(tmp_path / "autosave", pid=999_999)
    record = autosaver.write(mine, path, base)
    # after the crash a terminal appends a run
    update_session_file(path, lambda session: session.runs.append(_run("after-crash")), Session)
    recovered = recover_session(Recovery(record, 0.0, str(path), "", 1))
    assert [run["id"] for run in recovered.session.runs] == ["a", "after-crash"]
    assert recovered.session.operations[0].notes == "unsaved notes"
    assert recovered.merge is not None and not recovered.merge.conflicts
    # saving it against the base the recovery now has writes both, without asking
    outcome = save_merged(path, recovered.session, recovered.base)
    assert outcome.written and [run["id"] for run in load(path).runs] == ["a", "after-crash"]


def test_a_recovery_file_without_a_snapshot_drops_no_run_of_either_side(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save(_session(ADD), path)
    mine = load(path)
    mine.runs.append(_run("mine"))
    record = Autosaver(tmp_path / "autosave", pid=999_998).write(mine, path)  # no base: as older recovery files
    update_session_file(path, lambda session: session.runs.append(_run("theirs")), Session)
    recovered = recover_session(Recovery(record, 0.0, str(path), "", 1))
    assert sorted(run["id"] for run in recovered.session.runs) == ["mine", "theirs"]


def test_an_unreadable_session_file_still_recovers_the_work(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save(_session(ADD), path)
    mine, data = read_session_file(path)
    record = Autosaver(tmp_path / "autosave", pid=999_997).write(mine, path, Snapshot.of(mine, data))
    path.write_text("{ not json", encoding="utf-8")
    recovered = recover_session(Recovery(record, 0.0, str(path), "", 1))
    assert recovered.file_error and len(recovered.session.operations) == 1
    with pytest.raises(SessionError):
        save_merged(path, recovered.session, recovered.base)  # a damaged file is never silently overwritten
