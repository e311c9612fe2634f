"""Storing a calibration in the window keeps its HBM latencies beside its rates, in one undo step, and the
calibration dialog's summary lists them."""

from __future__ import annotations

from workbench.model.devices.catalogue import MEASURED, Rate
from workbench.gui.calibration_dialog import result_lines, store_measured_rates
from workbench.measure.calibrate import CalibrationResult
from workbench.measure.latency import LatencyReading


def test_stored_latencies_reach_the_device_and_undo_takes_them_back(window) -> None:  # type: ignore[no-untyped-def]
    document = window.document
    document.set_device("h200-sxm")
    before = document.device.latency_of("hbm")
    readings = (LatencyReading("idle", 0.7e-6, "pointer chase"), LatencyReading("loaded", 1.9e-6, "library copy"))
    rates = {"hbm": Rate(4.1e12, MEASURED, "copy")}
    store_measured_rates(document, rates, readings)
    loaded = document.device.latency_of("hbm")
    assert (loaded.seconds, loaded.origin, loaded.citation) == (1.9e-6, MEASURED, "library copy")
    assert document.device.latency_of("hbm", "idle").seconds == 0.7e-6
    assert document.undo_stack.undoText() == "Store measured rates"
    document.undo_stack.undo()
    assert document.device.latency_of("hbm") == before and not document.session.device.latencies

    result = CalibrationResult(backend="cupy", device="a GPU", created="today", rates=rates, runs=(), latencies=readings)
    lines = result_lines(result, True, False, "HBM")
    assert "• loaded: 1.9 µs" in lines and "    how: pointer chase" in lines
