"""Running a measurement from the Measurement tab: the estimate, the long-run question, the worker and its progress.

`MeasureRunning` is the running part of `MeasurementTab` (gui/measure_tab.py):
it starts a `MeasurementWorker` with the tab's settings, shows the run in
progress as the table's live row, and stores each finished run in the session.
"""

from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from workbench.model.declare import Declaration
from workbench.errors import WorkbenchError
from workbench.gui.long_run_question import LongRunQuestion
from workbench.gui.measure_runs import MeasuredRun, add_run, document_context
from workbench.gui.measure_worker import MeasurementJob, MeasurementWorker
from workbench.gui.run_table import RUNNING
from workbench.measure import PhaseChanged, RunRecord, RunStarted, SampleBatch
from workbench.measure.estimate import (
    LONG_RUN_S,
    Alternative,
    RunEstimate,
    alternatives,
    estimate_run,
    estimate_total,
    format_duration,
    rescaled,
)
from workbench.measure.record import CANCELLED
from workbench.measure.runs import run_figures, run_in_progress
from workbench.model.units import format_time


class MeasureRunning:
    """The running part of `MeasurementTab`: start, estimate, ask, cancel, and follow the worker's signals."""

    @property
    def running(self) -> bool:
        return self.worker is not None

    def _enable_controls(self) -> None:
        running = self.running
        declaration, _ = self.current_declaration()
        ready = self.backends is not None and self._choice(self.backend_box.currentData()).available
        self.run_button.setEnabled(not running and ready and declaration is not None and self.question is None)
        self.cancel_button.setEnabled(running)
        for widget in (self.backend_box, self.iterations, self.mode_box, self.sweep_box):
            widget.setEnabled(not running)
        self._sweep_toggled(self.sweep_box.isChecked())
        self.remove_button.setEnabled(not running and self._selected_stored_row() is not None)

    def start(self, ask: bool = True) -> bool:
        """Start measuring the selected operation (or its sweep) with the tab's settings; False with a message if not.

        With `ask`, the run is estimated first (the bound and a short probe, well under a second); when
        it is expected to take longer than LONG_RUN_S the long-run question opens instead, and the run
        (or the quicker one chosen there) starts from its answer — start() then returns False.
        """
        if self.running or self._closing or self.question is not None:
            return False
        if self.backends is None:
            self.show_message("The backends are still being checked; try again in a moment.")
            return False
        try:
            declarations = self.declarations_to_run()
        except WorkbenchError as exc:
            self.show_message(str(exc))
            return False
        if ask:
            QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                estimates = self.estimate(declarations)
            finally:
                QApplication.restoreOverrideCursor()
            refused = next((e.refused for e in estimates if e.refused), "")
            if refused:  # nothing to offer: the run would fail at once
                self.show_message(refused)
                return False
            self._show_estimate_text(estimates)
            total = estimate_total(estimates) if estimates else None
            if total is not None and total > LONG_RUN_S:
                self._ask(declarations, estimates)
                return False
        return self._start_job(declarations)

    def _start_job(self, declarations: Sequence[Declaration]) -> bool:
        if self.running or self._closing:
            return False
        entry = self.document.current_entry
        settings = self.document.session.settings
        job = MeasurementJob(
            declarations=tuple(declarations),
            backend=self.resolved_backend(),
            iterations=self.iterations.value(),
            mode=str(self.mode_box.currentData()),
            device=self.bound_device(),
            convention=settings.convention,
            overlap=float(settings.overlap),
            operation_name=entry.name if entry is not None else declarations[0].op,
        )
        worker = MeasurementWorker(job)  # no parent: dropped (and deleted) once it has been waited for
        worker.run_started.connect(self._run_started)
        worker.phase_changed.connect(self._phase_changed)
        worker.samples_arrived.connect(self._samples_arrived)
        worker.run_finished.connect(self._run_finished)
        worker.run_failed.connect(self._run_failed)
        worker.finished.connect(self._worker_done)
        self.worker = worker
        self._job = job
        self._job_session = self.document.session
        self.hide_message()
        self.model.set_live(None)
        self.progress.setValue(0)
        self.progress.setFormat(f"starting {declarations[0]}…")
        self._enable_controls()
        worker.start()
        return True

    # ------------------------------------------------------------------ the estimate and the long-run question
    def _estimate_device(self, backend: str) -> Any:
        """The device model a run's estimate is bounded on: the CPU entry for NumPy; for CuPy the session's
        device when it is a GPU (the GPU the run finds is only known when it runs)."""
        session = self.document.device
        if backend == "cupy" and session is not None and session.kind == "gpu":
            return session
        return "auto"

    def estimate(self, declarations: Sequence[Declaration], probe: bool = True) -> list[RunEstimate]:
        """One estimate per declaration: the largest (the last of a sweep) probed, the others scaled from it;
        [] when there is none (the backend cannot be opened)."""
        if not declarations:
            return []
        backend = self.resolved_backend()
        settings = self.document.session.settings
        device = self._estimate_device(backend)
        largest = declarations[-1]
        try:
            main = estimate_run(largest, backend=backend, iterations=self.iterations.value(), device=device,
                                convention=settings.convention, overlap=float(settings.overlap), probe=probe)
            return [main if d is largest else rescaled(main, d, settings.convention, device, float(settings.overlap))
                    for d in declarations]
        except WorkbenchError:
            return []

    def _show_estimate(self, *_: object) -> None:
        """The bound's estimate of the next run, live as the operation and settings change (no probe: Run probes)."""
        if self.running or self.backends is None:
            return
        try:
            declarations = self.declarations_to_run()
        except WorkbenchError:
            self.estimate_label.setText("")
            return
        estimates = self.estimate(declarations, probe=False)
        refused = next((e.refused for e in estimates if e.refused), "")
        if refused:
            self.estimate_label.setText(f"Cannot run here: {refused}")
            return
        if not estimates or estimate_total(estimates) is None:
            self.estimate_label.setText("Run time: no estimate before the run" +
                                        (f" ({estimates[0].note})" if estimates and estimates[0].note else "") + ".")
            return
        text = self._estimate_words(estimates)
        if self.resolved_backend() == "numpy":
            text += "; Run times a small size first and asks before anything over " + format_duration(LONG_RUN_S)
        self.estimate_label.setText(text + ".")

    @staticmethod
    def _estimate_words(estimates: Sequence[RunEstimate]) -> str:
        total = estimate_total(estimates) or 0.0
        if len(estimates) == 1:
            return f"Run time: {estimates[0].text()}"
        how = "about" if estimates[-1].probe is not None else "at least"
        return f"Run time: {how} {format_duration(total)} for {len(estimates)} sizes ({estimates[-1].text()} for the largest)"

    def _show_estimate_text(self, estimates: Sequence[RunEstimate]) -> None:
        if estimates and estimate_total(estimates) is not None:
            self.estimate_label.setText(self._estimate_words(estimates) + ".")

    def _ask(self, declarations: Sequence[Declaration], estimates: Sequence[RunEstimate]) -> None:
        """Open the long-run question (window-modal); its answer starts the run, a quicker one, or nothing."""
        offers: list[Alternative] = []
        if len(declarations) == 1:
            settings = self.document.session.settings
            QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                offers = alternatives(estimates[0], convention=settings.convention,
                                      device=self._estimate_device(self.resolved_backend()),
                                      overlap=float(settings.overlap))
            except WorkbenchError:
                offers = []
            finally:
                QApplication.restoreOverrideCursor()
        question = LongRunQuestion(declarations, estimates, offers, self.window())
        question.answered.connect(self._question_answered)
        self.question = question
        self._enable_controls()
        question.open()

    def _question_answered(self, chosen: tuple[Declaration, ...] | None) -> None:
        question = self.question
        self.question = None
        if question is not None:
            question.deleteLater()
        self._enable_controls()
        if question is not None and chosen and chosen != question.declarations:
            # a quicker run instead: its own estimate, not the long one's, is what the label says while it runs
            offer = next((o for o in question.offers if (o.declaration,) == tuple(chosen)), None)
            self.estimate_label.setText(self._estimate_words([offer.estimate]) + "." if offer is not None else "")
        elif not chosen:
            self._show_estimate()  # nothing runs: the label says the next run's bound again
        if chosen:
            self._start_job(chosen)

    def cancel(self) -> None:
        """Stop the run in progress (it ends within half a second) and the rest of a sweep."""
        if self.worker is not None:
            self.worker.cancel()
            self.progress.setFormat("cancelling…")

    def shutdown(self, timeout_ms: int = 10000) -> None:
        """Cancel the measurement and the calibration, and wait for their threads (the window is closing)."""
        self._closing = True
        if self.question is not None:
            self.question.choose(None)
        if self.worker is not None:
            self.worker.cancel()
        if self.calibration is not None:
            self.calibration.shutdown(timeout_ms)
        self.wait(timeout_ms)

    def wait(self, timeout_ms: int = 10000) -> None:
        """Wait for the backend probe, a measurement and a calibration in progress to end."""
        for worker in (self._probe, self.worker, getattr(self.calibration, "worker", None)):
            if worker is not None:
                worker.wait(timeout_ms)

    def _prefix(self, index: int) -> str:
        count = len(self._job.declarations) if self._job is not None else 1
        return f"{index + 1}/{count} " if count > 1 else ""

    def _overall(self, index: int, fraction: float) -> int:
        count = len(self._job.declarations) if self._job is not None else 1
        return int(1000 * (index + min(max(fraction, 0.0), 1.0)) / max(count, 1))

    def _run_started(self, index: int, started: RunStarted) -> None:
        self._live_started = started
        self._live_samples = []
        self._live_phase = "starting"
        self._show_live(index)
        self.table.selectRow(self.model.rowCount() - 1)

    def _phase_changed(self, index: int, phase: PhaseChanged) -> None:
        self._live_phase = phase.phase
        self.progress.setFormat(f"{self._prefix(index)}{phase.phase}" + (f": {phase.detail}" if phase.detail else ""))
        self.progress.setValue(self._overall(index, 0.0))
        self._show_live(index)

    def _samples_arrived(self, index: int, batch: SampleBatch) -> None:
        self._live_samples.extend(batch.samples_s)
        self.progress.setValue(self._overall(index, batch.progress))
        self.progress.setFormat(f"{self._prefix(index)}timing: {batch.done} of {batch.total} iterations")
        self._show_live(index)

    def _live_run(self, status: str, check: str) -> MeasuredRun | None:
        """The run in progress with its figures so far (the table's live row), or None between runs."""
        started = self._live_started
        if started is None or self._job is None:
            return None
        run = run_in_progress(started, self._live_samples, self._job.operation_name, status, check)
        return run_figures(run, document_context(self.document))

    def _show_live(self, index: int) -> None:
        started = self._live_started
        total = started.iterations if started is not None else 0
        detail = f"{self._live_phase} {len(self._live_samples)}/{total}" if self._live_phase == "timing" else self._live_phase
        run = self._live_run(RUNNING, "running")
        self.model.set_live(run, detail)
        if run is not None and self._selected_row() == self.model.rowCount() - 1:
            self.histogram.show_samples(run.samples_s, f"{run.declaration_text} (running)")

    def _run_finished(self, index: int, record: RunRecord) -> None:
        if record.status == CANCELLED and self.document.session is not self._job_session:
            self._live_started = None
            self.model.set_live(None)
            self.show_message(f"Another session was opened, so the run of {record.declaration} was cancelled and not stored.")
            self.progress.setFormat("cancelled")
            return
        if record.status == CANCELLED:
            run = self._live_run(CANCELLED, record.message)
            self.model.set_live(run, record.message)
            self.progress.setFormat(f"cancelled: {record.message}")
            live_row = self.model.rowCount() - 1
            if run is not None and self._selected_row() == live_row:  # the histogram no longer says "running"
                self._row_selected(self.model.index(live_row, 0), QModelIndex())
            return
        self._live_started = None
        self.model.set_live(None)
        if self._closing:
            return
        if self.document.session is not self._job_session:
            self.show_message(f"The session was replaced during the run: the run of {record.declaration} was not stored.")
            return
        add_run(self.document, record, self._job.operation_name if self._job is not None else record.operation)
        self.table.selectRow(len(self.model.runs) - 1)
        self.progress.setValue(self._overall(index, 1.0))
        verdict = "check passed" if record.valid else "INVALID: " + record.message
        median = format_time(record.median_s) if record.median_s is not None else "no samples"
        self.progress.setFormat(f"{self._prefix(index)}done: {record.declaration}, median {median}, {verdict}")

    def _run_failed(self, index: int, message: str) -> None:
        self._live_started = None
        self.model.set_live(None)
        declaration = self._job.declarations[index] if self._job is not None and index < len(self._job.declarations) else ""
        self.show_message(message if not declaration or str(declaration) in message else f"{declaration}: {message}")
        self.progress.setFormat("failed")

    def _worker_done(self) -> None:
        worker = self.worker
        if worker is None:
            return
        worker.wait()
        if worker.cancelled and self.progress.format().startswith(("cancelling", "starting")):
            self.progress.setFormat("cancelled")
        self.worker = None
        self._enable_controls()
        self.measurement_finished.emit()
