"""What a cuda_gpu_trace CSV's header and cells say: the columns and their units, a time or byte cell
as a number, and the state the rows so far have established (names, lanes, keys) that both ways of
reading a block (trace_csv, trace_csv_fast) fill."""

from __future__ import annotations

import csv
import math
import operator
import re
from array import array
from dataclasses import dataclass
from itertools import compress, repeat
from operator import itemgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

from workbench.profilers.trace_intervals import KERNEL, MAX_TIMESTAMP_NS, TraceError, _Builder, kind_of_name, kinds_of_names

_TIME_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_BYTE_UNITS = {"b": 1, "byte": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
MAX_CACHED_KEYS = 2**16  # _CsvState.keys: lanes × names of a real trace are far fewer


def _stem_and_unit(title: str) -> tuple[str, str]:
    """'Start (ns)' → ('start', 'ns'); 'Name' → ('name', '')."""
    text = " ".join(title.strip().lower().split())
    if text.endswith(")") and "(" in text:
        stem, _, unit = text[:-1].rpartition("(")
        return stem.strip(), unit.strip()
    return text, ""


def _is_trace_header(cells: list[str]) -> bool:
    stems = {_stem_and_unit(cell)[0] for cell in cells}
    return {"start", "duration", "name"} <= stems


@dataclass
class _CsvColumns:
    start: int
    duration: int
    name: int
    stream: int
    device: int | None
    bytes: int | None
    start_factor: int
    duration_factor: int
    bytes_factor: int
    titles: list[str]


def _csv_columns(header: list[str], source: str, line: int) -> _CsvColumns:
    index: dict[str, tuple[int, str]] = {}
    for i, title in enumerate(header):
        stem, unit = _stem_and_unit(title)
        index.setdefault(stem, (i, unit))
    missing = [title for stem, title in (("start", "Start (ns)"), ("duration", "Duration (ns)"), ("strm", "Strm"), ("name", "Name"))
               if stem not in index]
    if missing:
        raise TraceError(f"the cuda_gpu_trace header has no column {', '.join(missing)}", source, line)
    factors = []
    for stem in ("start", "duration"):
        i, unit = index[stem]
        factor = _TIME_UNITS_NS.get(unit or "ns")
        if factor is None:
            raise TraceError(f"the column '{header[i]}' is not in a time unit (ns, us, ms, s)", source, line)
        factors.append(factor)
    bytes_column, bytes_factor = None, 1
    if "bytes" in index:
        i, unit = index["bytes"]
        if (unit or "b") in _BYTE_UNITS:
            bytes_column, bytes_factor = i, _BYTE_UNITS[unit or "b"]
    return _CsvColumns(index["start"][0], index["duration"][0], index["name"][0], index["strm"][0],
                       index["device"][0] if "device" in index else None, bytes_column, factors[0], factors[1], bytes_factor, header)


# A number as nsys writes one: ASCII digits, a point, an exponent. Python's int() and float() also take
# '1_000', full-width or Arabic-Indic digits, 'inf' and 'nan', none of which a trace holds.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")


def _time_ns(text: str, factor: int, title: str, source: str, line: int | None) -> int:
    """A time cell in ns: checked as text (ASCII digits), then for range, before any arithmetic."""
    cleaned = text.strip()
    if factor == 1 and _INTEGER.fullmatch(cleaned):
        return int(cleaned)
    if not _NUMBER.fullmatch(cleaned):
        if cleaned.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise TraceError(f"'{title}' is {cleaned}: not a finite time", source, line)
        what = "empty" if not cleaned else f"'{cleaned[:40]}'"
        raise TraceError(f"'{title}' is {what}: expected a time in ASCII digits", source, line)
    value = float(cleaned)
    if not math.isfinite(value):
        raise TraceError(f"'{title}' is {cleaned[:40]}: not a finite time", source, line)
    if abs(value) * factor > MAX_TIMESTAMP_NS:
        raise TraceError(f"'{title}' is {cleaned[:40]}: too large to be a time", source, line)
    return round(value * factor)


def _byte_count(text: str, factor: int) -> int | None:
    """A byte cell's count, or None where the text is not a number nsys writes (or not finite)."""
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text) * factor
    return round(value) if math.isfinite(value) else None

