"""CSV tables as profilers print them: log lines first, a quoted header, rows with line numbers.

`ncu --csv` and `nsys stats --format csv` both write their tables after lines
that are not CSV at all (`==PROF== Connected to process …`, `Processing
[report.sqlite] with […]`), and `nsys stats` with several reports writes one
table per report under a heading (`** CUDA GPU Kernel Summary
(cuda_gpu_kern_sum):`). This module finds a header, streams the rows with the
line each starts on (so every complaint can name it) without holding the
file, and parses the numbers the tools print (thousands separators, `n/a`,
exponents) in the file's number format (`numbers.NumberFormat`).

Readers read a file more than once (the number format is decided from all
its values before any is read), so they take a `LineSource`: a callable that
opens the text afresh each time — `text_source(text)` or `file_source(path)`.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Callable, Iterator, Sequence

from workbench.profilers.errors import ProfileError
from workbench.profilers.lines import LineSource, Lines, text_source
from workbench.profilers.numbers import NumberFormat

__all__ = ["ProfileError"]  # its home is profilers.errors; most readers name it from here

# How far into a file the header may sit behind log lines before we give up.
MAX_PREAMBLE_LINES = 100_000

MISSING_CELLS = frozenset({"", "n/a", "na", "-", "nan", "(!) n/a"})  # what the tools print for no value
# `** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):`, the heading nsys stats writes above each report.
_HEADING = re.compile(r"^\s*\*\*\s*(?P<title>.*?)\s*(?:\((?P<report>[A-Za-z0-9_:.-]+)\))?\s*:?\s*$")
BATCH_ROWS = 512  # rows a table hands out at once through Table.batches() (~1.3 kB each while read)
# A first cell (one a line) that may be a tool's `==` chatter or a `**` report heading rather than a row's.
_NOT_A_ROW_START = re.compile(r"^[^\S\n]*(?:==|\*\*)", re.MULTILINE)


def is_log_line(line: str) -> bool:
    """True for the tools' own chatter: `==PROF==`, `==WARNING==`, `==ERROR==` lines."""
    return line.lstrip().startswith("==")


def is_missing(text: str) -> bool:
    """True for the cells profilers print when a metric has no value (`n/a`, empty)."""
    return text.strip().lower() in MISSING_CELLS


def parse_number(text: str) -> int | float:
    """A number as ncu prints it by default: '1,234.56', '33554432', '4.0e-05'; ValueError otherwise.

    Integers stay exact Python ints (byte and instruction counts can exceed 2^53).
    Files from comma-decimal locales are read through their `NumberFormat` instead.
    """
    return NumberFormat().parse(text)


@dataclass(frozen=True)
class Row:
    """One CSV record and the 1-based line of the file it starts on."""

    line: int
    cells: tuple[str, ...]


def heading_of(line: str) -> tuple[str, str] | None:
    """(title, report name) of an nsys report heading ('** CUDA API Summary (cuda_api_sum):'), else None."""
    if "**" not in line:
        return None
    match = _HEADING.match(line)
    if match is None:
        return None
    return match.group("title"), (match.group("report") or "")


class _Feed:
    """Feeds lines to csv.reader, skipping log and blank lines and noting which lines it handed out.

    Ends the table at the first blank line after a record when `stop_at_blank`
    (nsys prints one table per report, separated by blank lines), and at a
    report heading, which it puts back for the caller.
    """

    def __init__(self, lines: Lines, stop_at_blank: bool, foreign: "Callable[[str], bool] | None" = None) -> None:
        self._lines = lines
        self._stop_at_blank = stop_at_blank
        self._ended = False
        self.taken: list[int] = []
        self.any = False
        # Lines that start no record of this table (a program's own output between ncu's tables): passed over.
        self._foreign = foreign
        self.passed_over: list[int] = []

    def __iter__(self) -> "_Feed":
        return self

    def __next__(self) -> str:
        if self._ended:
            raise StopIteration
        for number, line in self._lines:
            if not line.strip():
                if self._stop_at_blank and self.any:
                    self._ended = True
                    break
                continue
            if is_log_line(line):
                continue
            if line.lstrip().startswith("**") and heading_of(line) is not None:
                self._lines.pending = (number, line)
                self._ended = True
                break
            if self._foreign is not None and not self.taken and self._foreign(line):
                self.passed_over.append(number)
                continue
            self.taken.append(number)
            self.any = True
            return line
        self._ended = True
        raise StopIteration

    @property
    def ended(self) -> bool:
        return self._ended


