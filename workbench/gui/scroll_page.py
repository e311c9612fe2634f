"""A tab page that scrolls where the window leaves it less than its least size (a 720-line projector, larger text):
the plot tabs then ask only for a scroll area's room, and nothing on the page is squeezed or clipped."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget


def scrolled_content(page: QWidget, name: str) -> QWidget:
    """The widget to build `page`'s content in: inside a frameless scroll area (object name `name`) that fills
    `page` and follows its size while there is room."""
    content = QWidget()
    area = QScrollArea()
    area.setObjectName(name)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidgetResizable(True)
    area.setWidget(content)
    outer = QVBoxLayout(page)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(area)
    return content
