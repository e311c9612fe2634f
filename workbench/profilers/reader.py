"""Open a profiler export whichever tool wrote it: the File ▸ Import and drag-and-drop entry point."""

from __future__ import annotations

from pathlib import Path

from workbench.files import FileReadError, read_bounded
from workbench.profilers.ncu import MetricFilter, is_ncu_header, read_ncu_text
from workbench.profilers.nsys import is_nsys_header, read_nsys_text
from workbench.profilers.records import NCU, NSYS, Profile
from workbench.profilers.table import ProfileError, is_log_line

MAX_FILE_BYTES = 512 * 2**20  # a CSV larger than this is not a profile export we can hold
_BINARY_REPORTS = {
    ".ncu-rep": "ncu --import FILE --csv --page details > FILE.csv",
    ".nsys-rep": "nsys stats --report cuda_gpu_kern_sum --format csv FILE > FILE.csv",
    ".qdrep": "nsys stats --report gpukernsum --format csv FILE > FILE.csv",
    ".sqlite": "nsys stats --report cuda_gpu_kern_sum --format csv FILE > FILE.csv",
}


def read_text(path: Path) -> str:
    """The file's text (UTF-8, a BOM dropped); a missing, huge or binary report file is a ProfileError."""
    suffix = path.suffix.lower()
    if suffix in _BINARY_REPORTS:
        raise ProfileError(
            f"this is a binary {suffix} report; export CSV first: {_BINARY_REPORTS[suffix].replace('FILE', path.name)}",
            path.name,
        )
    try:
        data = read_bounded(path, MAX_FILE_BYTES, "profile export")
    except FileReadError as exc:
        raise ProfileError(str(exc), str(path)) from None
    return data.decode("utf-8-sig", errors="replace")


def sniff(text: str) -> str | None:
    """'ncu' or 'nsys' by the first table header in the text, None when neither appears."""
    import csv

    for line in text.splitlines():
        if not line.strip() or is_log_line(line) or "," not in line:
            continue
        try:
            cells = [cell.strip() for cell in next(csv.reader([line]))]
        except (csv.Error, StopIteration):
            continue
        if is_ncu_header(cells):
            return NCU
        if is_nsys_header(cells):
            return NSYS
    return None


def read_profile_text(text: str, source: str = "profile.csv", keep: MetricFilter | None = None) -> Profile:
    """Parse ncu or nsys CSV text, telling them apart by their header.

    `keep` picks which ncu metrics each launch holds by name (None: all of them); nsys has no metrics.
    """
    kind = sniff(text)
    if kind == NSYS:
        return read_nsys_text(text, source)
    if kind == NCU:
        return read_ncu_text(text, source, keep)
    # Neither header: let the ncu reader produce its precise message (empty, binary, ==ERROR==, …).
    if "\x00" not in text[:4096] and text.strip() and "SKIPPED" in text:
        return read_nsys_text(text, source)
    try:
        return read_ncu_text(text, source, keep)
    except ProfileError as exc:
        if exc.line is None and "no table header" in exc.reason:
            raise ProfileError(
                "no Nsight Compute or Nsight Systems table found; expected the output of "
                "`ncu --csv --page details|raw` or `nsys stats --report cuda_gpu_kern_sum --format csv`",
                source,
            ) from None
        raise


def read_profile(path: str | Path, keep: MetricFilter | None = None) -> Profile:
    """Read an ncu or nsys CSV export from disk (the GUI's import and drop target).

    `read_profile(path, keep=is_used_metric)` holds only the metrics the workbench reads.
    """
    file = Path(path)
    return read_profile_text(read_text(file), file.name, keep)
