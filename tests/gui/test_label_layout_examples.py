"""Roofline labels in the window: for every example at three text sizes, none overlaps another, covers a
point or is crossed by a roof — checked on the layout the view computed (workbench.scenes.label_layout), not on pixels."""

from __future__ import annotations

import pytest

from workbench.gui.window import DEFAULT_FONT_POINTS

from legend_checks import legend_faults
from workbench.documents.examples import list_examples
from workbench.gui.roofline_view import LABELS_ALL, LABELS_NONE, LABELS_SELECTED

TEXT_SIZES = (10.0, 13.0, 16.0)  # normal, Ctrl++ three times, presentation
# The window these tests lay the labels out in: its plot is 569×475 px (where the text size is changed, the labels are
# laid out before the window does so again), the plot the measured bounds below were taken on.
WINDOW = (1600, 919)


@pytest.fixture(autouse=True)
def normal_text_afterwards(window):  # type: ignore[no-untyped-def]
    """The application font is global: put it back so later tests start at the normal size."""
    yield
    window.set_font_points(DEFAULT_FONT_POINTS)


def laid_out(window):  # type: ignore[no-untyped-def]
    roofline = window.roofline
    roofline.refresh()
    roofline._place_labels()
    assert roofline.label_layout is not None
    return roofline.label_layout


@pytest.mark.parametrize("key", [key for key, _ in list_examples()])
def test_every_example_at_three_text_sizes_has_labels_that_collide_with_nothing(window, key: str) -> None:  # type: ignore[no-untyped-def]
    window.resize(*WINDOW)
    window.open_example(key)
    window.tabs.setCurrentWidget(window.roofline)
    for points in TEXT_SIZES:
        window.set_font_points(points)
        placed = laid_out(window)
        assert placed.faults() == [], f"{key} at {points:g} pt"
        # the legend covers no point (at 16 pt the data-parallel step's legend, grown by the labels whose room it
        # took in a bottom corner, once climbed over its GEMM at 1 PFLOP/s: labels that would grow it so are left out)
        assert legend_faults(window.roofline) == [], f"{key} at {points:g} pt"
        operations = [p for p in placed.layout.placements if p.key.startswith("operation")]
        assert len(operations) == len(window.document.operations)
        # Every operation's label finds room at the normal sizes. A roof label with no free place beside its own
        # roof (a small plot at a large text size: the hierarchical roofline's extra roofs leave less room) is
        # listed in the legend instead, never placed far from its roof or over something; and at 16 pt on this
        # small plot an operation's label may be too: the legend takes a corner that covers no point (top left
        # covers the data-parallel step's GEMM at 1 PFLOP/s), and the room it takes there was that label's.
        left_out = placed.layout.unplaced
        legend = window.roofline.plot.legend
        legend_texts = [label.text for _, label in legend.items] if legend is not None else []
        # A label in neither place was left out: listing it would have grown the legend over a point (the
        # roofline's listing says which; an operation's point still names it on hover).
        kept_out = set(left_out) - window.roofline._listed
        for operation in [k for k in left_out if k.startswith("operation")]:
            assert points > 13.0, f"{key} at {points:g} pt: no room for {left_out}"
            row = int(operation.split()[1])
            name = window.document.operations[row].name
            if operation in kept_out:
                assert window.roofline._tip(row).startswith(name)
            else:
                assert any(text.startswith(name) for text in legend_texts), f"{key} at {points:g} pt: {name} is nowhere"
        for roof in [k for k in left_out if not k.startswith("operation")]:
            title = window.roofline._roof_texts[roof][0]
            assert roof in kept_out or title in legend_texts, f"{key} at {points:g} pt: {roof} neither beside its roof nor in the legend"
        if points <= 13.0:  # at the normal sizes the compute roofs and the HBM roof are labelled on the plot
            assert not [k for k in left_out if k == "memory" or k.startswith("roof")], f"{key} at {points:g} pt: {left_out}"
        # what is drawn is what was laid out: each shown label sits at its box
        shown = [label for label in window.roofline.point_labels.items[: window.roofline.point_labels.used] if label.isVisible()]
        assert len(shown) == len([p for p in operations if p.box is not None])  # one left out is in the legend or kept out


