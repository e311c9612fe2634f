"""The window's pages come from one registry (gui/pages.py): a page registered there is a tab, a View menu entry,
and each of its plots an entry of File ▸ Export a plot, exportable as PNG and SVG; every plot the workbench draws
is registered, and Ctrl+E exports the one on screen."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QFileDialog, QMenu, QVBoxLayout, QWidget

from workbench.documents.examples import load_example
from workbench.gui import pages
from workbench.gui.pages import PageSpec, PlotSpec

DATA = Path(__file__).resolve().parent.parent / "data"
LEVELS = DATA / "ncu_raw_levels_h100.csv"  # a kernel with L2 and L1 counters (tests/gui/test_profile_levels.py)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png_and_svg(png: Path, svg: Path) -> None:
    assert png.stat().st_size > 0 and png.read_bytes()[:8] == PNG_SIGNATURE
    assert svg.stat().st_size > 0
    root = ET.parse(svg).getroot()
    assert root.tag.split("}")[-1] == "svg"
    assert any(element.tag.endswith(("path", "polyline", "text")) for element in root.iter())


class DummyPlotPage(QWidget):
    """A page of one pyqtgraph plot, built from the document as a real page is."""

    def __init__(self, document) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.document = document
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("dummyPlot")
        self.plot.setBackground("w")
        self.plot.plot([1, 2, 3, 4], [len(document.operations), 3, 1, 4], pen=pg.mkPen("#1565c0", width=2))
        QVBoxLayout(self).addWidget(self.plot)


def menu_texts(menu: QMenu) -> list[str]:
    return [action.text().replace("&", "") for action in menu.actions()]


def file_menu(window) -> QMenu:  # type: ignore[no-untyped-def]
    return window.menuBar().actions()[0].menu()


def export_menu(window) -> QMenu:  # type: ignore[no-untyped-def]
    return next(action.menu() for action in file_menu(window).actions() if action.menu() is not None
                and action.menu().objectName() == "exportPlotMenu")


@pytest.fixture
def dummy_registered(monkeypatch: pytest.MonkeyPatch) -> PageSpec:
    """A dummy plot page registered after the workbench's own, for one test (the registry is put back after)."""
    monkeypatch.setattr(pages, "PAGES", list(pages.PAGES))
    return pages.register(PageSpec("dummy", "&Dummy plot", lambda window: DummyPlotPage(window.document),
                                   plots=(PlotSpec("dummy", "&Dummy plot", lambda page: page.plot),)))


def test_a_registered_plot_page_is_a_tab_a_view_entry_and_an_exportable_plot(qtbot, tmp_path: Path, dummy_registered, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.app import build_window
    from workbench.model.devices.nvml import NO_DRIVER, Detection

    window = build_window(detect=lambda: Detection(NO_DRIVER, "no NVIDIA driver found (test)"))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        last = window.tabs.count() - 1
        assert window.tabs.tabText(last) == "&Dummy plot"
        assert window.deferred_pages.pending()[-1:] == ["dummy"] or window.deferred_pages.is_built("dummy")
        view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
        assert "Dummy plot" in menu_texts(view_menu)
        assert "Dummy plot…" in menu_texts(export_menu(window))
        window.actions["tab_dummy"].trigger()
        page = window.tabs.currentWidget()
        assert isinstance(page, DummyPlotPage) and window.page("dummy") is page
        assert window.plot_on_screen() is dummy_registered.plots[0]
        png, svg = tmp_path / "dummy.png", tmp_path / "dummy.svg"
        assert window.export_plot(str(png), "png")  # Ctrl+E's: the plot on screen
        assert window.export_plot(str(svg), "svg", "dummy")  # the export menu's, by the plot's key
        assert_png_and_svg(png, svg)
        # File ▸ Export a plot ▸ Dummy plot…, from another tab: the page comes to the front, the file's type decides
        for name, chosen in (("menu.svg", "SVG drawing (*.svg)"), ("menu.png", "PNG image (*.png)")):
            window.tabs.setCurrentIndex(0)
            monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, path=tmp_path / name, f=chosen: (str(path), f))
            window.actions["export_plot_dummy"].trigger()
            assert window.tabs.currentWidget() is page and (tmp_path / name).stat().st_size > 0
        assert_png_and_svg(tmp_path / "menu.png", tmp_path / "menu.svg")
    finally:
        window.close()
        window.wait_for_workers()


def test_a_page_or_plot_key_is_registered_once(dummy_registered) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="page 'dummy'"):
        pages.register(PageSpec("dummy", "Again", lambda window: QWidget()))
    with pytest.raises(ValueError, match="plot 'roofline'"):
        pages.register(PageSpec("other", "Other", lambda window: QWidget(), plots=(PlotSpec("roofline", "R", lambda p: p),)))


