"""Version-1 files kept in tests/data/ must keep opening, with nothing in them lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from workbench.documents.session import reading, writing
from workbench.documents.session import SessionError, load, save

DATA = Path(__file__).parent / "data"


def test_the_version_1_fixture_opens_with_every_field() -> None:
    session = load(DATA / "session_v1.json")
    assert session.title == "Fixture: a version-1 session with a measured CPU run"
    assert [(e.name, e.declaration) for e in session.operations] == [
        ("Vector add", "add(n=2**24, dtype=fp32)"),
        ("GEMM", "gemm(M=4096, N=4096, K=4096, dtype=fp16)"),
    ]
    assert session.operations[0].notes == "timed on the test machine's CPU with NumPy"
    assert (session.settings.convention, session.settings.overlap, session.settings.binary) == ("mac", 0.5, True)
    assert session.device.key == "cpu-generic"
    hbm = session.device.overrides["hbm"]
    assert (hbm.value, hbm.source) == (20e9, "measured")
    run = session.runs[0]
    assert run["id"] == "cpu-add-1" and run["valid"] is True and len(run["samples_s"]) == 30
    assert session.profiles == [
        {"kernel": "vector_add_kernel", "tool": "hand-written test record", "dram_bytes": 201326592,
         "duration_ns": 12345, "grid": [65536, 1, 1]}
    ]


def test_the_fixture_s_figures_are_recomputed_not_read() -> None:
    session = load(DATA / "session_v1.json")
    add = session.analyze(session.operations[0])
    # 2^24 additions; A, B read and C written: 3 × 2^24 × 4 B = 201,326,592 B; measured 20 GB/s
    assert add.flop == 2**24 and add.bytes == 201_326_592
    assert add.memory_time == pytest.approx(201_326_592 / 20e9)


def test_the_fixture_saves_back_unchanged_except_derived_figures(tmp_path: Path) -> None:
    original = json.loads((DATA / "session_v1.json").read_text(encoding="utf-8"))
    path = tmp_path / "resaved.json"
    save(load(DATA / "session_v1.json"), path)
    resaved = json.loads(path.read_text(encoding="utf-8"))
    # the one key a version-1 file gains: these names are the user's, not made from the declarations
    assert [operation.pop("name_automatic") for operation in resaved["operations"]] == [False, False]

    def without_derived(data: dict[str, Any]) -> dict[str, Any]:
        data = json.loads(json.dumps(data))
        for key in ("generator", "about_derived"):
            data.pop(key, None)
        data["device"].pop("rates_in_use", None)
        data["device"].pop("name", None)
        for operation in data["operations"]:
            operation.pop("derived", None)
        return data

    assert {k: v for k, v in without_derived(resaved).items() if k != "runs"} == {
        k: v for k, v in without_derived(original).items() if k != "runs"
    }
    # measurement records kept, samples and all, without the figures stored beside them (median_s,
    # achieved_bytes_per_s...); beside each, one "derived" block recomputed from the samples
    stored_figures = {"median_s", "p10_s", "p90_s", "achieved_bytes_per_s", "achieved_flop_per_s"}
    assert [{k: v for k, v in run.items() if k != "derived"} for run in resaved["runs"]] == [
        {k: v for k, v in run.items() if k not in stored_figures} for run in original["runs"]
    ]
    figures = resaved["runs"][0]["derived"]
    assert figures["device"] == "cpu-generic" and figures["stats"]["median_s"] == pytest.approx(0.0063806235)


def test_a_minimal_hand_written_version_1_file_gets_the_defaults() -> None:
    session = load(DATA / "session_v1_minimal.json")
    assert [e.declaration for e in session.operations] == ["add(n=2**24, dtype=fp32)"]
    assert session.operations[0].notes == ""
    # no name: it is named after its declaration, and follows it (docs/session-format.md, "Operation names")
    assert session.operations[0].name == "Vector add, 2^24 fp32" and session.operations[0].name_automatic
    assert session.device.key == "h100-sxm" and session.device.overrides == {}
    assert (session.settings.convention, session.settings.overlap, session.settings.binary) == ("fma2", 1.0, False)
    assert session.runs == [] and session.profiles == [] and session.title == ""


def test_a_future_version_2_reads_version_1_files_through_its_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the format moves on, the step registered for version 1 upgrades the old file on load."""

    def rename_title(data: dict[str, Any]) -> dict[str, Any]:
        data["title"] = "migrated: " + data.get("title", "")
        return data

    for module in (reading, writing):  # the version read, and the version written
        monkeypatch.setattr(module, "VERSION", 2)
    monkeypatch.setattr(reading, "MIGRATIONS", {1: rename_title})
    copy = tmp_path / "old.json"
    shutil.copy(DATA / "session_v1.json", copy)
    session = load(copy)
    assert session.title == "migrated: Fixture: a version-1 session with a measured CPU run"
    save(session, copy)
    assert json.loads(copy.read_text(encoding="utf-8"))["version"] == 2


def test_a_version_without_a_migration_path_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "VERSION", 3)
    monkeypatch.setattr(reading, "MIGRATIONS", {})
    with pytest.raises(SessionError, match="no way to read format version 1"):
        load(DATA / "session_v1_minimal.json")
