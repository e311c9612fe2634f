"""The Timeline tab: a step's operations laid out per stream, its critical path, exposed communication, what-ifs.

Everything shown comes from `workbench.steps.step_timeline` (the CLI's
`workbench step` prints the same figures); this module only draws it. The
step text is edited here and stored in the session (its first step; a
session without one gets one on the first edit), one undo step per pause in
typing. A what-if speed-up per operation divides that operation's time and
the step time updates at once; the speed-ups are a view setting, not saved.

"Import trace…" (gui/timeline_trace.py) reads an Nsight Systems trace (SQLite export or
cuda_gpu_trace CSV, `workbench.profilers.trace`) or a PyTorch profiler trace
(`workbench.profilers.torch_trace`) in a worker thread; its intervals are
matched to the step's operations (`workbench.steps.match_trace`, the kernel
matching's rules and suggestions; a PyTorch trace by ATen op,
`match_torch_trace`) and time them. Below, beside the what-if table, the
where-the-time-goes table (`workbench.documents.breakdown`) groups the operations by
module or by kind. A second plot
shows the measured timeline: a lane per trace stream, each matched interval
with its bound drawn beside it (a thin bar of the bound's length from the
same start), the other intervals grey; the kernels no operation took are
listed. An operation made of several kernels (several rules naming it, e.g.
`*splitk_kernel*=fwd; splitKreduce*=fwd`) has each kernel of its first
iteration drawn and its name and time over the iteration's span. The trace is a view setting like the what-ifs: it is not stored in
the session (a trace is the profiler's file, often a million rows; import it
again, or use `workbench step FILE --trace TRACE`).
"""

from __future__ import annotations

from dataclasses import replace

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from workbench.documents.breakdown import where_time_goes
from workbench.errors import WorkbenchError
from workbench.documents.examples import list_examples
from workbench.gui.application import EXAMPLES_MENU
from workbench.gui.breakdown_table import BreakdownView
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.plain_text import html_text, plain, tooltip
from workbench.gui.undo_keys import use_document_undo
from workbench.gui.scroll_page import scrolled_content
from workbench.gui.timeline_bars import BarStyle, TimelineBars
from workbench.gui.timeline_trace import COMMUNICATION_BRUSH, COMPUTE_BRUSH, NO_TRACE, TimelineTrace
from workbench.gui.whatif_table import WhatIfTable
from workbench.steps import Timeline, parse_step, step_timeline
from workbench.model.units import format_time
from workbench.state.timeline_view import (
    COMMUNICATION,
    COMMUNICATION_CRITICAL,
    COMPUTE,
    COMPUTE_CRITICAL,
    TimelineViewState,
    named_lanes,
    path_text,
    step_lanes,
)

CRITICAL_COLOR = QColor(183, 28, 28)
EXPOSED_BRUSH = QColor(220, 40, 40, 60)
EXPOSED_TEXT = QColor(183, 28, 28)
# The step plot's bar styles by number (workbench.state.timeline_view.step_lanes chooses each bar's).
BAR_STYLES = {
    COMPUTE: BarStyle(COMPUTE_BRUSH, QColor(40, 40, 40), 1, QColor(255, 255, 255)),
    COMPUTE_CRITICAL: BarStyle(COMPUTE_BRUSH, CRITICAL_COLOR, 3, QColor(255, 255, 255)),
    COMMUNICATION: BarStyle(COMMUNICATION_BRUSH, QColor(40, 40, 40), 1, QColor(0, 0, 0)),
    COMMUNICATION_CRITICAL: BarStyle(COMMUNICATION_BRUSH, CRITICAL_COLOR, 3, QColor(0, 0, 0)),
}
MAX_BAR_LABELS = 60  # operation names drawn at once on the step plot: the widest in view
STEP_EXAMPLE = "data-parallel-step"  # the built-in example the empty editor's hint points to


def empty_hint() -> str:
    """The empty step editor's hint: the syntax, and where the menu bar has an example of it."""
    title = dict(list_examples()).get(STEP_EXAMPLE, STEP_EXAMPLE)
    return (
        "# A step: one operation a line, name = declaration [on stream] [after a, b]\n"
        f"# e.g. {EXAMPLES_MENU.replace('&', '')} ▸ {title}"
    )


class _WrappedPane(QWidget):
    """A splitter pane whose least height counts its word-wrapped labels as wrapped at the pane's width.

    A splitter asks its panes for their least size only, which counts a wrapped label as one line; given that
    height the pane's layout squeezed the plot, which then kept its own least height and ran over the next row.
    Resized narrower or wider, the pane tells its splitter its new least height."""

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        hint = super().minimumSizeHint()
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth() and self.width() > 0:
            hint.setHeight(max(hint.height(), layout.minimumHeightForWidth(self.width())))
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()


