"""The operations list: a row turns red with the error in its tooltip, and a keystroke touches only its own row."""

from __future__ import annotations


def test_an_error_reddens_its_row_and_a_fix_restores_it(window) -> None:  # type: ignore[no-untyped-def]
    window.open_example("batched-gemm-sweep")
    rows = window.operations.list
    good = window.document.operations[1].declaration
    window.document.edit_declaration(1, "gemm(M=0, N=8, K=8)")
    item = rows.item(1)
    assert item.foreground().color().name() == "#b71c1c"
    assert "M must be a positive integer" in item.toolTip()
    window.document.edit_declaration(1, good)
    assert item.foreground().color().name() == "#202020" and "must be" not in item.toolTip()


def test_an_edit_of_one_operation_changes_only_its_row(window) -> None:  # type: ignore[no-untyped-def]
    window.open_example("batched-gemm-sweep")
    model = window.operations.list.model()
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom, *_: changed.append((top.row(), bottom.row())))
    first = window.document.operations[0].declaration
    window.document.edit_declaration(0, first.replace("M=", "M=3", 1))
    assert changed and all(top == bottom == 0 for top, bottom in changed), changed


def test_rows_removed_and_added_show_their_own_state(window) -> None:  # type: ignore[no-untyped-def]
    from workbench.session import OperationEntry

    window.open_example("batched-gemm-sweep")
    rows = window.operations.list
    last = len(window.document.operations) - 1
    bad = "gemm(M=0, N=8, K=8)"
    window.document.edit_declaration(last, bad)
    assert rows.item(last).foreground().color().name() == "#b71c1c"
    window.document.remove_operation(last)
    window.document.add_operation(OperationEntry.automatic("gemm(M=8, N=8, K=8, dtype=fp16)"))
    item = rows.item(last)
    assert item.foreground().color().name() == "#202020" and "must be" not in item.toolTip()
    assert "gemm(M=8, N=8, K=8, dtype=fp16)" in item.toolTip() and item.font().italic()
    window.document.add_operation(OperationEntry.automatic(bad))
    assert rows.item(last + 1).foreground().color().name() == "#b71c1c"
    window.document.undo_stack.undo()  # the bad one taken away again
    assert rows.count() == last + 1 and rows.item(last).foreground().color().name() == "#202020"
