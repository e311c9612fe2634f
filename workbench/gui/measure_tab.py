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
from typing import Any, Sequence

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from workbench.declare import Declaration
from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.gui.long_run_question import LongRunQuestion
from workbench.gui.measure_runs import MeasuredRun, add_run, document_context, document_runs, remove_run
from workbench.gui.measure_worker import (
    BackendChoice,
    BackendProbeWorker,
    MeasurementJob,
    MeasurementWorker,
)
from workbench.gui.power_box import PowerOfTwoBox
from workbench.gui.run_table import NAME_COLUMN_CHARS, RUNNING, RunTableModel
from workbench.gui.sample_histogram import SampleHistogram
from workbench.gui.plain_text import html_text, plain, tooltip
from workbench.gui.scroll_page import scrolled_content
from workbench.measure import (
    COLD,
    DEFAULT_ITERATIONS,
    MIN_ITERATIONS,
    WARM,
    PhaseChanged,
    RunRecord,
    RunStarted,
    SampleBatch,
)
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
from workbench.measure.record import CANCELLED, OK
from workbench.measure.sweep import powers_of_two, sweep_choices, sweep_declarations
from workbench.runs import run_figures, run_in_progress
from workbench.units import format_time

MAX_TAB_ITERATIONS = 100_000
FIT_ROWS = 200  # rows beyond those on screen that a fit of the run table's columns reads (see _make_runs_table)
BACKEND_LABELS = {"auto": "Auto", "cupy": "CuPy (NVIDIA GPU)", "numpy": "NumPy (CPU)"}
MODE_TIPS = {
    WARM: "Warm: the same buffers every iteration, no flush between them — data may still sit in the "
    "cache from the last call (as cupyx.profiler.benchmark times).",
    COLD: "Cold: a buffer larger than the last-level cache is written before every iteration, so each "
    "call starts from memory (as triton.testing.do_bench times). The flush is not timed.",
}


class OneLineProgress(QProgressBar):
    """The run's progress bar, whose text (the phase, or the result line) stays on the bar's one line: elided to its
    width, the whole text in its tooltip and in `format()`. (The Fusion style wraps a text longer than the bar onto
    a second line inside it, and the bar, one line tall, cuts both in half.)"""

    _whole = ""

    def setFormat(self, text: str) -> None:  # noqa: N802
        self._whole = text
        self.setToolTip(text)
        self._elide()

    def format(self) -> str:
        return self._whole

    def _elide(self) -> None:
        room = max(self.contentsRect().width() - 2 * self.fontMetrics().averageCharWidth(), 0)
        super().setFormat(self.fontMetrics().elidedText(self._whole, Qt.TextElideMode.ElideRight, room))

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event: Any) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._elide()


