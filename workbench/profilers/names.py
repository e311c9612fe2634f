"""Kernel names and the rules that select them: the part of matching the records hold.

`kernel_base_name()` strips what ncu and nsys print around a demangled name
(return type, template arguments, parameter list). A `MatchRule` pairs a
kernel-name pattern with a declaration line; a `Profile` keeps its rules, so
they live here, in the data layer, beside the records. Patterns follow ncu's
own `--kernel-name` habits: `regex:EXPR` searches with a regular expression;
text with `*`, `?` or `[` is a shell-style glob; any other text matches a
kernel whose base name equals it or whose full name contains it. Making a
rule from `PATTERN=DECL` text and pairing kernels with rules is
`profilers.matching`'s work.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from workbench.errors import WorkbenchError
from workbench.profilers.errors import ProfileError

REGEX_PREFIX = "regex:"
_GLOB_MARKS = ("*", "?", "[")


class MatchError(WorkbenchError):
    """A match rule that cannot work: no '=', an empty pattern, a bad regular expression."""


def _closing_span(text: str, end: int, opener: str, closer: str) -> int:
    """Index of the `opener` that balances the `closer` at text[end], scanning backwards; -1 when none does."""
    depth = 0
    for index in range(end, -1, -1):
        char = text[index]
        if char == closer:
            depth += 1
        elif char == opener:
            depth -= 1
            if depth == 0:
                return index
    return -1


def kernel_base_name(name: str) -> str:
    """'void at::native::add_kernel<float, 4>(float*, int)' → 'at::native::add_kernel'.

    Drops the parameter list, template arguments and return type that ncu and
    nsys print for demangled names; a plain name comes back unchanged. (Called
    once per kernel of a summary of a million: the common shapes take no
    character-by-character scan.)
    """
    text = name.strip()
    # The opener balancing the last closer is the last opener when no closer of the kind lies between
    # them ('(float *, int)'), as in most names: found without a scan (rfind gives -1 where there is none).
    if text.endswith(")"):
        start = text.rfind("(")
        if start >= 0 and text.count(")", start) != 1:
            start = _closing_span(text, len(text) - 1, "(", ")")
        if start > 0:
            text = text[:start].rstrip()
    if text.endswith(">"):
        start = text.rfind("<")
        if start >= 0 and text.count(">", start) != 1:
            start = _closing_span(text, len(text) - 1, "<", ">")
        if start > 0:
            text = text[:start].rstrip()
    if "<" not in text and "(" not in text and ">" not in text and ")" not in text:
        cut = text.rfind(" ") + 1  # no brackets: every space is at depth 0
    else:
        depth = 0
        cut = 0
        for index, char in enumerate(text):
            if char in "<(":
                depth += 1
            elif char in ">)":
                depth -= 1
            elif char == " " and depth == 0:
                cut = index + 1
    return text[cut:] or name.strip()


# One demangled name of the common shape per line: words, the base name, then template arguments
# holding no angle bracket and a parameter list holding no parenthesis. For such a line
# kernel_base_name() gives group 1 (each step of it then takes the fast branch).
_COMMON_SHAPE = re.compile(
    r"^(?:[\w:~.$]++ )*+([\w:~.$]++) ?+(?:<[^<>\n]*+>)?+ ?+(?:\([^()\n]*+\))?+$", re.MULTILINE
)


def kernel_base_names(names: Sequence[str]) -> list[str]:
    """kernel_base_name() of each name (the same texts); when all are of the common shape, found at
    once: a summary of a million kernels prints and writes every one."""
    joined = "\n".join(names)
    if joined.count("\n") == len(names) - 1:  # one name a line
        found = _COMMON_SHAPE.findall(joined)  # a line matches whole or not at all
        if len(found) == len(names):
            return found
    return list(map(kernel_base_name, names))


@dataclass(frozen=True)
class MatchRule:
    """A kernel-name pattern and the declaration it stands for (`name`: the operation entry, if any)."""

    pattern: str
    declaration: str
    name: str = ""

    def __post_init__(self) -> None:
        if not self.pattern.strip():
            raise MatchError("a match rule needs a kernel-name pattern before '='")
        if self.pattern.startswith(REGEX_PREFIX):
            try:
                re.compile(self.pattern[len(REGEX_PREFIX):])
            except re.error as exc:
                raise MatchError(f"match pattern '{self.pattern}': bad regular expression ({exc})") from None

    def matches(self, kernel_name: str) -> bool:
        """True when the pattern selects this kernel (full or base name, see the module doc)."""
        base = kernel_base_name(kernel_name)
        pattern = self.pattern
        if pattern.startswith(REGEX_PREFIX):
            expression = re.compile(pattern[len(REGEX_PREFIX):])
            return bool(expression.search(kernel_name) or expression.search(base))
        if any(mark in pattern for mark in _GLOB_MARKS):
            return fnmatch.fnmatchcase(base, pattern) or fnmatch.fnmatchcase(kernel_name, pattern)
        return base == pattern or pattern in kernel_name

    def to_dict(self) -> dict[str, str]:
        return {"pattern": self.pattern, "declaration": self.declaration, "name": self.name}

    @classmethod
    def from_dict(cls, data: Any) -> "MatchRule":
        if not isinstance(data, Mapping):
            raise ProfileError(f"a match rule must be an object; got {data!r}", "profile record")
        pattern, declaration, name = data.get("pattern"), data.get("declaration"), data.get("name", "")
        if not (isinstance(pattern, str) and isinstance(declaration, str) and isinstance(name, str)):
            raise ProfileError("a match rule needs text for pattern, declaration and name", "profile record")
        try:
            return cls(pattern, declaration, name)
        except MatchError as exc:
            raise ProfileError(str(exc), "profile record") from None
