"""Reader for Nsight Compute CSV: `ncu --csv --page details` (long) and `--page raw` (wide).

details: one row per metric — ID, Process ID, Process Name, Host Name,
Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC, Section
Name, Metric Name, Metric Unit, Metric Value, then (newer releases) Rule
Name, Rule Type, Rule Description, Estimated Speedup Type, Estimated Speedup.
Older releases have a Kernel Time column and no Block Size … CC.

raw: one row per launch — the identity columns, then one column per metric
(`dram__bytes_read.sum`, …), with a second row giving each metric's unit.

Both may follow `==PROF==` lines and print auto-scaled units, thousands
separators and `n/a`, in the locale's number format: the decimal mark is
decided per file from its values (`numbers`), or chosen by the caller. Every
value is converted to base units (`metric_units`) and keeps the text ncu
printed; byte and time counters must be non-negative and in a unit of their
kind. A raw page's units are parsed once per column and each launch's metrics
are built when read (`RawMetrics`), so a 30 MB `--set full` export of 2,000
launches reads in about a second; `keep` limits a read to the metrics a
caller uses. The rows are streamed: nothing but what is kept is held.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from workbench.profilers.counters import expected_symbol, is_used_metric
from workbench.profilers.metric_units import BaseUnit, base_unit, is_auto_scaled, to_base
from workbench.profilers.numbers import LARGEST, FormatSniffer, NumberFormat, NumberRangeError, contradiction
from workbench.profilers.profile import Profile
from workbench.profilers.records import NCU, KernelLaunch, Metric
from workbench.profilers.lines import LineSource, open_lines, text_source
from workbench.profilers.table import (
    ProfileError,
    Row,
    RowRules,
    Table,
    is_missing,
    parse_number,
    read_table,
    split_line,
)

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
_TRIPLE = re.compile(r"^\(?\s*(\d{1,12})\s*,\s*(\d{1,12})\s*,\s*(\d{1,12})\s*\)?$")

# Which metrics a read keeps, asked once per metric name (details: per key, "name [section]" for a repeat).
MetricFilter = Callable[[str], bool]


def is_ncu_header(cells: list[str]) -> bool:
    """An ncu table header: it has ID and Kernel Name columns."""
    folded = {cell.strip().lower() for cell in cells}
    return "id" in folded and "kernel name" in folded


def _row_rules(header: tuple[str, ...]) -> RowRules:
    """How ncu's rows may depart from its header, whatever the release.

    A details page's metric rows end after Metric Value (current releases
    leave the rule columns off them, and a section exported alone adds a
    `Body Item Label` column before them): the cells after it read as empty,
    but a row that stops before its value is still broken. A raw page's rows
    are whole. Captured stdout holds the program's own output before and
    between ncu's tables: a line that does not start with a quote and is too
    short to be a row is passed over; a second process's table under the
    same header is read on.
    """
    folded = [" ".join(cell.lower().split()) for cell in header]
    fewest = folded.index("metric value") + 1 if "metric value" in folded else len(header)

    def foreign(line: str) -> bool:
        if line.lstrip().startswith('"'):
            return False
        cells = split_line(line)
        return cells is None or len(cells) < fewest

    return RowRules(fewest, foreign, repeated_header=True)


def _layout(table: Table) -> str:
    return DETAILS if table.column("Metric Name") is not None else RAW


def _triple(text: str) -> tuple[int, int, int] | None:
    match = _TRIPLE.match(text.strip())
    if match is None:
        return None
    x, y, z = (int(group) for group in match.groups())
    return (x, y, z)


# Base symbols of figures that cannot be negative: bytes, times, clocks, rates and counts.
_NON_NEGATIVE = frozenset({"B", "s", "cycle", "Hz", "B/s", "bit", "cycle/s", "sector", "inst", "warp", "thread", "block", "request", "transaction"})


class _Values:
    """Turns one file's cells into base-unit values: its number format, and the checks every value passes."""

    def __init__(self, number_format: NumberFormat, source: str) -> None:
        self.format = number_format
        self.source = source

    def value(self, name: str, text: str, unit: BaseUnit, line: int | None, strict: bool = True) -> int | float | None:
        """A cell's number in base units; None for n/a and for text (device names, enum values).

        `strict` (the metrics the workbench reads): a number too large for any
        profiler, a negative count or time, or a value written in the other
        decimal format is a ProfileError naming the metric. Other metrics keep
        such a cell as text (value None), as they keep any text.
        """
        if is_missing(text):
            return None
        try:
            number = self.format.parse(text)
        except NumberRangeError as exc:
            if not strict:
                return None
            raise ProfileError(f"'{name}' is {exc}: out of range for any profiler's figure", self.source, line) from None
        except ValueError:
            error = contradiction(text, self.format, self.source, line, unit.symbol == "%") if strict else None
            if error is not None:
                raise error from None
            return None
        value = to_base(number, unit)
        if (isinstance(value, float) and not math.isfinite(value)) or abs(value) >= LARGEST:
            if not strict:
                return None
            raise ProfileError(f"'{name}' is '{text.strip()}' {unit.symbol}: out of range", self.source, line)
        if strict and value < 0 and unit.symbol in _NON_NEGATIVE:
            raise ProfileError(
                f"'{name}' is {text.strip()} {unit.symbol}: a count, size or time cannot be negative", self.source, line
            )
        return value

    def metric(self, name: str, value_text: str, unit_text: str, section: str, line: int | None) -> Metric:
        """A metric in base units; text values (device names, enum values) keep value None."""
        unit = base_unit(unit_text)
        _check_unit(name, unit_text, unit, self.source, line, "metric")
        value = self.value(name, value_text, unit, line, is_used_metric(name))
        return Metric(name, value, unit.symbol, value_text.strip(), unit_text.strip(), section)


