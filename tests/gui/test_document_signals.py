"""The Qt side of the document: every event of its DocumentState is a signal of the same name, and the undo
stack's changes are QUndoStack's signals (the Edit menu, the title's modified flag and autosave connect to them)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal

from workbench.gui.document import Document
from workbench.state import commands


def test_each_state_event_has_its_signal() -> None:
    document = Document()
    for name in document.core.events():
        assert isinstance(getattr(Document, name), Signal), name
    heard: list[Any] = []
    document.selection_changed.connect(heard.append)
    document.step_changed.connect(lambda: heard.append("step"))
    document.add_operation()
    document.core.set_step_text("a = add(n=4, dtype=fp32)")
    assert heard == [1, "step"] and document.current == 1


def test_the_undo_stack_signals_as_a_qundostack_does() -> None:
    clock = iter(range(1000))
    document = Document()
    document.core.clock = lambda: float(next(clock))  # a second between keystrokes: within the pause
    assert commands.MERGE_PAUSE_S >= 1
    stack = document.undo_stack
    seen: list[tuple[str, Any]] = []
    for name in ("indexChanged", "cleanChanged", "canUndoChanged", "canRedoChanged", "undoTextChanged"):
        getattr(stack, name).connect(lambda value, name=name: seen.append((name, value)))
    document.edit_declaration(0, "add(n=4, dtype=fp32)")
    assert ("cleanChanged", False) in seen and ("canUndoChanged", True) in seen and ("indexChanged", 1) in seen
    seen.clear()
    document.edit_declaration(0, "add(n=8, dtype=fp32)")  # merged: the same step, renamed
    assert stack.count() == 1 and stack.index() == 1 and ("indexChanged", 1) in seen
    assert stack.undoText() == "Edit GEMM 4096³ fp16" and stack.canUndo() and not stack.canRedo()
    seen.clear()
    stack.undo()
    assert ("cleanChanged", True) in seen and ("canRedoChanged", True) in seen and stack.isClean()
    stack.redo()
    stack.setClean()
    assert stack.isClean()
    stack.resetClean()
    assert not stack.isClean()
    stack.clear()
    assert stack.count() == 0 and stack.isClean()
