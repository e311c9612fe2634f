"""The analysis panel: the figures of the selected operation, its tensors and its derivation.

It reads the document's last valid `Analysis` for the selected operation;
when the current text has an error the figures stay, under a banner saying
they are stale.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics, QGuiApplication, QTextBlock, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat, QTextFragment
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from workbench.analysis import COMPUTE, Analysis
from workbench.devices.interfaces import HBM
from workbench.gui.document import Document, OperationState
from workbench.conventions import CONVENTION_LABELS
from workbench.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_rate,
    format_int,
    format_intensity,
    format_time,
)

FIGURES = ("work", "bytes", "intensity", "compute", "memory", "bound")
FIGURE_TITLES = {
    "work": "Work",
    "bytes": "Compulsory bytes",
    "intensity": "Intensity",
    "compute": "Compute bound",
    "memory": "Memory bound",
    "bound": "Time bound",
}

FIGURE_SAMPLES = ("8.888 TFLOP", "888.8 MiB", "8888 FLOP/B", "888.8 ms")  # as wide as most figures get


class AnalysisPanel(QWidget):
    """Figures with units, the limiter, tensor traffic and the step-by-step derivation."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.title = QLabel()
        self.title.setObjectName("panelTitle")
        self.title.setWordWrap(True)
        self.declaration = QLabel()
        self.declaration.setObjectName("panelDeclaration")
        self.declaration.setWordWrap(True)
        self.declaration.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.declaration.setStyleSheet("color: #555; font-family: 'DejaVu Sans Mono', monospace;")
        # The name and the declaration wrap at the panel's width; their longest word ("40961×4096×4096") does not
        # set the panel's least width, which would then change with every keystroke (and, in a narrow dock, make
        # the panel scroll and lay it out again). A word longer than the panel is cut; the tooltip has it whole.
        for label in (self.title, self.declaration):
            label.setMinimumWidth(1)

        self.stale = QLabel()
        self.stale.setObjectName("staleBanner")
        self.stale.setWordWrap(True)
        self.stale.setStyleSheet("background: #fff3cd; color: #6d4c00; border: 1px solid #e0c060; padding: 4px;")
        self.notice = QLabel()
        self.notice.setObjectName("panelNotice")
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet("color: #6d4c00;")

        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(3)
        self.values: dict[str, QLabel] = {}
        self.details: dict[str, QLabel] = {}
        for row, key in enumerate(FIGURES):
            name = QLabel(FIGURE_TITLES[key])
            name.setStyleSheet("color: #444;")
            value = QLabel()
            value.setObjectName(f"figure_{key}")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            detail = QLabel()
            detail.setObjectName(f"detail_{key}")
            detail.setWordWrap(True)
            detail.setStyleSheet("color: #555;")
            grid.addWidget(name, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(value, row, 1, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(detail, row, 2, Qt.AlignmentFlag.AlignTop)
            self.values[key] = value
            self.details[key] = detail
        grid.setColumnStretch(2, 1)

        self.limiter = QLabel()
        self.limiter.setObjectName("limiter")
        self.limiter.setWordWrap(True)

        self.tensors = QTableWidget(0, 5)
        self.tensors.setObjectName("tensorTable")
        self.tensors.setHorizontalHeaderLabels(["Tensor", "Shape", "Type", "Traffic", "Bytes"])
        self.tensors.setWordWrap(False)
        self.tensors.verticalHeader().setVisible(False)
        self.tensors.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tensors.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.tensors.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = self.tensors.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)

        self.derivation = QTextBrowser()
        self.derivation.setObjectName("derivation")
        self.derivation.setOpenLinks(False)
        copy_button = QPushButton("Copy derivation")
        copy_button.setObjectName("copyDerivation")
        copy_button.clicked.connect(self.copy_derivation)
        derivation_title = QLabel("Derivation")
        derivation_title.setStyleSheet("font-weight: 600;")
        derivation_row = QHBoxLayout()
        derivation_row.addWidget(derivation_title)
        derivation_row.addStretch(1)
        derivation_row.addWidget(copy_button)
        tensors_title = QLabel("Tensors crossing HBM → on-chip caches")
        tensors_title.setStyleSheet("font-weight: 600;")
        self.tensors_title = tensors_title

        self.empty = QLabel("No operation selected.")
        self.empty.setObjectName("panelEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.stale)
        body.addLayout(grid)
        body.addWidget(self.limiter)
        body.addWidget(self.notice)
        body.addWidget(tensors_title)
        body.addWidget(self.tensors)
        body.addLayout(derivation_row)
        body.addWidget(self.derivation, 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.declaration)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.empty, 1)

        self.set_base_font(self.font())
        document.analysis_changed.connect(self._refresh_after_change)
        document.selection_changed.connect(self._refresh_after_change)
        document.operations_changed.connect(self._refresh_after_change)
        self.refresh()

    def set_base_font(self, font: QFont) -> None:
        """Title and figures a little larger and bold, relative to the window's text size."""
        title = QFont(font)
        title.setBold(True)
        title.setPointSizeF(font.pointSizeF() * 1.3)
        self.title.setFont(title)
        value = QFont(font)
        value.setBold(True)
        value.setPointSizeF(font.pointSizeF() * 1.15)
        # The figures' column is as wide as a wide figure, not as the figures shown now: otherwise each keystroke
        # that changes a figure's width moves the details column, rewraps its texts and lays the panel out again.
        metrics = QFontMetrics(value)
        widest = max(metrics.boundingRect(sample).width() for sample in FIGURE_SAMPLES) + metrics.horizontalAdvance(" ")
        for label in self.values.values():
            label.setFont(value)
            label.setMinimumWidth(widest)
        self.refresh()

    # ------------------------------------------------------------------
    def _refresh_after_change(self, *_: object) -> None:
        """One refresh per document change, after all its signals (Document.after_changes)."""
        self.document.after_changes(self.refresh)

    def refresh(self, *_: object) -> None:
        entry = self.document.current_entry
        if entry is None:
            self._empty("No operation selected. Add one with Edit ▸ Add operation, or open an example.")
            self.title.setText("")
            self.declaration.setText("")
            return
        state = self.document.state(entry)
        _show(self.title, entry.name)
        _show_tip(self.title, entry.name)
        analysis = state.analysis
        if analysis is None:
            _show(self.declaration, entry.declaration)
            _show_tip(self.declaration, entry.declaration)
            self._empty(f"No figures yet: {state.error}" if state.error else "No figures yet.")
            return
        self.empty.setVisible(False)
        self.body.setVisible(True)
        _show(self.declaration, str(analysis.declaration))
        _show_tip(self.declaration, str(analysis.declaration))
        self._show_stale(state)
        self._show_figures(analysis)
        self._show_tensors(analysis)
        html = derivation_html(analysis)
        if html != self._derivation_shown:  # most keystrokes elsewhere leave it as it was: keep the laid-out text
            self._derivation_shown = html
            if not retext_in_place(self.derivation.document(), html):
                self.derivation.setHtml(html)

    _derivation_shown = ""  # the HTML the derivation view holds

    def _empty(self, text: str) -> None:
        self.body.setVisible(False)
        self.empty.setText(text)
        self.empty.setVisible(True)

    def _show_stale(self, state: OperationState) -> None:
        self.stale.setVisible(state.stale)
        if state.stale:
            self.stale.setText(
                f"Stale: these figures are for the last valid declaration. The current one has an error: {state.error}"
            )
        self.notice.setVisible(bool(state.notice))
        _show(self.notice, f"Bounds missing: {state.notice}" if state.notice else "")

    def _show_figures(self, a: Analysis) -> None:
        binary = self.document.binary
        figures: dict[str, tuple[str, str]] = {
            "work": (format_flop(a.flop), f"{format_int(a.flop)} FLOP ({a.convention})"),
            "bytes": (format_bytes(a.bytes, binary), f"{format_int(a.bytes)} B"),
            "intensity": (
                format_intensity(a.intensity) if a.bytes else "—",
                f"ridge {format_intensity(a.ridge)}" if a.ridge else "no ridge without both rates",
            ),
            "compute": (
                format_time(a.compute_time) if a.compute_time is not None else "—",
                f"{a.path} at {format_flop_rate(a.compute_rate.value)}, {a.compute_rate.source}"
                if a.compute_rate
                else "needs a compute rate for " + a.path,
            ),
            "memory": _memory_figure(a, binary),
            "bound": (
                format_time(a.bound_time) if a.bound_time is not None else "—",
                _bound_detail(a),
            ),
        }
        for key, (value, detail) in figures.items():
            _show(self.values[key], value)
            _show(self.details[key], detail)
        _show_tip(self.details["work"], CONVENTION_LABELS.get(a.convention, a.convention))
        _show_tip(self.details["bytes"], f"compulsory traffic, {a.interface}")
        sentence = a.limiter_sentence()
        colour = "#b71c1c" if a.limiter == COMPUTE else "#0d47a1" if a.limiter else "#555"
        _show(self.limiter, sentence[:1].upper() + sentence[1:] + ".")
        style = f"color: {colour}; font-weight: 600; border-left: 4px solid {colour}; padding: 3px 6px; background: #fafafa;"
        if self.limiter.styleSheet() != style:  # a new style sheet re-polishes the label (font, palette, layout)
            self.limiter.setStyleSheet(style)

    def _show_tensors(self, a: Analysis) -> None:
        binary = self.document.binary
        _show(self.tensors_title, f"Tensors crossing {a.interface}")
        self.tensors.setRowCount(len(a.tensors))
        for row, t in enumerate(a.tensors):
            name = f"{t.name}[{', '.join(t.shape_symbols)}]" if t.shape_symbols else t.name
            shape = " × ".join(format_int(x) for x in t.shape) or "scalar"
            cells = (name, shape, t.dtype, t.role, format_bytes(t.bytes, binary))
            for column, text in enumerate(cells):
                item = self.tensors.item(row, column)
                if item is None:
                    item = QTableWidgetItem()
                    self.tensors.setItem(row, column, item)
                tip = text  # the whole text when the column is too narrow (widen the dock to read it)
                if column == 4:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    tip = f"{format_int(t.bytes)} B"
                elif column == 0 and t.note:
                    tip = t.note
                if item.text() != text:  # an edit changes a few cells: the others are not set (nor repainted) again
                    item.setText(text)
                if item.toolTip() != tip:
                    item.setToolTip(tip)
        rows_height = sum(self.tensors.rowHeight(r) for r in range(len(a.tensors)))
        height = self.tensors.horizontalHeader().height() + rows_height + 4
        if (self.tensors.minimumHeight(), self.tensors.maximumHeight()) != (height, height):
            self.tensors.setFixedHeight(height)

    def copy_derivation(self) -> None:
        entry = self.document.current_entry
        analysis = self.document.state(entry).analysis if entry is not None else None
        if analysis is not None:
            QGuiApplication.clipboard().setText(analysis.derivation_text())


def retext_in_place(document: QTextDocument, html: str) -> bool:
    """Make `document` show `html` by replacing the text of the paragraphs that changed, where the new HTML has
    the same structure (paragraphs, their formats, tables, lists) and each changed paragraph is one run of one
    format; False (and `document` untouched) otherwise.

    A keystroke in the declaration changes figures in most derivation steps but not its shape. setHtml would
    clear the view (its scroll bar hides and shows again), parse and lay out every paragraph and repaint the
    whole view; replaced in place, only the changed paragraphs are laid out and repainted."""
    fresh = QTextDocument()
    fresh.setHtml(html)
    if fresh.blockCount() != document.blockCount():
        return False
    edits: list[tuple[int, int, str, QTextCharFormat]] = []
    new, old = fresh.begin(), document.begin()
    while new.isValid() and old.isValid():
        if not _same_format(new.blockFormat(), old.blockFormat()) or (new.textList() is None) != (old.textList() is None):
            return False
        if (QTextCursor(new).currentTable() is None) != (QTextCursor(old).currentTable() is None):
            return False
        new_runs, old_runs = _runs(new), _runs(old)
        if new.text() != old.text():
            if len(new_runs) != 1 or len(old_runs) != 1 or not _same_format(new_runs[0].charFormat(), old_runs[0].charFormat()):
                return False
            edits.append((old.position(), old.length() - 1, new.text(), new_runs[0].charFormat()))
        elif len(new_runs) != len(old_runs) or not all(
            _same_format(a.charFormat(), b.charFormat()) for a, b in zip(new_runs, old_runs)
        ):
            return False
        new, old = new.next(), old.next()
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    for position, length, text, char_format in reversed(edits):  # from the end: earlier positions stay valid
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(text, char_format)
    cursor.endEditBlock()
    return True


def _same_format(a: QTextFormat, b: QTextFormat) -> bool:
    """Equal formats, but for the index of the object (a list, a table) they belong to, which is the
    document's own numbering (it grows with every setHtml)."""
    if a == b:
        return True
    ours, theirs = a.properties(), b.properties()
    for properties in (ours, theirs):
        properties.pop(int(QTextFormat.Property.ObjectIndex.value), None)
    return ours == theirs


def _runs(block: QTextBlock) -> list[QTextFragment]:
    """A paragraph's runs of text of one format."""
    runs = []
    it = block.begin()
    while not it.atEnd():
        fragment = it.fragment()
        if fragment.isValid():
            runs.append(fragment)
        it += 1
    return runs


def _show(label: QLabel, text: str) -> None:
    """Set a label's text only when it differs: most keystrokes change a few figures, and each new text is
    laid out, may change the label's size hint (and so the panel's layout) and repaints the label."""
    if label.text() != text:
        label.setText(text)


def _show_tip(widget: QWidget, tip: str) -> None:
    if widget.toolTip() != tip:
        widget.setToolTip(tip)


def _memory_figure(a: Analysis, binary: bool) -> tuple[str, str]:
    """The memory side: its slowest interface (HBM unless an inner level is slower, as under a naive kernel)."""
    hbm = (
        f"{a.memory_name} at {format_bandwidth(a.bandwidth.value, binary)}, {a.bandwidth.source}"
        if a.bandwidth
        else "needs a memory bandwidth"
    )
    slowest = a.memory_side_term
    if a.memory_time is None or slowest is None or slowest.time_s is None or slowest.name == HBM:
        return (format_time(a.memory_time) if a.memory_time is not None else "—", hbm)
    assert slowest.rate is not None
    return (
        format_time(slowest.time_s),
        f"{slowest.title} at {format_bandwidth(slowest.rate.value, binary)}, {slowest.rate.source} "
        f"(the slowest level; {a.memory_name} {format_time(a.memory_time)})",
    )


def _bound_detail(a: Analysis) -> str:
    if a.bound_time is None or a.bound_no_overlap is None or a.bound_full_overlap is None:
        return "needs both rates"
    label = a.overlap.label
    if label == "full":
        return f"full overlap (max); none: {format_time(a.bound_no_overlap)}"
    if label == "none":
        return f"no overlap (sum); full: {format_time(a.bound_full_overlap)}"
    return f"overlap f = {label}; full {format_time(a.bound_full_overlap)}, none {format_time(a.bound_no_overlap)}"


SIDE_BY_SIDE = ": logical | physical"  # a step whose expression reads "logical | physical" (an implementation model)
_MONO = "font-family:\"DejaVu Sans Mono\",monospace"


def _side_by_side_html(rows: list[tuple[str, str, str, str]]) -> str:
    """Logical beside physical work as one table: what, logical, physical, and what the physical figure means."""
    cell = "padding:1px 12px 1px 0; white-space:nowrap"
    head = (f"<tr><th></th><th align='right' style='{cell}; color:#37474f'>Logical</th>"
            f"<th align='right' style='{cell}; color:#b71c1c'>Physical</th></tr>")
    body = "".join(
        f"<tr><td colspan='3' style='padding-top:4px; color:#37474f'><b>{html.escape(what)}</b></td></tr>"
        f"<tr><td width='10'></td><td align='right' style='{cell}; {_MONO}'>{html.escape(logical)}</td>"
        f"<td align='right' style='{cell}; {_MONO}; color:#b71c1c'>{html.escape(physical)}</td></tr>"
        f"<tr><td></td><td colspan='2' align='right' style='{cell}; color:#555'>{html.escape(result)}</td></tr>"
        for what, logical, physical, result in rows
    )
    return f"<table style='margin:4px 0 0 0' cellspacing='0'>{head}{body}</table>"


def derivation_html(a: Analysis) -> str:
    """The derivation as HTML: label, then expression = result in monospace; notes below.

    Consecutive logical-versus-physical steps (an implementation model's
    work and bytes per interface) become one table with a Logical and a
    Physical column, so the two read side by side.
    """
    rows: list[str] = []
    table: list[tuple[str, str, str, str]] = []
    for step in a.steps:
        if step.label.endswith(SIDE_BY_SIDE) and step.expression.count(" | ") == 1:
            logical, physical = step.expression.split(" | ")
            table.append((step.label[: -len(SIDE_BY_SIDE)], logical, physical, step.result))
            continue
        if table:
            rows.append(_side_by_side_html(table))
            table = []
        rows.append(
            f"<p style='margin:6px 0 0 0; color:#37474f'><b>{html.escape(step.label)}</b></p>"
            f"<p style='margin:0 0 0 14px; {_MONO}'>{html.escape(step.body)}</p>"
        )
    if table:
        rows.append(_side_by_side_html(table))
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in a.notes)
    return "".join(rows) + (
        f"<p style='margin-top:10px; color:#37474f'><b>Notes</b></p><ul style='margin-top:0; color:#444'>{notes}</ul>"
        if notes
        else ""
    )