def split_line(line: str) -> list[str] | None:
    """One line's CSV cells, or None when the line is not one whole CSV record."""
    try:
        records = list(csv.reader([line], strict=True))
    except csv.Error:
        return None
    return records[0] if len(records) == 1 else None


@dataclass
class Table:
    """A header (and its line), the report heading above it if any, and its records, streamed once.

    `rows` is an iterator: each record is read from the file as it is asked
    for, so a file's size never decides how much memory reading takes.
    """

    source: str
    header: tuple[str, ...]
    header_line: int
    rows: Iterator[Row]
    heading: tuple[str, str] | None = None  # (title, report name) of an nsys report heading
    lines: Lines | None = field(default=None, repr=False)
    stop_at_blank: bool = False
    rules: "RowRules | None" = None  # how rows may depart from the header, and what was passed over

    def batches(self, size: int = BATCH_ROWS) -> "Iterator[RowBatch]":
        """The same records as `rows`, handed out `size` at a time (read one or the other, not both).

        Plain one-line records are split in bulk; anything else (a record over
        several lines, a blank or log line, a heading, a malformed line) goes
        through the record-at-a-time path, so the records, their line numbers
        and every error are those `rows` gives, in the same order: the rows
        before a malformed record are handed out before its error is raised.
        """
        if self.lines is None:
            raise RuntimeError("this table was not read from Lines")
        if self.rules is not None:
            raise RuntimeError("a table with row rules is read through `rows`, record by record")
        return _record_batches(self.lines, self.source, len(self.header), self.header_line, self.stop_at_blank, size)

    def column(self, *names: str) -> int | None:
        """Index of the first header cell equal to one of `names` (case and spacing ignored)."""
        wanted = [_fold(name) for name in names]
        for name in wanted:
            for index, cell in enumerate(self.header):
                if _fold(cell) == name:
                    return index
        return None

    def require(self, *names: str) -> int:
        """Like column(), but a missing column is a ProfileError naming the header line."""
        index = self.column(*names)
        if index is None:
            shown = ", ".join(self.header[:12]) + (", …" if len(self.header) > 12 else "")
            raise ProfileError(f"the header has no '{names[0]}' column (it has: {shown})", self.source, self.header_line)
        return index


def _fold(text: str) -> str:
    return " ".join(text.strip().lower().split())


@dataclass
class RowRules:
    """How a tool's rows may depart from its header, and what reading them passed over.

    `fewest`: the fewest cells a row may have; a row between that and the
    header's width reads its missing trailing cells as empty (ncu leaves the
    rule columns off metric rows). `foreign`: a line that starts no record
    (another program's output) is passed over, its number kept in
    `passed_over`. `repeated_header`: a record equal to the header (the next
    process's table under the same columns) is passed over, its line kept in
    `headers_again`.
    """

    fewest: int
    foreign: Callable[[str], bool] | None = None
    repeated_header: bool = False
    passed_over: list[int] = field(default_factory=list)
    headers_again: list[int] = field(default_factory=list)


def _records(
    lines: Lines, source: str, header: list[str], header_line: int, stop_at_blank: bool, rules: RowRules | None = None
) -> Iterator[Row]:
    feed = _Feed(lines, stop_at_blank, rules.foreign if rules is not None else None)
    reader = csv.reader(feed, strict=True)
    width = len(header)
    folded = [_fold(cell) for cell in header] if rules is not None and rules.repeated_header else None
    while True:
        row = _next_record(feed, reader, source, width, header_line, rules.fewest if rules is not None else width)
        if row is None:
            break
        if (
            folded is not None
            and _fold(row.cells[0]) == folded[0]  # the first cell tells a header from a row before all are folded
            and [_fold(cell) for cell in row.cells] == folded
        ):
            rules.headers_again.append(row.line)  # type: ignore[union-attr]
            continue
        yield row
    if rules is not None:
        rules.passed_over.extend(feed.passed_over)


