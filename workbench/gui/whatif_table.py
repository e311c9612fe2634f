"""The Timeline's what-if table: a row per operation, its time and source, a speed-up to try, what the step would
take were it twice as fast or free, its bound.

A model over the step's timeline (`workbench.steps.step_timeline`: every figure is its) and a view that asks
only for the rows on screen, so a traced step of thousands of operations opens at once. The speed-up column is
edited in place with a spin box (`SpeedupDelegate`): each step of the spin box is a what-if at once, as typing
a value is when it is taken.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QHeaderView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from workbench.gui.plain_text import tooltip
from workbench.steps import TRACE, Timeline
from workbench.model.units import format_time

COLUMNS = ("Operation", "Stream", "Time", "Source", "Speed-up ×", "If 2× faster", "If free", "Bound", "Time ÷ bound")
SPEEDUP_COLUMN = 4
TIMED_COLUMNS = (2, 5, 6)  # what a what-if changes
SPEEDUP_RANGE = (0.1, 1000.0)
HEADER_ROWS_MEASURED = 200  # rows the header measures to size its columns: a few screens' worth, not thousands

Index = QModelIndex | QPersistentModelIndex


def _count(number: int, one: str) -> str:
    return f"{number:,} {one if number == 1 else one + 's'}"


def _source_text(timeline: Timeline, name: str) -> str:
    source = timeline.times[name]
    if source.source == TRACE:
        match = source.trace
        if match is not None and match.parts:
            return f"trace, {_count(match.iterations, 'iteration')} of {len(match.parts)} kernels"
        return "trace" + (f", {len(match.intervals)} intervals" if match is not None and len(match.intervals) > 1 else "")
    if source.source == "measured":
        return "measured"
    return "bound, " + source.detail.split(" (")[-1].rstrip(")")


class WhatIfModel(QAbstractTableModel):
    """A row per placed operation of the timeline; column 4 (the speed-up) is editable and calls `on_speedup`."""

    def __init__(self, on_speedup: Callable[[str, float], None]) -> None:
        super().__init__()
        self.on_speedup = on_speedup
        self.timeline: Timeline | None = None
        self.speedups: dict[str, float] = {}
        self._rows: list[list[str]] = []
        self._names: list[str] = []
        self._critical: set[str] = set()
        self._bold = QFont()
        self._bold.setBold(True)

    # ---------------------------------------------------------------- filling
    def set_timeline(self, timeline: Timeline | None, speedups: dict[str, float]) -> None:
        """Show `timeline`'s operations (None: no rows) with the what-ifs `speedups`."""
        self.beginResetModel()
        self.timeline, self.speedups = timeline, speedups
        self._names = [item.name for item in timeline.placed] if timeline is not None else []
        self._critical = set(timeline.critical_path) if timeline is not None else set()
        self._rows = [self._cells(timeline, row) for row in range(len(self._names))] if timeline is not None else []
        self.endResetModel()

    def update_times(self, timeline: Timeline) -> None:
        """The same operations timed again after a what-if (the timeline's speed-ups): the timed columns change,
        nothing else."""
        self.timeline, self.speedups = timeline, dict(timeline.speedups)
        for row, item in enumerate(timeline.placed):
            what = timeline.what_if[item.name]
            cells = self._rows[row]
            cells[2], cells[5], cells[6] = format_time(item.duration), format_time(what.if_2x_faster), format_time(what.if_free)
        if self._rows:
            for column in TIMED_COLUMNS:
                self.dataChanged.emit(self.index(0, column), self.index(len(self._rows) - 1, column), [Qt.ItemDataRole.DisplayRole])

    def _cells(self, timeline: Timeline, row: int) -> list[str]:
        item = timeline.placed[row]
        source = timeline.times[item.name]
        what = timeline.what_if[item.name]
        bound = format_time(source.bound_s) if source.bound_s else "—"
        ratio = f"{source.seconds / source.bound_s:.2f}×" if source.bound_s and source.source != "bound" else ""
        return [item.name, item.stream, format_time(item.duration), _source_text(timeline, item.name), "",
                format_time(what.if_2x_faster), format_time(what.if_free), bound, ratio]

    def name(self, row: int) -> str:
        return self._names[row]

    def speedup(self, row: int) -> float:
        return self.speedups.get(self._names[row], 1.0)

    # ---------------------------------------------------------------- Qt's model interface
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == SPEEDUP_COLUMN:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.timeline is None:
            return None
        row, column = index.row(), index.column()
        name = self._names[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{self.speedup(row):.2f}" if column == SPEEDUP_COLUMN else self._rows[row][column]
        if role == Qt.ItemDataRole.EditRole and column == SPEEDUP_COLUMN:
            return self.speedup(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 0 and name in self._critical:
                return "on the critical path"
            if column == 3:
                return tooltip(self.timeline.times[name].detail)
            if column == SPEEDUP_COLUMN:
                return tooltip(f"what if {name} ran this many times faster (1 = as timed); click to change")
        if role == Qt.ItemDataRole.FontRole and column == 0 and name in self._critical:
            return self._bold
        if role == Qt.ItemDataRole.TextAlignmentRole and column == SPEEDUP_COLUMN:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or index.column() != SPEEDUP_COLUMN or role != Qt.ItemDataRole.EditRole:
            return False
        try:
            factor = float(value)
        except (TypeError, ValueError):
            return False
        low, high = SPEEDUP_RANGE
        if not low <= factor <= high:  # the spin box keeps to its range; anything else is refused, not clamped
            return False
        if factor == self.speedup(index.row()):
            return True
        self.on_speedup(self._names[index.row()], factor)  # recomputes the step and calls update_times
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole])
        return True


