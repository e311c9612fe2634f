"""Runs that respect the user's time: the estimate before a run, the question before a long one (with a
smaller size and a faster dtype offered), and a Cancel that lands inside one long NumPy call."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from workbench.gui.long_run_question import RUN_ANYWAY
from workbench.gui.measure_tab import MeasurementTab

RUN_TIMEOUT_MS = 60000


def worked_example_tab(qtbot, window) -> MeasurementTab:  # type: ignore[no-untyped-def]
    """Examples ▸ Worked example (4096³ fp16 GEMM) ▸ Measurement, on NumPy."""
    window.open_example("gemm-4096-fp16")
    tab = window.measurement
    window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.backends is not None, timeout=10000)
    tab.select_backend("numpy")
    return tab


def test_the_worked_example_on_the_cpu_shows_an_estimate_and_asks_before_running(qtbot, window) -> None:
    tab = worked_example_tab(qtbot, window)
    before = tab.estimate_label.text()
    assert before.startswith("Run time: at least ") and "from the bound on This machine" in before  # live, no probe
    assert tab.run_button.isEnabled(), tab.message.text()
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    question = tab.question
    assert question is not None, (tab.message.text(), tab.running, tab.estimate_label.text())
    assert question is not None and question.isVisible()
    assert not tab.running and window.document.session.runs == []  # nothing started
    assert not tab.run_button.isEnabled()
    after = tab.estimate_label.text()
    assert after.startswith("Run time: about ") and "probe: gemm(" in after and "dtype=fp16" in after
    assert set(question.buttons) >= {"smaller", "dtype", RUN_ANYWAY, "dont"}
    assert "fp32" in question.buttons["dtype"].text() and "without BLAS" in question.buttons["dtype"].text()
    assert question.buttons["dont"].isDefault() and not question.buttons[RUN_ANYWAY].isDefault()

    offer = next(o for o in question.offers if o.kind == "smaller")
    with qtbot.waitSignal(tab.measurement_finished, timeout=RUN_TIMEOUT_MS):
        question.buttons["smaller"].click()
        # while the smaller size runs, the label gives its estimate, not the long run's
        assert tab.running and tab.estimate_label.text() == f"Run time: {offer.estimate.text()}."
    assert tab.question is None
    runs = window.document.session.runs
    assert len(runs) == 1
    smaller = next(o for o in question.offers if o.kind == "smaller").declaration
    assert runs[0]["declaration"] == str(smaller) and runs[0]["status"] == "ok"
    assert smaller.params["M"] < 4096 and smaller.params["dtype"] == "fp16"


def test_dont_run_starts_nothing_and_the_run_button_comes_back(qtbot, window) -> None:
    tab = worked_example_tab(qtbot, window)
    assert not tab.start()
    assert tab.question is not None
    tab.question.buttons["dont"].click()
    assert tab.question is None and not tab.running and tab.run_button.isEnabled()
    assert window.document.session.runs == []


def test_a_short_run_is_not_asked_about(qtbot, window) -> None:
    tab = worked_example_tab(qtbot, window)
    window.document.edit_declaration(0, "gemm(M=128, N=128, K=128, dtype=fp32)")
    with qtbot.waitSignal(tab.measurement_finished, timeout=RUN_TIMEOUT_MS):
        assert tab.start()
    assert tab.question is None and len(window.document.session.runs) == 1


def test_cancel_inside_one_long_numpy_call_ends_the_run_within_half_a_second(qtbot, window) -> None:
    tab = worked_example_tab(qtbot, window)
    window.document.edit_declaration(0, "gemm(M=2048, N=2048, K=2048, dtype=fp16)")  # one call: tens of seconds
    phases: list[str] = []
    assert tab.start(ask=False)
    worker = tab.worker
    assert worker is not None
    worker.phase_changed.connect(lambda index, event: phases.append(event.phase))
    qtbot.waitUntil(lambda: "first call" in phases, timeout=RUN_TIMEOUT_MS)
    qtbot.wait(300)  # inside the first call
    assert phases[-1] == "first call"
    clicked = time.perf_counter()
    qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)
    assert worker.wait(5000)
    assert time.perf_counter() - clicked < 2.0  # the target is half a second; under load the bound only tells 'stopped at once' from 'ran on'
    qtbot.waitUntil(lambda: not tab.running, timeout=5000)
    assert window.document.session.runs == []
    assert tab.progress.format().startswith("cancelled")


def test_an_empty_histogram_shows_its_message_without_axes_and_a_run_brings_them_back(qtbot, window) -> None:
    tab = worked_example_tab(qtbot, window)
    histogram = tab.histogram
    assert histogram.samples_shown == 0 and histogram.message.isVisible()
    assert "No runs yet" in histogram.message.toPlainText()
    assert not histogram.plot.getAxis("left").isVisible() and not histogram.plot.getAxis("bottom").isVisible()
    histogram.show_samples((1e-3, 1.1e-3, 0.9e-3), "three samples")
    assert histogram.plot.getAxis("left").isVisible() and histogram.plot.getAxis("bottom").isVisible()
    assert not histogram.message.isVisible()


def test_opening_another_session_clears_the_previous_runs_progress_text(qtbot, window) -> None:
    tab = worked_example_tab(qtbot, window)
    window.document.edit_declaration(0, "gemm(M=64, N=64, K=64, dtype=fp32)")
    with qtbot.waitSignal(tab.measurement_finished, timeout=RUN_TIMEOUT_MS):
        assert tab.start()
    assert tab.progress.format().startswith("done: gemm(")
    window.open_example("vector-add")
    assert tab.progress.format() == "idle" and tab.progress.value() == 0


def test_a_run_tooltip_says_its_status_once(qtbot, window) -> None:
    from workbench.gui.measure_plots import run_tip

    tab = worked_example_tab(qtbot, window)
    window.document.edit_declaration(0, "gemm(M=64, N=64, K=64, dtype=fp32)")
    with qtbot.waitSignal(tab.measurement_finished, timeout=RUN_TIMEOUT_MS):
        assert tab.start()
    tip = run_tip(tab.model.runs[0], False)
    status = next(line for line in tip.splitlines() if line.startswith("status:"))
    assert status.startswith("status: passed — ") and "passed: " not in status
    assert "sampled outputs within tolerance" in status


def _one_free_gib(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """This machine with 1 GiB free, whatever it really has."""
    from workbench.measure.backends import NumpyBackend

    monkeypatch.setattr(NumpyBackend, "free_memory", lambda self: (2**30, "set by the test"))


def test_a_run_that_cannot_happen_here_is_refused_before_anything_is_offered(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A bf16 GEMM on NumPy (no bf16 arrays) and sizes beyond free memory: Run says why at once; no question
    offers to run them ("should take 2.9 min — Run anyway"), and the live estimate says they cannot run."""
    _one_free_gib(monkeypatch)
    tab = worked_example_tab(qtbot, window)
    for declaration, reason in (
        ("gemm(M=4096, N=4096, K=4096, dtype=bf16)", "NumPy has no bf16"),
        ("gemm(M=16384, N=16384, K=16384, dtype=fp32)", "reduce the sizes"),  # 3 GiB of operands
    ):
        window.document.edit_declaration(0, declaration)
        qtbot.waitUntil(lambda: tab.estimate_label.text().startswith("Cannot run here:"), timeout=5000)
        assert reason in tab.estimate_label.text()
        assert not tab.start()
        assert tab.question is None and not tab.running
        assert reason in tab.message.text() and tab.message.isVisible()


def test_a_sweep_whose_largest_size_does_not_fit_is_refused_before_it_is_offered(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _one_free_gib(monkeypatch)
    tab = worked_example_tab(qtbot, window)
    window.document.edit_declaration(0, "add(n=2**20, dtype=fp32)")
    tab.sweep_box.setChecked(True)
    tab.sweep_low.setValue(20)
    tab.sweep_high.setValue(28)  # 2**28 fp32 elements: 3 GiB for the three vectors
    assert not tab.start()
    assert tab.question is None and not tab.running
    assert "reduce the sizes" in tab.message.text()
