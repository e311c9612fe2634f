"""The analysis panel: the figures of the selected operation, its tensors and its derivation.

It reads the document's last valid `Analysis` for the selected operation;
when the current text has an error the figures stay, under a banner saying
they are stale.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import Shiboken

from workbench.model.analysis import COMPUTE, Analysis
from workbench.model.devices.interfaces import HBM
from workbench.gui.document import TYPING_PAUSE_MS, Document, OperationState
from workbench.gui.derivation_view import DerivationView, derivation_rich_text
from workbench.gui.plain_text import plain, tooltip
from workbench.documents.session import OperationEntry
from workbench.model.conventions import CONVENTION_LABELS
from workbench.model.units import (
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
DETAIL_SAMPLE = "8,888,888,888,888,888"  # as long as the details' longest word (an exact FLOP or byte count) gets: 8.9e18


class AnalysisPanel(QWidget):
    """Figures with units, the limiter, tensor traffic and the step-by-step derivation."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._build_labels()
        grid = self._build_figures()
        self._build_tensors()
        derivation_row = self._build_derivation()
        self.empty = plain(QLabel("No operation selected."))
        self.empty.setObjectName("panelEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._lay_out(grid, derivation_row)
        # The labels a keystroke retexts are opaque: a label repainted with its new text is then all that repaints,
        # not also the panel behind it (the parents of a label with a transparent background paint its region
        # first). Each fills its background with the window colour its parents show there; the
        # limiter's and the banner's style sheets then paint their own backgrounds over all of it.
        for label in (self.title, self.declaration, self.notice, *self.values.values(), *self.details.values()):
            label.setAutoFillBackground(True)
        self.refilled = FilledAfterStyle([self.stale, self.limiter], self)
        self.set_base_font(self.font())
        document.analysis_changed.connect(self._refresh_after_change)
        document.selection_changed.connect(self._refresh_after_change)
        document.operations_changed.connect(self._refresh_after_change)
        self.refresh()

    def _build_labels(self) -> None:
        """The title, the declaration, the stale banner and the notice."""
        self.title = plain(QLabel())
        self.title.setObjectName("panelTitle")
        self.title.setWordWrap(True)
        self.declaration = plain(QLabel())
        self.declaration.setObjectName("panelDeclaration")
        self.declaration.setWordWrap(True)
        self.declaration.setStyleSheet("color: #555; font-family: 'DejaVu Sans Mono', monospace;")
        # The name and the declaration wrap at the panel's width; their longest word ("40961×4096×4096") does not
        # set the panel's least width, which would then change with every keystroke (and, in a narrow dock, make
        # the panel scroll and lay it out again). A word longer than the panel is cut; the tooltip has it whole.
        for label in (self.title, self.declaration):
            label.setMinimumWidth(1)

        self.stale = plain(QLabel())
        self.stale.setObjectName("staleBanner")
        self.stale.setWordWrap(True)
        self.stale.setStyleSheet("background: #fff3cd; color: #6d4c00; border: 1px solid #e0c060; padding: 4px;")
        self.notice = plain(QLabel())
        self.notice.setObjectName("panelNotice")
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet("color: #6d4c00;")
        self.limiter = plain(QLabel())
        self.limiter.setObjectName("limiter")
        self.limiter.setWordWrap(True)

    def _build_figures(self) -> QGridLayout:
        """A row per figure: its name, its value and a detail (the details under the values when stacked)."""
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(3)
        self.values: dict[str, QLabel] = {}
        self.details: dict[str, QLabel] = {}
        for row, key in enumerate(FIGURES):
            name = QLabel(FIGURE_TITLES[key])
            name.setStyleSheet("color: #444;")
            value = plain(QLabel())
            value.setObjectName(f"figure_{key}")
            detail = plain(QLabel())
            detail.setObjectName(f"detail_{key}")
            detail.setWordWrap(True)
            detail.setStyleSheet("color: #555;")
            grid.addWidget(name, 2 * row, 0, Qt.AlignmentFlag.AlignTop)  # (the odd rows take the details when stacked)
            grid.addWidget(value, 2 * row, 1, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(detail, 2 * row, 2, Qt.AlignmentFlag.AlignTop)
            self.values[key] = value
            self.details[key] = detail
        grid.setColumnStretch(2, 1)
        self.figures_grid = grid
        self._details_stacked = False
        self._detail_column_width = 0  # the details' column's least width beside the figures (set_base_font)
        # The declaration and the figures can be selected with the mouse (to copy a figure), from the first press on.
        self.selectable = SelectableOnPress([self.declaration, *self.values.values()], self)
        return grid

    def _build_tensors(self) -> None:
        """The tensors crossing HBM, a row each, with its title."""
        tensors_title = QLabel("Tensors crossing HBM → on-chip caches")
        tensors_title.setStyleSheet("font-weight: 600;")
        tensors_title.setWordWrap(True)  # on one line it alone is wider than the dock at presentation size
        self.tensors_title = tensors_title
        self.tensors = QTableWidget(0, 5)
        self.tensors.setObjectName("tensorTable")
        self.tensors.setHorizontalHeaderLabels(["Tensor", "Shape", "Type", "Traffic", "Bytes"])
        self.tensors.setWordWrap(False)
        self.tensors.verticalHeader().setVisible(False)
        self.tensors.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tensors.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.tensors.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = self.tensors.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # fitted to their contents: FittedColumns
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.tensor_columns = FittedColumns(self.tensors, (0, 2, 3, 4))
        self.tensors.verticalHeader().sectionResized.connect(self._fit_tensor_height)
        self.tensors.horizontalHeader().geometriesChanged.connect(self._fit_tensor_height)
        self.tensors.horizontalScrollBar().rangeChanged.connect(self._fit_tensor_height)

    def _build_derivation(self) -> QHBoxLayout:
        """The derivation view, written out once the typing pauses, and its title row with the copy button."""
        self.derivation = DerivationView()
        self.derivation.setObjectName("derivation")
        # While the declaration is typed, the figures follow every keystroke and the derivation (the longest text
        # of the window, to be read) is written out once the typing pauses: see _show_derivation.
        self._derivation_of: OperationEntry | None = None
        # Labels whose height is held while the declaration is typed, pauses included: they grow, and take their
        # own heights again at the next change that is not a keystroke (another operation, an undo, a session).
        # The rows under a label that wraps onto one line fewer for one keystroke and one more for the next do not
        # jump up and down, nor is the panel under them laid out and repainted for it. Each with its own least
        # height from before the hold.
        self._held: list[tuple[QLabel, int]] = []
        self._derivation_timer = QTimer(self)
        self._derivation_timer.setSingleShot(True)
        # Precise: a coarse timer (Qt's default) may fire up to 5 % early, before the pause has been reached.
        self._derivation_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._derivation_timer.setInterval(TYPING_PAUSE_MS)
        self._derivation_timer.timeout.connect(self.catch_up_derivation)
        copy_button = QPushButton("Copy derivation")
        copy_button.setObjectName("copyDerivation")
        copy_button.clicked.connect(self.copy_derivation)
        derivation_title = QLabel("Derivation")
        derivation_title.setStyleSheet("font-weight: 600;")
        derivation_row = QHBoxLayout()
        derivation_row.addWidget(derivation_title)
        derivation_row.addStretch(1)
        derivation_row.addWidget(copy_button)
        return derivation_row

    def _lay_out(self, grid: QGridLayout, derivation_row: QHBoxLayout) -> None:
        """One layout for the whole panel; the widgets shown only with figures listed in `figure_widgets`."""
        # One layout for the whole panel: a keystroke retexts the title and the declaration and the figures, and
        # each layout they are in is laid out again after it (and a nested one lays out its parent's again).
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.declaration)
        layout.addWidget(self.stale)
        layout.addLayout(grid)
        layout.addWidget(self.limiter)
        layout.addWidget(self.notice)
        layout.addWidget(self.tensors_title)
        layout.addWidget(self.tensors)
        layout.addLayout(derivation_row)
        layout.addWidget(self.derivation, 1)
        layout.addWidget(self.empty, 1)
        # What an operation with figures shows, and hides without them (the banner and the notice show as needed).
        row_widgets = [derivation_row.itemAt(index).widget() for index in range(derivation_row.count())]
        self.figure_widgets: list[QWidget] = [
            *(grid.itemAt(index).widget() for index in range(grid.count())),
            self.limiter,
            self.tensors_title,
            self.tensors,
            *(widget for widget in row_widgets if widget is not None),
            self.derivation,
        ]
        self._figures_shown = True

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
        # The details' column is at least as wide as a long exact count: its least width is the details' longest
        # word, which changes with every keystroke (137,438,953,472 ↔ 1,374,389,534,720 FLOP); where the panel is
        # narrower than its least width (presentation), that width would change, and the panel be laid out again.
        sample = QLabel(DETAIL_SAMPLE)  # measured as a detail measures its longest word
        sample.setWordWrap(True)
        sample.setStyleSheet(self.details["work"].styleSheet())
        sample.setFont(font)
        self._detail_column_width = sample.minimumSizeHint().width()
        self.figures_grid.setColumnMinimumWidth(2, 0 if self._details_stacked else self._detail_column_width)
        self.refresh()

    def stack_details(self, stacked: bool) -> None:
        """Each figure's detail under its name and figure (presentation) or beside them, in a third column.

        At presentation size the three columns are wider than the dock gives the panel: the details (the exact
        counts, the rates and their sources) were off to the right, seen only by scrolling sideways. Under the
        figures they wrap in the width of the names and figures, and the panel fits its dock."""
        if stacked == self._details_stacked:
            return
        self._details_stacked = stacked
        grid = self.figures_grid
        for row, key in enumerate(FIGURES):
            detail = self.details[key]
            grid.removeWidget(detail)
            # Under the figures a detail is as wide as the names and figures are, and wraps in that width: its own
            # widths (which change with its text on every keystroke) are not asked, or they would move the columns.
            policy = detail.sizePolicy()
            policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored if stacked else QSizePolicy.Policy.Preferred)
            detail.setSizePolicy(policy)
            if stacked:
                grid.addWidget(detail, 2 * row + 1, 0, 1, 2, Qt.AlignmentFlag.AlignTop)
            else:
                grid.addWidget(detail, 2 * row, 2, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(1, 1 if stacked else 0)
        grid.setColumnStretch(2, 0 if stacked else 1)
        grid.setColumnMinimumWidth(2, 0 if stacked else self._detail_column_width)

    @property
    def details_stacked(self) -> bool:
        return self._details_stacked

    # ------------------------------------------------------------------
    def _refresh_after_change(self, *_: object) -> None:
        """One refresh per document change, after all its signals (Document.after_changes)."""
        self.document.after_changes(self.refresh)

    def refresh(self, *_: object) -> None:
        if self.document.typing:
            self._hold_heights()
        elif self._held:
            self._release_heights()
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
            self.selectable.show(self.declaration, entry.declaration)
            _show_tip(self.declaration, entry.declaration)
            self._empty(f"No figures yet: {state.error}" if state.error else "No figures yet.")
            return
        self._show_figure_widgets(True)
        declaration = str(analysis.declaration)  # written out from its parts: once
        self.selectable.show(self.declaration, declaration)
        _show_tip(self.declaration, declaration)
        self._show_stale(state)
        self._show_figures(analysis)
        self._show_tensors(analysis)
        self._show_derivation(entry, analysis)

    def _show_derivation(self, entry: OperationEntry, analysis: Analysis) -> None:
        """The derivation of `analysis`: at once, or, for a keystroke into the declaration of the operation whose
        derivation is shown (Document.typing), once the typing pauses."""
        if self.document.typing and entry is self._derivation_of:
            self._derivation_timer.start()  # (again): TYPING_PAUSE_MS after this keystroke
            return
        self._derivation_timer.stop()
        self._derivation_of = entry
        self.derivation.show_rich_text(derivation_rich_text(analysis))

    @property
    def derivation_due(self) -> bool:
        """Whether the derivation shown waits for the typing to pause."""
        return self._derivation_timer.isActive()

    def _hold_heights(self) -> None:
        """Before a keystroke's texts: hold the height of each label a keystroke may rewrap, at the tallest it has
        been since the typing began (a label that grew for the last keystroke keeps that height)."""
        held = {label for label, _ in self._held}
        for label in (self.title, self.declaration, self.limiter, *self.details.values()):
            if label.isVisible():
                height = label.height()
                if label not in held:
                    self._held.append((label, label.minimumHeight()))
                if height > label.minimumHeight():
                    label.setMinimumHeight(height)

    def _release_heights(self) -> None:
        held, self._held = self._held, []
        for label, least in held:
            label.setMinimumHeight(least)

    @property
    def heights_held(self) -> bool:
        """Whether the labels' heights are held for the typing (until a change that is not a keystroke)."""
        return bool(self._held)

    def catch_up_derivation(self) -> None:
        """Write out the derivation of the selected operation (the typing paused)."""
        self._derivation_timer.stop()
        entry = self.document.current_entry
        analysis = self.document.state(entry).analysis if entry is not None else None
        if entry is not None and analysis is not None:
            self._show_derivation(entry, analysis)

    def _empty(self, text: str) -> None:
        self._show_figure_widgets(False)
        self.empty.setText(text)

    def _show_figure_widgets(self, shown: bool) -> None:
        """The figures, tensors and derivation, or instead the line saying why there are none."""
        if shown != self._figures_shown:
            self._figures_shown = shown
            for widget in self.figure_widgets:
                widget.setVisible(shown)
            if not shown:
                self.stale.setVisible(False)
                self.notice.setVisible(False)
        self.empty.setVisible(not shown)

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
            self.selectable.show(self.values[key], value)
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
        changed: list[tuple[int, int, str, str]] = []  # the cells whose text or tooltip differs
        for row, t in enumerate(a.tensors):
            name = f"{t.name}[{', '.join(t.shape_symbols)}]" if t.shape_symbols else t.name
            shape = " × ".join(format_int(x) for x in t.shape) or "scalar"
            cells = (name, shape, t.dtype, t.role, format_bytes(t.bytes, binary))
            for column, text in enumerate(cells):
                item = self.tensors.item(row, column)
                if item is None:
                    item = QTableWidgetItem()
                    if column == 4:
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.tensors.setItem(row, column, item)
                tip = text  # the whole text when the column is too narrow (widen the dock to read it)
                if column == 4:
                    tip = f"{format_int(t.bytes)} B"
                elif column == 0 and t.note:
                    tip = t.note
                tip = tooltip(tip)
                if item.text() != text or item.toolTip() != tip:  # an edit changes a few cells: not the others
                    changed.append((row, column, text, tip))
        for row, column, text, tip in changed:
            item = self.tensors.item(row, column)
            item.setText(text)
            item.setToolTip(tip)
        self._fit_tensor_height()
        self.tensor_columns.fit({column for _, column, _, _ in changed})

    def _fit_tensor_height(self, *_: object) -> None:
        """The tensor table as tall as its header, rows and (where the columns are wider than it) scroll bar: every
        row shown, none scrolled. Also when the rows grow after the text size changed (the header resizes its
        sections on a later turn of the event loop, after the panel has been refreshed at the new size)."""
        table = self.tensors
        height = table.horizontalHeader().height() + sum(table.rowHeight(r) for r in range(table.rowCount())) + 4
        bar = table.horizontalScrollBar()
        if bar.maximum() > 0:  # columns wider than the table (long names at presentation size): the bar takes room
            height += bar.sizeHint().height()
        if (table.minimumHeight(), table.maximumHeight()) != (height, height):
            table.setFixedHeight(height)

    def copy_derivation(self) -> None:
        if self.derivation_due:  # what is copied is what the view shows
            self.catch_up_derivation()
        entry = self.document.current_entry
        analysis = self.document.state(entry).analysis if entry is not None else None
        if analysis is not None:
            QGuiApplication.clipboard().setText(analysis.derivation_text())


class FittedColumns(QObject):
    """Table columns as wide as their contents, as QHeaderView's ResizeToContents makes them, but measured again
    only for the columns whose cells changed (`fit` with those columns, after changing them), and all of them on
    a new font, style or number of rows.

    A header that fits its columns to their contents measures every cell of every such column for each cell
    change it hears of: a keystroke changes four texts and four tooltips of the tensor table, and the header
    measured the table eight times. Fitted here, a keystroke measures the bytes column once, and each changed
    cell is repainted alone rather than the whole table."""

    def __init__(self, table: QTableWidget, columns: tuple[int, ...]) -> None:
        super().__init__(table)
        self.table = table
        self.columns = columns
        for widget in (table, table.horizontalHeader()):
            widget.installEventFilter(self)
        model = table.model()
        for rows_changed in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            rows_changed.connect(lambda *_: self._rows_changed())

    def fit(self, columns: set[int] | None = None) -> None:
        """Fit `columns` (all the fitted ones by default) as ResizeToContents would: the widest of the cells'
        and the header's size hints, within the header's least and largest section size."""
        header = self.table.horizontalHeader()
        for column in self.columns:
            if columns is not None and column not in columns:
                continue
            width = max(self.table.sizeHintForColumn(column), header.sectionSizeHint(column))
            width = max(header.minimumSectionSize(), min(width, header.maximumSectionSize()))
            if header.sectionSize(column) != width:
                header.resizeSection(column, width)

    def _rows_changed(self) -> None:
        if Shiboken.isValid(self.table):  # not while the table is being destroyed (its model empties itself)
            self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.Polish):
            self.fit()
        return False


