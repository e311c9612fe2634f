"""The operations list: a row turns red with the error in its tooltip, and a keystroke touches only its own row."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

from workbench.gui.operations_view import ERROR_COLOUR, TEXT_COLOUR, OperationList


def test_an_error_reddens_its_row_and_a_fix_restores_it(window) -> None:  # type: ignore[no-untyped-def]
    window.open_example("batched-gemm-sweep")
    rows = window.operations
    good = window.document.operations[1].declaration
    window.document.edit_declaration(1, "gemm(M=0, N=8, K=8)")
    _, colour, _, tip = rows.row_look(1)
    assert colour == ERROR_COLOUR == "#b71c1c"
    assert "M must be a positive integer" in tip
    window.document.edit_declaration(1, good)
    _, colour, _, tip = rows.row_look(1)
    assert colour == TEXT_COLOUR and "must be" not in tip


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
    rows = window.operations
    last = len(window.document.operations) - 1
    bad = "gemm(M=0, N=8, K=8)"
    window.document.edit_declaration(last, bad)
    assert rows.row_look(last)[1] == ERROR_COLOUR
    window.document.remove_operation(last)
    window.document.add_operation(OperationEntry.automatic("gemm(M=8, N=8, K=8, dtype=fp16)"))
    _, colour, italic, tip = rows.row_look(last)
    assert colour == TEXT_COLOUR and "must be" not in tip
    assert "gemm(M=8, N=8, K=8, dtype=fp16)" in tip and italic
    window.document.add_operation(OperationEntry.automatic(bad))
    assert rows.row_look(last + 1)[1] == ERROR_COLOUR
    assert rows.list.currentIndex().row() == last + 1  # the added operation is the selected row
    window.document.undo_stack.undo()  # the bad one taken away again
    assert rows.model.rowCount() == last + 1 and rows.row_look(last)[1] == TEXT_COLOUR


class _Paints(QObject):
    """The rectangles painted on a widget."""

    def __init__(self) -> None:
        super().__init__()
        self.rects: list[QRect] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.rects.append(event.region().boundingRect())
        return False


def _list_of(qtbot, names: list[str]) -> OperationList:  # type: ignore[no-untyped-def]
    view = OperationList()
    qtbot.addWidget(view)
    model = QStandardItemModel(view)
    for name in names:
        model.appendRow(QStandardItem(name))
    view.setModel(model)
    return view


def _list_with_rows(qtbot, rows: int = 12):  # type: ignore[no-untyped-def]
    view = _list_of(qtbot, [f"op {row}" for row in range(rows)])
    view.resize(300, 120)
    view.show()
    qtbot.waitExposed(view)
    qtbot.wait(10)
    paints = _Paints()
    view.viewport().installEventFilter(paints)
    return view, paints


def test_a_renamed_row_repaints_alone_and_a_tooltip_repaints_nothing(qtbot) -> None:  # type: ignore[no-untyped-def]
    view, paints = _list_with_rows(qtbot)
    item = view.model().item(2)
    item.setText("GEMM 40961×4096×4096 fp16")
    qtbot.wait(10)
    assert paints.rects == [view.visualRect(item.index())]
    assert view.visualRect(item.index()).height() < view.viewport().height() // 3
    paints.rects.clear()
    item.setToolTip("GEMM 40961×4096×4096 fp16\ngemm(M=40961, N=4096, K=4096, dtype=fp16)")
    qtbot.wait(10)
    assert paints.rects == []
    # what the row shows is the new name: drawn as a freshly laid-out list draws it
    model = view.model()
    fresh = _list_of(qtbot, [model.item(row).text() for row in range(model.rowCount())])
    fresh.resize(view.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    qtbot.wait(10)
    assert fresh.viewport().grab().toImage() == view.viewport().grab().toImage()


def test_a_name_longer_than_the_list_is_cut_to_its_width_and_repaints_its_row_alone(qtbot) -> None:  # type: ignore[no-untyped-def]
    """No horizontal scroll bar comes and goes as a name grows past the list's width while typing: the row is
    cut to the viewport (with "…"), repaints alone, and fits again when the list is widened."""
    view, paints = _list_with_rows(qtbot)
    item = view.model().item(1)
    long_name = "an operation named at such length that its row is wider than the list " * 2
    item.setText(long_name)
    qtbot.wait(10)
    assert view.horizontalScrollBar().maximum() == 0 and not view.horizontalScrollBar().isVisible()
    assert view.visualRect(item.index()).width() <= view.viewport().width()
    assert paints.rects == [view.visualRect(item.index())]  # the row alone
    assert item.text() == long_name  # whole in the model (and in the tooltip the view gives it)
    view.resize(900, 120)  # wider: rows are fitted again
    qtbot.waitUntil(lambda: view.visualRect(view.model().index(0, 0)).width() >= view.viewport().width() - 1)
    assert view.horizontalScrollBar().maximum() == 0


def test_a_row_renamed_to_what_changes_nothing_shows_the_name_again(window) -> None:  # type: ignore[no-untyped-def]
    """Typed into the row: blanks on an automatically named operation change nothing (no undo step) and the row
    shows its name again; a name with spaces around it is taken without them, and the row shows it so."""
    rows = window.operations
    name = window.document.operations[0].name
    before = window.document.undo_stack.count()

    def commit(text: str) -> None:  # as the row's editor commits it
        assert rows.model.setData(rows.model.index(0), text, Qt.ItemDataRole.EditRole)

    commit("   ")
    assert rows.row_look(0)[0] == name and window.document.undo_stack.count() == before
    commit("  my gemm  ")
    assert window.document.operations[0].name == "my gemm" and rows.row_look(0)[0] == "my gemm"
    commit("my gemm   ")  # its own name again: no step, and the row without the spaces
    assert rows.row_look(0)[0] == "my gemm" and window.document.undo_stack.count() == before + 1


def test_choosing_a_row_selects_its_operation_and_a_selection_moves_the_row(window) -> None:  # type: ignore[no-untyped-def]
    window.open_example("batched-gemm-sweep")
    rows = window.operations
    rows.list.setCurrentIndex(rows.model.index(2))  # as a click on the third row does
    assert window.document.current == 2
    window.document.select(0)
    assert rows.list.currentIndex().row() == 0
    window.document.remove_operation(0)  # the rows shift under the selection: the list follows the document
    assert rows.model.rowCount() == len(window.document.operations)
    assert rows.list.currentIndex().row() == window.document.current


def test_a_long_session_s_list_reads_only_the_rows_it_shows(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """The rows are read from the document when drawn: a session of hundreds of operations shown in a list a
    few rows high asks the model for a few rows, not for every one."""
    from workbench.documents.session import OperationEntry

    rows = window.operations
    for n in range(1, 400):
        window.document.add_operation(OperationEntry.automatic(f"add(n={n}, dtype=fp32)"))
    asked: set[int] = set()
    model_data = rows.model.data

    def counting(index, role=Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
        asked.add(index.row())
        return model_data(index, role)

    rows.model.data = counting  # type: ignore[method-assign]
    rows.refresh()
    rows.list.resize(300, 200)
    window.show()
    qtbot.waitExposed(rows.list)
    rows.list.viewport().repaint()
    assert rows.model.rowCount() == 400 and asked
    # the rows the viewport has room for (one more, partly shown), and the first and the current one besides
    shown = rows.list.viewport().height() // max(rows.list.sizeHintForRow(0), 1) + 1
    assert len(asked) <= shown + 2 < 400, (len(asked), shown)
