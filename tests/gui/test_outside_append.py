"""The window and the command line writing one session file (gui/outside_changes.py, workbench/documents/session_sync.py):
runs a terminal appends show in the window at once and survive the window's save; parts both changed are asked
about, never overwritten silently; a recovered session keeps runs that reached the file after the crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.documents.autosave import Autosaver, find_recoverable
from workbench.gui import outside_changes
from workbench.gui.outside_changes import KEEP_COPY, MERGE, RELOAD
from workbench.gui.session_io import RECOVER, RecoveryAnswer
from workbench.documents.session import OperationEntry, Session, load, save
from workbench.documents.session_sync import Snapshot, read_session_file, update_session_file

ROOT = Path(__file__).resolve().parents[2]
ADD = "add(n=2**12, dtype=fp32)"
WAIT_MS = 20000


def measure_from_a_terminal(path: Path) -> None:
    """`workbench measure … --save-to` in another process, as a lab instructor runs it beside the window."""
    command = [sys.executable, "-m", "workbench", "measure", ADD, "--backend", "numpy", "--iterations", "30",
               "--save-to", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=300)
    assert done.returncode == 0, done.stderr


def open_window(qtbot, path: Path | None):  # type: ignore[no-untyped-def]
    from workbench.model.devices.nvml import NO_DRIVER, Detection
    from workbench.gui.app import build_window

    win = build_window(str(path) if path else None, detect=lambda: Detection(NO_DRIVER, "no NVIDIA driver found"))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.document.detection is not None, timeout=5000)
    return win


def plotted_runs(window) -> int:  # type: ignore[no-untyped-def]
    """How many runs the roofline draws (its tab in front: a hidden roofline redraws when shown)."""
    window.tabs.setCurrentWidget(window.roofline)
    measured = window.roofline.measured
    return sum(items.scatter.getData()[0].size for items in (measured.valid_items, measured.not_valid_items))


def run(run_id: str) -> dict[str, object]:
    return {"id": run_id, "declaration": "add(n=4096, dtype=fp32)", "samples_s": [1e-5] * 30}


def test_a_run_a_terminal_appends_shows_at_once_and_survives_an_edit_and_save(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "S.json"
    measure_from_a_terminal(path)
    window = open_window(qtbot, path)
    assert len(window.document.session.runs) == 1
    qtbot.waitUntil(lambda: plotted_runs(window) == 1, timeout=WAIT_MS)

    measure_from_a_terminal(path)  # the file now holds 2 runs
    qtbot.waitUntil(lambda: len(window.document.session.runs) == 2, timeout=WAIT_MS)
    assert window.measurement.model.rowCount() == 2  # in the run table
    qtbot.waitUntil(lambda: plotted_runs(window) == 2, timeout=WAIT_MS)  # and on the roofline
    line = window.statusBar().currentMessage()
    assert "S.json" in line and "saved by another program" in line and "1 run" in line
    assert window.document.undo_stack.isClean()  # the window shows what the file holds: nothing unsaved

    window.document.duplicate_operation(0)  # the edit, then Ctrl+S
    assert window.save_to(str(path)), window.banner.text()
    saved = load(path)
    assert len(saved.runs) == 2 and len(saved.operations) == 2


def test_a_save_before_the_watch_has_seen_the_append_merges_it_too(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "S.json"
    save(Session(operations=[OperationEntry.automatic("add(n=4096, dtype=fp32)")], runs=[run("first")]), path)
    window = open_window(qtbot, path)
    window.session_io.outside.watcher.blockSignals(True)  # the file event not yet delivered
    update_session_file(path, lambda session: session.runs.append(run("from-terminal")), Session)
    window.document.duplicate_operation(0)
    assert window.save_to(str(path)), window.banner.text()
    assert [r["id"] for r in load(path).runs] == ["first", "from-terminal"]
    assert [r["id"] for r in window.document.session.runs] == ["first", "from-terminal"]  # shown after the save
    assert "Saved" in window.statusBar().currentMessage() and "1 run" in window.statusBar().currentMessage()


def both_edit_the_notes(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """S.json open; another program writes its notes for operation 1 and a run; the window writes its own notes."""
    path = tmp_path / "S.json"
    save(Session(operations=[OperationEntry.automatic("add(n=4096, dtype=fp32)")], runs=[run("first")]), path)
    window = open_window(qtbot, path)

    def theirs(session: Session) -> None:
        session.operations[0].notes = "their notes"
        session.runs.append(run("theirs"))

    update_session_file(path, theirs, Session)
    qtbot.waitUntil(lambda: len(window.document.session.runs) == 2, timeout=WAIT_MS)
    assert window.document.session.operations[0].notes == "their notes"  # taken: the window had not changed them
    window.document.set_notes(0, "my notes")
    update_session_file(path, lambda session: setattr(session.operations[0], "notes", "their second notes"), Session)
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=WAIT_MS)
    assert "changed here too" in window.banner.text() and "operation 1" in window.banner.text()
    assert window.document.session.operations[0].notes == "my notes"  # never replaced under the user's hands
    asked: list[list[str]] = []
    return path, window, asked


@pytest.mark.parametrize("answer", [RELOAD, KEEP_COPY, MERGE, "cancel"])
def test_a_part_both_changed_is_asked_about_and_never_overwritten_silently(qtbot, tmp_path: Path, answer: str) -> None:
    path, window, asked = both_edit_the_notes(qtbot, tmp_path)
    before = path.read_bytes()
    window.session_io.ask_conflict = lambda where, conflicts: asked.append(list(conflicts)) or answer
    saved = window.save_to(str(path))
    assert asked == [["operation 1 (Vector add, 2^12 fp32)"]]
    on_disk = load(path)
    if answer == RELOAD:
        assert saved and window.document.session.operations[0].notes == "their second notes"
        assert path.read_bytes() == before and window.document.undo_stack.isClean()
    elif answer == KEEP_COPY:
        copy = tmp_path / "S (my copy).json"
        assert saved and path.read_bytes() == before
        assert load(copy).operations[0].notes == "my notes" and window.document.path == str(copy)
    elif answer == MERGE:
        assert saved and on_disk.operations[0].notes == "my notes"
        assert [r["id"] for r in on_disk.runs] == ["first", "theirs"]
    else:
        assert not saved and path.read_bytes() == before and not window.document.undo_stack.isClean()


def test_a_save_that_cannot_get_the_lock_says_so_and_keeps_the_work_unsaved(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.documents import session_sync
    path = tmp_path / "S.json"
    save(Session(operations=[OperationEntry.automatic("add(n=4096, dtype=fp32)")]), path)
    window = open_window(qtbot, path)
    window.document.duplicate_operation(0)
    before = path.read_bytes()
    monkeypatch.setattr(session_sync, "LOCK_TIMEOUT_S", 0.3)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom workbench.documents.session_sync import session_lock\n"
         "with session_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(600)", str(path)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert not window.save_to(str(path))
    finally:
        holder.kill()
        holder.wait(timeout=30)
        holder.stdout.close()  # type: ignore[union-attr]
    assert "lock" in window.banner.text() and "still unsaved" in window.banner.text()
    assert path.read_bytes() == before and not window.document.undo_stack.isClean()
    assert len(window.document.session.operations) == 2
    assert window.save_to(str(path))  # the holder gone, the same save goes through
    assert len(load(path).operations) == 2


def test_the_conflict_question_shows_the_parts_as_plain_text(qtbot, tmp_path: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    box, answers = outside_changes.conflict_box(host, str(tmp_path / "S.json"), ["operation 1 (<b>x</b>)"])
    labels = {label.objectName(): label for label in box.findChildren(QLabel)}
    informative = labels["qt_msgbox_informativelabel"]
    assert "<b>x</b>" in informative.text() and informative.textFormat() == Qt.TextFormat.PlainText
    assert sorted(answers.values()) == sorted([RELOAD, KEEP_COPY, MERGE, "cancel"])


def test_a_recovered_window_keeps_runs_that_reached_the_file_after_the_crash(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "S.json"
    save(Session(operations=[OperationEntry.automatic("add(n=4096, dtype=fp32)")], runs=[run("first")]), path)
    crashed, data = read_session_file(path)
    base = Snapshot.of(crashed, data)  # the file as the crashed window had read it
    crashed.operations[0].notes = "unsaved before the crash"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    Autosaver(pid=int(dead.stdout)).write(crashed, path, base)
    update_session_file(path, lambda session: session.runs.append(run("after-crash")), Session)

    window = open_window(qtbot, None)
    (recovery,) = find_recoverable()
    window.session_io.ask_recovery = lambda found: RecoveryAnswer(RECOVER, recovery)
    window.session_io.offer_recovery()
    assert [r["id"] for r in window.document.session.runs] == ["first", "after-crash"]
    assert window.document.session.operations[0].notes == "unsaved before the crash"
    assert "after the crash" in window.banner.text()
    assert window.save_to(str(path))
    saved = load(path)
    assert [r["id"] for r in saved.runs] == ["first", "after-crash"]
    assert saved.operations[0].notes == "unsaved before the crash"
