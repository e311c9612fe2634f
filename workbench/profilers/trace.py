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
  through `workbench.files.open_bounded` and is streamed in 4 MiB blocks,
  never held: plain blocks are read by NumPy a column at a time, any block
  with something unusual by the csv module row by row, which names the line
  (see "the cuda_gpu_trace CSV" below).

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
import gc
import io
import math
import os
import re
import sqlite3
import urllib.parse
from array import array
from collections import deque
from itertools import compress, islice, repeat
import operator
from operator import itemgetter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator, Sequence

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

from workbench.files import FileReadError, open_bounded
from workbench.profilers.matching import kernel_base_name
from workbench.profilers.stopping import ReadStopped
from workbench.profilers.table import ProfileError

KERNEL, MEMCPY, MEMSET = 0, 1, 2
KIND_NAMES = ("kernel", "memcpy", "memset")
SQLITE, CSV = "sqlite", "csv"

MAX_CSV_BYTES = 4 * 2**30  # a cuda_gpu_trace CSV of tens of millions of rows
MAX_SQLITE_BYTES = 64 * 2**30  # a whole nsys database (every table) may be large; only three are read
MAX_TRACE_ROWS = 20_000_000  # ~25 B a row held: 0.5 GB at the limit
MAX_INTERVAL_NS = 86_400 * 10**9  # an interval longer than a day is not a GPU activity
MAX_COPY_BYTES = 2**62  # past this a byte count is not one copy's
MAX_TIMESTAMP_NS = 2**62  # past this a timestamp is not one (nsys counts ns from the session start or the epoch)
MAX_HEADER_SEARCH_LINES = 10_000  # progress lines nsys stats writes before the header
SQLITE_MAGIC = b"SQLite format 3\x00"
_SQLITE_STOP_STEPS = 10_000  # SQLite's virtual-machine steps between two looks at a stop flag (well under a millisecond)
_FETCH = 50_000

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
STRINGS_TABLE = "StringIds"
MEMCPY_KIND_TABLE = "ENUM_CUDA_MEMCPY_OPER"

