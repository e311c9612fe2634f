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
  (see the comment in trace_csv).

A million-row trace is held column-wise (arrays of integers, each name kept
once), so it imports in seconds and tens of megabytes (benchmarks/
bench_trace_import.py). Rows without timestamps (CUPTI writes 0 and 0 when
it could not time one) are skipped and counted in the notes; a negative time,
an end before its start, or an interval longer than a day is an error naming
the column and the row.

Which declared operation an interval implements is decided by the kernel
matching (`workbench.profilers.matching`): workbench.steps.trace_match pairs
a step's operations with a trace.

This module is where the rest of the workbench takes traces from; each job
is a module of its own, lowest first:

- trace_intervals: the Trace (held column-wise), its intervals and GPUs, the
  kinds, the limits and the builder the readers fill;
- trace_sqlite: the SQLite export;
- trace_csv_columns: the CSV's header, its cells as numbers, and the state
  the rows so far have established;
- trace_csv_fast: NumPy's way through a block of plain rows;
- trace_csv: the CSV streamed in blocks, the csv module's way, the readers.
"""

from __future__ import annotations

from workbench.profilers.trace_csv import read_trace_csv, read_trace_csv_stream, read_trace_text
from workbench.profilers.trace_intervals import (
    CSV,
    KERNEL,
    KIND_NAMES,
    MAX_INTERVAL_NS,
    MAX_TIMESTAMP_NS,
    MEMCPY,
    MEMSET,
    SQLITE,
    Interval,
    Trace,
    TraceError,
    TraceGpu,
    is_communication,
    kind_of_name,
)
from workbench.profilers.trace_sqlite import MAX_SQLITE_BYTES, SQLITE_MAGIC, read_trace_sqlite

__all__ = [
    "CSV",
    "KERNEL",
    "KIND_NAMES",
    "MAX_INTERVAL_NS",
    "MAX_SQLITE_BYTES",
    "MAX_TIMESTAMP_NS",
    "MEMCPY",
    "MEMSET",
    "SQLITE",
    "SQLITE_MAGIC",
    "Interval",
    "Trace",
    "TraceError",
    "TraceGpu",
    "is_communication",
    "kind_of_name",
    "read_trace_csv",
    "read_trace_csv_stream",
    "read_trace_sqlite",
    "read_trace_text",
]
