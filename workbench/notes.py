"""Notes in Markdown with checklists: the boxes a student ticks, found and ticked in the text itself.

A session's description and each operation's notes are Markdown. A line
`- [ ] the median time` is a box to tick; `- [x] …` is ticked. The text is
the one truth: the window renders it and ticks a box by rewriting that one
line, reports print it, the session file stores it. Lines written as a bare
`[ ] …` (without the list dash, as early examples did) are boxes too, shown
as list items. Lines inside fenced code blocks are never boxes.

No Qt here: the notes panel (gui/notes_panel.py) renders `as_markdown(text)`
and maps the n-th rendered box to `checklist(text)[n]`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# optional indent, an optional list marker, then [ ], [x] or [X] and a space (or the end of the line)
_BOX = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>(?:[-*+]|\d{1,9}[.)])[ \t]+)?\[(?P<mark>[ xX])\](?=[ \t]|$)")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


@dataclass(frozen=True)
class ChecklistItem:
    """One box in the text: its line (0-based), whether it is ticked, and what it says."""

    line: int
    checked: bool
    text: str


def _box_lines(text: str) -> list[tuple[int, re.Match[str]]]:
    found = []
    fenced = False
    for number, line in enumerate(text.split("\n")):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _BOX.match(line)
        if match is not None:
            found.append((number, match))
    return found


def checklist(text: str) -> list[ChecklistItem]:
    """Every box in the text, in order."""
    lines = text.split("\n")
    return [
        ChecklistItem(number, match["mark"] != " ", lines[number][match.end() :].strip())
        for number, match in _box_lines(text)
    ]


def set_checked(text: str, index: int, checked: bool) -> str:
    """The text with box `index` (0-based, in order) ticked or not; every other character kept."""
    boxes = _box_lines(text)
    if not 0 <= index < len(boxes):
        raise IndexError(f"no box {index + 1}: the text has {len(boxes)}")
    number, match = boxes[index]
    lines = text.split("\n")
    line = lines[number]
    at = match.start("mark")
    lines[number] = line[:at] + ("x" if checked else " ") + line[at + 1 :]
    return "\n".join(lines)


def progress(text: str) -> tuple[int, int]:
    """(ticked, boxes) in the text."""
    items = checklist(text)
    return sum(item.checked for item in items), len(items)


def as_markdown(text: str) -> str:
    """The text as Markdown renders it: bare `[ ]` lines become list items so they render as boxes."""
    boxes = {number: match for number, match in _box_lines(text) if not match["marker"]}
    if not boxes:
        return text
    lines = text.split("\n")
    for number, match in boxes.items():
        line = lines[number]
        indent = match["indent"]
        lines[number] = f"{indent}- {line[len(indent):]}"
        # a list right after a paragraph line needs no blank line in CommonMark; keep the text as written
    return "\n".join(lines)


def with_boxes_drawn(text: str) -> str:
    """Plain text with each box drawn as ☐ or ☑, for readers that do not render Markdown (HTML reports)."""
    lines = text.split("\n")
    for number, match in _box_lines(text):
        line = lines[number]
        glyph = "☐" if match["mark"] == " " else "☑"
        lines[number] = line[: match.start("mark") - 1] + glyph + line[match.end("mark") + 1 :]
    return "\n".join(lines)
