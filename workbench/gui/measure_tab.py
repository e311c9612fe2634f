"""The Measurement tab: run the selected operation for real, watch it, and keep every run in the session.

Top: the backend (auto, CuPy, NumPy — CuPy greyed out with the reason when
it cannot run) and the device it runs on, iterations, warm or cold mode, an
optional size sweep, Run and Cancel, a progress bar naming the phase. Below:
the session's runs in a table (median, p10–p90, achieved rates, fraction of
the bound on the device each run ran on — ◇ when that is not the device the
session shows, ⚠ when the run is faster than its device allows — the
reference check) with the run in progress as a live last row, and a
histogram of the raw samples of the selected run.

Runs execute in a `MeasurementWorker` thread that pushes typed signals; each
finished run is stored in `Session.runs` through an undoable command, so it
is saved with the session, drawn on the plots and read by reports. A
cancelled run is shown (greyed, "cancelled") but not stored.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget

from workbench.model.declare import Declaration
from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.gui.long_run_question import LongRunQuestion
from workbench.gui.measure_layout import BACKEND_LABELS, MeasureTabLayout, OneLineProgress
from workbench.gui.measure_runs import document_runs, remove_run
from workbench.gui.measure_running import MeasureRunning
from workbench.gui.measure_worker import BackendChoice, BackendProbeWorker, MeasurementJob, MeasurementWorker
from workbench.gui.run_table import NAME_COLUMN_CHARS, RUNNING
from workbench.gui.plain_text import html_text, tooltip
from workbench.measure import RunStarted
from workbench.measure.record import CANCELLED, OK
from workbench.measure.sweep import powers_of_two, sweep_choices, sweep_declarations

__all__ = ["MeasurementTab", "OneLineProgress"]


class MeasurementTab(MeasureTabLayout, MeasureRunning, QWidget):
    """Controls, progress, the runs table and the histogram; owns the measurement worker.

    Its widgets are built in gui/measure_layout.py and its runs started and
    followed in gui/measure_running.py; the tab keeps the backends, the
    operation and its sweep, the stored runs, calibration and messages.
    """

    measurement_finished = Signal()  # a job ended (finished, failed or cancelled); the tab is idle again

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.backends: tuple[BackendChoice, ...] | None = None
        self.worker: MeasurementWorker | None = None
        self._probe: BackendProbeWorker | None = None
        self._job: MeasurementJob | None = None
        self._job_session: object = None  # the Session the job was started in: its runs go there only
        self._live_samples: list[float] = []
        self._live_started: RunStarted | None = None
        self._live_phase = ""
        self._closing = False
        self._sweep_choices: list[tuple[str, ...]] = []
        self._sweep_op: str | None = None
        self.calibration: Any = None  # the open CalibrationDialog (gui/calibration_dialog.py)
        self.question: LongRunQuestion | None = None  # open while a long run waits for an answer

        self._build()
        document.runs_changed.connect(self.refresh_runs)
        document.session_replaced.connect(self._session_replaced)
        document.settings_changed.connect(self.refresh_runs)
        document.device_changed.connect(self._show_bound_device)
        document.device_changed.connect(self.refresh_runs)  # a run's device note and its device's rates
        document.selection_changed.connect(self._operation_changed)
        document.analysis_changed.connect(self._operation_changed)
        self.refresh_runs()
        self._operation_changed()
    # ------------------------------------------------------------------ backends (probed once, off the GUI thread)
    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        self.probe_backends()

    def probe_backends(self) -> None:
        """Find out which backends can run here (once; the tab shows 'checking…' meanwhile)."""
        if self.backends is not None or self._probe is not None:
            return
        probe = BackendProbeWorker()  # no parent: dropped (and deleted) once it has been waited for
        probe.backends_probed.connect(self._backends_probed)
        self._probe = probe
        probe.start()

    def _backends_probed(self, choices: tuple[BackendChoice, ...]) -> None:
        self.backends = choices
        model = self.backend_box.model()
        for choice in choices:
            row = self.backend_box.findData(choice.name)
            item = model.item(row)  # type: ignore[attr-defined]
            item.setEnabled(choice.available)
            tip = f"Runs on {choice.device}" if choice.available else f"Not available: {choice.message}"
            self.backend_box.setItemData(row, tooltip(tip), Qt.ItemDataRole.ToolTipRole)
        auto = self.resolved_backend()
        self.backend_box.setItemText(self.backend_box.findData("auto"), f"Auto ({BACKEND_LABELS[auto].split(' (')[0]})")
        if not self._choice(self.backend_box.currentData()).available:
            self.backend_box.setCurrentIndex(self.backend_box.findData("auto"))
        self._show_backend_device()
        self._enable_controls()
        self._show_estimate()
        if self._probe is not None:
            self._probe.wait()
            self._probe = None

    def _choice(self, name: str) -> BackendChoice:
        if name == "auto":
            return self._choice(self.resolved_backend())
        for choice in self.backends or ():
            if choice.name == name:
                return choice
        return BackendChoice(name, False, "not checked yet", "", "gpu" if name == "cupy" else "cpu")

    def resolved_backend(self) -> str:
        """The backend a run would use now: the chosen one, or for auto CuPy when it can run, else NumPy."""
        chosen = self.backend_box.currentData()
        if chosen != "auto":
            return str(chosen)
        cupy = next((c for c in self.backends or () if c.name == "cupy"), None)
        return "cupy" if cupy is not None and cupy.available else "numpy"

    def select_backend(self, name: str) -> None:
        """Choose a backend by name (auto, cupy, numpy), as the chooser does."""
        self.backend_box.setCurrentIndex(self.backend_box.findData(name))

    def _show_backend_device(self, *_: object) -> None:
        if self.backends is None:
            self.device_label.setText("Checking which backends can run here…")
            return
        choice = self._choice(self.backend_box.currentData())
        cupy = self._choice("cupy")
        text = f"Runs on {choice.device}." if choice.available else f"Cannot run: {choice.message}."
        if not cupy.available and choice.name != "cupy":  # said once: the chosen CuPy's reason is already above
            text += f"  CuPy is unavailable: {cupy.message}."
        self.device_label.setText(text)
        self._show_bound_device()

    def bound_device(self) -> Any:
        """The device a new run is compared with: always the one it runs on ("auto": matched from what the
        hardware states), never the session's device standing in for it."""
        return "auto"

    def _show_bound_device(self) -> None:
        if self.backends is None:
            self.bound_label.setText("")
            return
        choice = self._choice(self.resolved_backend())
        session = self.document.device
        if choice.kind == "cpu":
            from workbench.model.devices.provenance import cpu_catalogue_device

            try:
                own = cpu_catalogue_device().name.split(" (")[0]
            except WorkbenchError:
                own = "the CPU"
        else:
            own = "the GPU it runs on"
        text = f"% bound: against the device each run ran on — {own} for a new run"
        if session is not None and session.kind != choice.kind:
            text += f"; the session shows {session.name}, so these runs are marked as from another device"
        self.bound_label.setText(text + ".")

    # ------------------------------------------------------------------ the operation and the sweep
    def current_declaration(self) -> tuple[Declaration | None, str]:
        """The selected operation's valid declaration, or None and why not."""
        entry = self.document.current_entry
        if entry is None:
            return None, "Select an operation to measure."
        state = self.document.state(entry)
        if state.error is not None:
            return None, f"Fix the declaration of {entry.name} first: {state.error}"
        if state.analysis is None:
            return None, f"{entry.name} has no analysis yet."
        return state.analysis.declaration, ""

    def _operation_changed(self, *_: object) -> None:
        declaration, why = self.current_declaration()
        entry = self.document.current_entry
        if declaration is None:
            self.operation.setText(html_text(why))
        else:
            name = entry.name if entry is not None else declaration.op
            self.operation.setText(f"<b>{html_text(name)}</b>: <code>{html_text(str(declaration))}</code>")
        self._fill_sweep_fields(declaration)
        self._enable_controls()
        self._show_estimate()

    def _fill_sweep_fields(self, declaration: Declaration | None) -> None:
        state = self.document.state(self.document.current_entry) if self.document.current_entry is not None else None
        analysis = state.analysis if state is not None and state.error is None else None
        choices = sweep_choices(analysis) if analysis is not None else []
        op = declaration.op if declaration is not None else None
        if choices == self._sweep_choices and op == self._sweep_op:
            return
        previous = self.sweep_fields()
        self._sweep_choices, self._sweep_op = choices, op
        self.sweep_field.blockSignals(True)
        self.sweep_field.clear()
        self.sweep_field.addItems(["=".join(group) for group in choices])
        keep = choices.index(previous) if previous in choices else 0
        self.sweep_field.setCurrentIndex(keep if choices else -1)
        self.sweep_field.blockSignals(False)
        if previous not in choices:
            self._sweep_field_chosen()

    def _sweep_field_chosen(self, *_: object) -> None:
        """Default range: sixteen times smaller up to the declared size."""
        declaration, _why = self.current_declaration()
        fields = self.sweep_fields()
        if declaration is None or not fields:
            return
        value = declaration.params.get(fields[0])
        top = max(int(math.log2(value)), 1) if isinstance(value, int) and value > 0 else 10
        self.set_sweep_range(max(top - 4, 0), top)

    def set_sweep_range(self, low: int, high: int) -> None:
        self.sweep_low.setValue(low)
        self.sweep_high.setValue(high)

    def sweep_fields(self) -> tuple[str, ...]:
        index = self.sweep_field.currentIndex()
        return self._sweep_choices[index] if 0 <= index < len(self._sweep_choices) else ()

    def _sweep_toggled(self, on: bool) -> None:
        for widget in (self.sweep_field, self.sweep_low, self.sweep_high):
            widget.setEnabled(on and not self.running)

    def declarations_to_run(self) -> list[Declaration]:
        """The declaration, or with a sweep one per power of two; DeclarationError for a bad size."""
        declaration, why = self.current_declaration()
        if declaration is None:
            raise WorkbenchError(why)
        if not self.sweep_box.isChecked():
            return [declaration]
        sizes = powers_of_two(self.sweep_low.value(), self.sweep_high.value())
        return sweep_declarations(declaration, self.sweep_fields(), sizes)


    # ------------------------------------------------------------------ the runs
    def refresh_runs(self, *_: object) -> None:
        """Rebuild the table from Session.runs, keeping the selected run selected."""
        selected = self._selected_row()
        selected_run = self.model.run_at(selected) if selected is not None else None
        live, detail = self.model.live, self.model.live_detail
        self.model.set_live(None)
        self.model.set_runs(document_runs(self.document), self.document.binary)
        if live is not None:
            self.model.set_live(live, detail)
        row = None
        if selected_run is not None:
            if selected_run.index < 0 and live is not None:
                row = self.model.rowCount() - 1
            else:
                row = next((i for i, run in enumerate(self.model.runs) if run.id == selected_run.id), None)
        if row is not None:
            self.table.selectRow(row)
        else:
            self.table.clearSelection()
            self._row_selected(QModelIndex(), QModelIndex())
        self._enable_controls()

    def _session_replaced(self) -> None:
        if self.question is not None:
            self.question.choose(None)  # a question about the previous session's operation
        if self.worker is not None:
            self.worker.cancel()  # its runs belong to the session it was started in
        else:
            self.model.set_live(None)
            self.progress.setValue(0)  # "done: add(…)" was the previous session's run
            self.progress.setFormat("idle")
        self.hide_message()
        self._operation_changed()
        self._show_bound_device()

    def _selected_row(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def _selected_stored_row(self) -> int | None:
        row = self._selected_row()
        return row if row is not None and row < len(self.model.runs) else None

    def _row_selected(self, current: QModelIndex, previous: QModelIndex) -> None:
        run = self.model.run_at(current.row()) if current.isValid() else None
        if run is None:
            self.histogram.show_samples((), "Select a run to see its raw samples." if self.model.rowCount() else
                                        "No runs yet: choose the settings above and press Run.")
        else:
            how = {RUNNING: "running", CANCELLED: "cancelled"}.get(run.status) or f"{run.backend} {run.mode}".strip()
            self.histogram.show_samples(run.samples_s, f"{run.declaration_text} ({how})", bad=run.status not in (OK, RUNNING))
        self.remove_button.setEnabled(not self.running and current.isValid() and current.row() < len(self.model.runs))

    def _fit_columns(self, *_: object) -> None:
        """Columns as wide as their contents and their headers (the table scrolls sideways where they are wider
        than it), the operation name at most NAME_COLUMN_CHARS characters of the text size in use."""
        self.table.resizeColumnsToContents()
        header = self.table.horizontalHeader()
        most = max(self.table.fontMetrics().averageCharWidth() * NAME_COLUMN_CHARS, header.sectionSizeHint(0))
        if self.table.columnWidth(0) > most:
            self.table.setColumnWidth(0, most)

    def select_run(self, row: int) -> None:
        self.table.selectionModel().setCurrentIndex(
            self.model.index(row, 0),
            QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
        )

    def remove_selected(self) -> None:
        row = self._selected_stored_row()
        if row is not None:
            remove_run(self.document, self.model.runs[row].index)

    # ------------------------------------------------------------------ calibration (gui/calibration_dialog.py)
    def open_calibration(self) -> Any:
        """Open the calibration dialog for the session's device (one at a time)."""
        from workbench.gui.calibration_dialog import CalibrationDialog

        if self.calibration is not None:
            self.calibration.raise_()
            self.calibration.activateWindow()
            return self.calibration
        dialog = CalibrationDialog(self.document, self.window())
        dialog.finished.connect(self._calibration_closed)
        self.calibration = dialog
        dialog.open()
        return dialog

    def _calibration_closed(self, *_: object) -> None:
        dialog = self.calibration
        self.calibration = None
        if dialog is not None:
            dialog.shutdown()
            dialog.deleteLater()

    # ------------------------------------------------------------------ messages and fonts
    def show_message(self, text: str) -> None:
        self.message.setText(f"⚠ {text}")
        self.message.setStyleSheet("color: #b71c1c; font-weight: 600;")
        self.message.setVisible(True)

    def hide_message(self) -> None:
        self.message.setVisible(False)
        self.message.setText("")

    def set_base_font(self, font: QFont) -> None:
        size = f"{max(font.pointSizeF(), 6):.0f}pt"
        for name in ("bottom", "left"):
            axis = self.histogram.plot.getAxis(name)
            axis.setStyle(tickFont=font)
            axis.setLabel(axis.labelText, **{"font-size": size})
        self.histogram.message.setFont(font)
        # the columns fitted again at the new size once it has reached the table (the headers were cut at
        # presentation size: their columns kept the widths fitted to the smaller text)
        QTimer.singleShot(0, self._fit_columns)