class MeasurementTab(QWidget):
    """Controls, progress, the runs table and the histogram; owns the measurement worker."""

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

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        self._make_settings()
        self._make_sweep()
        self._make_run_controls()
        self._make_runs_table()
        self._lay_out()
        self._sweep_toggled(False)
        self._enable_controls()

    def _make_settings(self) -> None:
        """The operation, the backend and its device, the bound's device, the estimate, iterations and mode."""
        self.operation = QLabel()
        self.operation.setTextFormat(Qt.TextFormat.RichText)  # built HTML: the name and declaration escaped
        self.operation.setObjectName("measureOperation")
        self.operation.setWordWrap(True)
        self.backend_box = QComboBox()
        self.backend_box.setObjectName("measureBackend")
        for key in ("auto", "cupy", "numpy"):
            self.backend_box.addItem(BACKEND_LABELS[key], key)
        self.backend_box.setToolTip("The array library that runs the kernel: CuPy on an NVIDIA GPU, NumPy on this CPU")
        self.backend_box.currentIndexChanged.connect(self._show_backend_device)
        self.backend_box.currentIndexChanged.connect(self._show_estimate)
        self.device_label = plain(QLabel("Checking which backends can run here…"))
        self.device_label.setObjectName("measureDevice")
        self.device_label.setWordWrap(True)
        self.bound_label = plain(QLabel())
        self.bound_label.setObjectName("measureBoundDevice")
        self.bound_label.setWordWrap(True)
        self.bound_label.setStyleSheet("color: #555;")
        self.estimate_label = plain(QLabel())
        self.estimate_label.setObjectName("measureEstimate")
        self.estimate_label.setWordWrap(True)
        self.estimate_label.setStyleSheet("color: #555;")
        self.estimate_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.iterations = QSpinBox()
        self.iterations.setObjectName("measureIterations")
        self.iterations.setRange(MIN_ITERATIONS, MAX_TAB_ITERATIONS)
        self.iterations.setValue(DEFAULT_ITERATIONS)
        self.iterations.setToolTip(f"Timed iterations (at least {MIN_ITERATIONS}); every raw sample is kept")
        self.iterations.valueChanged.connect(self._show_estimate)
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("measureMode")
        for mode in (WARM, COLD):
            self.mode_box.addItem(mode, mode)
            self.mode_box.setItemData(self.mode_box.count() - 1, MODE_TIPS[mode], Qt.ItemDataRole.ToolTipRole)
        self.mode_box.setToolTip("\n\n".join(MODE_TIPS.values()))

    def _make_sweep(self) -> None:
        """The optional size sweep: which field(s), from 2^low to 2^high."""
        self.sweep_box = QCheckBox("Size sweep")
        self.sweep_box.setObjectName("measureSweep")
        self.sweep_box.setToolTip("Measure the operation at every power of two of one size field, the others as declared")
        self.sweep_field = QComboBox()
        self.sweep_field.setObjectName("measureSweepField")
        self.sweep_low = PowerOfTwoBox()
        self.sweep_high = PowerOfTwoBox()
        self.sweep_box.toggled.connect(self._sweep_toggled)
        self.sweep_field.activated.connect(self._sweep_field_chosen)

    def _make_run_controls(self) -> None:
        """Run, Cancel, the progress bar naming the phase, and the one-line message."""
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("measureRun")
        self.run_button.setToolTip("Measure the selected operation (Ctrl+R)")
        self.run_button.setShortcut("Ctrl+R")
        self.run_button.clicked.connect(lambda: self.start())  # not start(checked): that would skip the question
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("measureCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = OneLineProgress()
        self.progress.setObjectName("measureProgress")
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.message = plain(QLabel())
        self.message.setObjectName("measureMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setVisible(False)

    def _make_runs_table(self) -> None:
        """The session's runs (and the live row), Remove run, Calibrate, and the samples histogram."""
        self.model = RunTableModel(self)
        self.table = QTableView()
        self.table.setObjectName("runTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        # Columns are fitted to the rows on screen and FIT_ROWS more (Qt's default: 1,000 rows, every cell of
        # which it lays out as text at each fit: seconds on the GUI thread when a session of thousands opens).
        for fitted in (self.table.horizontalHeader(), self.table.verticalHeader()):
            fitted.setResizeContentsPrecision(FIT_ROWS)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        self.model.modelReset.connect(self._fit_columns)
        self.model.rowsInserted.connect(self._fit_columns)
        self.table.selectionModel().currentRowChanged.connect(self._row_selected)
        self.remove_button = QPushButton("Remove run")
        self.remove_button.setObjectName("measureRemoveRun")
        self.remove_button.setToolTip("Take the selected run out of the session (Undo brings it back)")
        self.remove_button.clicked.connect(self.remove_selected)
        self.calibrate_button = QPushButton("Calibrate device…")
        self.calibrate_button.setObjectName("measureCalibrate")
        self.calibrate_button.setToolTip("Measure this machine's sustained bandwidth and matrix rates and use them as the bounds")
        self.calibrate_button.clicked.connect(self.open_calibration)
        self.histogram = SampleHistogram()

    def _lay_out(self) -> None:
        """Settings over the run row, the table over the histogram in a splitter."""
        settings = QGridLayout()
        settings.setHorizontalSpacing(8)
        settings.addWidget(QLabel("Backend"), 0, 0)
        settings.addWidget(self.backend_box, 0, 1)
        settings.addWidget(self.device_label, 0, 2, 1, 6)
        settings.addWidget(QLabel("Iterations"), 1, 0)
        settings.addWidget(self.iterations, 1, 1)
        settings.addWidget(QLabel("Mode"), 1, 2)
        settings.addWidget(self.mode_box, 1, 3)
        sweep_row = QHBoxLayout()
        sweep_row.addWidget(self.sweep_box)
        sweep_row.addWidget(self.sweep_field)
        sweep_row.addWidget(QLabel("from"))
        sweep_row.addWidget(self.sweep_low)
        sweep_row.addWidget(QLabel("to"))
        sweep_row.addWidget(self.sweep_high)
        sweep_row.addStretch(1)
        # the sweep on a row of its own: beside the iterations and the mode it would make the tab wider than a
        # laptop's window leaves the plots, or be clipped
        settings.addLayout(sweep_row, 2, 0, 1, 8)
        settings.setColumnStretch(7, 1)
        run_row = QHBoxLayout()
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.progress, 1)
        table_box = QWidget()
        table_layout = QVBoxLayout(table_box)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        buttons.addWidget(self.calibrate_button)
        table_layout.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("measureSplitter")
        splitter.addWidget(table_box)
        splitter.addWidget(self.histogram)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        # The tab's content scrolls where the window leaves it less than its least size (a 720-line screen, larger
        # text): the plot tabs then ask only for a scroll area's room, and nothing in the tab is squeezed or clipped.
        content = scrolled_content(self, "measureArea")
        content.setObjectName("measureContent")
        layout = QVBoxLayout(content)
        layout.setContentsMargins(4, 6, 4, 4)
        layout.addWidget(self.operation)
        layout.addLayout(settings)
        layout.addWidget(self.bound_label)
        layout.addWidget(self.estimate_label)
        layout.addLayout(run_row)
        layout.addWidget(self.message)
        layout.addWidget(splitter, 1)

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
            from workbench.devices.provenance import cpu_catalogue_device

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

    # ------------------------------------------------------------------ running
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
