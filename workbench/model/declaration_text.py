"""Edit one field of a declaration line in place, keeping the rest of the user's text.

The form beside the declaration line writes through these helpers: a field
edit replaces exactly that field's text in the line (found with `ast`
positions, never evaluated), so what the user typed elsewhere, valid or not,
is kept. Qt-free.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class CallText:
    """The pieces of a syntactically valid `name(...)` line, as the user wrote them."""

    op: str
    positional: tuple[str, ...]  # source text of each positional argument
    fields: dict[str, str]  # field name -> source text of its value


@functools.lru_cache(maxsize=256)
def _call(line: str) -> ast.Call | None:
    """The line's call node (read, never changed, by the callers: kept for the next ask of the same line, as the
    form reads the line the user is typing on every keystroke, and writes a field through it)."""
    try:
        tree = ast.parse(line.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    if any(keyword.arg is None for keyword in call.keywords):
        return None
    return call


def _segment(source: bytes, node: ast.AST) -> str:
    # ast offsets count UTF-8 bytes, not characters.
    return source[node.col_offset : node.end_col_offset].decode("utf-8")  # type: ignore[attr-defined]


def split_call(line: str) -> CallText | None:
    """The operation name and each argument's text, or None when the line is not one call."""
    call = _call(line)
    if call is None:
        return None
    source = line.strip().encode("utf-8")
    return CallText(
        op=call.func.id,  # type: ignore[attr-defined]
        positional=tuple(_segment(source, arg) for arg in call.args),
        fields={keyword.arg: _segment(source, keyword.value) for keyword in call.keywords if keyword.arg},
    )


def with_field(line: str, name: str, text: str) -> str | None:
    """`line` with field `name` set to `text` (appended when absent); None if the line is not one call."""
    call = _call(line)
    if call is None:
        return None
    source = line.strip().encode("utf-8")
    value = text.encode("utf-8")
    for keyword in call.keywords:
        if keyword.arg == name:
            start, end = keyword.value.col_offset, keyword.value.end_col_offset
            return (source[:start] + value + source[end:]).decode("utf-8")  # type: ignore[operator]
    close = call.end_col_offset - 1  # type: ignore[operator]  # the closing parenthesis
    separator = b", " if call.args or call.keywords else b""
    return (source[:close].rstrip() + separator + name.encode() + b"=" + value + source[close:]).decode("utf-8")


def without_field(line: str, name: str) -> str | None:
    """`line` with field `name` removed (unchanged when absent); None if the line is not one call."""
    call = _call(line)
    if call is None:
        return None
    source = line.strip().encode("utf-8")
    arguments: list[ast.AST] = [*call.args, *call.keywords]
    for position, keyword in enumerate(call.keywords):
        if keyword.arg != name:
            continue
        index = len(call.args) + position
        if index > 0:  # drop ", name=value" after the previous argument
            start = arguments[index - 1].end_col_offset  # type: ignore[attr-defined]
            end = keyword.end_col_offset
        elif len(arguments) > 1:  # first argument: drop "name=value, " before the next one
            start = keyword.col_offset
            end = arguments[1].col_offset  # type: ignore[attr-defined]
        else:
            start, end = keyword.col_offset, keyword.end_col_offset
        return (source[:start] + source[end:]).decode("utf-8")  # type: ignore[operator]
    return line.strip()


def with_positional(line: str, index: int, text: str) -> str | None:
    """`line` with positional argument `index` replaced (inserted first when absent)."""
    call = _call(line)
    if call is None:
        return None
    source = line.strip().encode("utf-8")
    value = text.encode("utf-8")
    if index < len(call.args):
        node = call.args[index]
        return (source[: node.col_offset] + value + source[node.end_col_offset :]).decode("utf-8")  # type: ignore[operator]
    opening = call.func.end_col_offset + 1  # type: ignore[operator]  # just after "name("
    separator = b", " if call.args or call.keywords else b""
    return (source[:opening] + value + separator + source[opening:].lstrip()).decode("utf-8")
