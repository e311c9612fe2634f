"""The notes panel: the lab's instructions and checklist shown, ticked, edited, undone, saved and reported."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, Qt

from workbench.documents.notes import checklist
from workbench.documents.report import render_html, render_markdown
from workbench.documents.session import load


def marker_point(note, box: int) -> QPoint:  # type: ignore[no-untyped-def]
    """A viewport point on the rendered marker of box `box`, found by asking the layout (as a click would)."""
    number, _ = note.rendered_boxes()[box]
    document = note.rendered.document()
    rect = document.documentLayout().blockBoundingRect(document.findBlockByNumber(number))
    bar = note.rendered.verticalScrollBar()
    bar.setValue(int(rect.top()) - 2)  # scroll the box into view, as a user would
    for dy in range(2, 12):
        y = rect.top() + dy - bar.value()
        for x in range(0, int(rect.right())):
            if note.box_at(QPointF(x, y)) == box:
                return QPoint(x, int(y))
    raise AssertionError(f"no marker found for box {box}")


def test_the_vector_add_checklist_is_shown_ticked_and_undone(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.open_example("vector-add")
    assert window.notes_dock.isVisible()
    panel = window.notes_panel
    assert "2^24 FP32 elements" in panel.description.rendered.toPlainText()
    note = panel.notes
    assert len(note.rendered_boxes()) == 6 and note.progress.text() == "0 of 6 ticked"
    qtbot.mouseClick(note.rendered.viewport(), Qt.MouseButton.LeftButton, pos=marker_point(note, 1))
    entry = window.document.operations[0]
    assert [item.checked for item in checklist(entry.notes)] == [False, True, False, False, False, False]
    assert note.rendered_boxes()[1] == (note.rendered_boxes()[1][0], True)
    assert note.progress.text() == "1 of 6 ticked"
    assert window.windowTitle().startswith("*") or window.isWindowModified()
    window.actions["undo"].trigger()
    assert not any(item.checked for item in checklist(entry.notes))
    window.actions["redo"].trigger()
    assert checklist(entry.notes)[1].checked
    # a click beside the text (not on a marker) ticks nothing
    qtbot.mouseClick(note.rendered.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(note.rendered.viewport().width() - 5, 5))
    assert sum(item.checked for item in checklist(entry.notes)) == 1


def test_notes_round_trip_through_save_and_report(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_example("vector-add")
    doc = window.document
    note = window.notes_panel.notes
    note.edit_button.click()
    assert note.stack.currentWidget() is note.source
    note.source.moveCursor(note.source.textCursor().MoveOperation.End)
    qtbot.keyClicks(note.source, " Achieved 11.8 GB/s.")
    assert doc.operations[0].notes.endswith("(write it here). Achieved 11.8 GB/s.")
    note.toggle(5)  # the box of the note just written
    window.notes_panel.description.edit_button.click()
    window.notes_panel.description.source.setPlainText("Lab 1, **group 4**")
    assert doc.session.description == "Lab 1, **group 4**"

    path = tmp_path / "handed-in.json"
    assert window.save_to(str(path))
    back = load(path)
    assert back.operations[0].notes == doc.operations[0].notes and back.description == "Lab 1, **group 4**"
    assert checklist(back.operations[0].notes)[5].checked

    markdown = render_markdown(back)
    assert "- [x] A note comparing the achieved bandwidth" in markdown and "Achieved 11.8 GB/s." in markdown
    assert "Lab 1, **group 4**" in markdown
    html = render_html(back)
    assert "☑ A note comparing" in html and "☐ The median time." in html

    for _ in range(3):  # description, the tick, the typing: each undoes on its own
        window.actions["undo"].trigger()
    assert not any(item.checked for item in checklist(doc.operations[0].notes))
    assert doc.operations[0].notes.endswith("(write it here).")
    assert note.source.toPlainText() == doc.operations[0].notes


def test_notes_follow_the_selection_and_an_empty_note_says_how_to_start(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    panel = window.notes_panel
    window.notes_dock.raise_()  # its tab chosen (it shares the right-hand area with the Analysis panel)
    qtbot.waitUntil(lambda: not panel.visibleRegion().isEmpty())
    assert "No notes for this operation" in panel.notes.rendered.toPlainText()
    doc.add_operation()
    doc.set_notes(1, "- [ ] second")
    doc.select(0)
    assert panel.notes.progress.text() == ""
    doc.select(1)
    assert panel.notes.progress.text() == "0 of 1 ticked"
    assert panel.notes.title.text() == f"Notes — {doc.operations[1].name}"


def test_behind_the_analysis_tab_the_notes_wait_and_catch_up_when_chosen(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Typing renames the operation on every keystroke; the covered notes panel is not retitled (nor laid out)
    each time, and shows the name as it is when its tab is chosen."""
    doc = window.document
    panel = window.notes_panel
    window.panel_dock.raise_()
    qtbot.waitUntil(lambda: panel.visibleRegion().isEmpty())
    title = panel.notes.title.text()
    doc.edit_declaration(doc.current, "add(n=2**20, dtype=fp32)")
    assert doc.current_entry.name != "" and panel.notes.title.text() == title  # covered: waits
    window.notes_dock.raise_()
    qtbot.waitUntil(lambda: panel.notes.title.text() == f"Notes — {doc.current_entry.name}")
    doc.edit_declaration(doc.current, "add(n=2**21, dtype=fp32)")  # in view: follows at once
    assert panel.notes.title.text() == f"Notes — {doc.current_entry.name}"
