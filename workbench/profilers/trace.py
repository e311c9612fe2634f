"""Nsight Systems traces: every GPU interval (kernels, copies, memsets) with its stream, start and end.

Two exports are read:

- the SQLite export (`nsys export --type sqlite FILE.nsys-rep`): the tables
  `CUPTI_ACTIVITY_KIND_KERNEL` (start, end, deviceId, streamId and the name
  as `demangledName` or `shortName`, ids into `StringIds`),
  `CUPTI_ACTIVITY_KIND_MEMCPY` (start, end, deviceId, streamId, bytes,
  copyKind; the kind's label from `ENUM_CUDA_MEMCPY_OPER` where present) and
  `CUPTI_ACTIVITY_KIND_MEMSET`. NCCL's collectives reach a trace as their
  kernels (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`, older
  `ncclKernel_AllReduce_RING_LL_Sum_float`) in the kernel table, and are
  marked as communication; a peer-to-peer copy is communication too. The
  database is opened read-only (`mode=ro`); tables are created lazily by nsys,
  so a missing one is named, and at least the kernel or the copy table must
  be there.
- `nsys stats --report cuda_gpu_trace --format csv`: one row per interval
  under the header `Start (ns),Duration (ns),CorrId,GrdX,…,Bytes (MB),…,
  Device,Ctx,GreenCtx,Strm,Name` (older releases have fewer columns; the time
  unit is read from each title, so `--timeunit` converts). Copies and memsets
  are named `[CUDA memcpy Host-to-Device]`, `[CUDA memset]`. The file goes
  through `workbench.files.open_bounded` and is streamed, never held.

A million-row trace is held column-wise (arrays of integers, each name kept
once), so it imports in seconds and tens of megabytes (benchmarks/
bench_trace_import.py). Rows without timestamps (CUPTI writes 0 and 0 when
it could not time one) are skipped and counted in the notes; a negative time,
an end before its start, or an interval longer than a day is an error naming
the column and the row.

Which declared operation an interval implements is decided by the kernel
matching (`workbench.profilers.matching`): workbench/steps.py pairs a step's
operations with a trace.
"""

from __future__ import annotations

import csv
import io
import os
import sqlite3
import stat
import urllib.parse
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from workbench.files import FileReadError, open_bounded
from workbench.profilers.matching import kernel_base_name
from workbench.profilers.table import ProfileError

KERNEL, MEMCPY, MEMSET = 0, 1, 2
KIND_NAMES = ("kernel", "memcpy", "memset")
SQLITE, CSV = "sqlite", "csv"

MAX_CSV_BYTES = 4 * 2**30  # a cuda_gpu_trace CSV of tens of millions of rows
MAX_SQLITE_BYTES = 64 * 2**30  # a whole nsys database (every table) may be large; only three are read
MAX_TRACE_ROWS = 20_000_000  # ~25 B a row held: 0.5 GB at the limit
MAX_INTERVAL_NS = 86_400 * 10**9  # an interval longer than a day is not a GPU activity
MAX_TIMESTAMP_NS = 2**62  # past this a timestamp is not one (nsys counts ns from the session start or the epoch)
MAX_HEADER_SEARCH_LINES = 10_000  # progress lines nsys stats writes before the header
_SQLITE_MAGIC = b"SQLite format 3\x00"
_FETCH = 50_000

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
STRINGS_TABLE = "StringIds"
MEMCPY_KIND_TABLE = "ENUM_CUDA_MEMCPY_OPER"

