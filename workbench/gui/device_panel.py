"""The device panel: what NVML found, the device chooser, and the rates the bounds use.

Each rate row says where its figure comes from (datasheet, derived, measured,
entered) and can be edited with text such as "100 TFLOP/s" or "2.5 TB/s";
an entered rate can be reset to the device's own figure. A rate that does not
parse, or has the wrong dimensions, is marked in its cell with the message
below the table, and the bounds keep the rate in use.

Below the memory bandwidth and the instruction paths come the interfaces the
device has a rate for (L2 → SM, shared memory → registers, host ↔ device; on
a CPU the host-link stand-in once calibrated) and its links (the
NVLink or host link a collective crosses, with the catalogue's per-direction
figure until calibration measures one). Measured interface and link rates are
listed under the table with how each was measured.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.model.devices import BANDWIDTH, DATASHEET, DERIVED, ENTERED, MEASURED, NOMINAL, PATH_TITLES, PATHS, Device, Rate, catalogue
from workbench.model.devices.host import host_device
from workbench.model.devices.interfaces import HBM, interface_keys
from workbench.model.devices.links import device_link, is_byte_rate, link_rate_key, linked_key
from workbench.errors import DeviceError
from workbench.model.devices.rate_titles import rate_title, reference_rate
from workbench.model.devices.nvml import NO_DRIVER, NO_GPU, NO_MODULE, OK
from workbench.errors import WorkbenchError
from workbench.gui.document import Document
from workbench.gui.flow_layout import FlowLayout
from workbench.gui.plain_text import plain, tooltip
from workbench.model.units import format_bandwidth, format_bytes, format_flop_rate

SOURCE_COLOURS = {DATASHEET: "#455a64", DERIVED: "#6a1b9a", MEASURED: "#1b5e20", ENTERED: "#0d47a1", NOMINAL: "#e65100"}
RATE_COLUMN, SOURCE_COLUMN, RESET_COLUMN = 1, 2, 3


class RateTable(QTableWidget):
    """The rate table in a dock that may be narrow (a laptop's, a projector's): the rate, its source and the reset
    button keep their whole text, and the path's name takes the width they leave, wrapped onto more lines, but
    never less than a short name ("Memory bandwidth"); narrower than that, the table scrolls sideways by pixels."""

    def __init__(self) -> None:
        super().__init__(0, 4)

    def least_name_width(self) -> int:
        return self.horizontalHeader().fontMetrics().horizontalAdvance("Memory bandwidth") + 12

    def fit_name_column(self) -> None:
        header = self.horizontalHeader()
        others = sum(header.sectionSize(column) for column in (RATE_COLUMN, SOURCE_COLUMN, RESET_COLUMN))
        self.setColumnWidth(0, max(self.least_name_width(), self.viewport().width() - others))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit_name_column()


class DevicePanel(QWidget):
    """Detection status, device chooser, device facts and the per-path rate table."""

    detect_requested = Signal()
    calibrate_requested = Signal()  # the Calibrate… button (gui/calibration_dialog.py)

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.status = plain(QLabel("GPU detection starts once the window is up…"))
        self.status.setObjectName("detectionStatus")
        self.status.setWordWrap(True)
        self.detect_button = QPushButton("Detect again")
        self.detect_button.setObjectName("detectAgain")
        self.detect_button.clicked.connect(self.detect_requested)
        self.chooser = QComboBox()
        self.chooser.setObjectName("deviceChooser")
        # As wide as the dock lets it be, not as its longest name (which would make the panel wider than a laptop's dock);
        # the list it opens shows whole names, and the chosen one is its tooltip.
        self.chooser.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.chooser.setMinimumContentsLength(14)
        self.chooser.currentTextChanged.connect(self.chooser.setToolTip)
        self.chooser.activated.connect(self._device_chosen)
        self.facts = plain(QLabel())
        self.facts.setObjectName("deviceFacts")
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts.setStyleSheet("color: #444;")

        self._build_rate_table()
        self.measured = plain(QLabel())
        self.measured.setObjectName("measuredRates")
        self.measured.setWordWrap(True)
        self.measured.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.measured.setStyleSheet("color: #1b5e20;")
        self.measured.setVisible(False)
        self.message = plain(QLabel())
        self.message.setObjectName("rateMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b71c1c; font-weight: 600;")
        self.message.setVisible(False)
        hint = QLabel("Double-click a rate to enter your own, e.g. 100 TFLOP/s or 2.5 TB/s.")
        hint.setWordWrap(True)
        hint.setStyleSheet("color: #555;")
        self.reset_all = QPushButton("Reset all rates")
        self.reset_all.setObjectName("resetAllRates")
        self.reset_all.clicked.connect(document.reset_rates)
        self.calibrate = QPushButton("Calibrate…")
        self.calibrate.setObjectName("calibrate")
        self.calibrate.setToolTip("Measure this machine's sustained bandwidth and matrix rates; the bounds then use them")
        self.calibrate.clicked.connect(self.calibrate_requested)

        # The chooser and the buttons in rows that wrap at the dock's width: side by side they made the panel wider
        # than the dock on a 1280-px screen, which then cut every line of text at its right edge.
        chooser_row = FlowLayout(spacing=4)
        chooser_row.addWidget(self.chooser)
        chooser_row.addWidget(self.detect_button)
        button_row = FlowLayout(spacing=4)
        button_row.addWidget(self.calibrate)
        button_row.addWidget(self.reset_all)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.status)
        layout.addLayout(chooser_row)
        layout.addWidget(self.facts)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.measured)
        layout.addWidget(self.message)
        layout.addWidget(hint)
        layout.addLayout(button_row)

        self._filling = False
        self._rows: list[str] = []
        self._pending: dict[str, tuple[str, str]] = {}  # path -> (typed text, message) not accepted
        self._detecting = False
        document.device_changed.connect(self.refresh)
        document.detection_changed.connect(self.refresh)
        document.settings_changed.connect(self.refresh)
        document.session_replaced.connect(self._pending.clear)
        document.selection_changed.connect(self._rows_may_change)
        document.analysis_changed.connect(self._rows_may_change)
        self.refresh()

    def _build_rate_table(self) -> None:
        """The rates in use: path, interface or link; rate; source; a reset button. A rate is typed in place."""
        self.table = RateTable()
        self.table.setObjectName("rateTable")
        self.table.setHorizontalHeaderLabels(["Path, interface or link", "Rate in use", "Source", ""])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        header = self.table.horizontalHeader()
        for column in (RATE_COLUMN, SOURCE_COLUMN, RESET_COLUMN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.itemChanged.connect(self._rate_edited)

    # ------------------------------------------------------------------ detection state
    def set_detecting(self, running: bool) -> None:
        self._detecting = running
        self.detect_button.setEnabled(not running)
        self._show_status()

    def _show_status(self) -> None:
        detection = self.document.detection
        if self._detecting:
            text, colour = "Looking for NVIDIA GPUs (NVML)…", "#555"
        elif detection is None:
            text, colour = "GPU detection has not run yet.", "#555"
        elif detection.status == OK:
            text, colour = f"NVML found {detection.message}.", "#1b5e20"
        elif detection.status == NO_DRIVER:
            text = (
                f"No NVIDIA driver found, so no GPU is detected. Choose a device from the catalogue, "
                f"or the CPU, to see its bounds. ({detection.message.removeprefix('no NVIDIA driver found ').strip('()')})"
            )
            colour = "#8d5a00"
        elif detection.status in (NO_GPU, NO_MODULE):
            text, colour = f"No GPU detected: {detection.message}. Choose a device from the catalogue.", "#8d5a00"
        else:
            text, colour = f"GPU detection failed: {detection.message}", "#b71c1c"
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {colour};")

    # ------------------------------------------------------------------ chooser
    def _fill_chooser(self) -> None:
        combo = self.chooser
        combo.blockSignals(True)
        combo.clear()
        model = combo.model()

        def header(text: str) -> None:
            combo.addItem(text, None)
            model.item(combo.count() - 1).setEnabled(False)  # type: ignore[attr-defined]

        current = self.document.session.device.key
        header("Detected on this machine")
        for key, device in self.document.detected.items():
            combo.addItem(f"{device.name} ({key})", key)
        host = host_device()
        combo.addItem(f"{host.name} — rates derived", host.key)
        devices = catalogue()
        gpus = [d for d in devices.values() if d.kind == "gpu"]
        cpus = [d for d in devices.values() if d.kind != "gpu"]
        header("Catalogue GPUs (datasheet figures)")
        for device in gpus:
            combo.addItem(device.name, device.key)
        header("CPU")
        for device in cpus:
            combo.addItem(device.name, device.key)
        index = combo.findData(current)
        if index < 0:
            combo.addItem(f"{current} (not available here)", current)
            index = combo.count() - 1
        combo.setCurrentIndex(index)
        combo.blockSignals(False)

    def _device_chosen(self, index: int) -> None:
        key = self.chooser.itemData(index)
        if key:
            self._pending.clear()
            self.document.set_device(key)

    # ------------------------------------------------------------------ rates
    def _wanted_rows(self, device: Device | None) -> list[str]:
        if device is None:
            return []
        rows = [BANDWIDTH, *device.paths(), *interface_rows(device), *link_rows(device)]
        entry = self.document.current_entry
        analysis = self.document.state(entry).analysis if entry is not None else None
        if analysis is not None and analysis.path not in rows and device.resolve_path(analysis.path) is None:
            rows.append(analysis.path)  # the selected operation needs it: offer to enter it
        return rows

    def _rows_may_change(self, *_: object) -> None:
        if self._wanted_rows(self.document.device) != self._rows:
            self.refresh()

    def refresh(self, *_: object) -> None:
        self._show_status()
        self._fill_chooser()
        device = self.document.device
        if device is None:
            self.facts.setText(self.document.device_error or "No device.")
        else:
            self.facts.setText(device_facts(device, self.document.binary))
        self._fill_table(device)
        self._show_measured(device)
        self.reset_all.setEnabled(bool(self.document.session.device.overrides))
        self._show_message()

    def _fill_table(self, device: Device | None) -> None:
        self._filling = True
        rows = self._wanted_rows(device)
        self._rows = rows
        table = self.table
        table.setRowCount(len(rows))
        binary = self.document.binary
        overrides = self.document.session.device.overrides
        for row, path in enumerate(rows):
            rate = _rate_in_use(device, path) if device is not None else None
            name = QTableWidgetItem(_row_title(device, path))
            name.setFlags(Qt.ItemFlag.ItemIsEnabled)
            name.setToolTip(tooltip(path))
            text = _rate_text(path, rate, binary)
            value = QTableWidgetItem(text)
            value.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsSelectable)
            value.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            peak = reference_rate(path, device)
            tip = f"{peak.source}: {_rate_text(path, peak, binary)}" if peak else "no figure from the device"
            if peak and peak.citation:
                tip += f"\n{peak.citation}"
            value.setToolTip(tooltip(tip))
            pending = self._pending.get(path)
            if pending is not None:  # refused: the cell shows the rate in use again, the message what was typed
                value.setToolTip(tooltip(f"'{pending[0]}' was refused: {pending[1]}\n{tip}"))
            source = QTableWidgetItem(rate.source if rate else "none")
            source.setFlags(Qt.ItemFlag.ItemIsEnabled)
            source.setForeground(QBrush(QColor(SOURCE_COLOURS.get(rate.source, "#555") if rate else "#9e9e9e")))
            if rate and rate.citation:
                source.setToolTip(tooltip(rate.citation))
            for column, item in ((0, name), (RATE_COLUMN, value), (SOURCE_COLUMN, source)):
                table.setItem(row, column, item)
            reset = table.cellWidget(row, RESET_COLUMN)
            if not isinstance(reset, QToolButton):
                reset = QToolButton()
                reset.setText("Reset")
                reset.clicked.connect(self._reset_clicked)
                table.setCellWidget(row, RESET_COLUMN, reset)
            reset.setProperty("path", path)
            reset.setObjectName(f"reset_{path}")
            reset.setEnabled(path in overrides or path in self._pending)
            reset.setToolTip(tooltip(f"Back to the {peak.source} figure" if peak else "Remove the entered figure"))
        table.resizeColumnsToContents()
        table.fit_name_column()
        self._filling = False

    def _rate_edited(self, item: QTableWidgetItem) -> None:
        if self._filling or item.column() != RATE_COLUMN:
            return
        path = self._rows[item.row()]
        text = item.text().strip()
        try:
            self.document.set_rate(path, text)
        except WorkbenchError as exc:
            self._pending[path] = (text, str(exc))
            self.refresh()
            return
        if self._pending.pop(path, None) is not None:
            self.refresh()

    def _reset_clicked(self) -> None:
        button = self.sender()
        path = button.property("path") if button is not None else None
        if path:
            had_pending = self._pending.pop(path, None) is not None
            if path in self.document.session.device.overrides:
                self.document.reset_rate(path)
            elif had_pending:
                self.refresh()

    def _show_measured(self, device: Device | None) -> None:
        """The measured interface and link rates in use, each with how it was measured."""
        lines = []
        if device is not None:
            for key in (*interface_rows(device), *link_rows(device)):
                rate = device.overrides.get(key)
                if rate is not None and rate.source == MEASURED:
                    how = rate.citation.removeprefix("measured: ").removeprefix("measured, ")
                    text = f"{_row_title(device, key)}: {_rate_text(key, rate, self.document.binary)} measured — {how}"
                    lines.append(text)
        self.measured.setText("\n".join(lines))
        self.measured.setVisible(bool(lines))

    def _show_message(self) -> None:
        if not self._pending:
            self.message.setVisible(False)
            return
        lines = [f"{PATH_TITLES.get(path, path)}: '{text}' refused — {message}" for path, (text, message) in self._pending.items()]
        self.message.setText("⚠ " + "\n⚠ ".join(lines) + "\nThe cell shows the rate in use again; the bounds keep it.")
        self.message.setVisible(True)


def interface_rows(device: Device) -> list[str]:
    """The interfaces besides HBM/DRAM that the device has a rate for (datasheet, derived, measured or entered)."""
    have = set(device.peak) | set(device.overrides)
    return [key for key in interface_keys() if key != HBM and key in have]


def link_rows(device: Device) -> list[str]:
    """The device's own link between chips (its NVLink, else its host link), then any other link rate it holds."""
    rows = []
    try:
        rows.append(link_rate_key(device_link(device).key))
    except DeviceError:  # no link named in the catalogue: only measured or entered ones show
        pass
    rows += sorted(key for key in device.overrides if linked_key(key) is not None and key not in rows)
    return rows


