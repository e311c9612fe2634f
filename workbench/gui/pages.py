"""The window's tab pages, each registered once: what the window builds its tabs, their View menu entries, their
part in presentation mode and the plot export from (gui/window_pages.py).

A page is a `PageSpec`: its key (the tab the settings remember, `page(key)`), its title, the factory that builds
its widget from the window (its document, and for the profile page the importer's hooks), whether it is built at
start or deferred until first needed (gui/deferred_pages.py; only a page no larger than those built at start may
be), its shortcut, how it takes a new text size, and the pyqtgraph plots it holds, each exportable as PNG and SVG
(File ▸ Export a plot, and Ctrl+E / Ctrl+Shift+E for the plot on screen). A new plot page is its view and one
`register(PageSpec(…))`: the factory imports the view's module, so nothing imports it before the page is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsView, QWidget

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.gui.document import Document
    from workbench.gui.profile_import import ProfileImporter


class MainWindow(Protocol):
    """What the pages' factories take from the main window (gui/window.py, which builds its tabs from this
    registry): named here, not imported, so that the registry does not import the window that imports it."""

    document: Document
    profile_importer: ProfileImporter

    def import_profile_dialog(self) -> None: ...


@dataclass(frozen=True)
class PlotSpec:
    """One pyqtgraph plot on a page: `view` finds its graphics view in the built page."""

    key: str  # unique among every page's plots: "roofline", "trace"
    title: str  # menu text, with its mnemonic: "Measured &trace"
    view: Callable[[Any], QGraphicsView]

    @property
    def name(self) -> str:
        """The title as prose, and the exported file's suggested name ("measured-trace")."""
        return self.title.replace("&", "")


@dataclass(frozen=True)
class PageSpec:
    """One tab page of the main window."""

    key: str
    title: str  # the tab's text and its View menu entry, with the mnemonic
    build: Callable[[MainWindow], QWidget]
    deferred: bool = True  # built when first shown or asked for, or after the first paint; False: at start
    shortcut: str | None = None  # View ▸ the page's entry; None: the entry has no shortcut
    set_font: Callable[[Any, QFont], None] | None = None  # a new text size (Ctrl++, presentation), beyond Qt's own
    short_screen: Callable[[Any, bool], str] | None = None  # presentation on a short screen: spare what it can;
    # gives the tab's tooltip (what it took off the page)
    plots: tuple[PlotSpec, ...] = ()

    @property
    def name(self) -> str:
        return self.title.replace("&", "")


PAGES: list[PageSpec] = []


def register(spec: PageSpec) -> PageSpec:
    """Add a page after those registered so far (the tabs' order); its key and its plots' keys must be new."""
    keys = {page.key for page in PAGES}
    plots = {plot.key for page in PAGES for plot in page.plots}
    if spec.key in keys:
        raise ValueError(f"a page {spec.key!r} is registered already")
    for plot in spec.plots:
        if plot.key in plots:
            raise ValueError(f"a plot {plot.key!r} is registered already")
    PAGES.append(spec)
    return spec


def page_keys() -> list[str]:
    return [page.key for page in PAGES]


def plot_spec(key: str) -> tuple[PageSpec, PlotSpec]:
    """The plot registered as `key`, and the page holding it."""
    for page in PAGES:
        for plot in page.plots:
            if plot.key == key:
                return page, plot
    raise KeyError(key)


# ---------------------------------------------------------------------- the workbench's own pages
def _roofline(window: "MainWindow") -> QWidget:
    from workbench.gui.roofline_view import RooflineView

    return RooflineView(window.document)


def _roofline_short_screen(view: Any, short: bool) -> str:
    """On a projector's 720 lines the roofline's three-line caption goes to its tab's tooltip: the plot keeps the room."""
    view.caption.setVisible(not short)
    return str(view.caption.text()) if short else ""


def _sweep(window: "MainWindow") -> QWidget:
    from workbench.gui.sweep_view import SweepView

    return SweepView(window.document)


def _measurement(window: "MainWindow") -> QWidget:  # runs, their table and samples (gui/measure_tab.py)
    from workbench.gui.measure_tab import MeasurementTab

    return MeasurementTab(window.document)


def _profile(window: "MainWindow") -> QWidget:
    from workbench.gui.profile_view import ProfileComparisonView

    importer = window.profile_importer
    return ProfileComparisonView(window.document, window.import_profile_dialog, importer.edit_matches, importer.remove)


def _compare(window: "MainWindow") -> QWidget:  # operations × devices, overlaid rooflines (gui/compare_view.py)
    from workbench.gui.compare_view import CompareView

    return CompareView(window.document)


def _timeline(window: "MainWindow") -> QWidget:  # a step of several operations in time (gui/timeline_view.py)
    from workbench.gui.timeline_view import TimelineView

    return TimelineView(window.document)


def _plot_font(page: Any, font: QFont) -> None:
    page.set_plot_font(font)


def _base_font(page: Any, font: QFont) -> None:
    page.set_base_font(font)


register(PageSpec("roofline", "&Roofline", _roofline, deferred=False, shortcut="Ctrl+1", set_font=_plot_font,
                  short_screen=_roofline_short_screen, plots=(PlotSpec("roofline", "&Roofline", lambda page: page.widget),)))
register(PageSpec("sweep", "&Bound vs size", _sweep, shortcut="Ctrl+2", set_font=_plot_font,
                  plots=(PlotSpec("sweep", "&Bound vs size", lambda page: page.widget),)))
# built at start: the largest page, it sizes the tabs (gui/deferred_pages.py)
register(PageSpec("measurement", "&Measurement", _measurement, deferred=False, shortcut="Ctrl+3", set_font=_base_font,
                  plots=(PlotSpec("samples", "Measurement &samples", lambda page: page.histogram.widget),)))
register(PageSpec("profile", "&Profile", _profile, shortcut="Ctrl+4", set_font=_base_font,
                  plots=(PlotSpec("levels", "Profile &levels", lambda page: page.levels_plot),)))
register(PageSpec("compare", "&Compare devices", _compare, shortcut="Ctrl+5", set_font=_plot_font,
                  plots=(PlotSpec("compare", "&Compare devices", lambda page: page.widget),)))
register(PageSpec("timeline", "Step &timeline", _timeline, shortcut="Ctrl+6",
                  plots=(PlotSpec("timeline", "Step &timeline", lambda page: page.plot),
                         PlotSpec("trace", "Measured t&race", lambda page: page.trace_plot))))
