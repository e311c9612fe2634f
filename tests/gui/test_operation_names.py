"""Names follow declarations in the window: list, Analysis heading, plot label, until the user renames."""

from __future__ import annotations

from workbench.documents.report import render_markdown


def test_the_automatic_name_follows_an_edit_and_stops_after_a_rename(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    assert doc.operations[0].name == "GEMM 4096³ fp16"
    window.editor.line.setFocus()
    window.editor.line.selectAll()
    qtbot.keyClicks(window.editor.line, "add(n=2**24, dtype=fp32)")
    shown = "Vector add, 2^24 fp32"
    assert doc.operations[0].name == shown
    assert window.operations.row_look(0)[0] == shown
    assert window.panel.title.text() == shown
    window.roofline.refresh()
    labels = window.roofline.point_labels.items[: window.roofline.point_labels.used]
    assert shown in [label.textItem.toPlainText() for label in labels]
    assert f"{shown}" in render_markdown(doc.session)

    doc.rename_operation(0, "my vector add")
    doc.edit_declaration(0, "add(n=2**26, dtype=fp32)")
    assert doc.operations[0].name == "my vector add"
    assert window.operations.row_look(0)[0] == "my vector add"

    doc.undo_stack.undo()  # the edit
    doc.undo_stack.undo()  # the rename: automatic again, and it follows
    assert (doc.operations[0].name, doc.operations[0].name_automatic) == (shown, True)
    doc.edit_declaration(0, "add(n=2**20, dtype=fp32)")
    assert window.operations.row_look(0)[0] == "Vector add, 2^20 fp32"


def test_renaming_to_nothing_names_it_after_its_declaration_again(window) -> None:  # type: ignore[no-untyped-def]
    doc = window.document
    doc.rename_operation(0, "mine")
    model = window.operations.model
    model.setData(model.index(0), "")  # what the list's inline editor does when the user clears the name
    assert doc.operations[0].name == "GEMM 4096³ fp16" and doc.operations[0].name_automatic
    assert window.operations.row_look(0)[2]
    doc.undo_stack.undo()
    assert doc.operations[0].name == "mine" and not doc.operations[0].name_automatic


def test_new_operations_are_named_from_their_declaration(window) -> None:  # type: ignore[no-untyped-def]
    window.actions["add"].trigger()
    assert window.document.operations[1].name == "GEMM 4096³ fp16"
    assert "new operation" not in window.operations.row_look(1)[0]
