"""Session files in the window: save and reopen, Open recent, the unsaved-changes question, drops,
bad files, report export, autosave, and recovery after the app is killed."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
import xml.etree.ElementTree as ET
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from workbench.documents import session as session_module
from workbench.documents.autosave import DATA_DIR_VARIABLE, Autosaver, find_recoverable
from workbench.model.devices import Rate
from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.documents.examples import load_example
from workbench.gui import session_io
from workbench.gui.plot_common import MEMORY_COLOUR, SELECTED_COLOUR
from workbench.gui.session_io import CANCEL, DISCARD, LATER, RECOVER, SAVE, RecoveryAnswer, RecoveryDialog
from workbench.documents.report import SAMPLES_CSV_COLUMNS
from workbench.documents.session import OperationEntry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"
EDITED = "gemm(M=1024, N=4096, K=4096, dtype=fp16)"
SVG_ELEMENT = re.compile(r"<svg .*?</svg>", re.DOTALL)
SVG = "{http://www.w3.org/2000/svg}"


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found (NVML Shared Library Not Found)")


def open_window(qtbot, path: str | None = None):  # type: ignore[no-untyped-def]
    """A second window (reopening a file), shown, with its stand-in detection finished."""
    from workbench.gui.app import build_window

    win = build_window(path, detect=no_driver)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.document.detection is not None, timeout=5000)
    win.wait_for_workers()
    return win


def shown_title(window) -> str:  # type: ignore[no-untyped-def]
    """The title as the window system shows it ('[*]' replaced by '*' while modified)."""
    return window.windowHandle().title()


def record_questions(window, answer: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Replace the unsaved-changes question with one that answers `answer` and remembers what was asked."""
    asked: list[str] = []

    def ask(action: str) -> str:
        asked.append(action)
        return answer

    window.session_io.ask_unsaved_changes = ask
    return asked


def never_asked(action: str) -> str:
    raise AssertionError(f"the unsaved-changes question was asked ({action}) when nothing could be lost")


def saved_file(tmp_path: Path, name: str = "lab.json", key: str = "gemm-4096-fp16") -> Path:
    path = tmp_path / name
    session_module.save(load_example(key), path)
    return path


