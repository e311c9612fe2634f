"""`nsys stats --report cuda_gpu_trace --format csv` read into a Trace, streamed in blocks: the header
found, each block read NumPy's way (trace_csv_fast) or the csv module's way (here)."""

from __future__ import annotations

import csv
import io
import os
from collections import deque
from itertools import compress, islice
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

from workbench.files import FileReadError, open_bounded
from workbench.profilers.stopping import ReadStopped
from workbench.profilers.trace_csv_columns import (
    _NUMBER,
    _byte_count,
    _csv_columns,
    _CsvColumns,
    _CsvState,
    _is_trace_header,
    _time_ns,
)
from workbench.profilers.trace_csv_fast import _csv_block_fast
from workbench.profilers.trace_intervals import (
    CSV,
    KERNEL,
    MAX_COPY_BYTES,
    MAX_INTERVAL_NS,
    MAX_TIMESTAMP_NS,
    MAX_TRACE_ROWS,
    Trace,
    TraceError,
    _Builder,
    _check_times,
    _collector_paused,
)

# The rows after the header are read in blocks of about _CSV_BLOCK_BYTES that end where a record ends (a
# newline with an even count of '"' before it in the block, so no quoted cell is cut). A block goes one of
# two ways:
# - NumPy's way (_csv_block_fast), for the plain rows nsys writes: times in ns, the Name cell last. The
#   newlines and commas of the whole block are found at once, each line's cells are located by counting
#   commas (where no comma before the lane's cells is inside quotes), the Start and Duration digits are
#   converted column-wise, and the cells from the first lane column to the line's end (device, context,
#   stream, name) are one key, looked up in a dict (a cache of MAX_CACHED_KEYS) and learnt where it is not
#   there: by the positions of its commas and quotes where it is plain, else by the csv module (_add_new_keys):
#   a few objects per row, where the csv module makes one per cell (21). Anything unusual in the block (a
#   blank line, a short row, a quoted comma before the lane's cells, a digit string that is not one, a bad
#   value, a new key that is not a whole record) hands the whole block to
# - the csv module's way (_csv_block_slow), which is the reference: column-wise in chunks, then row by row
#   where a chunk holds anything unusual, with every check naming the line. Where a malformed file leaves
#   a quoted cell open at the block's end, the csv module is given the next blocks' lines until its record
#   ends (_BlockLines), so such a file parses as a whole-file csv.reader would.
# Both ways fill the same Trace and _CsvState, so a file may mix them block by block.

MAX_CSV_BYTES = 4 * 2**30  # a cuda_gpu_trace CSV of tens of millions of rows
MAX_HEADER_SEARCH_LINES = 10_000  # progress lines nsys stats writes before the header
_CSV_BLOCK_BYTES = 4 * 2**20
MAX_CSV_LINE_BYTES = 64 * 2**20  # a line longer than this is not a trace row
_STRAY_QUOTE_BYTES = 2**20  # past this, a block whose every newline is inside quotes ends at its last one
_CSV_CHUNK = 20_000  # rows per column-wise chunk on the csv module's way


def _check_text(path: Path, source: str) -> None:
    """Refuse a file that is not CSV text (a NUL byte in its first 4 KiB) before the reader starts."""
    try:
        with open_bounded(path, MAX_CSV_BYTES, "trace CSV") as stream:
            head = stream.read(4096)
    except FileReadError as exc:
        raise TraceError(str(exc), source) from None
    if b"\x00" in head:
        raise TraceError("this is a binary file, not CSV text", source)


def read_trace_csv_stream(stream: BinaryIO, source: str = "trace.csv") -> Trace:
    """Parse `nsys stats --report cuda_gpu_trace --format csv` from a binary stream (progress lines before
    the header skipped), block by block: see the comment above the limits."""
    builder = _Builder(source, CSV)
    blocks = _Blocks(stream, source)
    columns, header_line = _find_csv_header(blocks, source)
    state = _CsvState(columns, builder, source)
    line = header_line + 1
    while True:
        data = blocks.next(line)
        if not data:
            break
        lines = _csv_block_fast(data, state, line) if state.fast else None
        if lines is None:
            lines, stopped = _csv_block_slow(data, line, state, blocks)
            if stopped:
                break
        line += lines
    return builder.finish([])


