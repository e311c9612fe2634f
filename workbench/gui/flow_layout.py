"""A layout that lays its widgets out in rows, left to right, starting a new row where the next one does not fit.

The operations dock's buttons use it: at the normal text size they sit in two rows, at presentation size in
as many as the dock's width needs, so a row of buttons never sets the dock's least width (nor is clipped).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget


class FlowLayout(QLayout):
    """Widgets in rows that wrap at the layout's width (height for width); its least width is its widest item's."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 2) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    # --- the item list QLayout asks for
    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    # --- sizes
    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def sizeHint(self) -> QSize:  # noqa: N802
        """All the items in one row."""
        shown = [item.sizeHint() for item in self._items if not item.isEmpty()]
        margins = self.contentsMargins()
        width = sum(size.width() for size in shown) + self.spacing() * max(len(shown) - 1, 0)
        height = max((size.height() for size in shown), default=0)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802
        """The widest item: narrower than that, an item would be cut."""
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def _arrange(self, rect: QRect, move: bool) -> int:
        """Place the items row by row inside `rect` (or only measure); the height the rows take."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        x, y, row_height = area.x(), area.y(), 0
        gap = self.spacing()
        for item in self._items:
            if item.isEmpty():
                continue
            size = item.sizeHint()
            if x > area.x() and x + size.width() > area.right() + 1:  # no room left in this row: the next one
                x, y, row_height = area.x(), y + row_height + gap, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), size))
            x += size.width() + gap
            row_height = max(row_height, size.height())
        return y + row_height - rect.y() + margins.bottom()
