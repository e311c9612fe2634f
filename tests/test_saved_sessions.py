"""Every example session and every session fixture loads and saves to the bytes recorded in tests/data/saved/
(scripts/record_saved_sessions.py): a change anywhere in reading, analysing or writing a session that alters what
a user's saved file holds fails here, with the first lines that differ. A saved file, opened and saved again,
gives the same bytes."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from workbench.documents.session import dumps, load, loads

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "resources" / "examples").glob("*.json")) + sorted((ROOT / "tests" / "data").glob("session*.json"))
SAVED = ROOT / "tests" / "data" / "saved"


def _first_differences(expected: str, got: str, lines: int = 12) -> str:
    diff = difflib.unified_diff(expected.splitlines(), got.splitlines(), "recorded", "saved now", lineterm="", n=1)
    return "\n".join(line[:200] for line in list(diff)[:lines])


def test_every_source_has_its_recorded_save() -> None:
    assert len(SOURCES) >= 10
    assert sorted(path.name for path in SAVED.glob("*.json")) == sorted(path.name for path in SOURCES)


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: path.name)
def test_load_and_save_gives_the_recorded_bytes(source: Path) -> None:
    expected = (SAVED / source.name).read_text(encoding="utf-8")
    got = dumps(load(source))
    assert got == expected, (
        f"{source.name} now saves differently (re-record with scripts/record_saved_sessions.py only if the file "
        f"format is meant to change):\n{_first_differences(expected, got)}"
    )


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: path.name)
def test_a_saved_file_saves_again_to_the_same_bytes(source: Path) -> None:
    first = dumps(load(source))
    assert dumps(loads(first)) == first
