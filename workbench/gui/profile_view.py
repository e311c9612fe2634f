"""The Profile tab and the roofline's imported kernels: profiled figures against the declared floor.

The comparison sits in its own tab beside Roofline / Bound vs size rather
than in the analysis panel: it is a table of three columns (profiled,
declared, ratio) over five rows, a list of causes and some twenty derivation
steps, which need the central area's width; the docked panel is already full
with the declaration's own figures and derivation, and the roofline (where
the same kernels appear as stars) is one tab away.

`ProfiledKernelLayer` is the roofline's block for the third kind of point:
one scatter item and one item of dotted links, created once and updated with
`setData` from `RooflineView.refresh`.
"""

from __future__ import annotations

import html
from typing import Any, Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from workbench.model.devices.catalogue import match_reported_name
from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.profile_model import (
    ImportedKernel,
    KernelComparison,
    comparisons_for,
    document_kernels,
    document_records,
    percent_of_bound,
    ratio_text,
    summary_counts,
)
from workbench.gui.plain_text import plain, tooltip
from workbench.profilers import Cause, Comparison
from workbench.profilers.kernel_compare import profile_device
from workbench.profilers.counters import LEVEL_METHODS
from workbench.model.units import format_bytes, format_flop, format_intensity, format_time

LEVEL_CHOICES = {"ncu": "Nsight Compute's sections", "nersc": "NERSC method"}
LEVEL_SHORT = {"ncu": "ncu", "nersc": "NERSC"}
LEVEL_POINT_COLOURS = {"DRAM": "#37474f", "L2": "#6a1b9a", "L1": "#00838f"}

NAME_LIMIT = 64  # characters of a kernel name in titles and choosers; tool tips carry the whole name
NOTE_STYLE = "background: #fff3cd; color: #6d4c00; border: 1px solid #e0c060; padding: 5px;"
EMPTY_TEXT = (
    "No profile imported. File ▸ Import profile… reads Nsight Compute CSV "
    "(ncu --csv --page details or --page raw) and Nsight Systems kernel summaries "
    "(nsys stats --report cuda_gpu_kern_sum --format csv); you can also drop the .csv file on the window."
)
FIGURE_ROWS = ("read", "write", "traffic", "work", "time")
FIGURE_TITLES = {
    "read": "DRAM read",
    "write": "DRAM write",
    "traffic": "DRAM traffic",
    "work": "Work",
    "time": "Duration",
}


# ---------------------------------------------------------------- the Profile tab


def shortened(name: str, limit: int = NAME_LIMIT) -> str:
    """A kernel name cut to `limit` characters with '…' (one unbreakable word would widen the window)."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _causes_html(title: str, causes: Sequence[Cause]) -> str:
    if not causes:
        return ""
    items = []
    for cause in causes:
        flag = "<b>likely</b>" if cause.likely else "<span style='color:#757575'>possible</span>"
        evidence = f" <span style='color:#5d4037'>[{html.escape(cause.evidence)}]</span>" if cause.evidence else ""
        items.append(f"<li>{flag}: <b>{html.escape(cause.name)}</b> — {html.escape(cause.explanation)}{evidence}</li>")
    return f"<p style='margin:6px 0 2px 0; color:#37474f'><b>{html.escape(title)}</b></p><ul style='margin-top:0'>{''.join(items)}</ul>"


def comparison_html(c: Comparison) -> str:
    """The comparison's derivation steps as label, then expression = result in monospace."""
    rows = []
    for step in c.steps:
        rows.append(
            f"<p style='margin:6px 0 0 0; color:#37474f'><b>{html.escape(step.label)}</b></p>"
            f"<p style='margin:0 0 0 14px; font-family:\"DejaVu Sans Mono\",monospace'>{html.escape(step.body)}</p>"
        )
    return "".join(rows)


def causes_html(c: Comparison) -> str:
    parts = [
        _causes_html("Why the traffic differs from the floor", c.traffic_causes),
        _causes_html("Why the work differs", c.flop_causes),
        _causes_html("Why the duration differs from the bound", c.time_causes),
    ]
    text = "".join(parts)
    return text or "<p style='color:#2e7d32'><b>No difference to explain:</b> traffic, work and time are where the declaration puts them.</p>"


