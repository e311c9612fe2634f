"""PyTorch profiler traces: the Chrome-trace JSON that `torch.profiler` (Kineto) writes, gzipped or not.

The file is one JSON object whose `traceEvents` list holds complete events
(`"ph": "X"`, a start `ts` and a duration `dur`, both in microseconds) of
several categories; this reader keeps:

- `kernel`, `gpu_memcpy`, `gpu_memset`: the GPU activities, on the lane
  (`args.device`, `args.stream`), each with `args.correlation`, the id of the
  runtime call that launched it;
- `cuda_runtime` and `cuda_driver`: those launches (cudaLaunchKernel,
  cudaMemcpyAsync, cuLaunchKernel), on a CPU thread (`pid`, `tid`);
- `cpu_op`: the ATen operators (`aten::addmm`) and autograd nodes, nested in
  time on their thread;
- `user_annotation` named `ProfilerStep#N`: the profiler's iterations.

A kernel belongs to the innermost CPU op that contains its launch in time on
the launch's thread. In the real traces `External id` does not link an op to
its kernels and flow events (`ac2g`) may be missing, so neither is relied on.

The result is a `Trace` (the GPU activities, column-wise, as for Nsight
Systems) with the CPU ops beside it (`TorchTrace.ops`) and, per row, the CPU
op that launched it (`TorchTrace.row_op`). A trace recorded on the CPU alone
has no GPU activity: its rows are then the CPU ops themselves (`cpu_only`),
so an operation's time is its operator's own duration.

Files are hostile: the file is read through the bounded reader, a gzip
stream is decompressed to at most MAX_TORCH_TRACE_BYTES (a gzip bomb stops
there), JSON constants NaN and Infinity are refused, every time is checked
(finite, not negative, an interval no longer than a day), and at most
MAX_TORCH_EVENTS events are read. Every refusal is a TraceError naming the
file and, where known, the event's index.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from workbench.files import FileReadError, open_bounded
from workbench.profilers.stopping import ReadStopped
from workbench.profilers.trace import (
    KERNEL,
    MAX_INTERVAL_NS,
    MAX_TIMESTAMP_NS,
    MEMCPY,
    MEMSET,
    Trace,
    TraceError,
    TraceGpu,
)

TORCH = "torch"
MAX_TORCH_FILE_BYTES = 1 * 2**30  # the file as stored (gzipped or not)
MAX_TORCH_TRACE_BYTES = 1 * 2**30  # the JSON text after decompression: a gzip bomb stops here
MAX_TORCH_EVENTS = 5_000_000
MAX_NAME_CHARS = 4096  # a longer name is cut (a kernel's template arguments run to a few hundred)
_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK = 4 * 2**20
_GPU_CATEGORIES = {"kernel": KERNEL, "gpu_memcpy": MEMCPY, "gpu_memset": MEMSET}
_LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
_STEP_PREFIX = "ProfilerStep#"


@dataclass
class TorchOps:
    """The trace's CPU ops, column-wise, by start (ties: the longer first, so a parent precedes its children).

    `parent[i]` is the innermost op on the same thread that contains op i (−1 for a top-level op);
    `last[i]` the index of its last descendant, so op i's subtree is the range i..last[i];
    `step[i]` the profiler step (index into TorchTrace.steps) it starts in, −1 outside every step."""

    names: list[str] = field(default_factory=list)
    name: array = field(default_factory=lambda: array("l"))
    start: array = field(default_factory=lambda: array("q"))
    end: array = field(default_factory=lambda: array("q"))
    thread: list[tuple[str, str]] = field(default_factory=list)
    parent: array = field(default_factory=lambda: array("l"))
    last: array = field(default_factory=lambda: array("l"))
    step: array = field(default_factory=lambda: array("l"))

    def __len__(self) -> int:
        return len(self.start)

    def op_name(self, index: int) -> str:
        return self.names[self.name[index]]


@dataclass(frozen=True)
class ProfilerStep:
    """One `ProfilerStep#N` annotation: the profiler's iteration N, from start to end (ns)."""

    label: str
    start_ns: int
    end_ns: int


@dataclass
class TorchTrace(Trace):
    """A PyTorch profiler trace: the GPU activities as a Trace, the CPU ops, and which op launched each row."""

    ops: TorchOps = field(default_factory=TorchOps)
    row_op: array = field(default_factory=lambda: array("l"))  # per row: the op that launched it, −1 when none
    steps: tuple[ProfilerStep, ...] = ()
    cpu_only: bool = False  # no GPU activity: the rows are the CPU ops themselves

    def stream_label(self, index: int) -> str:
        device, stream = self.streams[index]
        return f"CPU thread {stream}" if self.cpu_only else super().stream_label(index)

    def summary(self) -> dict[str, object]:
        summary = super().summary()
        if self.cpu_only:  # the rows are CPU ops, not kernels
            summary["kernels"] = 0
        return {
            **summary,
            "cpu_ops": len(self.ops),
            "profiler_steps": [step.label for step in self.steps],
            "launched_by_an_op": sum(1 for op in self.row_op if op >= 0),
            "cpu_only": self.cpu_only,
        }


