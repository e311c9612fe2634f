"""The roofline with a model's worth of operations: a bounded number of labels, the rest counted in the legend,
hover naming any point, pins kept."""

from __future__ import annotations

from workbench.gui.roofline_view import LABELS_NONE
from workbench.scenes.label_layout import EVERY_LABEL_UP_TO, FEW_LABELS
from workbench.scenes.legend_corner import TOP_RIGHT
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
    keys = [label.key for label in roofline.label_layout.point_labels]
    assert keys[0] == "operation 9"  # the selected operation's label laid out first
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


def test_the_view_draws_the_labels_and_legend_its_scene_holds(window) -> None:  # type: ignore[no-untyped-def]
    """What is decided is the scene's (tests/test_roofline_scene.py); the view shows each label the scene placed at
    its box, hides the others, and lists the scene's legend rows in its corner."""
    roofline = many_adds(window)
    window.set_label_mode(LABELS_NONE)
    roofline._place_labels()
    scene = roofline.scene
    assert scene is not None and scene.legend is not None
    assert legend_texts(roofline) == [row.text for row in scene.legend.rows]
    legend = roofline.plot.legend
    assert legend.isVisible() and (legend.opts["offset"][0] < 0) == scene.legend.corner.right
    assert not any(item.isVisible() for item in roofline.point_labels.items)
    roofline.set_legend_corner(TOP_RIGHT)  # a corner chosen by the user: the scene keeps it, the view draws it there
    assert roofline.scene.legend.corner == TOP_RIGHT
    assert legend.opts["offset"][0] < 0 < legend.opts["offset"][1]
    roofline.set_legend_corner(None)
    window.set_label_mode("all")
    roofline._place_labels()
    scene = roofline.scene
    view = scene.view
    for index, item in zip(roofline._labelled, roofline.point_labels.items[: roofline.point_labels.used]):
        label = scene.label(f"operation {roofline._point_rows[index]}")
        assert item.isVisible() == (label is not None and label.box is not None)
        if item.isVisible():
            assert item.plain_text() == label.text
            assert (item.pos().x(), item.pos().y()) == view.at(label.box[0], label.box[1])
    assert roofline.ridge_label.isVisible() == (scene.ridge is not None)
