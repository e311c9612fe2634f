"""Reader for `nsys stats --report cuda_gpu_kern_sum --format csv` (and the older gpukernsum).

Current releases print Time (%), Total Time (ns), Instances, Avg (ns),
Med (ns), Min (ns), Max (ns), StdDev (ns), Name; older ones Time(%),
Total Time (ns), Instances, Average, Minimum, Maximum[, StdDev], Name, all in
nanoseconds. Progress lines ("Generating SQLite file …", "Processing […]")
come first; numbers may carry thousands separators, in the locale's format
(the decimal mark is decided per file, `numbers`). The time unit is read
from each column title, so a `--timeunit` other than ns converts correctly.

`nsys stats --format csv` with several reports writes each under a heading,
`** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):`, then its own header and
rows. The kernel summary is found by its heading (or, without headings, by
its header); the other reports are passed over and named in the notes. The
rows are streamed: the file is never held whole.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from itertools import repeat
from operator import truediv
from pathlib import Path
from typing import Any

from workbench.profilers.metric_units import BaseUnit, _tidy, base_unit, to_base
from workbench.profilers.numbers import LARGEST, FormatSniffer, NumberFormat, NumberRangeError, contradiction, plain_cells, plain_column
from workbench.profilers.profile import Profile
from workbench.profilers.records import NSYS, KernelTimes, KernelTimesTable
from workbench.profilers.lines import LineSource, Lines, open_lines, text_source
from workbench.profilers.table import (
    MISSING_CELLS,
    ProfileError,
    Row,
    RowBatch,
    Table,
    is_missing,
    next_table,
    no_table,
    skip_table,
)

CURRENT = "cuda_gpu_kern_sum"
OLDER = "gpukernsum"
KERNEL_REPORTS = frozenset({CURRENT, OLDER})
WHAT = "Nsight Systems CSV (nsys stats --report cuda_gpu_kern_sum --format csv)"

_UNIT_IN_TITLE = re.compile(r"\(([^)%]+)\)\s*$")

# Each figure under the titles different releases give it.
# Each figure under the titles different releases give it, without the unit in brackets
# ("Avg (ns)", "Avg (us)" and "Average" are one figure; the unit is read from the title).
_STEMS: dict[str, tuple[str, ...]] = {
    "percent": ("time (%)", "time(%)"),
    "total": ("total time",),
    "instances": ("instances", "count"),
    "average": ("avg", "average"),
    "median": ("med", "median"),
    "minimum": ("min", "minimum"),
    "maximum": ("max", "maximum"),
    "stddev": ("stddev", "std dev"),
}


def _stem(title: str) -> str:
    """'Avg (ns)' → 'avg'; 'Time (%)' stays whole (a percentage is no unit of time)."""
    folded = " ".join(title.strip().lower().split())
    return folded if "%" in folded else _UNIT_IN_TITLE.sub("", folded).strip()


def _find(table: Table, key: str) -> int | None:
    stems = _STEMS[key]
    for index, title in enumerate(table.header):
        if _stem(title) in stems:
            return index
    return None


def is_nsys_header(cells: list[str]) -> bool:
    """A kernel summary header: a Name column, a total time and an instance count."""
    folded = {" ".join(cell.lower().split()) for cell in cells}
    has_total = any(cell.startswith("total time") for cell in folded)
    return "name" in folded and has_total and ("instances" in folded or "count" in folded)


def _unit_of(title: str) -> str:
    """'Avg (ns)' → 'ns'; titles without a unit are in nanoseconds (older nsys)."""
    match = _UNIT_IN_TITLE.search(title)
    return match.group(1).strip() if match else "ns"


class _Columns:
    """The kernel summary's columns, and each row read into a KernelTimes in the file's number format."""

    def __init__(self, table: Table, number_format: NumberFormat) -> None:
        self.table = table
        self.format = number_format
        self.parse = number_format.parser
        self.name = table.require("Name")
        self.instances = self._require("instances", "Instances")
        self.total = self._require("total", "Total Time (ns)")
        self.optional = {key: _find(table, key) for key in _STEMS}
        self.units: dict[int, BaseUnit] = {}
        for key in ("total", "average", "median", "minimum", "maximum", "stddev"):
            index = self.optional[key] if key != "total" else self.total
            if index is None:
                continue
            unit = base_unit(_unit_of(table.header[index]))
            if unit.symbol != "s":
                raise ProfileError(
                    f"the column '{table.header[index]}' is not in a time unit", table.source, table.header_line
                )
            self.units[index] = unit
        # Sub-second units divide by a whole power of ten: 3 / 10**9 is the double nearest 3 ns, 3 * 1e-9 is not.
        self.divisors = {
            index: _tidy(1 / unit.factor) for index, unit in self.units.items() if 0 < unit.factor < 1
        }
        # (column, divisor to seconds or None for another factor, what it is) in KernelTimes order.
        self.time_columns = [
            (index, self.divisors.get(index) if index is not None else None, what)
            for index, what in (
                (self.total, "Total Time"),
                (self.optional["average"], "average"),
                (self.optional["median"], "median"),
                (self.optional["minimum"], "minimum"),
                (self.optional["maximum"], "maximum"),
                (self.optional["stddev"], "stddev"),
            )
        ]

        # The columns read whole in the plain case: (figure, column, divisor to seconds, None for a percentage).
        self.fast_columns: list[tuple[str, int, int | float | None]] = []
        for figure, (index, divisor, _what) in zip(("total_time", "average", "median", "minimum", "maximum", "stddev"), self.time_columns):
            if index is not None:
                self.fast_columns.append((figure, index, divisor))
        if self.optional["percent"] is not None:
            self.fast_columns.append(("time_percent", self.optional["percent"], None))
        plain_units = all(divisor is not None for _, index, divisor in self.time_columns if index is not None)
        self.fast = _PlainShapes.of(number_format.decimal) if plain_units else None

    def _require(self, key: str, title: str) -> int:
        index = _find(self.table, key)
        if index is None:
            return self.table.require(title)  # the error naming the header
        return index

    def number(self, row: Row, index: int, what: str, percent: bool = False) -> int | float:
        """The cell's number; a ProfileError naming the column for text, a number out of range or the other format."""
        text = row.cells[index]
        try:
            value = self.parse(text)
        except NumberRangeError as exc:
            title = self.table.header[index]
            raise ProfileError(f"'{title}' is {exc}: out of range for any profiler's figure", self.table.source, row.line) from None
        except ValueError:
            error = contradiction(text, self.format, self.table.source, row.line, percent)
            if error is not None:
                raise error from None
            title = self.table.header[index]
            expected = (
                f"Instances should be a whole number" if index == self.instances else f"the '{title}' cell should be a number"
            )
            raise ProfileError(f"{expected}; found '{text.strip()}'", self.table.source, row.line) from None
        if value < 0:
            title = self.table.header[index]
            raise ProfileError(f"'{title}' is {text.strip()}: {what} cannot be negative", self.table.source, row.line)
        return value

    def seconds(self, row: Row, index: int | None, what: str, required: bool = False) -> float | None:
        if index is None:
            return None
        text = row.cells[index]
        if not text or text.strip().lower() in MISSING_CELLS:
            if required:
                raise ProfileError(f"the {what} cell is empty", self.table.source, row.line)
            return None
        number = self.number(row, index, "a time")
        unit = self.units[index]
        seconds = float(number) / self.divisors[index] if index in self.divisors else float(to_base(number, unit))
        if seconds >= LARGEST or not math.isfinite(seconds):
            raise ProfileError(f"'{self.table.header[index]}' is out of range", self.table.source, row.line)
        return seconds

    def times(self, row: Row) -> KernelTimes:
        """One row as a KernelTimes. The common case (a number in every time cell) runs in this one loop;
        anything else goes through seconds(), which says what is wrong."""
        cells = row.cells
        name = cells[self.name].strip()
        if not name:
            raise ProfileError("the Name cell is empty", self.table.source, row.line)
        instances = self.number(row, self.instances, "a whole number of launches")
        if not isinstance(instances, int) or instances >= 2**63:
            raise ProfileError(
                f"Instances should be a whole number of launches; found '{cells[self.instances].strip()}'",
                self.table.source,
                row.line,
            )
        percent_index = self.optional["percent"]
        percent: float | None = None
        if percent_index is not None and not is_missing(cells[percent_index]):
            percent = float(self.number(row, percent_index, "a percentage", percent=True))
        parse = self.parse
        figures: list[float | None] = []
        for index, divisor, what in self.time_columns:
            if index is None:
                figures.append(None)
                continue
            try:
                number = parse(cells[index])
            except ValueError:
                number = -1  # missing, unreadable or out of range: seconds() says which
            if number < 0 or divisor is None:
                figures.append(self.seconds(row, index, what, required=index == self.total))
                continue
            seconds = number / divisor
            if seconds >= LARGEST:
                figures.append(self.seconds(row, index, what))
                continue
            figures.append(seconds)
        total, average, median, minimum, maximum, stddev = figures
        assert total is not None
        return KernelTimes(name, instances, total, average, median, minimum, maximum, stddev, percent, row.line)

    def sniff(self, sniffer: FormatSniffer) -> None:
        """Feed the numbers to the sniffer until one settles the format (Instances are whole: a lone
        mark before three digits there groups thousands)."""
        timed = [index for index in self.units]
        percent = self.optional["percent"]
        for batch in self.table.batches():
            for line, cells in zip(batch.lines, zip(*batch.columns)):
                text = cells[self.instances]
                if "." in text or "," in text:
                    sniffer.see(text, line, whole=True)
                if percent is not None and ("." in cells[percent] or "," in cells[percent]):
                    sniffer.see(cells[percent], line, percent=True)
                for index in timed:
                    text = cells[index]
                    if "." in text or "," in text:
                        sniffer.see(text, line)
                if sniffer.decided:
                    return

    def read(self, batch: RowBatch, into: KernelTimesTable) -> None:
        """A batch of rows into the table: whole columns at once where every cell is a plain number
        (`_fast_columns`), otherwise row by row through times(), which says what is wrong and where."""
        columns = self._fast_columns(batch)
        if columns is None:
            for row in batch.rows():
                into.append(self.times(row))
            return
        names, instances, figures = columns
        into.extend_columns(names, instances, batch.lines, figures)

    def _fast_columns(
        self, batch: RowBatch
    ) -> "tuple[list[str], list[int], dict[str, list[float]]] | None":
        """The batch as columns when every cell reads the plain way, else None (then times() reads each row).

        Plain: a name; Instances a whole number of at most 18 digits; every
        time and the percentage an unsigned number in the file's format
        (thousands grouped or not, a fraction, an exponent) below 2**53 in the
        column's unit, so that float(text) / divisor is exactly the
        number / divisor times() computes. Blank or n/a cells, signs, spaces
        and units without a divisor all take the row-by-row path.
        """
        if self.fast is None:
            return None
        shapes = self.fast
        decimal = self.format.decimal
        block = batch.block  # the rows as nsys writes them: numbers read from the text's bytes, no string a cell
        names = list(map(str.strip, block.texts(self.name) if block is not None else batch.columns[self.name]))
        if "" in names:
            return None

        def plain(index: int, whole: bool = False) -> Any:
            if block is not None:
                cells = block.cells(index, _PLAIN_CELL)
                return None if cells is None else plain_cells(*cells, decimal, whole=whole)
            return plain_column("\n".join(batch.columns[index]), decimal, whole=whole)

        instances: Any = plain(self.instances, whole=True)
        if instances is None:
            counts = "\n".join(batch.columns[self.instances])
            if shapes.whole.fullmatch(counts) is None:
                return None
            instances = list(map(int, counts.replace(shapes.grouping, "").split("\n")))
        figures: dict[str, Any] = {}
        for key, index, divisor in self.fast_columns:
            values = plain(index)  # most columns: all at once
            if values is None:  # an exponent, say: checked whole by the pattern, read by float()
                text = "\n".join(batch.columns[index])
                if shapes.number.fullmatch(text) is None:
                    return None
                text = text.replace(shapes.grouping, "")
                if shapes.comma:
                    text = text.replace(",", ".")
                values = list(map(float, text.split("\n")))
                if max(values) >= 2.0**53:
                    return None
                if divisor is not None:
                    values = list(map(truediv, values, repeat(divisor, len(values))))
            elif divisor is not None:
                values = values / divisor  # the same IEEE division as float / divisor, element by element
            figures[key] = values
        return names, instances, figures


