"""A profile read stops at the first line after it is asked to, and a read never asked to stop is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.profilers import read_profile
from workbench.profilers.stopping import ReadStopped, until_stopped

NCU_DETAILS = Path(__file__).resolve().parent / "data" / "ncu_details.csv"


def test_a_read_asked_to_stop_ends_with_read_stopped_at_the_next_line() -> None:
    asked: list[int] = []

    def should_stop() -> bool:
        asked.append(1)
        return len(asked) > 20

    with pytest.raises(ReadStopped):
        read_profile(NCU_DETAILS, should_stop=should_stop)
    assert len(asked) == 21  # the line after the answer turned was never read


def test_a_read_never_asked_to_stop_reads_as_without_the_flag() -> None:
    plain = read_profile(NCU_DETAILS)
    flagged = read_profile(NCU_DETAILS, should_stop=lambda: False)
    assert plain.to_dict() == flagged.to_dict()


def test_the_wrapped_source_closes_the_file_it_opened() -> None:
    closed: list[bool] = []

    class Opened:
        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter(["a", "b", "c"])

        def close(self) -> None:
            closed.append(True)

    lines = until_stopped(Opened, lambda: False)
    assert list(lines()) == ["a", "b", "c"] and closed == [True]
    stopping = until_stopped(Opened, lambda: True)
    with pytest.raises(ReadStopped):
        list(stopping())
    assert closed == [True, True]