def _next_record(
    feed: _Feed, reader: "Iterator[list[str]]", source: str, width: int, header_line: int, fewest: int | None = None
) -> Row | None:
    """The next record of a table read line by line, None at its end; ProfileError on a malformed one.

    A record of `fewest` to `width` cells is padded with empty cells to the header's width.
    """
    feed.taken.clear()
    try:
        cells = next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        where = feed.taken[0] if feed.taken else None
        raise ProfileError(f"not valid CSV ({exc})", source, where) from None
    start = feed.taken[0] if feed.taken else header_line
    if len(cells) != width:
        if fewest is None or not fewest <= len(cells) < width:
            raise ProfileError(f"{len(cells)} fields where the header (line {header_line}) has {width}", source, start)
        cells.extend([""] * (width - len(cells)))
    return Row(start, tuple(cells))


class RowBatch:
    """Consecutive records of a table held as columns: the line each record starts on, and its cells
    column by column (`columns[j][i]` is cell j of record i).

    A batch that is one QuotedBlock (rows as nsys stats writes them) keeps it
    as `block` and makes the cells' texts only when `columns` is asked for, so
    a reader can take its numbers without a string per cell.
    """

    def __init__(self, lines: list[int], columns: list[list[str]], block: "QuotedBlock | None" = None) -> None:
        self.lines = lines
        self._columns = columns
        self.block = block

    @classmethod
    def empty(cls, width: int) -> "RowBatch":
        return cls([], [[] for _ in range(width)])

    @property
    def columns(self) -> list[list[str]]:
        if self.block is not None:
            self._columns = [self.block.texts(index) for index in range(self.block.width)]
            self.block = None
        return self._columns

    def __len__(self) -> int:
        return len(self.lines)

    def add(self, row: Row) -> None:
        self.lines.append(row.line)
        for column, cell in zip(self.columns, row.cells):
            column.append(cell)

    def extend(self, first: int, columns: "Sequence[Sequence[str]]") -> None:
        """Records of consecutive lines from `first`, given as columns."""
        held = self.columns
        self.lines.extend(range(first, first + len(columns[0])))
        for column, more in zip(held, columns):
            column.extend(more)

    def extend_block(self, first: int, block: "QuotedBlock") -> None:
        """Records of consecutive lines from `first`, given as a QuotedBlock (kept whole in an empty batch)."""
        if self.lines:
            self.extend(first, [block.texts(index) for index in range(block.width)])
            return
        self.lines.extend(range(first, first + block.count))
        self.block = block

    def rows(self) -> Iterator[Row]:
        """The batch as Rows, one at a time."""
        return (Row(line, cells) for line, cells in zip(self.lines, zip(*self.columns)))


class QuotedBlock:
    """Lines that are each `"c1","c2",…` with `width` cells and no quote inside a cell, as nsys stats writes
    every row: the lines' text and where each cell starts and ends in it (quoted_block)."""

    def __init__(self, text: str, raw: "Any", opens: "Any", closes: "Any", width: int) -> None:
        self.text = text
        self.raw = raw  # the text's bytes (it is ASCII: a byte is a character)
        self._opens = opens  # each cell's opening quote, row by row
        self._closes = closes  # and its closing quote
        self.width = width
        self.count = len(opens) // width

    def texts(self, index: int) -> list[str]:
        """Column `index` as text, one string a cell."""
        starts = (self._opens[index::self.width] + 1).tolist()
        ends = self._closes[index::self.width].tolist()
        return list(map(self.text.__getitem__, map(slice, starts, ends)))

    def cells(self, index: int, longest: int) -> "tuple[Any, Any] | None":
        """Column `index` as (its cells' bytes laid end to end, each cell's length) for
        numbers.plain_cells; None when a cell is longer than `longest` bytes."""
        import numpy as np

        starts = self._opens[index::self.width] + 1
        lengths = self._closes[index::self.width] - starts
        if lengths.max() > longest:
            return None
        offsets = np.cumsum(lengths) - lengths
        return self.raw[np.arange(int(lengths.sum())) + np.repeat(starts - offsets, lengths)], lengths