@pytest.mark.parametrize("key", [key for key, _ in list_examples()])
def test_at_a_size_too_large_for_the_plot_a_label_goes_to_the_legend_rather_than_over_something(window, key: str) -> None:  # type: ignore[no-untyped-def]
    window.resize(*WINDOW)
    window.open_example(key)
    window.set_font_points(22.0)
    placed = laid_out(window)
    assert placed.faults() == []
    roofline = window.roofline
    legend = roofline.plot.legend
    legend_texts = [label.text for _, label in legend.items] if legend is not None else []
    # the legend covers no point; an operation whose label found no room is listed in it, or left out where
    # listing it would have grown the legend over a point (its point still names it on hover)
    assert legend_faults(roofline) == []
    for key_left_out in placed.layout.unplaced:
        if key_left_out.startswith("operation "):
            row = int(key_left_out.split()[1])
            name = window.document.operations[row].name
            if not any(text.startswith(name) for text in legend_texts):
                assert key_left_out not in roofline._listed and roofline._tip(row).startswith(name), name


@pytest.mark.parametrize("key", [key for key, _ in list_examples()])
def test_the_x_range_grows_for_the_roof_labels_by_at_most_a_decade_on_a_small_plot(window, key: str) -> None:  # type: ignore[no-untyped-def]
    """On a small plot at presentation text size the roof labels cannot all have room right of the points; the
    range stretched for them ran to 1e10 and squeezed the points into a corner. It grows by at most
    ROOF_LABEL_ROOM decades past the end fitted to the points and ridges, and the labels are still laid out
    without a fault."""
    import math

    from workbench.gui.roofline_view import ROOF_LABEL_ROOM

    window.resize(1000, 700)
    window.open_example(key)
    window.tabs.setCurrentWidget(window.roofline)
    window.set_font_points(16.0)
    placed = laid_out(window)
    roofline = window.roofline
    xs = [x for x, _ in roofline._point_positions] + [x for x, _ in roofline._level_marks] + roofline._roof_starts
    fitted = math.ceil(max([*xs, 1.0]) + 1.6)
    x_high = roofline.plot.getViewBox().viewRange()[0][1]
    assert x_high <= fitted + ROOF_LABEL_ROOM, f"{key}: the x axis runs to 1e{x_high:g} for data fitted to 1e{fitted}"
    assert placed.faults() == []


def test_the_batched_gemm_labels_that_moved_have_leaders_to_their_points(window) -> None:  # type: ignore[no-untyped-def]
    window.resize(*WINDOW)
    window.open_example("batched-gemm-sweep")
    window.set_font_points(20.0)
    placed = laid_out(window)
    leaders = [p for p in placed.layout.placements if p.leader_to is not None]
    lines = window.roofline.leader_lines
    assert lines.used == len(leaders)
    assert all(line.isVisible() for line in lines.items[: lines.used])


def test_labels_all_selected_none_and_the_legend_lists_the_unlabelled(window) -> None:  # type: ignore[no-untyped-def]
    window.open_example("attention-naive-vs-fused")
    roofline = window.roofline
    names = [entry.name for entry in window.document.operations]

    window.actions[f"labels_{LABELS_SELECTED}"].trigger()
    placed = laid_out(window)
    assert [p.key for p in placed.layout.placements if p.key.startswith("operation")] == ["operation 0"]
    legend_texts = [label.text for _, label in roofline.plot.legend.items]
    assert any(text.startswith(names[1]) for text in legend_texts) and not any(text.startswith(names[0]) for text in legend_texts)

    window.actions[f"labels_{LABELS_NONE}"].trigger()
    placed = laid_out(window)
    assert not [p for p in placed.layout.placements if p.key.startswith("operation")]
    assert not any(label.isVisible() for label in roofline.point_labels.items)
    legend_texts = [label.text for _, label in roofline.plot.legend.items]
    assert all(any(text.startswith(name) for text in legend_texts) for name in names)
    assert window.settings.value("view/labels") == LABELS_NONE

    window.actions[f"labels_{LABELS_ALL}"].trigger()
    legend_texts = [label.text for _, label in roofline.plot.legend.items]
    assert not any(text.startswith(name) for name in names for text in legend_texts)


