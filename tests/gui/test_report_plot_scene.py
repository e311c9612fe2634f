"""The report's roofline picture is drawn from the same scene as the window's."""

from __future__ import annotations

from workbench.documents.examples import load_example
from workbench.gui import roofline_labels


def test_the_report_plot_is_drawn_from_the_roofline_scene(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.export import REPORT_PLOT_SIZE, session_plot_png

    scenes = []
    made = roofline_labels.roofline_scene

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        scenes.append(made(*args, **kwargs))
        return scenes[-1]

    monkeypatch.setattr(roofline_labels, "roofline_scene", recorded)
    session_plot_png(load_example("gemm-4096-fp16"))
    assert scenes, "the report's plot laid out no scene"
    scene = scenes[-1]
    width, height = REPORT_PLOT_SIZE
    assert 0.5 * width < scene.view.width <= width and 0.5 * height < scene.view.height <= height
    operation = scene.label("operation 0")
    assert operation is not None and operation.box is not None  # the example's one operation, labelled
    assert scene.label("memory") is not None
