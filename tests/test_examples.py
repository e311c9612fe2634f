"""The lab-demo examples: each opens, analyses to the figures its notes promise, round-trips, and reports."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from workbench.model.analysis import Analysis
from workbench.model.devices import BANDWIDTH, PATHS
from workbench.model.devices.catalogue import SOURCES
from workbench.errors import WorkbenchError
from workbench.documents.examples import list_examples, load_example
from workbench.documents.report import SAMPLES_CSV_COLUMNS, render_csv, render_html, render_markdown, render_samples_csv
from workbench.documents.session import CONVENTION_CHOICES, FORMAT, VERSION, Session, load, save

EXAMPLES = resources.files("workbench.resources").joinpath("examples")
SCHEMA = json.loads(resources.files("workbench.resources").joinpath("session.schema.json").read_text(encoding="utf-8"))
KEYS = [key for key, _ in list_examples()]


def analyses(session: Session) -> list[Analysis]:
    results = session.analyze_all()
    for entry, result in zip(session.operations, results):
        assert isinstance(result, Analysis), f"{entry.name}: {result}"
    return results  # type: ignore[return-value]


def test_every_example_file_is_listed_in_menu_order() -> None:
    files = sorted(item.name.removesuffix(".json") for item in EXAMPLES.iterdir() if item.name.endswith(".json"))
    assert sorted(KEYS) == files
    assert KEYS[:6] == [
        "gemm-4096-fp16",
        "vector-add",
        "knowledge-check",
        "attention-naive-vs-fused",
        "conv2d",
        "batched-gemm-sweep",
    ]
    assert all(title and title != key for key, title in list_examples())


@pytest.mark.parametrize("key", KEYS)
def test_each_example_opens_analyses_and_round_trips(key: str, tmp_path: Path) -> None:
    session = load_example(key)
    assert session.title and session.description and session.operations
    assert all(entry.name for entry in session.operations)
    analyses(session)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    save(session, first)
    save(load(first), second)
    assert first.read_bytes() == second.read_bytes()
    assert load(first) == session
    assert load_example(key) is not load_example(key)  # a fresh session each time


@pytest.mark.parametrize("key", KEYS)
def test_the_report_of_each_example_renders(key: str) -> None:
    session = load_example(key)
    markdown = render_markdown(session)
    page = render_html(session)
    for entry in session.operations:
        assert entry.declaration in markdown
        assert entry.name in page or entry.name.replace("&", "&amp;") in page
    assert markdown.count("**Derivation**") == len(session.operations)
    assert page.count("<table class=\"derivation\">") == len(session.operations)
    assert render_samples_csv(session).splitlines() == [",".join(SAMPLES_CSV_COLUMNS)]  # examples carry no runs
    assert len(render_csv(session).splitlines()) == 1 + len(session.operations)


def test_the_worked_gemm_matches_the_hand_calculation() -> None:
    (gemm,) = analyses(load_example("gemm-4096-fp16"))
    assert gemm.flop == 137_438_953_472  # 2 × 4096³
    assert gemm.bytes == 100_663_296  # 3 × 4096² × 2 B
    assert gemm.compute_rate is not None and gemm.compute_rate.source == "entered"
    assert gemm.compute_time == pytest.approx(1.374e-3, rel=1e-3)  # 137.4 GFLOP / 100 TFLOP/s
    assert gemm.memory_time == pytest.approx(40.27e-6, rel=1e-3)  # 100.7 MB / 2.5 TB/s
    assert gemm.limiter == "compute"


def test_the_vector_add_practice_keeps_the_evidence_list() -> None:
    session = load_example("vector-add")
    (add,) = analyses(session)
    assert add.flop == 2**24 and add.bytes == 3 * 4 * 2**24  # 1/12 FLOP/B
    notes = session.operations[0].notes
    for evidence in ("work and byte calculation", "at least 30 timed iterations", "median", "GB/s", "checksum", "declared memory rate"):
        assert evidence in notes


def test_the_knowledge_check_has_200_gflop_over_80_gb() -> None:
    session = load_example("knowledge-check")
    (kernel,) = analyses(session)
    assert kernel.flop == 200 * 10**9 and kernel.bytes == 80 * 10**9
    assert kernel.intensity == 2.5
    assert "200 GFLOP / (80 GB)" in session.operations[0].notes


def test_fused_attention_moves_about_17_times_fewer_bytes_for_the_same_work() -> None:
    naive, fused = analyses(load_example("attention-naive-vs-fused"))
    assert naive.flop == fused.flop
    assert naive.bytes / fused.bytes == pytest.approx(17.0, rel=0.01)
    assert (naive.limiter, fused.limiter) == ("memory", "compute")


def test_the_conv2d_example_sits_near_and_below_the_ridge() -> None:
    three, one = analyses(load_example("conv2d"))
    assert three.ridge is not None and three.intensity == pytest.approx(287.2, rel=1e-3)
    assert 0.9 < three.intensity / three.ridge < 1.0
    assert one.intensity == pytest.approx(51.17, rel=1e-3) and one.limiter == "memory"


def test_the_batched_gemm_sweep_crosses_from_memory_to_compute_limited() -> None:
    results = analyses(load_example("batched-gemm-sweep"))
    sizes = [r.declaration["M"] for r in results]
    assert sizes == [128, 256, 512, 1024, 2048, 4096]
    for size, result in zip(sizes, results):
        assert result.intensity == pytest.approx(size / 3)  # 2s³ / (3 · 2 s²)
    assert [r.limiter for r in results] == ["memory"] * 3 + ["compute"] * 3


def test_one_add_two_implementations_differ_only_in_achievable_bandwidth() -> None:
    session = load_example("one-add-two-implementations")
    library, vectorized = analyses(session)
    # same logical work and compulsory bytes: 2^24 additions, 3 × 67,108,864 B
    assert (library.flop, library.bytes) == (vectorized.flop, vectorized.bytes) == (2**24, 3 * 2**26)
    # library: 132 SMs × 16,384 B ÷ 1.35 µs × 3/2 = 2.403 TB/s → 83.78 µs; vectorized: capped at 4.8 TB/s → 41.94 µs
    assert library.limiter_term == "mlp" and round(library.bound_time * 1e6, 2) == 83.78
    assert vectorized.limiter_term == "hbm" and round(vectorized.bound_time * 1e6, 2) == 41.94
    assert "83.78 µs" in session.operations[0].notes and "41.94 µs" in session.operations[1].notes


def test_an_unknown_example_is_a_clear_error() -> None:
    with pytest.raises(WorkbenchError, match="unknown example 'nope'; known: gemm-4096-fp16"):
        load_example("nope")


def test_the_schema_lists_what_the_reader_accepts() -> None:
    """The shipped JSON Schema and the hand-written reader must not drift apart."""
    defs = SCHEMA["$defs"]
    assert SCHEMA["properties"]["format"]["const"] == FORMAT
    assert SCHEMA["properties"]["version"]["const"] == VERSION
    assert defs["path"]["enum"] == [*PATHS, BANDWIDTH]
    assert defs["rate"]["properties"]["source"]["enum"] == list(SOURCES)
    assert defs["settings"]["properties"]["convention"]["enum"] == list(CONVENTION_CHOICES)
    assert defs["operation"]["required"] == ["declaration"]


@pytest.mark.parametrize("key", KEYS)
def test_each_example_and_its_saved_form_validate_against_the_schema(key: str, tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(SCHEMA)
    raw = json.loads(EXAMPLES.joinpath(f"{key}.json").read_text(encoding="utf-8"))
    assert list(validator.iter_errors(raw)) == []
    path = tmp_path / "saved.json"
    save(load_example(key), path)
    assert list(validator.iter_errors(json.loads(path.read_text(encoding="utf-8")))) == []
