"""The report's roofline draws the session's measured runs and imported profiler kernels as the window does, without
Qt (`documents/report/plot_marks.py`, `scenes/roofline_svg.py`): each kind of run in its own mark, where the core's
`roofline_run_marks` puts it, with its p10–p90 bar, its label and legend row; each matched kernel's star with a
dotted link to its operation's point; device and kernel names from files as text."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from workbench.documents.profiles import KERNEL_LEGEND, kernel_marks
from workbench.documents.report import REPORT_PLOT_SIZE, roofline_plot
from workbench.documents.report import plot_marks as plot_marks_module
from workbench.documents.report.plot import session_operations
from workbench.documents.session import DeviceChoice, OperationEntry, Session
from workbench.measure import RunRecord, measure
from workbench.measure.run_marks import (
    IMPOSSIBLE,
    IMPOSSIBLE_LEGEND,
    MEASURED_LEGEND,
    NOT_VALID,
    NOT_VALID_LEGEND,
    OTHER_DEVICE,
    VALID,
    roofline_run_marks,
)
from workbench.model.devices import Rate
from workbench.model.devices.catalogue import HOST_CPU_KEY
from workbench.model.devices.provenance import DeviceProvenance
from workbench.profilers import MatchRule
from workbench.profilers.reader import read_profile, read_profile_text
from workbench.scenes.label_layout import PixelView
from workbench.scenes.roofline_marks import roofline_marks
from workbench.scenes.roofline_svg import label_width, plot_view, plot_width

SVG = "{http://www.w3.org/2000/svg}"
DATA = Path(__file__).parent / "data"
ADD = "add(n=2**16, dtype=fp32)"
HOSTILE = '<script>alert("x")</script>&'
H100 = DeviceProvenance("gpu", "NVIDIA H100 SXM", "h100-sxm", "name", "NVML")


@pytest.fixture(scope="module")
def cpu_add() -> RunRecord:
    return measure(ADD, backend="numpy", iterations=30, warmup=2)


def _times(seconds: float) -> tuple[float, ...]:
    return tuple(seconds * (1 + i / 50) for i in range(30))


def runs_session(record: RunRecord, other: DeviceProvenance = H100) -> Session:
    """This machine's CPU with an entered 20 GB/s (a bound, so a run can beat it): a valid run at 1 ms, an impossible
    one at 0.1 µs, one whose check failed, and one that states another device (`other`)."""
    runs = [
        replace(record, samples_s=_times(1e-3)),
        replace(record, samples_s=_times(1e-7)),
        replace(record, samples_s=_times(2e-3), status="invalid"),
        replace(record, samples_s=_times(5e-6), provenance=other),
    ]
    return Session(operations=[OperationEntry("add", ADD)],
                   device=DeviceChoice(HOST_CPU_KEY, overrides={"hbm": Rate(20e9, "entered")}),
                   runs=[run.to_dict() for run in runs])


def _view(session: Session) -> PixelView:
    """The plot area the report draws `session` in, from the same functions."""
    device = session.device.resolve()
    operations = session_operations(session)
    others = plot_marks_module.other_marks(session, device, operations, 0)
    marks = roofline_marks(device, operations, current=0, width=plot_width(REPORT_PLOT_SIZE), text_width=label_width,
                           others=others.extent())
    return plot_view(marks, REPORT_PLOT_SIZE)[0]


def _centre(node: ET.Element) -> tuple[float, float]:
    """The middle of a mark's shape (a square's rect, a diamond's or star's polygon, an x's path)."""
    if node.tag == f"{SVG}rect":
        return float(node.get("x")) + float(node.get("width")) / 2, float(node.get("y")) + float(node.get("height")) / 2
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", node.get("points") or node.get("d") or "")]
    xs, ys = numbers[0::2], numbers[1::2]
    return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2


def _of_class(root: ET.Element, css: str) -> list[ET.Element]:
    return [node for node in root.iter() if node.get("class") == css]