def _check_unit(name: str, unit_text: str, unit: BaseUnit, source: str, line: int | None, what: str) -> None:
    """A counter the workbench reads must be in a unit of its kind: bytes in 'parsec' is an error, not a '–'."""
    expected = expected_symbol(name)
    if expected is None or not unit_text.strip() or unit.symbol == expected:
        return
    kinds = {"B": "bytes", "s": "time", "sector": "sectors", "cycle": "cycles"}
    raise ProfileError(
        f"the {what} '{name}' is in '{unit_text.strip()}', which is not a unit of {kinds.get(expected, expected)}",
        source,
        line,
    )


class _RawColumns:
    """The raw page's metric columns, read once per file: each name's cell index and its unit.

    A `--set full` page has over a thousand metric columns; parsing each
    column's unit here, not in every cell, is most of what makes a large
    file quick to read. `index` holds the metrics a launch shows (those
    `keep` accepts); `scaled_names` every metric printed in a scaled unit.
    """

    def __init__(
        self,
        header: tuple[str, ...],
        metric_columns: list[int],
        units: list[str],
        values: _Values,
        keep: MetricFilter | None = None,
        units_line: int | None = None,
    ) -> None:
        self.values = values
        # A title that appears twice keeps its first place and its last column, as a dict built cell by cell would.
        self._every: dict[str, int] = {}
        for index in metric_columns:
            self._every[header[index].strip()] = index
        self.index = {name: index for name, index in self._every.items() if keep is None or keep(name)}
        self.units: dict[int, tuple[BaseUnit, str]] = {
            index: (base_unit(units[index]), units[index].strip()) for index in self._every.values()
        }
        for name, index in self._every.items():
            _check_unit(name, units[index], self.units[index][0], values.source, units_line, "column")
        self.scaled_names = tuple(name for name, index in self._every.items() if is_auto_scaled(units[index]))
        # The metrics the workbench reads are built (and so checked) as each launch is read, not later.
        self.strict = frozenset(name for name in self._every if is_used_metric(name))
        self.checked_names = tuple(name for name in self.index if name in self.strict)

    def metric(self, name: str, cells: tuple[str, ...], line: int | None = None) -> Metric:
        """The named metric of one launch (kept or not), from that launch's cells."""
        index = self._every[name]
        unit, unit_text = self.units[index]
        text = cells[index]
        return Metric(name, self.values.value(name, text, unit, line, name in self.strict), unit.symbol, text.strip(), unit_text)


class RawMetrics(Mapping[str, Metric]):
    """One raw-page launch's metrics by name; each Metric is built from its cell the first time it is read.

    The workbench reads a few dozen of a launch's thousand-odd metrics, so
    the rest stay as the text the file holds until someone asks (a full
    session record, an export). Equal to a dict of the same Metrics.
    Two threads reading one name at once may each build it; both are equal.
    """

    def __init__(self, columns: _RawColumns, cells: tuple[str, ...], line: int | None = None) -> None:
        self._columns = columns
        self._cells = cells
        self._line = line
        self._built: dict[str, Metric] = {}

    def __getitem__(self, name: str) -> Metric:
        metric = self._built.get(name)
        if metric is None:
            if name not in self._columns.index:
                raise KeyError(name)
            metric = self._built[name] = self._columns.metric(name, self._cells, self._line)
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
        process_id = int(process_id_text) if process_id_text.isdecimal() and len(process_id_text) <= 18 else None
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


