"""The operations list: a row turns red with the error in its tooltip, and a keystroke touches only its own row."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect

from workbench.gui.operations_view import OperationList


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
    from workbench.documents.session import OperationEntry

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


class _Paints(QObject):
    """The rectangles painted on a widget."""

    def __init__(self) -> None:
        super().__init__()
        self.rects: list[QRect] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.rects.append(event.region().boundingRect())
        return False


def _list_with_rows(qtbot, rows: int = 12):  # type: ignore[no-untyped-def]
    view = OperationList()
    qtbot.addWidget(view)
    for row in range(rows):
        view.addItem(f"op {row}")
    view.resize(300, 120)
    view.show()
    qtbot.waitExposed(view)
    qtbot.wait(10)
    paints = _Paints()
    view.viewport().installEventFilter(paints)
    return view, paints


def test_a_renamed_row_repaints_alone_and_a_tooltip_repaints_nothing(qtbot) -> None:  # type: ignore[no-untyped-def]
    view, paints = _list_with_rows(qtbot)
    item = view.item(2)
    item.setText("GEMM 40961×4096×4096 fp16")
    qtbot.wait(10)
    assert paints.rects == [view.visualItemRect(item)]
    assert view.visualItemRect(item).height() < view.viewport().height() // 3
    paints.rects.clear()
    item.setToolTip("GEMM 40961×4096×4096 fp16\ngemm(M=40961, N=4096, K=4096, dtype=fp16)")
    qtbot.wait(10)
    assert paints.rects == []
    # what the row shows is the new name: drawn as a freshly laid-out list draws it
    fresh = OperationList()
    qtbot.addWidget(fresh)
    for row in range(view.count()):
        fresh.addItem(view.item(row).text())
    fresh.resize(view.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    qtbot.wait(10)
    assert fresh.viewport().grab().toImage() == view.viewport().grab().toImage()


def test_a_name_longer_than_the_list_is_cut_to_its_width_and_repaints_its_row_alone(qtbot) -> None:  # type: ignore[no-untyped-def]
    """No horizontal scroll bar comes and goes as a name grows past the list's width while typing: the row is
    cut to the viewport (with "…"), repaints alone, and fits again when the list is widened."""
    view, paints = _list_with_rows(qtbot)
    item = view.item(1)
    long_name = "an operation named at such length that its row is wider than the list " * 2
    item.setText(long_name)
    qtbot.wait(10)
    assert view.horizontalScrollBar().maximum() == 0 and not view.horizontalScrollBar().isVisible()
    assert view.visualItemRect(item).width() <= view.viewport().width()
    assert paints.rects == [view.visualItemRect(item)]  # the row alone
    assert item.text() == long_name  # whole in the model (and in the tooltip the view gives it)
    view.resize(900, 120)  # wider: rows are fitted again
    qtbot.waitUntil(lambda: view.visualItemRect(view.item(0)).width() >= view.viewport().width() - 1)
    assert view.horizontalScrollBar().maximum() == 0


def test_a_row_renamed_to_what_changes_nothing_shows_the_name_again(window) -> None:  # type: ignore[no-untyped-def]
    """Typed into the row: blanks on an automatically named operation change nothing (no undo step) and the row
    shows its name again; a name with spaces around it is taken without them, and the row shows it so."""
    rows = window.operations.list
    name = window.document.operations[0].name
    before = window.document.undo_stack.count()
    rows.item(0).setText("   ")  # as the row's editor commits it
    assert rows.item(0).text() == name and window.document.undo_stack.count() == before
    rows.item(0).setText("  my gemm  ")
    assert window.document.operations[0].name == "my gemm" and rows.item(0).text() == "my gemm"
    rows.item(0).setText("my gemm   ")  # its own name again: no step, and the row without the spaces
    assert rows.item(0).text() == "my gemm" and window.document.undo_stack.count() == before + 1
