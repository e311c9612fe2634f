"""The main window's tab pages and plot export, from the page registry (gui/pages.py): the `WindowPages` part of
`MainWindow` (gui/window.py).

Each registered page becomes a tab (built at start, or deferred: gui/deferred_pages.py), a View menu entry, and
takes part in text-size changes and short-screen presentation; each registered plot an entry of File ▸ Export a
plot. Ctrl+E and Ctrl+Shift+E export the plot on screen: the first plot shown on the current page.
"""

from __future__ import annotations

import re
from PySide6.QtCore import QEvent
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QFileDialog, QGraphicsView, QMenu, QWidget

from workbench.errors import WorkbenchError
from workbench.gui import pages as registry
from workbench.gui.deferred_pages import DeferredPages
from workbench.gui.export import export_png, export_svg
from workbench.gui.pages import PageSpec, PlotSpec

EXPORT_FILTERS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)"}


def file_stem(name: str) -> str:
    """A plot's name as a file name's stem: "Measured trace" → "measured-trace"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "plot"


class WindowPages:
    """The pages part of `MainWindow`: the tabs from `pages.PAGES` (in `self.page_specs`, fixed when the window is
    built), `page(key)`, the View menu's page entries and File ▸ Export a plot."""

    _page_font: QFont | None = None  # the text size last set, for a deferred page built after it (set_font_points)
    _page_short = False  # a short-screen presentation, for a deferred page built while it lasts

    # ------------------------------------------------------------------ building
    def _take_pages(self) -> None:
        """The pages registered now are this window's (before its actions: each page has a View menu entry)."""
        self.page_specs: tuple[PageSpec, ...] = tuple(registry.PAGES)

    def _make_tabs(self) -> None:
        """Every registered page in its tab: those built at start now, the others when first needed."""
        self._built_at_start: dict[str, QWidget] = {}
        self.deferred_pages = DeferredPages(self.tabs)
        for spec in self.page_specs:
            if spec.deferred:
                self.deferred_pages.add(spec.key, spec.title, lambda spec=spec: self._build_page(spec))
            else:
                page = self._build_page(spec)
                self._built_at_start[spec.key] = page
                self.tabs.addTab(page, spec.title)
        self.deferred_pages.build_after_first_paint(self.tabs.tabBar())

    def _build_page(self, spec: PageSpec) -> QWidget:
        """The page built, given the text size and short-screen state set before it was (a deferred page)."""
        page = spec.build(self)
        if self._page_font is not None and spec.set_font is not None:
            spec.set_font(page, self._page_font)
        if self._page_short and spec.short_screen is not None:
            self._show_short_screen(spec, page, True)
        return page

    def page(self, key: str) -> QWidget:
        """The page registered as `key`, built now if it is deferred and not built yet."""
        built = self._built_at_start.get(key)
        return built if built is not None else self.deferred_pages.page(key)

    def built_pages(self) -> list[tuple[PageSpec, QWidget]]:
        """The pages built so far, each with its spec, in tab order."""
        found = []
        for spec in self.page_specs:
            if spec.key in self._built_at_start or self.deferred_pages.is_built(spec.key):
                found.append((spec, self.page(spec.key)))
        return found

    def page_index(self, key: str) -> int:
        return [spec.key for spec in self.page_specs].index(key)

    def current_page_key(self) -> str:
        return self.page_specs[self.tabs.currentIndex()].key

    def _make_page_actions(self) -> None:
        """View ▸ one entry per page, with its shortcut, opening its tab (`tab_KEY`)."""
        for spec in self.page_specs:
            self._action(f"tab_{spec.key}", spec.title, lambda _=False, key=spec.key: self.tabs.setCurrentIndex(self.page_index(key)),
                         spec.shortcut)

    def _page_menu_keys(self) -> list[str]:
        return [f"tab_{spec.key}" for spec in self.page_specs]

    # ------------------------------------------------------------------ text size, presentation
    def set_page_fonts(self, font: QFont) -> None:
        """A new text size to every built page that takes one; a deferred page gets it when it is built."""
        self._page_font = QFont(font)
        for spec, page in self.built_pages():
            if spec.set_font is not None:
                spec.set_font(page, font)

    def set_pages_short_screen(self, short: bool) -> None:
        """Presentation on a short screen (or not): each page that can spares what it can."""
        self._page_short = short
        for spec, page in self.built_pages():
            if spec.short_screen is not None:
                self._show_short_screen(spec, page, short)

    def _show_short_screen(self, spec: PageSpec, page: QWidget, short: bool) -> None:
        assert spec.short_screen is not None
        tip = spec.short_screen(page, short)
        index = self.tabs.indexOf(page)
        if index < 0:  # a deferred page being built: its placeholder holds the tab until it is
            index = self.page_index(spec.key)
        self.tabs.setTabToolTip(index, tip)

    # ------------------------------------------------------------------ plots
    def plot_specs(self) -> list[tuple[PageSpec, PlotSpec]]:
        return [(spec, plot) for spec in self.page_specs for plot in spec.plots]

    def plot_view(self, key: str) -> QGraphicsView:
        """The graphics view of the plot registered as `key` (its page built if it was not)."""
        for spec, plot in self.plot_specs():
            if plot.key == key:
                return plot.view(self.page(spec.key))
        raise KeyError(key)

    def plot_on_screen(self) -> PlotSpec | None:
        """The plot the user sees: the first shown of the current page's plots (None: the page shows none)."""
        spec = self.page_specs[self.tabs.currentIndex()]
        page = self.tabs.currentWidget()
        return next((plot for plot in spec.plots if plot.view(page).isVisibleTo(page)), None)

    def _make_export_menu(self) -> QMenu:
        """File ▸ Export a plot: one entry per registered plot; it opens the plot's page and asks for a file."""
        menu = QMenu("Export a p&lot", self)
        menu.setObjectName("exportPlotMenu")
        for _, plot in self.plot_specs():
            self._action(f"export_plot_{plot.key}", f"{plot.title}…", lambda _=False, key=plot.key: self.export_plot_dialog(plot=key),
                         None, f"Open the {plot.name} plot and write it as a PNG image or an SVG drawing")
            menu.addAction(self.actions[f"export_plot_{plot.key}"])
        return menu

    def export_plot_dialog(self, kind: str | None = None, plot: str | None = None) -> None:
        """Ask for a file and export a plot to it: `plot` (its page brought to the front first), or the one on screen;
        as `kind`, or as the format of the file type chosen."""
        key = plot if plot is not None else self._plot_key_on_screen()
        if key is None:
            return
        self._bring_to_front(key)
        name = file_stem(registry.plot_spec(key)[1].name)
        kinds = [kind] if kind is not None else list(EXPORT_FILTERS)
        filters = ";;".join(EXPORT_FILTERS[k] for k in kinds)
        path, chosen = QFileDialog.getSaveFileName(self, "Export plot", f"{name}.{kinds[0]}", filters)
        if not path:
            return
        if kind is None:
            suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
            kind = suffix if suffix in EXPORT_FILTERS else next((k for k, f in EXPORT_FILTERS.items() if f == chosen), "png")
        self.export_plot(path, kind, key)

    def _plot_key_on_screen(self) -> str | None:
        shown = self.plot_on_screen()
        if shown is None:
            self.status.showMessage(f"The {self.page_specs[self.tabs.currentIndex()].name} page shows no plot to export", 5000)
            return None
        return shown.key

    def _bring_to_front(self, key: str) -> QGraphicsView:
        """The plot's page made the current tab and laid out, so the plot is exported as the user then sees it."""
        spec, _ = registry.plot_spec(key)
        page = self.page(spec.key)
        if self.tabs.currentWidget() is not page:
            self.tabs.setCurrentWidget(page)
            for _ in range(3):  # the stack, the page, then its plot take their sizes
                QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        return self.plot_view(key)

    def export_plot(self, path: str, kind: str, plot: str | None = None) -> bool:
        """Write `plot` (a registered plot's key; None: the plot on screen) as `kind` ("png" or "svg") to `path`.
        A plot its page does not show (the trace's before one is imported) is refused, said in the status bar."""
        key = plot if plot is not None else self._plot_key_on_screen()
        if key is None:
            return False
        view = self._bring_to_front(key)
        page = self.tabs.currentWidget()
        title = registry.plot_spec(key)[1].name
        if not view.isVisibleTo(page):
            self.status.showMessage(f"The {title} plot is not shown on its page: there is nothing to export", 6000)
            return False
        try:
            if kind == "svg":
                export_svg(view, path, title=f"{title} — Performance Workbench")
            else:
                export_png(view, path)
        except WorkbenchError as exc:
            self.show_banner(str(exc))
            return False
        self.status.showMessage(f"Wrote {path}", 5000)
        return True
