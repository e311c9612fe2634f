"""Open a trace whichever tool wrote it: each format registered once, asked in order whether a file is its.

An Nsight Systems SQLite export (told by its first bytes or its suffix), a PyTorch profiler trace
(Chrome-trace JSON, gzipped or not: profilers/torch_trace.py) and, for anything else, an Nsight Systems
`cuda_gpu_trace` CSV, whose reader says in one line why a file is not one. A new format is a reader and
one entry in TRACE_FORMATS; the CLI's `step --trace`, the Timeline page and the screenshots all open traces
through `read_trace`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.files import FileReadError, open_bounded
from workbench.profilers.torch_trace import is_torch_trace_file, read_torch_trace
from workbench.profilers.trace import MAX_SQLITE_BYTES, SQLITE_MAGIC, Trace, TraceError, read_trace_csv, read_trace_sqlite

SQLITE_SUFFIXES = (".sqlite", ".db", ".sqlite3")
BINARY_REPORTS = (".nsys-rep", ".qdrep")  # nsys's own report files: exported first, never read


@dataclass(frozen=True)
class TraceFormat:
    """One trace format: its name, whether a regular file is one (by its suffix and first bytes), its reader."""

    name: str
    claims: Callable[[Path, bytes], bool]
    read: Callable[[Path, Callable[[], bool] | None], Trace]


def _is_sqlite(file: Path, head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC) or file.suffix.lower() in SQLITE_SUFFIXES


def _is_torch(file: Path, head: bytes) -> bool:
    return is_torch_trace_file(file)


# In the order they are asked; the CSV reader takes what none claims.
TRACE_FORMATS: tuple[TraceFormat, ...] = (
    TraceFormat("Nsight Systems SQLite export", _is_sqlite, read_trace_sqlite),
    TraceFormat("PyTorch profiler trace (JSON)", _is_torch, read_torch_trace),
)
FALLBACK = TraceFormat("Nsight Systems cuda_gpu_trace CSV", lambda file, head: True, read_trace_csv)


def read_trace(path: str | os.PathLike[str], should_stop: Callable[[], bool] | None = None) -> Trace:
    """The trace in `path`, read by the first registered format that claims it (else as nsys CSV); with
    `should_stop`, the read ends with ReadStopped soon after it answers True (a Cancel, the window closing)."""
    file = Path(path)
    source = file.name
    suffix = file.suffix.lower()
    if suffix in BINARY_REPORTS:
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
    if not stat.S_ISREG(mode):
        return FALLBACK.read(file, should_stop)  # the bounded reader refuses it in one line
    try:
        with open_bounded(file, MAX_SQLITE_BYTES, "trace") as stream:
            head = stream.read(len(SQLITE_MAGIC))
    except FileReadError as exc:
        raise TraceError(str(exc), source) from None
    chosen = next((form for form in TRACE_FORMATS if form.claims(file, head)), FALLBACK)
    return chosen.read(file, should_stop)


__all__ = ["TRACE_FORMATS", "TraceFormat", "read_trace"]
