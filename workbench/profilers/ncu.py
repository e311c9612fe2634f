"""Reader for Nsight Compute CSV: `ncu --csv --page details` (long) and `--page raw` (wide).

details: one row per metric — ID, Process ID, Process Name, Host Name,
Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC, Section
Name, Metric Name, Metric Unit, Metric Value, then (newer releases) Rule
Name, Rule Type, Rule Description, Estimated Speedup Type, Estimated Speedup.
Older releases have a Kernel Time column and no Block Size … CC.

raw: one row per launch — the identity columns, then one column per metric
(`dram__bytes_read.sum`, …), with a second row giving each metric's unit.

Both may follow `==PROF==` lines and print auto-scaled units, thousands
separators and `n/a`. Every value is converted to base units
(`metric_units`) and keeps the text ncu printed.
"""

from __future__ import annotations

import re
from pathlib import Path

from workbench.profilers.metric_units import base_unit, to_base
from workbench.profilers.records import NCU, KernelLaunch, Metric, Profile
from workbench.profilers.table import ProfileError, Row, Table, is_missing, parse_number, read_table

DETAILS = "details"
RAW = "raw"
WHAT = "Nsight Compute CSV (ncu --csv --page details or --page raw)"

# Columns that describe a launch rather than measure it (the raw page puts metrics after these).
IDENTITY_COLUMNS = {
    "id",
    "process id",
    "process name",
    "host name",
    "kernel name",
    "kernel time",
    "context",
    "stream",
    "block size",
    "grid size",
    "device",
    "cc",
}
# Units ncu prints for these metrics with --print-units base, assumed when a raw page has no unit row.
_BASE_UNITS = ((re.compile(r"__bytes"), "byte"), (re.compile(r"^gpu__time_duration"), "nsecond"), (re.compile(r"__sectors"), "sector"))
_TRIPLE = re.compile(r"^\(?\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)?$")


def is_ncu_header(cells: list[str]) -> bool:
    """An ncu table header: it has ID and Kernel Name columns."""
    folded = {cell.strip().lower() for cell in cells}
    return "id" in folded and "kernel name" in folded


def _layout(table: Table) -> str:
    return DETAILS if table.column("Metric Name") is not None else RAW


def _triple(text: str) -> tuple[int, int, int] | None:
    match = _TRIPLE.match(text.strip())
    if match is None:
        return None
    x, y, z = (int(group) for group in match.groups())
    return (x, y, z)


def _metric(name: str, value_text: str, unit_text: str, section: str = "") -> Metric:
    """A metric in base units; text values (device names, enum values) keep value None."""
    unit = base_unit(unit_text)
    value: int | float | None = None
    if not is_missing(value_text):
        try:
            value = to_base(parse_number(value_text), unit)
        except ValueError:
            value = None
    return Metric(name, value, unit.symbol, value_text.strip(), unit_text.strip(), section)


