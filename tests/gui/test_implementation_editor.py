"""The operation editor's implementation selector: compulsory / naive / tiled with tile sizes, as declaration text."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def type_into(qtbot, widget, text: str) -> None:  # type: ignore[no-untyped-def]
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClicks(widget, text)


def choose(window, name: str) -> None:  # type: ignore[no-untyped-def]
    combo = window.editor.fields["impl"].widget
    assert isinstance(combo, QComboBox)
    index = combo.findData(name)
    assert index >= 0, f"{name} is not offered"
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def tile_fields_shown(window) -> list[str]:  # type: ignore[no-untyped-def]
    return [name for name in ("tile_m", "tile_n", "tile_k", "ctas_per_sm") if window.editor.fields[name].widget.isVisible()]


def test_a_gemm_offers_its_implementations_a_vector_add_its_own_and_axpy_none(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    combo = window.editor.fields["impl"].widget
    assert [combo.itemData(i) for i in range(combo.count())] == ["compulsory", "naive", "tiled"]
    assert combo.currentData() == "compulsory"  # the declaration names none: the default
    assert tile_fields_shown(window) == []  # tile sizes belong to impl=tiled
    assert "threads_per_block" not in window.editor.fields  # a launch is typed in the line, not offered in the form
    type_into(qtbot, window.editor.line, "add(n=2**24, dtype=fp32)")
    combo = window.editor.fields["impl"].widget
    assert [combo.itemData(i) for i in range(combo.count())] == ["compulsory", "library", "vectorized"]
    assert "tile_m" not in window.editor.fields
    type_into(qtbot, window.editor.line, "axpy(n=2**24, dtype=fp32)")
    assert "impl" not in window.editor.fields


def test_choosing_tiled_writes_impl_and_shows_the_tile_sizes(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    choose(window, "tiled")
    assert window.editor.line.text() == GEMM[:-1] + ", impl=tiled)"
    assert tile_fields_shown(window) == ["tile_m", "tile_n", "tile_k", "ctas_per_sm"]
    assert window.editor.fields["tile_m"].widget.placeholderText() == "128"
    type_into(qtbot, window.editor.fields["tile_m"].widget, "64")
    assert window.editor.line.text() == GEMM[:-1] + ", impl=tiled, tile_m=64)"
    assert window.document.state(window.document.current_entry).analysis.declaration.params["tile_m"] == 64


def test_leaving_tiled_removes_the_tile_sizes_in_one_undoable_edit(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    type_into(qtbot, window.editor.line, "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=64, tile_n=256)")
    assert window.editor.fields["impl"].widget.currentData() == "tiled"
    assert window.editor.fields["tile_n"].widget.text() == "256"
    choose(window, "naive")
    assert window.editor.line.text() == GEMM[:-1] + ", impl=naive)"
    assert tile_fields_shown(window) == []
    window.document.undo_stack.undo()  # one step back restores the tiled line whole
    assert window.editor.line.text() == "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=64, tile_n=256)"
    choose(window, "compulsory")  # the default is written by leaving impl out
    assert window.editor.line.text() == GEMM
    assert window.editor.fields["impl"].widget.currentData() == "compulsory"


def test_a_bad_tile_size_is_marked_at_its_field(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    choose(window, "tiled")
    field = window.editor.fields["tile_k"].widget
    type_into(qtbot, field, "0")
    assert field.property("invalid") is True
    assert "tile_k" in field.toolTip()
    assert window.editor.message.isVisible()
    # the last valid figures stay, marked stale
    assert window.panel.stale.isVisible()
    window.document.undo_stack.undo()
    assert field.property("invalid") is not True
