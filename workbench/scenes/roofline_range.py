"""The roofline's fitted range: every point in view with room around it, and room right of the points for the
compute roofs' labels. Plain arithmetic in log10 units and pixels, no Qt: the window's view fits its plot with it
and tests check it without a window."""

from __future__ import annotations

import math
from typing import Sequence

from workbench.scenes.roofline_state import ViewRange

ROOF_REACH = 8.0  # decades the roofs run past the fitted range, so a panned view still shows them
ROOF_LABEL_ROOM = 1.0  # decades the fitted range may grow to its right for the roof labels (`label_room_end`)


def fitted_range(
    points_x: tuple[float, float], points_low_y: float, ridges: Sequence[float], roof_heights: Sequence[float],
    log_bandwidth: float, points_high_y: float = -math.inf,
) -> tuple[ViewRange, float]:
    """The range that shows every point (`points_x`: the least and greatest log intensity of every mark;
    `points_low_y` and `points_high_y`: the least and greatest log rate; infinities for none), every roof's ridge
    and a decade around them, and the top roof with air above it, or the highest mark with that air where a mark
    is above every roof (a run faster than its device allows, a kernel measured on a faster device); and the top
    roof's height (log rate: the highest compute roof, or without one where the memory roof leaves the range)."""
    low_x, high_x = points_x
    x_low = math.floor(min([low_x, *ridges, 0.0]) - 1.0)
    x_high = math.ceil(max([high_x, *ridges, 1.0]) + 1.6)  # room for the roof labels right of every point
    top = max(list(roof_heights) or [log_bandwidth + x_high])
    y_high = max(top, points_high_y) + 0.45
    y_low = math.floor(min([points_low_y, log_bandwidth + x_low + 0.5, top - 4]) - 0.4)
    return (x_low, x_high, y_low, y_high), top


def label_room_end(width: float, need: float, rightmost: float, roof_starts: Sequence[float], x_low: float,
                   x_high: float) -> float:
    """The fitted range's right end: half a decade past the rightmost point or ridge (taken to the next half
    decade), and further (in half decades) until `need` pixels (the widest roof label) fit right of both in a plot
    `width` pixels wide, but never more than `ROOF_LABEL_ROOM` decades past the end fitted to the data (`x_high`).

    On a small plot, or at presentation size, the labels cannot all have that room (each added decade narrows
    every decade): a range stretched for them (it ran to 1e10) squeezed the points into a corner, their labels
    onto long leaders. A roof label without room right of the points goes along its roof between them, on it,
    or in its short text (`label_layout`).
    """
    # Right of every point and of every roof's start (its ridge), taken to the next half decade: a point that
    # moves within a half decade (a digit typed and taken out again) keeps the range, which otherwise
    # flipped on each keystroke wherever the room needed fell between the two positions.
    clear = math.ceil(2 * max([rightmost, *roof_starts])) / 2
    end = math.ceil(2 * (clear + 0.5)) / 2
    limit = x_high + ROOF_LABEL_ROOM
    while width > 0 and end < limit and (end - clear) * width / (end - x_low) < need:
        end += 0.5
    return end
