"""Views on tabs redraw only when someone can see them, and once per change however many signals it emits."""

from __future__ import annotations

from typing import Any


class RefreshWhenShown:
    """Mixin for a QWidget with `refresh()`: a change while it is hidden only marks it stale; showing it redraws.

    `refresh()` must clear `_dirty`. With `redraw_off_screen_windows`, a view in
    a window that is not on screen at all (exports, scripts) still redraws at once.
    When the view has a `document` (gui/document.py), the redraw waits until the
    document's change has emitted all its signals: one edit, one redraw.
    """

    redraw_off_screen_windows = False
    _dirty = True

    def mark_dirty(self, *_: object) -> None:
        self._dirty = True
        document = getattr(self, "document", None)
        if document is not None and hasattr(document, "after_changes"):
            document.after_changes(self._refresh_if_due)
        else:
            self._refresh_if_due()

    def _refresh_if_due(self) -> None:
        widget: Any = self
        if not self._dirty:  # redrawn meanwhile (shown, or refreshed directly)
            return
        if widget.isVisible() or (self.redraw_off_screen_windows and not widget.window().isVisible()):
            widget.refresh()

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)  # type: ignore[misc]
        if self._dirty:
            self.refresh()  # type: ignore[attr-defined]