# The copy kinds, for a database without ENUM_CUDA_MEMCPY_OPER: 0–10 are CUPTI's CUpti_ActivityMemcpyKind
# (UNKNOWN, HTOD, DTOH, HTOA, ATOH, ATOA, ATOD, DTOA, DTOD, HTOH, PTOP); 11–13 are the unified-memory
# migrations nsys adds to it (its reports name them '[CUDA memcpy Unified Host-to-Device]', …).
MEMCPY_KINDS = {
    0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host",
    5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array", 8: "Device-to-Device",
    9: "Host-to-Host", 10: "Peer-to-Peer", 11: "Unified Host-to-Device", 12: "Unified Device-to-Host",
    13: "Unified Device-to-Device",
}
PEER_TO_PEER = 10
_TIME_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_BYTE_UNITS = {"b": 1, "byte": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


class TraceError(ProfileError):
    """A trace that cannot be read: the message names the file and, where known, the line or row."""


def kind_of_name(name: str) -> int:
    """KERNEL, MEMCPY or MEMSET by the name: nsys names copies '[CUDA memcpy …]' and memsets '[CUDA memset]'."""
    return MEMCPY if name.startswith("[CUDA memcpy") else MEMSET if name.startswith("[CUDA memset") else KERNEL


def kinds_of_names(names: Sequence[str]) -> list[int]:
    """kind_of_name() of each name: one C-speed startswith per name, kind_of_name() only for the few that
    could be a copy or a memset (a trace of a million distinct names asks this of every one)."""
    kinds = [KERNEL] * len(names)
    for index in compress(range(len(names)), map(str.startswith, names, repeat("[CUDA mem"))):
        kinds[index] = kind_of_name(names[index])
    return kinds


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


@dataclass(frozen=True)
class TraceGpu:
    """A GPU the trace names (nsys's TARGET_INFO_GPU): its device id in the activity tables, name, memory, bus."""

    device_id: int
    name: str
    memory_bytes: int | None = None
    bus: str = ""
    compute_capability: str = ""


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
    gpus: tuple[TraceGpu, ...] = ()  # the GPUs the file names (SQLite exports), those its intervals ran on first
    _communication: list[bool] = field(default_factory=list, repr=False)
    _several: bool = field(default=False, repr=False)
    _devices_for: int = field(default=-1, repr=False)  # the lane count _several was found for

    def __len__(self) -> int:
        return len(self.start)

    def stream_label(self, index: int) -> str:
        device, stream = self.streams[index]
        return f"{device} · stream {stream}" if self._several_devices() else f"stream {stream}"

    def stream_labels(self) -> list[str]:
        return [self.stream_label(i) for i in range(len(self.streams))]

    def _several_devices(self) -> bool:
        """Whether the lanes are on more than one device: asked per label, so found once per lane count
        (a trace of 200,000 streams has as many labels)."""
        if self._devices_for != len(self.streams):
            self._several, self._devices_for = len({d for d, _ in self.streams}) > 1, len(self.streams)
        return self._several

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
        """The kind (KERNEL, MEMCPY, MEMSET) of each name: copies and memsets carry nsys's bracketed names."""
        return kinds_of_names(self.names)

    def columns(self) -> "tuple[np.ndarray, np.ndarray, np.ndarray]":
        """(name index, start ns, end ns) per row as NumPy views of the arrays (no copy)."""
        import numpy as np

        return (
            np.frombuffer(self.name, dtype=f"i{self.name.itemsize}"),
            np.frombuffer(self.start, dtype=np.int64),
            np.frombuffer(self.end, dtype=np.int64),
        )

    def origin_ns(self) -> int:
        """The first interval's start: the trace's time zero when shown."""
        return min(self.start) if len(self.start) else 0

    def name_totals(self) -> list[tuple[int, int, int]]:
        """(name index, count, total ns) per name that has intervals."""
        import numpy as np

        names, start, end = self.columns()
        counts = np.bincount(names, minlength=len(self.names))
        totals = np.bincount(names, weights=end - start, minlength=len(self.names))
        return [(i, int(counts[i]), int(totals[i])) for i in np.flatnonzero(counts)]

    def summary(self) -> dict[str, object]:
        import numpy as np

        counts = np.bincount(np.frombuffer(self.kind, dtype=np.int8), minlength=len(KIND_NAMES)).tolist()
        kinds = dict(zip(KIND_NAMES, counts))
        return {
            "source": self.source,
            "format": self.format,
            "intervals": len(self),
            "kernels": kinds["kernel"],
            "copies": kinds["memcpy"],
            "memsets": kinds["memset"],
            "streams": self.stream_labels(),
            "span_s": ((max(self.end) - self.origin_ns()) / 1e9) if len(self) else 0.0,
            "gpus": [
                {"device_id": gpu.device_id, "name": gpu.name, "memory_bytes": gpu.memory_bytes, "bus": gpu.bus,
                 "compute_capability": gpu.compute_capability}
                for gpu in self.gpus
            ],
            "notes": list(self.notes),
        }


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of small objects are made: nothing read forms a
    cycle, and the collector's passes over them cost a fifth of the import."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
            head = stream.read(len(SQLITE_MAGIC))
    except FileReadError as exc:
        raise TraceError(str(exc), source) from None
    if head != SQLITE_MAGIC:
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


def read_trace_sqlite(path: str | os.PathLike[str], should_stop: Callable[[], bool] | None = None) -> Trace:
    """The kernels, copies and memsets of an `nsys export --type sqlite` database, opened read-only.

    With `should_stop`, SQLite asks it every few thousand steps of its work and the read ends with ReadStopped
    soon after it answers True."""
    file = Path(path)
    source = file.name
    _refuse_non_database(file, source)
    uri = "file:" + urllib.parse.quote(str(file.resolve())) + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise TraceError(f"cannot open the database: {exc}", source) from None
    if should_stop is not None:
        connection.set_progress_handler(lambda: 1 if should_stop() else 0, _SQLITE_STOP_STEPS)
    try:
        with _collector_paused():
            return _read_database(connection, source)
    except sqlite3.Error as exc:
        if should_stop is not None and should_stop():
            raise ReadStopped("reading stopped") from None
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
    _refuse_generated_columns(connection, tables, source)
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
    trace = builder.finish(notes)
    trace.gpus = _read_gpus(connection, tables, trace)
    return trace


# Where exporters name the GPUs: TARGET_INFO_GPU (nsys from mid 2021; keyed by `id`, with `cuDevice` in some
# releases), TARGET_INFO_CUDA_GPU (early 2021, keyed by `deviceId`). Newer exports map CUDA device ids (the
# activity tables' deviceId) to GPU ids in TARGET_INFO_CUDA_DEVICE (gpuId, cudaId).
GPU_TABLES = (("TARGET_INFO_GPU", ("cuDevice", "id")), ("TARGET_INFO_CUDA_GPU", ("deviceId", "cuDevice", "id")))
CUDA_DEVICE_TABLE = "TARGET_INFO_CUDA_DEVICE"
_GPU_MEMORY_COLUMNS = ("totalMemory", "globalMemorySize", "memorySize")
_GPU_BUS_COLUMNS = ("busLocation", "pciBusId")
MAX_GPUS = 256


def _cuda_ids(connection: sqlite3.Connection, tables: set[str]) -> dict[int, int]:
    """GPU id → CUDA device id, where the export keeps that map; empty otherwise."""
    if CUDA_DEVICE_TABLE not in tables or not {"gpuId", "cudaId"} <= _columns(connection, CUDA_DEVICE_TABLE):
        return {}
    found: dict[int, int] = {}
    for gpu_id, cuda_id in connection.execute(f'SELECT "gpuId", "cudaId" FROM {CUDA_DEVICE_TABLE} LIMIT {MAX_GPUS}'):
        if type(gpu_id) is int and type(cuda_id) is int:
            found.setdefault(gpu_id, cuda_id)
    return found


def _read_gpus(connection: sqlite3.Connection, tables: set[str], trace: Trace) -> tuple[TraceGpu, ...]:
    """The GPUs the database names, by the CUDA device id its intervals carry, looked up by the tables and
    columns its schema has (PRAGMA table_info): those the intervals ran on first. Empty where none is named."""
    for table, id_columns in GPU_TABLES:
        if table not in tables:
            continue
        columns = _columns(connection, table)
        id_column = next((c for c in id_columns if c in columns), None)
        if "name" not in columns or id_column is None:
            continue
        # a GPU id (`id`) is a CUDA device id only through the export's map, where it has one
        cuda_ids = _cuda_ids(connection, tables) if id_column == "id" else {}
        memory = next((c for c in _GPU_MEMORY_COLUMNS if c in columns), None)
        bus = next((c for c in _GPU_BUS_COLUMNS if c in columns), None)
        major = next((c for c in ("computeMajor", "smMajor") if c in columns), None)
        minor = next((c for c in ("computeMinor", "smMinor") if c in columns), None)
        picked = [f'"{id_column}"', '"name"', f'"{memory}"' if memory else "NULL", f'"{bus}"' if bus else "NULL",
                  f'"{major}"' if major else "NULL", f'"{minor}"' if minor else "NULL"]
        found: dict[int, TraceGpu] = {}
        for device_id, name, size, location, cc_major, cc_minor in connection.execute(
            f"SELECT {', '.join(picked)} FROM {table} LIMIT {MAX_GPUS}"
        ):
            if type(device_id) is not int or not isinstance(name, str):
                continue
            shown = "".join(character for character in name[:200] if character.isprintable()).strip()  # shown as text
            device_id = cuda_ids.get(device_id, device_id)
            if not shown or device_id in found:
                continue
            capability = f"{cc_major}.{cc_minor}" if type(cc_major) is int and type(cc_minor) is int else ""
            found[device_id] = TraceGpu(device_id, shown, size if type(size) is int and size > 0 else None,
                                        location if isinstance(location, str) else "", capability)
        used = {int(device.removeprefix("GPU ")) for device, _ in trace.streams if device.removeprefix("GPU ").isdecimal()}
        return tuple(sorted(found.values(), key=lambda gpu: (gpu.device_id not in used, gpu.device_id)))
    return ()


def _refuse_generated_columns(connection: sqlite3.Connection, tables: set[str], source: str) -> None:
    """Refuse an activity table with a generated column (computed by the file's own SQL expression on every
    read): nsys never writes one, and reading it would run what the file says."""
    for table in (KERNEL_TABLE, MEMCPY_TABLE, MEMSET_TABLE):
        if table not in tables:
            continue
        for row in connection.execute(f'PRAGMA table_xinfo("{table}")'):
            if row[6] in (2, 3):  # hidden: 2 a virtual, 3 a stored generated column
                raise TraceError(f"the column {row[1]} of {table} is a generated column (an expression of the file's): "
                                 "an nsys export has none", source)


def _read_rows(
    connection: sqlite3.Connection, table: str, name_column: str | None, builder: _Builder, source: str,
    kind: int, name_of: "dict[int, int] | None", fixed_name: int | None, bytes_column: str | None, default_name: int | None = None,
) -> None:
    """One activity table into the trace, checked first by SQL (in C, over every row), then read column-wise."""
    trace = builder.trace
    untimed = 'start IS 0 AND "end" IS 0'
    bad_rows = (
        f'NOT ({untimed}) AND (typeof(start) != \'integer\' OR typeof("end") != \'integer\' OR start < 0 '
        f'OR "end" < start OR "end" - start > {MAX_INTERVAL_NS} OR "end" > {MAX_TIMESTAMP_NS})'
    )
    # One pass in C counts the untimed rows, the timed ones and the bad ones; only a bad one asks again.
    untimed_count, timed_count, bad_count = connection.execute(
        f"SELECT SUM(CASE WHEN {untimed} THEN 1 ELSE 0 END), SUM(CASE WHEN {untimed} THEN 0 ELSE 1 END), "
        f"SUM(CASE WHEN {bad_rows} THEN 1 ELSE 0 END) FROM {table}"
    ).fetchone()
    if bad_count:
        rowid, start, end = connection.execute(f'SELECT rowid, start, "end" FROM {table} WHERE {bad_rows} LIMIT 1').fetchone()
        for column, value in (("start", start), ("end", end)):
            if type(value) is not int:
                raise TraceError(f"{table} row {rowid}: '{column}' is {value!r}, not a time in ns", source)
        _check_times(start, end, f"{table} row {rowid}: ", "start", "end", source, None)
    builder.untimed += untimed_count or 0
    if len(trace) + (timed_count or 0) > MAX_TRACE_ROWS:
        raise TraceError(f"more than {MAX_TRACE_ROWS:,} intervals: over the limit for one trace", source)
    lanes: dict[tuple[object, object], int] = {}  # learnt as the rows come (a DISTINCT pass costs a scan)
    columns = ['start', '"end"', "deviceId", "streamId", f'"{name_column}"' if name_column else "0", f'"{bytes_column}"' if bytes_column else "-1"]
    cursor = connection.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE NOT ({untimed})")
    while True:
        rows = cursor.fetchmany(_FETCH)
        if not rows:
            return
        starts, ends, devices, streams, labels, sizes = (list(map(itemgetter(i), rows)) for i in range(6))
        keys = list(zip(devices, streams))
        row_lanes = list(map(lanes.get, keys))
        if None in row_lanes:
            for device, stream in dict.fromkeys(key for key, lane in zip(keys, row_lanes) if lane is None):
                lanes[(device, stream)] = builder.stream_id(f"GPU {device}", str(stream))
            row_lanes = list(map(lanes.__getitem__, keys))
        if name_of is None:
            trace.name.extend([fixed_name] * len(rows))
        elif default_name is None:
            try:
                trace.name.extend(map(name_of.__getitem__, labels))
            except KeyError:  # a name id not in StringIds (rare: asked only then, not checked by a scan first)
                orphan = connection.execute(
                    f'SELECT rowid, "{name_column}" FROM {table} WHERE NOT ({untimed}) AND ("{name_column}" IS NULL '
                    f'OR "{name_column}" NOT IN (SELECT id FROM {STRINGS_TABLE})) LIMIT 1'
                ).fetchone()
                label = next(label for label in labels if label not in name_of)
                where = f"{table} row {orphan[0]}" if orphan is not None else table
                raise TraceError(f"{where}: the name id {label!r} ({name_column}) is not in {STRINGS_TABLE}", source) from None
        else:
            trace.name.extend([name_of.get(label, default_name) for label in labels])
        trace.start.extend(starts)
        trace.end.extend(ends)
        trace.stream.extend(row_lanes)
        trace.kind.extend(bytes([kind]) * len(rows))
        trace.nbytes.extend([size if type(size) is int and size >= 0 else -1 for size in sizes])


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
    _read_rows(connection, KERNEL_TABLE, name_column, builder, source, KERNEL, names, None, None)


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
    _read_rows(connection, MEMCPY_TABLE, "copyKind", builder, source, MEMCPY, names, None, "bytes", unknown)


def _read_memsets(connection: sqlite3.Connection, builder: _Builder, source: str) -> None:
    columns = _columns(connection, MEMSET_TABLE)
    _require(columns, MEMSET_TABLE, ("start", "end", "deviceId", "streamId"), source)
    _read_rows(connection, MEMSET_TABLE, None, builder, source, MEMSET, None, builder.name_id("[CUDA memset]"),
               "bytes" if "bytes" in columns else None)


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
    the header skipped), block by block: see the section's comment."""
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

