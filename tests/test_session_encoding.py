"""A session written piece by piece: the same bytes as encoding it whole, each run encoded and checked once per
run dict, the copy a save takes, and a save that does not parse a file it already knows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workbench.documents import session as session_module
from workbench.documents import session_sync
from workbench.documents.autosave import Autosaver, read_recovery_file
from workbench.model.devices import Rate
from workbench.documents.session import (
    MAX_NESTING,
    OperationEntry,
    RunEncodings,
    SaveStopped,
    Session,
    SessionError,
    encode_file_data,
    encode_session,
    load,
    same_session,
    save,
    session_to_dict,
    snapshot,
)
from workbench.documents.session import saving
from workbench.documents.session_sync import Snapshot, save_merged

ADD = "add(n=2**16, dtype=fp32)"


def run_record(index: int) -> dict[str, Any]:
    return {
        "id": f"r{index}",
        "declaration": ADD,
        "samples_s": [1e-5 * (1 + index % 7 / 10), 1.1e-5, float("nan")],
        "conditions": {"clock": 1980, "note": "ünïcode µs"},
        "valid": True,
    }


def many_runs_session(count: int = 40) -> Session:
    return Session(
        title="encoded — µs",
        operations=[OperationEntry.automatic(ADD), OperationEntry("second", "gemm(M=64, N=64, K=64, dtype=fp16)", "notes")],
        runs=[*(run_record(index) for index in range(count)), {}, {"declaration": ADD, "derived": {"old": 1}}],
        profiles=[{"kernel": "k", "dram_bytes": 12}],
        extra={"kept": {"runs": []}},  # a nested key named like the runs' must not be taken for them
    )


@pytest.mark.parametrize("compact_from", [saving.COMPACT_FROM_BYTES, 64])
@pytest.mark.parametrize("derived", [True, False])
def test_pieces_give_the_bytes_of_the_whole(monkeypatch: pytest.MonkeyPatch, compact_from: int, derived: bool) -> None:
    monkeypatch.setattr(saving, "COMPACT_FROM_BYTES", compact_from)
    session = many_runs_session()
    whole = encode_file_data(session_to_dict(session, include_derived=derived))
    encodings = RunEncodings()
    assert encode_session(session, derived, encodings=encodings) == whole
    assert encode_session(session, derived, encodings=encodings) == whole  # from the kept texts
    assert (whole.count(b"\n") > 2) == (compact_from > len(whole))


def test_each_run_is_encoded_once_however_often_the_session_is_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = many_runs_session(30)
    encoded: list[int] = []
    real = saving._run_text
    monkeypatch.setattr(saving, "_run_text", lambda run, index: encoded.append(index) or real(run, index))
    encodings = RunEncodings()
    first = save(session, tmp_path / "a.json", encodings=encodings)
    assert len(encoded) == len(session.runs)
    Autosaver(tmp_path / "autosave", pid=7).write(session, None, None, encodings)
    assert save(session, tmp_path / "a.json", encodings=encodings) == first
    assert len(encoded) == len(session.runs)  # neither the autosave nor the second save walked a run again
    session.runs.append(run_record(99))  # a new run dict: only it is encoded
    session.runs[0] = dict(session.runs[0], id="replaced")  # replaced, as the app replaces runs: encoded anew
    save(session, tmp_path / "a.json", encodings=encodings)
    assert sorted(encoded[len(session.runs) - 1 :]) == [0, len(session.runs) - 1]
    assert load(tmp_path / "a.json").runs[0]["id"] == "replaced"


def test_a_run_nested_past_the_limit_at_its_place_in_the_file_is_refused_and_one_at_the_limit_opens(tmp_path: Path) -> None:
    def nested(levels: int) -> Any:
        value: Any = 1
        for _ in range(levels):
            value = [value]
        return value

    # The file's object is level 1, the runs array 2, the run 3, its conditions 4: lists inside them take it to
    # MAX_NESTING, which the loader takes, and one more, which it refuses.
    fits = Session(runs=[{"declaration": ADD, "conditions": nested(MAX_NESTING - 3)}])
    save(fits, tmp_path / "fits.json")
    assert load(tmp_path / "fits.json").runs[0]["conditions"] == nested(MAX_NESTING - 3)
    data = json.loads((tmp_path / "fits.json").read_text())
    data["runs"][0]["conditions"] = nested(MAX_NESTING - 2)
    with pytest.raises(SessionError, match="nested more than 64 levels"):
        session_module.loads(json.dumps(data))
    deeper = Session(runs=[run_record(0), {"declaration": ADD, "conditions": nested(MAX_NESTING - 2)}])
    with pytest.raises(SessionError, match=r"runs\[1\]\.conditions.*nested more than 64 levels"):
        save(deeper, tmp_path / "deeper.json")
    assert not (tmp_path / "deeper.json").exists()
    with pytest.raises(SessionError, match=r"runs\[0\]: expected an object, found text"):
        save(Session(runs=["not a run"]), tmp_path / "text.json")  # type: ignore[list-item]
    with pytest.raises(SessionError, match=r"runs\[0\]\.note: text holding a lone surrogate"):
        save(Session(runs=[{"note": "\udcff"}]), tmp_path / "surrogate.json")


def test_a_save_still_refuses_what_would_not_open_again(tmp_path: Path) -> None:
    broken = Session(steps=[session_module.StepEntry("s", "a = not a declaration")])
    with pytest.raises(SessionError, match="would not open again"):
        save(broken, tmp_path / "broken.json")


def test_the_copy_a_save_takes_is_not_reached_by_later_edits_and_shares_the_runs() -> None:
    session = many_runs_session(5)
    copy = snapshot(session)
    assert same_session(copy, session)
    session.operations[0].declaration = "add(n=2**20, dtype=fp32)"
    session.settings.overlap = 0.5
    session.device.overrides["hbm"] = Rate(1e12, "entered", "")
    session.runs.append(run_record(50))
    assert copy.operations[0].declaration == ADD and copy.settings.overlap == 1.0
    assert "hbm" not in copy.device.overrides and len(copy.runs) == len(session.runs) - 1
    assert all(a is b for a, b in zip(copy.runs, session.runs))  # shared, not copied
    assert not same_session(copy, session)
    assert not same_session(snapshot(session), Session(**{**session.__dict__, "runs": [dict(r) for r in session.runs]}))


def test_a_save_over_the_file_it_knows_does_not_parse_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "known.json"
    session = many_runs_session(5)
    written = save(session, path)
    base = Snapshot.of(session, written)

    def never(*args: Any) -> Any:
        raise AssertionError("the file was parsed although its bytes were those the writer knew")

    monkeypatch.setattr(session_sync, "loads_named", never)
    session.title = "changed"
    outcome = save_merged(path, session, base)
    assert outcome.written and load(path).title == "changed"


def test_the_recovery_file_holds_the_session_and_a_stopped_autosave_writes_nothing(tmp_path: Path) -> None:
    session = many_runs_session(10)
    autosaver = Autosaver(tmp_path / "autosave", pid=7)
    autosaver.write(session, tmp_path / "s.json", None, RunEncodings())
    record, recovered = read_recovery_file(autosaver.path)
    assert record["source_path"] == str(tmp_path / "s.json")
    assert recovered.title == session.title and len(recovered.runs) == len(session.runs)
    assert recovered.runs[0] == json.loads(json.dumps(session_to_dict(session, include_derived=False)))["runs"][0]
    autosaver.discard()
    with pytest.raises(SaveStopped):
        autosaver.write(session, None, None, RunEncodings(), should_stop=lambda: True)
    assert not autosaver.exists