# CUpti_ActivityMemcpyKind, for a database without ENUM_CUDA_MEMCPY_OPER.
MEMCPY_KINDS = {
    0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host",
    5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array", 8: "Device-to-Device",
    9: "Host-to-Host", 10: "Peer-to-Peer",
}
PEER_TO_PEER = 10
_TIME_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_BYTE_UNITS = {"b": 1, "byte": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


class TraceError(ProfileError):
    """A trace that cannot be read: the message names the file and, where known, the line or row."""


def is_communication(name: str) -> bool:
    """True for NCCL's kernels: their time is bytes over a link between chips, not computation."""
    base = kernel_base_name(name).lower()
    return base.startswith("nccl") or "::nccl" in base


@dataclass(frozen=True)
class Interval:
    """One GPU activity: what ran, where, and when (ns on the trace's clock)."""

    index: int
    name: str
    kind: str  # "kernel", "memcpy", "memset"
    stream: str  # the lane's label: 'stream 7' or 'GPU 1 · stream 7'
    start_ns: int
    end_ns: int
    bytes: int | None
    communication: bool

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


@dataclass
class Trace:
    """A trace held column-wise: row i is names[name[i]] on streams[stream[i]] from start[i] to end[i] ns."""

    source: str
    format: str  # SQLITE or CSV
    names: list[str] = field(default_factory=list)
    streams: list[tuple[str, str]] = field(default_factory=list)  # (device, stream id) per lane
    start: array = field(default_factory=lambda: array("q"))
    end: array = field(default_factory=lambda: array("q"))
    name: array = field(default_factory=lambda: array("l"))
    stream: array = field(default_factory=lambda: array("l"))
    kind: array = field(default_factory=lambda: array("b"))
    nbytes: array = field(default_factory=lambda: array("q"))  # -1: not a copy, or not given
    notes: tuple[str, ...] = ()
    _communication: list[bool] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.start)

    def stream_label(self, index: int) -> str:
        device, stream = self.streams[index]
        devices = {d for d, _ in self.streams}
        return f"{device} · stream {stream}" if len(devices) > 1 else f"stream {stream}"

    def stream_labels(self) -> list[str]:
        return [self.stream_label(i) for i in range(len(self.streams))]

    def name_is_communication(self, name_index: int) -> bool:
        if len(self._communication) != len(self.names):
            self._communication = [is_communication(n) for n in self.names]
        return self._communication[name_index]

    def interval(self, i: int) -> Interval:
        kind = self.kind[i]
        size = self.nbytes[i]
        communication = self.name_is_communication(self.name[i]) if kind == KERNEL else self.names[self.name[i]].endswith("Peer-to-Peer]")
        return Interval(i, self.names[self.name[i]], KIND_NAMES[kind], self.stream_label(self.stream[i]),
                        self.start[i], self.end[i], size if size >= 0 else None, communication)

    def name_kinds(self) -> list[int]:
        """The kind (KERNEL, MEMCPY, MEMSET) of each name, from its first interval."""
        kinds = [-1] * len(self.names)
        for name, kind in zip(self.name, self.kind):
            if kinds[name] < 0:
                kinds[name] = kind
        return [kind if kind >= 0 else KERNEL for kind in kinds]

    def origin_ns(self) -> int:
        """The first interval's start: the trace's time zero when shown."""
        return min(self.start) if len(self.start) else 0

    def name_totals(self) -> list[tuple[int, int, int]]:
        """(name index, count, total ns) per name."""
        counts = [0] * len(self.names)
        totals = [0] * len(self.names)
        for n, s, e in zip(self.name, self.start, self.end):
            counts[n] += 1
            totals[n] += e - s
        return [(i, counts[i], totals[i]) for i in range(len(self.names)) if counts[i]]

    def summary(self) -> dict[str, object]:
        kinds = {name: 0 for name in KIND_NAMES}
        for k in self.kind:
            kinds[KIND_NAMES[k]] += 1
        return {
            "source": self.source,
            "format": self.format,
            "intervals": len(self),
            "kernels": kinds["kernel"],
            "copies": kinds["memcpy"],
            "memsets": kinds["memset"],
            "streams": self.stream_labels(),
            "span_s": ((max(self.end) - self.origin_ns()) / 1e9) if len(self) else 0.0,
            "notes": list(self.notes),
        }


