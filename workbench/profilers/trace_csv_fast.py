"""NumPy's way through a block of cuda_gpu_trace CSV rows: the plain rows nsys writes, read a column at a
time (see trace_csv for the two ways)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

from workbench.profilers.trace_csv_columns import _byte_count, _CsvState
from workbench.profilers.trace_intervals import MAX_COPY_BYTES, MAX_INTERVAL_NS, MAX_TIMESTAMP_NS, MAX_TRACE_ROWS, TraceError

def _digit_column(a: "np.ndarray", begins: "np.ndarray", ends: "np.ndarray") -> "np.ndarray | None":
    """The non-negative integers written in a[begins[i]:ends[i]], each 1 to 18 ASCII digits; None otherwise."""
    import numpy as np

    lengths = ends - begins
    if not len(lengths) or lengths.min() < 1 or lengths.max() > 18:
        return None
    width = int(lengths.max())
    offsets = np.arange(width)
    digits = a[np.maximum(ends[:, None] - width + offsets, 0)] - np.uint8(48)  # right-aligned; not a digit → > 9
    digits[offsets < (width - lengths)[:, None]] = 0  # the cells to the left of a shorter number
    if digits.max() > 9:
        return None
    values = digits[:, 0].astype(np.int64)
    for k in range(1, width):
        values *= 10
        values += digits[:, k]
    return values


@dataclass(frozen=True)
class _Cells:
    """Where a block's rows lie (NumPy arrays, as _locate_rows found them): each row's first comma, key
    and end, and the block's commas and quotes."""

    first: "np.ndarray"
    key_begins: "np.ndarray"
    ends: "np.ndarray"
    commas: "np.ndarray"
    quotes: "np.ndarray"


def _add_new_keys(a: "np.ndarray", data: bytes, keys: list[bytes], rows_key: "np.ndarray", missing: "np.ndarray",
                  cells: _Cells, state: _CsvState) -> bool:
    """Learn the keys of the `missing` rows (the rows whose key index in `rows_key` is −1), in the order of
    their first rows, and fill in their key indices; False when one is not a whole record with a name (see
    add_key).

    A trace of many distinct names has a new key on nearly every row, so the plain ones are read here by
    positions (NumPy's way), not by the csv module: no quote in the lane's cells, and a Name cell that is
    either without quotes and commas or one quoted cell without quotes inside. These read as the csv module
    reads them (commas split the lane's cells; the name is the cell's text, the quoted one's inside). Any
    other key (or a NUL byte in the block) sends them all to add_keys, which reads each with the csv module."""
    import numpy as np

    base = len(state.key_name)
    missing_rows = missing.tolist()
    new = list(dict.fromkeys(map(keys.__getitem__, missing_rows)))
    if len(new) == len(missing_rows):  # each row a key of its own, as in a block of distinct names
        codes, rows = np.arange(len(new)), missing
    else:  # each row's key by its place in `new`; each new key's first row
        place = dict(zip(new, range(len(new))))
        codes = np.fromiter(map(place.__getitem__, map(keys.__getitem__, missing_rows)), dtype=np.int64, count=len(missing_rows))
        rows = missing[np.unique(codes, return_index=True)[1]]
    if not _learn_keys(a, data, new, rows, cells, state):
        return False
    rows_key[missing] = base + codes  # the keys were given indices from `base` on, in the order of `new`
    return True


def _learn_keys(a: "np.ndarray", data: bytes, new: list[bytes], rows: "np.ndarray", cells: _Cells, state: _CsvState) -> bool:
    """_add_new_keys' work for the keys `new`, each on the row of `rows` at its place."""
    import numpy as np

    c, commas, quotes = state.c, cells.commas, cells.quotes
    name_comma = cells.first[rows] + (c.name - 1)  # the comma before the Name cell, where no cell before it is quoted
    ends = cells.ends[rows]
    if b"\x00" in data or name_comma.max() >= len(commas) or (commas[name_comma] >= ends).any():
        return state.add_keys(new)
    name_begins = commas[name_comma] + 1
    inside = np.searchsorted(quotes, ends) - np.searchsorted(quotes, name_begins)  # quotes in the Name cell
    lane_quotes = np.searchsorted(quotes, name_begins) != np.searchsorted(quotes, cells.key_begins[rows])
    name_commas = np.searchsorted(commas, ends) - (name_comma + 1)
    quoted = (inside == 2) & (a[name_begins] == 34) & (a[ends - 1] == 34) & (ends - name_begins >= 2)
    if lane_quotes.any() or not (((inside == 0) & (name_commas == 0)) | quoted).all():
        return state.add_keys(new)
    lanes = list(map(data.__getitem__, map(slice, cells.key_begins[rows].tolist(), (name_begins - 1).tolist())))
    names = list(map(data.__getitem__, map(slice, (name_begins + quoted).tolist(), (ends - quoted).tolist())))
    raws = list(map(bytes.decode, names, repeat("utf-8"), repeat("replace")))
    if not all(map(str.strip, raws)):
        return state.add_keys(new)
    state.add_plain_keys(new, lanes, raws)
    return True


