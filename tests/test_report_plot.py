"""The reports' roofline, drawn as SVG from the scenes without Qt or a window (`workbench.documents.report.plot`):
every roof, the selected operation's label, hostile names as text; inline in HTML, beside Markdown."""

from __future__ import annotations

import os
from dataclasses import replace
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

from workbench.documents.examples import load_example
from workbench.documents.report import REPORT_PLOT_SIZE, roofline_plot, write_report
from workbench.documents.session import save
from workbench.scenes import roofline_svg as svg_module
from workbench.scenes.roofline_marks import PlacedOperation, roofline_marks
from workbench.scenes.roofline_state import RooflineViewState
from workbench.scenes.roofline_svg import label_width, plot_width

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script>&"'


def _texts(root: ET.Element, css: str) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text") if node.get("class") == css]


def _expected_roofs(session) -> list:  # type: ignore[no-untyped-def]
    device = session.device.resolve()
    operations = [PlacedOperation(row, entry.name, session.analyze(entry, device))
                  for row, entry in enumerate(session.operations)]
    return list(roofline_marks(device, operations, current=0, width=plot_width(REPORT_PLOT_SIZE),
                               text_width=label_width).roofs)


def test_the_report_plot_draws_every_roof_and_labels_the_selected_operation() -> None:
    session = load_example("gemm-naive-tiled-cublas")
    plot = roofline_plot(session)
    assert plot is not None
    root = ET.fromstring(plot)
    assert (root.get("width"), root.get("height")) == tuple(f"{size:g}" for size in REPORT_PLOT_SIZE)
    roofs = _expected_roofs(session)
    drawn = [node.get("class") for node in root.iter(f"{SVG}line") if (node.get("class") or "").startswith("roof")]
    assert sorted(drawn) == sorted(f"roof {roof.role.replace(' ', '-')}" for roof in roofs)
    labels = _texts(root, "roof-label")
    for roof in roofs:
        if roof.labelled:  # its full or its short text, on the plot or in the legend
            assert roof.full in labels or roof.short in labels or roof.full in _texts(root, "legend-text")
    assert session.operations[0].name in _texts(root, "operation-label")  # the first operation: selected


def test_the_report_plot_follows_the_windows_state_selection_and_pins() -> None:
    session = load_example("gemm-naive-tiled-cublas")
    plot = roofline_plot(session, RooflineViewState(label_mode="selected", hidden_levels=frozenset({"smem"})), current=2)
    assert plot is not None
    root = ET.fromstring(plot)
    assert _texts(root, "operation-label") == [session.operations[2].name]
    assert not [node for node in root.iter(f"{SVG}line") if node.get("class") == "roof level-smem"]


def test_the_report_plot_is_laid_out_by_the_roofline_scene(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    scenes = []
    made = svg_module.roofline_scene

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        scenes.append(made(*args, **kwargs))
        return scenes[-1]

    monkeypatch.setattr(svg_module, "roofline_scene", recorded)
    plot = roofline_plot(load_example("gemm-4096-fp16"))
    assert plot is not None and len(scenes) == 1
    scene = scenes[0]
    width, height = REPORT_PLOT_SIZE
    assert 0.8 * width < scene.view.width < width and 0.8 * height < scene.view.height < height
    operation = scene.label("operation 0")
    assert operation is not None and operation.box is not None
    assert operation.text in _texts(ET.fromstring(plot), "operation-label")


def test_a_hostile_operation_name_is_escaped_in_the_html_and_markdown_reports(tmp_path: Path) -> None:
    session = load_example("gemm-4096-fp16")
    session.operations[0].name = HOSTILE
    plot = roofline_plot(session)
    assert plot is not None
    write_report(session, tmp_path / "r.html", plot)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    tags: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list) -> None:  # type: ignore[type-arg]
            tags.append(tag)

    Tags().feed(page)
    assert "script" not in tags and "svg" in tags
    assert '<script>alert("x")' not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&quot;" in page
    write_report(session, tmp_path / "r.md", plot)
    beside = ET.parse(tmp_path / "r-plot.svg").getroot()  # well-formed XML, the name as text
    assert HOSTILE in _texts(beside, "operation-label")


def test_workbench_report_draws_the_plot_where_qt_cannot_be_imported(tmp_path: Path) -> None:
    """`workbench report` draws the roofline itself: with PySide6 and pyqtgraph unimportable the HTML still
    holds the SVG roofline and the Markdown writes it beside."""
    session = tmp_path / "s.json"
    save(load_example("gemm-4096-fp16"), session)
    blocker = tmp_path / "no_qt"
    blocker.mkdir()
    for name in ("PySide6", "pyqtgraph", "shiboken6"):
        (blocker / f"{name}.py").write_text("raise ImportError('no Qt here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), *filter(None, [os.environ.get("PYTHONPATH")])])}
    html, markdown = tmp_path / "r.html", tmp_path / "r.md"
    for out in (html, markdown):
        done = subprocess.run([sys.executable, "-m", "workbench", "report", str(session), "-o", str(out)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "without the plot" not in done.stdout
    assert '<figure class="plot"><svg ' in html.read_text(encoding="utf-8")
    assert "![Roofline plot of the session](<r-plot.svg>)" in markdown.read_text(encoding="utf-8")
    assert ET.parse(tmp_path / "r-plot.svg").getroot().tag == f"{SVG}svg"


def test_a_large_sessions_plot_counts_the_operations_without_a_label(tmp_path: Path) -> None:
    session = load_example("gemm-4096-fp16")
    template = session.operations[0]
    session.operations = [replace(template, name=f"op {index}", declaration=f"gemm(M={64 * (index + 1)}, N=4096, K=4096, dtype=fp16)")
                          for index in range(60)]
    plot = roofline_plot(session)
    assert plot is not None
    root = ET.fromstring(plot)
    labelled = _texts(root, "operation-label")
    assert 0 < len(labelled) < 60
    more = [text for text in _texts(root, "legend-text") if text.startswith("+")]
    assert len(more) == 1 and more[0].endswith(" more operations")
    assert all("hover" not in text for text in _texts(root, "legend-text"))  # a picture cannot be hovered


def test_workbench_report_analyses_each_operation_once_for_its_text_and_plot(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The plot is drawn from the analyses the report's text made: a model's session is analysed once, not twice.
    The plot drawn so is the one `roofline_plot` draws analysing the session itself."""
    from workbench.cli import main
    from workbench.documents.report.model import svg_file
    from workbench.documents.session import Session

    example = load_example("gemm-naive-tiled-cublas")
    path = tmp_path / "s.json"
    save(example, path)
    calls: list[int] = []
    analyze_all = Session.analyze_all

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(self.operations))
        return analyze_all(self, *args, **kwargs)

    monkeypatch.setattr(Session, "analyze_all", counted)
    assert main(["report", str(path), "-o", str(tmp_path / "r.md")]) == 0
    assert calls == [len(example.operations)]
    monkeypatch.setattr(Session, "analyze_all", analyze_all)
    assert (tmp_path / "r-plot.svg").read_bytes() == svg_file(roofline_plot(example) or "")