def test_every_plot_the_window_draws_is_registered(window) -> None:  # type: ignore[no-untyped-def]
    """Every pyqtgraph plot widget on the window's pages is a registered plot's (none is left out of the export)."""
    window.deferred_pages.build_all()
    registered = {id(window.plot_view(plot.key)) for _, plot in window.plot_specs()}
    drawn = [widget for widget in window.tabs.findChildren(pg.PlotWidget)]
    assert drawn and all(id(widget) in registered for widget in drawn), [w.objectName() for w in drawn]
    assert set(menu_texts(export_menu(window))) == {f"{plot.name}…" for _, plot in window.plot_specs()}


def import_profile(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The start's 4096³ GEMM matched with the file's GEMM kernel: the Profile page shows its levels plot."""
    window.document.select(0)
    window.import_profile(str(LEVELS))
    qtbot.waitUntil(lambda: window.profile_importer.dialog is not None, timeout=10_000)
    dialog = window.profile_importer.dialog
    dialog.choose(0, 0)
    dialog.accept()
    qtbot.waitUntil(lambda: not window.profile_importer.busy, timeout=5000)


def import_trace(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The example step and a trace of it: the Step timeline page shows its step and its trace plots."""
    from trace_fixtures import data_parallel_rows, write_sqlite

    window.document.replace_session(load_example("data-parallel-step"))
    timeline = window.timeline
    timeline.import_trace(str(write_sqlite(tmp_path / "dp.sqlite", data_parallel_rows())))
    qtbot.waitUntil(lambda: timeline.reader is not None and not timeline.reader.isRunning()
                    and timeline.import_button.isEnabled(), timeout=20_000)


def export_both(window, key: str, folder: Path) -> None:  # type: ignore[no-untyped-def]
    png, svg = folder / f"{key}.png", folder / f"{key}.svg"
    assert window.export_plot(str(png), "png", key), key
    assert window.export_plot(str(svg), "svg", key), key
    assert_png_and_svg(png, svg)
    page_spec, _ = pages.plot_spec(key)
    assert window.current_page_key() == page_spec.key  # exported as the user sees it: its page in front
    view = window.plot_view(key)
    assert view.isVisible()
    width = int.from_bytes(png.read_bytes()[16:20], "big")  # the PNG's IHDR: the plot at twice its on-screen size
    assert width == 2 * view.viewport().width(), key


def test_every_registered_plot_exports_as_png_and_svg(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    keys = [plot.key for _, plot in window.plot_specs()]
    assert keys == ["roofline", "sweep", "samples", "levels", "compare", "timeline", "trace"]
    import_profile(window, qtbot)
    for key in ("roofline", "sweep", "samples", "levels", "compare"):
        export_both(window, key, tmp_path)
    import_trace(window, qtbot, tmp_path)
    for key in ("timeline", "trace"):
        export_both(window, key, tmp_path)


def test_ctrl_e_exports_the_plot_on_screen_and_a_hidden_one_is_refused(window, qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    exported: list[str] = []
    monkeypatch.setattr("workbench.gui.window_pages.export_png", lambda view, path: exported.append(view.objectName()))
    for key, name in (("roofline", "rooflinePlot"), ("measurement", "sampleHistogram"), ("compare", "compareRooflines"),
                      ("timeline", "timelinePlot")):
        window.tabs.setCurrentIndex(window.page_index(key))
        assert window.export_plot(str(tmp_path / "plot.png"), "png")
        assert exported[-1] == window.plot_view(window.plot_on_screen().key).objectName()
        if key != "roofline":
            assert exported[-1] == name
    # no trace imported: the trace plot is hidden, and its export says so instead of writing an empty plot
    assert not window.export_plot(str(tmp_path / "trace.png"), "png", "trace")
    assert "not shown" in window.status.currentMessage()
    assert not (tmp_path / "trace.png").exists()


def test_a_text_size_set_before_a_deferred_page_is_built_reaches_it_when_built(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Ctrl++ (or a remembered size) before a deferred page is built leaves it deferred; built, it takes the size."""
    from workbench.gui.app import build_window
    from workbench.model.devices.nvml import NO_DRIVER, Detection

    window = build_window(detect=lambda: Detection(NO_DRIVER, "no NVIDIA driver found (test)"))  # never shown
    qtbot.addWidget(window)
    try:
        window.set_font_points(21)
        assert window.deferred_pages.pending() == ["sweep", "profile", "compare", "timeline"]
        axis = window.roofline.plot.getAxis("bottom")  # a page built at start takes it at once
        assert axis.style["tickFont"].pointSizeF() == 21
        for key in ("sweep", "compare"):
            plot = window.plot_view(key).getPlotItem()
            assert plot.getAxis("bottom").style["tickFont"].pointSizeF() == 21, key
    finally:
        window.close()
        window.wait_for_workers()