def _texts(root: ET.Element, css: str) -> list[str]:
    return ["".join(node.itertext()) for node in _of_class(root, css)]


def test_each_kind_of_run_is_drawn_where_the_window_draws_it(cpu_add: RunRecord) -> None:
    session = runs_session(cpu_add)
    expected = roofline_run_marks(session.run_figures())
    assert sorted(mark.style for mark in expected) == sorted([VALID, IMPOSSIBLE, NOT_VALID, OTHER_DEVICE])
    plot = roofline_plot(session)
    assert plot is not None
    root = ET.fromstring(plot)
    view = _view(session)
    bars = _of_class(root, "run-bar")
    for mark in expected:
        (node,) = _of_class(root, f"run-{mark.style.replace(' ', '-')}")
        assert _centre(node) == pytest.approx((view.px(mark.x), view.py(mark.y)), abs=0.02)
        # its p10–p90 bar, vertical through it (the spread of 30 samples 2 % apart is a few pixels tall)
        assert any(float(bar.get("x1")) == pytest.approx(view.px(mark.x), abs=0.02)
                   and sorted([float(bar.get("y1")), float(bar.get("y2"))])
                   == pytest.approx(sorted([view.py(mark.high), view.py(mark.low)]), abs=0.02) for bar in bars)
    # shapes and colours by kind, as the window's scatters
    assert _of_class(root, "run-valid")[0].tag == f"{SVG}rect" and _of_class(root, "run-valid")[0].get("fill") == "#2e7d32"
    assert _of_class(root, "run-not-valid")[0].get("fill") == "#ffffff"
    assert _of_class(root, "run-other-device")[0].tag == f"{SVG}polygon"
    assert _of_class(root, "run-impossible")[0].get("stroke") == "#c62828"
    labels = _texts(root, "run-label")
    assert sorted(labels) == sorted(mark.label for mark in expected if mark.label) and "NVIDIA H100 SXM" in labels
    legend = _texts(root, "legend-text")
    for text in (MEASURED_LEGEND, NOT_VALID_LEGEND, IMPOSSIBLE_LEGEND, "run on NVIDIA H100 SXM: not against these roofs"):
        assert text in legend
    assert not any("hover" in text for text in legend)  # a picture cannot be hovered


def test_a_session_of_valid_runs_lists_only_their_kind(cpu_add: RunRecord) -> None:
    session = runs_session(cpu_add)
    session.runs = session.runs[:1]
    root = ET.fromstring(roofline_plot(session) or "")
    assert len(_of_class(root, "run-valid")) == 1 and not _texts(root, "run-label")
    legend = _texts(root, "legend-text")
    assert MEASURED_LEGEND in legend and NOT_VALID_LEGEND not in legend and IMPOSSIBLE_LEGEND not in legend


def _profiled(device: str, profile=None) -> Session:  # type: ignore[no-untyped-def]
    """The vector add and the 4096³ GEMM of the Nsight Compute fixture, its kernels matched with them."""
    add, gemm = "add(n=2**24, dtype=fp32)", "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
    profile = profile or read_profile(DATA / "ncu_details.csv")
    rules = [MatchRule("regex:cupy_add", add), MatchRule("regex:xmma_gemm", gemm)]
    return Session(operations=[OperationEntry("add", add), OperationEntry("gemm", gemm)], device=DeviceChoice(device),
                   profiles=[profile.with_matches(rules).to_dict()])


def _kernels(session: Session) -> list:  # type: ignore[type-arg]
    device = session.device.resolve()
    analyses = session.analyze_all(device)
    return kernel_marks(session.profiles, session.operations, lambda row: analyses[row], device)


