"""The Timeline tab: a step's operations laid out per stream, its critical path, exposed communication, what-ifs.

Everything shown comes from `workbench.steps.step_timeline` (the CLI's
`workbench step` prints the same figures); this module only draws it. The
step text is edited here and stored in the session (its first step; a
session without one gets one on the first edit), one undo step per pause in
typing. A what-if speed-up per operation divides that operation's time and
the step time updates at once; the speed-ups are a view setting, not saved.
"""

from __future__ import annotations

import time
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QFont, QUndoCommand
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.session import StepEntry
from workbench.steps import Timeline, parse_step, step_timeline
from workbench.units import format_time

COMPUTE_BRUSH = QColor(66, 133, 244)
COMMUNICATION_BRUSH = QColor(245, 148, 38)
CRITICAL_PEN = pg.mkPen(QColor(183, 28, 28), width=3)
EXPOSED_BRUSH = QColor(220, 40, 40, 60)
MERGE_PAUSE_S = 1.5
_EDIT_STEP_ID = 1301
COLUMNS = ("Operation", "Stream", "Time", "Source", "Speed-up ×", "If 2× faster", "If free")
EMPTY_HINT = (
    "# A step: one operation a line, name = declaration [on stream] [after a, b]\n"
    "# e.g. File ▸ Examples ▸ Data-parallel step"
)