# The longest cell numbers.plain_cells can take (18 digits, 7 grouping marks, a decimal mark), with room.
_PLAIN_CELL = 32


class _PlainShapes:
    """Whole-column patterns for the plain cells of one number format (see _Columns._fast_columns).

    Each matches a column's cells joined by newlines: numbers as that format's
    parser reads them (NumberFormat.parse), without a sign or spaces.
    """

    def __init__(self, decimal: str) -> None:
        grouping = "," if decimal == "." else "."
        d, g = re.escape(decimal), re.escape(grouping)
        # Possessive and atomic: a cell with a grouping mark can only be the first kind, one without it the
        # second or third, so no alternative needs another try. Lengths are bounded (at most ~60 characters).
        number = (
            rf"(?>[1-9][0-9]{{0,2}}(?:{g}[0-9]{{3}}){{1,7}}+(?:{d}[0-9]{{0,20}}+)?+|[0-9]{{1,24}}+(?:{d}[0-9]{{0,20}}+)?+"
            rf"|{d}[0-9]{{1,20}}+)(?:[eE][+-]?[0-9]{{1,3}}+)?+"
        )
        whole = rf"(?>[1-9][0-9]{{0,2}}(?:{g}[0-9]{{3}}){{1,5}}+|[0-9]{{1,18}}+)"
        self.grouping = grouping
        self.comma = decimal == ","
        self.number = re.compile(rf"{number}(?:\n{number})*+")
        self.whole = re.compile(rf"{whole}(?:\n{whole})*+")

    @staticmethod
    @lru_cache(maxsize=None)
    def of(decimal: str) -> "_PlainShapes":
        return _PlainShapes(decimal)


