"""Checks on the roofline's legend shared by the GUI tests (tests/gui is on the import path when they run)."""

from __future__ import annotations

from workbench.gui.plot_common import box_around, scene_box
from workbench.gui.roofline_view import OPERATION_RADIUS
from workbench.scenes.label_layout import boxes_overlap


def legend_faults(roofline) -> list[str]:  # type: ignore[no-untyped-def]
    """What is wrong with the legend where it is drawn: a point of an operation under it (the legend is a white
    box: a point there is hidden), or a box running out of the view. Measured on the scene (the legend item's
    rectangle in the view box's pixels) against each operation's mark box worked out from its position and the
    view's range here, not from what the roofline's layout thought."""
    legend = roofline.plot.legend
    if legend is None or not legend.isVisible() or not legend.items:
        return []
    view = roofline.plot.getViewBox()
    width, height = view.width(), view.height()
    (x_low, x_high), (y_low, y_high) = view.viewRange()
    box = scene_box(view, legend)
    faults = []
    for row, (x, y) in zip(roofline._point_rows, roofline._point_positions):
        px = (x - x_low) / (x_high - x_low) * width
        py = (y_high - y) / (y_high - y_low) * height
        if boxes_overlap(box, box_around(px, py, OPERATION_RADIUS)):
            faults.append(f"the legend {tuple(round(v) for v in box)} covers operation {row}'s point at ({px:.0f}, {py:.0f})")
    if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
        faults.append(f"the legend {tuple(round(v) for v in box)} runs out of the {width:.0f}×{height:.0f} view")
    return faults
