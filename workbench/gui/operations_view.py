"""The list of declared operations: select, add, duplicate, rename, remove, reorder.

The rows are a model over the document's operations (`OperationsModel`): the list asks only the rows it shows
for their name, colour, font and tooltip, so a session of thousands of operations opens without making an item
per row, and a keystroke in one operation tells the list that one row changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QAccessible, QAction, QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.gui.document import Document
from workbench.gui.flow_layout import FlowLayout
from workbench.gui.plain_text import tooltip

Index = QModelIndex | QPersistentModelIndex

UNDRAWN_ROLES = frozenset({Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.StatusTipRole, Qt.ItemDataRole.WhatsThisRole})
ERROR_COLOUR = "#b71c1c"  # the text of a row whose declaration has an error
TEXT_COLOUR = "#202020"

_AUTOMATIC = "Named after its declaration; rename to give it your own name."
_OWN = "Your name; clear it (rename to nothing) to name it after its declaration again."


class OperationsModel(QAbstractListModel):
    """One row per operation of the document, read from it when the list asks: the name (edited in place:
    a rename), red text for an error, italics for an automatic name, a tooltip with the declaration."""

    def __init__(self, document: Document) -> None:
        super().__init__()
        self.document = document
        self._count = len(document.operations)
        self._brushes = {error: QBrush(QColor(ERROR_COLOUR if error else TEXT_COLOUR)) for error in (False, True)}
        italic = QFont()
        italic.setItalic(True)
        self._italic = italic

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else self._count

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = super().flags(index)
        return flags | Qt.ItemFlag.ItemIsEditable if index.isValid() else flags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = index.row()
        operations = self.document.operations
        if not index.isValid() or row >= len(operations):
            return None
        entry = operations[row]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return entry.name
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._brushes[bool(self.document.state(entry).error)]
        if role == Qt.ItemDataRole.FontRole:
            return self._italic if entry.name_automatic else None
        if role == Qt.ItemDataRole.ToolTipRole:
            error = self.document.state(entry).error
            tip = f"{entry.name}\n{entry.declaration}\n{_AUTOMATIC if entry.name_automatic else _OWN}"
            return tooltip(f"{tip}\n{error}" if error else tip)
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        """A name typed into the row: the operation renamed (empty: named after its declaration again). The row
        then shows the operation's name, which is the typed one without blanks around it, or, for a rename that
        changed nothing, the name it had."""
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or index.row() >= len(self.document.operations):
            return False
        self.document.rename_operation(index.row(), str(value))
        self.dataChanged.emit(index, index)
        return True

    def rows_changed(self, rows: Sequence[int]) -> None:
        """What `rows` show may have changed (one analysis or name): each row told on its own, so the list
        repaints those rows alone."""
        for row in rows:
            if 0 <= row < self._count:
                at = self.index(row)
                self.dataChanged.emit(at, at)

    def all_changed(self) -> None:
        """Operations added, removed, moved or replaced: the rows are read again (a new count laid out anew)."""
        count = len(self.document.operations)
        if count != self._count:
            self.beginResetModel()
            self._count = count
            self.endResetModel()
        elif count:
            self.dataChanged.emit(self.index(0), self.index(count - 1))


class _RowsInView(QStyledItemDelegate):
    """Rows no wider than the list's viewport: a name longer than the dock is cut with "…" (its tooltip and the
    Analysis heading give it whole; the dock widens), instead of a horizontal scroll bar that came and went
    as a name following its declaration grew and shrank with each keystroke (at presentation size, every one)."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        return QSize(min(size.width(), max(self._view.viewport().width(), 1)), size.height())


