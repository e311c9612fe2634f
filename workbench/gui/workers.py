"""Qt worker threads: GPU detection off the start-up path.

NVML is imported and asked inside the thread, after the window is shown, so a
slow or missing driver never delays the first paint. Every worker registers
itself, so tests can check that none is left running.
"""

from __future__ import annotations

import weakref
from typing import Callable

from PySide6.QtCore import QObject, QThread, Signal

from workbench.model.devices.nvml import FAILED, Detection

_WORKERS: "weakref.WeakSet[QThread]" = weakref.WeakSet()


def running_workers() -> list[QThread]:
    """Workers of this package whose thread is still running."""
    return [worker for worker in list(_WORKERS) if worker.isRunning()]


def track_worker(worker: QThread) -> None:
    """Register a worker thread of another module, so `running_workers()` sees it too."""
    _WORKERS.add(worker)


class DetectionWorker(QThread):
    """Runs NVML detection once and reports the Detection through `detection_finished`."""

    detection_finished = Signal(object)

    def __init__(self, detect: Callable[[], Detection] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._detect = detect
        _WORKERS.add(self)

    def run(self) -> None:
        detect = self._detect
        if detect is None:
            from workbench.model.devices.nvml import detect
        try:
            result = detect()
        except Exception as exc:  # detection must never take the window down
            result = Detection(FAILED, f"GPU detection failed: {exc}")
        self.detection_finished.emit(result)