class EditStepText(QUndoCommand):
    """One edit of the session's step text; typing without a pause undoes as one step."""

    def __init__(self, view: "TimelineView", old: str | None, new: str) -> None:
        super().__init__("Edit step")
        self.view, self.old, self.new, self.when = view, old, new, time.monotonic()

    def id(self) -> int:
        return _EDIT_STEP_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 (Qt's name)
        if not isinstance(other, EditStepText) or other.when - self.when > MERGE_PAUSE_S:
            return False
        self.new, self.when = other.new, other.when
        return True

    def redo(self) -> None:
        self.view.apply_text(self.new)

    def undo(self) -> None:
        self.view.apply_text(self.old)


class TimelineView(RefreshWhenShown, QWidget):
    """The step editor above, the timeline plot in the middle, the what-if table below."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.speedups: dict[str, float] = {}
        self.timeline: Timeline | None = None
        self.baseline: Timeline | None = None
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("stepText")
        self.editor.setPlaceholderText(EMPTY_HINT)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.editor.setFont(mono)
        self.editor.textChanged.connect(self._typed)
        self.error = QLabel()
        self.error.setObjectName("stepError")
        self.error.setStyleSheet("color: #b71c1c;")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        self.summary = QLabel()
        self.summary.setObjectName("stepSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("timelinePlot")
        self.plot.setBackground("w")
        self.plot.setLabel("bottom", "time", units="s")
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        self.plot.setMouseEnabled(x=True, y=False)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("whatIfTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.editor, 1)
        top_layout.addWidget(self.error)
        middle = QWidget()
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.addWidget(self.summary)
        middle_layout.addWidget(self.plot, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(middle)
        splitter.addWidget(self.table)
        splitter.setSizes([150, 330, 200])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)

        self._loading = False
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(250)
        self._pending.timeout.connect(self._commit_text)
        document.session_replaced.connect(self._load_session)
        document.device_changed.connect(self.mark_dirty)
        document.runs_changed.connect(self.mark_dirty)
        self._load_session()

    # ------------------------------------------------------------------ the text
    def step_text(self) -> str | None:
        steps = self.document.session.steps
        return steps[0].text if steps else None

    def _load_session(self) -> None:
        self.speedups = {}
        self._show_text(self.step_text() or "")
        self.mark_dirty()

    def _show_text(self, text: str) -> None:
        if self.editor.toPlainText() != text:
            self._loading = True
            self.editor.setPlainText(text)
            self._loading = False

    def _typed(self) -> None:
        if not self._loading:
            self._pending.start()

    def _commit_text(self) -> None:
        new = self.editor.toPlainText()
        old = self.step_text()
        if new != (old or ""):
            self.document.undo_stack.push(EditStepText(self, old, new))

    def apply_text(self, text: str | None) -> None:
        """Store the step text in the session (None removes the step) and redraw: the undo command's effect."""
        steps = self.document.session.steps
        if text is None:
            if steps:
                del steps[0]
        elif steps:
            steps[0] = StepEntry(steps[0].name, text)
        else:
            steps.append(StepEntry("step", text))
        self._show_text(text or "")
        self.mark_dirty()

    # ------------------------------------------------------------------ the figures
    def refresh(self, *_: object) -> None:
        self._dirty = False
        text = self.editor.toPlainText()
        self.timeline = self.baseline = None
        if not text.strip():
            self._show_error("")
            self.summary.setText("No step yet: write one operation a line above.")
            self._draw(None)
            self._fill_table(None)
            return
        session = self.document.session
        device = self.document.device
        try:
            plan = parse_step(text)
            self.speedups = {name: f for name, f in self.speedups.items() if name in plan.names()}
            context = session.figure_context(device)
            self.baseline = step_timeline(plan, device, session.runs, context)
            self.timeline = step_timeline(plan, device, session.runs, context, self.speedups) if self.speedups else self.baseline
        except WorkbenchError as exc:
            self._show_error(str(exc))
            self.summary.setText("")
            self._draw(None)
            self._fill_table(None)
            return
        self._show_error("")
        self._show_summary()
        self._draw(self.timeline)
        self._fill_table(self.timeline)

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))

    def _show_summary(self) -> None:
        t, base = self.timeline, self.baseline
        assert t is not None and base is not None
        step = f"<b>Step time {format_time(t.step_time)}</b>"
        if self.speedups and base.step_time != t.step_time:
            step += f" (was {format_time(base.step_time)} before the what-ifs)"
        self.summary.setText(
            f"{step} · critical path {' → '.join(t.critical_path)} · communication exposed "
            f"{format_time(t.exposed_communication)}, hidden {format_time(t.hidden_communication)}"
        )

    def _draw(self, timeline: Timeline | None) -> None:
        plot = self.plot
        plot.clear()
        axis = plot.getAxis("left")
        if timeline is None:
            axis.setTicks([[]])
            return
        streams = timeline.plan.streams()
        lane = {stream: index for index, stream in enumerate(streams)}
        axis.setTicks([[(index, stream) for stream, index in lane.items()]])
        for start, end in timeline.exposed_intervals():
            shade = pg.BarGraphItem(x0=[start], x1=[end], y0=[-0.5], y1=[len(streams) - 0.5], brush=EXPOSED_BRUSH, pen=pg.mkPen(None))
            plot.addItem(shade)
            note = pg.TextItem("exposed", color=(183, 28, 28), anchor=(0.5, 1.0))
            note.setPos((start + end) / 2, len(streams) - 0.5)
            plot.addItem(note)
        critical = set(timeline.critical_path)
        for item in timeline.placed:
            brush = COMMUNICATION_BRUSH if item.communication else COMPUTE_BRUSH
            pen = CRITICAL_PEN if item.name in critical else pg.mkPen(QColor(40, 40, 40), width=1)
            bar = pg.BarGraphItem(x0=[item.start], x1=[max(item.end, item.start)], y=[lane[item.stream]], height=0.6, brush=brush, pen=pen)
            plot.addItem(bar)
            label = pg.TextItem(item.name, color=(255, 255, 255) if item.duration else (0, 0, 0), anchor=(0.5, 0.5))
            label.setPos((item.start + item.end) / 2, lane[item.stream])
            plot.addItem(label)
        path = [timeline.interval(name) for name in timeline.critical_path]
        xs: list[float] = []
        ys: list[float] = []
        for item in path:  # just above the bars, so the names stay legible
            xs += [item.start, item.end]
            ys += [lane[item.stream] + 0.36, lane[item.stream] + 0.36]
        plot.addItem(pg.PlotDataItem(xs, ys, pen=pg.mkPen(QColor(183, 28, 28), width=2, style=Qt.PenStyle.DashLine)))
        plot.setYRange(-0.7, len(streams) - 0.2, padding=0)
        plot.setXRange(0, timeline.step_time, padding=0.02)

    def _fill_table(self, timeline: Timeline | None) -> None:
        self.table.setRowCount(0)
        if timeline is None:
            return
        self.table.setRowCount(len(timeline.placed))
        for row, item in enumerate(timeline.placed):
            source = timeline.times[item.name]
            what = timeline.what_if[item.name]
            short = "measured" if source.source == "measured" else "bound, " + source.detail.split(" (")[-1].rstrip(")")
            cells = [item.name, item.stream, format_time(item.duration), short, None,
                     format_time(what.if_2x_faster), format_time(what.if_free)]
            for column, text in enumerate(cells):
                if text is None:
                    continue
                cell = QTableWidgetItem(text)
                cell.setFlags(cell.flags() & ~Qt.ItemFlag.ItemIsEditable)
                if column == 3:
                    cell.setToolTip(source.detail)
                if column == 0 and item.name in timeline.critical_path:
                    cell.setToolTip("on the critical path")
                    font = cell.font()
                    font.setBold(True)
                    cell.setFont(font)
                self.table.setItem(row, column, cell)
            spin = QDoubleSpinBox()
            spin.setObjectName(f"speedup_{item.name}")
            spin.setRange(0.1, 1000.0)
            spin.setDecimals(2)
            spin.setSingleStep(0.5)
            spin.setValue(self.speedups.get(item.name, 1.0))
            spin.setToolTip(f"what if {item.name} ran this many times faster (1 = as timed)")
            spin.valueChanged.connect(lambda value, name=item.name: self.set_speedup(name, value))
            self.table.setCellWidget(row, 4, spin)

    def set_speedup(self, name: str, factor: float) -> None:
        """A what-if: `name` runs `factor` times faster; the step time and plot update at once."""
        if factor == 1.0:
            self.speedups.pop(name, None)
        else:
            self.speedups[name] = factor
        if self.baseline is None:
            return
        try:
            self.timeline = step_timeline(self.baseline.plan, self.document.device, self.document.session.runs,
                                          self.document.session.figure_context(self.document.device), self.speedups)
        except WorkbenchError as exc:
            self._show_error(str(exc))
            return
        self._show_summary()
        self._draw(self.timeline)
        for row, item in enumerate(self.timeline.placed):
            what = self.timeline.what_if[item.name]
            for column, text in ((2, format_time(item.duration)), (5, format_time(what.if_2x_faster)), (6, format_time(what.if_free))):
                cell = self.table.item(row, column)
                if cell is not None:
                    cell.setText(text)


__all__ = ["TimelineView"]
