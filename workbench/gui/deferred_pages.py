"""Tab pages built when first needed, so that start-up builds only what the first paint shows.

The plot tabs hold the registered pages (gui/pages.py); at start one is on screen. Building the others (each a
pyqtgraph plot with its menus, tables, forms: some 40–80 ms apiece) before the first paint made the window wait
for pages nobody sees yet. `DeferredPages` puts an empty page in the tab widget for each and builds the real view

- when its tab becomes current (a click, Ctrl+N, a restored tab): at once, inside the change, so the empty page
  is never painted;
- when code asks for it (`DeferredPage`, a descriptor: `window.sweep` builds the sweep view if it is not built);
- right after the window's first paint, all that are left, in one turn of the event loop
  (`build_after_first_paint`): by the time a user reaches for a tab it is there, and switching costs what it
  did when every view was built before the window showed. (One turn rather than one view a turn: a test or a
  benchmark that shows the window and lets events run once finds every page built, not some built in the
  middle of what it counts.)

The built view takes its placeholder's place at the same index with the same text; the tab widget's
`currentChanged` is not emitted for the exchange. Only a page whose minimum size is within that of a page
built at start may be deferred: a tab widget asks for its largest page's minimum, and the window's first
layout follows it (the window builds the measurement tab, the largest, at start; tests/gui/test_start_pages.py
compares the first paint, the settled window and each tab pixel for pixel with a window whose pages were all
built before it showed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QTabWidget, QWidget

Page = TypeVar("Page", bound=QWidget)


class _Placeholder(QWidget):
    """Stands in a tab until its view is built; asks for no room (see the module's docstring)."""


class DeferredPages(QObject):
    """The deferred pages of one QTabWidget, by key."""

    def __init__(self, tabs: QTabWidget) -> None:
        super().__init__(tabs)
        self.tabs = tabs
        self._factories: dict[str, Callable[[], QWidget]] = {}
        self._placeholders: dict[str, _Placeholder] = {}
        self._built: dict[str, QWidget] = {}
        self._watched: QWidget | None = None
        tabs.currentChanged.connect(self._current_changed)

    def add(self, key: str, text: str, factory: Callable[[], QWidget]) -> None:
        """A tab titled `text` whose page `factory` builds when first needed."""
        placeholder = _Placeholder()
        placeholder.setObjectName(f"deferredPage_{key}")
        self._factories[key] = factory
        self._placeholders[key] = placeholder
        self.tabs.addTab(placeholder, text)

    def pending(self) -> list[str]:
        """Keys of the pages not built yet, in tab order."""
        return sorted(self._placeholders, key=lambda key: self.tabs.indexOf(self._placeholders[key]))

    def is_built(self, key: str) -> bool:
        return key in self._built

    def page(self, key: str) -> QWidget:
        """The view of `key`, built now if it is not."""
        built = self._built.get(key)
        if built is not None:
            return built
        placeholder = self._placeholders[key]
        view = self._factories[key]()
        self._built[key] = view
        del self._placeholders[key], self._factories[key]
        self._exchange(placeholder, view)
        return view

    def _exchange(self, placeholder: QWidget, view: QWidget) -> None:
        tabs = self.tabs
        index = tabs.indexOf(placeholder)
        current = tabs.currentIndex()
        text, tip, whats_this, icon = tabs.tabText(index), tabs.tabToolTip(index), tabs.tabWhatsThis(index), tabs.tabIcon(index)
        enabled, visible = tabs.isTabEnabled(index), tabs.isTabVisible(index)
        was_blocked = tabs.blockSignals(True)  # the current tab stays what it was: nobody is told of the exchange
        try:
            tabs.removeTab(index)
            tabs.insertTab(index, view, icon, text)
            tabs.setTabToolTip(index, tip)
            tabs.setTabWhatsThis(index, whats_this)
            tabs.setTabEnabled(index, enabled)
            tabs.setTabVisible(index, visible)
            tabs.setCurrentIndex(current)
        finally:
            tabs.blockSignals(was_blocked)
        placeholder.deleteLater()

    def _current_changed(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if isinstance(widget, _Placeholder):
            key = next(key for key, placeholder in self._placeholders.items() if placeholder is widget)
            self.page(key)

    # ------------------------------------------------------------------ after the first paint
    def build_after_first_paint(self, watched: QWidget) -> None:
        """Once `watched` (a widget the window's first paint paints) has painted, build the pending pages in the
        next turn of the event loop."""
        self._watched = watched
        watched.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self._watched and event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            self._watched = None
            QTimer.singleShot(0, self, self._build_after_paint)
        return False

    def _build_after_paint(self) -> None:
        if self.tabs.isVisible():  # a window closed at once (a script, a test) is left as it is
            self.build_all()

    def build_all(self) -> None:
        """Build every page not built yet."""
        for key in self.pending():
            self.page(key)


class DeferredPage(Generic[Page]):
    """A window attribute that is a deferred page: reading it builds the page if needed (DeferredPages.page).

    The owner keeps its DeferredPages in `deferred_pages`.
    """

    def __init__(self, key: str) -> None:
        self.key = key

    @overload
    def __get__(self, owner: None, kind: type) -> DeferredPage[Page]: ...

    @overload
    def __get__(self, owner: object, kind: type) -> Page: ...

    def __get__(self, owner: Any, kind: type) -> Any:
        if owner is None:
            return self
        return owner.deferred_pages.page(self.key)
