"""Every figure analyze() gave before the analysis became a list of terms, held fixed.

`tests/data/analysis_figures.json` was recorded from main at dc1b46c (before
`Analysis.terms`, before interface rates in the catalogue) by running this
module as a script:

    .venv/bin/python tests/test_analysis_regression.py --record

It holds, for every example session (its own device, overrides and settings)
and for every registered operation's example declarations on every catalogue
device under three overlaps (full, none, f = 0.4), plus the worked example
with rates typed as text: FLOP, bytes, compute and memory times, the three
bounds, the limiter, the path, the ridge and every other key `calc --json`
printed then. The test recomputes each case with today's code and asserts
the recorded keys are identical (exact floats: the same arithmetic in the
same order), so adding L2 / shared-memory / host terms cannot move a bound.

Do not re-record to make this pass: a difference here is a changed figure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data" / "analysis_figures.json"
OVERLAPS = ("full", "none", 0.4)
# Operation-sized declarations beside each op's (small, measurement-sized) examples: compute-limited
# GEMMs and convolutions, long attention, collectives large enough for the link to matter.
SIZED = (
    "gemm(M=4096, N=4096, K=4096, dtype=fp16)",
    "gemm(M=8192, N=8192, K=8192, dtype=bf16)",
    "gemm(M=4096, N=4096, K=4096, dtype=fp32)",
    "gemm(M=1024, N=1024, K=1024, batch=64, dtype=fp8)",
    "gemm(M=16, N=8192, K=8192, dtype=fp16)",
    "conv2d(N=8, C=64, H=56, W=56, K=64, R=3, S=3, pad=1, dtype=fp16)",
    "attention(B=4, H=32, Sq=4096, Skv=4096, D=128, fused=true, causal=true, dtype=bf16)",
    "attention(B=4, H=32, Sq=4096, Skv=4096, D=128, fused=false, dtype=fp16)",
    "softmax(rows=8192, cols=8192, dtype=fp32)",
    "add(n=2**28, dtype=fp32)",
    "allreduce(n=2**28, dtype=bf16, ranks=8)",
    "allreduce(n=2**10, dtype=fp32, ranks=64, latency_us=5)",
)
# Keys of Analysis.to_dict() left out: steps and notes are words, and the per-tensor bytes and the
# declaration text do not depend on rates or terms (test_ops and test_declare hold them).
_WORDS = ("steps", "notes", "tensors", "declaration")


def _figures(analysis: Any) -> dict[str, Any]:
    data = analysis.to_dict()
    return {key: value for key, value in data.items() if key not in _WORDS}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    """(case id, kwargs for the call) for every case; example sessions are named 'example:KEY:INDEX'."""
    from workbench.model.devices.catalogue import catalogue
    from workbench.model.ops import REGISTRY

    cases: list[tuple[str, dict[str, Any]]] = []
    declarations = [text for spec in REGISTRY.values() for text in spec.examples] + list(SIZED)
    for device_key in catalogue():
        for text in declarations:
            for overlap in OVERLAPS:
                cases.append((f"{device_key}|{overlap}|{text}", {"declaration": text, "device": device_key, "overlap": overlap}))
    worked = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
    for overlap in OVERLAPS:
        cases.append((f"text-rates|{overlap}|{worked}", {"declaration": worked, "rate": "100 TFLOP/s", "bandwidth": "2.5 TB/s", "overlap": overlap}))
    cases.append((f"mac|h100-sxm|{worked}", {"declaration": worked, "device": "h100-sxm", "convention": "mac"}))
    return cases


def _run_case(kwargs: dict[str, Any]) -> dict[str, Any]:
    from workbench.model.analysis import analyze
    from workbench.errors import WorkbenchError

    try:
        return _figures(analyze(**kwargs))
    except WorkbenchError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}


def _example_figures() -> dict[str, Any]:
    from workbench.model.analysis import Analysis
    from workbench.documents.examples import list_examples, load_example

    recorded: dict[str, Any] = {}
    for key, _title in list_examples():
        session = load_example(key)
        for index, result in enumerate(session.analyze_all()):
            case = f"example:{key}:{index}"
            if isinstance(result, Analysis):
                recorded[case] = _figures(result)
            else:
                recorded[case] = {"error": type(result).__name__, "message": str(result)}
    return recorded


def record() -> dict[str, Any]:
    recorded = _example_figures()
    for case, kwargs in _cases():
        recorded[case] = _run_case(kwargs)
    return recorded


def _recorded() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def _catalogue_cases() -> list[tuple[str, dict[str, Any]]]:
    return _cases()


def test_every_example_session_keeps_its_figures() -> None:
    """Each example's bound, limiter, compute and memory times (and every other figure) as recorded."""
    recorded = _recorded()
    now = _example_figures()
    example_keys = sorted(case for case in recorded if case.startswith("example:"))
    assert example_keys, "the recording holds the example sessions"
    # every recorded example is still there; an example added since the recording has no "before" to keep
    assert set(example_keys) <= set(now)
    for case in example_keys:
        before, after = recorded[case], now[case]
        assert {key: after.get(key) for key in before} == before, case
        if "bound_time_s" in before:  # the headline figures, named so a failure reads plainly
            assert after["bound_time_s"] == before["bound_time_s"], case
            assert after["limiter"] == before["limiter"], case


@pytest.mark.parametrize("device_key", sorted({case.split("|")[0] for case, _ in _catalogue_cases()}))
def test_every_held_figure_is_unchanged(device_key: str) -> None:
    """Every op's example declarations on every catalogue device, three overlaps: identical figures or errors."""
    recorded = _recorded()
    cases = [(case, kwargs) for case, kwargs in _catalogue_cases() if case.split("|")[0] == device_key]
    assert cases
    for case, kwargs in cases:
        if case not in recorded:  # an operation registered after the recording has nothing to compare
            continue
        before, after = recorded[case], _run_case(kwargs)
        assert {key: after.get(key) for key in before} == before, case


def test_the_recording_covers_what_it_says() -> None:
    recorded = _recorded()
    # 4096³ fp16 on an H100 SXM: 3 × 4096² × 2 B = 100,663,296 B; 2·4096³ = 137,438,953,472 FLOP;
    # 137,438,953,472 / 989e12 = 138.97 µs ≥ 100,663,296 / 3.35e12 = 30.05 µs → compute-limited.
    case = recorded["h100-sxm|full|gemm(M=4096, N=4096, K=4096, dtype=fp16)"]
    assert case["bytes"] == 100_663_296
    assert case["flop"] == 137_438_953_472
    assert case["limiter"] == "compute"
    assert case["bound_time_s"] == pytest.approx(137_438_953_472 / 989e12, rel=1e-12)
    # The worked example session: 1.374 ms compute (100 TFLOP/s), 40.27 µs memory (2.5 TB/s).
    worked = recorded["example:gemm-4096-fp16:0"]
    assert worked["compute_time_s"] == pytest.approx(137_438_953_472 / 100e12, rel=1e-12)
    assert worked["memory_time_s"] == pytest.approx(100_663_296 / 2.5e12, rel=1e-12)
    assert worked["limiter"] == "compute"
    assert len([case for case in recorded if case.startswith("example:")]) >= 7


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: tests/test_analysis_regression.py --record  (only from the commit named in the docstring)")
    figures = record()
    lines = [f"{json.dumps(case, ensure_ascii=False)}: {json.dumps(figures[case], ensure_ascii=False, sort_keys=True)}" for case in sorted(figures)]
    DATA.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(f"recorded {len(_recorded())} cases in {DATA}")