def _launch_key(identity: _Identity, row: Row) -> tuple[str, int]:
    """A launch's key: ncu numbers launches per process, so two processes can both have an ID 0."""
    return identity.cell(row, "process_id"), identity.launch_id(row)


def _read_details(
    table: Table, values: _Values, keep: MetricFilter | None = None
) -> tuple[tuple[KernelLaunch, ...], bool]:
    """The launches (with the metrics `keep` accepts), and whether any metric at all was printed scaled."""
    identity = _Identity(table)
    name_col = table.require("Metric Name")
    unit_col = table.require("Metric Unit")
    value_col = table.require("Metric Value")
    section_col = table.column("Section Name")
    label_col = table.column("Body Item Label")  # a section exported alone: the chart or table item a row belongs to
    rule_col = table.column("Rule Name")
    rule_text_col = table.column("Rule Description")
    first_rows: dict[tuple[str, int], Row] = {}
    metrics: dict[tuple[str, int], dict[str, Metric]] = {}
    rules: dict[tuple[str, int], list[str]] = {}
    scaled = False
    for row in table.rows:
        key = _launch_key(identity, row)
        kernel = identity.kernel_name(row)
        first = first_rows.setdefault(key, row)
        if first is not row and identity.kernel_name(first) != kernel:
            raise ProfileError(
                f"launch {key[1]} is '{identity.kernel_name(first)}' on line {first.line} but '{kernel}' here",
                table.source,
                row.line,
            )
        bucket = metrics.setdefault(key, {})
        name = row.cells[name_col].strip()
        section = row.cells[section_col].strip() if section_col is not None else ""
        if not name:
            if rule_col is not None and row.cells[rule_col].strip():
                description = row.cells[rule_text_col].strip() if rule_text_col is not None else ""
                rules.setdefault(key, []).append(f"{row.cells[rule_col].strip()}: {description}".rstrip(": "))
            continue
        metric = values.metric(name, row.cells[value_col], row.cells[unit_col], section, row.line)
        scaled = scaled or (metric.value is not None and metric.scaled)
        # One name can appear in two sections ("Memory Throughput" as % and as byte/s): keep both.
        label = row.cells[label_col].strip() if label_col is not None else ""
        entry = name if name not in bucket else f"{name} [{label or section}]"
        if keep is None or keep(entry):
            bucket.setdefault(entry, metric)
    launches = tuple(
        identity.launch(row, metrics[key], tuple(rules.get(key, ()))) for key, row in first_rows.items()
    )
    return launches, scaled


def _sniff_details(table: Table, sniffer: FormatSniffer) -> None:
    """Feed the Metric Value cells to the sniffer until one settles the format."""
    unit_col = table.require("Metric Unit")
    value_col = table.require("Metric Value")
    for row in table.rows:
        text = row.cells[value_col]
        if "." in text or "," in text:
            sniffer.see(text, row.line, row.cells[unit_col].strip() == "%")
            if sniffer.decided:
                return


def _is_metric_column(title: str) -> bool:
    """Raw-page columns after the identity ones; NVTX range columns ('thread Domain:…') are identity too."""
    text = title.strip()
    if not text or text.lower() in IDENTITY_COLUMNS:
        return False
    return not (":" in text and "domain" in text.lower())


def _assumed_unit(metric: str) -> str:
    """ncu's base unit for a byte, sector or duration metric; '' for anything else."""
    return next((unit for pattern, unit in _BASE_UNITS if pattern.search(metric)), "")


def _raw_layout(table: Table) -> tuple[list[int], list[str], int | None, Iterator[Row]]:
    """The metric columns, their units (the unit row's, or ncu's base units assumed), that row's line, the launch rows."""
    identity_id = table.require("ID")
    metric_columns = [index for index, title in enumerate(table.header) if _is_metric_column(title)]
    rows = iter(table.rows)
    first = next(rows, None)
    if first is not None and not first.cells[identity_id].strip():
        return metric_columns, [cell.strip() for cell in first.cells], first.line, rows
    units = [_assumed_unit(title.strip()) for title in table.header]
    return metric_columns, units, None, (itertools.chain((first,), rows) if first is not None else rows)


def _sniff_raw(table: Table, sniffer: FormatSniffer) -> None:
    """Feed the metric cells to the sniffer, launch by launch, until one settles the format."""
    metric_columns, units, _, rows = _raw_layout(table)
    percent = {index for index in metric_columns if units[index] == "%"}
    for row in rows:
        cells = row.cells
        for index in metric_columns:
            text = cells[index]
            if "." in text or "," in text:
                sniffer.see(text, row.line, index in percent)
                if sniffer.decided:
                    return