class _Builder:
    """Appends rows to a Trace, keeping each name and stream once."""

    def __init__(self, source: str, fmt: str) -> None:
        self.trace = Trace(source, fmt)
        self.name_ids: dict[str, int] = {}
        self.stream_ids: dict[tuple[str, str], int] = {}
        self.untimed = 0

    def name_id(self, name: str) -> int:
        found = self.name_ids.get(name)
        if found is None:
            found = self.name_ids[name] = len(self.trace.names)
            self.trace.names.append(name)
        return found

    def stream_id(self, device: str, stream: str) -> int:
        key = (device, stream)
        found = self.stream_ids.get(key)
        if found is None:
            found = self.stream_ids[key] = len(self.trace.streams)
            self.trace.streams.append(key)
        return found

    def full(self) -> bool:
        return len(self.trace.start) >= MAX_TRACE_ROWS

    def finish(self, notes: list[str]) -> Trace:
        if self.untimed:
            notes.append(f"{self.untimed:,} rows without timestamps (start and end 0) were skipped")
        self.trace.notes = tuple(notes)
        if not len(self.trace):
            raise TraceError("the trace holds no timed GPU activity (no kernel, copy or memset rows)", self.trace.source)
        return self.trace


def _check_times(start: int, end: int, where: str, start_column: str, end_column: str, source: str, line: int | None) -> None:
    """Refuse a negative, reversed, absurdly long or absurdly late interval, naming the column."""
    if start < 0:
        raise TraceError(f"{where}'{start_column}' is {start}: a time cannot be negative", source, line)
    if end < start:
        raise TraceError(f"{where}'{end_column}' is before '{start_column}' ({end} < {start}): a negative duration", source, line)
    if end - start > MAX_INTERVAL_NS:
        raise TraceError(
            f"{where}'{end_column}' − '{start_column}' is {(end - start) / 1e9:.6g} s: longer than a day, not a GPU interval",
            source, line,
        )
    if end > MAX_TIMESTAMP_NS:
        raise TraceError(f"{where}'{start_column}' is {start}: too large to be a timestamp in ns", source, line)


# -- the SQLite export ----------------------------------------------------------------


def _refuse_non_database(path: Path, source: str) -> None:
    """The checks every opened file gets (regular file, size), then SQLite's magic in the first 16 bytes."""
    try:
        with open_bounded(path, MAX_SQLITE_BYTES, "trace database") as stream:
            head = stream.read(len(_SQLITE_MAGIC))
    except FileReadError as exc:
        raise TraceError(str(exc), source) from None
    if head != _SQLITE_MAGIC:
        raise TraceError(
            "not an SQLite database; export one with `nsys export --type sqlite FILE.nsys-rep` "
            "or give the CSV of `nsys stats --report cuda_gpu_trace --format csv`",
            source,
        )


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')}


def _require(columns: set[str], table: str, needed: Iterable[str], source: str) -> None:
    missing = [name for name in needed if name not in columns]
    if missing:
        raise TraceError(f"the table {table} has no column {', '.join(missing)}", source)


def read_trace_sqlite(path: str | os.PathLike[str]) -> Trace:
    """The kernels, copies and memsets of an `nsys export --type sqlite` database, opened read-only."""
    file = Path(path)
    source = file.name
    _refuse_non_database(file, source)
    uri = "file:" + urllib.parse.quote(str(file.resolve())) + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise TraceError(f"cannot open the database: {exc}", source) from None
    try:
        return _read_database(connection, source)
    except sqlite3.Error as exc:
        raise TraceError(f"the database cannot be read: {exc}", source) from None
    finally:
        connection.close()


def _read_database(connection: sqlite3.Connection, source: str) -> Trace:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if KERNEL_TABLE not in tables and MEMCPY_TABLE not in tables:
        raise TraceError(
            f"no {KERNEL_TABLE} or {MEMCPY_TABLE} table: the report holds no CUDA activity "
            "(record it with `nsys profile --trace=cuda`)",
            source,
        )
    builder = _Builder(source, SQLITE)
    notes: list[str] = []
    if KERNEL_TABLE in tables:
        _read_kernels(connection, tables, builder, source)
    else:
        notes.append(f"no {KERNEL_TABLE} table: the report recorded copies only")
    if MEMCPY_TABLE in tables:
        _read_copies(connection, tables, builder, source)
    if MEMSET_TABLE in tables:
        _read_memsets(connection, builder, source)
    return builder.finish(notes)