def _record_end(data: bytes, anyway: bool) -> int:
    """The index just after the block's last newline outside quotes (an even count of '"' before it), else 0;
    when every newline is inside quotes and `anyway`, after the last one (a stray quote, which the csv
    module reads as it does: a quoted cell cannot be this long, its limit is 128 KiB)."""
    last = data.rfind(b"\n")
    if last < 0:
        return 0
    import numpy as np

    position = last
    quotes = int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8, count=position) == 34))  # 6× bytes.count
    while quotes % 2:
        previous = data.rfind(b"\n", 0, position)
        if previous < 0:
            return last + 1 if anyway else 0
        quotes -= data.count(b'"', previous, position)
        position = previous
    return position + 1


class _Blocks:
    """A CSV file's bytes in blocks that each end at a record's end (see the comment above the limits)."""

    def __init__(self, stream: BinaryIO, source: str) -> None:
        self.stream, self.source = stream, source
        self.carry = b""
        self.eof = False

    def push_back(self, data: bytes) -> None:
        """Give back the bytes after a record's end, to come first in the next block."""
        self.carry = data + self.carry

    def next(self, line: int) -> bytes:
        """The next block, b"" at the end; `line` (the block's first line) names a line that never ends."""
        pieces, size = [self.carry], len(self.carry)
        self.carry = b""
        want = _CSV_BLOCK_BYTES
        while True:
            while size < want and not self.eof:
                chunk = self.stream.read(want - size)
                if not chunk:
                    self.eof = True
                    break
                pieces.append(chunk)
                size += len(chunk)
            data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
            if self.eof:
                return data
            cut = _record_end(data, size >= _STRAY_QUOTE_BYTES)
            if cut:
                self.carry = data[cut:]
                return data[:cut]
            if size > MAX_CSV_LINE_BYTES:
                raise TraceError(
                    f"no line end in {size / 2**20:.0f} MiB: a line this long is not a cuda_gpu_trace row", self.source, line
                )
            pieces, want = [data], size + _CSV_BLOCK_BYTES


def _find_csv_header(blocks: _Blocks, source: str) -> tuple[_CsvColumns, int]:
    """The header's columns and line; the bytes after it go back to `blocks`."""
    seen = 0  # lines before the current block
    first = True
    while seen < MAX_HEADER_SEARCH_LINES:
        data = blocks.next(seen + 1)
        if not data:
            break
        text = io.StringIO(data.decode("utf-8-sig" if first else "utf-8", errors="replace"), newline="")
        first = False
        reader = csv.reader(text)
        try:
            for cells in reader:
                if seen + reader.line_num > MAX_HEADER_SEARCH_LINES:
                    break
                if cells and _is_trace_header(cells):
                    line = seen + reader.line_num
                    columns = _csv_columns([c.strip() for c in cells], source, line)
                    blocks.push_back(text.read().encode("utf-8", errors="replace"))
                    return columns, line
        except csv.Error as exc:
            raise TraceError(f"malformed CSV: {exc}", source, seen + reader.line_num) from None
        seen += reader.line_num
    raise TraceError(
        "no cuda_gpu_trace header (Start (ns), Duration (ns), …, Strm, Name) found; expected the output of "
        "`nsys stats --report cuda_gpu_trace --format csv`",
        source,
    )


def _text_lines(data: bytes) -> list[str]:
    """A block's lines as the csv module wants them (any of \\n, \\r\\n, \\r ends one, kept)."""
    return list(io.StringIO(data.decode("utf-8", errors="replace"), newline=""))


class _BlockLines:
    """A block's lines for the csv module, and more blocks' only while a record is still open at its end.

    The blocks end where the quotes balance, which is where the csv module's records end in any CSV that
    quotes as nsys does; in a malformed one (a stray quote inside a cell, which the csv module keeps as text)
    a quoted cell may run past that point, and the csv module asks for more lines: it gets them, so a block
    read this way parses as the whole file would."""

    def __init__(self, data: bytes, blocks: _Blocks, line: int) -> None:
        self.pending = deque(_text_lines(data))
        self.blocks, self.line = blocks, line

    def __iter__(self) -> "_BlockLines":
        return self

    def __next__(self) -> str:
        if not self.pending:
            more = self.blocks.next(self.line)
            if not more:
                raise StopIteration
            self.pending.extend(_text_lines(more))
        return self.pending.popleft()


