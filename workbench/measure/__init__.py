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

`workbench.measure.calibrate.calibrate()` measures sustained memory bandwidth
and matrix rates and returns them as measured Rates keyed by path (and "hbm");
it is not offered here by its name alone, which is also its module's (once that
module is imported the package's attribute of that name is the module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.exports import lazy_names

if TYPE_CHECKING:  # the names as type checkers and the import contracts see them
    from workbench.measure.backends import BACKEND_CHOICES, Backend, BackendStatus, backend_status, select_backend
    from workbench.measure.calibrate import CalibrationResult, CalibrationRun
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

# Where each name lives: its module is imported when the name is first read (workbench/exports.py).
_HOMES = {
    "BACKEND_CHOICES": "backends",
    "Backend": "backends",
    "BackendStatus": "backends",
    "backend_status": "backends",
    "select_backend": "backends",
    "CalibrationResult": "calibrate",
    "CalibrationRun": "calibrate",
    "CheckResult": "check",
    "BackendUnavailable": "errors",
    "MeasurementError": "errors",
    "MemoryRefused": "errors",
    "UnsupportedMeasurement": "errors",
    "CANCELLED": "record",
    "COLD": "record",
    "INVALID": "record",
    "MODES": "record",
    "OK": "record",
    "WARM": "record",
    "BoundInfo": "record",
    "KernelInfo": "record",
    "RunRecord": "record",
    "DEFAULT_ITERATIONS": "run",
    "MIN_ITERATIONS": "run",
    "MeasurementRun": "run",
    "PhaseChanged": "run",
    "RunEvent": "run",
    "RunFinished": "run",
    "RunStarted": "run",
    "SampleBatch": "run",
    "measure": "run",
    "TimingStats": "stats",
    "summarize": "stats",
    "sweep_declarations": "sweep",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)

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
    "measure",
    "select_backend",
    "summarize",
    "sweep_declarations",
]
