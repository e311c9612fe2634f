"""The SQLite export of an Nsight Systems report (`nsys export --type sqlite`): its kernel, copy and
memset tables and the GPUs it names, read into a Trace."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from operator import itemgetter
from pathlib import Path
from typing import Callable, Iterable

from workbench.files import FileReadError, open_bounded
from workbench.profilers.stopping import ReadStopped
from workbench.profilers.trace_intervals import (
    KERNEL,
    MAX_INTERVAL_NS,
    MAX_TIMESTAMP_NS,
    MAX_TRACE_ROWS,
    MEMCPY,
    MEMSET,
    SQLITE,
    Trace,
    TraceError,
    TraceGpu,
    _Builder,
    _check_times,
    _collector_paused,
)

MAX_SQLITE_BYTES = 64 * 2**30  # a whole nsys database (every table) may be large; only three are read
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
