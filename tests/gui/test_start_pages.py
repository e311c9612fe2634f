"""Plot tabs built when first needed (gui/deferred_pages.py): start-up builds what the first paint shows, and
nobody can tell: the first paint and the settled window are pixel for pixel those of a window whose pages were
all built before it showed, a tab opens on its view (never on the empty page standing in for it), and code that
reads `window.sweep` (…) gets the view.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QObject, QSettings, Qt
from PySide6.QtGui import QImage

from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.gui.deferred_pages import DeferredPages
from workbench.gui.pages import page_keys

DEFERRED = ["sweep", "profile", "compare", "timeline"]


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found (test)")


VIEWS = {"sweep": "SweepView", "profile": "ProfileComparisonView", "compare": "CompareView", "timeline": "TimelineView"}


def _window(qtbot, tmp_path: Path, name: str, tab: str | None = None, build_at_once: bool = False, settle: bool = True):  # type: ignore[no-untyped-def]
    """A window with settings of its own (`tab`: the tab a previous run left open), shown at 1600×1000 with its
    GPU detection done; `build_at_once`: every page built before it shows, as all were before deferral."""
    from workbench.gui.app import build_window

    settings = QSettings(str(tmp_path / f"{name}.ini"), QSettings.Format.IniFormat)
    if tab is not None:
        settings.setValue("view/tab", tab)
    window = build_window(settings=settings, detect=no_driver)
    qtbot.addWidget(window)
    if build_at_once:
        window.deferred_pages.build_all()
    window.resize(1600, 1000)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.document.detection is not None, timeout=60_000)  # returns once it is: a loaded machine may take seconds
    if settle:
        qtbot.wait(50)
    return window


def _same_pixels(first: QImage, second: QImage, tmp_path: Path, name: str) -> None:
    if first == second:
        return
    first.save(str(tmp_path / f"{name}-deferred.png"))
    second.save(str(tmp_path / f"{name}-at-once.png"))
    differ = sum(
        1 for x in range(0, first.width(), 4) for y in range(0, first.height(), 4) if first.pixel(x, y) != second.pixel(x, y)
    ) if first.size() == second.size() else -1
    pytest.fail(f"{name}: the windows differ ({first.size().toTuple()} vs {second.size().toTuple()}, "
                f"~{differ * 16} pixels); both saved under {tmp_path}")


def _backends_checked(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """The measurement tab asks, in a worker, which backends can run here when first shown: let it answer."""
    window.tabs.setCurrentWidget(window.measurement)
    qtbot.waitUntil(lambda: window.measurement.backends is not None, timeout=60_000)


def _settled_grab(qtbot, widget) -> QImage:  # type: ignore[no-untyped-def]
    """The widget's pixels once two grabs 20 ms apart agree (a plot shown for the first time fits its axes to
    their tick labels in the turns after it is shown), at most 2 s."""
    image = widget.grab().toImage()
    for _ in range(100):
        qtbot.wait(20)
        again = widget.grab().toImage()
        if again == image:
            return again
        image = again
    return image


def _close(window) -> None:  # type: ignore[no-untyped-def]
    window.close()
    window.wait_for_workers()


@pytest.mark.parametrize("tab", [None, "timeline", "measurement"])
def test_the_first_paint_is_that_of_a_window_with_every_page_built(qtbot, tmp_path: Path, monkeypatch, tab) -> None:  # type: ignore[no-untyped-def]
    """Frozen in its first-paint state (the pages left for after it not built), the window looks exactly like one
    that built them all before showing; with a tab left open by the last run, that tab's view is built at start."""
    with monkeypatch.context() as patch:
        patch.setattr(DeferredPages, "build_after_first_paint", lambda self, watched: None)
        deferred = _window(qtbot, tmp_path, "deferred", tab)
    expected = [key for key in DEFERRED if key != tab]
    assert deferred.deferred_pages.pending() == expected
    assert deferred.tabs.currentIndex() == page_keys().index(tab or "roofline")
    if tab == "measurement":
        _backends_checked(qtbot, deferred)
    first_paint = deferred.grab().toImage()
    _close(deferred)
    at_once = _window(qtbot, tmp_path, "at-once", tab, build_at_once=True)
    if tab == "measurement":
        _backends_checked(qtbot, at_once)
    _same_pixels(first_paint, at_once.grab().toImage(), tmp_path, f"first paint, tab {tab}")
    _close(at_once)


