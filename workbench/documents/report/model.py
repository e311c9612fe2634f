"""What a report says, independent of Markdown, HTML or CSV: the report's data and its shared marks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.model.analysis import Analysis
from workbench.errors import WorkbenchError
from workbench.model.plausibility import ImpossibleResult
from workbench.documents.session import OperationEntry
from workbench.model.units import format_percent

SVG_START = "<svg "  # a plot handed to a report: one <svg> element
NO_VALUE = "–"
IMPOSSIBLE_MARK = "⚠ impossible"


class ReportError(WorkbenchError):
    """A report that cannot be written (an unknown file type, an unwritable folder)."""


@dataclass(frozen=True)
class FormattedTable:
    """A table of already formatted cells."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class ReportRun:
    """What a report shows of one measurement run: the figures of `workbench.measure.runs.run_figures`, as they are."""

    run_id: str
    declaration: str | None
    median_s: float | None
    p10_s: float | None
    p90_s: float | None
    samples_s: tuple[float, ...]
    achieved_byte_per_s: float | None
    achieved_flop_per_s: float | None
    percent_of_bound: float | None
    valid: bool | None
    conditions: tuple[tuple[str, str], ...]
    mode: str | None
    device_name: str = ""  # the device the % of bound is against: the one the run ran on
    device_note: str = ""  # how the device was chosen, when that needs saying
    other_device: bool = False  # the run ran on another device than the session shows
    impossible: ImpossibleResult | None = None
    missed: str = ""  # the assumption of the bound the run misses (analysis/shortfall.py), when it falls short

    @property
    def check_text(self) -> str:
        if self.valid is None:
            return NO_VALUE
        return "passed" if self.valid else "FAILED: not a valid measurement"

    @property
    def percent_text(self) -> str:
        """'42.3 %', with the device beside it when it is not the session's, and the impossible mark."""
        if self.percent_of_bound is None:
            return NO_VALUE
        text = format_percent(self.percent_of_bound)
        if self.other_device:
            text += f" (on {self.device_name.split(' (')[0]})"  # 'Generic CPU', without its details in brackets
        if self.impossible is not None:
            text += f" {IMPOSSIBLE_MARK}"
        return text


@dataclass(frozen=True)
class OperationReport:
    """One operation: its entry, its analysis (or the error that stops it) and its runs."""

    entry: OperationEntry
    analysis: Analysis | None
    error: str | None
    runs: tuple[ReportRun, ...]


@dataclass(frozen=True)
class ProfileSection:
    """One imported profiler file (or the records that are not one) as a titled table with notes."""

    title: str
    table: FormattedTable
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """Everything a rendered report says, independent of Markdown or HTML."""

    title: str
    description: str
    written: str
    device_line: str
    settings_line: str
    rates: FormattedTable
    summary: FormattedTable
    operations: tuple[OperationReport, ...]
    other_runs: tuple[ReportRun, ...]
    profiles: tuple[ProfileSection, ...]
    binary: bool
    steps: tuple["StepSection", ...] = ()
    # A large session (more operations than the plot labels every one of): the summary by kind of operation,
    # and the operations given a section of their own (the ones the plot labels, and those with runs); the
    # summary table then lists those, and the CSV report every operation. None and all for a small session.
    kinds: FormattedTable | None = None
    detailed: tuple[int, ...] | None = None

    def sections(self) -> list[tuple[int, OperationReport]]:
        """The operations with a section, with their numbers in the session (from 1)."""
        chosen = range(len(self.operations)) if self.detailed is None else self.detailed
        return [(index + 1, self.operations[index]) for index in chosen]

    def large_note(self, csv_name: str = "the CSV report") -> str:
        """What a large session's report leaves out, and where it is."""
        if self.detailed is None:
            return ""
        return (f"{len(self.operations):,} operations: this report gives the {len(self.detailed):,} that take the most "
                f"time (those the plot labels) and those with measured runs a section each; {csv_name} "
                "(workbench report SESSION -o FILE.csv) lists every operation.")


@dataclass(frozen=True)
class StepSection:
    """A session's step in a report: where its time goes by kind and by module (workbench.documents.breakdown), or why not."""

    name: str
    step_time: str
    by_kind: FormattedTable
    by_module: FormattedTable
    error: str = ""
    breakdown: Any = None  # the figures behind both tables (workbench.documents.breakdown.Breakdown), for the CSV report
    step_time_s: float | None = None


def check_svg(plot: str | None) -> None:
    """A plot handed to a report is one `<svg>` element (what `report.plot.roofline_plot` draws)."""
    if plot is not None and not (isinstance(plot, str) and plot.startswith(SVG_START)):
        raise ReportError("the plot is not an SVG picture")


def svg_file(plot: str) -> bytes:
    """An `<svg>` element as the contents of an .svg file: the XML declaration, then the element, in UTF-8."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + plot).encode("utf-8")
