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
(`metric_units`) and keeps the text ncu printed. A raw page's units are
parsed once per column and each launch's metrics are built when read
(`RawMetrics`), so a 30 MB `--set full` export of 2,000 launches reads in
about a second; `keep` limits a read to the metrics a caller uses.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from workbench.profilers.metric_units import BaseUnit, base_unit, is_auto_scaled, to_base
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

# Which metrics a read keeps, asked once per metric name (details: per key, "name [section]" for a repeat).
MetricFilter = Callable[[str], bool]


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


def _value(value_text: str, unit: BaseUnit) -> int | float | None:
    """A cell's number in base units; None for n/a and for text (device names, enum values)."""
    if is_missing(value_text):
        return None
    try:
        return to_base(parse_number(value_text), unit)
    except ValueError:
        return None


def _metric(name: str, value_text: str, unit_text: str, section: str = "") -> Metric:
    """A metric in base units; text values (device names, enum values) keep value None."""
    unit = base_unit(unit_text)
    return Metric(name, _value(value_text, unit), unit.symbol, value_text.strip(), unit_text.strip(), section)


class _RawColumns:
    """The raw page's metric columns, read once per file: each name's cell index and its unit.

    A `--set full` page has over a thousand metric columns; parsing each
    column's unit here, not in every cell, is most of what makes a large
    file quick to read. `index` holds the metrics a launch shows (those
    `keep` accepts); `scaled_names` every metric printed in a scaled unit.
    """

    def __init__(
        self, header: tuple[str, ...], metric_columns: list[int], units: list[str], keep: MetricFilter | None = None
    ) -> None:
        # A title that appears twice keeps its first place and its last column, as a dict built cell by cell would.
        self._every: dict[str, int] = {}
        for index in metric_columns:
            self._every[header[index].strip()] = index
        self.index = {name: index for name, index in self._every.items() if keep is None or keep(name)}
        self.units: dict[int, tuple[BaseUnit, str]] = {
            index: (base_unit(units[index]), units[index].strip()) for index in self._every.values()
        }
        self.scaled_names = tuple(name for name, index in self._every.items() if is_auto_scaled(units[index]))

    def metric(self, name: str, cells: tuple[str, ...]) -> Metric:
        """The named metric of one launch (kept or not), from that launch's cells."""
        index = self._every[name]
        unit, unit_text = self.units[index]
        text = cells[index]
        return Metric(name, _value(text, unit), unit.symbol, text.strip(), unit_text)


class RawMetrics(Mapping[str, Metric]):
    """One raw-page launch's metrics by name; each Metric is built from its cell the first time it is read.

    The workbench reads a few dozen of a launch's thousand-odd metrics, so
    the rest stay as the text the file holds until someone asks (a full
    session record, an export). Equal to a dict of the same Metrics.
    Two threads reading one name at once may each build it; both are equal.
    """

    def __init__(self, columns: _RawColumns, cells: tuple[str, ...]) -> None:
        self._columns = columns
        self._cells = cells
        self._built: dict[str, Metric] = {}

    def __getitem__(self, name: str) -> Metric:
        metric = self._built.get(name)
        if metric is None:
            if name not in self._columns.index:
                raise KeyError(name)
            metric = self._built[name] = self._columns.metric(name, self._cells)
        return metric

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns.index)

    def __len__(self) -> int:
        return len(self._columns.index)

    def __contains__(self, name: object) -> bool:
        return name in self._columns.index

    def __repr__(self) -> str:
        return repr(dict(self))  # reads as the dict it stands for (and builds every Metric to show it)


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

    def launch(self, row: Row, metrics: Mapping[str, Metric], rules: tuple[str, ...] = ()) -> KernelLaunch:
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


def _has_scaled_value(metrics: Iterable[Metric]) -> bool:
    """True for a figure ncu printed in a scaled unit (Mbyte, usecond), which keeps only ~4 digits."""
    return any(metric.scaled for metric in metrics if metric.value is not None)


