"""Line-edit frames from the pixmap cache: the same pixels as Fusion draws, drawn once per size and state."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QLineEdit, QProxyStyle, QStyle, QVBoxLayout, QWidget

from workbench.gui.cached_frames import CachedFrameStyle, cached_frame_style
from workbench.gui.editor import INVALID_STYLE, mark_invalid

TEXT = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


@pytest.fixture
def pair(qtbot):  # type: ignore[no-untyped-def]
    """Two line edits with the same text, one drawn by the application's style and one through the cache.

    The text cursor does not blink meanwhile: a focused edit grabbed in the cursor's off phase and another in its
    on phase differ by the cursor alone, and on a loaded machine the two grabs can fall half a second apart."""
    hints = QApplication.styleHints()
    flash = hints.cursorFlashTime()
    hints.setCursorFlashTime(0)
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
    yield holder, plain, cached
    hints.setCursorFlashTime(flash)


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


@pytest.fixture
def bars(qtbot):  # type: ignore[no-untyped-def]
    """Two vertical scroll bars of the same size and range, one drawn by the application's style, one through the cache."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QHBoxLayout, QScrollBar

    holder = QWidget()
    qtbot.addWidget(holder)
    layout = QHBoxLayout(holder)
    plain, cached = QScrollBar(Qt.Orientation.Vertical), QScrollBar(Qt.Orientation.Vertical)
    cached.setStyle(cached_frame_style())
    for bar in (plain, cached):
        bar.setRange(0, 241)
        bar.setPageStep(455)
        bar.setFixedSize(15, 455)
        layout.addWidget(bar)
    holder.show()
    qtbot.waitExposed(holder)
    return holder, plain, cached


@pytest.mark.parametrize("change", ["as set", "taller document", "scrolled", "disabled", "horizontal"])
def test_a_cached_scroll_bar_has_the_pixels_the_style_draws(bars, qtbot, change) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    _holder, plain, cached = bars
    for bar in (plain, cached):
        if change == "taller document":
            bar.setRange(0, 255)
        elif change == "scrolled":
            bar.setValue(120)
        elif change == "disabled":
            bar.setEnabled(False)
        elif change == "horizontal":
            bar.setOrientation(Qt.Orientation.Horizontal)
            bar.setFixedSize(300, 15)
    assert _looks(cached, qtbot) == _looks(plain, qtbot)


def test_a_scroll_bar_is_drawn_once_per_look(bars, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The bar of a document whose height goes back and forth (a figure wrapping onto another line and back) is drawn
    once for each of its two looks; every other repaint copies one of them."""
    _holder, _plain, cached = bars
    drawn: list[tuple[int, int]] = []
    original = QProxyStyle.drawComplexControl

    def counting(self, control, option, painter, widget=None):  # type: ignore[no-untyped-def]
        if control == QStyle.ComplexControl.CC_ScrollBar:
            drawn.append((option.maximum, option.pageStep))
        return original(self, control, option, painter, widget)

    monkeypatch.setattr(QProxyStyle, "drawComplexControl", counting)
    cached.setFixedHeight(457)  # a size no other test drew: not in the shared cache yet
    qtbot.wait(1)
    for maximum in (241, 255) * 4:
        cached.setRange(0, maximum)
        cached.repaint()
    assert sorted(set(drawn)) == [(241, 455), (255, 455)] and len(drawn) == 2, drawn


def test_the_derivations_scroll_bar_uses_the_cached_style(window) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(window.panel.derivation.verticalScrollBar().style(), CachedFrameStyle)
