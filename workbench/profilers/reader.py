"""Open a profiler export whichever tool wrote it: the File ▸ Import and drag-and-drop entry point.

Files are read through `workbench.files.open_bounded` (regular files only,
size-limited, never blocking on a FIFO or a device) and streamed: the
readers go through a file twice (number format, then values) without ever
holding its text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from workbench.profilers.ncu import MetricFilter, is_ncu_header, read_ncu
from workbench.profilers.nsys import is_nsys_header, read_nsys
from workbench.profilers.profile import Profile
from workbench.profilers.records import NCU, NSYS
from workbench.profilers.stopping import until_stopped
from workbench.profilers.lines import MAX_FILE_BYTES, LineSource, Lines, open_lines, text_source
from workbench.profilers.table import (
    MAX_PREAMBLE_LINES,
    ProfileError,
    is_log_line,
)

__all__ = ["MAX_FILE_BYTES", "open_lines", "read_profile", "read_profile_lines", "read_profile_text", "sniff"]

def sniff(lines: LineSource, name: str = "profile.csv") -> tuple[str | None, Lines]:
    """'ncu' or 'nsys' by the first table header in the file, None when neither appears; and the lines read."""
    import csv

    opened = Lines(lines, name, "Nsight Compute or Nsight Systems CSV")
    for number, line in opened:
        if number > MAX_PREAMBLE_LINES:
            break
        if not line.strip() or is_log_line(line) or "," not in line:
            continue
        try:
            cells = [cell.strip() for cell in next(csv.reader([line]))]
        except (csv.Error, StopIteration):
            continue
        if is_ncu_header(cells):
            return NCU, opened
        if is_nsys_header(cells):
            return NSYS, opened
    return None, opened


def read_profile_lines(
    lines: LineSource, source: str = "profile.csv", keep: MetricFilter | None = None, decimal_mark: str | None = None
) -> Profile:
    """Parse ncu or nsys CSV, telling them apart by their header.

    `keep` picks which ncu metrics each launch holds by name (None: all of
    them); nsys has no metrics. `decimal_mark` ('.' or ',') overrides the
    number format the file's values would decide.
    """
    kind, opened = sniff(lines, source)
    if kind == NSYS:
        return read_nsys(lines, source, decimal_mark)
    if kind == NCU:
        return read_ncu(lines, source, keep, decimal_mark)
    # Neither header: let the ncu reader produce its precise message (empty, binary, ==ERROR==, …).
    if opened.skipped_lines:
        return read_nsys(lines, source, decimal_mark)
    try:
        return read_ncu(lines, source, keep, decimal_mark)
    except ProfileError as exc:
        if exc.line is None and "no table header" in exc.reason:
            raise ProfileError(
                "no Nsight Compute or Nsight Systems table found; expected the output of "
                "`ncu --csv --page details|raw` or `nsys stats --report cuda_gpu_kern_sum --format csv`",
                source,
            ) from None
        raise


def read_profile_text(
    text: str, source: str = "profile.csv", keep: MetricFilter | None = None, decimal_mark: str | None = None
) -> Profile:
    """Parse ncu or nsys CSV text; see read_profile_lines."""
    return read_profile_lines(text_source(text), source, keep, decimal_mark)


def read_profile(
    path: str | Path,
    keep: MetricFilter | None = None,
    decimal_mark: str | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Profile:
    """Read an ncu or nsys CSV export from disk, streamed (the GUI's import and drop target, the CLI's).

    `read_profile(path, keep=is_used_metric)` holds only the metrics the
    workbench reads; `decimal_mark` ('.' or ',') overrides the file's own evidence.
    With `should_stop`, the read ends with `ReadStopped` soon after it answers True.
    """
    file = Path(path)
    lines = open_lines(file)
    if should_stop is not None:
        lines = until_stopped(lines, should_stop)
    return read_profile_lines(lines, file.name, keep, decimal_mark)
