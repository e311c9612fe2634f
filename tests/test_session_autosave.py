"""Autosave: unsaved work survives a killed process and is offered back at the next start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.documents import autosave
from workbench.documents.autosave import Autosaver, data_dir, find_recoverable, process_is_running
from workbench.documents.session import OperationEntry, Session, SessionError

ADD = "add(n=2**24, dtype=fp32)"


def unsaved_session() -> Session:
    return Session(title="unsaved lab work", operations=[OperationEntry("my add", ADD, "edited, never saved")])


def test_the_data_folder_honours_the_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(autosave.DATA_DIR_VARIABLE, str(tmp_path))
    assert data_dir() == tmp_path
    assert autosave.autosave_dir() == tmp_path / "autosave"


def test_without_the_override_the_folder_is_the_platform_user_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv(autosave.DATA_DIR_VARIABLE, raising=False)
    assert data_dir() == Path(platformdirs.user_data_path("perf-workbench", appauthor=False))


def test_a_running_app_s_own_file_is_not_offered_for_recovery(tmp_path: Path) -> None:
    saver = Autosaver(tmp_path)
    saver.write(unsaved_session())
    assert saver.exists
    assert find_recoverable(tmp_path) == []


def test_discard_removes_the_file_once_the_work_is_saved(tmp_path: Path) -> None:
    saver = Autosaver(tmp_path)
    saver.write(unsaved_session())
    saver.discard()
    assert not saver.exists
    saver.discard()  # twice is harmless


def test_the_file_of_a_process_that_is_gone_is_offered_and_holds_the_edits(tmp_path: Path) -> None:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(finished.stdout)
    saver = Autosaver(tmp_path, pid=dead_pid)
    saver.write(unsaved_session(), source_path="/home/me/lab.json")
    [recovery] = find_recoverable(tmp_path)
    assert recovery.source_path == "/home/me/lab.json"
    assert recovery.title == "unsaved lab work" and recovery.operations == 1
    assert "unsaved lab work (1 operation), autosaved" in recovery.describe()
    session = recovery.load()
    assert session.operations[0].notes == "edited, never saved"
    recovery.discard()
    assert find_recoverable(tmp_path) == []


def test_a_reused_pid_does_not_hide_a_crashed_app_s_work(tmp_path: Path) -> None:
    if autosave.process_start_marker(os.getpid()) is None:
        pytest.skip("process start times are only read from /proc")
    saver = Autosaver(tmp_path, pid=os.getpid())
    saver.process_start = "1"  # an earlier process that had this pid
    saver.write(unsaved_session())
    record = json.loads(saver.path.read_text(encoding="utf-8"))
    record["pid"] = os.getppid()  # alive, but started at another time than the record says
    saver.path.write_text(json.dumps(record), encoding="utf-8")
    assert len(find_recoverable(tmp_path)) == 1


def test_damaged_recovery_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "autosave-host-1.json").write_text('{"format": "perf-workbench-autosave", "version": 1, "ses', encoding="utf-8")
    (tmp_path / "autosave-host-2.json").write_text('{"format": "something else"}', encoding="utf-8")
    assert find_recoverable(tmp_path) == []
    assert find_recoverable(tmp_path / "absent") == []


def test_a_recovery_file_from_another_host_is_left_alone(tmp_path: Path) -> None:
    saver = Autosaver(tmp_path, pid=999_999_999)
    saver.host = "another-machine"
    saver.write(unsaved_session())
    assert find_recoverable(tmp_path) == []


def test_an_unwritable_autosave_folder_is_a_session_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(SessionError, match="cannot create the autosave folder"):
        Autosaver(blocker / "autosave").write(unsaved_session())


def test_process_is_running_for_this_process_and_not_for_a_finished_one() -> None:
    assert process_is_running(os.getpid())
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    assert not process_is_running(int(finished.stdout))
    assert not process_is_running(0)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_an_app_killed_with_unsaved_edits_is_recovered_at_the_next_start(tmp_path: Path) -> None:
    """A child process autosaves its edits then is killed with SIGKILL; the next start finds them."""
    folder = tmp_path / "data"
    child_code = textwrap.dedent(
        """
        import sys, time
        from workbench.documents.autosave import Autosaver
        from workbench.documents.session import OperationEntry, Session
        session = Session(title="killed mid-edit")
        session.operations.append(OperationEntry("first", "add(n=2**24, dtype=fp32)"))
        saver = Autosaver()
        saver.write(session)
        session.operations.append(OperationEntry("second", "gemm(M=1024, N=1024, K=1024, dtype=bf16)", "typed just now"))
        saver.write(session)
        print("autosaved", flush=True)
        time.sleep(60)
        """
    )
    env = dict(os.environ, PERF_WORKBENCH_DATA_DIR=str(folder))
    child = subprocess.Popen([sys.executable, "-c", child_code], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "autosaved"
        assert find_recoverable(folder / "autosave") == []  # still running: nothing to recover yet
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    [recovery] = find_recoverable(folder / "autosave")
    session = recovery.load()
    assert session.title == "killed mid-edit"
    assert [(e.name, e.notes) for e in session.operations] == [("first", ""), ("second", "typed just now")]