def drop(window, paths: list[Path]) -> bool:  # type: ignore[no-untyped-def]
    """Drag files over the window and drop them, as a file manager does; True when the window took the drag."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(QPoint(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    if not enter.isAccepted():
        return False
    dropped = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, dropped)
    return dropped.isAccepted()


# ---------------------------------------------------------------- save and reopen


def test_save_then_reopen_shows_the_same_operations_rates_and_settings(qtbot, window, tmp_path: Path) -> None:
    doc = window.document
    doc.add_operation(OperationEntry("stream add", "add(n=2**24, dtype=fp32)"))
    doc.rename_operation(0, "square gemm")
    doc.set_rate("fp16_tc", "100 TFLOP/s")
    doc.set_rate("hbm", "2.5 TB/s")
    doc.set_setting("convention", "mac")
    doc.set_setting("overlap", 0.5)
    doc.set_setting("binary", True)
    figures = []
    for index in range(2):
        doc.select(index)
        figures.append({key: label.text() for key, label in window.panel.values.items()})
    path = tmp_path / "two ops.json"
    assert window.save_to(str(path))
    assert not window.isWindowModified()

    again = open_window(qtbot, str(path))
    new = again.document
    assert [(e.name, e.declaration) for e in new.operations] == [
        ("square gemm", "gemm(M=4096, N=4096, K=4096, dtype=fp16)"),
        ("stream add", "add(n=2**24, dtype=fp32)"),
    ]
    assert [again.operations.row_look(i)[0] for i in range(again.operations.model.rowCount())] == ["square gemm", "stream add"]
    assert new.session.device.overrides == {
        "fp16_tc": Rate(1e14, "entered", "entered in the device panel"),
        "hbm": Rate(2.5e12, "entered", "entered in the device panel"),
    }
    assert "2 rates entered or measured" in again.device_status.text()
    settings = new.session.settings
    assert (settings.convention, settings.overlap, settings.binary) == ("mac", 0.5, True)
    assert again.convention_box.currentData() == "mac"
    assert again.overlap_box.currentData() == 0.5
    assert again.actions["binary"].isChecked()
    for index in range(2):
        new.select(index)
        assert {key: label.text() for key, label in again.panel.values.items()} == figures[index]
    # mac convention: 4096³ = 68,719,476,736 FLOP at the entered 100 TFLOP/s = 687.2 µs
    new.select(0)
    assert again.panel.values["compute"].text() == "687.2 µs"
    assert "two ops.json" in shown_title(again) and "*" not in shown_title(again)


# ---------------------------------------------------------------- the dirty star and the questions


def test_the_title_has_a_star_while_there_are_unsaved_changes(window, tmp_path: Path) -> None:
    assert "*" not in shown_title(window)
    window.document.edit_declaration(0, EDITED)
    assert shown_title(window).startswith("untitled session*")
    window.document.undo_stack.undo()
    assert "*" not in shown_title(window)  # back where it started: nothing unsaved
    window.document.edit_declaration(0, EDITED)
    assert window.save_to(str(tmp_path / "star.json"))
    assert shown_title(window).startswith("star.json — ")


def test_close_with_unsaved_changes_cancel_keeps_the_window_and_save_writes(window, tmp_path: Path) -> None:
    path = saved_file(tmp_path)
    assert window.open_session(str(path))
    window.document.edit_declaration(0, EDITED)
    asked = record_questions(window, CANCEL)
    assert window.close() is False
    assert window.isVisible()
    assert window.isWindowModified()
    assert asked == ["closing"]
    assert session_module.load(path).operations[0].declaration != EDITED

    asked = record_questions(window, SAVE)
    assert window.close() is True
    assert not window.isVisible()
    assert asked == ["closing"]
    assert session_module.load(path).operations[0].declaration == EDITED


def test_close_with_unsaved_changes_discard_closes_and_drops_the_recovery_file(qtbot, window, tmp_path: Path) -> None:
    path = saved_file(tmp_path)
    before = path.read_bytes()
    assert window.open_session(str(path))
    window.document.edit_declaration(0, EDITED)
    assert window.session_io.autosave_now()
    assert window.session_io.autosaver.exists
    asked = record_questions(window, DISCARD)
    assert window.close() is True
    assert asked == ["closing"]
    assert path.read_bytes() == before
    assert not window.session_io.autosaver.exists


def test_a_clean_window_closes_without_a_question(window) -> None:
    window.session_io.ask_unsaved_changes = never_asked
    assert window.close() is True


def test_new_open_and_examples_ask_before_replacing_unsaved_work(window, tmp_path: Path) -> None:
    path = saved_file(tmp_path, "other.json", "vector-add")
    window.document.edit_declaration(0, EDITED)
    asked = record_questions(window, CANCEL)
    window.new_session()
    window.open_example("conv2d")
    assert window.open_session(str(path)) is False
    assert asked == ["starting a new session", "opening an example", "opening other.json"]
    assert window.document.operations[0].declaration == EDITED  # Cancel kept the work each time
    assert window.isWindowModified()

    asked = record_questions(window, DISCARD)
    window.open_example("vector-add")
    assert asked == ["opening an example"]
    assert window.document.operations[0].declaration == "add(n=2**24, dtype=fp32)"


def test_an_example_opens_as_a_new_unsaved_session(window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.gui import window as window_module

    window.open_example("conv2d")
    doc = window.document
    assert doc.path is None  # it belongs to no file: Save asks for a name
    assert not window.isWindowModified()
    assert shown_title(window).startswith("A convolution layer")
    target = tmp_path / "my conv.json"
    offered: list[str] = []

    def save_dialog(parent, caption, directory, filters):  # type: ignore[no-untyped-def]
        offered.append(caption)
        return str(target), filters

    monkeypatch.setattr(window_module.QFileDialog, "getSaveFileName", save_dialog)
    assert window.save_session()
    assert offered == ["Save session"]
    assert doc.path == str(target)
    assert session_module.load(target).operations[0].declaration.startswith("conv2d(")
    # the example's own file is untouched: opening it again gives the original, not a saved copy
    assert load_example("conv2d").title == doc.session.title


def test_the_unsaved_changes_box_names_the_session_and_offers_three_answers(window, tmp_path: Path) -> None:
    assert window.open_session(str(saved_file(tmp_path, "named.json")))
    box = window.session_io.unsaved_changes_box("closing")
    buttons = QMessageBox.StandardButton
    assert "named.json" in box.text()
    assert box.informativeText() == "Save them before closing?"
    assert box.standardButtons() == buttons.Save | buttons.Discard | buttons.Cancel
    assert box.defaultButton() is box.button(buttons.Save)
    assert box.escapeButton() is box.button(buttons.Cancel)
    box.deleteLater()


# ---------------------------------------------------------------- Open recent


def recent_entries(window) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.text() for a in window.session_io.recent_menu.actions() if a.data()]


def test_open_recent_lists_most_recent_first_and_prunes_missing_files(qtbot, window, tmp_path: Path) -> None:
    first, second = saved_file(tmp_path, "first.json"), saved_file(tmp_path, "second.json", "vector-add")
    assert window.open_session(str(first))
    assert window.open_session(str(second))
    assert window.session_io.recent_paths() == [str(second), str(first)]
    assert [text.split("  ")[0] for text in recent_entries(window)] == ["&1 second.json", "&2 first.json"]
    window.document.edit_declaration(0, "add(n=2**20, dtype=fp32)")
    assert window.save_to(str(tmp_path / "third.json"))
    assert window.session_io.recent_paths()[0] == str(tmp_path / "third.json")
    assert window.open_session(str(first))
    assert window.session_io.recent_paths() == [str(first), str(tmp_path / "third.json"), str(second)]

    # the list outlives the window (QSettings)
    other = open_window(qtbot)
    assert other.session_io.recent_paths() == [str(first), str(tmp_path / "third.json"), str(second)]
    # choosing an entry opens it
    entry = next(a for a in other.session_io.recent_menu.actions() if a.data() == str(second))
    entry.trigger()
    assert other.document.path == str(second)
    assert other.editor.line.text() == "add(n=2**24, dtype=fp32)"

    # a file that went away is dropped when the menu opens, with a message saying so
    (tmp_path / "third.json").unlink()
    window.session_io.recent_menu.aboutToShow.emit()
    assert window.session_io.recent_paths() == [str(second), str(first)]
    assert "third.json" in window.statusBar().currentMessage()
    assert not any("third.json" in text for text in recent_entries(window))
    # ... or when it is chosen after it went away
    second.unlink()
    assert window.session_io.open_recent(str(second)) is False
    assert "second.json is no longer there" in window.statusBar().currentMessage()
    assert window.session_io.recent_paths() == [str(first)]

    window.session_io.clear_recent_action.trigger()
    assert window.session_io.recent_paths() == []
    assert [a.text() for a in window.session_io.recent_menu.actions() if a.text()] == ["No recent sessions", "&Clear the list"]


def test_the_file_menu_offers_open_recent_and_export_report(window) -> None:
    file_menu = window.menuBar().actions()[0].menu()
    texts = [a.text() for a in file_menu.actions()]
    assert texts.index("Open &recent") == texts.index("&Open session…") + 1
    assert texts.index("Export &report…") == texts.index("Export plot as S&VG…") + 1


# ---------------------------------------------------------------- drag and drop


def test_dropping_a_session_file_opens_it(qtbot, window, tmp_path: Path) -> None:
    path = saved_file(tmp_path, "dropped.json", "attention-naive-vs-fused")
    assert drop(window, [path])
    qtbot.waitUntil(lambda: window.document.path == str(path), timeout=3000)
    assert len(window.document.operations) == 2
    assert window.editor.line.text().startswith("attention(")
    assert window.session_io.recent_paths()[0] == str(path)


def test_a_dropped_csv_goes_to_the_profile_import(qtbot, window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    csv = tmp_path / "kernels.csv"
    csv.write_text('"ID","Kernel Name"\n')
    imported: list[str] = []
    hooks = dataclasses.replace(window.session_io.hooks, import_profile=imported.append)
    monkeypatch.setattr(window.session_io, "hooks", hooks)
    assert drop(window, [csv])
    qtbot.waitUntil(lambda: imported == [str(csv)], timeout=3000)

    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert drop(window, [other])
    qtbot.waitUntil(lambda: "notes.txt: not a session (.json) or a profiler export (.csv)" in window.statusBar().currentMessage(), timeout=3000)
    assert window.document.path is None


# ---------------------------------------------------------------- bad files


def test_a_bad_file_shows_its_message_and_loses_nothing(qtbot, window, tmp_path: Path) -> None:
    window.document.edit_declaration(0, EDITED)
    window.session_io.ask_unsaved_changes = never_asked  # a file that cannot open replaces nothing
    truncated = tmp_path / "truncated.json"
    truncated.write_text('{"format": "perf-workbench-session", "version": 1, "operations": [')
    assert window.open_session(str(truncated)) is False
    assert window.banner.isVisible()
    assert "Cannot open truncated.json" in window.banner.text()
    assert "not valid JSON" in window.banner.text()

    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format": "perf-workbench-session", "version": 99, "operations": []}))
    assert drop(window, [newer])
    qtbot.waitUntil(lambda: "newer.json" in window.banner.text(), timeout=3000)
    assert "newer Performance Workbench" in window.banner.text()

    zero = tmp_path / "zero.json"
    data = session_module.session_to_dict(load_example("vector-add"))
    data["operations"][0]["declaration"] = "add(n=0, dtype=fp32)"
    zero.write_text(json.dumps(data))
    assert window.open_session(str(zero)) is False
    assert "operations[0].declaration" in window.banner.text()

    # the session in the window is as it was: the edit, unsaved, belonging to no file
    assert window.document.operations[0].declaration == EDITED
    assert window.editor.line.text() == EDITED
    assert window.isWindowModified()
    assert window.document.path is None
    assert window.session_io.recent_paths() == []
    window.session_io.ask_unsaved_changes = lambda action: DISCARD  # let the fixture close it


# ---------------------------------------------------------------- reports


def embedded_svg(text: str) -> ET.Element:
    """The roofline inline in an HTML report, parsed."""
    match = SVG_ELEMENT.search(text)
    assert match is not None, "no inline SVG"
    return ET.fromstring(match.group(0))


def stroked(root: ET.Element) -> set[str]:
    return {node.get("stroke") or "" for node in root.iter(f"{SVG}line")}


def test_export_writes_markdown_html_and_csv_reports(window, tmp_path: Path) -> None:
    from workbench.measure import measure

    window.open_example("vector-add")
    doc = window.document
    doc.edit_declaration(0, "add(n=2**18, dtype=fp32)")
    record = measure("add(n=2**18, dtype=fp32)", backend="numpy", iterations=30, device="cpu-generic")
    doc.session.runs.append(record.to_dict())

    for name in ("lab.md", "lab.html", "lab.csv"):
        assert window.session_io.export_report(str(tmp_path / name)), window.banner.text()

    html = (tmp_path / "lab.html").read_text(encoding="utf-8")
    plot = embedded_svg(html)
    assert float(plot.get("width") or 0) >= 400 and float(plot.get("height") or 0) >= 250
    assert {MEMORY_COLOUR, SELECTED_COLOUR} <= stroked(plot)  # the memory roof, the operation's path's roof
    assert "add(n=2**18, dtype=fp32)" in html
    markdown = (tmp_path / "lab.md").read_text(encoding="utf-8")
    assert "![Roofline plot of the session](<lab-plot.svg>)" in markdown and "base64" not in markdown
    assert ET.parse(tmp_path / "lab-plot.svg").getroot().tag == f"{SVG}svg"  # the plot beside the text
    assert len(markdown.encode("utf-8")) < 20_000
    assert "add(n=2**18, dtype=fp32)" in markdown

    with open(tmp_path / "lab-samples.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(SAMPLES_CSV_COLUMNS)
    assert len(rows) == 30  # one row per timed sample
    # the run is filed under the operation it measured (the run keeps the canonical spelling of n)
    assert {(row["operation"], row["declaration"]) for row in rows} == {("Vector add, 2^18 fp32", "add(n=262144, dtype=fp32)")}  # the name followed the edit
    assert [float(row["time [s]"]) for row in rows] == pytest.approx(list(record.samples_s))
    with open(tmp_path / "lab.csv", newline="", encoding="utf-8") as handle:
        summary = list(csv.DictReader(handle))
    assert [row["operation"] for row in summary] == ["Vector add, 2^18 fp32"] and summary[0]["valid runs"] == "1"
    assert "lab-samples.csv" in window.statusBar().currentMessage()

    assert not window.session_io.export_report(str(tmp_path / "lab.txt"))
    assert "cannot tell the report type" in window.banner.text()


def test_the_exported_roofline_is_the_windows_levels_labels_and_selection(window, tmp_path: Path) -> None:
    """The report draws the roofline from the scenes, as the window shows it: levels switched off stay off, the
    label mode and the selected operation are the window's."""
    window.open_example("gemm-naive-tiled-cublas")
    window.roofline.set_hidden_levels(["smem"])
    window.roofline.set_label_mode("selected")
    window.document.select(1)
    assert window.session_io.export_report(str(tmp_path / "lab.html")), window.banner.text()
    plot = embedded_svg((tmp_path / "lab.html").read_text(encoding="utf-8"))
    labels = ["".join(node.itertext()) for node in plot.iter(f"{SVG}text") if node.get("class") == "operation-label"]
    assert labels == [window.document.operations[1].name]
    roofs = {node.get("class") for node in plot.iter(f"{SVG}line")}
    assert "roof memory" in roofs and "roof level-smem" not in roofs