def _csv_block_fast(data: bytes, state: _CsvState, line: int) -> int | None:
    """Append a block's rows the NumPy way and return its line count; None (nothing appended) when the
    block holds anything unusual, for the csv module's way to read and name."""
    import numpy as np

    c, trace = state.c, state.builder.trace
    if not data.endswith(b"\n"):
        data += b"\n"  # the file's last line
    a = np.frombuffer(data, dtype=np.uint8)
    found = _locate_rows(a, state.key_column)
    if found is None:
        return None
    begins, cells = found
    count = len(begins)
    starts = _digit_column(a, *_cell(begins, cells, c.start))
    durations = _digit_column(a, *_cell(begins, cells, c.duration))
    if starts is None or durations is None:
        return None
    finishes = starts + durations
    if durations.max() > MAX_INTERVAL_NS or finishes.max() > MAX_TIMESTAMP_NS:
        return None
    if len(trace) + count > MAX_TRACE_ROWS:
        raise TraceError(f"more than {MAX_TRACE_ROWS:,} intervals: over the limit for one trace", state.source,
                         line + MAX_TRACE_ROWS - len(trace))
    keys = list(map(data.__getitem__, map(slice, cells.key_begins.tolist(), cells.ends.tolist())))
    rows_key = np.fromiter(map(state.keys.get, keys, repeat(-1)), dtype=np.int64, count=count)
    missing = np.flatnonzero(rows_key < 0)
    if len(missing):
        if not _add_new_keys(a, data, keys, rows_key, missing, cells, state):
            return None
    key_lanes, key_names, key_kinds = state.key_columns()
    kinds = key_kinds[rows_key]
    sizes = _copy_sizes(data, begins, cells, kinds, state)
    if sizes is None:
        return None
    lanes = key_lanes[rows_key].astype(f"i{trace.stream.itemsize}")
    names = key_names[rows_key].astype(f"i{trace.name.itemsize}")
    trace.start.frombytes(starts.tobytes())
    trace.end.frombytes(finishes.tobytes())
    trace.name.frombytes(names.tobytes())
    trace.stream.frombytes(lanes.tobytes())
    trace.kind.frombytes(kinds.tobytes())
    trace.nbytes.frombytes(sizes.tobytes())
    return count


def _locate_rows(a: "np.ndarray", key_column: int) -> "tuple[np.ndarray, _Cells] | None":
    """Each line's begin and where its cells lie, for a block that ends with a newline; None when a line is
    blank, holds a carriage return outside CRLF, has fewer cells than the key needs or a quoted comma before
    the key."""
    import numpy as np

    newlines = np.flatnonzero(a == 10)
    count = len(newlines)
    begins = np.empty(count, dtype=np.int64)
    begins[0] = 0
    begins[1:] = newlines[:-1] + 1
    ends = newlines.astype(np.int64)
    returns = np.flatnonzero(a == 13)
    if len(returns):
        if (a[returns + 1] != 10).any():  # a carriage return only as part of CRLF
            return None
        ends -= a[ends - 1] == 13
    if (ends <= begins).any():  # a blank line
        return None
    commas = np.flatnonzero(a == 44)
    first = np.searchsorted(commas, begins)  # each line's first comma
    before_key = first + (key_column - 1)  # the comma before the key's first cell
    if before_key[-1] >= len(commas) or (commas[before_key] >= ends).any():  # fewer cells than the header
        return None
    key_begins = commas[before_key] + 1
    quotes = np.flatnonzero(a == 34)
    if len(quotes):
        # The commas before the key split its cells only where none is inside quotes: an even count of quotes
        # before each (a quoted cell, doubled quotes and all, has an odd count inside it). Asked only of the
        # lines with a quote there (a quoted name alone leaves none; a writer that quotes every text cell does).
        at_begin = np.searchsorted(quotes, begins)
        quoted = np.flatnonzero(np.searchsorted(quotes, key_begins) > at_begin)
        if len(quoted):
            before = np.searchsorted(quotes, commas[first[quoted, None] + np.arange(key_column)])
            if ((before - at_begin[quoted, None]) % 2).any():
                return None
    return begins, _Cells(first, key_begins, ends, commas, quotes)


def _cell(begins: "np.ndarray", cells: _Cells, column: int,
          rows: "np.ndarray | slice" = slice(None)) -> "tuple[np.ndarray, np.ndarray]":
    """Where the cells of `column` begin and end on the `rows` (a column before the key: no quoted comma)."""
    found = cells.first[rows] + column
    return (begins[rows] if column == 0 else cells.commas[found - 1] + 1), cells.commas[found]


def _copy_sizes(data: bytes, begins: "np.ndarray", cells: _Cells, kinds: "np.ndarray",
                state: _CsvState) -> "np.ndarray | None":
    """Each row's byte count: the Bytes cell of copies and memsets, −1 for kernels and empty cells; None when
    a cell is not a count nsys writes or is out of range."""
    import numpy as np

    c = state.c
    sizes = np.full(len(kinds), -1, dtype=np.int64)
    if c.bytes is not None:
        copies = np.flatnonzero(kinds)  # copies and memsets (kind ≠ KERNEL = 0)
        if len(copies):
            factor = c.bytes_factor
            low, high = _cell(begins, cells, c.bytes, copies)
            values = []
            for lo, hi in zip(low.tolist(), high.tolist()):
                text = data[lo:hi].strip()
                if not text:
                    values.append(-1)
                    continue
                size = _byte_count(text.decode("ascii", "replace"), factor)
                if size is None or not 0 <= size <= MAX_COPY_BYTES:
                    return None
                values.append(size)
            sizes[copies] = values
    return sizes