def _read_details(table: Table, keep: MetricFilter | None = None) -> tuple[tuple[KernelLaunch, ...], bool]:
    """The launches (with the metrics `keep` accepts), and whether any metric at all was printed scaled."""
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
    scaled = any(_has_scaled_value(bucket.values()) for bucket in metrics.values())
    if keep is not None:
        metrics = {
            launch_id: {key: metric for key, metric in bucket.items() if keep(key)} for launch_id, bucket in metrics.items()
        }
    launches = tuple(
        identity.launch(row, metrics[launch_id], tuple(rules.get(launch_id, ())))
        for launch_id, row in first_rows.items()
    )
    return launches, scaled


def _is_metric_column(title: str) -> bool:
    """Raw-page columns after the identity ones; NVTX range columns ('thread Domain:…') are identity too."""
    text = title.strip()
    if not text or text.lower() in IDENTITY_COLUMNS:
        return False
    return not (":" in text and "domain" in text.lower())


def _assumed_unit(metric: str) -> str:
    """ncu's base unit for a byte, sector or duration metric; '' for anything else."""
    return next((unit for pattern, unit in _BASE_UNITS if pattern.search(metric)), "")


def _read_raw(table: Table, keep: MetricFilter | None = None) -> tuple[tuple[KernelLaunch, ...], bool]:
    """The launches (with the metrics `keep` accepts), and whether any metric at all was printed scaled."""
    identity = _Identity(table)
    metric_columns = [index for index, title in enumerate(table.header) if _is_metric_column(title)]
    rows = list(table.rows)
    if rows and not rows[0].cells[identity.id].strip():
        units = [cell.strip() for cell in rows[0].cells]
        rows = rows[1:]
    else:
        units = [_assumed_unit(title.strip()) for title in table.header]
    columns = _RawColumns(table.header, metric_columns, units, keep)
    launches: list[KernelLaunch] = []
    seen: dict[int, int] = {}
    for row in rows:
        launch_id = identity.launch_id(row)
        if launch_id in seen:
            raise ProfileError(f"launch {launch_id} appears twice (first on line {seen[launch_id]})", table.source, row.line)
        seen[launch_id] = row.line
        launches.append(identity.launch(row, RawMetrics(columns, row.cells)))
    # Only the columns printed in a scaled unit need looking at, kept or not.
    scaled = any(
        _has_scaled_value(columns.metric(name, row.cells) for name in columns.scaled_names) for row in rows
    )
    return tuple(launches), scaled


def read_ncu_text(text: str, source: str = "ncu.csv", keep: MetricFilter | None = None) -> Profile:
    """Parse ncu CSV text (either page); ProfileError with a line number on a malformed file.

    `keep`, where given, picks the metrics each launch holds by name (e.g.
    `counters.is_used_metric`): the notes still describe the whole file.
    """
    table = read_table(text, source, is_ncu_header, WHAT)
    layout = _layout(table)
    launches, scaled = _read_details(table, keep) if layout == DETAILS else _read_raw(table, keep)
    if not launches:
        raise ProfileError("the table has a header but no kernel launches", source, table.header_line)
    notes = []
    if layout == RAW and table.rows and table.rows[0].cells[table.require("ID")].strip():
        notes.append("the raw page has no unit row: ncu's base units (byte, nsecond) are assumed for bytes and durations")
    if scaled:
        notes.append(
            "ncu scaled some units to fit (Kbyte, Mbyte, usecond…): those figures carry about four "
            "significant digits; export with --print-units base for exact counts"
        )
    return Profile(tool=NCU, layout=layout, source=source, launches=launches, notes=tuple(notes))


def read_ncu_csv(path: str | Path, keep: MetricFilter | None = None) -> Profile:
    """Read an ncu CSV file (details or raw page), with only the metrics `keep` accepts where given."""
    from workbench.profilers.reader import read_text

    file = Path(path)
    return read_ncu_text(read_text(file), file.name, keep)
