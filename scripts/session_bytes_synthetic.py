"""Records built in code for scripts/session_bytes.py: every field of each record class filled, each written,
read back and written again, a session holding them saved, and malformed records with the message each gets."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator

from workbench.documents.session import dumps, load, loads
from workbench.documents.session.writing import format_json
from workbench.documents.session_sync import Snapshot
from workbench.errors import WorkbenchError
from workbench.measure.calibrate import CalibrationResult
from workbench.measure.check import CheckResult
from workbench.measure.latency import LatencyReading
from workbench.measure.record import BoundInfo, KernelInfo, RunRecord
from workbench.measure.runs import stored_run
from workbench.measure.transfers import TransferMeasurement
from workbench.model.devices import Rate
from workbench.model.devices.provenance import DeviceProvenance
from workbench.profilers.names import MatchRule
from workbench.profilers.profile import Profile
from workbench.profilers.reader import read_profile

ROOT = Path(__file__).resolve().parent.parent

PROVENANCE = DeviceProvenance(
    kind="gpu", name="NVIDIA H100 80GB HBM3", catalogue_key="h100-sxm", matched_by="name", stated_by="NVML",
    uuid="GPU-1", pci_bus_id="0000:01:00.0", driver_version="550.1", cuda_version="12.4", compute_capability="9.0",
    memory_bytes=85899345920, cache_bytes=52428800, clocks_hz={"sm": 1.98e9, "dram": 2.6e9},
)
CHECK = CheckResult(True, 64, 0, float("nan"), float("inf"), 12.5, "fp16 rtol", "passed")
BOUND = BoundInfo("H100", "tensor-fp16", 9.89e14, "datasheet", 3.35e12, "datasheet", 1e-4, 2e-5, 1e-4, "full", "compute")
FULL = RunRecord(
    id="r1", created="2026-01-01T00:00:00+00:00", declaration="gemm(m=4096, n=4096, k=4096, dtype=fp16)",
    operation="gemm", params={"m": 4096, "shape": [1, 2]}, backend="cupy", device="GPU 0", mode="warm",
    iterations=5, warmup_calls=2, first_call_s=0.5, status="ok", message="fine", notes=("a", "b"),
    samples_s=(1e-4, 1.1e-4, 0.0, 3), convention="fma2", flop=137438953472, bytes=100663296,
    kernel=KernelInfo("gemm", "cublas", "tensor", 100663296, "note", ("n1",), ({"name": "A", "bytes": 3},)),
    check=CHECK, bound=BOUND, timer="cuda events", environment={"numpy": "2.1", "driver": "550"},
    conditions_before={"temp_c": 40}, conditions_after={"temp_c": 55}, provenance=PROVENANCE,
)
MINIMAL = replace(FULL, id="r2", check=None, bound=None, provenance=None, first_call_s=None, notes=(), params={},
                  kernel=KernelInfo("stream", "numpy.add", "fp32", 0, ""), environment={}, samples_s=())
PARTIAL = replace(FULL, id="r3", provenance=DeviceProvenance(kind="cpu", name="", stated_by="inferred"),
                  check=replace(CHECK, checksum=None, max_abs_error=0.25))
TRANSFERS = (
    TransferMeasurement("h2d-pinned", "host-device", "H2D", 1 << 20, (1e-4, 2e-4, 3e-4), "events", "copy", "GPU 0"),
    TransferMeasurement("nccl-allreduce", "collective", "AR", 1 << 24, (1e-3, 2e-3), "events", "nccl", "GPU 0", 1.75, 8),
)
LATENCIES = (LatencyReading("idle", 6e-7, "chase"), LatencyReading("loaded", 1.2e-6, "little"))


def _again(write: Callable[[], Any], read: Callable[[Any], Any]) -> str:
    data = write()
    back = read(json.loads(json.dumps(data)))
    return format_json(data) + format_json(back.to_dict() if back is not None else None)


def _message(read: Callable[[Any], Any], data: Any) -> str:
    try:
        value = read(data)
    except WorkbenchError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "read: " + repr(value)


def _malformed_runs() -> Iterator[Any]:
    good = FULL.to_dict()
    for key in list(good):
        if key not in ("format", "version"):
            yield {k: v for k, v in good.items() if k != key}
    bad_values: list[tuple[str, Any]] = [
        ("status", "fine"), ("samples_s", [1, -1]), ("samples_s", [1e7]), ("samples_s", 5), ("samples_s", ["x"]),
        ("iterations", "many"), ("iterations", None), ("flop", [1]), ("params", [["a", 1]]), ("params", 3),
        ("kernel", []), ("kernel", {"family": "x"}), ("check", {}), ("check", {"passed": 1}), ("check", 0),
        ("bound", {"device": "d"}), ("bound", {"device": "d", "path": "p", "compute_time_s": "fast"}),
        ("provenance", "text"), ("provenance", {"kind": "tpu", "memory_bytes": -1, "clocks_hz": {"sm": True}}),
        ("notes", 7), ("first_call_s", "soon"), ("environment", None), ("version", 1), ("version", 3),
        ("version", True), ("format", "other"), ("id", None), ("bound", {"path": "p"}),
    ]
    for key, value in bad_values:
        yield {**good, key: value}
    yield [1, 2]
    yield None


def outputs() -> Iterator[tuple[str, str]]:
    for name, run in (("full", FULL), ("minimal", MINIMAL), ("partial", PARTIAL)):
        yield f"synthetic.run.{name}", _again(run.to_dict, RunRecord.from_dict)
    v1 = {**FULL.to_dict(), "version": 1, "provenance": None, "valid": True, "median_s": 1e-4, "extra": "kept"}
    yield "synthetic.run.v1", format_json(stored_run(v1))
    for index, data in enumerate(_malformed_runs()):
        yield f"synthetic.run.bad{index}", _message(RunRecord.from_dict, data) + "\n" + _message(
            lambda d: stored_run(d) if isinstance(d, dict) else None, data)
    yield "synthetic.provenance", _again(PROVENANCE.to_dict, DeviceProvenance.from_dict)
    for index, data in enumerate((None, 3, {}, {"kind": "gpu", "name": 5, "uuid": "", "memory_bytes": True})):
        yield f"synthetic.provenance.odd{index}", format_json(DeviceProvenance.from_dict(data).to_dict())
    yield "synthetic.bound", _again(BOUND.to_dict, BoundInfo.from_dict)
    yield "synthetic.check", _again(CHECK.to_dict, CheckResult.from_dict)
    for index, reading in enumerate(LATENCIES):
        yield f"synthetic.latency{index}", _again(reading.to_dict, LatencyReading.from_dict)
    for index, data in enumerate(({"load": "busy"}, {"load": "idle", "seconds": 5.0}, {"load": "idle", "seconds": True}, 3)):
        yield f"synthetic.latency.bad{index}", _message(LatencyReading.from_dict, data)
    for index, transfer in enumerate(TRANSFERS):
        yield f"synthetic.transfer{index}", _again(transfer.to_dict, TransferMeasurement.from_dict)
    good_transfer = TRANSFERS[1].to_dict()
    for index, data in enumerate(({**good_transfer, "samples_s": []}, {**good_transfer, "ranks": "x"},
                                  {k: v for k, v in good_transfer.items() if k != "key"}, [], {**good_transfer, "samples_s": [0]})):
        yield f"synthetic.transfer.bad{index}", _message(TransferMeasurement.from_dict, data)
    calibration = CalibrationResult("cupy", "GPU 0", "2026-01-01", {"hbm": Rate(3e12, "measured", "copy")}, (FULL, MINIMAL),
                                    ("fp64",), False, TRANSFERS, ("note",), LATENCIES)
    yield "synthetic.calibration", _again(calibration.to_dict, CalibrationResult.from_dict)
    yield "synthetic.calibration.bare", _again(replace(calibration, latencies=(), runs=()).to_dict, CalibrationResult.from_dict)
    good_cal = calibration.to_dict()
    for index, data in enumerate(({**good_cal, "rates": {"hbm": {"value": "x"}}}, {**good_cal, "rates": []},
                                  {**good_cal, "runs": [{}]}, {k: v for k, v in good_cal.items() if k != "device"},
                                  {**good_cal, "latencies": [{"load": "x"}]}, {**good_cal, "transfers": [3]})):
        yield f"synthetic.calibration.bad{index}", _message(CalibrationResult.from_dict, data)
    rule = MatchRule("gemm*", "gemm(m=1, n=1, k=1)", "first")
    yield "synthetic.rule", _again(rule.to_dict, MatchRule.from_dict)
    for index, data in enumerate(({"pattern": "", "declaration": "x"}, {"pattern": 3}, [], {"pattern": "a", "declaration": "b"})):
        yield f"synthetic.rule.odd{index}", _message(MatchRule.from_dict, data)
    yield from _session_outputs(rule)


def _session_outputs(rule: MatchRule) -> Iterator[tuple[str, str]]:
    session = load(ROOT / "resources" / "examples" / "vector-add.json")
    ncu = read_profile(ROOT / "tests" / "data" / "ncu_raw.csv").with_matches((rule,))
    nsys = read_profile(ROOT / "tests" / "data" / "nsys_cuda_gpu_kern_sum.csv")
    session.runs = [FULL.to_dict(), MINIMAL.to_dict(), PARTIAL.to_dict(), {"declaration": "add(n=4)", "samples_s": [1, 2]}]
    session.profiles = [ncu.to_dict(), nsys.to_dict()]
    text = dumps(session)
    yield "synthetic.session", text
    yield "synthetic.session.again", dumps(loads(text))
    snapshot = Snapshot.of(session, text.encode())
    yield "synthetic.snapshot", _again(snapshot.to_dict, Snapshot.from_dict)
    for index, data in enumerate((None, {"digest": "d", "parts": {"title": 3, "operations": ["a", 1]}, "runs": []},
                                  {"digest": "d", "parts": {}, "runs": [1]})):
        back = Snapshot.from_dict(data)
        yield f"synthetic.snapshot.odd{index}", format_json(back.to_dict() if back else None)
    for index, profile in enumerate(session.profiles):
        for case, (key, value) in enumerate((("launches", [{"id": "x", "kernel": "k"}]), ("launches", [{"id": 1}]),
                           ("summaries", [{"kernel": "k", "instances": 1}]), ("summaries", [{"kernel": "k", "instances": 1, "total_s": "x"}]),
                           ("launches", [{"id": 1, "kernel": "k", "grid": [1, 2]}]), ("matches", [{"pattern": "["}]))):
            yield f"synthetic.profile{index}.bad{case}", _message(Profile.from_dict, {**profile, key: value})
