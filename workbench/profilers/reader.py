"""Open a profiler export whichever tool wrote it: the File ▸ Import and drag-and-drop entry point.

Files are read through `workbench.files.open_bounded` (regular files only,
size-limited, never blocking on a FIFO or a device) and streamed: the
readers go through a file twice (number format, then values) without ever
holding its text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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

__all__ = ["MAX_FILE_BYTES", "PROFILE_FORMATS", "ProfileFormat", "open_lines", "read_profile", "read_profile_lines",
           "read_profile_text", "sniff"]


@dataclass(frozen=True)
class ProfileFormat:
    """One profiler's CSV: the tool (Profile.tool of what it reads), the command that writes it, whether a table
    header's cells are its, and its reader (lines, source name, which metrics to keep, decimal mark)."""

    tool: str
    command: str
    is_header: Callable[[list[str]], bool]
    read: Callable[[LineSource, str, "MetricFilter | None", "str | None"], Profile]


# In the order a header is tried against them. A new format is a reader and one entry here.
PROFILE_FORMATS: tuple[ProfileFormat, ...] = (
    ProfileFormat(NCU, "`ncu --csv --page details|raw`", is_ncu_header, read_ncu),
    ProfileFormat(NSYS, "`nsys stats --report cuda_gpu_kern_sum --format csv`", is_nsys_header,
                  lambda lines, source, keep, decimal_mark: read_nsys(lines, source, decimal_mark)),
)


def _format(tool: str) -> ProfileFormat:
    return next(form for form in PROFILE_FORMATS if form.tool == tool)


def sniff(lines: LineSource, name: str = "profile.csv") -> tuple[str | None, Lines]:
    """The tool (a ProfileFormat's) whose table header comes first in the file, None when none appears; and
    the lines read."""
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
        found = next((form for form in PROFILE_FORMATS if form.is_header(cells)), None)
        if found is not None:
            return found.tool, opened
    return None, opened


def read_profile_lines(
    lines: LineSource, source: str = "profile.csv", keep: MetricFilter | None = None, decimal_mark: str | None = None
) -> Profile:
    """Parse the CSV of any format in PROFILE_FORMATS, telling them apart by their header.

    `keep` picks which ncu metrics each launch holds by name (None: all of
    them); nsys has no metrics. `decimal_mark` ('.' or ',') overrides the
    number format the file's values would decide.
    """
    kind, opened = sniff(lines, source)
    if kind is not None:
        return _format(kind).read(lines, source, keep, decimal_mark)
    # No header: a tool's log lines before it say nsys wrote the file (its reader names what is missing);
    # otherwise the ncu reader produces its precise message (empty, binary, ==ERROR==, …).
    if opened.skipped_lines:
        return _format(NSYS).read(lines, source, keep, decimal_mark)
    try:
        return _format(NCU).read(lines, source, keep, decimal_mark)
    except ProfileError as exc:
        if exc.line is None and "no table header" in exc.reason:
            commands = " or ".join(form.command for form in PROFILE_FORMATS)
            raise ProfileError(
                f"no Nsight Compute or Nsight Systems table found; expected the output of {commands}", source
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
