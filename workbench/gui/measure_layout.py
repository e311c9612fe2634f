"""The Measurement tab's widgets and their layout: settings, the sweep row, Run and the progress, runs and histogram.

`MeasureTabLayout` builds them for `MeasurementTab` (gui/measure_tab.py), whose
slots they are connected to.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
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

from workbench.gui.plain_text import plain
from workbench.gui.power_box import PowerOfTwoBox
from workbench.gui.run_table import RunTableModel
from workbench.gui.sample_histogram import SampleHistogram
from workbench.gui.scroll_page import scrolled_content
from workbench.measure import COLD, DEFAULT_ITERATIONS, MIN_ITERATIONS, WARM

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


class MeasureTabLayout:
    """The construction part of `MeasurementTab`: every widget made, connected to the tab's slots, and laid out."""

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
