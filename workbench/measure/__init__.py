"""The measurement engine: real kernels for every operation family, timed by a shared protocol.

Qt-free by design: a run is a plain object (`MeasurementRun`) whose
`events()` generator yields typed events — RunStarted, PhaseChanged,
SampleBatch (raw samples as they arrive), RunFinished (the frozen RunRecord)
— and which stops cooperatively when `cancel()` is called or `should_stop()`
answers True. A GUI drives it from a worker thread and forwards the events;
the CLI and the tests simply call `measure()`.

    from workbench.measure import measure
    record = measure("add(n=2**24, dtype=fp32)", backend="numpy", iterations=50, mode="warm")
    record.median_s, record.provenance, record.check.passed, record.to_dict()
    workbench.measure.runs.run_figures(...)   # achieved rates and % of bound, on the run's own device

`ProcessRun` (workbench.measure.process) runs the same protocol in a worker
process, so a cancel ends a CPU run even inside one long NumPy call;
`estimate_run` (workbench.measure.estimate) predicts a run's time from the
bound and a short probe, before it starts.

`calibrate()` measures sustained memory bandwidth and matrix rates and
returns them as measured Rates keyed by path (and "hbm").
"""

from __future__ import annotations

from workbench.measure.backends import BACKEND_CHOICES, Backend, BackendStatus, backend_status, select_backend
from workbench.measure.calibrate import CalibrationResult, CalibrationRun, calibrate
from workbench.measure.check import CheckResult
from workbench.measure.errors import BackendUnavailable, MeasurementError, MemoryRefused, UnsupportedMeasurement
from workbench.measure.record import CANCELLED, COLD, INVALID, MODES, OK, WARM, BoundInfo, KernelInfo, RunRecord
from workbench.measure.run import (
    DEFAULT_ITERATIONS,
    MIN_ITERATIONS,
    MeasurementRun,
    PhaseChanged,
    RunEvent,
    RunFinished,
    RunStarted,
    SampleBatch,
    measure,
)
from workbench.measure.stats import TimingStats, summarize
from workbench.measure.sweep import sweep_declarations

__all__ = [
    "BACKEND_CHOICES",
    "CANCELLED",
    "COLD",
    "DEFAULT_ITERATIONS",
    "INVALID",
    "MIN_ITERATIONS",
    "MODES",
    "OK",
    "WARM",
    "Backend",
    "BackendStatus",
    "BackendUnavailable",
    "BoundInfo",
    "CalibrationResult",
    "CalibrationRun",
    "CheckResult",
    "KernelInfo",
    "MeasurementError",
    "MeasurementRun",
    "MemoryRefused",
    "PhaseChanged",
    "RunEvent",
    "RunFinished",
    "RunRecord",
    "RunStarted",
    "SampleBatch",
    "TimingStats",
    "UnsupportedMeasurement",
    "backend_status",
    "calibrate",
    "measure",
    "select_backend",
    "summarize",
    "sweep_declarations",
]