# Rows read at once: whole columns go to NumPy (plain_column), whose per-call cost wants long columns.
_READ_ROWS = 4096


def _describe(table: Table, last: int) -> str:
    title, report = table.heading or ("", "")
    name = f"'{title} ({report})'" if title and report else (f"'{title or report}'" if title or report else "a table")
    return f"{name} (lines {table.header_line}–{last})"


def _kernel_table(lines: Lines, source: str, skipped: list[str]) -> Table | None:
    """The kernel summary of a file of one or several reports; the reports passed over go into `skipped`."""
    while True:
        table = next_table(lines, source, is_nsys_header, stop_at_blank=True, after_heading=True)
        if table is None:
            return None
        report = table.heading[1] if table.heading else ""
        if report in KERNEL_REPORTS or (not report and is_nsys_header(list(table.header))):
            return table
        skipped.append(_describe(table, skip_table(lines)))


def _skip_rest(lines: Lines, source: str, skipped: list[str]) -> None:
    """Name the reports after the kernel summary (a second kernel summary too)."""
    while True:
        table = next_table(lines, source, lambda cells: False, stop_at_blank=True, after_heading=True)
        if table is None:
            return
        skipped.append(_describe(table, skip_table(lines)))


def _open(source: LineSource, name: str) -> Lines:
    return Lines(source, name, WHAT)