class OperationList(QListView):
    """A list whose one changed row repaints that row alone.

    QListView answers any change of one row, even of its tooltip, by laying out every row again and repainting
    the whole viewport. A keystroke renames its operation's row (the name follows the declaration) and
    retitles its tooltip: here a change that leaves the row's height as it was repaints that row only, and a
    tooltip's change repaints nothing (nothing drawn changed). Anything else, an open editor, or an
    accessibility client listening goes through QListView's own handling. Rows fit the viewport's width
    (`_RowsInView`; laid out again when it is resized), so a rename never brings a horizontal scroll bar.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setItemDelegate(_RowsInView(self))
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)  # rows fitted to the new width when the dock is resized
        # Every row is one line in the list's font (italic or not): the first row's size is every row's, so laying
        # out a list of thousands asks the delegate once, not once per row.
        self.setUniformItemSizes(True)

    def dataChanged(  # noqa: N802 (Qt's name)
        self, top_left: Index, bottom_right: Index, roles: Sequence[int] = (),
    ) -> None:
        if (
            top_left == bottom_right
            and top_left.isValid()
            and self.state() != QAbstractItemView.State.EditingState
            and not QAccessible.isActive()
        ):
            if roles and all(Qt.ItemDataRole(role) in UNDRAWN_ROLES for role in roles):
                return
            if self._keeps_its_place(top_left):
                self.update(top_left)
                return
        super().dataChanged(top_left, bottom_right, roles)

    def _keeps_its_place(self, index: Index) -> bool:
        """The row's new size needs no layout: its height is the one laid out (its width never does: rows fit the
        viewport, `_RowsInView`)."""
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        laid_out = self.visualRect(index)
        return laid_out.isValid() and self.itemDelegateForIndex(index).sizeHint(option, index).height() == laid_out.height()


class OperationsView(QWidget):
    """One row per operation; a red row has an error in its declaration (its figures are stale)."""

    def __init__(self, document: Document, actions: dict[str, QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.model = OperationsModel(document)
        self.list = OperationList()
        self.list.setObjectName("operationList")
        self.list.setModel(self.model)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.selectionModel().currentRowChanged.connect(self._row_chosen)
        buttons = FlowLayout()  # rows that wrap at the dock's width: the dock stays narrow at presentation text sizes
        for key in ("add", "duplicate", "remove", "move_up", "move_down"):
            button = QToolButton()
            button.setDefaultAction(actions[key])
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self._filling = False
        # The rows a change touched (a keystroke reanalyses one operation); None: any row may have changed.
        self._changed_rows: set[int] | None = None
        document.operations_changed.connect(self._refresh_after_change)
        document.selection_changed.connect(self._show_selection)
        document.analysis_changed.connect(self._row_reanalysed)  # a keystroke renames and reanalyses: one pass
        self.refresh()

    def _refresh_after_change(self, *_: object) -> None:
        self._changed_rows = None
        self.document.after_changes(self._refresh_changed)  # once per change, after all its signals

    def _row_reanalysed(self, row: int) -> None:
        if row < 0:
            self._changed_rows = None
        elif self._changed_rows is not None:
            self._changed_rows.add(row)
        self.document.after_changes(self._refresh_changed)

    def _refresh_changed(self) -> None:
        """After a change: only the rows a reanalysis touched when that is all it did (a keystroke in a session of
        thousands of operations sets one row), else every row."""
        changed, self._changed_rows = self._changed_rows, set()
        if changed is None or self.model.rowCount() != len(self.document.operations):
            self.refresh()
            return
        self.model.rows_changed(sorted(changed))
        self._show_selection(self.document.current)

    def refresh(self, *_: object) -> None:
        """Every row read again from the document's operations, and the current one selected."""
        self._filling = True
        self.model.all_changed()
        self._filling = False
        self._show_selection(self.document.current)

    def row_look(self, row: int) -> tuple[str, str, bool, str]:
        """What row `row` shows: its text, its text's colour (#rrggbb), whether in italics, and its tooltip."""
        at = self.model.index(row)
        brush = self.model.data(at, Qt.ItemDataRole.ForegroundRole)
        font = self.model.data(at, Qt.ItemDataRole.FontRole)
        return (
            self.model.data(at), brush.color().name(), font is not None and font.italic(),
            self.model.data(at, Qt.ItemDataRole.ToolTipRole),
        )

    def _show_selection(self, index: int) -> None:
        current = self.list.currentIndex()
        wanted = self.model.index(index) if 0 <= index < self.model.rowCount() else QModelIndex()
        if current.row() != wanted.row() or current.isValid() != wanted.isValid():
            self._filling = True
            self.list.setCurrentIndex(wanted)
            self._filling = False

    def _row_chosen(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._filling and current.isValid():
            self.document.select(current.row())

    def rename_current(self) -> None:
        current = self.list.currentIndex()
        if current.isValid():
            self.list.edit(current)
