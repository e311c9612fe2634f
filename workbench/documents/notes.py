"""Notes in Markdown with checklists: the boxes a student ticks, found and ticked in the text itself.

A session's description and each operation's notes are Markdown. A line
`- [ ] the median time` is a box to tick; `- [x] …` is ticked. The text is
the one truth: the window renders it and ticks a box by rewriting that one
line, reports print it, the session file stores it. Lines written as a bare
`[ ] …` (without the list dash, as early examples did) are boxes too, shown
as list items. Lines inside fenced code blocks are never boxes.

No Qt here: the notes panel (gui/notes_panel.py) renders `for_rendering(text)`
and maps the n-th rendered box to `checklist(text)[n]`.

A note is a student's arithmetic as much as prose: `2**27 BF16` and
`axpy(n=2**28, dtype=fp32)` must not turn into bold text with the stars gone.
The rule (`for_rendering`): a run of `*` with a letter or a digit directly on
each side is written, never emphasis; `**bold**` and `*this*` beside spaces or
punctuation stay emphasis. Code (a `code span`, a fenced or indented block)
is shown as written by Markdown itself and is left alone.
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


# a run of `*` with a letter or a digit (not `_`) directly before and after it: `2**27`, `2*M*N*K`
_STARS_IN_A_WORD = re.compile(r"(?<=[^\W_])\*+(?=[^\W_])")
_BACKTICKS = re.compile(r"`+")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def _stars_written(line: str) -> str:
    """The line with each `*` inside a word escaped, outside its code spans (a run of n backticks to the next
    run of exactly n; an unclosed run is text)."""
    out, at = [], 0
    while at < len(line):
        opening = _BACKTICKS.search(line, at)
        if opening is None:
            break
        closing = next(
            (run for run in _BACKTICKS.finditer(line, opening.end()) if len(run.group()) == len(opening.group())), None
        )
        if closing is None:
            break
        out.append(_STARS_IN_A_WORD.sub(lambda stars: "\\*" * len(stars.group()), line[at : opening.start()]))
        out.append(line[opening.start() : closing.end()])
        at = closing.end()
    out.append(_STARS_IN_A_WORD.sub(lambda stars: "\\*" * len(stars.group()), line[at:]))
    return "".join(out)


def for_rendering(text: str) -> str:
    """The Markdown a renderer is given for this note: `as_markdown(text)` with every `*` inside a word escaped
    (`2**27` is shown as written, see the module's rule), except in code, which Markdown shows as written:
    code spans, fenced blocks, and indented blocks (lines indented four columns or more after a blank line,
    unless a list item came before the blank line: there they continue the item)."""
    lines = as_markdown(text).split("\n")
    fenced = False
    indented_code = False
    last_text = ""  # the last line that was not blank
    after_blank = True
    for number, line in enumerate(lines):
        blank = not line.strip()
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and not blank:
            if _indent(line) >= 4 and (indented_code or (after_blank and not _continues_a_list(last_text))):
                indented_code = True
            else:
                indented_code = False
                lines[number] = _stars_written(line)
        if not blank:
            last_text = line
        after_blank = blank
    return "\n".join(lines)


def _continues_a_list(line: str) -> bool:
    return bool(_LIST_ITEM.match(line)) or _indent(line) >= 2


def with_boxes_drawn(text: str) -> str:
    """Plain text with each box drawn as ☐ or ☑, for readers that do not render Markdown (HTML reports)."""
    lines = text.split("\n")
    for number, match in _box_lines(text):
        line = lines[number]
        glyph = "☐" if match["mark"] == " " else "☑"
        lines[number] = line[: match.start("mark") - 1] + glyph + line[match.end("mark") + 1 :]
    return "\n".join(lines)