def quoted_block(lines: list[str], width: int) -> QuotedBlock | None:
    """The lines as a QuotedBlock when every one is `"c1","c2",…` with `width` cells, no quote inside a
    cell, in ASCII without NUL (as nsys stats writes every row); None otherwise.

    For such lines csv.reader gives exactly the text between each pair of
    quotes. The quotes of the whole text, found at once, must pair up as
    the cells' and lie one character apart: a comma between the cells of a
    line, a newline between lines (and no other newline anywhere).
    """
    import numpy as np

    count = len(lines)
    if width < 2 or not count:
        return None
    text = "\n".join(lines)
    if not text.isascii() or "\x00" in text:
        return None
    raw = np.frombuffer(text.encode("ascii"), np.uint8)
    quotes = np.flatnonzero(raw == _QUOTE)
    if quotes.size != 2 * width * count or quotes[0] != 0 or quotes[-1] != raw.size - 1:
        return None
    opens, closes = quotes[0::2], quotes[1::2]
    if (opens[1:] - closes[:-1] != 2).any():
        return None
    between = raw[closes[:-1] + 1]  # the one character after each cell but the last
    expected = np.full(between.size, _COMMA, np.uint8)
    expected[width - 1::width] = _NEWLINE
    if not np.array_equal(between, expected) or np.count_nonzero(raw == _NEWLINE) != count - 1:
        return None
    return QuotedBlock(text, raw, opens, closes, width)


_QUOTE, _COMMA, _NEWLINE = ord('"'), ord(","), ord("\n")


def _quoted_columns(lines: list[str], width: int) -> list[list[str]] | None:
    """The columns of lines that are all `"c1","c2",…` with `width` cells and no quote inside a cell
    (as nsys stats writes every row), split without the csv module: exactly what csv.reader gives
    for such lines. None when any line is otherwise.

    Every line holds `width` - 1 separators `","`; the quotes of the whole
    chunk, counted, are then exactly the outer pair and the separators' of
    every line, so no cell holds one, and the chunk's cells split at once
    fall into place row by row.
    """
    text = "\n".join(lines)
    count = len(lines)
    if (
        width < 2
        or not text.startswith('"')
        or not text.endswith('"')
        or text.count('"\n"') != count - 1
        or text.count('"') != 2 * width * count
        or "\x00" in text
        or set(map(str.count, lines, repeat('","', count))) != {width - 1}
    ):
        return None
    cells = text[1:-1].replace('"\n"', '","').split('","')
    if len(cells) != width * count:
        return None
    return [cells[index::width] for index in range(width)]


def _plain_columns(lines: list[str], width: int) -> list[list[str]]:
    """The columns of the longest run of `lines` from the start that are each a plain table row.

    A plain row is one whole CSV record of `width` cells on its line, neither
    blank nor a tool's `==` line nor a possible `**` heading (its first cell
    does not start with either). Whatever the line-by-line path would treat
    otherwise (a record over two lines, a bad quote, a short row, the blank
    line that ends the table) ends the run; a run of none is an empty list.
    """
    quoted = _quoted_columns(lines, width)
    if quoted is not None:
        return quoted
    try:
        records = list(csv.reader(lines, strict=True))
    except csv.Error:
        return []
    if len(records) != len(lines):  # a record spans lines: which line starts which record is not simple
        return []
    good = len(records)
    if set(map(len, records)) != {width}:
        good = next(index for index, cells in enumerate(records) if len(cells) != width)
    special = _NOT_A_ROW_START.search("\n".join(map(itemgetter(0), records[:good])))
    if special is not None:
        good = special.string.count("\n", 0, special.start())
    return [list(column) for column in zip(*records[:good])]


