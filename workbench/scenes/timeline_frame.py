"""What one frame of the Timeline plot draws for a view range: the bars in view, sub-pixel runs merged, the labels.

Pure arithmetic on arrays (numpy, no Qt), so that a frame costs what is in view, not what the step holds: a
traced training step has thousands of operations, and a pan or zoom must repaint within 16 ms.

`LaneBars` holds a step's bars (start, end, lane and a style number each), sorted once by lane and start.
`LaneBars.frame(x0, x1, pixel)` gives, for the view range [x0, x1] at `pixel` seconds a pixel:

- the bars that intersect the range (a bar touching an edge counts): the only ones drawn;
- runs merged: consecutive bars of one style on one lane, each narrower than `NARROW_PX` pixels and at most a
  pixel apart, become one bar from the first's start to the last's end (drawn one by one they would be a
  solid block of outlines anyway), so what is drawn is bounded by the plot's width in pixels;
- the label candidates: the widest bars in view, at most `limit`, widest first (ties by line order, so a pan
  keeps the same names and changes only at the edges).

Which labels fit (a name drawn only where its bar, clipped to the view, is wider than the name) is the view's
to decide: it measures the text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NARROW_PX = 2.0  # a bar narrower than this many pixels may be merged with its neighbours on the lane
GAP_PX = 1.0  # neighbours at most this many pixels apart merge


@dataclass(frozen=True)
class Frame:
    """What a frame draws: per style, the bars' (x0, x1, lane) arrays after merging; the label candidates."""

    visible: np.ndarray  # indices (into the step's order) of every bar intersecting the range, ascending
    bars: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]  # style → (x0, x1, lane)
    labels: np.ndarray  # indices of the widest bars in view, widest first

    def drawn(self) -> int:
        """How many rectangles the frame draws."""
        return sum(len(x0) for x0, _, _ in self.bars.values())


class LaneBars:
    """A step's bars, sorted by (style, lane, start) once; `frame` picks what a view range draws."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray, lanes: np.ndarray, styles: np.ndarray) -> None:
        starts, ends = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
        lanes, styles = np.asarray(lanes, dtype=float), np.asarray(styles, dtype=int)
        if not (len(starts) == len(ends) == len(lanes) == len(styles)):
            raise ValueError("starts, ends, lanes and styles must have one entry per bar")
        ends = np.maximum(ends, starts)
        self.starts, self.ends, self.lanes, self.styles = starts, ends, lanes, styles
        self.order = np.lexsort((starts, lanes, styles))  # runs to merge are neighbours in this order
        self.widths = ends - starts

    def __len__(self) -> int:
        return len(self.starts)

    def in_view(self, x0: float, x1: float) -> np.ndarray:
        """Indices of the bars intersecting [x0, x1], ascending."""
        return np.flatnonzero((self.ends >= x0) & (self.starts <= x1))

    def frame(self, x0: float, x1: float, pixel: float, limit: int) -> Frame:
        """What the range [x0, x1] draws at `pixel` seconds a pixel (0: not laid out yet, nothing merged),
        with at most `limit` label candidates."""
        visible = self.in_view(x0, x1)
        shown = np.zeros(len(self), dtype=bool)
        shown[visible] = True
        rows = self.order[shown[self.order]]  # the visible bars in (style, lane, start) order
        left, right, lane, style = self.starts[rows], self.ends[rows], self.lanes[rows], self.styles[rows]
        if pixel > 0 and len(rows) > 1:
            narrow = (right - left) < NARROW_PX * pixel
            joins = np.zeros(len(rows), dtype=bool)
            joins[1:] = (narrow[1:] & narrow[:-1] & (lane[1:] == lane[:-1]) & (style[1:] == style[:-1])
                         & (left[1:] - right[:-1] <= GAP_PX * pixel))
            firsts = np.flatnonzero(~joins)
            left, right, lane, style = left[firsts], np.maximum.reduceat(right, firsts), lane[firsts], style[firsts]
        bars = {}
        for code in np.unique(style):
            chosen = style == code
            bars[int(code)] = (left[chosen], right[chosen], lane[chosen])
        labels = visible[np.lexsort((visible, -self.widths[visible]))[: max(limit, 0)]]
        return Frame(visible, bars, labels)


__all__ = ["Frame", "LaneBars", "NARROW_PX", "GAP_PX"]