def _row_title(device: Device | None, path: str) -> str:
    if device is None:
        return PATH_TITLES.get(path, path)
    if path in PATHS or path == BANDWIDTH:
        return device.path_title(path)
    return rate_title(path, device.kind == "gpu", device.memory_name)


def _rate_in_use(device: Device, path: str) -> Rate | None:
    return device.overrides.get(path) or reference_rate(path, device)


def _rate_text(path: str, rate: Rate | None, binary: bool) -> str:
    if rate is None:
        return "—"
    return format_bandwidth(rate.value, binary) if is_byte_rate(path) else format_flop_rate(rate.value)


def device_facts(device: Device, binary: bool) -> str:
    """One short paragraph: kind, architecture, memory, L2, SMs, and where the figures come from."""
    parts = [device.architecture or device.kind.upper()]
    if device.compute_capability:
        parts.append(f"compute capability {device.compute_capability}")
    if device.memory_bytes:
        parts.append(f"{format_bytes(device.memory_bytes, binary)} memory")
    if device.l2_bytes:
        parts.append(f"{format_bytes(device.l2_bytes, True)} L2")  # cache sizes are binary
    if device.sm_count:
        units = "cores" if device.kind != "gpu" else ("CUs" if device.vendor == "AMD" else "SMs")
        parts.append(f"{device.sm_count} {units}")
    text = " · ".join(parts)
    if device.source:
        text += f"\nSource: {device.source}"
    if device.l2_source:
        text += f"\nL2 size: {device.l2_source}"
    if device.notes:
        text += f"\n{device.notes}"
    return text
