"""Which declared operation an imported kernel implements: name patterns and a first guess.

A `MatchRule` pairs a kernel-name pattern with a declaration line. Patterns
follow ncu's own `--kernel-name` habits: `regex:EXPR` searches with a regular
expression; text with `*`, `?` or `[` is a shell-style glob; any other text
matches a kernel whose base name equals it or whose full name contains it.
The GUI's import dialog preselects with `suggest_operation()`.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence, TypeVar

from workbench.errors import WorkbenchError

REGEX_PREFIX = "regex:"
_GLOB_MARKS = ("*", "?", "[")


class MatchError(WorkbenchError):
    """A match rule that cannot work: no '=', an empty pattern, a bad regular expression."""


def _closing_span(text: str, end: int, opener: str, closer: str) -> int | None:
    """Index of the `opener` that balances the `closer` at text[end], scanning backwards."""
    depth = 0
    for index in range(end, -1, -1):
        char = text[index]
        if char == closer:
            depth += 1
        elif char == opener:
            depth -= 1
            if depth == 0:
                return index
    return None


def kernel_base_name(name: str) -> str:
    """'void at::native::add_kernel<float, 4>(float*, int)' → 'at::native::add_kernel'.

    Drops the parameter list, template arguments and return type that ncu and
    nsys print for demangled names; a plain name comes back unchanged.
    """
    text = name.strip()
    if text.endswith(")"):
        start = _closing_span(text, len(text) - 1, "(", ")")
        if start is not None and start > 0:
            text = text[:start].rstrip()
    if text.endswith(">"):
        start = _closing_span(text, len(text) - 1, "<", ">")
        if start is not None and start > 0:
            text = text[:start].rstrip()
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
        from workbench.profilers.table import ProfileError

        if not isinstance(data, Mapping):
            raise ProfileError(f"a match rule must be an object; got {data!r}", "profile record")
        pattern, declaration, name = data.get("pattern"), data.get("declaration"), data.get("name", "")
        if not (isinstance(pattern, str) and isinstance(declaration, str) and isinstance(name, str)):
            raise ProfileError("a match rule needs text for pattern, declaration and name", "profile record")
        try:
            return cls(pattern, declaration, name)
        except MatchError as exc:
            raise ProfileError(str(exc), "profile record") from None


def parse_match(text: str) -> MatchRule:
    """'vector_add=add(n=2**24, dtype=fp32)' → MatchRule; the pattern ends at the first '='.

    The declaration is checked (and made canonical) with the core's parser, so
    a typo fails here with the core's message rather than later.
    """
    from workbench.declare import parse

    pattern, separator, declaration = text.partition("=")
    if not separator or not declaration.strip():
        raise MatchError(f"--match wants PATTERN=DECLARATION, e.g. 'vector_add=add(n=2**24, dtype=fp32)'; got '{text}'")
    return MatchRule(pattern.strip(), str(parse(declaration)))


Named = TypeVar("Named")


def match_kernels(kernels: Iterable[Named], rules: Sequence[MatchRule]) -> list[tuple[Named, MatchRule]]:
    """Each kernel (anything with a `.name`) paired with the first rule that selects it; unmatched left out."""
    pairs: list[tuple[Named, MatchRule]] = []
    for kernel in kernels:
        name = getattr(kernel, "name")
        rule = next((rule for rule in rules if rule.matches(name)), None)
        if rule is not None:
            pairs.append((kernel, rule))
    return pairs


def suggest_operation(kernel_name: str, declarations: Mapping[str, str]) -> str | None:
    """The entry (a key of `declarations`, values are declaration lines) a kernel most likely implements.

    A first guess for the import dialog. Each operation registers the words
    that mark its kernels' names (`OpSpec.kernel_names`); they are tried by
    rank, and the first rank with a word in the kernel's name picks the entries
    of its operations (GEMM and einsum share a rank): with one such entry it is
    the answer, with several or none there is no guess (None).
    """
    from workbench.declare import parse
    from workbench.ops import REGISTRY

    lowered = kernel_base_name(kernel_name).lower()
    operations: dict[str, str] = {}
    for key, line in declarations.items():
        try:
            operations[key] = parse(line).op
        except WorkbenchError:
            continue
    named = sorted((spec.kernel_names.rank, spec.name, spec.kernel_names.words) for spec in REGISTRY.values() if spec.kernel_names)
    for rank in sorted({rank for rank, _, _ in named}):
        hits = {op for op_rank, op, words in named if op_rank == rank and any(word in lowered for word in words)}
        if hits:
            candidates = [key for key, op in operations.items() if op in hits]
            return candidates[0] if len(candidates) == 1 else None
    return None