# Leaders that run through something (another label, roof labels included, or another point) and roofs crossed by
# a leader, as measured on this layout (in WINDOW) with `leader_tangles`: at most these many per example and
# text size (the same whether this file runs whole or this test alone, now that every GUI test starts at the
# start-up text size: tests/gui/conftest.py). Not zero: where points sit on a compute roof and the next roofs lie
# a text line or less below, every free place within reach of the point lies beyond a roof (the bands between
# packed roofs are narrower than a label or taken by the roofs' own labels), and at 16 pt the batched-GEMM sweep's
# six labels share one corner of the plot. Weighing roof crossings as tangles was tried (label_layout.ROOF_WEIGHT)
# and removed none of these. A change to the layout that lets more of them through fails here; one that removes
# some should lower the bound.
THROUGH_OR_ACROSS_ROOFS = {
    "gemm-4096-fp16": (0, 2, 9),
    "vector-add": (0, 0, 1),
    "knowledge-check": (0, 0, 0),
    "attention-naive-vs-fused": (1, 7, 9),
    "conv2d": (1, 5, 7),
    "batched-gemm-sweep": (8, 18, 21),
    "data-parallel-step": (1, 4, 10),
    "gemm-naive-tiled-cublas": (1, 4, 8),
    "one-add-two-implementations": (1, 1, 3),  # the vectorized add's leader crosses the library add's lowered roof
}


@pytest.mark.parametrize("key", [key for key, _ in list_examples()])
def test_every_example_at_three_text_sizes_has_leaders_that_cross_no_other_leader(window, key: str) -> None:  # type: ignore[no-untyped-def]
    """Which label is whose must read without untangling leaders: no two leaders cross, for any example at 10, 13
    and 16 pt (without the leader weighing in label_layout, the batched-GEMM sweep's leaders crossed).
    Leaders through labels or across roofs stay within what was measured (THROUGH_OR_ACROSS_ROOFS)."""
    from workbench.scenes.label_layout import leader_tangles

    window.resize(*WINDOW)
    window.open_example(key)
    window.tabs.setCurrentWidget(window.roofline)
    for points, bound in zip(TEXT_SIZES, THROUGH_OR_ACROSS_ROOFS[key]):
        window.set_font_points(points)
        placed = laid_out(window)
        tangles = leader_tangles(placed.layout, placed.roofs, placed.marks)
        crossings = [t for t in tangles if "'s leader crosses '" in t]
        assert crossings == [], f"{key} at {points:g} pt: {crossings}"
        others = [t for t in tangles if "'s leader crosses '" not in t]
        assert len(others) <= bound, f"{key} at {points:g} pt: {others}"


# The window's height on the 1600×1000 screen of the screenshots: the whole screen, and 32 px less, which gives the
# plot the height X11 leaves it in a 1000 px window (there the tab page is 32 px shorter than offscreen): the
# presentation screenshot's legend covered the batched-GEMM sweep's points at that height.
SCREEN_HEIGHTS = (1000, 968)


@pytest.mark.parametrize("height", SCREEN_HEIGHTS)
@pytest.mark.parametrize("key", [key for key, _ in list_examples()])
def test_every_example_in_presentation_on_a_1600_by_1000_screen_has_its_legend_clear_of_the_points(  # type: ignore[no-untyped-def]
    window, monkeypatch, key: str, height: int
) -> None:
    """The legend is a white box over the plot: where it is shown (roofs or operations whose label found no room,
    measured runs), it takes a corner of the plot that covers no operation's point, and fits in the plot. At
    presentation size on the 1600×1000 screen of the screenshots, every example, once the window is settled."""
    import time

    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QApplication

    monkeypatch.setattr(window, "available_screen", lambda: QRect(0, 0, 1600, 1000))
    window.resize(1600, height)
    window.open_example(key)
    window.tabs.setCurrentWidget(window.roofline)
    window.set_presentation(True)
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)
    placed = laid_out(window)
    assert placed.faults() == []
    assert legend_faults(window.roofline) == [], f"{key} in a 1600×{height} window"