def _missing_table(lines: Lines, source: str) -> ProfileError:
    for _ in lines:  # to the end: an ==ERROR== or a SKIPPED line further down says why
        pass
    if lines.skipped_lines:
        return ProfileError(f"nsys wrote no kernel table: {lines.skipped_lines[0]}", source)
    return no_table(lines, source, WHAT)


def read_nsys(lines: LineSource, source: str = "nsys.csv", decimal_mark: str | None = None) -> Profile:
    """Parse an nsys kernel-summary CSV (one report or several); ProfileError with a line number on a malformed file.

    Read twice: once for the number format (stopping at the first value that
    settles it; skipped when `decimal_mark` is given), once for the kernels.
    """
    sniffer = FormatSniffer()
    if decimal_mark is None:
        opened = _open(lines, source)
        table = _kernel_table(opened, source, [])
        if table is None:
            raise _missing_table(opened, source)
        _Columns(table, NumberFormat()).sniff(sniffer)
    number_format = sniffer.decide(source, decimal_mark)
    opened = _open(lines, source)
    skipped: list[str] = []
    table = _kernel_table(opened, source, skipped)
    if table is None:
        raise _missing_table(opened, source)
    columns = _Columns(table, number_format)
    summaries = KernelTimesTable()
    for batch in table.batches(_READ_ROWS):
        columns.read(batch, summaries)
    if not summaries:
        raise ProfileError("the table has a header but no kernels", source, table.header_line)
    _skip_rest(opened, source, skipped)
    heading = table.heading[1] if table.heading else ""
    if heading in KERNEL_REPORTS:
        layout = heading
    else:
        layout = CURRENT if _find(table, "median") is not None or table.column("Avg (ns)") is not None else OLDER
    notes = [number_format.note()]
    if skipped:
        notes.append(
            f"the file holds {len(skipped) + 1} reports; read the kernel summary (line {table.header_line}) and "
            f"passed over {', '.join(skipped[:8])}{' and more' if len(skipped) > 8 else ''}: the workbench reads "
            "only kernel summaries"
        )
    return Profile(tool=NSYS, layout=layout, source=source, summaries=summaries, notes=tuple(notes), number_format=number_format)


def read_nsys_text(text: str, source: str = "nsys.csv", decimal_mark: str | None = None) -> Profile:
    """Parse nsys kernel-summary CSV text; see read_nsys."""
    return read_nsys(text_source(text), source, decimal_mark)


def read_nsys_csv(path: str | Path, decimal_mark: str | None = None) -> Profile:
    """Read an nsys kernel-summary CSV file."""
    file = Path(path)
    return read_nsys(open_lines(file), file.name, decimal_mark)