class _CsvState:
    """What the CSV rows so far have established: each name's kind, each lane, and (NumPy's way) each key."""

    def __init__(self, c: _CsvColumns, builder: _Builder, source: str) -> None:
        self.c, self.builder, self.source = c, builder, source
        self.kinds: list[int] = []  # by name id
        # Each name's text → its id (the builder's own dict), and each raw Name cell that differs from its text
        # (spaces around it) → the same id: one lookup per cell, and one dict entry per name where none differs.
        self.raw_names: dict[str, int] = builder.name_ids
        self.lanes: dict[tuple[str, str], int] = {}
        needed = [i for i in (c.start, c.duration, c.name, c.stream, c.device, c.bytes) if i is not None]
        self.width = max(needed) + 1
        # NumPy's way: times in ns and the Name cell last (it may hold commas), the lane's cells before it and
        # after the numbers (a key holding a time would be new on every row).
        self.key_column = min(c.stream, c.device if c.device is not None else c.stream)
        numbers = max(i for i in (c.start, c.duration, c.bytes) if i is not None)
        self.fast = (c.start_factor == 1 and c.duration_factor == 1 and c.name == len(c.titles) - 1
                     and numbers < self.key_column)
        # The raw cells from key_column to the line's end → a key index: a cache of the keys seen first, up to
        # MAX_CACHED_KEYS (a key not in it is learnt again where it comes back, as another index with the same
        # lane, name and kind): a trace of a million distinct names would fill it with keys never seen again.
        self.keys: dict[bytes, int] = {}
        # Per key index, grown in place and seen by NumPy without a copy (key_columns()).
        self.key_lane = array("q")
        self.key_name = array("q")
        self.key_kind = array("b")
        self.lane_cells: dict[bytes, int] = {}  # a plain key's lane cells (bytes before its Name cell) → lane

    def name_id(self, raw: str, line: int | None) -> int:
        found = self.raw_names.get(raw)
        if found is None:
            text = raw.strip()
            if not text:
                raise TraceError("the Name cell is empty", self.source, line)

            found = self.builder.name_id(text)
            if raw != text:
                self.raw_names[raw] = found
            while len(self.kinds) <= found:
                self.kinds.append(KERNEL)
            self.kinds[found] = kind_of_name(text)
        return found

    def name_ids(self, raws: list[str]) -> list[int]:
        """name_id() of each raw Name cell, none of them blank: the new ones interned at once."""
        ids = self.raw_names
        found = list(map(ids.get, raws))
        if None not in found:
            return found
        new = dict.fromkeys(compress(raws, map(operator.is_, found, repeat(None))))
        names = self.builder.trace.names
        known = len(names)
        if all(map(operator.is_, map(str.strip, new), new)):  # no spaces around any (strip gave itself): new names
            ids.update(zip(new, range(known, known + len(new))))
            names.extend(new)
            self.kinds.extend(kinds_of_names(names[known:]))
            if len(new) == len(raws):  # all new and distinct, as in a block of distinct names
                return list(range(known, known + len(raws)))
        else:
            for raw in new:
                self.name_id(raw, None)
        return list(map(ids.__getitem__, raws))

    def key_columns(self) -> "tuple[np.ndarray, np.ndarray, np.ndarray]":
        """(lane, name, kind) per key index as NumPy views (no copy)."""
        import numpy as np

        return (np.frombuffer(self.key_lane, dtype=np.int64), np.frombuffer(self.key_name, dtype=np.int64),
                np.frombuffer(self.key_kind, dtype=np.int8))

    def lane(self, device: str, stream: str) -> int:
        key = (device, stream)
        found = self.lanes.get(key)
        if found is None:
            found = self.lanes[key] = self.builder.stream_id(device.strip() or "GPU", stream.strip() or "?")
        return found

    def add_keys(self, keys: list[bytes]) -> bool:
        """add_key() of each new key; a block of distinct names has a new key on every row, so they are read
        by one csv reader where each key is one whole record (as many records as keys), else one by one."""
        try:
            records = list(csv.reader([key.decode("utf-8", errors="replace") for key in keys], strict=True))
        except csv.Error:
            records = []
        if len(records) != len(keys):  # a key that is not one whole record: each on its own, as add_key reads it
            return all(map(self.add_key, keys))
        c, first = self.c, self.key_column
        if min(map(len, records)) <= c.name - first or not all(map(str.strip, map(itemgetter(c.name - first), records))):
            return all(map(self._add_cells, keys, records))  # a short row or a blank name: stops there, as one by one
        # Column-wise: each column's cells taken at C speed, the names interned at once, the lanes found.
        names = self.name_ids(list(map(itemgetter(c.name - first), records)))
        streams = map(itemgetter(c.stream - first), records)
        devices = map(itemgetter(c.device - first), records) if c.device is not None else repeat("GPU")
        pairs = list(zip(devices, streams))
        lanes = list(map(self.lanes.get, pairs))
        if None in lanes:
            lanes = [self.lane(*pair) if found is None else found for pair, found in zip(pairs, lanes)]
        base = len(self.key_name)
        self.key_lane.extend(lanes)
        self.key_name.extend(names)
        self.key_kind.extend(map(self.kinds.__getitem__, names))
        self.remember(keys, base)
        return True

    def add_plain_keys(self, keys: list[bytes], lanes: list[bytes], raws: list[str]) -> None:
        """Learn new keys read by _add_new_keys: each key's lane cells (the raw bytes before the Name cell) and
        its Name cell's text, none blank."""
        names = self.name_ids(raws)
        known = self.lane_cells
        found = list(map(known.get, lanes))
        if None in found:
            first, device = self.key_column, self.c.device
            for cells in dict.fromkeys(compress(lanes, map(operator.is_, found, repeat(None)))):
                texts = cells.decode("utf-8", errors="replace").split(",")
                known[cells] = self.lane(texts[device - first] if device is not None else "GPU", texts[self.c.stream - first])
            found = list(map(known.__getitem__, lanes))
        base = len(self.key_name)
        self.key_lane.extend(found)
        self.key_name.extend(names)
        self.key_kind.extend(map(self.kinds.__getitem__, names))
        self.remember(keys, base)

    def remember(self, keys: list[bytes], base: int) -> None:
        """Cache the key indices base, base + 1, … of `keys`, while the cache has room."""
        room = MAX_CACHED_KEYS - len(self.keys)
        if room > 0:
            self.keys.update(zip(keys[:room], range(base, base + room)))

    def add_key(self, key: bytes) -> bool:
        """Learn a key (the cells from key_column to the line's end), read by the csv module in strict mode:
        False when it is not a whole record (a quoted cell left open, text after a closing quote), has fewer
        cells than the header or an empty Name."""
        try:
            cells = next(csv.reader([key.decode("utf-8", errors="replace")], strict=True))
        except (csv.Error, StopIteration):
            return False
        return self._add_cells(key, cells)

    def _add_cells(self, key: bytes, cells: list[str]) -> bool:
        c = self.c
        if len(cells) <= c.name - self.key_column:
            return False
        raw = cells[c.name - self.key_column]
        if not raw.strip():
            return False
        name = self.name_id(raw, None)
        device = cells[c.device - self.key_column] if c.device is not None else "GPU"
        self.key_lane.append(self.lane(device, cells[c.stream - self.key_column]))
        self.key_name.append(name)
        self.key_kind.append(self.kinds[name])
        self.remember([key], len(self.key_name) - 1)
        return True
