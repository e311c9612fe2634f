"""Session files whose every text field holds markup: for the window's tests (issue 33) and its fuzzing.

A session is shared between students and instructors: its title, names, notes, run conditions, citations and
kernel names are a stranger's text. `markup_session(text_for)` writes one where each such field holds
`text_for(field)`, so a test can give each field its own marker (and find where it shows) or the same hostile
markup everywhere (an image of /dev/zero, a FIFO, a very large file).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

DATA = Path(__file__).parent / "data"
FIELDS = (
    "title", "description", "name", "notes", "second name", "second notes", "step name", "step comment",
    "citation", "run id", "run device", "run condition", "run condition key", "kernel", "tool",
)
# the fields the window shows (a step's name, a run's conditions and a version-1 profile record are kept in the
# file and printed in reports, not shown)
SHOWN = ("title", "description", "name", "notes", "second name", "second notes", "step comment", "citation",
         "run id", "run device")


def marker(field: str) -> str:
    """Markup naming its field: Qt renders `<u>…</u>` as underline, so shown as rich text the tags are gone."""
    return f"<u>¤{field}¤</u>"


def dev_zero(field: str) -> str:
    """The issue's reproduction: each field an image of /dev/zero, the notes and description in Markdown."""
    return "![z](/dev/zero)" if field in ("description", "notes", "second notes") else "<img src='/dev/zero'>"


def markup_session_data(text_for: Callable[[str], str]) -> dict[str, Any]:
    """The version-1 fixture session (a measured run, a profile record, a measured rate) with every text field
    replaced by `text_for(field)`, and a step whose name and comment are markup too."""
    data = copy.deepcopy(json.loads((DATA / "session_v1.json").read_text(encoding="utf-8")))
    data["title"] = text_for("title")
    data["description"] = text_for("description")
    first, second = data["operations"]
    first["name"], first["notes"] = text_for("name"), text_for("notes")
    second["name"], second["notes"] = text_for("second name"), text_for("second notes")
    data["device"]["overrides"]["hbm"]["citation"] = text_for("citation")
    run = data["runs"][0]
    run["id"] = text_for("run id")
    run["device"] = text_for("run device")
    run["conditions"]["device"] = text_for("run condition")
    run["conditions"][text_for("run condition key")] = "1"
    profile = data["profiles"][0]
    profile["kernel"], profile["tool"] = text_for("kernel"), text_for("tool")
    comment = text_for("step comment").replace("\n", " ")
    data["steps"] = [{"name": text_for("step name"), "text": f"# {comment}\na = add(n=2**20, dtype=fp32)\n"}]
    return data


def write_markup_session(path: Path, text_for: Callable[[str], str]) -> Path:
    path.write_text(json.dumps(markup_session_data(text_for), ensure_ascii=False), encoding="utf-8")
    return path
