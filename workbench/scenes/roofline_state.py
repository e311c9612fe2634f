"""What a roofline view shows besides the document: its range (fitted, or fixed by the user), the memory levels
switched off, which operations are labelled and the legend's corner. Plain data, no Qt: the window's view holds
one (`RooflineView.state`) and `workbench.scenes.roofline_scene` reads it."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.scenes.legend_corner import Corner

LABELS_ALL, LABELS_SELECTED, LABELS_NONE = "all", "selected", "none"  # View ▸ Labels
LABEL_MODES = (LABELS_ALL, LABELS_SELECTED, LABELS_NONE)

ViewRange = tuple[float, float, float, float]  # x low, x high, y low, y high (log10 units)


@dataclass(frozen=True)
class RooflineViewState:
    """One roofline view's own settings.

    `fixed_range`: the range the user zoomed or panned to (edits keep it until a fit); None while the view fits
    the data. `hidden_levels`: interface keys whose roof and points are switched off. `label_mode`: which
    operations carry a label on the plot (`LABEL_MODES`; the legend lists the others). `legend_corner`: the
    corner the legend must take, or None to let the scene choose the first that covers no mark. `font_key`: the
    labels' font (the presentation size changes it): a layout made for another font is not kept.
    """

    fixed_range: ViewRange | None = None
    hidden_levels: frozenset[str] = frozenset()
    label_mode: str = LABELS_ALL
    legend_corner: Corner | None = None
    font_key: str = ""

    def __post_init__(self) -> None:
        if self.label_mode not in LABEL_MODES:
            raise ValueError(f"unknown label mode {self.label_mode!r}")

    @property
    def held(self) -> bool:
        """True while the range is the user's, not fitted."""
        return self.fixed_range is not None

    def labels(self, row: int, current: int) -> bool:
        """Whether operation `row` carries a label on the plot in this mode (`current`: the selected row)."""
        return self.label_mode == LABELS_ALL or (self.label_mode == LABELS_SELECTED and row == current)