def _read_rows(
    connection: sqlite3.Connection, query: str, table: str, builder: _Builder, source: str,
    kind: int, name_of: "dict[int, int] | None", fixed_name: int | None, has_bytes: bool, default_name: int | None = None,
) -> None:
    trace = builder.trace
    append_start, append_end = trace.start.append, trace.end.append
    append_name, append_stream = trace.name.append, trace.stream.append
    append_kind, append_bytes = trace.kind.append, trace.nbytes.append
    streams: dict[tuple[int, int], int] = {}
    cursor = connection.execute(query)
    while True:
        rows = cursor.fetchmany(_FETCH)
        if not rows:
            return
        for row in rows:
            rowid, start, end, device, stream, label = row[0], row[1], row[2], row[3], row[4], row[5]
            if not (type(start) is int and type(end) is int):
                column = "start" if type(start) is not int else "end"
                raise TraceError(f"{table} row {rowid}: '{column}' is {row[1 if column == 'start' else 2]!r}, not a time in ns", source)
            if start == 0 and end == 0:
                builder.untimed += 1
                continue
            if start < 0 or end < start or end - start > MAX_INTERVAL_NS or end > MAX_TIMESTAMP_NS:
                _check_times(start, end, f"{table} row {rowid}: ", "start", "end", source, None)
            lane = streams.get((device, stream))
            if lane is None:
                lane = streams[(device, stream)] = builder.stream_id(f"GPU {device}", str(stream))
            if name_of is not None:
                name = name_of.get(label, default_name)
                if name is None:
                    raise TraceError(f"{table} row {rowid}: the name id {label!r} is not in {STRINGS_TABLE}", source)
            else:
                name = fixed_name if fixed_name is not None else label
            if builder.full():
                raise TraceError(f"more than {MAX_TRACE_ROWS:,} intervals: over the limit for one trace", source)
            append_start(start)
            append_end(end)
            append_name(name)
            append_stream(lane)
            append_kind(kind)
            size = row[6] if has_bytes else -1
            append_bytes(size if type(size) is int and size >= 0 else -1)


def _read_kernels(connection: sqlite3.Connection, tables: set[str], builder: _Builder, source: str) -> None:
    columns = _columns(connection, KERNEL_TABLE)
    _require(columns, KERNEL_TABLE, ("start", "end", "deviceId", "streamId"), source)
    name_column = next((c for c in ("demangledName", "shortName") if c in columns), None)
    if name_column is None:
        raise TraceError(f"the table {KERNEL_TABLE} has no column demangledName or shortName (the kernel's name)", source)
    if STRINGS_TABLE not in tables:
        raise TraceError(f"no {STRINGS_TABLE} table: the kernels' names ({KERNEL_TABLE}.{name_column}) cannot be read", source)
    _require(_columns(connection, STRINGS_TABLE), STRINGS_TABLE, ("id", "value"), source)
    names: dict[int, int] = {}
    for string_id, value in connection.execute(
        f'SELECT id, value FROM {STRINGS_TABLE} WHERE id IN (SELECT DISTINCT "{name_column}" FROM {KERNEL_TABLE})'
    ):
        names[string_id] = builder.name_id(str(value))
    query = f'SELECT rowid, start, "end", deviceId, streamId, "{name_column}" FROM {KERNEL_TABLE}'
    _read_rows(connection, query, KERNEL_TABLE, builder, source, KERNEL, names, None, False)


def _read_copies(connection: sqlite3.Connection, tables: set[str], builder: _Builder, source: str) -> None:
    columns = _columns(connection, MEMCPY_TABLE)
    _require(columns, MEMCPY_TABLE, ("start", "end", "deviceId", "streamId", "copyKind", "bytes"), source)
    labels = dict(MEMCPY_KINDS)
    if MEMCPY_KIND_TABLE in tables and {"id", "label"} <= _columns(connection, MEMCPY_KIND_TABLE):
        for kind_id, label in connection.execute(f"SELECT id, label FROM {MEMCPY_KIND_TABLE}"):
            if isinstance(kind_id, int) and isinstance(label, str) and label:
                labels[kind_id] = label
    names = {kind_id: builder.name_id(f"[CUDA memcpy {label}]") for kind_id, label in labels.items()}
    unknown = names[0]  # a copy kind nsys did not label is still a copy
    query = f'SELECT rowid, start, "end", deviceId, streamId, copyKind, bytes FROM {MEMCPY_TABLE}'
    _read_rows(connection, query, MEMCPY_TABLE, builder, source, MEMCPY, names, None, True, unknown)