def _records(reader: "csv._reader", lines: _BlockLines) -> Iterator[list[str]]:  # type: ignore[name-defined]
    """The reader's records up to the first that ends where the lines given to it end."""
    for cells in reader:
        yield cells
        if not lines.pending:
            return


def _csv_block_slow(data: bytes, line: int, state: _CsvState, blocks: _Blocks) -> tuple[int, bool]:
    """A block the csv module's way: (the lines it took, whether the table ended in it)."""
    lines = _BlockLines(data, blocks, line)
    reader = csv.reader(lines)
    try:
        stopped = _read_csv_rows(reader, _records(reader, lines), state, line - 1)
    except csv.Error as exc:
        raise TraceError(f"malformed CSV: {exc}", state.source, line - 1 + reader.line_num) from None
    return reader.line_num, stopped


def _read_csv_rows(reader: "csv._reader", records: Iterator[list[str]], state: _CsvState, offset: int) -> bool:  # type: ignore[name-defined]
    """The records of one block, in chunks taken by islice (no Python per row): each chunk read column-wise
    (C-speed conversions); a chunk with anything unusual (a bad number, a short or blank row, a new name)
    goes row by row, which names the line (`offset` + the reader's line). True when the table ends (the
    heading of the next report in a multi-report file)."""
    source, builder = state.source, state.builder
    while True:
        before = reader.line_num
        rows = list(islice(records, _CSV_CHUNK))
        if not rows:
            return False
        if len(builder.trace) + len(rows) > MAX_TRACE_ROWS:
            raise TraceError(f"more than {MAX_TRACE_ROWS:,} intervals: over the limit for one trace", source, offset + reader.line_num)
        if _csv_chunk_fast(rows, state):
            continue
        # Each row one line, unless a quoted cell spans lines: then the rows are counted instead.
        exact = reader.line_num - before == len(rows)
        for number, cells in enumerate(rows, start=1):
            if len(cells) < state.width:
                if not cells or not "".join(cells).strip():
                    continue
                if len(cells) == 1 and cells[0].lstrip().startswith("**"):
                    return True  # the heading of the next report in a multi-report file
            line = offset + before + number
            _csv_row_slow(cells, line if exact else None, state, None if exact else line)


def _csv_chunk_fast(rows: list[list[str]], state: _CsvState) -> bool:
    """Append a chunk of plain rows (ns integers, known names, full width); False (nothing appended) otherwise."""
    c, trace = state.c, state.builder.trace
    if c.start_factor != 1 or c.duration_factor != 1 or min(map(len, rows)) < state.width:
        return False
    # One column at a time (itemgetter): transposing the whole chunk with zip(*rows) is several times slower.
    columns = {i: list(map(itemgetter(i), rows)) for i in (c.start, c.duration, c.name, c.stream, c.device, c.bytes) if i is not None}
    for column in (c.start, c.duration):  # int() takes '1_000', ' 7', '+7' and non-ASCII digits too
        joined = "".join(columns[column])
        if not joined.isdigit() or not joined.isascii() or "" in columns[column]:
            return False
    starts = list(map(int, columns[c.start]))
    durations = list(map(int, columns[c.duration]))
    if min(starts) < 0 or min(durations) < 0 or max(durations) > MAX_INTERVAL_NS:
        return False
    ends = list(map(int.__add__, starts, durations))
    if max(ends) > MAX_TIMESTAMP_NS:
        return False
    raw_names = state.raw_names
    names = list(map(raw_names.get, columns[c.name]))
    if None in names:
        return False
    devices = columns[c.device] if c.device is not None else ("GPU",) * len(rows)
    lanes = list(map(state.lanes.get, zip(devices, columns[c.stream])))
    if None in lanes:
        return False
    kinds = state.kinds
    row_kinds = bytes(map(kinds.__getitem__, names))
    sizes = [-1] * len(rows)
    if c.bytes is not None and any(row_kinds):
        factor = c.bytes_factor
        texts = columns[c.bytes]
        for i in compress(range(len(rows)), row_kinds):  # copies and memsets only (kind ≠ KERNEL = 0)
            text = texts[i]
            if text:
                size = _byte_count(text, factor)
                if size is None or not 0 <= size <= MAX_COPY_BYTES:
                    return False
                sizes[i] = size
    trace.start.extend(starts)
    trace.end.extend(ends)
    trace.name.extend(names)
    trace.stream.extend(lanes)
    trace.kind.extend(row_kinds)
    trace.nbytes.extend(sizes)
    return True