def test_after_the_first_paint_every_page_is_built_and_nothing_moved(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    deferred = _window(qtbot, tmp_path, "deferred", settle=False)
    qtbot.waitUntil(lambda: not deferred.deferred_pages.pending(), timeout=5000)
    qtbot.wait(50)
    pages = [type(deferred.tabs.widget(index)).__name__ for index in range(deferred.tabs.count())]
    assert pages == ["RooflineView", "SweepView", "MeasurementTab", "ProfileComparisonView", "CompareView", "TimelineView"]
    settled = deferred.grab().toImage()
    shown = []
    _backends_checked(qtbot, deferred)
    for index in range(deferred.tabs.count()):  # and each page as it shows
        deferred.tabs.setCurrentIndex(index)
        shown.append(_settled_grab(qtbot, deferred.tabs))
    _close(deferred)
    at_once = _window(qtbot, tmp_path, "at-once", build_at_once=True)
    _same_pixels(settled, at_once.grab().toImage(), tmp_path, "settled")
    _backends_checked(qtbot, at_once)
    for index in range(at_once.tabs.count()):
        at_once.tabs.setCurrentIndex(index)
        _same_pixels(shown[index], _settled_grab(qtbot, at_once.tabs), tmp_path, f"tab {page_keys()[index]}")
    _close(at_once)


def test_opening_a_tab_shows_its_view_and_never_the_empty_page(qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    class Paints(QObject):
        count = 0

        def eventFilter(self, watched, event):  # type: ignore[no-untyped-def]  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                self.count += 1
            return False

    with monkeypatch.context() as patch:
        patch.setattr(DeferredPages, "build_after_first_paint", lambda self, watched: None)
        window = _window(qtbot, tmp_path, "deferred")
    pages = window.deferred_pages
    index = page_keys().index("compare")
    placeholder = window.tabs.widget(index)
    assert type(placeholder).__name__ == "_Placeholder"
    paints = Paints()
    placeholder.installEventFilter(paints)
    changes: list[int] = []
    window.tabs.currentChanged.connect(changes.append)
    qtbot.mouseClick(window.tabs.tabBar(), Qt.MouseButton.LeftButton, pos=window.tabs.tabBar().tabRect(index).center())
    qtbot.wait(50)
    view = window.tabs.currentWidget()
    assert type(view).__name__ == "CompareView" and view.isVisible()
    assert pages.is_built("compare") and window.compare is view
    assert paints.count == 0  # the empty page was never painted
    assert changes == [index]  # one change, to the tab clicked; the exchange itself is not announced
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        "&Roofline", "&Bound vs size", "&Measurement", "&Profile", "&Compare devices", "Step &timeline"]
    window.actions["tab_timeline"].trigger()  # Ctrl+6
    assert type(window.tabs.currentWidget()).__name__ == "TimelineView"
    _close(window)


def test_reading_a_page_builds_it_in_its_place(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.app import build_window

    window = build_window(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), detect=no_driver)
    qtbot.addWidget(window)
    pages = window.deferred_pages
    assert pages.pending() == DEFERRED
    changes: list[int] = []
    window.tabs.currentChanged.connect(changes.append)
    sweep = window.sweep
    assert type(sweep).__name__ == "SweepView" and window.tabs.indexOf(sweep) == page_keys().index("sweep")
    assert window.sweep is sweep and pages.pending() == ["profile", "compare", "timeline"]
    assert window.tabs.currentIndex() == 0 and changes == []
    window.tabs.setCurrentWidget(window.profile_view)  # the profile import's way to its tab
    assert window.tabs.currentIndex() == page_keys().index("profile") and changes == [page_keys().index("profile")]
    # the export's question builds nothing it needn't: the profile page shows no plot before a kernel is compared
    assert window.plot_on_screen() is None and pages.pending() == ["compare", "timeline"]
    window.tabs.setCurrentIndex(page_keys().index("sweep"))
    shown = window.plot_on_screen()
    assert shown is not None and window.plot_view(shown.key) is sweep.widget
    window.close()
    window.wait_for_workers()


def test_start_up_imports_and_builds_only_what_the_first_paint_shows(tmp_path: Path) -> None:
    """In a fresh process, as `workbench` starts: the deferred views' modules are not imported while the window
    is built and painted, and are once events have run after the first paint."""
    modules = ["workbench.gui.sweep_view", "workbench.gui.profile_view", "workbench.gui.compare_view", "workbench.gui.timeline_view"]
    script = f"""
import json, sys
from PySide6.QtCore import QSettings
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, {str(tmp_path)!r})
from workbench.gui.app import build_window, ensure_application
app = ensure_application(); window = build_window(); window._detect_timer.stop()
modules = {modules!r}
before = dict(pending=window.deferred_pages.pending(), imported=[m for m in modules if m in sys.modules])
window.show(); window._detect_timer.stop()
for _ in range(5):
    app.processEvents()
after = dict(pending=window.deferred_pages.pending(), imported=[m for m in modules if m in sys.modules],
             pages=[type(window.tabs.widget(i)).__name__ for i in range(window.tabs.count())])
print(json.dumps(dict(before=before, after=after)))
window.close(); window.wait_for_workers()
"""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PERF_WORKBENCH_DATA_DIR=str(tmp_path / "data"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["before"] == {"pending": DEFERRED, "imported": []}
    assert report["after"]["pending"] == [] and report["after"]["imported"] == modules
    assert report["after"]["pages"] == ["RooflineView", "SweepView", "MeasurementTab", *[VIEWS[k] for k in DEFERRED[1:]]]
