"""The where-the-time-goes table of the Timeline page: the step's operations grouped by module or by kind.

The figures are `workbench.documents.breakdown.where_time_goes`'s (the CLI prints the same); this is a Qt model over
them and a view with a choice of grouping, sortable by any column (numbers sort as numbers), one model for
any number of groups (no widget per row).
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from workbench.documents.breakdown import COLUMNS, KIND, MODULE, Breakdown, Group
from workbench.gui.plain_text import plain
from workbench.model.units import format_bytes, format_flop, format_time

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex


class BreakdownModel(QAbstractTableModel):
    """One row per group; the display text formatted, the sort role the number behind it."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.groups: tuple[Group, ...] = ()

    def set_groups(self, groups: tuple[Group, ...]) -> None:
        self.beginResetModel()
        self.groups = groups
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else len(self.groups)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.groups):
            return None
        group = self.groups[index.row()]
        column = index.column()
        values = (group.name, group.count, group.flop, group.bytes, group.bound_s, group.time_s, group.share,
                  group.measured, group.limiter)
        if role == SORT_ROLE:
            value = values[column]
            return -1.0 if value is None else value
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                group.name, f"{group.count:,}", format_flop(group.flop), format_bytes(group.bytes),
                format_time(group.bound_s) if group.bound_s is not None else "—", format_time(group.time_s),
                f"{group.share * 100:.1f} %", f"{group.measured:,} of {group.count:,}", group.limiter,
            )[column]
        if role == Qt.ItemDataRole.TextAlignmentRole and 0 < column < 8:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == 7:
            return "operations timed by a matched trace or a measured run (the others by their bound)"
        return None


class BreakdownView(QWidget):
    """A grouping choice above the sortable table; `on_grouping` hears the grouping the user chooses (the owner's
    view state keeps it and gives it back with each breakdown)."""

    def __init__(self, on_grouping: Callable[[str], None] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.breakdown: Breakdown | None = None
        self.on_grouping = on_grouping
        self.by = QComboBox()
        self.by.setObjectName("breakdownBy")
        self.by.addItem("by kind", KIND)
        self.by.addItem("by module", MODULE)
        self.by.currentIndexChanged.connect(self._grouping_chosen)
        self.note = plain(QLabel("Share: of the operations' summed time."))
        self.note.setToolTip("Overlapping streams make the step shorter than the operations' summed time.")
        self.note.setWordWrap(True)  # never wider than the page: at presentation size on a projector it wraps
        self.model = BreakdownModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setObjectName("breakdownTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(5, Qt.SortOrder.DescendingOrder)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        bar = QHBoxLayout()  # the tab says "Where the time goes"
        bar.addWidget(self.by)
        bar.addWidget(self.note, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)

    def set_breakdown(self, breakdown: Breakdown | None, by: str | None = None) -> None:
        """Show `breakdown` grouped `by` (KIND or MODULE; None: as chosen now)."""
        self.breakdown = breakdown
        index = self.by.findData(by) if by is not None else -1
        if index >= 0 and index != self.by.currentIndex():
            self.by.blockSignals(True)
            self.by.setCurrentIndex(index)
            self.by.blockSignals(False)
        self._show()

    def _grouping_chosen(self, *_: object) -> None:
        if self.on_grouping is not None:
            self.on_grouping(self.by.currentData())
        self._show()

    def _show(self, *_: object) -> None:
        groups = self.breakdown.groups(self.by.currentData()) if self.breakdown is not None else ()
        self.model.set_groups(groups)
        if groups:
            self.table.resizeColumnsToContents()


__all__ = ["BreakdownModel", "BreakdownView"]
