"""The roofline with a model's worth of operations: a bounded number of labels, the rest counted in the legend,
hover naming any point, pins kept."""

from __future__ import annotations

from workbench.gui.roofline_view import LABELS_NONE
from workbench.scenes.label_layout import EVERY_LABEL_UP_TO, FEW_LABELS
from workbench.documents.session import DeviceChoice, OperationEntry, Session

WINDOW = (1600, 919)
COUNT = EVERY_LABEL_UP_TO + 40


def many_adds(window, count: int = COUNT):  # type: ignore[no-untyped-def]
    """`count` vector adds of growing size (the last takes the most time), the tenth selected."""
    operations = [OperationEntry(f"add {n}", f"add(n={2 ** 16 * (n + 1)}, dtype=fp32)") for n in range(count)]
    window.resize(*WINDOW)
    window.document.replace_session(Session(operations=operations, device=DeviceChoice("h100-sxm")))
    window.document.select(9)
    window.tabs.setCurrentWidget(window.roofline)
    roofline = window.roofline
    roofline.refresh()
    roofline._place_labels()
    return roofline


def labelled_rows(roofline) -> set[int]:  # type: ignore[no-untyped-def]
    placed = roofline.label_layout
    return {int(p.key.split()[1]) for p in placed.layout.placements if p.key.startswith("operation ")}


def legend_texts(roofline) -> list[str]:  # type: ignore[no-untyped-def]
    return [text for text, _, _ in roofline._legend_rows]


def test_a_large_session_labels_the_selected_operation_and_the_longest(window) -> None:  # type: ignore[no-untyped-def]
    roofline = many_adds(window)
    rows = labelled_rows(roofline)
    assert rows == {9, *range(COUNT - FEW_LABELS + 1, COUNT)}  # the selected, and the largest adds
    assert roofline.point_labels.used == FEW_LABELS  # label items only for those
    assert roofline.label_layout.faults() == []
    assert f"+{COUNT - FEW_LABELS} more operations (hover for names)" in legend_texts(roofline)
    assert roofline._tip(0).startswith("add 0")  # an unlabelled point is named on hover


def test_a_pinned_operation_keeps_its_label_and_selecting_another_moves_the_selected_label(window) -> None:  # type: ignore[no-untyped-def]
    roofline = many_adds(window)
    window.actions["pin_label"].trigger()  # View ▸ Labels ▸ Pin: the selected one (row 9)
    assert window.actions["pin_label"].isChecked()
    window.document.select(3)
    assert not window.actions["pin_label"].isChecked()
    roofline.refresh()
    roofline._place_labels()
    rows = labelled_rows(roofline)
    assert {3, 9} <= rows and len(rows) == FEW_LABELS + 1
    window.document.select(9)
    assert window.actions["pin_label"].isChecked()
    window.actions["pin_label"].trigger()
    assert not roofline.is_pinned(window.document.current_entry)


def test_with_labels_off_the_legend_names_the_few_and_counts_the_rest(window) -> None:  # type: ignore[no-untyped-def]
    roofline = many_adds(window)
    window.set_label_mode(LABELS_NONE)
    roofline._place_labels()
    texts = legend_texts(roofline)
    named = [text for text in texts if text.startswith("add ")]
    assert len(named) == FEW_LABELS and any(text.startswith("add 9 ") for text in named)
    assert texts[-1] == f"+{COUNT - FEW_LABELS} more operations (hover for names)"


def test_a_small_session_labels_every_operation(window) -> None:  # type: ignore[no-untyped-def]
    roofline = many_adds(window, EVERY_LABEL_UP_TO)
    assert labelled_rows(roofline) == set(range(EVERY_LABEL_UP_TO))
    assert not any("more operations" in text for text in legend_texts(roofline))



def test_the_selected_operation_is_labelled_first(window) -> None:  # type: ignore[no-untyped-def]
    """On a crowded plot (a model's operations in presentation mode on a 1280 × 720 screen) the labels laid out
    first take the room; the selected operation's goes first, whatever its place among the points."""
    roofline = many_adds(window)
    window.document.select(COUNT - 1)  # the last point of those labelled
    roofline.refresh()
    roofline._place_labels()
    keys = [label.key for label in roofline.label_layout.point_labels]
    assert keys[0] == f"operation {COUNT - 1}" and len(keys) == FEW_LABELS
    assert labelled_rows(roofline) >= {COUNT - 1}
