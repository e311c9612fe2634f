"""Session files: what a user saves comes back the same, and a bad file gets one clear message."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from workbench.documents.session import reading, saving
from workbench.model.devices import Rate
from workbench.errors import WorkbenchError
from workbench.documents.session import (
    MAX_FILE_BYTES,
    DeviceChoice,
    OperationEntry,
    Session,
    SessionError,
    Settings,
    dumps,
    load,
    loads,
    save,
    session_from_dict,
    session_to_dict,
)

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
ADD = "add(n=2**24, dtype=fp32)"


def worked_example_session() -> Session:
    return Session(
        title="Worked example — 4096³ GEMM",
        description="the seed's GEMM with its assumed rates",
        operations=[
            OperationEntry("GEMM", GEMM, "notes with ünïcode, µs and a\nsecond line"),
            OperationEntry("Vector add", ADD),
        ],
        device=DeviceChoice(
            "h100-sxm",
            {"fp16_tc": Rate(100e12, "entered", "seed"), "hbm": Rate(2.5e12, "measured", "stream triad")},
        ),
        settings=Settings(convention="mac", overlap=0.25, binary=True),
        runs=[{"id": "r1", "declaration": ADD, "samples_s": [1e-3, 1.1e-3], "conditions": {"clock": 1980}}],
        profiles=[{"kernel": "k", "dram_bytes": 12}],
    )


def test_save_load_save_gives_the_same_bytes(tmp_path: Path) -> None:
    first = tmp_path / "a.json"
    second = tmp_path / "b.json"
    original = worked_example_session()
    save(original, first)
    loaded = load(first)
    save(loaded, second)
    assert first.read_bytes() == second.read_bytes()
    assert loaded == original


def test_the_file_names_its_format_and_carries_derived_figures_for_readers(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    save(worked_example_session(), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "perf-workbench-session" and data["version"] == 1
    gemm = data["operations"][0]["derived"]
    # mac convention: one multiply-add = 1 FLOP, 4096³ = 68,719,476,736
    assert gemm["flop"] == 4096**3
    # 3 matrices × 4096² × 2 B = 100,663,296 B
    assert gemm["bytes"] == 100_663_296
    assert gemm["limiter"] == "compute"
    # 68.72 GFLOP / 100 TFLOP/s = 687.2 µs; memory 100.7 MB / 2.5 TB/s = 40.27 µs; f = 0.25
    assert gemm["bound_time_s"] == pytest.approx(687.19e-6 + 0.75 * 40.265e-6, rel=1e-4)
    assert data["device"]["rates_in_use"]["hbm"] == {"value": 2.5e12, "source": "measured", "citation": "stream triad"}
    assert "µs" in path.read_text(encoding="utf-8")  # UTF-8 text, not \u escapes


def test_derived_figures_in_the_file_are_ignored_on_load(tmp_path: Path) -> None:
    data = session_to_dict(worked_example_session())
    data["operations"][0]["derived"]["flop"] = 1
    data["operations"][0]["derived"]["limiter"] = "memory"
    session = session_from_dict(data)
    analysis = session.analyze(session.operations[0])
    assert analysis.flop == 4096**3 and analysis.limiter == "compute"


def test_unknown_top_level_keys_are_kept(tmp_path: Path) -> None:
    data = session_to_dict(worked_example_session())
    data["plugin_state"] = {"zoom": [1, 2]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    session = load(path)
    save(session, path)
    assert json.loads(path.read_text(encoding="utf-8"))["plugin_state"] == {"zoom": [1, 2]}


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + dumps(worked_example_session()).encode("utf-8"))
    assert load(path).title == "Worked example — 4096³ GEMM"


def test_numpy_values_in_runs_are_saved_as_plain_numbers(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    session = Session(
        operations=[OperationEntry("add", ADD)],
        runs=[{"id": "r", "samples_s": np.array([1e-3, 2e-3]), "clock_ghz": np.float64(1.5), "n": np.int64(2),
               "bad": float("nan")}],
    )
    path = tmp_path / "np.json"
    save(session, path)
    run = load(path).runs[0]
    assert run == {"id": "r", "samples_s": [1e-3, 2e-3], "clock_ghz": 1.5, "n": 2, "bad": None}


def test_a_run_holding_an_object_that_is_not_data_is_refused_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    save(worked_example_session(), path)
    before = path.read_bytes()
    bad = worked_example_session()
    bad.runs.append({"id": "r2", "conditions": {"timer": object()}})
    with pytest.raises(SessionError, match=r"runs\[1\]\.conditions\.timer"):
        save(bad, path)
    assert path.read_bytes() == before


# ------------------------------------------------------------ atomic save


def test_a_save_that_fails_before_the_rename_leaves_the_old_file_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.json"
    save(worked_example_session(), path)
    before = path.read_bytes()

    def refuse(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(saving.os, "replace", refuse)
    changed = worked_example_session()
    changed.title = "changed"
    with pytest.raises(SessionError, match="No space left on device.*unchanged"):
        save(changed, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temporary file left behind


def test_a_save_that_fails_at_fsync_leaves_the_old_file_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.json"
    save(worked_example_session(), path)
    before = path.read_bytes()

    def refuse(descriptor: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(saving.os, "fsync", refuse)
    with pytest.raises(SessionError, match="Input/output error"):
        save(Session(), path)
    assert path.read_bytes() == before
    assert len(list(tmp_path.iterdir())) == 1


def test_saving_into_a_missing_folder_says_so(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="does not exist"):
        save(Session(), tmp_path / "nowhere" / "s.json")


def test_saving_through_a_symlink_updates_the_linked_file(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    save(Session(title="one"), real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    save(Session(title="two"), link)
    assert link.is_symlink()
    assert load(real).title == "two"


def test_save_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    save(Session(), path)
    os.chmod(path, 0o640)
    save(Session(title="again"), path)
    assert path.stat().st_mode & 0o777 == 0o640


# ------------------------------------------------------------ bad files


def valid_data() -> dict[str, Any]:
    return session_to_dict(worked_example_session())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(version=2), r"newer Performance Workbench \(format version 2; this one reads up to 1\)"),
        (lambda d: d.update(version="1"), r"^version: must be a whole number"),
        (lambda d: d.update(format="something-else"), r"not a Performance Workbench session"),
        (lambda d: d.pop("format"), r'no "format" key'),
        (lambda d: d.pop("version"), r'"version" key is missing'),
        (lambda d: d["operations"][1].update(declaration="gemm(M=0, N=1, K=1)"), r"^operations\[1\]\.declaration: M must be a positive integer"),
        (lambda d: d["operations"][0].update(declaration=42), r"^operations\[0\]\.declaration: expected text, found a number"),
        (lambda d: d["operations"][0].pop("declaration"), r"^operations\[0\]: an operation needs a declaration"),
        (lambda d: d["operations"][0].update(name=None), r"^operations\[0\]\.name: expected text, found null"),
        (lambda d: d.update(operations={}), r"^operations: expected an array, found an object"),
        (lambda d: d["settings"].update(convention="fma"), r"^settings\.convention: must be fma2 or mac"),
        (lambda d: d["settings"].update(overlap=1.5), r"^settings\.overlap: must be a fraction"),
        (lambda d: d["settings"].update(overlap=True), r"^settings\.overlap: expected a number, found true/false"),
        (lambda d: d["settings"].update(binary="yes"), r"^settings\.binary: expected true or false, found text"),
        (lambda d: d["device"].update(key="tpu-v9"), r"^device\.key: unknown device 'tpu-v9'"),
        (lambda d: d["device"].update(key="nvml-0"), r"^device\.detected: 'nvml-0' is a detected GPU"),
        (lambda d: d["device"]["overrides"].update(warp={"value": 1.0}), r"^device\.overrides\.warp: 'warp' is not a rate"),
        (lambda d: d["device"]["overrides"]["hbm"].update(value=-1), r"^device\.overrides\.hbm\.value: must be a positive rate"),
        (lambda d: d["device"]["overrides"]["hbm"].update(source="guessed"), r"^device\.overrides\.hbm\.source: must be one of"),
        (lambda d: d["runs"].append([1, 2]), r"^runs\[1\]: expected an object, found an array"),
        (lambda d: d.update(profiles=[None]), r"^profiles\[0\]: expected an object, found null"),
        (lambda d: d["operations"][0].update(derived=[1]), r"^operations\[0\]\.derived: expected an object"),
    ],
)
def test_a_hand_broken_file_names_what_is_wrong(change: Any, message: str) -> None:
    data = valid_data()
    change(data)
    with pytest.raises(SessionError, match=message):
        session_from_dict(data)


def test_load_puts_the_file_name_in_front_of_the_message(tmp_path: Path) -> None:
    data = valid_data()
    data["settings"]["convention"] = "flops"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SessionError) as caught:
        load(path)
    assert str(caught.value).startswith(f"session file {path}: settings.convention: must be fma2 or mac")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"   \n", "the file is empty"),
        (b'{"format": "perf-workbench-session", "version": 1, "title": "x', "looks truncated"),
        (b'{"format": "perf-workbench-session",, }', r"not valid JSON \(Expecting property name .*, line 1 column 37\)"),
        (b"\xff\xfe{}", r"not UTF-8 text \(byte 0xff at offset 0\)"),
        (b'{"format": "perf-workbench-session", "version": 1, "settings": {"overlap": NaN}}', "NaN is not a JSON number"),
        (b'{"format": "perf-workbench-session", "version": 1, "settings": {"overlap": 1e999}}', "settings.overlap: the number is too large"),
        (b'{"format": "perf-workbench-session", "format": "x", "version": 1}', "the key 'format' appears twice"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"format": "perf-workbench-session", "version": 1, "runs": [{"n": ' + b"9" * 5000 + b"}]}", "not valid JSON"),
        (b'["perf-workbench-session"]', "expected an object, found an array"),
        (b"cos\n__import__('os').system('true')", "not valid JSON"),
    ],
)
def test_broken_bytes_get_one_clear_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(SessionError, match=message) as caught:
        load(path)
    assert "\n" not in str(caught.value)


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2048)
    for module in (reading, saving):  # each reads the limit: loading and saving
        monkeypatch.setattr(module, "MAX_FILE_BYTES", 1024)
    with pytest.raises(SessionError, match=r"2,048 B \(2 KiB\) is over the limit of 1,024 B \(1 KiB\) for a session file"):
        load(path)
    with pytest.raises(SessionError, match=r"over the 1 KiB limit"):
        save(worked_example_session(), tmp_path / "too-big-to-save.json")
    assert not (tmp_path / "too-big-to-save.json").exists()
    assert MAX_FILE_BYTES == 64 * 2**20


def test_a_missing_file_and_a_folder_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="no such file"):
        load(tmp_path / "absent.json")
    with pytest.raises(SessionError, match="it is a folder"):
        load(tmp_path)


def test_session_error_is_a_workbench_error_so_the_cli_reports_it_in_one_line() -> None:
    assert issubclass(SessionError, WorkbenchError)
    with pytest.raises(WorkbenchError):
        loads(b"{}")


# ------------------------------------------------------------ the model


def test_runs_for_matches_declarations_in_canonical_form() -> None:
    session = Session(
        operations=[OperationEntry("add", "add(n=16777216, dtype=fp32)")],
        runs=[
            {"id": "a", "declaration": "add(n=2**24, dtype=fp32)"},
            {"id": "b", "declaration": "add(n=2**23, dtype=fp32)"},
            {"id": "c"},
            {"id": "d", "declaration": "not a declaration("},
        ],
    )
    assert [run["id"] for run in session.runs_for(session.operations[0])] == ["a"]


def test_analyze_all_reports_one_bad_entry_without_hiding_the_rest() -> None:
    session = Session(
        operations=[OperationEntry("fits", ADD), OperationEntry("too big", "add(n=2**40, dtype=fp32)")],
        device=DeviceChoice("rtx-4090"),
    )
    good, bad = session.analyze_all()
    assert not isinstance(good, Exception) and good.flop == 2**24
    assert isinstance(bad, WorkbenchError) and "more than" in str(bad)


def test_a_detected_gpu_outside_the_catalogue_reopens_from_its_facts(tmp_path: Path) -> None:
    facts = {
        "index": 0,
        "name": "NVIDIA Imaginary X1",
        "memory_total_bytes": 24 * 10**9,
        "memory_free_bytes": 23 * 10**9,
        "sm_clock_max_mhz": 2000,
        "memory_clock_max_mhz": 1000,
        "bus_width_bits": 256,
        "compute_capability": "8.9",
        "driver_version": "550.1",
        "cuda_driver_version": "12.4",
        "derived_bandwidth_byte_per_s": 64e9,
    }
    session = Session(
        operations=[OperationEntry("add", ADD)],
        device=DeviceChoice("nvml-0", {"fp32": Rate(40e12, "entered", "")}, detected=facts),
    )
    path = tmp_path / "s.json"
    save(session, path)
    device = load(path).device.resolve()
    # 1000 MHz × 10⁶ × 2 × 256 bit / 8 = 64 GB/s, derived from the clocks
    assert device.name == "NVIDIA Imaginary X1"
    assert device.bandwidth.value == pytest.approx(64e9) and device.bandwidth.source == "derived"
    assert device.rate("fp32").value == 40e12


def test_a_large_session_is_written_compact_and_what_opens_can_be_saved(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past COMPACT_FROM_BYTES the file is compact JSON: a session that opened under the size limit (written
    compact by another program) saves under it again, where its indented form would be a fifth larger."""
    import json

    from workbench.documents.session import load, save

    session = worked_example_session()
    small = tmp_path / "small.json"
    indented = save(session, small)
    assert indented.startswith(b"{\n  ")  # a small session stays readable
    monkeypatch.setattr(saving, "COMPACT_FROM_BYTES", 64)
    compact = save(session, tmp_path / "large.json")
    assert b"\n" not in compact.rstrip(b"\n") and len(compact) < len(indented)
    assert json.loads(compact) == json.loads(indented)
    assert dumps(load(tmp_path / "large.json")) == compact.decode("utf-8")
    for module in (reading, saving):  # the compact file just fits the limit
        monkeypatch.setattr(module, "MAX_FILE_BYTES", len(compact) + 1)
    assert save(load(tmp_path / "large.json"), tmp_path / "again.json") == compact