def is_torch_trace_file(path: str | os.PathLike[str]) -> bool:
    """Whether a file looks like a PyTorch profiler trace: gzip (`.json.gz` or the gzip magic) or JSON text
    beginning with '{'. A cheap look at its first bytes; the reader decides."""
    file = Path(path)
    lower = file.name.lower()
    if lower.endswith((".json", ".json.gz", ".pt.trace.json", ".pt.trace.json.gz")):
        return True
    try:
        with open_bounded(file, MAX_TORCH_FILE_BYTES, "trace") as stream:
            head = stream.read(64)
    except (FileReadError, OSError):
        return False
    return head.startswith(_GZIP_MAGIC) or head.lstrip().startswith(b"{")


def _read_text(file: Path, source: str, should_stop: Callable[[], bool] | None) -> bytes:
    """The JSON bytes, decompressed where gzipped, never more than MAX_TORCH_TRACE_BYTES."""
    blocks: list[bytes] = []
    total = 0
    try:
        with open_bounded(file, MAX_TORCH_FILE_BYTES, "PyTorch trace") as raw:
            head = raw.peek(2)[:2]
            stream: Any = gzip.GzipFile(fileobj=raw, mode="rb") if head == _GZIP_MAGIC else raw
            while True:
                if should_stop is not None and should_stop():
                    raise ReadStopped("reading stopped")
                block = stream.read(_BLOCK)
                if not block:
                    break
                total += len(block)
                if total > MAX_TORCH_TRACE_BYTES:
                    raise TraceError(
                        f"the trace is larger than {MAX_TORCH_TRACE_BYTES // 2**20:,} MiB of JSON"
                        + (" once decompressed" if head == _GZIP_MAGIC else ""), source)
                blocks.append(block)
    except FileReadError as exc:
        raise TraceError(str(exc), source) from None
    except (OSError, EOFError, zlib.error) as exc:  # a damaged or truncated gzip stream
        raise TraceError(f"not a readable gzip file ({exc})", source) from None
    return b"".join(blocks)


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _load(data: bytes, source: str) -> dict[str, Any]:
    if not data.strip():
        raise TraceError("the file is empty", source)
    try:
        document = json.loads(data, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise TraceError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", source) from None
    except UnicodeDecodeError:
        raise TraceError("not JSON: the text is not UTF-8", source) from None
    except RecursionError:
        raise TraceError("not a PyTorch trace: the JSON nests too deeply", source) from None
    except ValueError as exc:  # a refused constant, an integer of thousands of digits
        raise TraceError(f"not JSON the workbench reads: {exc}", source) from None
    if not isinstance(document, dict) or not isinstance(document.get("traceEvents"), list):
        raise TraceError("not a PyTorch profiler trace: no 'traceEvents' list (torch.profiler's export_chrome_trace "
                         "writes one)", source)
    return document


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "…"


def _us_to_ns(value: Any, what: str, index: int, source: str) -> int:
    """A Chrome-trace time (µs, integer or fraction) in ns, refused when not a finite non-negative number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TraceError(f"event {index}: '{what}' is {_text(value)!r}, not a number", source)
    if isinstance(value, float) and not math.isfinite(value):
        raise TraceError(f"event {index}: '{what}' is not finite", source)
    if value < 0:
        raise TraceError(f"event {index}: '{what}' is {value}: a time cannot be negative", source)
    ns = round(value * 1000)
    if ns > MAX_TIMESTAMP_NS:
        raise TraceError(f"event {index}: '{what}' is {value} µs, past any clock", source)
    return ns


def _interval(event: dict[str, Any], index: int, source: str) -> tuple[int, int]:
    start = _us_to_ns(event.get("ts"), "ts", index, source)
    duration = _us_to_ns(event.get("dur", 0), "dur", index, source)
    if duration > MAX_INTERVAL_NS:
        raise TraceError(f"event {index}: 'dur' is {duration / 1e9:,.0f} s: longer than a day is not one activity", source)
    return start, start + duration


def _integer(value: Any) -> int | None:
    """An id or count: an integer, or a float holding one; anything else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _gpus(document: dict[str, Any]) -> list[TraceGpu]:
    found = []
    properties = document.get("deviceProperties")
    if not isinstance(properties, list):
        return found
    for item in properties[:256]:
        if not isinstance(item, dict):
            continue
        device = _integer(item.get("id"))
        name = item.get("name")
        if device is None or not isinstance(name, str) or not name.strip():
            continue
        memory = _integer(item.get("totalGlobalMem"))
        major, minor = _integer(item.get("computeMajor")), _integer(item.get("computeMinor"))
        capability = f"{major}.{minor}" if major is not None and minor is not None and 0 <= major < 100 and 0 <= minor < 100 else ""
        found.append(TraceGpu(device, _text(name), memory if memory is not None and memory > 0 else None, "", capability))
    return found


def read_torch_trace(path: str | os.PathLike[str], should_stop: Callable[[], bool] | None = None) -> TorchTrace:
    """A PyTorch profiler trace file (JSON, gzipped or not); with `should_stop`, the read ends with ReadStopped
    soon after it answers True."""
    file = Path(path)
    source = file.name
    return torch_trace_from_document(_load(_read_text(file, source, should_stop), source), source, should_stop)


def read_torch_trace_bytes(data: bytes, source: str = "trace.json") -> TorchTrace:
    """Trace JSON already in memory (not gzipped)."""
    if len(data) > MAX_TORCH_TRACE_BYTES:
        raise TraceError(f"the trace is larger than {MAX_TORCH_TRACE_BYTES // 2**20:,} MiB of JSON", source)
    return torch_trace_from_document(_load(data, source), source)


def torch_trace_from_document(document: dict[str, Any], source: str,
                              should_stop: Callable[[], bool] | None = None) -> TorchTrace:
    """The trace from its parsed JSON (see the module's comment)."""
    events = document["traceEvents"]
    if len(events) > MAX_TORCH_EVENTS:
        raise TraceError(f"{len(events):,} events: more than the {MAX_TORCH_EVENTS:,} read", source)
    gpu_rows: list[tuple[int, int, int, str, str, str, int, int]] = []  # start, end, kind, name, device, stream, bytes, correlation
    launches: dict[int, tuple[tuple[str, str], int]] = {}  # correlation → (thread, launch start)
    ops: list[tuple[int, int, str, tuple[str, str]]] = []  # start, end, name, thread
    steps: list[ProfilerStep] = []
    skipped = 0
    for index, event in enumerate(events):
        if should_stop is not None and index % 65536 == 0 and should_stop():
            raise ReadStopped("reading stopped")
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        category = event.get("cat")
        if not isinstance(category, str):
            continue
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        if category in _GPU_CATEGORIES:
            start, end = _interval(event, index, source)
            if start == 0 and end == 0:
                skipped += 1
                continue
            device = _integer(args.get("device"))
            device = device if device is not None else _integer(event.get("pid"))
            stream = _integer(args.get("stream"))
            stream = stream if stream is not None else _integer(event.get("tid"))
            correlation = _integer(args.get("correlation"))
            size = _integer(args.get("bytes")) if category != "kernel" else None
            gpu_rows.append((start, end, _GPU_CATEGORIES[category], _text(event.get("name", "")),
                             f"GPU {device if device is not None else '?'}", str(stream if stream is not None else "?"),
                             size if size is not None and 0 <= size < 2**62 else -1,
                             correlation if correlation is not None else -1))
        elif category in _LAUNCH_CATEGORIES:
            correlation = _integer(args.get("correlation"))
            if correlation is not None:
                start, _ = _interval(event, index, source)
                launches[correlation] = ((_text(event.get("pid", "")), _text(event.get("tid", ""))), start)
        elif category == "cpu_op":
            start, end = _interval(event, index, source)
            ops.append((start, end, _text(event.get("name", "")), (_text(event.get("pid", "")), _text(event.get("tid", "")))))
        elif category == "user_annotation":
            name = event.get("name")
            if isinstance(name, str) and name.startswith(_STEP_PREFIX):
                start, end = _interval(event, index, source)
                steps.append(ProfilerStep(_text(name), start, end))
    if not gpu_rows and not ops:
        raise TraceError("the trace holds no CPU op and no GPU activity (record it with torch.profiler, "
                         "activities CPU and/or CUDA)", source)
    steps.sort(key=lambda step: step.start_ns)
    trace = TorchTrace(source, TORCH)
    trace.steps = tuple(steps)
    _place_ops(trace.ops, ops, steps)
    notes: list[str] = []
    if skipped:
        notes.append(f"{skipped:,} GPU events without timestamps were skipped")
    if gpu_rows:
        _add_gpu_rows(trace, gpu_rows, launches)
        unlaunched = sum(1 for op in trace.row_op if op < 0)
        if unlaunched:
            notes.append(f"{unlaunched:,} of {len(trace):,} GPU activities have no launch inside a CPU op "
                         "(their correlation names no runtime call within an op)")
    else:
        _add_op_rows(trace)
        notes.append("no GPU activity in the trace: each operation's time is its CPU op's own duration")
    notes.append(f"{len(trace.ops):,} CPU ops" + (f" in {len(steps)} profiler steps" if steps else ", no ProfilerStep annotations"))
    trace.notes = tuple(notes)
    gpus = _gpus(document)
    ran = {device for device, _ in trace.streams}
    trace.gpus = tuple(sorted(gpus, key=lambda gpu: f"GPU {gpu.device_id}" not in ran))
    return trace


def _place_ops(table: TorchOps, ops: list[tuple[int, int, str, tuple[str, str]]], steps: list[ProfilerStep]) -> None:
    """Sort the ops by start (the longer first), find each one's parent and last descendant on its thread, and
    the profiler step it starts in."""
    ops.sort(key=lambda op: (op[0], -op[1]))
    name_ids: dict[str, int] = {}
    stacks: dict[tuple[str, str], list[int]] = {}
    step_starts = [step.start_ns for step in steps]

    for index, (start, end, name, thread) in enumerate(ops):
        found = name_ids.get(name)
        if found is None:
            found = name_ids[name] = len(table.names)
            table.names.append(name)
        table.name.append(found)
        table.start.append(start)
        table.end.append(end)
        table.thread.append(thread)
        table.last.append(index)
        stack = stacks.setdefault(thread, [])
        while stack and table.end[stack[-1]] < end:  # ends before this one does: does not contain it
            stack.pop()
        table.parent.append(stack[-1] if stack else -1)
        for ancestor in stack:  # stacks are shallow (tens): the ancestors' subtrees grow to this op
            table.last[ancestor] = index
        stack.append(index)
        position = bisect_right(step_starts, start) - 1
        table.step.append(position if position >= 0 and start < steps[position].end_ns else -1)


def _innermost(table: TorchOps, lanes: dict[tuple[str, str], tuple[list[int], list[int]]], thread: tuple[str, str],
               time: int) -> int:
    """The innermost op on `thread` containing `time`: from the last op started at or before it, up the parents
    to the first whose interval holds it (ops on one thread nest)."""
    lane = lanes.get(thread)
    if lane is None:
        return -1
    indices, starts = lane
    position = bisect_right(starts, time) - 1
    if position < 0:
        return -1
    op = indices[position]
    while op >= 0 and table.end[op] < time:
        op = table.parent[op]
    return op


def _add_gpu_rows(trace: TorchTrace, rows: list[tuple[int, int, int, str, str, str, int, int]],
                  launches: dict[int, tuple[tuple[str, str], int]]) -> None:
    rows.sort(key=lambda row: (row[0], row[1]))
    table = trace.ops
    lanes: dict[tuple[str, str], tuple[list[int], list[int]]] = {}  # thread → (its ops, their starts), by start
    for index, thread in enumerate(table.thread):
        indices, starts = lanes.setdefault(thread, ([], []))
        indices.append(index)
        starts.append(table.start[index])
    name_ids: dict[str, int] = {}
    lane_ids: dict[tuple[str, str], int] = {}
    for start, end, kind, name, device, stream, size, correlation in rows:
        found = name_ids.get(name)
        if found is None:
            found = name_ids[name] = len(trace.names)
            trace.names.append(name)
        lane = lane_ids.get((device, stream))
        if lane is None:
            lane = lane_ids[(device, stream)] = len(trace.streams)
            trace.streams.append((device, stream))
        trace.start.append(start)
        trace.end.append(end)
        trace.name.append(found)
        trace.stream.append(lane)
        trace.kind.append(kind)
        trace.nbytes.append(size)
        launch = launches.get(correlation) if correlation >= 0 else None
        trace.row_op.append(_innermost(table, lanes, launch[0], launch[1]) if launch is not None else -1)


def _add_op_rows(trace: TorchTrace) -> None:
    """A CPU-only trace: each CPU op is its own row, on a lane per thread."""
    table = trace.ops
    trace.cpu_only = True
    lane_ids: dict[tuple[str, str], int] = {}
    trace.names.extend(table.names)
    for index in range(len(table)):
        key = ("CPU", table.thread[index][1])
        lane = lane_ids.get(key)
        if lane is None:
            lane = lane_ids[key] = len(trace.streams)
            trace.streams.append(key)
        trace.start.append(table.start[index])
        trace.end.append(table.end[index])
        trace.name.append(table.name[index])
        trace.stream.append(lane)
        trace.kind.append(KERNEL)
        trace.nbytes.append(-1)
        trace.row_op.append(index)


__all__ = [
    "MAX_TORCH_EVENTS",
    "MAX_TORCH_TRACE_BYTES",
    "TORCH",
    "ProfilerStep",
    "TorchOps",
    "TorchTrace",
    "is_torch_trace_file",
    "read_torch_trace",
    "read_torch_trace_bytes",
    "torch_trace_from_document",
]
