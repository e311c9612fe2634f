"""The Timeline tab's trace: read off the GUI thread, matched to the step, and drawn as the measured timeline.

`TimelineTrace` is the trace part of `TimelineView` (gui/timeline_view.py):
the Import trace… / Cancel / Clear trace row with the match rules, the lines
about the trace and the device it ran on, and the plot of the matched
intervals beside their bounds with the kernels no operation took.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pyqtgraph as pg
from PySide6.QtCore import QObject, QThread, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog, QLabel, QLineEdit, QPlainTextEdit, QPushButton

from workbench.errors import WorkbenchError
from workbench.gui.plain_text import plain
from workbench.gui.workers import track_worker
from workbench.profilers.matching import MatchRule
from workbench.profilers.stopping import ReadStopped
from workbench.profilers.trace import Trace
from workbench.profilers.trace_reader import read_trace
from workbench.steps import MeasuredTrace, StepPlan, Timeline
from workbench.model.units import format_time
from workbench.state.timeline_view import TimelineViewState, trace_plot, unmatched_lines

# The bars' colours, shared with the step plot (gui/timeline_view.py).
COMPUTE_BRUSH = QColor(66, 133, 244)
COMMUNICATION_BRUSH = QColor(245, 148, 38)
UNMATCHED_BRUSH = QColor(170, 170, 170)
BOUND_PEN = pg.mkPen(QColor(27, 94, 32), width=2)
BOUND_BRUSH = QColor(76, 175, 80, 110)
TRACE_FILTER = ("Traces (*.sqlite *.csv *.json *.json.gz);;Nsight Systems trace (*.sqlite *.csv);;"
                "PyTorch profiler trace (*.json *.json.gz);;All files (*)")
NO_TRACE = "No trace imported."  # one short line: at presentation size on a projector every line counts
NO_TRACE_HINT = "Import trace… times the operations from an Nsight Systems or PyTorch profiler trace."


def _count(number: object, one: str, many: str | None = None) -> str:
    return f"{number:,} {one if number == 1 else (many or one + 's')}"


class TraceReader(QThread):
    """Reads a trace off the GUI thread: a million-row trace takes seconds. `stop()` ends it within a fraction
    of a second (`trace_stopped`)."""

    trace_read = Signal(object)
    trace_failed = Signal(str)
    trace_stopped = Signal()

    def __init__(self, path: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self._stop = threading.Event()
        track_worker(self)

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        try:
            trace = read_trace(self.path, should_stop=self._stop.is_set)
        except ReadStopped:
            self.trace_stopped.emit()
            return
        except WorkbenchError as exc:
            self.trace_failed.emit(str(exc))
            return
        except (OSError, MemoryError) as exc:  # a file system fault or no memory: shown, never a crash
            self.trace_failed.emit(f"{self.path}: {exc}")
            return
        self.trace_read.emit(trace)


class _TraceLine(QLabel):
    """The line about the trace, shown only when it has something to say: "No trace imported." is what the
    disabled Clear trace button says already, and on a projector's short page the line is worth more to the table."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        if text == NO_TRACE:
            self.hide()  # never shown before it has a parent: it would open as a window of its own

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self.setVisible(text != NO_TRACE)


