"""Reader for `nsys stats --report cuda_gpu_kern_sum --format csv` (and the older gpukernsum).

Current releases print Time (%), Total Time (ns), Instances, Avg (ns),
Med (ns), Min (ns), Max (ns), StdDev (ns), Name; older ones Time(%),
Total Time (ns), Instances, Average, Minimum, Maximum[, StdDev], Name, all in
nanoseconds. Progress lines ("Generating SQLite file …", "Processing […]")
come first; numbers may carry thousands separators. The time unit is read
from each column title, so a `--timeunit` other than ns converts correctly.
"""

from __future__ import annotations

import re
from pathlib import Path

from workbench.profilers.metric_units import base_unit, to_base
from workbench.profilers.records import NSYS, KernelTimes, Profile
from workbench.profilers.table import ProfileError, Row, Table, is_missing, parse_number, read_table

CURRENT = "cuda_gpu_kern_sum"
OLDER = "gpukernsum"
WHAT = "Nsight Systems CSV (nsys stats --report cuda_gpu_kern_sum --format csv)"

_UNIT_IN_TITLE = re.compile(r"\(([^)%]+)\)\s*$")

# Each figure under the titles different releases give it.
_TITLES: dict[str, tuple[str, ...]] = {
    "percent": ("Time (%)", "Time(%)"),
    "total": ("Total Time (ns)", "Total Time (us)", "Total Time (ms)", "Total Time (s)", "Total Time"),
    "instances": ("Instances", "Count"),
    "average": ("Avg (ns)", "Avg (us)", "Avg (ms)", "Avg (s)", "Average (ns)", "Average"),
    "median": ("Med (ns)", "Med (us)", "Med (ms)", "Med (s)", "Median (ns)", "Median"),
    "minimum": ("Min (ns)", "Min (us)", "Min (ms)", "Min (s)", "Minimum (ns)", "Minimum"),
    "maximum": ("Max (ns)", "Max (us)", "Max (ms)", "Max (s)", "Maximum (ns)", "Maximum"),
    "stddev": ("StdDev (ns)", "StdDev (us)", "StdDev (ms)", "StdDev (s)", "StdDev", "Std Dev"),
}


def is_nsys_header(cells: list[str]) -> bool:
    """A kernel summary header: a Name column, a total time and an instance count."""
    folded = {" ".join(cell.lower().split()) for cell in cells}
    has_total = any(cell.startswith("total time") for cell in folded)
    return "name" in folded and has_total and ("instances" in folded or "count" in folded)


def _unit_of(title: str) -> str:
    """'Avg (ns)' → 'ns'; titles without a unit are in nanoseconds (older nsys)."""
    match = _UNIT_IN_TITLE.search(title)
    return match.group(1).strip() if match else "ns"


class _Columns:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.name = table.require("Name")
        self.instances = table.require(*_TITLES["instances"])
        self.total = table.require(*_TITLES["total"])
        self.optional = {key: table.column(*titles) for key, titles in _TITLES.items()}

    def seconds(self, row: Row, index: int | None, what: str, required: bool = False) -> float | None:
        if index is None:
            return None
        text = row.cells[index]
        if is_missing(text):
            if required:
                raise ProfileError(f"the {what} cell is empty", self.table.source, row.line)
            return None
        try:
            number = parse_number(text)
        except ValueError:
            raise ProfileError(
                f"the '{self.table.header[index]}' cell should be a number; found '{text.strip()}'",
                self.table.source,
                row.line,
            ) from None
        unit = base_unit(_unit_of(self.table.header[index]))
        if unit.symbol != "s":
            raise ProfileError(f"the column '{self.table.header[index]}' is not in a time unit", self.table.source, self.table.header_line)
        return float(to_base(number, unit))

    def times(self, row: Row) -> KernelTimes:
        name = row.cells[self.name].strip()
        if not name:
            raise ProfileError("the Name cell is empty", self.table.source, row.line)
        instances_text = row.cells[self.instances]
        try:
            instances = parse_number(instances_text)
        except ValueError:
            instances = -1
        if not isinstance(instances, int) or instances < 0:
            raise ProfileError(
                f"Instances should be a whole number; found '{instances_text.strip()}'", self.table.source, row.line
            )
        percent_index = self.optional["percent"]
        percent: float | None = None
        if percent_index is not None and not is_missing(row.cells[percent_index]):
            try:
                percent = float(parse_number(row.cells[percent_index]))
            except ValueError:
                raise ProfileError(
                    f"Time (%) should be a number; found '{row.cells[percent_index].strip()}'",
                    self.table.source,
                    row.line,
                ) from None
        total = self.seconds(row, self.total, "Total Time", required=True)
        assert total is not None
        return KernelTimes(
            kernel_name=name,
            instances=instances,
            total_time=total,
            average=self.seconds(row, self.optional["average"], "average"),
            median=self.seconds(row, self.optional["median"], "median"),
            minimum=self.seconds(row, self.optional["minimum"], "minimum"),
            maximum=self.seconds(row, self.optional["maximum"], "maximum"),
            stddev=self.seconds(row, self.optional["stddev"], "stddev"),
            time_percent=percent,
            line=row.line,
        )


def read_nsys_text(text: str, source: str = "nsys.csv") -> Profile:
    """Parse an nsys kernel-summary CSV; ProfileError with a line number on a malformed file."""
    try:
        table = read_table(text, source, is_nsys_header, WHAT, stop_at_blank=True)
    except ProfileError as exc:
        skipped = next((line.strip() for line in text.splitlines() if "SKIPPED" in line), None)
        if skipped is not None and exc.line is None:
            raise ProfileError(f"nsys wrote no kernel table: {skipped}", source) from None
        raise
    columns = _Columns(table)
    summaries = tuple(columns.times(row) for row in table.rows)
    if not summaries:
        raise ProfileError("the table has a header but no kernels", source, table.header_line)
    layout = CURRENT if table.column(*_TITLES["median"]) is not None or table.column("Avg (ns)") is not None else OLDER
    return Profile(tool=NSYS, layout=layout, source=source, summaries=summaries)


def read_nsys_csv(path: str | Path) -> Profile:
    """Read an nsys kernel-summary CSV file."""
    from workbench.profilers.reader import read_text

    file = Path(path)
    return read_nsys_text(read_text(file), file.name)
