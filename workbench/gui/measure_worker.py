"""Measurement and calibration off the GUI thread: QThreads that drive the Qt-free engine and push typed signals.

The engine (`workbench.measure`) is a plain generator of events; these
workers iterate it in their own thread and forward each event through a
signal, so the window never waits on a kernel. CPU runs (NumPy) go one step
further: the engine runs in a worker process (`workbench.measure.process`),
because one NumPy call can last minutes and a thread cannot be stopped
inside it; Cancel ends that process if it does not stop by itself, so a run
ends within half a second. GPU runs stay in the thread, where calls are
short and the engine's cooperative stop is enough. Every
worker registers itself with `workbench.gui.workers`, so tests can check
that none is left running.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from workbench.model.declare import Declaration
from workbench.model.devices import Device
from workbench.errors import WorkbenchError
from workbench.gui.workers import track_worker


def _one_line(exc: BaseException) -> str:
    """An exception as the one line the tab shows (the engine's errors already are one line)."""
    text = " ".join(str(exc).split())
    if isinstance(exc, WorkbenchError):
        return text or type(exc).__name__
    return f"unexpected {type(exc).__name__}: {text}" if text else f"unexpected {type(exc).__name__}"


# ---------------------------------------------------------------- backends: which can run here


@dataclass(frozen=True)
class BackendChoice:
    """One backend as the chooser shows it: whether it can run, why not, and the device it runs on."""

    name: str  # "cupy" or "numpy"
    available: bool
    message: str  # the reason it cannot run, or a short description when it can
    device: str  # the device in words ("CPU: … (2 logical cores)", "GPU 0: NVIDIA H200 …"); "" when unavailable
    kind: str  # "gpu" or "cpu"


def probe_backends() -> tuple[BackendChoice, ...]:
    """Every backend and the device it would run on; imports CuPy, so call it off the GUI thread."""
    from workbench.measure import backend_status, select_backend

    choices = []
    for status in backend_status():
        kind = "gpu" if status.name == "cupy" else "cpu"
        device = ""
        available = status.available
        message = status.message
        if available:
            try:
                device = select_backend(status.name).describe()
            except WorkbenchError as exc:  # CuPy installed and a device listed, but it cannot be opened
                available, message = False, _one_line(exc)
        choices.append(BackendChoice(status.name, available, message, device, kind))
    return tuple(choices)


class BackendProbeWorker(QThread):
    """Finds out once which backends can run here (CuPy's import can take a second)."""

    backends_probed = Signal(object)  # tuple[BackendChoice, ...]

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        track_worker(self)

    def run(self) -> None:
        try:
            choices = probe_backends()
        except Exception as exc:  # a broken CUDA install must not take the window down
            choices = (
                BackendChoice("cupy", False, f"CuPy failed to start: {_one_line(exc)}", "", "gpu"),
                BackendChoice("numpy", True, "CPU", "CPU", "cpu"),
            )
        self.backends_probed.emit(choices)


# ---------------------------------------------------------------- measurement runs


@dataclass(frozen=True)
class MeasurementJob:
    """What to measure: one declaration, or several sizes of one (a sweep), with the run settings.

    `device` is "auto" (the run's device is matched from what the hardware
    states: the detected GPU's catalogue entry, or the CPU entry) or a Device
    of the backend's kind that names the entry. Figures are derived later on
    that device by `workbench.measure.runs.run_figures`, whatever the session shows.
    """

    declarations: tuple[Declaration, ...]
    backend: str
    iterations: int
    mode: str
    device: Device | str
    convention: str
    overlap: float
    operation_name: str


class MeasurementWorker(QThread):
    """Runs a job's declarations one after another and forwards the engine's events.

    Each signal carries the index of the declaration in the job first. A run
    that cannot start or stops with an error reports `run_failed` (one line)
    and ends the job: the sizes after a refused one would be refused too.
    """

    run_started = Signal(int, object)  # index, workbench.measure.RunStarted
    phase_changed = Signal(int, object)  # index, workbench.measure.PhaseChanged
    samples_arrived = Signal(int, object)  # index, workbench.measure.SampleBatch
    run_finished = Signal(int, object)  # index, workbench.measure.RunRecord (ok, invalid or cancelled)
    run_failed = Signal(int, str)  # index, one line

    def __init__(self, job: MeasurementJob, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self._stop = threading.Event()
        track_worker(self)

    def cancel(self) -> None:
        """Stop the run in progress within half a second (a CPU run's process is ended if it must be) and
        skip the rest (any thread)."""
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        from workbench.measure import MeasurementRun, PhaseChanged, RunFinished, RunStarted, SampleBatch
        from workbench.measure.process import ProcessRun

        job = self.job
        runner = ProcessRun if job.backend == "numpy" else MeasurementRun
        for index, declaration in enumerate(job.declarations):
            if self._stop.is_set():
                return
            try:
                run = runner(
                    declaration,
                    backend=job.backend,
                    iterations=job.iterations,
                    mode=job.mode,
                    device=job.device,
                    convention=job.convention,
                    overlap=job.overlap,
                    should_stop=self._stop.is_set,
                )
                for event in run.events():
                    if isinstance(event, SampleBatch):
                        self.samples_arrived.emit(index, event)
                    elif isinstance(event, PhaseChanged):
                        self.phase_changed.emit(index, event)
                    elif isinstance(event, RunStarted):
                        self.run_started.emit(index, event)
                    elif isinstance(event, RunFinished):
                        self.run_finished.emit(index, event.record)
            except Exception as exc:  # WorkbenchError (refused, unsupported, CUDA) or a bug: one line either way
                self.run_failed.emit(index, _one_line(exc))
                return


# ---------------------------------------------------------------- calibration


@dataclass(frozen=True)
class CalibrationJob:
    """How to calibrate: the backend, quick or full sizes, and (for tests) explicit sizes."""

    backend: str
    device: Device | str | None = "auto"
    quick: bool = False
    iterations: int = 30
    copy_bytes: int | None = None
    matrix_size: int | None = None
    dtypes: tuple[str, ...] | None = None
    links: bool = True  # host ↔ device, peer and NCCL on a GPU; the host-link stand-in on a CPU
    interfaces: bool = True  # L2 on a GPU; the last-level cache on a CPU
    link_bytes: int | None = None


class CalibrationWorker(QThread):
    """Runs `CalibrationRun` and forwards its steps, progress and result."""

    step_started = Signal(object)  # workbench.measure.calibrate.CalibrationStep
    samples_arrived = Signal(object)  # workbench.measure.SampleBatch of the step in progress
    calibration_finished = Signal(object)  # workbench.measure.CalibrationResult (cancelled or not)
    calibration_failed = Signal(str)  # one line

    def __init__(self, job: CalibrationJob, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self._stop = threading.Event()
        track_worker(self)

    def cancel(self) -> None:
        self._stop.set()

    def run(self) -> None:
        from workbench.measure import SampleBatch
        from workbench.measure.calibrate import CalibrationFinished, CalibrationRun, CalibrationStep

        job = self.job
        options: dict[str, Any] = {
            "iterations": job.iterations,
            "quick": job.quick,
            "device": job.device,
            "links": job.links,
            "interfaces": job.interfaces,
        }
        for name in ("copy_bytes", "matrix_size", "dtypes", "link_bytes"):
            if getattr(job, name) is not None:
                options[name] = getattr(job, name)
        try:
            calibration = CalibrationRun(job.backend, should_stop=self._stop.is_set, **options)
            for event in calibration.events():
                if isinstance(event, CalibrationStep):
                    self.step_started.emit(event)
                elif isinstance(event, SampleBatch):
                    self.samples_arrived.emit(event)
                elif isinstance(event, CalibrationFinished):
                    self.calibration_finished.emit(event.result)
        except Exception as exc:
            self.calibration_failed.emit(_one_line(exc))