def _read_memsets(connection: sqlite3.Connection, builder: _Builder, source: str) -> None:
    columns = _columns(connection, MEMSET_TABLE)
    _require(columns, MEMSET_TABLE, ("start", "end", "deviceId", "streamId"), source)
    has_bytes = "bytes" in columns
    query = f'SELECT rowid, start, "end", deviceId, streamId, 0{", bytes" if has_bytes else ""} FROM {MEMSET_TABLE}'
    _read_rows(connection, query, MEMSET_TABLE, builder, source, MEMSET, None, builder.name_id("[CUDA memset]"), has_bytes)


# -- the cuda_gpu_trace CSV -----------------------------------------------------------


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


def _time_ns(text: str, factor: int, title: str, source: str, line: int) -> int:
    try:
        if factor == 1:
            return int(text)
        return round(float(text) * factor)
    except ValueError:
        pass
    cleaned = text.strip()
    try:
        value = float(cleaned)
    except ValueError:
        what = "empty" if not cleaned else f"'{cleaned[:40]}'"
        raise TraceError(f"'{title}' is {what}: expected a time", source, line) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise TraceError(f"'{title}' is {cleaned}: not a finite time", source, line)
    if abs(value) * factor > MAX_TIMESTAMP_NS:
        raise TraceError(f"'{title}' is {cleaned}: too large to be a time", source, line)
    return round(value * factor)


def _csv_lines(path: Path, source: str) -> Iterator[str]:
    try:
        stream = open_bounded(path, MAX_CSV_BYTES, "trace CSV")
    except FileReadError as exc:
        raise TraceError(str(exc), source) from None
    with io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="") as text:
        head = text.read(4096)
        if "\x00" in head:
            raise TraceError("this is a binary file, not CSV text", source)
        try:
            yield from io.StringIO(head + text.readline(), newline="")  # the first piece, whole lines
            yield from text
        except FileReadError as exc:
            raise TraceError(str(exc), source) from None


def read_trace_csv_lines(lines: Iterable[str], source: str = "trace.csv") -> Trace:
    """Parse the text of `nsys stats --report cuda_gpu_trace --format csv` (progress lines before the header skipped)."""
    builder = _Builder(source, CSV)
    reader = csv.reader(lines)
    columns: _CsvColumns | None = None
    try:
        for cells in reader:
            if reader.line_num > MAX_HEADER_SEARCH_LINES:
                break
            if cells and _is_trace_header(cells):
                columns = _csv_columns([c.strip() for c in cells], source, reader.line_num)
                break
        if columns is None:
            raise TraceError(
                "no cuda_gpu_trace header (Start (ns), Duration (ns), …, Strm, Name) found; expected the output of "
                "`nsys stats --report cuda_gpu_trace --format csv`",
                source,
            )
        _read_csv_rows(reader, columns, builder, source)
    except csv.Error as exc:
        raise TraceError(f"malformed CSV: {exc}", source, reader.line_num) from None
    return builder.finish([])


