"""CSV tables as profilers print them: log lines first, a quoted header, rows with line numbers.

`ncu --csv` and `nsys stats --format csv` both write their table after lines
that are not CSV at all (`==PROF== Connected to process …`, `Processing
[report.sqlite] with […]`). This module finds the header, reads the rows
with the line each starts on (so every complaint can name it), and parses
the numbers the tools print: thousands separators, `n/a`, exponents.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from workbench.errors import WorkbenchError

# How far into a file the header may sit behind log lines before we give up.
MAX_PREAMBLE_LINES = 100_000

_MISSING = {"", "n/a", "na", "-", "nan", "(!) n/a"}
_PLAIN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")


class ProfileError(WorkbenchError):
    """A profiler export that cannot be read; the message names the file and, where known, the line."""

    def __init__(self, message: str, source: str = "", line: int | None = None) -> None:
        where = source or "profile"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.reason = message


def is_log_line(line: str) -> bool:
    """True for the tools' own chatter: `==PROF==`, `==WARNING==`, `==ERROR==` lines."""
    return line.lstrip().startswith("==")


def is_missing(text: str) -> bool:
    """True for the cells profilers print when a metric has no value (`n/a`, empty)."""
    return text.strip().lower() in _MISSING


def parse_number(text: str) -> int | float:
    """A number as the tools print it: '1,234.56', '33554432', '4.0e-05'; ValueError otherwise.

    Integers stay exact Python ints (byte and instruction counts can exceed 2^53).
    """
    cell = text.strip()
    if cell.isdecimal():  # a plain count, the common case: exactly the digits `\d` matches, which int() reads
        return int(cell)
    if _GROUPED.fullmatch(cell):
        cell = cell.replace(",", "")
    elif not _PLAIN.fullmatch(cell):
        raise ValueError(f"not a number: {text!r}")
    if "." in cell or "e" in cell or "E" in cell:
        return float(cell)
    return int(cell)


@dataclass(frozen=True)
class Row:
    """One CSV record and the 1-based line of the file it starts on."""

    line: int
    cells: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A header (and its line) and the records after it, log lines and blank lines left out."""

    source: str
    header: tuple[str, ...]
    header_line: int
    rows: tuple[Row, ...]
    preamble: tuple[str, ...]  # the non-CSV lines before the header, stripped

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


class _Feed:
    """Feeds lines to csv.reader, skipping log and blank lines and noting which lines it handed out."""

    def __init__(self, lines: Sequence[str], start: int, stop_at_blank: bool) -> None:
        self._lines = lines
        self._index = start
        self._stop_at_blank = stop_at_blank
        self.taken: list[int] = []

    def __iter__(self) -> "_Feed":
        return self

    def __next__(self) -> str:
        while self._index < len(self._lines):
            index = self._index
            self._index += 1
            line = self._lines[index]
            if not line.strip():
                if self._stop_at_blank and self.taken:
                    self._index = len(self._lines)
                    break
                continue
            if is_log_line(line):
                continue
            self.taken.append(index + 1)
            return line
        raise StopIteration


def _split(line: str) -> list[str] | None:
    """One line's CSV cells, or None when the line is not one whole CSV record."""
    try:
        records = list(csv.reader([line], strict=True))
    except csv.Error:
        return None
    return records[0] if len(records) == 1 else None


def read_table(
    text: str,
    source: str,
    is_header: Callable[[list[str]], bool],
    what: str,
    stop_at_blank: bool = False,
) -> Table:
    """Find the first line whose cells satisfy `is_header` and read the records after it.

    `stop_at_blank` ends the table at the first blank line after a data row
    (nsys prints one table per report, separated by blank lines).
    """
    if "\x00" in text[:4096]:
        raise ProfileError(
            f"this is a binary file, not CSV; export {what} as CSV first "
            "(ncu --import FILE.ncu-rep --csv --page details, or nsys stats --format csv FILE.nsys-rep)",
            source,
        )
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise ProfileError(f"the file is empty; expected {what}", source)
    header_index: int | None = None
    header: list[str] | None = None
    for index, line in enumerate(lines[:MAX_PREAMBLE_LINES]):
        if not line.strip() or is_log_line(line) or ("," not in line and '"' not in line):
            continue
        cells = _split(line)
        if cells is not None and is_header([cell.strip() for cell in cells]):
            header_index, header = index, [cell.strip() for cell in cells]
            break
    if header is None or header_index is None:
        error = next(
            ((number, line.strip()) for number, line in enumerate(lines, 1) if line.lstrip().startswith("==ERROR==")),
            None,
        )
        if error is not None:
            raise ProfileError(f"the tool reported an error and wrote no table: {error[1]}", source, error[0])
        raise ProfileError(f"no table header found in {len(lines)} lines; expected {what}", source)

    feed = _Feed(lines, header_index + 1, stop_at_blank)
    reader = csv.reader(feed, strict=True)
    rows: list[Row] = []
    while True:
        feed.taken.clear()
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            where = feed.taken[0] if feed.taken else None
            raise ProfileError(f"not valid CSV ({exc})", source, where) from None
        start = feed.taken[0] if feed.taken else header_index + 1
        if len(cells) != len(header):
            raise ProfileError(
                f"{len(cells)} fields where the header (line {header_index + 1}) has {len(header)}",
                source,
                start,
            )
        rows.append(Row(start, tuple(cells)))
    preamble = tuple(line.strip() for line in lines[:header_index] if line.strip())
    return Table(source, tuple(header), header_index + 1, tuple(rows), preamble)

