"""One rule for a device without a rate for the operation's path: the window, the CLI, the report and a saved
session all show the same work and bytes and say why there is no time bound (fp8 GEMM on a V100)."""

from __future__ import annotations

import json

import pytest

from workbench.model.analysis import analyze, analyze_partial
from workbench.cli import main
from workbench.errors import DeviceError
from workbench.documents.report import build_report, render_markdown
from workbench.documents.session import DeviceChoice, OperationEntry, Session, session_to_dict

DECLARATION = "gemm(M=4096, N=4096, K=4096, dtype=fp8)"
FLOP = 2 * 4096**3  # 137,438,953,472
BYTES = 3 * 4096 * 4096  # A, B and C at one byte an element: 50,331,648
REASON = "NVIDIA Tesla V100 SXM2 has no rate for the fp8_tc path"


def fp8_on_v100() -> Session:
    session = Session()
    session.device = DeviceChoice("v100-sxm2")
    session.operations = [OperationEntry(name="fp8 GEMM", declaration=DECLARATION)]
    return session


def test_analyze_refuses_and_analyze_partial_keeps_work_and_bytes() -> None:
    with pytest.raises(DeviceError, match=REASON) as refused:
        analyze(DECLARATION, device="v100-sxm2")
    assert refused.value.missing_path == "fp8_tc"
    a = analyze_partial(DECLARATION, "v100-sxm2")
    assert (a.flop, a.bytes) == (FLOP, BYTES)
    assert a.bound_time is None and a.compute_time is None
    assert a.memory_time == pytest.approx(BYTES / 900e9)  # the V100's datasheet bandwidth still gives that term
    assert a.missing_rate is not None and REASON in a.missing_rate
    assert REASON in a.limiter_sentence()
    assert any(REASON in step.body for step in a.steps)


def test_a_device_with_the_rate_is_analysed_in_full() -> None:
    a = analyze_partial(DECLARATION, "h100-sxm")
    assert a.missing_rate is None and a.bound_time is not None
    assert a == analyze(DECLARATION, device="h100-sxm")


def test_the_session_the_report_and_the_saved_figures_agree() -> None:
    session = fp8_on_v100()
    (result,) = session.analyze_all()
    assert (result.flop, result.bytes) == (FLOP, BYTES)

    report = build_report(session)
    (item,) = report.operations
    assert item.analysis is not None and (item.analysis.flop, item.analysis.bytes) == (FLOP, BYTES)
    assert item.error is not None and REASON in item.error
    text = render_markdown(session)
    assert "137,438,953,472 FLOP" in text and "50,331,648 B" in text and REASON in text

    derived = session_to_dict(session, include_derived=True)["operations"][0]["derived"]
    assert (derived["flop"], derived["bytes"]) == (FLOP, BYTES)
    assert REASON in derived["error"] and derived["bound_time_s"] is None


def test_the_cli_prints_work_bytes_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", DECLARATION, "--device", "v100-sxm2"]) == 0
    out = capsys.readouterr().out
    assert "137,438,953,472 FLOP" in out and "50,331,648 B" in out and REASON in out
    assert main(["calc", DECLARATION, "--device", "v100-sxm2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["flop"], data["bytes"], data["bound_time_s"]) == (FLOP, BYTES, None)
    assert REASON in data["missing_rate"]