class ProfileComparisonView(RefreshWhenShown, QWidget):
    """Imported kernels (all files) above the comparison of the selected operation's matched kernel."""

    def __init__(
        self,
        document: Document,
        import_dialog: Callable[[], object],
        edit_matches: Callable[[int], object],
        remove_record: Callable[[int], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("profileView")
        self.document = document
        self._edit_matches = edit_matches
        self._remove_record = remove_record
        self.kernels: list[ImportedKernel] = []
        self.comparisons: list[KernelComparison] = []
        self._dirty = True

        kernels_box = self._build_kernels(import_dialog)
        lower_box = self._build_comparison()

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(kernels_box)
        self.splitter.addWidget(lower_box)
        self.splitter.setSizes([190, 640])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)

        for signal in (
            document.profiles_changed,
            document.analysis_changed,
            document.selection_changed,
            document.operations_changed,
            document.settings_changed,
            document.device_changed,
        ):
            signal.connect(self.mark_dirty)
        self.set_base_font(self.font())
        self.refresh()

    def _build_kernels(self, import_dialog: Callable[[], object]) -> QWidget:
        """The imported kernels: heading, Import / Match / Remove, the table and what could not be read."""
        self.heading = plain(QLabel())
        self.heading.setObjectName("profileHeading")
        self.heading.setStyleSheet("font-weight: 600;")
        import_button = QPushButton("Import profile…")
        import_button.setObjectName("profileImport")
        import_button.clicked.connect(lambda: import_dialog())
        self.match_button = QPushButton("Match kernels…")
        self.match_button.setObjectName("profileMatch")
        self.match_button.setToolTip("Choose again which operation each kernel of the selected file implements")
        self.match_button.clicked.connect(self._match_clicked)
        self.remove_button = QPushButton("Remove file")
        self.remove_button.setObjectName("profileRemove")
        self.remove_button.setToolTip("Remove the selected kernel's file from the session (Edit ▸ Undo brings it back)")
        self.remove_button.clicked.connect(self._remove_clicked)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        for button in (import_button, self.match_button, self.remove_button):
            top.addWidget(button)

        self.table = QTableWidget(0, 7)
        self.table.setObjectName("profileKernels")
        self.table.setHorizontalHeaderLabels(["Kernel", "File", "Launches", "Duration", "DRAM traffic", "Traffic / floor", "Matched with"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._row_chosen)
        self.problems = plain(QLabel())
        self.problems.setObjectName("profileProblems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: #b71c1c;")
        kernels_box = QWidget()
        kernels_layout = QVBoxLayout(kernels_box)
        kernels_layout.setContentsMargins(0, 0, 0, 0)
        kernels_layout.addLayout(top)
        kernels_layout.addWidget(self.table, 1)
        kernels_layout.addWidget(self.problems)

        return kernels_box

    def _build_comparison(self) -> QWidget:
        """The selected operation's comparison: title, figures, note, causes and derivation; a message in its place when there is none."""
        self.title = plain(QLabel())
        self.title.setObjectName("comparisonTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.kernel_choice = QComboBox()
        self.kernel_choice.setObjectName("comparisonKernel")
        self.kernel_choice.activated.connect(lambda _: self._show_comparison())
        title_row = QHBoxLayout()
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.kernel_choice)

        grid = self._figures_grid()
        self.note = plain(QLabel())
        self.note.setObjectName("comparisonNote")
        self.note.setWordWrap(True)
        self.note.setStyleSheet(NOTE_STYLE)
        self.device_button = QPushButton()
        self.device_button.setObjectName("useProfiledDevice")
        self.device_button.clicked.connect(self._use_profiled_device)
        self._profiled_device_key = ""
        note_row = QHBoxLayout()
        note_row.addWidget(self.note, 1)
        note_row.addWidget(self.device_button, 0, Qt.AlignmentFlag.AlignTop)

        self.causes = QTextBrowser()
        self.causes.setObjectName("comparisonCauses")
        self.causes.setOpenLinks(False)
        self.derivation = QTextBrowser()
        self.derivation.setObjectName("comparisonDerivation")
        self.derivation.setOpenLinks(False)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.setChildrenCollapsible(False)
        for title, widget in (("Likely causes", self.causes), ("Derivation", self.derivation)):
            box = QWidget()
            box_layout = QVBoxLayout(box)
            box_layout.setContentsMargins(0, 0, 0, 0)
            label = QLabel(title)
            label.setStyleSheet("font-weight: 600;")
            box_layout.addWidget(label)
            box_layout.addWidget(widget, 1)
            lower.addWidget(box)
        lower.addWidget(self._levels_box())
        lower.setSizes([280, 300, 520])

        self.comparison_box = QWidget()
        comparison_layout = QVBoxLayout(self.comparison_box)
        comparison_layout.setContentsMargins(0, 4, 0, 0)
        comparison_layout.addLayout(title_row)
        comparison_layout.addLayout(grid)
        comparison_layout.addLayout(note_row)
        comparison_layout.addWidget(lower, 1)
        self.message = plain(QLabel())
        self.message.setObjectName("comparisonMessage")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setStyleSheet("color: #555;")
        self.message.setMargin(24)
        lower_box = QWidget()
        lower_layout = QVBoxLayout(lower_box)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.comparison_box, 1)
        lower_layout.addWidget(self.message, 1)

        return lower_box

    def _figures_grid(self) -> QGridLayout:
        """Profiled, declared, ratio and verdict for each figure row."""
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(3)
        for column, text in enumerate(("", "Profiled", "Declared", "Ratio", "")):
            label = QLabel(text)
            label.setStyleSheet("color: #444; font-weight: 600;")
            grid.addWidget(label, 0, column)
        self.cells: dict[str, tuple[QLabel, QLabel, QLabel, QLabel]] = {}
        for row, key in enumerate(FIGURE_ROWS, start=1):
            name = QLabel(FIGURE_TITLES[key])
            name.setStyleSheet("color: #444;")
            grid.addWidget(name, row, 0)
            cells = []
            for column, role in enumerate(("actual", "declared", "ratio", "verdict"), start=1):
                cell = plain(QLabel())
                cell.setObjectName(f"{key}_{role}")
                cell.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                if role == "verdict":
                    cell.setWordWrap(True)
                    cell.setStyleSheet("color: #555;")
                grid.addWidget(cell, row, column)
                cells.append(cell)
            self.cells[key] = (cells[0], cells[1], cells[2], cells[3])
        grid.setColumnStretch(4, 1)

        return grid

    def set_base_font(self, font: QFont) -> None:
        title = QFont(font)
        title.setBold(True)
        title.setPointSizeF(font.pointSizeF() * 1.2)
        self.title.setFont(title)
        value = QFont(font)
        value.setBold(True)
        for actual, declared, ratio, _ in self.cells.values():
            for label in (actual, declared, ratio):
                label.setFont(value)

    # ------------------------------------------------------------------ drawing
    def refresh(self) -> None:
        self._dirty = False
        records = document_records(self.document)
        self.kernels = document_kernels(self.document)
        counts = summary_counts(records, self.kernels)
        if records:
            files = f"{counts['files']} file{'s' if counts['files'] != 1 else ''}"
            self.heading.setText(f"Imported kernels: {files}, {counts['kernels']} kernels, {counts['matched']} matched")
        else:
            self.heading.setText("Imported kernels")
        broken = [f"{record.title}: {record.error}" for record in records if record.error]
        self.problems.setText("\n".join(f"Cannot read {line}" for line in broken))
        self.problems.setVisible(bool(broken))
        self._fill_table()
        self.match_button.setEnabled(bool(self.kernels))
        self.remove_button.setEnabled(bool(records))

        if not records:
            self._message(EMPTY_TEXT)
            return
        entry = self.document.current_entry
        if entry is None:
            self._message("Select an operation to compare its matched kernels with it.")
            return
        try:
            self.comparisons = comparisons_for(self.document, self.document.current, self.kernels)
        except WorkbenchError as exc:
            self._message(f"Cannot compare with {entry.name}: {exc}")
            return
        if not self.comparisons:
            if self.document.state(entry).analysis is None:
                self._message(f"{entry.name} has no valid declaration to compare with.")
            else:
                self._message(
                    f"No imported kernel is matched with {entry.name}. Choose the operation of a kernel with "
                    "Match kernels…, or select an operation named in the Matched with column."
                )
            return
        previous = self.kernel_choice.currentData()
        self.kernel_choice.clear()
        for found in self.comparisons:
            self.kernel_choice.addItem(shortened(found.imported.label, NAME_LIMIT + 30), found.imported.key)
        keep = self.kernel_choice.findData(previous)
        self.kernel_choice.setCurrentIndex(max(keep, 0))
        self.kernel_choice.setVisible(len(self.comparisons) > 1)
        self.message.setVisible(False)
        self.comparison_box.setVisible(True)
        self._show_comparison()

    def _message(self, text: str) -> None:
        self.comparisons = []
        self.comparison_box.setVisible(False)
        self.message.setText(text)
        self.message.setVisible(True)

    def _fill_table(self) -> None:
        binary = self.document.binary
        operations = self.document.operations
        selected_key = self.selected_kernel_key()
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.kernels))
        for row, imported in enumerate(self.kernels):
            kernel = imported.kernel
            duration = "—" if kernel.duration is None else format_time(float(kernel.duration.value))
            traffic = "—" if kernel.dram.total is None else format_bytes(float(kernel.dram.total.value), binary)
            matched = "not matched" if imported.rule is None else (
                operations[imported.operation].name if imported.operation is not None else f"{imported.rule.declaration} (no such operation)"
            )
            floor = "—"
            if imported.operation is not None and kernel.dram.total is not None:
                analysis = self.document.state(operations[imported.operation]).analysis
                if analysis is not None and analysis.bytes > 0:
                    floor = ratio_text(float(kernel.dram.total.value) / analysis.bytes)
            cells = (kernel.base_name, imported.source, str(kernel.instances), duration, traffic, floor, matched)
            rule = imported.rule
            tips = (
                kernel.name,
                f"{imported.profile.title}\n{imported.profile.conditions_note}",
                "", "", "", "DRAM traffic / compulsory bytes of the matched operation",
                "" if rule is None else f"pattern {rule.pattern}\n{rule.declaration}",
            )
            for column, (text, tip) in enumerate(zip(cells, tips)):
                item = self.table.item(row, column)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(row, column, item)
                item.setText(text)
                item.setToolTip(tooltip(tip))
                if 2 <= column <= 5:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.table.clearSelection()
        for row, imported in enumerate(self.kernels):
            if imported.key == selected_key:
                self.table.selectRow(row)
        self.table.blockSignals(False)

    def selected_kernel_key(self) -> tuple[int, str] | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if rows and 0 <= rows[0].row() < len(self.kernels):
            return self.kernels[rows[0].row()].key
        return None

    def _selected_record(self) -> int:
        """The file the buttons act on: the selected kernel's, else the last imported."""
        key = self.selected_kernel_key()
        if key is not None:
            return key[0]
        return len(self.document.session.profiles) - 1

    def _row_chosen(self) -> None:
        key = self.selected_kernel_key()
        imported = next((k for k in self.kernels if k.key == key), None)
        if imported is None or imported.operation is None:
            return
        if imported.operation != self.document.current:
            self.document.select(imported.operation)  # refreshes this view through selection_changed
        index = self.kernel_choice.findData(imported.key)
        if index >= 0 and index != self.kernel_choice.currentIndex():
            self.kernel_choice.setCurrentIndex(index)
            self._show_comparison()

    def _match_clicked(self) -> None:
        self._edit_matches(self._selected_record())

    def _remove_clicked(self) -> None:
        self._remove_record(self._selected_record())

    def current_comparison(self) -> KernelComparison | None:
        index = self.kernel_choice.currentIndex()
        return self.comparisons[index] if 0 <= index < len(self.comparisons) else None

    def _show_comparison(self) -> None:
        found = self.current_comparison()
        if found is None:
            return
        c = found.comparison
        binary = self.document.binary
        entry = self.document.operations[found.imported.operation or 0]
        self.title.setText(f"{shortened(found.imported.kernel.base_name)}  ⟷  {entry.name}")
        self.title.setToolTip(tooltip(f"{found.imported.kernel.name}\n{c.declaration}"))

        def size(value: float | None) -> str:
            return "—" if value is None else format_bytes(value, binary)

        no_counters = "no byte counters in the file" if c.tool != "ncu" else "no DRAM counters collected"
        rows = {
            "read": (size(c.actual_read), size(c.compulsory_read), ratio_text(c.read_ratio), "" if c.actual_read is not None else no_counters),
            "write": (size(c.actual_write), size(c.compulsory_write), ratio_text(c.write_ratio), ""),
            "traffic": (size(c.actual_bytes), size(c.compulsory_bytes), ratio_text(c.traffic_ratio), c.traffic_verdict if c.actual_bytes is not None else ""),
            "work": (
                "—" if c.achieved_flop is None else format_flop(c.achieved_flop),
                format_flop(c.logical_flop),
                ratio_text(c.flop_ratio),
                f"achieved (counters) against logical FLOP, {c.convention}" if c.achieved_flop is not None else "no FLOP counters in the file",
            ),
            "time": (
                "—" if c.duration is None else format_time(c.duration),
                "—" if c.bound_time is None else f"{format_time(c.bound_time)} bound",
                ratio_text(c.duration_ratio),
                (percent_of_bound(c.duration_ratio) + (" — ⚠ impossible on this GPU" if c.impossible is not None else ""))
                if c.bound_time is not None else "no time bound: choose a device with both rates",
            ),
        }
        for key, texts in rows.items():
            for label, text in zip(self.cells[key], texts):
                label.setText(text)
        self.cells["traffic"][0].setToolTip("" if c.actual_bytes is None else f"{c.actual_bytes:,.0f} B")
        self.cells["traffic"][1].setToolTip(f"{c.compulsory_bytes:,} B compulsory (each input read once, each output written once)")

        notes = [c.notes[0], *found.notes, *c.notes[1:]]
        self.note.setText("\n".join(f"• {note}" for note in notes))
        if c.impossible is not None:
            notes.insert(0, c.impossible.as_text().replace("\n  ", "\n    "))
            self.note.setText("\n".join(f"• {note}" for note in notes))
        profiled = profile_device(found.imported.profile)
        in_use = self.document.device
        use_other = profiled is not None and (in_use is None or (match_reported_name(in_use.name) or in_use).key != profiled.key)
        self._profiled_device_key = profiled.key if profiled is not None and use_other else ""
        self.device_button.setVisible(use_other)
        if profiled is not None and use_other:
            self.device_button.setText(f"Show {profiled.name}")
            self.device_button.setToolTip(
                f"The kernel is compared with {profiled.name}, the GPU the file states; make it the session's "
                "device too, so the roofline draws its roofs (undoable)"
            )
        self._show_levels(found)
        for browser, text in ((self.causes, causes_html(c)), (self.derivation, comparison_html(c))):
            if browser.property("shownHtml") != text:  # laying out rich text is most of a refresh's cost
                browser.setHtml(text)
                browser.setProperty("shownHtml", text)

    # ------------------------------------------------------------------ the hierarchy's levels
    def _levels_box(self) -> QWidget:
        """The selected kernel at DRAM, L2 and L1 by both ways of counting those bytes, and which one the views use."""
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        title = QLabel("Levels")
        title.setStyleSheet("font-weight: 600;")
        row.addWidget(title)
        row.addStretch(1)
        row.addWidget(QLabel("L2 / L1 bytes:"))
        self.level_method = QComboBox()
        self.level_method.setObjectName("levelMethod")
        for method in LEVEL_METHODS:
            self.level_method.addItem(LEVEL_CHOICES[method], method)
        self.level_method.setToolTip(
            "How an imported kernel's L2 and L1 bytes are counted, here and on the Roofline tab:\n"
            "Nsight Compute's sections: as its hierarchical roofline charts count them (L2 = "
            "lts__lts2xbar_cycles_active.sum × 32 B, older releases l1tex__m_xbar2l1tex_read_bytes.sum; L1 = "
            "l1tex__lsu_writeback_active_mem_lg.sum × 128 B on CC 7.5–8.9, _mem_lgds on CC ≥ 9.0)\n"
            "NERSC method (Yang et al., arXiv 2009.02449): L2 = lts__t_bytes.sum; L1 = l1tex__t_bytes.sum + "
            "shared-memory wavefronts × 128 B"
        )
        self.level_method.activated.connect(lambda _: self.document.set_level_method(self.level_method.currentData()))
        row.addWidget(self.level_method)
        layout.addLayout(row)
        self.levels_plot = pg.PlotWidget()
        self.levels_plot.setObjectName("levelsPlot")
        self.levels_plot.setBackground("w")
        self.levels_plot.setMenuEnabled(False)
        self.levels_plot.hideButtons()
        self.levels_plot.setLogMode(x=True, y=True)
        self.levels_plot.setMouseEnabled(x=False, y=False)
        self.levels_plot.setLabel("bottom", "intensity (FLOP/B)")
        self.levels_plot.setLabel("left", "achieved (FLOP/s)")
        self.levels_plot.setMinimumHeight(200)
        for axis in ("bottom", "left"):
            self.levels_plot.getAxis(axis).enableAutoSIPrefix(False)  # log axes: the ticks carry the powers of ten
        self.level_points = pg.ScatterPlotItem(hoverable=True, tip=self._level_point_tip)
        self.levels_plot.addItem(self.level_points)
        self.level_labels: list[pg.TextItem] = []
        self.level_tips: list[str] = []
        layout.addWidget(self.levels_plot, 1)
        self.levels_text = QLabel()
        self.levels_text.setObjectName("levelsText")
        self.levels_text.setWordWrap(True)
        self.levels_text.setTextFormat(Qt.TextFormat.PlainText)
        self.levels_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.levels_text.setStyleSheet("color: #444;")
        layout.addWidget(self.levels_text)
        return box

    def _level_point_tip(self, x: float, y: float, data: Any) -> str:
        index = int(data) if data is not None else -1
        return self.level_tips[index] if 0 <= index < len(self.level_tips) else ""

    def _show_levels(self, found: KernelComparison) -> None:
        """Both methods' L2 and L1 points of the kernel (the chosen one filled), each labelled with its method."""
        chosen = self.document.level_method
        self.level_method.setCurrentIndex(max(self.level_method.findData(chosen), 0))
        for label in self.level_labels:
            self.levels_plot.removeItem(label)
        self.level_labels, self.level_tips = [], []
        kernel = found.imported.kernel
        binary = self.document.binary
        flop = kernel.achieved_flop(found.comparison.convention)
        seconds = float(kernel.duration.value) if kernel.duration is not None else 0.0
        lines = [f"{LEVEL_CHOICES[method]}{' (in use)' if method == chosen else ''}: "
                 f"{kernel.levels(method).text(flop, binary)}" for method in LEVEL_METHODS]
        if not flop or seconds <= 0:
            self.level_points.setData([])
            self.levels_text.setText("\n".join(["No FLOP counters or duration: no points.", *lines]))
            return
        rate = float(flop) / seconds
        spots = []
        if kernel.dram.total is not None and kernel.dram.total.value > 0:
            self.level_tips.append(f"DRAM: {format_bytes(float(kernel.dram.total.value), binary)} = {kernel.dram.total.source}")
            spots.append(self._level_spot(float(flop) / float(kernel.dram.total.value), rate, "DRAM", True, "s"))
        for method in sorted(LEVEL_METHODS, key=lambda method: method == chosen):  # the method in use drawn on top
            counted = kernel.levels(method)
            for _, name, reading, intensity in counted.points(float(flop)):
                assert intensity is not None
                self.level_tips.append(
                    f"{name} · {LEVEL_CHOICES[method]}: {format_bytes(float(reading.value), binary)} = {reading.source}\n"
                    f"intensity {format_intensity(intensity)} ({counted.title})"
                )
                spots.append(self._level_spot(intensity, rate, f"{name} · {LEVEL_SHORT[method]}", method == chosen,
                                              "t" if name == "L2" else "d"))
        self.level_points.setData(spots)
        xs = [spot["pos"][0] for spot in spots]
        self.levels_plot.setXRange(min(xs) - 1.0, max(xs) + 0.6, padding=0)  # room for the labels at both ends
        self.levels_plot.setYRange(np.log10(rate) - 0.35, np.log10(rate) + 0.35, padding=0)
        self.levels_text.setText("\n".join(lines))

    def _level_spot(self, intensity: float, rate: float, text: str, filled: bool, symbol: str) -> dict[str, Any]:
        colour = LEVEL_POINT_COLOURS.get(text.split(" ")[0], "#333333")
        # ncu's labels above the points, NERSC's below, DRAM's beside; L1's (the lower intensities) end at their point,
        # L2's start at theirs: two methods' points at nearly one intensity, and L1 beside L2, stay readable
        across = 0.9 if text.startswith("L1") else 0.1
        anchor = (across, 1.25) if text.endswith("ncu") else (across, -0.25) if text.endswith("NERSC") else (-0.15, 0.5)
        label = pg.TextItem(text, color=colour, anchor=anchor)
        label.setPos(float(np.log10(intensity)), float(np.log10(rate)))
        self.levels_plot.addItem(label)
        self.level_labels.append(label)
        return {
            "pos": (float(np.log10(intensity)), float(np.log10(rate))),  # a scatter is not moved by the axes' log mode
            "size": 13,
            "symbol": symbol,
            "pen": pg.mkPen(colour, width=1.6),
            "brush": pg.mkBrush(colour) if filled else pg.mkBrush(255, 255, 255, 230),
            "data": len(self.level_tips) - 1,
        }

    def _use_profiled_device(self) -> None:
        if self._profiled_device_key:
            self.document.set_device(self._profiled_device_key)

    def figure(self, row: str, role: str) -> str:
        """The text shown in one cell of the comparison grid (row: read|write|traffic|work|time)."""
        column = ("actual", "declared", "ratio", "verdict").index(role)
        return self.cells[row][column].text()