class _Identity:
    """Picks the identity cells out of a row, wherever the columns sit in this release's header."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.id = table.require("ID")
        self.kernel = table.require("Kernel Name")
        self.columns = {
            key: table.column(title)
            for key, title in (
                ("process_name", "Process Name"),
                ("process_id", "Process ID"),
                ("host", "Host Name"),
                ("context", "Context"),
                ("stream", "Stream"),
                ("block", "Block Size"),
                ("grid", "Grid Size"),
                ("device", "Device"),
                ("cc", "CC"),
            )
        }

    def cell(self, row: Row, key: str) -> str:
        index = self.columns[key]
        return row.cells[index].strip() if index is not None else ""

    def launch_id(self, row: Row) -> int:
        text = row.cells[self.id].strip()
        try:
            value = parse_number(text)
        except ValueError:
            value = None
        if not isinstance(value, int) or value < 0:
            raise ProfileError(f"the ID column should hold a launch number; found '{text}'", self.table.source, row.line)
        return value

    def kernel_name(self, row: Row) -> str:
        name = row.cells[self.kernel].strip()
        if not name:
            raise ProfileError("the Kernel Name cell is empty", self.table.source, row.line)
        return name

    def launch(self, row: Row, metrics: dict[str, Metric], rules: tuple[str, ...] = ()) -> KernelLaunch:
        process_id_text = self.cell(row, "process_id")
        process_id = int(process_id_text) if process_id_text.isdigit() else None
        return KernelLaunch(
            launch_id=self.launch_id(row),
            kernel_name=self.kernel_name(row),
            metrics=metrics,
            device=self.cell(row, "device"),
            compute_capability=self.cell(row, "cc"),
            grid_size=_triple(self.cell(row, "grid")),
            block_size=_triple(self.cell(row, "block")),
            process_name=self.cell(row, "process_name"),
            process_id=process_id,
            host=self.cell(row, "host"),
            context=self.cell(row, "context"),
            stream=self.cell(row, "stream"),
            rules=rules,
            line=row.line,
        )


def _read_details(table: Table) -> tuple[KernelLaunch, ...]:
    identity = _Identity(table)
    name_col = table.require("Metric Name")
    unit_col = table.require("Metric Unit")
    value_col = table.require("Metric Value")
    section_col = table.column("Section Name")
    rule_col = table.column("Rule Name")
    rule_text_col = table.column("Rule Description")
    first_rows: dict[int, Row] = {}
    metrics: dict[int, dict[str, Metric]] = {}
    rules: dict[int, list[str]] = {}
    for row in table.rows:
        launch_id = identity.launch_id(row)
        kernel = identity.kernel_name(row)
        first = first_rows.setdefault(launch_id, row)
        if first is not row and identity.kernel_name(first) != kernel:
            raise ProfileError(
                f"launch {launch_id} is '{identity.kernel_name(first)}' on line {first.line} but '{kernel}' here",
                table.source,
                row.line,
            )
        bucket = metrics.setdefault(launch_id, {})
        name = row.cells[name_col].strip()
        section = row.cells[section_col].strip() if section_col is not None else ""
        if not name:
            if rule_col is not None and row.cells[rule_col].strip():
                description = row.cells[rule_text_col].strip() if rule_text_col is not None else ""
                rules.setdefault(launch_id, []).append(f"{row.cells[rule_col].strip()}: {description}".rstrip(": "))
            continue
        metric = _metric(name, row.cells[value_col], row.cells[unit_col], section)
        # One name can appear in two sections ("Memory Throughput" as % and as byte/s): keep both.
        key = name if name not in bucket else f"{name} [{section}]"
        bucket.setdefault(key, metric)
    return tuple(
        identity.launch(row, metrics[launch_id], tuple(rules.get(launch_id, ())))
        for launch_id, row in first_rows.items()
    )


def _is_metric_column(title: str) -> bool:
    """Raw-page columns after the identity ones; NVTX range columns ('thread Domain:…') are identity too."""
    text = title.strip()
    if not text or text.lower() in IDENTITY_COLUMNS:
        return False
    return not (":" in text and "domain" in text.lower())


def _assumed_unit(metric: str) -> str:
    """ncu's base unit for a byte, sector or duration metric; '' for anything else."""
    return next((unit for pattern, unit in _BASE_UNITS if pattern.search(metric)), "")


def _read_raw(table: Table) -> tuple[KernelLaunch, ...]:
    identity = _Identity(table)
    metric_columns = [index for index, title in enumerate(table.header) if _is_metric_column(title)]
    rows = list(table.rows)
    if rows and not rows[0].cells[identity.id].strip():
        units = [cell.strip() for cell in rows[0].cells]
        rows = rows[1:]
    else:
        units = [_assumed_unit(title.strip()) for title in table.header]
    launches: list[KernelLaunch] = []
    seen: dict[int, int] = {}
    for row in rows:
        launch_id = identity.launch_id(row)
        if launch_id in seen:
            raise ProfileError(f"launch {launch_id} appears twice (first on line {seen[launch_id]})", table.source, row.line)
        seen[launch_id] = row.line
        metrics = {
            table.header[index].strip(): _metric(table.header[index].strip(), row.cells[index], units[index])
            for index in metric_columns
        }
        launches.append(identity.launch(row, metrics))
    return tuple(launches)


def read_ncu_text(text: str, source: str = "ncu.csv") -> Profile:
    """Parse ncu CSV text (either page); ProfileError with a line number on a malformed file."""
    table = read_table(text, source, is_ncu_header, WHAT)
    layout = _layout(table)
    launches = _read_details(table) if layout == DETAILS else _read_raw(table)
    if not launches:
        raise ProfileError("the table has a header but no kernel launches", source, table.header_line)
    notes = []
    if layout == RAW and table.rows and table.rows[0].cells[table.require("ID")].strip():
        notes.append("the raw page has no unit row: ncu's base units (byte, nsecond) are assumed for bytes and durations")
    if any(metric.scaled for launch in launches for metric in launch.metrics.values() if metric.value is not None):
        notes.append(
            "ncu scaled some units to fit (Kbyte, Mbyte, usecond…): those figures carry about four "
            "significant digits; export with --print-units base for exact counts"
        )
    return Profile(tool=NCU, layout=layout, source=source, launches=launches, notes=tuple(notes))


def read_ncu_csv(path: str | Path) -> Profile:
    """Read an ncu CSV file (details or raw page)."""
    from workbench.profilers.reader import read_text

    file = Path(path)
    return read_ncu_text(read_text(file), file.name)
