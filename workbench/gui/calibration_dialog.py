"""Device ▸ Calibrate…: measure this machine's sustained rates and make them the session device's bounds.

The dialog runs `CalibrationRun` in a `CalibrationWorker` (a large copy for
memory bandwidth, a large square GEMM per data type for the matrix rates, then
the interfaces and links: L2 and host ↔ device copies on a GPU, peer copies
and NCCL collectives with two or more, the last-level cache and the host-link
stand-in on a CPU), shows each step and its progress, and can be cancelled.
When it finishes it lists every rate, then every transfer with its figure
(busbw and algbw for a collective) and how it was measured. When it finishes,
the measured rates become overrides of the session's device — labelled
measured, with the run that produced each as its citation — in one undoable
step; Undo or the device panel's Reset brings the datasheet figures back.
A cancelled calibration stores nothing.

The backend follows the session's device: a CPU device is calibrated with
NumPy, a GPU with CuPy (which must see one).
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from workbench.model.analysis.mlp import LATENCY_INTERFACE
from workbench.model.devices import MEASURED, PATHS
from workbench.model.devices.catalogue import Latency
from workbench.model.devices.links import is_byte_rate
from workbench.model.devices.rate_titles import rate_title
from workbench.gui.document import Document
from workbench.gui.measure_worker import CalibrationJob, CalibrationWorker
from workbench.gui.plain_text import html_text, plain
from workbench.measure.text import latency_lines, transfer_lines
from workbench.model.units import format_bandwidth, format_flop_rate


def _intro_text(gpu: bool, name: str) -> str:
    """What a calibration measures on the GPU CuPy opens or on this CPU, and what becomes of the results."""
    if gpu:
        where = "the GPU CuPy opens (CUDA device 0)"
        extra = (
            "Then the L2 bandwidth (a working set inside L2, read repeatedly) and host ↔ device copies, "
            "pinned and pageable, each way; with two or more GPUs, peer copies and NCCL collectives (busbw)."
        )
    else:
        where = "this computer's CPU, with NumPy"
        extra = (
            "Then a copy inside the last-level cache (reported beside the DRAM copy, far larger than it; not "
            "stored, as no CPU bound has a cache term), and a copy between two NumPy buffers as the "
            "<i>CPU stand-in</i> for the host link."
        )
    return (
        f"Measures the sustained memory bandwidth (a large copy, bytes read plus bytes written) and the "
        f"matrix rate of each data type (a large square GEMM) on {where}, with the same timing protocol "
        f"and reference check as any run. {extra} The results become the <b>measured</b> rates of <b>{html_text(name)}</b>, "
        f"which the bounds use from then on; Undo or Reset brings back the device's own figures."
    )


class CalibrationDialog(QDialog):
    """Start, watch, cancel a calibration; store its measured rates as the session device's overrides."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("calibrationDialog")
        self.document = document
        self.worker: CalibrationWorker | None = None
        self.result: Any = None  # the last CalibrationResult
        self.stored = False
        self.job_options: dict[str, Any] = {}  # extra CalibrationJob fields (tests: small sizes)
        self._device_key = ""
        self._steps = 1
        self._step = 0

        device = document.device
        name = device.name if device is not None else document.session.device.key
        self.setWindowTitle(f"Calibrate {name}")
        self.backend = "cupy" if device is not None and device.kind == "gpu" else "numpy"
        self.intro = QLabel(_intro_text(self.backend == "cupy", name))
        self.intro.setWordWrap(True)
        self._make_controls()
        self._lay_out()
        self.resize(560, 320)
        if device is None:
            self.start_button.setEnabled(False)
            self.step_label.setText(f"No device to calibrate: {document.device_error or 'choose one first'}.")

    def _make_controls(self) -> None:
        """Quick and Interfaces and links, the step line, the progress bar, the summary, Start and Cancel."""
        self.quick = QCheckBox("Quick: smaller sizes, a few seconds (less accurate)")
        self.quick.setObjectName("calibrateQuick")
        self.transfers = QCheckBox("Interfaces and links: caches and host ↔ device (and GPU ↔ GPU) copies")
        self.transfers.setObjectName("calibrateTransfers")
        self.transfers.setChecked(True)
        self.step_label = plain(QLabel("Not started."))
        self.step_label.setObjectName("calibrationStep")
        self.step_label.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setObjectName("calibrationProgress")
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.summary = plain(QLabel())
        self.summary.setObjectName("calibrationSummary")
        self.summary.setWordWrap(True)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.start_button = QPushButton("Start")
        self.start_button.setObjectName("calibrationStart")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("calibrationCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)

    def _lay_out(self) -> None:
        """The intro, the options and the progress over the summary, and the buttons."""
        buttons = QDialogButtonBox()
        buttons.addButton(self.start_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.close_button = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.quick)
        layout.addWidget(self.transfers)
        layout.addWidget(self.step_label)
        layout.addWidget(self.progress)
        layout.addWidget(self.summary, 1)
        layout.addWidget(buttons)

    # ------------------------------------------------------------------ running
    @property
    def running(self) -> bool:
        return self.worker is not None

    def start(self) -> bool:
        if self.running or self.document.device is None:
            return False
        self._device_key = self.document.session.device.key
        options = {"links": self.transfers.isChecked(), "interfaces": self.transfers.isChecked(), **self.job_options}
        job = CalibrationJob(backend=self.backend, device=self.document.device, quick=self.quick.isChecked(), **options)
        worker = CalibrationWorker(job)  # no parent: dropped (and deleted) once it has been waited for
        worker.step_started.connect(self._step_started)
        worker.samples_arrived.connect(self._samples_arrived)
        worker.calibration_finished.connect(self._finished)
        worker.calibration_failed.connect(self._failed)
        worker.finished.connect(self._worker_done)
        self.worker = worker
        self.result = None
        self.stored = False
        self.summary.setText("")
        self.summary.setStyleSheet("")
        self.step_label.setText("Starting…")
        self.progress.setValue(0)
        self.start_button.setEnabled(False)
        self.quick.setEnabled(False)
        self.transfers.setEnabled(False)
        self.cancel_button.setEnabled(True)
        worker.start()
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.step_label.setText("Cancelling…")

    def shutdown(self, timeout_ms: int = 10000) -> None:
        """Cancel and wait (the dialog or the window is closing)."""
        if self.worker is not None:
            self.worker.cancel()
            self.worker.wait(timeout_ms)

    def reject(self) -> None:
        self.shutdown()
        super().reject()

    def _step_started(self, step: Any) -> None:
        self._steps, self._step = max(step.total, 1), step.index
        self.step_label.setText(f"Step {step.index + 1} of {step.total}: {step.label} — {step.declaration}")
        self.progress.setValue(int(1000 * step.index / self._steps))

    def _samples_arrived(self, batch: Any) -> None:
        self.progress.setValue(int(1000 * (self._step + batch.progress) / self._steps))

    def _finished(self, result: Any) -> None:
        self.result = result
        self.progress.setValue(1000 if not result.cancelled else self.progress.value())
        lines = result_lines(result, self.backend == "cupy", self.document.binary, self._memory_name())
        if result.cancelled:
            self.step_label.setText("Cancelled: nothing was stored.")
            self.summary.setText("Measured before the cancel (not stored):\n" + "\n".join(lines) if lines else "")
            return
        if not result.rates:
            self.step_label.setText("Nothing was measured, so nothing was stored.")
            self._show_problem("\n".join(lines) or "no step produced a rate")
            return
        if self.document.session.device.key != self._device_key or self.document.device is None:
            self.step_label.setText("The session's device changed during the calibration: nothing was stored.")
            self.summary.setText("\n".join(lines))
            return
        store_measured_rates(self.document, result.rates, result.latencies)
        self.stored = True
        self.step_label.setText(f"Done on {result.device}. Stored as measured rates of {self.document.device.name}:")
        self.summary.setText("\n".join(lines))

    def _memory_name(self) -> str:
        device = self.document.device
        return device.memory_name if device is not None else ""

    def _failed(self, message: str) -> None:
        self.step_label.setText("The calibration stopped; nothing was stored.")
        self._show_problem(message)

    def _show_problem(self, text: str) -> None:
        self.summary.setText(f"⚠ {text}")
        self.summary.setStyleSheet("color: #b71c1c; font-weight: 600;")

    def _worker_done(self) -> None:
        worker = self.worker
        if worker is None:
            return
        worker.wait()
        self.worker = None
        self.start_button.setEnabled(self.document.device is not None)
        self.start_button.setText("Calibrate again")
        self.quick.setEnabled(True)
        self.transfers.setEnabled(True)
        self.cancel_button.setEnabled(False)


def store_measured_rates(document: Document, rates: dict[str, Any], latencies: Sequence[Any] = ()) -> None:
    """Put measured rates (and HBM latencies: `LatencyReading`s) in place of the session device's figures, in one
    undoable step."""
    old = document.session.device
    new = copy.deepcopy(old)
    for path, rate in rates.items():
        if rate.source == MEASURED and rate.value > 0:
            new.overrides[path] = rate
    for reading in latencies:
        new.latencies.setdefault(LATENCY_INTERFACE, {})[reading.load] = Latency(reading.seconds, MEASURED, reading.how)
    if new.overrides != old.overrides or new.latencies != old.latencies:
        document.core.replace_device(new, "Store measured rates")


def result_lines(result: Any, gpu: bool, binary: bool, memory_name: str = "") -> list[str]:
    """The dialog's summary: every rate, every transfer with how it was measured, what was skipped, notes."""
    lines = [f"{_title(path, gpu, memory_name)}: {_rate_text(path, rate.value, binary)}" for path, rate in result.rates.items()]
    transfers = transfer_lines(result, binary)
    if transfers:
        lines += ["", *transfers]
    latencies = latency_lines(result)
    if latencies:
        lines += ["", *latencies]
    lines += [f"skipped — {reason}" for reason in result.skipped]
    lines += [f"note — {note}" for note in result.notes]
    return lines


def _title(path: str, gpu: bool, memory_name: str = "") -> str:
    """'Memory bandwidth (HBM)', 'FP16 tensor cores' on a GPU; 'Memory bandwidth (DRAM)' and the path alone
    ('FP32') on a CPU, which has no HBM and no CUDA cores; interfaces and links by their names."""
    if path in PATHS and not gpu:
        return path.upper()
    title = rate_title(path, gpu, memory_name)
    return title[:1].upper() + title[1:]


def _rate_text(path: str, value: float, binary: bool) -> str:
    return format_bandwidth(value, binary) if is_byte_rate(path) else format_flop_rate(value)
