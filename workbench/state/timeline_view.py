"""What the Timeline tab shows besides the document: the what-if speed-ups, the match rules typed for an imported
trace and the grouping of the where-the-time-goes table; and what follows from them and a step's timeline: the
lanes and their bars' styles, which lanes are named, the critical path's line, the range fitted, the critical
path as the summary names it, and the measured plot of an imported trace (its window, lanes, bars and labels).

Plain data and pure functions, no Qt: the window's `TimelineView` holds one `TimelineViewState` and draws what
these return; tests check the decisions without a window. The imported trace itself stays with the view: it is a
file's content, not a choice (and, like the what-ifs, it is not saved in the session).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Collection, Sequence

import numpy as np

from workbench.documents.breakdown import KIND
from workbench.model.naming import abbreviated_path
from workbench.model.units import format_time
from workbench.profilers.matching import MatchRule
from workbench.scenes.timeline_frame import LaneBars
from workbench.steps import MeasuredTrace, StepPlan, Timeline, parse_trace_match

LONG_PATH_CHARACTERS = 90  # a critical path abbreviated to more than this names only its first and last operation
CRITICAL_LINE_LIFT = 0.36  # the critical path's line runs this far (in lanes) above its bars, clear of their names
STEP_X_PADDING = 0.02  # the step plot fitted with this share of the step time on either side
MAX_TRACE_BARS = 4000  # intervals drawn around the matched ones; the rest are in the trace, not on screen
MAX_UNMATCHED_LINES = 50
# The step plot's bar styles by number: compute 0, compute on the critical path 1, communication 2, on the path 3.
COMPUTE, COMPUTE_CRITICAL, COMMUNICATION, COMMUNICATION_CRITICAL = 0, 1, 2, 3


@dataclass(frozen=True)
class TimelineViewState:
    """One Timeline tab's own settings: `speedups`, (operation, factor) for each what-if in the order they were
    set (an operation runs `factor` times faster; 1.0 is none); `match_rules`, the rules as typed
    ('PATTERN=OPERATION; …'); `breakdown_by`, the where-the-time-goes table's grouping (KIND or MODULE)."""

    speedups: tuple[tuple[str, float], ...] = ()
    match_rules: str = ""
    breakdown_by: str = KIND

    def speedup_map(self) -> dict[str, float]:
        return dict(self.speedups)

    def with_speedup(self, name: str, factor: float) -> TimelineViewState:
        """`name` runs `factor` times faster (1.0: the what-if taken away); a new what-if comes last."""
        if factor == 1.0:
            kept = tuple((other, value) for other, value in self.speedups if other != name)
        elif any(other == name for other, _ in self.speedups):
            kept = tuple((other, factor if other == name else value) for other, value in self.speedups)
        else:
            kept = (*self.speedups, (name, factor))
        return replace(self, speedups=kept)

    def keeping_speedups(self, names: Collection[str]) -> TimelineViewState:
        """Only the what-ifs of operations among `names` (the step as edited now)."""
        kept = tuple((name, factor) for name, factor in self.speedups if name in names)
        return self if kept == self.speedups else replace(self, speedups=kept)

    def rules(self, plan: StepPlan) -> list[MatchRule]:
        """The match rules typed, 'PATTERN=OPERATION' separated by ';' (a WorkbenchError names a bad rule)."""
        return [parse_trace_match(part.strip(), plan) for part in self.match_rules.split(";") if part.strip()]


def path_text(critical_path: Sequence[str]) -> tuple[str, str]:
    """The critical path as the summary names it (its ends and how many between, where it is long; a traced
    model's module paths are long: then one name at each end) and the whole path for its tooltip ('' when the
    summary shows it whole)."""
    whole, shown = " → ".join(critical_path), abbreviated_path(tuple(critical_path))
    if len(shown) > LONG_PATH_CHARACTERS:
        shown = abbreviated_path(tuple(critical_path), each_end=1)
    return shown, ("" if shown == whole else f"Critical path ({len(critical_path):,} operations): {whole}")


