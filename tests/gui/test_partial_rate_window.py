"""The window's side of the one partial-rate rule (tests/test_partial_rate.py has the CLI's and the report's):
an fp8 GEMM on a V100 shows the same work and bytes as the report, and the panel says why there is no bound."""

from __future__ import annotations

from workbench.documents.report import build_report
from workbench.documents.session import session_to_dict

DECLARATION = "gemm(M=4096, N=4096, K=4096, dtype=fp8)"
REASON = "NVIDIA Tesla V100 SXM2 has no rate for the fp8_tc path"


def test_window_and_report_show_the_same_work_bytes_and_reason(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    document = window.document
    document.set_device("v100-sxm2")
    document.edit_declaration(document.current, DECLARATION)
    state = document.state(document.current_entry)
    assert state.error is None and state.analysis is not None
    assert REASON in state.notice
    qtbot.waitUntil(lambda: REASON in window.panel.notice.text(), timeout=5000)
    assert window.panel.notice.isVisible()

    (item,) = [op for op in build_report(document.session).operations if op.entry is document.current_entry]
    assert (state.analysis.flop, state.analysis.bytes) == (item.analysis.flop, item.analysis.bytes) == (2 * 4096**3, 3 * 4096**2)
    assert item.error == state.notice
    derived = session_to_dict(document.session)["operations"][document.current]["derived"]
    assert derived["error"] == state.notice