class TimelineTrace:
    """The trace part of `TimelineView`: its widgets, the import in a worker thread, and the measured plot."""

    state: TimelineViewState  # the view's; the match rules typed are kept there

    def _make_trace_widgets(self) -> None:
        """Import trace…, Cancel, Clear trace and the match rules; the lines about the trace; its plot and the
        kernels left unmatched."""
        self.trace: Trace | None = None
        self.reader: TraceReader | None = None
        self.import_button = QPushButton("Import trace…")
        self.import_button.setObjectName("importTrace")
        self.import_button.setToolTip(
            "An Nsight Systems trace: the SQLite export (nsys export --type sqlite) or the CSV of "
            "nsys stats --report cuda_gpu_trace --format csv; or a PyTorch profiler trace (the JSON, gzipped or not, "
            "that torch.profiler writes), matched by the ATen op that starts each line's comment ('# aten::mm'); "
            "matched intervals time the operations"
        )
        self.import_button.clicked.connect(self.choose_trace)
        self.cancel_trace_button = QPushButton("Cancel")
        self.cancel_trace_button.setObjectName("cancelTrace")
        self.cancel_trace_button.setToolTip("Stop reading the trace; nothing is imported")
        self.cancel_trace_button.clicked.connect(self.stop_reading)
        self.cancel_trace_button.setVisible(False)
        self.clear_button = QPushButton("Clear trace")
        self.clear_button.setObjectName("clearTrace")
        self.clear_button.clicked.connect(self.clear_trace)
        self.clear_button.setEnabled(False)
        self.rules_edit = QLineEdit()
        self.rules_edit.setObjectName("traceMatch")
        self.rules_edit.setPlaceholderText("match rules: PATTERN=OPERATION; …  (none: each operation takes the kernels its kind suggests)")
        self.rules_edit.setToolTip(
            "e.g. regex:gemm=fwd; nccl*AllReduce*=ar1. One pattern for several operations deals its intervals to them in "
            "time order; several patterns for one operation make it of several kernels (*splitk_kernel*=fwd; "
            "splitKreduce*=fwd), timed per iteration from the first rule's kernel's start to the last kernel's end"
        )
        self.rules_edit.textChanged.connect(self._rules_typed)
        self.rules_edit.editingFinished.connect(self.mark_dirty)
        self.trace_label = plain(_TraceLine(NO_TRACE))
        self.trace_label.setToolTip(NO_TRACE_HINT)
        self.trace_label.setObjectName("traceLabel")
        self.trace_label.setWordWrap(True)
        # The GPU the trace names and the device its bounds use; a different device chosen said plainly.
        self.trace_device = plain(QLabel())
        self.trace_device.setObjectName("traceDevice")
        self.trace_device.setWordWrap(True)
        self.trace_device.setVisible(False)
        self.trace_error = plain(QLabel())
        self.trace_error.setObjectName("traceError")
        self.trace_error.setStyleSheet("color: #b71c1c;")
        self.trace_error.setWordWrap(True)
        self.trace_error.setVisible(False)
        self.trace_plot = pg.PlotWidget()
        self.trace_plot.setObjectName("tracePlot")
        self.trace_plot.setBackground("w")
        self.trace_plot.setLabel("bottom", "trace time, from its first interval", units="s")
        self.trace_plot.setMouseEnabled(x=True, y=False)
        self.trace_plot.setVisible(False)
        self.unmatched = QPlainTextEdit()
        self.unmatched.setObjectName("unmatchedKernels")
        self.unmatched.setReadOnly(True)
        self.unmatched.setMaximumHeight(76)
        self.unmatched.setVisible(False)

    def _rules_typed(self, text: str) -> None:
        self.state = replace(self.state, match_rules=text)  # the step is timed again once the editing is finished

    def _rules(self, plan: StepPlan) -> list[MatchRule]:
        """The match rules typed in, 'PATTERN=OPERATION' separated by ';' (errors name the rule); none without a
        trace."""
        return self.state.rules(plan) if self.trace is not None else []

    def choose_trace(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import trace (Nsight Systems or PyTorch profiler)", "", TRACE_FILTER)
        if path:
            self.import_trace(path)

    def import_trace(self, path: str) -> None:
        """Read `path` in a worker thread; the timeline takes the trace when it is read (errors inline)."""
        if self.reader is not None and self.reader.isRunning():
            return
        self.trace_error.setVisible(False)
        self._label_before_reading = self.trace_label.text()
        self.trace_label.setText(f"Reading {path} …")
        self.import_button.setEnabled(False)
        self.cancel_trace_button.setVisible(True)
        reader = TraceReader(path)  # no Qt parent: the view holds it, so a closed window leaves no dangling thread object
        reader.trace_read.connect(self._trace_read)
        reader.trace_failed.connect(self._trace_failed)
        reader.trace_stopped.connect(self._trace_stopped)
        reader.finished.connect(self._reader_finished)
        self.reader = reader
        reader.start()

    def stop_reading(self, wait_ms: int = 0) -> None:
        """Stop the trace being read (Cancel, or the window closing: then wait up to `wait_ms` for its thread)."""
        reader = self.reader
        if reader is not None and reader.isRunning():
            reader.stop()
            if wait_ms:
                reader.wait(wait_ms)

    def _reader_finished(self) -> None:
        self.import_button.setEnabled(True)
        self.cancel_trace_button.setVisible(False)

    _label_before_reading = ""

    def _trace_stopped(self) -> None:
        """A read stopped on request: the trace shown before (if any) stays, as its line does."""
        self.trace_label.setText("Trace import cancelled." if self.trace is None else self._label_before_reading)

    def _trace_read(self, trace: Trace) -> None:
        self.trace = trace
        self.clear_button.setEnabled(True)
        summary = trace.summary()
        notes = f" ({'; '.join(trace.notes)})" if trace.notes else ""
        self.trace_label.setText(
            f"Trace {trace.source} ({trace.format}): {_count(len(trace), 'interval')} ({_count(summary['kernels'], 'kernel')}, "
            f"{_count(summary['copies'], 'copy', 'copies')}, {_count(summary['memsets'], 'memset')}) on "
            f"{_count(len(trace.streams), 'stream')}; under each matched interval a green bar as long as its bound{notes}"
        )
        self.refresh()

    def _trace_failed(self, message: str) -> None:
        self.trace_error.setText(message)
        self.trace_error.setVisible(True)
        self.trace_label.setText(NO_TRACE if self.trace is None else self.trace_label.text())

    def clear_trace(self) -> None:
        self.trace = None
        self.clear_button.setEnabled(False)
        self.trace_error.setVisible(False)
        self.trace_label.setText(NO_TRACE)
        self.refresh()

    def _draw_trace(self, timeline: Timeline | None) -> None:
        """The measured timeline: a lane per trace stream around the matched intervals, each with its bound."""
        plot = self.trace_plot
        plot.clear()
        measured = timeline.measured if timeline is not None else None
        self.trace_plot.setVisible(measured is not None)
        self.unmatched.setVisible(measured is not None)
        self._show_trace_device(measured)
        if measured is None:
            self.unmatched.setPlainText("")
            return
        layout = trace_plot(measured, timeline)
        plot.getAxis("left").setTicks([list(layout.lanes)])
        x0, x1, lanes = layout.grey
        if x0:
            plot.addItem(pg.BarGraphItem(x0=x0, x1=x1, y=lanes, height=0.5, brush=UNMATCHED_BRUSH, pen=pg.mkPen(QColor(120, 120, 120))))
        for start, end, lane, communication in layout.matched:
            brush = COMMUNICATION_BRUSH if communication else COMPUTE_BRUSH
            plot.addItem(pg.BarGraphItem(x0=[start], x1=[end], y=[lane + 0.08], height=0.42, brush=brush, pen=pg.mkPen(QColor(40, 40, 40))))
        for operation in layout.operations:  # one label and one bound per operation, over its first iteration
            label = pg.TextItem(operation.label, color=(255, 255, 255), anchor=(0.5, 0.5))  # white text on its bar
            label.setToolTip(operation.tip)
            label.setPos(operation.label_x, operation.label_lane + 0.08)
            plot.addItem(label)
            bound, start, y = operation.bound_s, operation.start, operation.lane
            if bound:
                plot.addItem(pg.BarGraphItem(x0=[start], x1=[start + bound], y=[y - 0.27], height=0.14, brush=BOUND_BRUSH, pen=BOUND_PEN))
                if len(layout.lanes) == 1:  # room under a single lane; with several the table's Bound column says it
                    note = pg.TextItem(f"bound {format_time(bound)}", color=(27, 94, 32), anchor=(0.0, 0.0))
                    note.setPos(start, y - 0.34)  # under the bound's bar, from the interval's start
                    plot.addItem(note)
        plot.setYRange(*layout.y_range, padding=0)
        plot.setXRange(*layout.x_range, padding=0)
        self.unmatched.setPlainText("\n".join(unmatched_lines(measured)))

    def _show_trace_device(self, measured: MeasuredTrace | None) -> None:
        """'Ran on NVIDIA A100-SXM4-40GB: bounds on a100-sxm-40gb', or the line saying the device chosen was set aside."""
        ran_on = measured.ran_on if measured is not None else None
        self.trace_device.setVisible(ran_on is not None)
        if ran_on is None:
            self.trace_device.setText("")
            return
        if ran_on.note:
            self.trace_device.setText(ran_on.note[:1].upper() + ran_on.note[1:])
            self.trace_device.setStyleSheet("color: #8a4b00;")
        else:
            where = f": bounds on {ran_on.device.key} ({ran_on.device.name})" if ran_on.device is not None else ""
            self.trace_device.setText(f"The trace ran on {ran_on.gpu}{where}")
            self.trace_device.setStyleSheet("")