def _read_raw(table: Table, values: _Values, keep: MetricFilter | None = None) -> tuple[tuple[KernelLaunch, ...], bool, bool]:
    """The launches (with the metrics `keep` accepts), whether any metric was printed scaled, and whether
    the page had a unit row."""
    identity = _Identity(table)
    metric_columns, units, units_line, rows = _raw_layout(table)
    columns = _RawColumns(table.header, metric_columns, units, values, keep, units_line)
    launches: list[KernelLaunch] = []
    seen: dict[tuple[str, int], int] = {}
    scaled = False
    for row in rows:
        key = _launch_key(identity, row)
        if key in seen:
            raise ProfileError(f"launch {key[1]} appears twice (first on line {seen[key]})", table.source, row.line)
        seen[key] = row.line
        metrics = RawMetrics(columns, row.cells, row.line)
        for name in columns.checked_names:
            metrics[name]  # noqa: B018 - built now: a bad value is an error of the read, naming its line
        launches.append(identity.launch(row, metrics))
        # Only the columns printed in a scaled unit need looking at, kept or not.
        if not scaled and columns.scaled_names:
            scaled = _has_scaled_value(columns.metric(name, row.cells, row.line) for name in columns.scaled_names)
    return tuple(launches), scaled, units_line is not None


def read_ncu(
    lines: LineSource, source: str = "ncu.csv", keep: MetricFilter | None = None, decimal_mark: str | None = None
) -> Profile:
    """Parse ncu CSV (either page) from a LineSource; ProfileError with a line number on a malformed file.

    The file is read twice: once for its number format (stopping at the first
    value that settles it; skipped when `decimal_mark` is given), once for its
    launches. `keep`, where given, picks the metrics each launch holds by name
    (e.g. `counters.is_used_metric`): the notes still describe the whole file.
    """
    table = read_table(lines, source, is_ncu_header, WHAT, row_rules=_row_rules)
    layout = _layout(table)
    sniffer = FormatSniffer()
    if decimal_mark is None:
        (_sniff_details if layout == DETAILS else _sniff_raw)(table, sniffer)
        table = read_table(lines, source, is_ncu_header, WHAT, row_rules=_row_rules)
    number_format = sniffer.decide(source, decimal_mark)
    values = _Values(number_format, source)
    has_unit_row = True
    if layout == DETAILS:
        launches, scaled = _read_details(table, values, keep)
    else:
        launches, scaled, has_unit_row = _read_raw(table, values, keep)
    if not launches:
        raise ProfileError("the table has a header but no kernel launches", source, table.header_line)
    notes = [number_format.note()]
    if not has_unit_row:
        notes.append("the raw page has no unit row: ncu's base units (byte, nsecond) are assumed for bytes and durations")
    notes += _passed_over_notes(table.rules)
    if scaled:
        notes.append(
            "ncu scaled some units to fit (Kbyte, Mbyte, usecond…): those figures carry about four "
            "significant digits; export with --print-units base for exact counts"
        )
    return Profile(tool=NCU, layout=layout, source=source, launches=launches, notes=tuple(notes), number_format=number_format)


def _line_list(numbers: list[int]) -> str:
    shown = ", ".join(str(number) for number in numbers[:5])
    return shown + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")


def _passed_over_notes(rules: RowRules | None) -> list[str]:
    """What reading passed over: other programs' output between rows, the header repeated for another process."""
    if rules is None:
        return []
    notes = []
    if rules.passed_over:
        count = len(rules.passed_over)
        notes.append(
            f"{count} line{'s' if count != 1 else ''} of other output among ncu's rows passed over "
            f"(line{'s' if count != 1 else ''} {_line_list(rules.passed_over)})"
        )
    if rules.headers_again:
        count = len(rules.headers_again)
        notes.append(
            f"the header is repeated on line{'s' if count != 1 else ''} {_line_list(rules.headers_again)} "
            "(one table per process): read as one table"
        )
    return notes


def read_ncu_text(
    text: str, source: str = "ncu.csv", keep: MetricFilter | None = None, decimal_mark: str | None = None
) -> Profile:
    """Parse ncu CSV text (either page); see read_ncu."""
    return read_ncu(text_source(text), source, keep, decimal_mark)


def read_ncu_csv(path: str | Path, keep: MetricFilter | None = None, decimal_mark: str | None = None) -> Profile:
    """Read an ncu CSV file (details or raw page), with only the metrics `keep` accepts where given."""
    file = Path(path)
    return read_ncu(open_lines(file), file.name, keep, decimal_mark)
