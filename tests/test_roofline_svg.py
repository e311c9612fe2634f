"""The roofline drawn as SVG without Qt (`workbench.scenes.roofline_svg`): well-formed, every roof and point where
the marks put them, the labels the scene placed, hostile text as text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from workbench.documents.examples import load_example
from workbench.scenes.plot_style import COLOURS, hex_colour
from workbench.scenes.roofline_marks import PlacedOperation, RooflineMarks, roofline_marks
from workbench.scenes.roofline_state import LABELS_NONE, RooflineViewState
from workbench.scenes.label_layout import clip_to_view
from workbench.scenes.roofline_svg import label_width, plot_view, plot_width, roofline_svg, xml_text

SVG = "{http://www.w3.org/2000/svg}"
SIZE = (960.0, 600.0)


def _marks(key: str, names: dict[int, str] | None = None, current: int = 0) -> RooflineMarks:
    session = load_example(key)
    device = session.device.resolve()
    operations = [PlacedOperation(row, (names or {}).get(row, entry.name), session.analyze(entry, device))
                  for row, entry in enumerate(session.operations)]
    return roofline_marks(device, operations, current=current, width=plot_width(SIZE), text_width=label_width)


def _texts(root: ET.Element, css: str) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text") if node.get("class") == css]


def test_the_svg_draws_every_roof_and_point_and_the_labels() -> None:
    marks = _marks("gemm-naive-tiled-cublas", current=1)
    root = ET.fromstring(roofline_svg(marks, size=SIZE))
    assert root.tag == f"{SVG}svg" and (root.get("width"), root.get("height")) == ("960", "600")
    lines = [node for node in root.iter(f"{SVG}line") if (node.get("class") or "").startswith("roof")]
    assert len(lines) == len(marks.roofs)  # every roof crosses the view
    selected = [node for node in lines if node.get("class") == "roof compute-selected"]
    assert [node.get("stroke") for node in selected] == [hex_colour(COLOURS["selected"])]
    view, _ = plot_view(marks, SIZE)
    memory = next(roof for roof in marks.roofs if roof.key == "memory")
    clipped = clip_to_view(view.segment(memory.segment), view.width, view.height)
    drawn = next(node for node in lines if node.get("class") == "roof memory")
    assert clipped is not None
    assert [float(drawn.get(a) or 0) for a in ("x1", "y1", "x2", "y2")] == pytest.approx(clipped, abs=0.01)
    points = [node for node in root.iter() if node.get("class") == "point"]
    assert len(points) == len(marks.points)
    assert {node.get("data-row") for node in points} == {"0", "1", "2"}
    roof_labels = _texts(root, "roof-label")
    assert any(text.startswith("HBM") for text in roof_labels)
    assert any(text.startswith("FP32 / FP64 TC") for text in roof_labels)  # the selected path's roof, named first
    assert set(_texts(root, "operation-label")) == set(marks.names)
    assert _texts(root, "ridge-label") == [marks.ridge_text]
    ticks = ["".join(node.itertext()) for node in root.iter(f"{SVG}text") if node.get("text-anchor") == "end"]
    assert "1 TFLOP/s" in ticks and "1 PFLOP/s" in ticks  # the rate axis's decades with units
    assert "Arithmetic intensity (FLOP per byte across each interface)" in _texts(root, "axis-title")


def test_with_labels_off_the_legend_lists_the_operations() -> None:
    marks = _marks("gemm-naive-tiled-cublas")
    root = ET.fromstring(roofline_svg(marks, RooflineViewState(label_mode=LABELS_NONE), size=SIZE))
    assert _texts(root, "operation-label") == []
    legend = " ".join(_texts(root, "legend-text"))
    assert all(name in legend for name in marks.names)


def test_a_hostile_name_shows_as_text() -> None:
    hostile = '<script>alert(1)</script>&"\'\x01'
    marks = _marks("gemm-4096-fp16", {0: hostile})
    text = roofline_svg(marks, size=SIZE)
    assert "<script" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;" in text
    root = ET.fromstring(text)  # well-formed: the control character XML cannot hold is replaced
    assert _texts(root, "operation-label") == ['<script>alert(1)</script>&"\'\ufffd']
    assert not list(root.iter(f"{SVG}script")) and not list(root.iter("script"))


def test_xml_text_and_clipping() -> None:
    assert xml_text('a<b>&"c\'') == "a&lt;b&gt;&amp;&quot;c&#39;"
    assert xml_text("\x00\ud800ok") == "\ufffd\ufffdok"
    assert clip_to_view((-10.0, 5.0, 110.0, 5.0), 100.0, 50.0) == pytest.approx((0.0, 5.0, 100.0, 5.0))
    assert clip_to_view((-10.0, -10.0, 60.0, 60.0), 100.0, 50.0) == pytest.approx((0.0, 0.0, 50.0, 50.0))
    assert clip_to_view((-10.0, 60.0, -5.0, 70.0), 100.0, 50.0) is None