def test_imported_kernels_are_stars_linked_to_their_operations_points() -> None:
    session = _profiled("h200-sxm")  # the file's GPU (compute capability 9.0, its clocks): the session's own
    kernels = _kernels(session)
    assert [kernel.style for kernel in kernels] == ["session", "session"]
    root = ET.fromstring(roofline_plot(session, current=0) or "")
    view = _view(session)
    stars = _of_class(root, "kernel-selected") + _of_class(root, "kernel")
    assert len(stars) == 2
    selected = _of_class(root, "kernel-selected")  # the selected operation's kernel: filled, larger
    assert len(selected) == 1 and selected[0].get("fill") == "#6a1b9a"
    for kernel, star in zip(kernels, stars):
        assert _centre(star)[0] == pytest.approx(view.px(kernel.x), abs=0.3)
    links = _of_class(root, "kernel-link")
    assert len(links) == 2 and all(link.get("stroke-dasharray") for link in links)
    for kernel in kernels:
        assert kernel.anchor is not None
        ends = {(round(float(link.get("x1")), 1), round(float(link.get("y1")), 1),
                 round(float(link.get("x2")), 1), round(float(link.get("y2")), 1)) for link in links}
        assert (round(view.px(kernel.x), 1), round(view.py(kernel.y), 1),
                round(view.px(kernel.anchor[0]), 1), round(view.py(kernel.anchor[1]), 1)) in ends
    assert KERNEL_LEGEND in _texts(root, "legend-text")


def test_kernels_compared_with_another_gpu_are_drawn_in_its_style_without_links() -> None:
    session = _profiled("h100-sxm")  # the file states an H200's clocks: compared with that GPU, not these roofs
    root = ET.fromstring(roofline_plot(session) or "")
    assert len(_of_class(root, "kernel-other-device")) == 2 and not _of_class(root, "kernel-link")


def test_device_and_kernel_names_from_files_are_text(cpu_add: RunRecord) -> None:
    session = runs_session(cpu_add, DeviceProvenance("gpu", HOSTILE, stated_by="NVML"))  # a GPU the catalogue lacks
    text = (DATA / "ncu_details.csv").read_text(encoding="utf-8").replace("cupy_add__float32_float32_float32",
                                                                            "<script>cupy_add</script>&amp;")
    profiled = _profiled("h200-sxm", read_profile_text(text, HOSTILE + ".csv"))
    session.profiles = profiled.profiles
    session.operations = [*session.operations, *profiled.operations]
    plot = roofline_plot(session)
    assert plot is not None and "<script" not in plot
    root = ET.fromstring(plot)  # well-formed: every name escaped
    assert HOSTILE in _texts(root, "run-label")
    assert f"run on {HOSTILE}: not against these roofs" in _texts(root, "legend-text")
    # the renamed kernel matched and drawn; on this CPU session both kernels are compared with the file's own GPU,
    # and the GEMM's 6 PFLOP/s, far above every CPU roof, is in view too: the range reaches up to it, as the
    # window's does
    kernels = _kernels(session)
    assert any(kernel.operation == 1 for kernel in kernels)
    stars = sorted(_centre(star) for star in _of_class(root, "kernel-other-device"))
    view = _view(session)
    places = sorted((view.px(kernel.x), view.py(kernel.y)) for kernel in kernels)
    assert len(stars) == len(places) == 2
    # (a star's outline is not centred on its point vertically: its bounding box's middle is within a pixel)
    assert all(star[0] == pytest.approx(place[0], abs=0.3) and star[1] == pytest.approx(place[1], abs=1.5)
               for star, place in zip(stars, places))
    top_roof = max(math.log10(rate.value) for rate in session.device.resolve().peak.values())
    highest = max(kernel.y for kernel in kernels)
    assert highest > top_roof + 2 and view.y_low < highest < view.y_high


def test_a_session_without_runs_or_profiles_reads_neither(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The marks' code runs only for a session that has runs or profiles: a large session's plot costs no more."""
    from workbench.documents.examples import load_example

    def refused(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("read runs or profiles the session does not have")

    monkeypatch.setattr(plot_marks_module, "other_marks", refused)
    plot = roofline_plot(load_example("gemm-naive-tiled-cublas"))
    assert plot is not None and 'class="run-' not in plot and 'class="kernel' not in plot