_CSV_BLOCK_BYTES = 4 * 2**20
MAX_CSV_LINE_BYTES = 64 * 2**20  # a line longer than this is not a trace row
_STRAY_QUOTE_BYTES = 2**20  # past this, a block whose every newline is inside quotes ends at its last one
_CSV_CHUNK = 20_000  # rows per column-wise chunk on the csv module's way
MAX_CACHED_KEYS = 2**16  # _CsvState.keys: lanes × names of a real trace are far fewer


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
    """A CSV file's bytes in blocks that each end at a record's end (see the section's comment)."""

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
    """Where a block's rows lie (NumPy arrays, as _csv_block_fast found them): each row's first comma, key
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
    before_key = first + (state.key_column - 1)  # the comma before the key's first cell
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
            before = np.searchsorted(quotes, commas[first[quoted, None] + np.arange(state.key_column)])
            if ((before - at_begin[quoted, None]) % 2).any():
                return None

    def cell(column: int, rows: "np.ndarray | slice" = slice(None)) -> "tuple[np.ndarray, np.ndarray]":
        found = first[rows] + column
        return (begins[rows] if column == 0 else commas[found - 1] + 1), commas[found]

    starts = _digit_column(a, *cell(c.start))
    durations = _digit_column(a, *cell(c.duration))
    if starts is None or durations is None:
        return None
    finishes = starts + durations
    if durations.max() > MAX_INTERVAL_NS or finishes.max() > MAX_TIMESTAMP_NS:
        return None
    if len(trace) + count > MAX_TRACE_ROWS:
        raise TraceError(f"more than {MAX_TRACE_ROWS:,} intervals: over the limit for one trace", state.source,
                         line + MAX_TRACE_ROWS - len(trace))
    keys = list(map(data.__getitem__, map(slice, key_begins.tolist(), ends.tolist())))
    rows_key = np.fromiter(map(state.keys.get, keys, repeat(-1)), dtype=np.int64, count=count)
    missing = np.flatnonzero(rows_key < 0)
    if len(missing):
        if not _add_new_keys(a, data, keys, rows_key, missing, _Cells(first, key_begins, ends, commas, quotes), state):
            return None
    key_lanes, key_names, key_kinds = state.key_columns()
    kinds = key_kinds[rows_key]
    sizes = np.full(count, -1, dtype=np.int64)
    if c.bytes is not None:
        copies = np.flatnonzero(kinds)  # copies and memsets (kind ≠ KERNEL = 0)
        if len(copies):
            factor = c.bytes_factor
            low, high = cell(c.bytes, copies)
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
    lanes = key_lanes[rows_key].astype(f"i{trace.stream.itemsize}")
    names = key_names[rows_key].astype(f"i{trace.name.itemsize}")
    trace.start.frombytes(starts.tobytes())
    trace.end.frombytes(finishes.tobytes())
    trace.name.frombytes(names.tobytes())
    trace.stream.frombytes(lanes.tobytes())
    trace.kind.frombytes(kinds.tobytes())
    trace.nbytes.frombytes(sizes.tobytes())
    return count


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
    "read_trace_csv",
    "read_trace_csv_stream",
    "read_trace_sqlite",
    "read_trace_text",
]
