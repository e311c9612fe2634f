"""The list of declared operations: select, add, duplicate, rename, remove, reorder."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QAccessible, QAction, QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QListWidget,
    QListWidgetItem,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.gui.document import Document
from workbench.gui.flow_layout import FlowLayout
from workbench.gui.plain_text import tooltip
from workbench.documents.session import OperationEntry


UNDRAWN_ROLES = frozenset({Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.StatusTipRole, Qt.ItemDataRole.WhatsThisRole})


_ROW_BRUSHES: dict[bool, QBrush] = {}


def _row_brush(error: bool) -> QBrush:
    """The text brush of a row: red for an operation whose declaration has an error."""
    brush = _ROW_BRUSHES.get(error)
    if brush is None:
        brush = _ROW_BRUSHES[error] = QBrush(QColor("#b71c1c" if error else "#202020"))
    return brush


class _RowsInView(QStyledItemDelegate):
    """Rows no wider than the list's viewport: a name longer than the dock is cut with "…" (its tooltip and the
    Analysis heading give it whole; the dock widens), instead of a horizontal scroll bar that came and went
    as a name following its declaration grew and shrank with each keystroke (at presentation size, every one)."""

    def __init__(self, view: QListWidget) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        return QSize(min(size.width(), max(self._view.viewport().width(), 1)), size.height())


class OperationList(QListWidget):
    """A list whose one changed row repaints that row alone.

    QListView answers any change of one item, even of its tooltip, by laying
    out every row again and repainting the whole viewport. A keystroke renames
    its operation's row (the name follows the declaration) and retitles its
    tooltip: here a change that leaves the row's height as it was repaints
    that row only, and a tooltip's change repaints
    nothing (nothing drawn changed). Anything else, an open editor, or an
    accessibility client listening goes through QListView's own handling.
    Rows fit the viewport's width (`_RowsInView`; laid out again when it is
    resized), so a rename never brings a horizontal scroll bar.
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
        self, top_left: QModelIndex | QPersistentModelIndex, bottom_right: QModelIndex | QPersistentModelIndex,
        roles: Sequence[int] = (),
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

    def _keeps_its_place(self, index: QModelIndex | QPersistentModelIndex) -> bool:
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
        self.list = OperationList()
        self.list.setObjectName("operationList")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.currentRowChanged.connect(self._row_chosen)
        self.list.itemChanged.connect(self._item_renamed)
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
        self._rows_shown: list[tuple[object, ...]] = []  # what _show_errors last gave each row
        # The rows' items and the names they were given, row by row (asking the list for each item and its text
        # on every keystroke cost more than the one row it renames)
        self._items: list[QListWidgetItem] = []
        self._names: list[str] = []
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
        operations = self.document.operations
        if changed is None or len(self._items) != len(operations):
            self.refresh()
            return
        rows = sorted(row for row in changed if 0 <= row < len(operations))
        self._filling = True
        for row in rows:
            if self._names[row] != operations[row].name:
                self._items[row].setText(operations[row].name)
                self._names[row] = operations[row].name
        self._filling = False
        self._show_errors(rows=rows)
        self._show_selection(self.document.current)

    def refresh(self, *_: object) -> None:
        """The list's rows follow the document's operations: names set in place (an edit renames one), rows
        added or taken away only when the count changes."""
        self._filling = True
        operations = self.document.operations
        while self.list.count() > len(operations):
            self.list.takeItem(self.list.count() - 1)
        del self._rows_shown[len(operations):]
        del self._items[len(operations):]
        del self._names[len(operations):]
        kept = len(self._items)  # rows made before: their look is checked below, new rows get theirs as made
        for row, entry in enumerate(operations):
            if row >= len(self._items):
                item = QListWidgetItem(entry.name)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                del self._rows_shown[row:]  # a new item has shown nothing yet: its look is set whatever it shows
                # Its look set before it joins the list: each setter on a listed item is a change the view
                # answers (thousands of them when a model's session opens).
                self._show_row(row, entry, item)
                self.list.addItem(item)
                self._items.append(item)
                self._names.append(entry.name)
            elif self._names[row] != entry.name:
                self._items[row].setText(entry.name)
                self._names[row] = entry.name
        self._filling = False
        self._show_errors(rows=range(kept))
        self._show_selection(self.document.current)

    def _show_errors(self, *_: object, rows: Sequence[int] | None = None) -> None:
        self._filling = True
        shown = self._rows_shown
        operations = self.document.operations
        for row in range(len(operations)) if rows is None else rows:
            if row < len(self._items):
                self._show_row(row, operations[row], self._items[row])
        self._filling = False

    def _show_row(self, row: int, entry: OperationEntry, item: QListWidgetItem) -> None:
        """The row's colour (red: an error), italics (an automatic name) and tooltip, set where they changed."""
        shown = self._rows_shown
        state = self.document.state(entry)
        # What the row shows depends on these alone: a keystroke in one operation leaves the others' rows
        # untouched (no Qt calls for them).
        key = (entry.name, entry.declaration, entry.name_automatic, str(state.error) if state.error else "")
        if row >= len(shown):
            shown.extend([()] * (row + 1 - len(shown)))
        elif shown[row] == key:
            return
        shown[row] = key
        # Only what changed is set: a keystroke in one operation's declaration sets nothing on the others' rows.
        # The two brushes are made once (a session of thousands sets one on each new row).
        brush = _row_brush(bool(state.error))
        if item.foreground().color() != brush.color():
            item.setForeground(brush)
        font = item.font()
        if font.italic() != entry.name_automatic:
            font.setItalic(entry.name_automatic)
            item.setFont(font)
        how = (
            "Named after its declaration; rename to give it your own name."
            if entry.name_automatic
            else "Your name; clear it (rename to nothing) to name it after its declaration again."
        )
        tip = f"{entry.name}\n{entry.declaration}\n{how}"
        tip = tooltip(f"{tip}\n{state.error}" if state.error else tip)
        if item.toolTip() != tip:
            item.setToolTip(tip)

    def _show_selection(self, index: int) -> None:
        if self.list.currentRow() != index:
            self._filling = True
            self.list.setCurrentRow(index)
            self._filling = False

    def _row_chosen(self, row: int) -> None:
        if not self._filling:
            self.document.select(row)

    def _item_renamed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        row = self.list.row(item)
        if 0 <= row < len(self._names):
            self._names[row] = item.text()  # typed into the row: what it shows now
        before = self.document.undo_stack.index()
        self.document.rename_operation(row, item.text())  # empty: the automatic name again
        if self.document.undo_stack.index() == before:  # nothing changed (or refused): show the name as it is
            self.refresh()

    def rename_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)
