"""The roofline's labels are laid out at the size the view is shown at, not at the size it had before its tab was
laid out; and a view shown without being resized still gets them."""

from __future__ import annotations

from workbench.gui import roofline_labels, roofline_view
from workbench.gui.app import build_window
from workbench.documents.session import OperationEntry, Session


def _session(count: int) -> Session:
    return Session(operations=[OperationEntry.automatic(f"gemm(M={256 + 64 * index}, N=2048, K=512, dtype=fp16)")
                               for index in range(count)])


def _record_layouts(monkeypatch) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    """The view size of every label layout the roofline makes from now on."""
    sizes: list[tuple[float, float]] = []
    original = roofline_labels.roofline_scene

    def recorded(inputs, *args, **kwargs):  # type: ignore[no-untyped-def]
        sizes.append((inputs.view.width, inputs.view.height))
        return original(inputs, *args, **kwargs)

    monkeypatch.setattr(roofline_labels, "roofline_scene", recorded)
    return sizes


def test_a_window_opened_with_a_session_lays_the_labels_out_at_its_shown_size(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window = build_window()
    qtbot.addWidget(window)
    roofline = window.roofline
    roofline.redraw_off_screen_windows = False  # as `run_app` opens a file before the window is shown
    window.document.replace_session(_session(40))
    del roofline.redraw_off_screen_windows
    sizes = _record_layouts(monkeypatch)
    at_show: list[tuple[float, float]] = []  # the view's size when its show event came
    shown = roofline_view.RooflineView.showEvent

    def recorded_show(self, event):  # type: ignore[no-untyped-def]
        box = self.plot.getViewBox()
        at_show.append((box.width(), box.height()))
        return shown(self, event)

    monkeypatch.setattr(roofline_view.RooflineView, "showEvent", recorded_show)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)
    box = roofline.plot.getViewBox()
    final = (box.width(), box.height())
    assert sizes, "the labels were never laid out"
    assert at_show and at_show[0] != final  # the tab lays its page out after showing it (else this tests nothing)
    assert at_show[0] not in sizes  # no layout at the size the view had before its tab laid it out
    assert sizes[-1] == final
    placed = roofline.label_layout
    assert placed is not None and (placed.width, placed.height) == final
    assert f"operation {window.document.current}" in {label.key for label in placed.point_labels}  # the selected one
    window.close()
    window.wait_for_workers()


def test_a_roofline_shown_again_without_a_resize_lays_its_labels_out(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    roofline = window.roofline  # (the conftest's window: shown, on the roofline)
    window.tabs.setCurrentWidget(window.sweep)
    window.document.replace_session(_session(12))  # the roofline behind its tab: only marked stale
    before = roofline.label_layout
    window.tabs.setCurrentWidget(roofline)  # shown at the size it had: no resize follows
    qtbot.waitUntil(lambda: roofline.label_layout is not before, timeout=2000)
    placed = roofline.label_layout
    box = roofline.plot.getViewBox()
    assert (placed.width, placed.height) == (box.width(), box.height())
    assert f"operation {window.document.current}" in {label.key for label in placed.point_labels}