def _csv_row_slow(cells: list[str], line: int | None, state: _CsvState, row: int | None = None) -> None:
    """One row, every check with its line: the path for rows the fast path does not take.

    `row` (with `line` None) counts CSV records instead, where a quoted cell spanning lines made the
    line of each record uncertain."""
    c, trace = state.c, state.builder.trace
    source = state.source if row is None else f"{state.source} (at line {row} or later: a quoted cell spans lines)"
    if len(cells) < state.width:
        raise TraceError(f"the row has {len(cells)} cells; the header has {len(c.titles)}", source, line)
    start_title, duration_title = c.titles[c.start], c.titles[c.duration]
    start = _time_ns(cells[c.start], c.start_factor, start_title, source, line)
    duration = _time_ns(cells[c.duration], c.duration_factor, duration_title, source, line)
    if duration < 0:
        raise TraceError(f"'{duration_title}' is {cells[c.duration].strip()}: a duration cannot be negative", source, line)
    _check_times(start, start + duration, "", start_title, duration_title, source, line)
    raw = cells[c.name]
    if ("\n" in raw or "\r" in raw) and any(part.count(",") >= len(c.titles) - 1 for part in raw.splitlines()[1:]):
        # A quoted name may span lines; one whose later lines hold as many cells as a row is a quote left open
        # that takes the rows after it into the name.
        raise TraceError(
            f"the Name cell '{raw.strip().splitlines()[0][:60]}' runs on over lines that look like rows: a '\"' "
            "opened in it is never closed", source, line,
        )
    name = state.name_id(raw, line)
    kind = state.kinds[name]
    lane = state.lane(cells[c.device] if c.device is not None else "GPU", cells[c.stream])
    size = -1
    if c.bytes is not None and kind != KERNEL:
        text = cells[c.bytes].strip()
        if text:
            if not _NUMBER.fullmatch(text):
                raise TraceError(f"'{c.titles[c.bytes]}' is '{text[:40]}': expected a number in ASCII digits", source, line)
            found = _byte_count(text, c.bytes_factor)
            if found is None:
                raise TraceError(f"'{c.titles[c.bytes]}' is {text[:40]}: not a finite number", source, line)
            size = found
            if size < 0:
                raise TraceError(f"'{c.titles[c.bytes]}' is {text}: bytes cannot be negative", source, line)
            if size > MAX_COPY_BYTES:
                raise TraceError(f"'{c.titles[c.bytes]}' is {text[:40]}: too large for one copy", source, line)
    trace.start.append(start)
    trace.end.append(start + duration)
    trace.name.append(name)
    trace.stream.append(lane)
    trace.kind.append(kind)
    trace.nbytes.append(size)


class _StoppableStream:
    """A binary stream whose every read first asks `should_stop` (a read ends with ReadStopped once it says so)."""

    def __init__(self, stream: BinaryIO, should_stop: Callable[[], bool]) -> None:
        self.stream, self.should_stop = stream, should_stop

    def read(self, size: int = -1) -> bytes:
        if self.should_stop():
            raise ReadStopped("reading stopped")
        return self.stream.read(size)


def read_trace_csv(path: str | os.PathLike[str], should_stop: Callable[[], bool] | None = None) -> Trace:
    """A cuda_gpu_trace CSV file, streamed through the bounded reader in blocks (never held whole); with
    `should_stop`, the read ends with ReadStopped at the next block after it answers True."""
    file = Path(path)
    source = file.name
    _check_text(file, source)
    try:
        with open_bounded(file, MAX_CSV_BYTES, "trace CSV") as stream, _collector_paused():
            read_from: Any = stream if should_stop is None else _StoppableStream(stream, should_stop)
            return read_trace_csv_stream(read_from, source)
    except FileReadError as exc:  # refused on opening, or grown past the limit while read
        raise TraceError(str(exc), source) from None


def read_trace_text(text: str, source: str = "trace.csv") -> Trace:
    """cuda_gpu_trace CSV text already in memory."""
    return read_trace_csv_stream(io.BytesIO(text.encode("utf-8", errors="replace")), source)