def _read_csv_rows(reader: "csv._reader", c: _CsvColumns, builder: _Builder, source: str) -> None:  # type: ignore[name-defined]
    trace = builder.trace
    width = max(i for i in (c.start, c.duration, c.name, c.stream, c.device, c.bytes) if i is not None) + 1
    start_title, duration_title = c.titles[c.start], c.titles[c.duration]
    kinds: dict[int, int] = {}
    streams: dict[tuple[str, str], int] = {}
    name_ids = builder.name_ids
    for cells in reader:
        if len(cells) < width:
            if not cells or not "".join(cells).strip():
                continue
            if len(cells) == 1 and cells[0].lstrip().startswith("**"):
                break  # the heading of the next report in a multi-report file
            raise TraceError(f"the row has {len(cells)} cells; the header has {len(c.titles)}", source, reader.line_num)
        line = reader.line_num
        start = _time_ns(cells[c.start], c.start_factor, start_title, source, line)
        duration = _time_ns(cells[c.duration], c.duration_factor, duration_title, source, line)
        if start < 0 or duration < 0 or duration > MAX_INTERVAL_NS or start > MAX_TIMESTAMP_NS:
            if duration < 0:
                raise TraceError(f"'{duration_title}' is {cells[c.duration].strip()}: a duration cannot be negative", source, line)
            _check_times(start, start + duration, "", start_title, duration_title, source, line)
        name = cells[c.name]
        name_id = name_ids.get(name)
        if name_id is None:
            stripped = name.strip()
            if not stripped:
                raise TraceError("the Name cell is empty", source, line)
            name_id = builder.name_id(stripped)
            name_ids[name] = name_id
        kind = kinds.get(name_id)
        if kind is None:
            text = trace.names[name_id]
            kind = kinds[name_id] = MEMCPY if text.startswith("[CUDA memcpy") else MEMSET if text.startswith("[CUDA memset") else KERNEL
        device = cells[c.device].strip() if c.device is not None else "GPU"
        key = (device, cells[c.stream])
        lane = streams.get(key)
        if lane is None:
            lane = streams[key] = builder.stream_id(device or "GPU", cells[c.stream].strip() or "?")
        size = -1
        if c.bytes is not None and kind != KERNEL:
            text = cells[c.bytes].strip()
            if text:
                try:
                    size = round(float(text) * c.bytes_factor)
                except ValueError:
                    raise TraceError(f"'{c.titles[c.bytes]}' is '{text[:40]}': expected a number", source, line) from None
                if size < 0:
                    raise TraceError(f"'{c.titles[c.bytes]}' is {text}: bytes cannot be negative", source, line)
        if builder.full():
            raise TraceError(f"more than {MAX_TRACE_ROWS:,} intervals: over the limit for one trace", source, line)
        trace.start.append(start)
        trace.end.append(start + duration)
        trace.name.append(name_id)
        trace.stream.append(lane)
        trace.kind.append(kind)
        trace.nbytes.append(size)


def read_trace_csv(path: str | os.PathLike[str]) -> Trace:
    """A cuda_gpu_trace CSV file, streamed through the bounded reader."""
    file = Path(path)
    return read_trace_csv_lines(_csv_lines(file, file.name), file.name)


def read_trace_text(text: str, source: str = "trace.csv") -> Trace:
    """cuda_gpu_trace CSV text already in memory."""
    return read_trace_csv_lines(io.StringIO(text, newline=""), source)


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """An Nsight Systems trace: an SQLite export (told by its first bytes) or a cuda_gpu_trace CSV."""
    file = Path(path)
    source = file.name
    suffix = file.suffix.lower()
    if suffix in (".nsys-rep", ".qdrep"):
        raise TraceError(
            f"this is a binary {suffix} report; export it first: nsys export --type sqlite {file.name} "
            f"(or nsys stats --report cuda_gpu_trace --format csv {file.name})",
            source,
        )
    try:
        mode = os.stat(file).st_mode
    except FileNotFoundError:
        raise TraceError("no such file", source) from None
    except (OSError, ValueError) as exc:
        raise TraceError(getattr(exc, "strerror", None) or str(exc), source) from None
    if stat.S_ISREG(mode):
        try:
            with open_bounded(file, MAX_SQLITE_BYTES, "trace") as stream:
                head = stream.read(len(_SQLITE_MAGIC))
        except FileReadError as exc:
            raise TraceError(str(exc), source) from None
        if head == _SQLITE_MAGIC or suffix in (".sqlite", ".db", ".sqlite3"):
            return read_trace_sqlite(file)
    return read_trace_csv(file)  # not a regular file: the bounded reader refuses it in one line


__all__ = [
    "CSV",
    "KERNEL",
    "MEMCPY",
    "MEMSET",
    "SQLITE",
    "Interval",
    "Trace",
    "TraceError",
    "is_communication",
    "read_trace",
    "read_trace_csv",
    "read_trace_sqlite",
    "read_trace_text",
]
