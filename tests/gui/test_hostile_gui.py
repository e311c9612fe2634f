"""Issue 15 in the window: an autosave that cannot be written says so, and recovery saves to the right file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.documents import session as session_module
from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.documents.examples import load_example
from workbench.gui.session_io import DISCARD, RECOVER, RecoveryAnswer

EDITED = "gemm(M=1024, N=4096, K=4096, dtype=fp16)"
GONE_PID = 2_000_000_001  # beyond any pid limit: the app that wrote the file is surely gone


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found (NVML Shared Library Not Found)")


def open_window(qtbot, path: str | None = None):  # type: ignore[no-untyped-def]
    """A window (opening `path` when given), shown, with its stand-in detection finished."""
    from workbench.gui.app import build_window

    win = build_window(path, detect=no_driver)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.document.detection is not None, timeout=5000)
    win.wait_for_workers()
    return win


def test_7_a_lone_surrogate_makes_autosave_fail_with_the_banner_not_a_traceback(qtbot) -> None:  # type: ignore[no-untyped-def]
    win = open_window(qtbot)
    win.document.edit_declaration(0, EDITED)
    win.document.session.title = "\udcff"  # text no file can hold (it arrived from outside a session file)
    assert win.session_io.autosave_now() is False
    assert win.banner.isVisible()
    assert win.banner.text().startswith(
        "Autosave failed: cannot write the recovery file: session.title: text holding a lone surrogate (U+DCFF)"
    )
    assert not win.session_io.autosaver.exists
    win.session_io.ask_unsaved_changes = lambda action: DISCARD
    win.close()


def test_15_recovered_work_saves_to_the_file_it_came_from_whatever_the_folder(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session_files_in_tmp: Path  # type: ignore[no-untyped-def]
) -> None:
    first = tmp_path / "first"
    (first / "sub").mkdir(parents=True)
    original = first / "sub" / "work.json"
    session_module.save(load_example("gemm-4096-fp16"), original)
    monkeypatch.chdir(first)
    win = open_window(qtbot, "sub/work.json")  # opened by a relative path
    assert win.document.path == str(original)
    win.document.edit_declaration(0, EDITED)
    assert win.session_io.autosave_now()
    record = json.loads(win.session_io.autosaver.path.read_text())
    assert record["source_path"] == str(original)
    # The app is killed: its recovery file stays behind, written by a process that is gone.
    record["pid"] = GONE_PID
    left_behind = win.session_io.autosaver.directory / "autosave-crashed-1.json"
    left_behind.write_text(json.dumps(record))
    win.session_io.ask_unsaved_changes = lambda action: DISCARD
    win.close()

    second = tmp_path / "second"
    second.mkdir()
    monkeypatch.chdir(second)  # relaunched from another folder
    offered = []

    def recover_it(found):  # type: ignore[no-untyped-def]
        offered.append(found)
        return RecoveryAnswer(RECOVER, found[0])

    from workbench.gui.app import build_window

    again = build_window(detect=no_driver)
    qtbot.addWidget(again)
    again.session_io.ask_recovery = recover_it
    again.show()
    qtbot.waitUntil(lambda: bool(offered), timeout=5000)
    qtbot.waitUntil(lambda: again.document.operations[0].declaration == EDITED, timeout=3000)
    assert again.document.path == str(original)
    assert again.save_session()
    assert session_module.load(original).operations[0].declaration == EDITED
    assert not (second / "sub").exists()  # nothing written beside the new working folder
    again.close()


def test_1_a_session_file_with_the_memory_bomb_opens_as_a_banner_not_a_blow_up(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(session_module.dumps(load_example("gemm-4096-fp16")))
    data["operations"][0]["declaration"] = "elementwise(n=1, inputs=65)"  # one over the limit (2**40 would eat memory on old code)
    path = tmp_path / "bomb.json"
    path.write_text(json.dumps(data))
    win = open_window(qtbot, str(path))
    assert win.banner.isVisible()
    assert "operations[0].declaration: inputs (arrays read) must be at most 64" in win.banner.text()
    assert win.document.path is None  # the window stays on an untitled session
    win.close()
