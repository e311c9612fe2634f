"""Line-edit frames from the pixmap cache: the same pixels as Fusion draws, drawn once per size and state."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLineEdit, QProxyStyle, QStyle, QVBoxLayout, QWidget

from workbench.gui.cached_frames import CachedFrameStyle, cached_frame_style
from workbench.gui.editor import INVALID_STYLE, mark_invalid

TEXT = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


@pytest.fixture
def pair(qtbot):  # type: ignore[no-untyped-def]
    """Two line edits with the same text, one drawn by the application's style and one through the cache."""
    holder = QWidget()
    qtbot.addWidget(holder)
    layout = QVBoxLayout(holder)
    plain, cached = QLineEdit(TEXT), QLineEdit(TEXT)
    cached.setStyle(cached_frame_style())
    layout.addWidget(plain)
    layout.addWidget(cached)
    holder.resize(600, 100)
    holder.show()
    qtbot.waitExposed(holder)
    return holder, plain, cached


def _looks(edit: QLineEdit, qtbot) -> object:  # type: ignore[no-untyped-def]
    qtbot.wait(1)
    return edit.grab().toImage()


@pytest.mark.parametrize("state", ["focused", "unfocused", "disabled", "read-only", "invalid"])
def test_a_cached_frame_has_the_pixels_the_style_draws(pair, qtbot, state) -> None:  # type: ignore[no-untyped-def]
    holder, plain, cached = pair
    for edit in (plain, cached):
        edit.setEnabled(state != "disabled")
        edit.setReadOnly(state == "read-only")
        if state == "invalid":
            mark_invalid(edit, "M must be a positive integer")
    if state == "focused":  # one at a time: each is compared while it has the focus
        plain.setFocus()
        expected = _looks(plain, qtbot)
        cached.setFocus()
        assert cached.hasFocus()
        assert _looks(cached, qtbot) == expected
    else:
        holder.setFocus()
        assert _looks(cached, qtbot) == _looks(plain, qtbot)
    if state == "invalid":
        assert cached.styleSheet() == INVALID_STYLE


def test_the_frame_is_drawn_once_per_size_and_state(pair, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Repaints of the same line edit blit the cached panel; a new size or the focus draws it afresh."""
    _holder, _plain, cached = pair
    drawn: list[tuple[int, int, bool]] = []
    original = QProxyStyle.drawPrimitive

    def counting(self, element, option, painter, widget=None):  # type: ignore[no-untyped-def]
        if element == QStyle.PrimitiveElement.PE_PanelLineEdit:
            drawn.append((option.rect.width(), option.rect.height(), bool(option.state & QStyle.StateFlag.State_HasFocus)))
        return original(self, element, option, painter, widget)

    monkeypatch.setattr(QProxyStyle, "drawPrimitive", counting)
    cached.setFixedWidth(433)  # a size no other test drew: not in the shared cache yet
    cached.setFocus()
    qtbot.wait(1)
    for _ in range(5):
        cached.repaint()
    assert drawn == [(433, cached.height(), True)]
    cached.setFixedWidth(434)
    cached.repaint()
    assert len(drawn) == 2 and drawn[-1][0] == 434


def test_the_lines_typed_into_use_the_cached_frames(window) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(window.editor.line.style(), CachedFrameStyle)
    fields = [field.widget for field in window.editor.fields.values() if isinstance(field.widget, QLineEdit)]
    assert fields and all(isinstance(widget.style(), CachedFrameStyle) for widget in fields)