def named_lanes(lanes: int, room_px: float, line_px: float) -> list[int]:
    """The lanes named on the axis: every lane where the plot has a line of room for each, else every second,
    third, … (lane 0 always), so that names never run over each other; every lane before the plot has a size."""
    every = max(1, math.ceil(lanes * line_px / room_px)) if room_px > 0 else 1
    return list(range(0, lanes, every))


def critical_line(timeline: Timeline, lane: dict[str, int]) -> tuple[list[float], list[float]]:
    """The critical path as a polyline just above its bars: along a lane from an operation's start to its end and
    on to the next one's, stepping between lanes where the path does. Points inside a straight run along one lane
    are left out (the line is the same), so a path of thousands of operations on one stream is a few segments."""
    by_name = {item.name: item for item in timeline.placed}
    points = []
    for name in timeline.critical_path:
        item = by_name[name]
        y = lane[item.stream] + CRITICAL_LINE_LIFT
        points += [(item.start, y), (item.end, y)]
    kept = [point for index, point in enumerate(points)
            if index in (0, len(points) - 1) or not (points[index - 1][1] == point[1] == points[index + 1][1])]
    return [x for x, _ in kept], [y for _, y in kept]


@dataclass(frozen=True)
class StepLanes:
    """The step plot: a lane per stream, the bars on them (style numbers as above), the operations' names in the
    bars' order, the critical path's line, and the range fitted to the step (x: seconds, y: lanes)."""

    streams: tuple[str, ...]
    bars: LaneBars
    names: tuple[str, ...]
    critical: tuple[list[float], list[float]]
    x_range: tuple[float, float]
    y_range: tuple[float, float]


def step_lanes(timeline: Timeline) -> StepLanes:
    """What the step plot draws for `timeline`: one lane per stream in the step's order."""
    streams = tuple(timeline.plan.streams())
    lane = {stream: index for index, stream in enumerate(streams)}
    critical = set(timeline.critical_path)
    placed = timeline.placed
    count = len(placed)
    starts = np.fromiter((item.start for item in placed), dtype=float, count=count)
    ends = np.fromiter((item.end for item in placed), dtype=float, count=count)
    lanes = np.fromiter((lane[item.stream] for item in placed), dtype=float, count=count)
    styles = np.fromiter(((COMMUNICATION if item.communication else COMPUTE) + (item.name in critical) for item in placed),
                         dtype=int, count=count)
    pad = STEP_X_PADDING * timeline.step_time
    return StepLanes(streams, LaneBars(starts, ends, lanes, styles), tuple(item.name for item in placed),
                     critical_line(timeline, lane), (-pad, timeline.step_time + pad), (-0.7, len(streams) - 0.2))


@dataclass(frozen=True)
class TraceOperation:
    """One matched operation on the measured plot, over its first iteration (seconds from the trace's start;
    `lane`: its first kernel's lane): its label (text, tooltip, centred on its longest kernel) and its bound."""

    name: str
    start: float
    end: float
    lane: int
    label: str
    tip: str
    label_x: float
    label_lane: int
    bound_s: float | None


@dataclass(frozen=True)
class TracePlot:
    """The measured plot: the lanes named (index, label), the intervals drawn grey (x0s, x1s, lanes), the matched
    kernels (x0, x1, lane, communication), the operations, and the range (seconds from the trace's start)."""

    lanes: tuple[tuple[int, str], ...]
    grey: tuple[list[float], list[float], list[int]]
    matched: tuple[tuple[float, float, int, bool], ...]
    operations: tuple[TraceOperation, ...]
    x_range: tuple[float, float]
    y_range: tuple[float, float]


