"""A trace held column-wise: its intervals' kinds, limits and checks, the Trace with its GPUs, and the
builder the readers fill it through."""

from __future__ import annotations

import gc
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, repeat
from typing import TYPE_CHECKING, Iterator, Sequence

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

from workbench.profilers.matching import kernel_base_name
from workbench.profilers.table import ProfileError

KERNEL, MEMCPY, MEMSET = 0, 1, 2
KIND_NAMES = ("kernel", "memcpy", "memset")
SQLITE, CSV = "sqlite", "csv"

MAX_TRACE_ROWS = 20_000_000  # ~25 B a row held: 0.5 GB at the limit
MAX_INTERVAL_NS = 86_400 * 10**9  # an interval longer than a day is not a GPU activity
MAX_COPY_BYTES = 2**62  # past this a byte count is not one copy's
MAX_TIMESTAMP_NS = 2**62  # past this a timestamp is not one (nsys counts ns from the session start or the epoch)


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
