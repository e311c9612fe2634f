"""HBM latency measured by calibration reaches the session and the memory-level-parallelism term: planned on a GPU
only where its buffers fit, kept in the calibration's JSON, stored in the session's device (only when there is
one, so other sessions save as before), checked on load, and used by the Little's-law term in place of the
catalogue's nominal figure."""

from __future__ import annotations

import json

import pytest

from workbench.model.analysis import analyze_partial
from workbench.model.devices.catalogue import ENTERED, MEASURED, Latency, catalogue
from workbench.measure.backends import NumpyBackend
from workbench.measure.calibrate import CalibrationResult, CalibrationRun
from workbench.measure.errors import MeasurementError
from workbench.measure.latency import LOADED_COPY, LatencyReading
from workbench.measure.text import calibration_table
from workbench.documents.session import DeviceChoice, OperationEntry, Session, SessionError, loads, session_to_dict

ADD = "add(n=2**24, dtype=fp32, impl=library)"


class _FakeGpu(NumpyBackend):
    """A backend that says it is a GPU with a given amount of free memory (nothing is run on it here)."""

    kind = "gpu"

    def __init__(self, free: int) -> None:
        super().__init__()
        self.free = free

    def free_memory(self) -> tuple[int, str]:
        return self.free, "test figure"

    def flush_bytes(self) -> int:
        return 50 * 2**20

    def describe(self) -> str:
        return "a stand-in GPU"


def _labels(plan: list[tuple[str, str, object]]) -> list[str]:
    return [label for label, _what, _measure in plan]


def test_the_latency_steps_are_planned_on_a_gpu_where_they_fit() -> None:
    h200 = catalogue()["h200-sxm"]
    roomy = _FakeGpu(free=16 * 2**30)
    plan, skipped = CalibrationRun(roomy, latency=True).latency_plan(roomy, h200, "cold")
    assert _labels(plan) == ["HBM latency, idle (pointer chase)", "HBM latency under load (library copy, Little's law backwards)"]
    assert plan[1][1] == LOADED_COPY and skipped == []
    # 1 GiB for the chase, 537 MB for the copy: with 700 MB free only the copy fits, and the chase says why.
    tight = _FakeGpu(free=700 * 2**20)
    plan, skipped = CalibrationRun(tight).latency_plan(tight, h200, "cold")
    assert _labels(plan) == ["HBM latency under load (library copy, Little's law backwards)"]
    assert skipped == ["HBM latency, idle (pointer chase): needs 1 GiB of free memory"]
    # Without an SM count the occupancy (bytes in flight per SM) cannot be read.
    plan, skipped = CalibrationRun(roomy).latency_plan(roomy, catalogue()["cpu-generic"], "cold")
    assert _labels(plan) == ["HBM latency, idle (pointer chase)"] and "SM count" in skipped[0]
    assert CalibrationRun(roomy, latency=False).latency_plan(roomy, h200, "cold") == ([], [])


def test_a_cpu_calibration_plans_no_latency_step() -> None:
    cpu = NumpyBackend()
    assert CalibrationRun(cpu).latency_plan(cpu, catalogue()["cpu-generic"], "warm") == ([], [])


def _result(*readings: LatencyReading) -> CalibrationResult:
    return CalibrationResult(backend="cupy", device="a stand-in GPU", created="2026-12-01T00:00:00+00:00", rates={},
                             runs=(), latencies=readings)


def test_readings_round_trip_through_the_calibration_json_and_bad_ones_are_refused() -> None:
    result = _result(LatencyReading("idle", 0.65e-6, "pointer chase"), LatencyReading("loaded", 1.2e-6, "copy"))
    again = CalibrationResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.latencies == result.latencies
    assert "latencies" not in _result().to_dict()  # a calibration without them writes what it always wrote
    data = result.to_dict()
    for bad in ({"load": "busy", "seconds": 1e-6}, {"load": "idle", "seconds": -1}, {"load": "idle", "seconds": 10.0},
                {"load": "idle", "seconds": True}, "1 µs"):
        data["latencies"] = [bad]
        with pytest.raises(MeasurementError):
            CalibrationResult.from_dict(data)
    text = calibration_table(result, catalogue()["h200-sxm"])
    assert "idle: 650 ns" in text and "loaded: 1.2 µs" in text and "how: pointer chase" in text


def test_a_measured_latency_is_stored_in_the_session_and_used_by_the_term() -> None:
    session = Session(operations=[OperationEntry(name="add", declaration=ADD)])
    session.device = DeviceChoice("h200-sxm")
    nominal = analyze_partial(ADD, session.device.resolve())
    assert "latencies" not in json.dumps(session_to_dict(session, include_derived=False))

    session.device.latencies = {"hbm": {"loaded": Latency(2.7e-6, MEASURED, "library copy, Little's law backwards")}}
    data = session_to_dict(session, include_derived=False)
    assert data["device"]["latencies"] == {
        "hbm": {"loaded": {"seconds": 2.7e-6, "origin": MEASURED, "citation": "library copy, Little's law backwards"}}
    }
    reopened = loads(json.dumps(data))
    assert reopened.device.latencies == session.device.latencies
    device = reopened.device.resolve()
    assert device.latency_of("hbm").origin == MEASURED and device.latency_of("hbm").seconds == 2.7e-6
    measured = analyze_partial(ADD, device)
    mlp_nominal, mlp_measured = (next(t for t in a.terms if t.name == "mlp") for a in (nominal, measured))
    # Twice the latency (2.7 µs against the catalogue's nominal 1.35 µs) halves what the loads in flight deliver.
    assert mlp_measured.time_s == pytest.approx(2 * mlp_nominal.time_s, rel=1e-9)
    assert any("2.7 µs" in step.body and "measured" in step.label for step in measured.steps)


@pytest.mark.parametrize(
    ("latencies", "message"),
    [
        ({"dram": {"idle": {"seconds": 1e-6}}}, "not an interface"),
        ({"hbm": {"busy": {"seconds": 1e-6}}}, "idle or loaded"),
        ({"hbm": {"idle": {"seconds": 0}}}, "must be from"),
        ({"hbm": {"idle": {"seconds": 1e300}}}, "must be from"),
        ({"hbm": {"idle": {"seconds": "1 us"}}}, "expected a number"),
        ({"hbm": {"idle": {"seconds": 1e-6, "origin": "published"}}}, "measured or entered"),
        ({"hbm": []}, "expected an object"),
    ],
)
def test_a_bad_latency_in_a_session_file_is_refused_by_name(latencies: object, message: str) -> None:
    data = session_to_dict(Session(), include_derived=False)
    data["device"]["latencies"] = latencies
    with pytest.raises(SessionError, match=message) as refused:
        loads(json.dumps(data))
    assert "device.latencies" in str(refused.value)


def test_an_entered_latency_is_kept_as_entered() -> None:
    data = session_to_dict(Session(), include_derived=False)
    data["device"]["latencies"] = {"hbm": {"idle": {"seconds": 6e-7}}}
    assert loads(json.dumps(data)).device.latencies["hbm"]["idle"] == Latency(6e-7, ENTERED, "")