def _record_batches(
    lines: Lines, source: str, width: int, header_line: int, stop_at_blank: bool, size: int
) -> Iterator[RowBatch]:
    """A table's records in batches; see Table.batches."""
    feed = _Feed(lines, stop_at_blank)
    reader = csv.reader(feed, strict=True)
    batch = RowBatch.empty(width)
    try:
        while not feed.ended:
            if len(batch) >= size:
                yield batch
                batch = RowBatch.empty(width)
            if lines.holding:  # lines put back: record by record until they are used up
                row = _next_record(feed, reader, source, width, header_line)
                if row is None:
                    break
                batch.add(row)
                continue
            first, chunk = lines.take(size - len(batch))
            if not chunk:
                break
            block = quoted_block(chunk, width)
            if block is not None:
                batch.extend_block(first, block)
                feed.any = True
                continue
            columns = _plain_columns(chunk, width) if width > 1 else []
            plain = len(columns[0]) if columns else 0
            if plain:
                batch.extend(first, columns)
                feed.any = True
            lines.put_back(first + plain, chunk[plain:])  # the line-by-line path reads (and judges) these
    except ProfileError:
        if batch:
            yield batch  # the rows before the fault first, as `rows` would give them
        raise
    if batch:
        yield batch


def next_table(
    lines: Lines,
    source: str,
    is_header: Callable[[list[str]], bool],
    stop_at_blank: bool,
    after_heading: bool = False,
    row_rules: "Callable[[tuple[str, ...]], RowRules] | None" = None,
) -> Table | None:
    """The next table of an opened file, its rows streamed; None at the end of the file.

    Its header is the first CSV line `is_header` accepts or, with
    `after_heading`, the first CSV line after a report heading (nsys stats
    writes each report under one; the caller decides what to do with it).
    `row_rules`, given the header, says how rows may depart from it (RowRules).
    """
    heading: tuple[str, str] | None = None
    scanned = 0
    for number, line in lines:
        scanned += 1
        if scanned > MAX_PREAMBLE_LINES:
            break
        if not line.strip() or is_log_line(line):
            continue
        found = heading_of(line) if line.lstrip().startswith("**") else None
        if found is not None:
            heading = found
            continue
        if "," not in line and '"' not in line:
            continue
        cells = split_line(line)
        if cells is None:
            continue
        header = [cell.strip() for cell in cells]
        if is_header(header) or (after_heading and heading is not None):
            rules = row_rules(tuple(header)) if row_rules is not None else None
            rows = _records(lines, source, header, number, stop_at_blank, rules)
            return Table(source, tuple(header), number, rows, heading, lines, stop_at_blank, rules)
    return None


def skip_table(lines: Lines) -> int:
    """Pass over the rest of a table without reading it as CSV (a report the workbench does not use).

    Ends at the first blank line after a row or at the next report heading
    (put back for the caller); returns the last line passed over.
    """
    last = lines.number
    rows = 0
    for number, line in lines:
        if not line.strip():
            if rows:
                break
            continue
        if line.lstrip().startswith("**") and heading_of(line) is not None:
            lines.pending = (number, line)
            break
        last = number
        rows += 1
    return last


def no_table(lines: Lines, source: str, what: str) -> ProfileError:
    """The error for a file in which no table was found: empty, a tool's ==ERROR==, or no header."""
    if lines.nonblank == 0:
        return ProfileError(f"the file is empty; expected {what}", source)
    if lines.first_error is not None:
        number, text = lines.first_error
        return ProfileError(f"the tool reported an error and wrote no table: {text}", source, number)
    return ProfileError(f"no table header found in {lines.number} lines; expected {what}", source)


def read_table(
    text: "str | LineSource",
    source: str,
    is_header: Callable[[list[str]], bool],
    what: str,
    stop_at_blank: bool = False,
    row_rules: "Callable[[tuple[str, ...]], RowRules] | None" = None,
) -> Table:
    """The first table whose header satisfies `is_header`, rows streamed; ProfileError when there is none."""
    lines = Lines(text_source(text) if isinstance(text, str) else text, source, what)
    table = next_table(lines, source, is_header, stop_at_blank, row_rules=row_rules)
    if table is None:
        for _ in lines:  # read to the end for the right message (an ==ERROR== further down)
            if lines.number > MAX_PREAMBLE_LINES and lines.first_error is None:
                break
        raise no_table(lines, source, what)
    return table