class FilledAfterStyle(QObject):
    """Widgets whose style sheet paints a background over their whole rectangle, made opaque (their background
    filled first, autoFillBackground) so that repainting one does not repaint its parents behind it.

    A style sheet that paints a background turns autoFillBackground off when it polishes the widget (on every new
    style sheet: the limiter's colour follows the limiter); it is turned on again after each polish (the Polish
    and StyleChange events come after the style has polished the widget). The fill is then painted over by the
    style sheet's background and border, so the widget looks as it did."""

    def __init__(self, widgets: list[QWidget], parent: QObject) -> None:
        super().__init__(parent)
        for widget in widgets:
            widget.setAutoFillBackground(True)
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() in (QEvent.Type.Polish, QEvent.Type.StyleChange) and isinstance(watched, QWidget):
            watched.setAutoFillBackground(True)
        return False


class SelectableOnPress(QObject):
    """Labels whose text the mouse can select (to copy a figure or the declaration), made selectable by the press
    that starts a selection rather than for good.

    A QLabel that is selectable keeps its text in a QTextDocument (a text control), which it fills and lays out
    again for every new text, for its size hints and again to paint it: ≈ 0.5 ms a label, and a keystroke in the
    declaration changes the declaration and six figures. A label that is not selectable draws its text directly.
    A mouse press on one of these labels makes it selectable before the press reaches it, so the press starts a
    selection (a double click selects a word) or, with the right button, opens the label's Copy / Select All menu,
    as on a label selectable from the start. A label goes back to drawing its text directly when its text changes
    while it has no focus: the new text has no selection to keep (and a label loses its selection with its focus)."""

    SELECTABLE = Qt.TextInteractionFlag.TextSelectableByMouse

    def __init__(self, labels: list[QLabel], parent: QObject) -> None:
        super().__init__(parent)
        self.labels = labels
        self._plain = {label: label.textInteractionFlags() for label in labels}  # the flags of a label not selectable
        for label in labels:
            label.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick) and watched in self._plain:
            assert isinstance(watched, QLabel)
            if not watched.textInteractionFlags() & self.SELECTABLE:
                watched.setTextInteractionFlags(self.SELECTABLE)
        return False  # the label then takes the press as a selectable label does

    def show(self, label: QLabel, text: str) -> None:
        """Set `label`'s text where it differs (_show); a label selectable but without focus stops being so."""
        if label.text() == text:
            return
        label.setText(text)
        if label.textInteractionFlags() & self.SELECTABLE and not label.hasFocus():
            label.setTextInteractionFlags(self._plain[label])


def _show(label: QLabel, text: str) -> None:
    """Set a label's text only when it differs: most keystrokes change a few figures, and each new text is
    laid out, may change the label's size hint (and so the panel's layout) and repaints the label.

    A new text is shaped by QLabel about five times (its size hints measure it at up to five widths, then its
    height for the panel's width, then its paint). A QLabel subclass that shapes each text once is not used:
    C++ would call its Python overrides for every size query and paint, which costs more than the shaping it
    saves for texts this short (counted with callgrind on a keystroke)."""
    if label.text() != text:
        label.setText(text)


def _show_tip(widget: QWidget, tip: str) -> None:
    tip = tooltip(tip)
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