class TimelineView(TimelineTrace, RefreshWhenShown, QWidget):
    """The step editor above, the timeline plot in the middle, the what-if table below; the trace part
    (gui/timeline_trace.py) adds the imported trace and its plot."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.state = TimelineViewState()  # the what-ifs, the match rules, the breakdown's grouping
        self.timeline: Timeline | None = None
        self.baseline: Timeline | None = None
        self._make_step_widgets()
        self._make_trace_widgets()
        self._lay_out()
        self._loading = False
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(250)
        self._pending.timeout.connect(self._commit_text)
        use_document_undo(self.editor, document.undo_stack, before=self._commit_pending)
        document.session_replaced.connect(self._load_session)
        document.step_changed.connect(self._step_changed)
        document.device_changed.connect(self.mark_dirty)
        document.runs_changed.connect(self.mark_dirty)
        self._load_session()

    def _make_step_widgets(self) -> None:
        """The step editor and its error line, the summary, the step plot and the what-if table."""
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("stepText")
        self.editor.setPlaceholderText(empty_hint())
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.editor.setFont(mono)
        self.editor.textChanged.connect(self._typed)
        self.error = plain(QLabel())
        self.error.setObjectName("stepError")
        self.error.setStyleSheet("color: #b71c1c;")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.RichText)  # built HTML: the step's names escaped
        self.summary.setObjectName("stepSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("timelinePlot")
        self.plot.setBackground("w")
        self.plot.setLabel("bottom", "time", units="s")
        self.plot.setMouseEnabled(x=True, y=False)
        # Labelled major ticks and unlabelled minor ones: the axis measured the text of a third, finer level at
        # every frame of a pan only to drop it (the grid lines come from the bars item, `TimelineBars`).
        self.plot.getAxis("bottom").setStyle(maxTickLevel=1, maxTextLevel=1)
        self._fit_plot_height()  # the summary, the trace and the table never squeeze the lanes or the axis away
        self.plot.getViewBox().sigResized.connect(self._label_streams)
        # The view's new transform applied as the range changes, not while it paints: applied during a paint it
        # changed every item's place again and Qt painted the plot a second time for the same frame.
        self.plot.getViewBox().sigXRangeChanged.connect(lambda *_: self.plot.getViewBox().updateMatrix())
        self.table = WhatIfTable(self.set_speedup)

    def _lay_out(self) -> None:
        """The editor over the step plot and the trace over the tables, in a splitter on a scrolling page."""
        top = _WrappedPane()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.editor, 1)
        top_layout.addWidget(self.error)
        middle = _WrappedPane()
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.addWidget(self.summary)
        middle_layout.addWidget(self.plot, 1)
        bar = QHBoxLayout()
        bar.addWidget(self.import_button)
        bar.addWidget(self.cancel_trace_button)
        bar.addWidget(self.clear_button)
        bar.addWidget(self.rules_edit, 1)
        middle_layout.addLayout(bar)
        middle_layout.addWidget(self.trace_label)
        middle_layout.addWidget(self.trace_device)
        middle_layout.addWidget(self.trace_error)
        middle_layout.addWidget(self.trace_plot, 1)
        middle_layout.addWidget(self.unmatched)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(middle)
        self.breakdown_view = BreakdownView(self._group_breakdown)
        self.tables = QTabWidget()
        self.tables.setObjectName("timelineTables")
        self.tables.addTab(self.table, "What if")
        self.tables.addTab(self.breakdown_view, "Where the time goes")
        splitter.addWidget(self.tables)
        splitter.setSizes([130, 470, 200])
        # The page scrolls where the window leaves it less than its least height (a 720-line projector, larger
        # text), as the Measurement tab does: the splitter's parts keep their least sizes and nothing overlaps.
        inner = QVBoxLayout(scrolled_content(self, "timelineArea"))
        inner.setContentsMargins(4, 4, 4, 4)
        inner.addWidget(splitter)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # View ▸ Presentation, Ctrl++: the axis grows with the text
            self._fit_plot_height()
            if self.bars is not None:
                self.bars.setFont(self.plot.font())

    def _fit_plot_height(self) -> None:
        """The plot's least height: its time axis (tick figures and title, a line each at the text size in use)
        and two lanes of two lines each, the "exposed" notes above them; at least 140 px."""
        line = QFontMetrics(self.plot.font()).height()
        self.plot.setMinimumHeight(max(140, 6 * line))

    # ------------------------------------------------------------------ the text
    def step_text(self) -> str | None:
        return self.document.core.step_text

    @property
    def speedups(self) -> dict[str, float]:
        """The what-ifs: operation → how many times faster it runs."""
        return self.state.speedup_map()

    def _group_breakdown(self, by: str) -> None:
        self.state = replace(self.state, breakdown_by=by)

    def _load_session(self) -> None:
        self.state = replace(self.state, speedups=())
        if getattr(self, "trace", None) is not None:  # a trace belongs to the step it was imported for
            self.trace = None
            self.clear_button.setEnabled(False)
            self.trace_label.setText(NO_TRACE)
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

    def _commit_pending(self) -> None:
        """Typing that waits for its pause goes on the undo stack now (before an undo or redo)."""
        if self._pending.isActive():
            self._pending.stop()
            self._commit_text()

    def _commit_text(self) -> None:
        self.document.core.set_step_text(self.editor.toPlainText())

    def open_step(self, text: str) -> None:
        """Replace the step with `text` (a traced model's, File ▸ Import PyTorch model…) as one undoable edit."""
        self._commit_pending()
        self.document.core.set_step_text(text)

    def _step_changed(self) -> None:
        """The session's step text changed (an edit, its undo or redo): show it and redraw."""
        self._show_text(self.step_text() or "")
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
            self._draw_trace(None)
            self.breakdown_view.set_breakdown(None)
            return
        session = self.document.session
        device = self.document.device
        try:
            plan = parse_step(text)
            self.state = self.state.keeping_speedups(plan.names())
            context = session.figure_context(device)
            rules = self._rules(plan)
            self.baseline = step_timeline(plan, device, session.runs, context, trace=self.trace, rules=rules)
            self.timeline = (
                step_timeline(plan, device, session.runs, context, self.speedups, trace=self.trace, rules=rules)
                if self.speedups else self.baseline
            )
        except WorkbenchError as exc:
            self._show_error(str(exc))
            self.summary.setText("")
            self._draw(None)
            self._fill_table(None)
            self._draw_trace(None)
            self.breakdown_view.set_breakdown(None)
            return
        self._show_error("")
        self._show_summary()
        self._draw(self.timeline)
        self._fill_table(self.timeline)
        self._draw_trace(self.baseline)
        self.breakdown_view.set_breakdown(where_time_goes(self.baseline, device), self.state.breakdown_by)

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))

    def _show_summary(self) -> None:
        t, base = self.timeline, self.baseline
        assert t is not None and base is not None
        step = f"<b>Step time {format_time(t.step_time)}</b>"
        if self.speedups and base.step_time != t.step_time:
            step += f" (was {format_time(base.step_time)} before the what-ifs)"
        shown, whole = path_text(t.critical_path)
        self.summary.setText(
            f"{step} · communication exposed {format_time(t.exposed_communication)}, hidden "
            f"{format_time(t.hidden_communication)}<br>critical path {html_text(shown)}"
        )
        # A path of hundreds of operations is named whole on hover, not in a label that would push the plot off.
        self.summary.setToolTip(tooltip(whole) if whole else "")

    _streams: list[str] = []

    def _label_streams(self, *_: object) -> None:
        """Name as many stream lanes as the plot has room for (every lane, or every second, third, …): many
        streams in a short plot would draw their names over each other."""
        streams = self._streams
        room = self.plot.getViewBox().height()
        line = QFontMetrics(self.plot.getAxis("left").style.get("tickFont") or self.plot.font()).height() * 1.2
        self.plot.getAxis("left").setTicks([[(index, streams[index]) for index in named_lanes(len(streams), room, line)]])

    def _draw(self, timeline: Timeline | None) -> None:
        """The step's lanes: one item (`TimelineBars`) draws the bars, their names and the exposed spans from what
        is in view at each paint, so a step of thousands of operations pans and zooms as fast as one of ten; the
        critical path is one dashed line through the lanes it crosses."""
        plot = self.plot
        plot.clear()
        self.bars = None
        axis = plot.getAxis("left")
        if timeline is None:
            axis.setTicks([[]])
            return
        lanes = step_lanes(timeline)
        self._streams = list(lanes.streams)
        self._label_streams()
        self.bars = TimelineBars(lanes.bars, lanes.names, BAR_STYLES, len(lanes.streams), timeline.exposed_intervals(),
                                 EXPOSED_BRUSH, EXPOSED_TEXT, grid=plot.getAxis("bottom"), max_labels=MAX_BAR_LABELS)
        self.bars.setFont(self.plot.font())
        plot.addItem(self.bars)
        xs, ys = lanes.critical
        plot.addItem(pg.PlotDataItem(xs, ys, pen=pg.mkPen(QColor(183, 28, 28), width=2, style=Qt.PenStyle.DashLine)))
        plot.setYRange(*lanes.y_range, padding=0)
        plot.setXRange(*lanes.x_range, padding=0)

    bars: TimelineBars | None = None

    def _fill_table(self, timeline: Timeline | None) -> None:
        self.table.set_timeline(timeline, self.speedups)

    def set_speedup(self, name: str, factor: float) -> None:
        """A what-if: `name` runs `factor` times faster; the step time and plot update at once."""
        self.state = self.state.with_speedup(name, factor)
        if self.baseline is None:
            return
        try:
            self.timeline = step_timeline(self.baseline.plan, self.document.device, self.document.session.runs,
                                          self.document.session.figure_context(self.document.device), self.speedups,
                                          trace=self.trace, rules=self._rules(self.baseline.plan))
        except WorkbenchError as exc:
            self._show_error(str(exc))
            return
        self._show_summary()
        self._draw(self.timeline)
        self.table.whatif.update_times(self.timeline)


__all__ = ["TimelineView"]
