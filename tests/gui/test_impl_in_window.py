"""The lab demo in the window without a GPU: the model is shown, and measuring a RawKernel is refused in one line."""

from __future__ import annotations

from PySide6.QtCore import Qt

from workbench.model.declare import parse
from workbench.model.units import format_flop



def test_the_lab_demo_shows_the_model_and_refuses_the_raw_kernels_on_numpy(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.open_example("gemm-naive-tiled-cublas")
    doc = window.document
    assert [parse(entry.declaration).implementation for entry in doc.operations] == ["naive", "tiled", "compulsory"]
    for index, entry in enumerate(doc.operations):
        state = doc.state(entry)
        assert state.error is None and state.analysis is not None, entry.declaration
        doc.select(index)
        assert window.panel.values["work"].text() == format_flop(137_438_953_472)
    doc.select(0)
    tab = window.measurement
    window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.backends is not None, timeout=10000)
    tab.select_backend("numpy")
    tab.iterations.setValue(30)
    tab._show_estimate()  # the live estimate under the settings: no run time, and why, before Run is pressed
    assert tab.estimate_label.text().startswith("Cannot run here: impl=naive is a CUDA RawKernel")
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)  # refused at once: nothing starts
    assert not tab.running and tab.question is None
    text = tab.message.text()
    assert "impl=naive is a CUDA RawKernel" in text and "only the model is shown" in text
    assert "\n" not in text
    assert doc.session.runs == []