def rows_in_window(measured: MeasuredTrace, low: int, high: int, limit: int = MAX_TRACE_BARS) -> list[int]:
    """The trace's rows overlapping [low, high] ns, at most `limit`, without a Python pass over a large trace."""
    _, starts, ends = measured.trace.columns()
    return [int(i) for i in np.flatnonzero((ends >= low) & (starts <= high))[:limit]]


def trace_plot(measured: MeasuredTrace, times: Timeline | None = None) -> TracePlot:
    """The measured timeline around the matched intervals (a twentieth of their span either side), a lane per
    trace stream that has a row in it; `times`: the step's timeline, whose bounds go beside each operation."""
    trace, origin = measured.trace, measured.origin_ns
    matches = measured.matches
    if matches:
        window = (min(match.first.start_ns for match in matches.values()), max(match.first_end_ns for match in matches.values()))
    else:
        window = (origin, max(trace.end[:MAX_TRACE_BARS]) if len(trace) else origin)
    margin = (window[1] - window[0]) // 20
    low, high = window[0] - margin, window[1] + margin
    shown = rows_in_window(measured, low, high)
    matched_rows = {row: name for name, match in matches.items() for row in match.first_rows}
    streams = sorted({trace.stream[i] for i in shown} | {trace.stream[row] for row in matched_rows})
    lane = {stream: index for index, stream in enumerate(streams)}
    grey = [i for i in shown if i not in matched_rows]
    matched = []
    for row in matched_rows:
        item = trace.interval(row)
        matched.append(((item.start_ns - origin) / 1e9, (item.end_ns - origin) / 1e9, lane[trace.stream[row]], item.communication))
    operations = []
    for name, match in matches.items():
        start, end = (match.first.start_ns - origin) / 1e9, (match.first_end_ns - origin) / 1e9
        longest = max(match.first_rows, key=lambda row: trace.end[row] - trace.start[row])  # the label on its bar
        bound = times.times[name].bound_s if times is not None and name in times.times else None
        operations.append(TraceOperation(
            name, start, end, lane[trace.stream[match.first.index]], f"{name} {format_time(end - start)}",
            f"{name}: {match.detail()}\nkernel: {match.first.name}",  # the full name; the short form is in the detail
            (trace.start[longest] + trace.end[longest] - 2 * origin) / 2e9, lane[trace.stream[longest]], bound,
        ))
    return TracePlot(
        tuple((index, trace.stream_label(stream)) for stream, index in lane.items()),
        ([(trace.start[i] - origin) / 1e9 for i in grey], [(trace.end[i] - origin) / 1e9 for i in grey],
         [lane[trace.stream[i]] for i in grey]),
        tuple(matched), tuple(operations), ((low - origin) / 1e9, (high - origin) / 1e9), (-0.75, len(streams) - 0.4),
    )


def unmatched_lines(measured: MeasuredTrace, limit: int = MAX_UNMATCHED_LINES) -> list[str]:
    """The operations no interval timed, and the kernels and copies no operation took (largest total first, at
    most `limit` of them)."""
    lines = []
    if measured.unmatched_operations:
        lines.append(f"No interval matched: {', '.join(measured.unmatched_operations)} (timed by a run or the bound)")
    lines.append(f"Unmatched kernels and copies ({len(measured.unmatched)} names):" if measured.unmatched
                 else "Every interval matched an operation.")
    for item in measured.unmatched[:limit]:
        lines.append(f"  {item.count:>8,} × {format_time(item.total_s):>10} total   {item.name}")
    if len(measured.unmatched) > limit:
        lines.append(f"  … and {len(measured.unmatched) - limit} more")
    return lines


__all__ = [
    "COMMUNICATION", "COMMUNICATION_CRITICAL", "COMPUTE", "COMPUTE_CRITICAL", "StepLanes", "TimelineViewState",
    "TraceOperation", "TracePlot", "critical_line", "named_lanes", "path_text", "rows_in_window", "step_lanes",
    "trace_plot", "unmatched_lines",
]
