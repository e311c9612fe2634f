"""File ▸ Import PyTorch model…: a model config or a Python file's function, traced into the Timeline's step.

The tracing itself is `workbench.tracing.sources.trace_request`, the function
`workbench import-torch` calls; it runs in a worker thread (a large model takes
seconds), and a fault is shown inline in the dialog, which stays open with
what was typed. The step it makes replaces the Timeline's step as one undoable
edit (gui/timeline_view.py: TimelineView.open_step).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from workbench.errors import WorkbenchError
from workbench.gui.plain_text import plain
from workbench.gui.workers import track_worker

OTHER_CONFIG = "other"  # the config combo's last entry: a JSON file chosen below


class TraceWorker(QThread):
    """Builds and traces the model off the GUI thread; reports the TracedStep or one line saying why not."""

    traced = Signal(object)
    failed = Signal(str)

    def __init__(self, request: object, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.request = request
        track_worker(self)

    def run(self) -> None:
        import gc

        from workbench.tracing.sources import trace_request

        # No cyclic garbage collection while PyTorch traces here: a collection on the GUI thread (holding the
        # interpreter lock) freed objects whose destructors waited on a lock this thread held while it imported and
        # registered PyTorch's operators, waiting in turn for the interpreter lock: both threads stopped for good.
        collecting = gc.isenabled()
        gc.disable()
        try:
            step = trace_request(self.request)  # type: ignore[arg-type]
        except WorkbenchError as exc:
            self.failed.emit(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 — the user's model code, run by PyTorch: shown, never a crash
            self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        finally:
            if collecting:
                gc.enable()
        self.traced.emit(step)


def _path_row(edit: QLineEdit, browse: QPushButton) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(edit, 1)
    layout.addWidget(browse)
    return row


class TorchImportDialog(QDialog):
    """The model, the batch and sequence, backward, optimizer and data-parallel ranks; Import traces it."""

    step_ready = Signal(str)  # the traced step's text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("torchImportDialog")
        self.setWindowTitle("Import PyTorch model")
        self.worker: TraceWorker | None = None
        form = QFormLayout()
        self._add_model_source(form)
        self._add_step_settings(form)
        self._lay_out(form)
        for signal in (self.from_config.toggled, self.config.currentIndexChanged, self.backward.toggled):
            signal.connect(self._enable)
        self._enable()

    def _add_model_source(self, form: QFormLayout) -> None:
        """Where the model comes from: a shipped or other config, or a Python file and its function."""
        from workbench.tracing.sources import shipped_configs

        self.from_config = QRadioButton("Model config (architecture only, no weights)")
        self.from_config.setObjectName("fromConfig")
        self.from_python = QRadioButton("Python file: a function returning (model, inputs)")
        self.from_python.setObjectName("fromPython")
        group = QButtonGroup(self)
        group.addButton(self.from_config)
        group.addButton(self.from_python)
        self.from_config.setChecked(True)

        self.config = QComboBox()
        self.config.setObjectName("modelConfig")
        for key, description in shipped_configs():
            self.config.addItem(f"{key} — {description}", key)
        self.config.addItem("Other config file…", OTHER_CONFIG)
        self.config_path = QLineEdit()
        self.config_path.setObjectName("configPath")
        self.config_path.setPlaceholderText("a Hugging Face config.json")
        config_browse = QPushButton("Browse…")
        config_browse.clicked.connect(self._browse_config)
        self.python_path = QLineEdit()
        self.python_path.setObjectName("pythonPath")
        self.python_path.setPlaceholderText("model.py")
        python_browse = QPushButton("Browse…")
        python_browse.clicked.connect(self._browse_python)
        self.function = QLineEdit("build")
        self.function.setObjectName("functionName")
        form.addRow(self.from_config)
        form.addRow("Config", self.config)
        form.addRow("Config file", _path_row(self.config_path, config_browse))
        form.addRow(self.from_python)
        form.addRow("Python file", _path_row(self.python_path, python_browse))
        form.addRow("Function", self.function)

    def _add_step_settings(self, form: QFormLayout) -> None:
        """What the step holds: batch, sequence and dtype; backward, the optimizer and the data-parallel ranks."""
        self.batch = QSpinBox()
        self.batch.setObjectName("batch")
        self.batch.setRange(1, 1 << 20)
        self.batch.setValue(8)
        self.sequence = QSpinBox()
        self.sequence.setObjectName("sequence")
        self.sequence.setRange(1, 1 << 22)
        self.sequence.setValue(1024)
        self.dtype = QComboBox()
        self.dtype.setObjectName("dtype")
        for label, value in (("the config's", None), ("fp32", "fp32"), ("bf16", "bf16"), ("fp16", "fp16")):
            self.dtype.addItem(label, value)
        self.backward = QCheckBox("Backward pass")
        self.backward.setObjectName("backward")
        self.optimizer = QComboBox()
        self.optimizer.setObjectName("optimizer")
        for label, value in (("none", None), ("AdamW", "adamw"), ("SGD with momentum", "sgd")):
            self.optimizer.addItem(label, value)
        self.ranks = QSpinBox()
        self.ranks.setObjectName("dataParallel")
        self.ranks.setRange(1, 1 << 16)
        self.ranks.setToolTip("Ranks the gradients are all-reduced across (1: a single GPU, no all-reduce)")
        self.bucket = QDoubleSpinBox()
        self.bucket.setObjectName("bucketMib")
        self.bucket.setRange(0.01, 65536.0)
        self.bucket.setValue(25.0)
        self.bucket.setSuffix(" MiB")
        form.addRow("Batch (per rank)", self.batch)
        form.addRow("Sequence length", self.sequence)
        form.addRow("Model dtype", self.dtype)
        form.addRow(self.backward)
        form.addRow("Optimizer step", self.optimizer)
        form.addRow("Data-parallel ranks", self.ranks)
        form.addRow("Gradient bucket", self.bucket)

    def _lay_out(self, form: QFormLayout) -> None:
        """The form over the error line, the status and Import / Cancel."""
        self.error = plain(QLabel())
        self.error.setObjectName("torchImportError")
        self.error.setStyleSheet("color: #b71c1c;")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        self.status = plain(QLabel())
        self.status.setObjectName("torchImportStatus")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setObjectName("importModel")
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)

    # ------------------------------------------------------------------ the form
    def _enable(self, *_: object) -> None:
        config = self.from_config.isChecked()
        self.config.setEnabled(config)
        self.config_path.setEnabled(config and self.config.currentData() == OTHER_CONFIG)
        self.python_path.setEnabled(not config)
        self.function.setEnabled(not config)
        self.batch.setEnabled(config)
        self.sequence.setEnabled(config)
        self.dtype.setEnabled(config)
        backward = self.backward.isChecked()
        self.optimizer.setEnabled(backward)
        self.ranks.setEnabled(backward)
        self.bucket.setEnabled(backward)

    def _browse_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Model config", "", "Model config (*.json);;All files (*)")
        if path:
            self.config_path.setText(path)
            self.config.setCurrentIndex(self.config.count() - 1)

    def _browse_python(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python file", "", "Python (*.py);;All files (*)")
        if path:
            self.python_path.setText(path)
            self.from_python.setChecked(True)

    def request(self) -> object:
        """The TraceRequest the form describes; a missing file or name raises WorkbenchError (shown inline)."""
        from workbench.tracing.sources import TraceRequest
        from workbench.tracing.trace import TracingError

        backward = self.backward.isChecked()
        common = {
            "backward": backward,
            "optimizer": self.optimizer.currentData() if backward else None,
            "data_parallel": self.ranks.value() if backward else 1,
            "bucket_mib": self.bucket.value(),
        }
        if self.from_python.isChecked():
            path = self.python_path.text().strip()
            if not path.endswith(".py"):
                raise TracingError("choose a Python file (.py) that builds the model")
            return TraceRequest(path, self.function.text().strip(), **common)
        source = self.config.currentData()
        if source == OTHER_CONFIG:
            source = self.config_path.text().strip()
            if not source:
                raise TracingError("choose a config file (a Hugging Face config.json)")
        return TraceRequest(source, None, self.batch.value(), self.sequence.value(), dtype=self.dtype.currentData(), **common)

    # ------------------------------------------------------------------ tracing
    def start(self) -> None:
        """Trace in a worker; the dialog stays open (and its inputs editable) until the step is ready."""
        if self.worker is not None and self.worker.isRunning():
            return
        try:
            request = self.request()
        except WorkbenchError as exc:
            self.show_error(str(exc))
            return
        self.error.setVisible(False)
        self.status.setText("Tracing on the meta device…")
        self.import_button.setEnabled(False)
        self.worker = TraceWorker(request)
        self.worker.traced.connect(self._traced)
        self.worker.failed.connect(self._failed)
        self.worker.start()

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(True)
        self.status.setText("")
        self.import_button.setEnabled(True)

    def _failed(self, message: str) -> None:
        self.show_error(message)

    def _traced(self, step: object) -> None:
        self.import_button.setEnabled(True)
        self.status.setText("")
        self.step_ready.emit(step.text())  # type: ignore[attr-defined]
        self.accept()

    def done(self, result: int) -> None:  # noqa: D102
        # A trace still running when the dialog closes finishes on its own and its step is dropped: the window
        # never waits for it. The worker has no parent, so it is kept here until its thread ends.
        worker = self.worker
        if worker is not None and worker.isRunning():
            worker.traced.disconnect()
            worker.failed.disconnect()
            _FINISHING.add(worker)
            worker.finished.connect(lambda: _FINISHING.discard(worker))
        super().done(result)


_FINISHING: set[TraceWorker] = set()
