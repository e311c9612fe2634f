"""A trace being read stops when asked (a Cancel, the window closing), in either format, and reads as before
when never asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_fixtures import csv_text, write_sqlite
from workbench.profilers.stopping import ReadStopped
from workbench.profilers.trace_reader import read_trace


@pytest.fixture(params=["csv", "sqlite"])
def trace_file(request, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    if request.param == "csv":
        path = tmp_path / "trace.csv"
        path.write_text(csv_text())
        return path
    return write_sqlite(tmp_path / "trace.sqlite")


def test_a_read_asked_to_stop_ends_with_read_stopped(trace_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.profilers import trace_sqlite

    monkeypatch.setattr(trace_sqlite, "_SQLITE_STOP_STEPS", 1)  # a small database finishes within 10,000 steps
    with pytest.raises(ReadStopped):
        read_trace(trace_file, should_stop=lambda: True)


def test_a_read_never_asked_to_stop_reads_as_without_the_flag(trace_file: Path) -> None:
    plain, flagged = read_trace(trace_file), read_trace(trace_file, should_stop=lambda: False)
    assert len(plain) == len(flagged) > 0 and plain.summary() == flagged.summary()