class SpeedupDelegate(QStyledItemDelegate):
    """A spin box in the speed-up column (0.1–1000×, steps of 0.5); each change is taken at once."""

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:  # noqa: N802
        spin = QDoubleSpinBox(parent)
        model = index.model()
        name = model.name(index.row()) if isinstance(model, WhatIfModel) else ""
        spin.setObjectName(f"speedup_{name}")
        spin.setRange(*SPEEDUP_RANGE)
        spin.setDecimals(2)
        spin.setSingleStep(0.5)
        spin.setToolTip(tooltip(f"what if {name} ran this many times faster (1 = as timed)"))
        spin.setFrame(False)
        spin.valueChanged.connect(lambda _value, editor=spin: self.commitData.emit(editor))
        return spin

    def setEditorData(self, editor: QWidget, index: Index) -> None:  # noqa: N802
        value = index.data(Qt.ItemDataRole.EditRole)
        if isinstance(editor, QDoubleSpinBox) and isinstance(value, float) and editor.value() != value:
            editor.blockSignals(True)
            editor.setValue(value)
            editor.blockSignals(False)

    def setModelData(self, editor: QWidget, model: Any, index: Index) -> None:  # noqa: N802
        if isinstance(editor, QDoubleSpinBox):
            model.setData(index, editor.value(), Qt.ItemDataRole.EditRole)


class WhatIfTable(QTableView):
    """The view: rows drawn as they scroll into sight, the speed-up edited by a click, a key or a double-click."""

    def __init__(self, on_speedup: Callable[[str, float], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whatIfTable")
        self.whatif = WhatIfModel(on_speedup)
        self.setModel(self.whatif)
        self.delegate = SpeedupDelegate(self)
        self.setItemDelegateForColumn(SPEEDUP_COLUMN, self.delegate)
        self.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # rows never measured one by one
        header = self.horizontalHeader()
        header.setResizeContentsPrecision(HEADER_ROWS_MEASURED)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)

    def set_timeline(self, timeline: Timeline | None, speedups: dict[str, float]) -> None:
        self.whatif.set_timeline(timeline, speedups)
        self.resizeColumnsToContents()  # from the first HEADER_ROWS_MEASURED rows and the titles
        widest = max(120, self.viewport().width() * 2 // 5)  # a traced model's module paths leave room for the figures
        if self.columnWidth(0) > widest:
            self.setColumnWidth(0, widest)

    def rowCount(self) -> int:  # noqa: N802 (as QTableWidget names it)
        return self.whatif.rowCount()

    def text(self, row: int, column: int) -> str:
        """The text shown in a cell."""
        return str(self.whatif.index(row, column).data() or "")


__all__ = ["COLUMNS", "SpeedupDelegate", "WhatIfModel", "WhatIfTable"]
