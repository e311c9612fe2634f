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

A rule may come from a file someone sent (a session's profile record), so
matching cannot be made slow by its pattern: regular expressions and globs
(translated here, `_glob_expression`) both run on RE2, whose time is linear
in the name's length whatever the pattern (no backtracking: `(a+)+b` costs
what `a+b` does). A pattern is at most MAX_PATTERN_CHARS long, and RE2 holds
a compiled pattern in at most MAX_PATTERN_MEMORY bytes, past which it is
refused with RE2's reason; what RE2 does not have (backreferences,
lookaround) is refused in one line as a bad regular expression.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from workbench.errors import WorkbenchError
from workbench.profilers.errors import ProfileError
from workbench.records import from_plain, record, to_plain

REGEX_PREFIX = "regex:"
_GLOB_MARKS = ("*", "?", "[")
MAX_PATTERN_CHARS = 1000  # a kernel-name pattern longer than this is not one a person wrote
MAX_PATTERN_MEMORY = 8 * 2**20  # RE2's memory for one compiled pattern (its DFA cache included)


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
# kernel_base_name() gives group 1 (each step of it then takes the fast branch). The words are ASCII
# (an explicit class is matched faster than Unicode \w): a name with other letters is not of this shape,
# and its block is taken name by name.
_COMMON_SHAPE = re.compile(
    r"^(?:[A-Za-z0-9_:~.$]++ )*+([A-Za-z0-9_:~.$]++) ?+(?:<[^<>\n]*+>)?+ ?+(?:\([^()\n]*+\))?+$", re.MULTILINE
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


def _re2_compile(expression: str, pattern: str, dot_nl: bool = False) -> Any:
    """The pattern compiled by RE2 (linear-time matching, bounded memory); MatchError naming it otherwise."""
    import re2

    options = re2.Options()
    options.max_mem = MAX_PATTERN_MEMORY
    options.log_errors = False  # the reason comes back in the exception, said once in our message
    options.dot_nl = dot_nl
    if not _encodable(expression):
        raise MatchError(f"match pattern '{pattern[:80]}' holds text that is not Unicode (a lone surrogate)")
    try:
        return re2.compile(expression.encode("utf-8"), options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise MatchError(f"match pattern '{pattern[:80]}': bad regular expression ({reason}; RE2 syntax, without backreferences or lookaround)") from None


def _literal(char: str) -> str:
    """One character as RE2 reads it literally, in a class or outside one: ASCII punctuation escaped with a
    backslash, other ASCII that is not a letter or digit (a space, a control character) as its code."""
    if char.isalnum() or char == "_" or ord(char) > 127:
        return char
    if 33 <= ord(char) <= 126:
        return "\\" + char
    return f"\\x{{{ord(char):02x}}}"


def _glob_class(body: str) -> str | None:
    """A glob's bracket expression (without its brackets) as an RE2 class, as fnmatch reads it: '!' first
    negates, ']' first is a member, 'a-z' a range (a reversed range is empty); None when nothing can match."""
    negate = body.startswith("!")
    if negate:
        body = body[1:]
    members: list[str] = []
    index = 0
    while index < len(body):
        if index + 2 < len(body) and body[index + 1] == "-":
            low, high = body[index], body[index + 2]
            if low <= high:
                members.append(f"{_literal(low)}-{_literal(high)}")
            index += 3
        else:
            members.append(_literal(body[index]))
            index += 1
    if not members:
        return "." if negate else None
    return f"[{'^' if negate else ''}{''.join(members)}]"


def _glob_expression(pattern: str) -> str:
    """A shell-style glob (fnmatch's reading: '*', '?', '[...]', '[!...]') as an RE2 expression matched
    whole. fnmatch's own translation makes Python's backtracking engine do the work; this one runs on RE2."""
    parts: list[str] = []
    index, size = 0, len(pattern)
    while index < size:
        char = pattern[index]
        index += 1
        if char == "*":
            if not parts or parts[-1] != ".*":
                parts.append(".*")
        elif char == "?":
            parts.append(".")
        elif char == "[":
            end = index
            if end < size and pattern[end] == "!":
                end += 1
            if end < size and pattern[end] == "]":
                end += 1
            while end < size and pattern[end] != "]":
                end += 1
            if end >= size:  # no closing bracket: a plain '['
                parts.append("\\[")
                continue
            found = _glob_class(pattern[index:end])
            parts.append(found if found is not None else "[^\\x00-\\x{10FFFF}]")
            index = end + 1
        else:
            parts.append(_literal(char))
    return "".join(parts)


def _encodable(text: str) -> bool:
    """True when `text` is valid Unicode (RE2 reads UTF-8; a lone surrogate from a JSON file is not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _re2_text(method: Callable[[bytes], Any]) -> Callable[[str], bool]:
    """An RE2 search or match (of a pattern compiled as UTF-8 bytes) as a test of a str: the text goes as
    UTF-8 bytes, which the binding takes without mapping offsets back to characters (a third of the cost),
    and a lone surrogate (a session file may keep one) becomes U+FFFD."""

    def test(text: str) -> bool:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
        return method(data) is not None

    return test


def _star_glob(pattern: str) -> Callable[[str], bool] | None:
    """A glob of text and '*' alone ('*gemm*', 'nccl*AllReduce*') as str operations: the first part a prefix,
    the last a suffix, each between found leftmost after the one before (which is exact for '*': taking
    the earliest place never loses a match). None for a glob with '?' or '[' (those go to RE2)."""
    if "?" in pattern or "[" in pattern:
        return None
    first, *middle, last = pattern.split("*")
    middle = [part for part in middle if part]
    least = len(first) + len(last) + sum(map(len, middle))

    def matches(text: str) -> bool:
        if len(text) < least or not text.startswith(first) or not text.endswith(last):
            return False
        position, end = len(first), len(text) - len(last)
        for part in middle:
            found = text.find(part, position, end)
            if found < 0:
                return False
            position = found + len(part)
        return True

    return matches


def select_names(pattern: str, names: Sequence[str]) -> list[bool]:
    """pattern_matcher(pattern)(name, None) for each name: the full names tested first (at C speed where the
    pattern is plain text, not at all where it is '*' alone), base names found only for those the full
    name did not select, at once (kernel_base_names)."""
    matcher = pattern_matcher(pattern)  # refuses what cannot be matched
    if pattern.startswith(REGEX_PREFIX) or any(mark in pattern for mark in _GLOB_MARKS):
        if not pattern.strip("*"):  # '*', '**': every name
            return [True] * len(names)
        hits = [matcher(name, name) for name in names]  # the name as its own base: the full-name test alone
        rest = list(itertools.compress(range(len(names)), map(operator.not_, hits)))
        for index, base in zip(rest, kernel_base_names([names[i] for i in rest])):
            hits[index] = matcher(base, base)
        return hits
    return list(map(operator.contains, names, itertools.repeat(pattern)))


@functools.lru_cache(maxsize=1024)
def pattern_matcher(pattern: str) -> Callable[[str, str | None], bool]:
    """The test a pattern makes of a kernel: f(full name, base name or None) → selected (see the module doc).
    Compiled once per pattern; MatchError for a pattern that cannot be matched."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise MatchError(f"a match pattern is limited to {MAX_PATTERN_CHARS:,} characters; this one has {len(pattern):,}")
    if pattern.startswith(REGEX_PREFIX):
        search = _re2_text(_re2_compile(pattern[len(REGEX_PREFIX):], pattern).search)
        return lambda name, base: search(name) or search(kernel_base_name(name) if base is None else base)
    if any(mark in pattern for mark in _GLOB_MARKS):
        whole = _star_glob(pattern) or _re2_text(_re2_compile(_glob_expression(pattern), pattern, dot_nl=True).fullmatch)
        return lambda name, base: whole(name) or whole(kernel_base_name(name) if base is None else base)
    # The base name is a part of the full name, so a base equal to the pattern is a full name containing it.
    return lambda name, base: pattern in name


@dataclass(frozen=True)
class MatchRule:
    """A kernel-name pattern and the declaration it stands for (`name`: the operation entry, if any)."""

    pattern: str
    declaration: str
    name: str = ""

    def __post_init__(self) -> None:
        if not self.pattern.strip():
            raise MatchError("a match rule needs a kernel-name pattern before '='")
        pattern_matcher(self.pattern)  # refuses a pattern that cannot be matched, here rather than later

    def matches(self, kernel_name: str, base: str | None = None) -> bool:
        """True when the pattern selects this kernel (full or base name, see the module doc); `base` is
        kernel_base_name(kernel_name) where the caller has it already (found only if needed otherwise)."""
        return pattern_matcher(self.pattern)(kernel_name, base)

    def to_dict(self) -> dict[str, str]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> "MatchRule":
        if not isinstance(data, Mapping):
            raise ProfileError(f"a match rule must be an object; got {data!r}", "profile record")
        try:
            return from_plain(data, cls)
        except MatchError as exc:
            raise ProfileError(str(exc), "profile record") from None


def _rule_text(value: Any) -> str:
    if not isinstance(value, str):
        raise ProfileError("a match rule needs text for pattern, declaration and name", "profile record")
    return value


record(MatchRule, missing={"pattern": None, "declaration": None}, load=dict.fromkeys(("pattern", "declaration", "name"), _rule_text))