def test_workbench_report_on_the_command_line_embeds_the_plot(tmp_path: Path) -> None:
    """`workbench report` with no display at all embeds the roofline (drawn without Qt)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "worked.html"
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "report", str(EXAMPLES / "gemm-4096-fp16.json"), "-o", str(out)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote html report {out}"
    assert done.stderr == ""
    assert embedded_svg(out.read_text(encoding="utf-8")).tag == f"{SVG}svg"


# ---------------------------------------------------------------- autosave and recovery


def test_autosave_writes_while_unsaved_and_a_save_removes_it(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(session_io.AUTOSAVE_INTERVAL_VARIABLE, "0.05")
    win = open_window(qtbot)
    autosaver = win.session_io.autosaver
    assert win.session_io.autosave_timer.interval() == 50
    qtbot.wait(150)
    assert not autosaver.exists  # nothing unsaved, nothing written
    win.document.edit_declaration(0, EDITED)
    qtbot.waitUntil(lambda: autosaver.exists, timeout=3000)
    record = json.loads(autosaver.path.read_text())
    assert record["session"]["operations"][0]["declaration"] == EDITED
    assert record["source_path"] is None
    win.document.undo_stack.undo()  # back to the clean state: nothing to recover any more
    assert not autosaver.exists
    win.document.edit_declaration(0, EDITED)
    qtbot.waitUntil(lambda: autosaver.exists, timeout=3000)
    assert win.save_to(str(tmp_path / "saved.json"))
    assert not autosaver.exists
    qtbot.wait(150)
    assert not autosaver.exists
    win.close()


def test_an_autosave_that_cannot_be_written_is_said_once(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(blocker))
    win = open_window(qtbot)
    win.document.edit_declaration(0, EDITED)
    assert win.session_io.autosave_now() is False
    assert win.banner.isVisible()
    assert win.banner.text().startswith("Autosave failed: cannot create the autosave folder")
    win.hide_banner()
    win.document.edit_declaration(0, "gemm(M=512, N=4096, K=4096, dtype=fp16)")
    assert win.session_io.autosave_now() is False
    assert not win.banner.isVisible()  # not repeated every period
    assert win.document.operations[0].declaration.startswith("gemm(M=512")  # the work itself is untouched
    win.close()


def test_the_autosave_interval_falls_back_to_thirty_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    for text in ("", "soon", "-1", "0", "nan"):
        monkeypatch.setenv(session_io.AUTOSAVE_INTERVAL_VARIABLE, text)
        assert session_io.autosave_interval_ms() == 30_000
    monkeypatch.setenv(session_io.AUTOSAVE_INTERVAL_VARIABLE, "2.5")
    assert session_io.autosave_interval_ms() == 2_500


CHILD_SCRIPT = textwrap.dedent(
    """
    import sys
    from workbench.model.devices.nvml import NO_DRIVER, Detection
    from workbench.gui.app import build_window, ensure_application

    app = ensure_application()
    window = build_window(sys.argv[1] if len(sys.argv) > 2 else None, detect=lambda: Detection(NO_DRIVER, "no driver"))
    window.show()
    window.document.edit_declaration(0, sys.argv[-1])
    print("edited", flush=True)
    app.exec()
    """
)


def start_child(tmp_path: Path, data_dir: Path, declaration: str, session_file: Path | None = None) -> subprocess.Popen[str]:
    """The app in a child process, offscreen, with a 0.2 s autosave: it makes one edit and waits."""
    env = dict(os.environ)
    env.update({
        "QT_QPA_PLATFORM": "offscreen",
        DATA_DIR_VARIABLE: str(data_dir),
        session_io.AUTOSAVE_INTERVAL_VARIABLE: "0.2",
        "XDG_CONFIG_HOME": str(tmp_path / "child-config"),  # the child's QSettings stay out of the user's
    })
    args = [sys.executable, "-c", CHILD_SCRIPT, *([str(session_file)] if session_file else []), declaration]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_autosave(child: subprocess.Popen[str], folder: Path, declaration: str, timeout_s: float = 60.0) -> Path:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        for path in folder.glob("autosave-*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if record.get("pid") == child.pid and record["session"]["operations"][0]["declaration"] == declaration:
                return path
        if child.poll() is not None:
            raise AssertionError(f"the child app exited ({child.returncode}): {child.stderr.read() if child.stderr else ''}")
        time.sleep(0.1)
    raise AssertionError("the child app never autosaved its edit")


def kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    if child.stdout:
        child.stdout.close()
    if child.stderr:
        child.stderr.close()


def test_after_the_app_is_killed_the_next_start_offers_the_edit_and_restores_it(
    qtbot, tmp_path: Path, session_files_in_tmp: Path
) -> None:
    autosave_folder = session_files_in_tmp / "autosave"
    source = saved_file(tmp_path, "lab.json")
    child = start_child(tmp_path, session_files_in_tmp, EDITED, source)
    try:
        left_behind = wait_for_autosave(child, autosave_folder, EDITED)
    finally:
        kill(child)
    assert child.returncode == -signal.SIGKILL
    assert left_behind.exists()  # a killed app cannot clean up after itself

    offered: list[list[str]] = []

    def recover_newest(found):  # type: ignore[no-untyped-def]
        offered.append([recovery.describe() for recovery in found])
        return RecoveryAnswer(RECOVER, found[0])

    from workbench.gui.app import build_window

    win = build_window(detect=no_driver)
    qtbot.addWidget(win)
    win.session_io.ask_recovery = recover_newest
    win.show()
    qtbot.waitUntil(lambda: bool(offered), timeout=5000)
    assert len(offered[0]) == 1 and "1 operation" in offered[0][0]
    qtbot.waitUntil(lambda: win.document.operations[0].declaration == EDITED, timeout=3000)
    assert win.editor.line.text() == EDITED
    assert win.isWindowModified()  # recovered work is unsaved work
    assert shown_title(win).startswith("lab.json*")
    assert win.document.path == str(source)  # Save writes it back where it belonged
    assert "Recovered" in win.banner.text()
    assert not left_behind.exists()
    assert win.session_io.autosaver.exists  # now this process guards the recovered work
    assert session_module.load(source).operations[0].declaration != EDITED
    win.session_io.ask_unsaved_changes = lambda action: SAVE
    assert win.close()
    assert session_module.load(source).operations[0].declaration == EDITED
    assert not win.session_io.autosaver.exists
    assert find_recoverable(autosave_folder) == []


def test_recovery_can_be_put_off_or_discarded(qtbot, tmp_path: Path, session_files_in_tmp: Path) -> None:
    folder = session_files_in_tmp / "autosave"
    for pid in (2_000_000_001, 2_000_000_002):  # beyond any pid limit: processes that are surely gone
        Autosaver(folder, pid=pid).write(load_example("vector-add"))
    assert len(find_recoverable(folder)) == 2

    win = open_window(qtbot)
    qtbot.wait(session_io.RECOVERY_DELAY_MS + 100)  # the stand-in answered "Not now"
    assert len(find_recoverable(folder)) == 2
    assert not win.isWindowModified()

    win.session_io.ask_recovery = lambda found: RecoveryAnswer(session_io.DISCARD_ALL)
    assert win.session_io.offer_recovery() == RecoveryAnswer(session_io.DISCARD_ALL)
    assert find_recoverable(folder) == []
    assert "Discarded 2 unsaved sessions" in win.statusBar().currentMessage()
    assert win.session_io.offer_recovery() is None  # nothing left to offer


def test_the_recovery_dialog_lists_the_sessions_and_returns_the_choice(qtbot, session_files_in_tmp: Path) -> None:
    folder = session_files_in_tmp / "autosave"
    older = load_example("vector-add")
    Autosaver(folder, pid=2_000_000_003).write(older)
    time.sleep(0.01)
    Autosaver(folder, pid=2_000_000_004).write(load_example("conv2d"), "/data/conv.json")
    found = find_recoverable(folder)
    dialog = RecoveryDialog(found)
    qtbot.addWidget(dialog)
    assert [dialog.list.item(i).text() for i in range(dialog.list.count())] == [r.describe() for r in found]
    assert dialog.list.item(0).text().startswith("A convolution layer")  # newest first
    assert dialog.list.item(0).toolTip() == "Was saved as: /data/conv.json"
    assert dialog.discard_button.text() == "&Discard all"
    dialog.list.setCurrentRow(1)
    dialog.open()
    dialog.recover_button.click()
    assert dialog.choice == RecoveryAnswer(RECOVER, found[1])
    assert dialog.result() == dialog.DialogCode.Accepted
    dialog.open()
    dialog.later_button.click()
    assert dialog.choice == RecoveryAnswer(LATER)
    assert dialog.result() == dialog.DialogCode.Rejected


def test_a_recovery_file_that_cannot_be_read_is_named_at_the_next_start(qtbot, session_files_in_tmp: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An autosave too large to read back (or damaged) is not passed over in silence: the window's banner names
    the file and why, and the file is left where it is."""
    from workbench.documents import autosave as autosave_module
    folder = session_files_in_tmp / "autosave"
    Autosaver(folder, pid=2_000_000_005).write(load_example("vector-add"))
    (large,) = folder.glob("autosave-*.json")
    monkeypatch.setattr(autosave_module, "MAX_FILE_BYTES", large.stat().st_size - 1)  # as a 70 MB file over 64 MiB
    damaged = folder / "autosave-2000000006.json"
    damaged.write_text('{"format": "perf-workbench-autosave", "sess')
    assert find_recoverable(folder) == []
    win = open_window(qtbot)
    qtbot.waitUntil(lambda: win.banner.isVisible(), timeout=session_io.RECOVERY_DELAY_MS + 5000)
    text = win.banner.text()
    assert "cannot be recovered" in text and "and 1 more recovery file like it" in text
    assert str(damaged) in text or str(large) in text
    assert large.exists() and damaged.exists()
