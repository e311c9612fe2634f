"""Which declared operation an imported kernel implements: rules from text, pairing, and a first guess.

A `MatchRule` (in `profilers.names`, the data layer, with `kernel_base_name`)
pairs a kernel-name pattern with a declaration line. Here: `parse_match()`
reads one from `PATTERN=DECL` text through the core's parser,
`match_kernels()` pairs kernels with the first rule that selects each, and the
GUI's import dialog preselects with `suggest_operation()`.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence, TypeVar

from workbench.errors import WorkbenchError
from workbench.profilers.names import REGEX_PREFIX, MatchError, MatchRule, kernel_base_name

__all__ = ["REGEX_PREFIX", "MatchError", "MatchRule", "first_rule", "kernel_base_name", "match_kernels", "operation_suggester",
           "OperationSuggester", "parse_match",
           "suggest_operation"]

def parse_match(text: str) -> MatchRule:
    """'vector_add=add(n=2**24, dtype=fp32)' → MatchRule; the pattern ends at the first '='.

    The declaration is checked (and made canonical) with the core's parser, so
    a typo fails here with the core's message rather than later.
    """
    from workbench.model.declare import parse

    pattern, separator, declaration = text.partition("=")
    if not separator or not declaration.strip():
        raise MatchError(f"--match wants PATTERN=DECLARATION, e.g. 'vector_add=add(n=2**24, dtype=fp32)'; got '{text}'")
    return MatchRule(pattern.strip(), str(parse(declaration)))


Named = TypeVar("Named")


def match_kernels(kernels: Iterable[Named], rules: Sequence[MatchRule]) -> list[tuple[Named, MatchRule]]:
    """Each kernel (anything with a `.name`) paired with the first rule that selects it; unmatched left out."""
    pairs: list[tuple[Named, MatchRule]] = []
    for kernel in kernels:
        rule = first_rule(getattr(kernel, "name"), rules)
        if rule is not None:
            pairs.append((kernel, rule))
    return pairs


def first_rule(name: str, rules: Sequence[MatchRule]) -> MatchRule | None:
    """The first rule that selects the kernel called `name`, or None."""
    return next((rule for rule in rules if rule.matches(name)), None)


def suggest_operation(kernel_name: str, declarations: Mapping[str, str]) -> str | None:
    """The entry (a key of `declarations`, values are declaration lines) a kernel most likely implements.

    A first guess for the import dialog. Each operation registers the words
    that mark its kernels' names (`OpSpec.kernel_names`); they are tried by
    rank, and the first rank with a word in the kernel's name picks the entries
    of its operations (GEMM and einsum share a rank): with one such entry it is
    the answer, with several or none there is no guess (None).
    """
    return operation_suggester(declarations)(kernel_name)


def operation_suggester(declarations: Mapping[str, str]) -> "OperationSuggester":
    """suggest_operation() for many kernels against the same declarations: they are parsed once, and
    the object made is called with a kernel's name (and its base name, where the caller has it), or
    asked `many` names at once."""
    return OperationSuggester(declarations)


class OperationSuggester:
    """suggest_operation() against one set of declarations (see operation_suggester)."""

    def __init__(self, declarations: Mapping[str, str]) -> None:
        from workbench.model.declare import parse
        from workbench.model.ops import REGISTRY

        self.operations: dict[str, str] = {}
        for key, line in declarations.items():
            try:
                self.operations[key] = parse(line).op
            except WorkbenchError:
                continue
        named = sorted((spec.kernel_names.rank, spec.name, spec.kernel_names.words) for spec in REGISTRY.values() if spec.kernel_names)
        self.ranks = [[(op, words) for op_rank, op, words in named if op_rank == rank] for rank in sorted({rank for rank, _, _ in named})]
        # Per rank, whether any of its words is in the name at all, asked in one C search (the registry's own
        # words, escaped: no pattern from a file); only a rank with a hit is looked at word by word.
        self.anywhere = [re.compile("|".join(re.escape(word) for _, words in rank for word in words)).search for rank in self.ranks]
        self.any_word = re.compile("|".join(re.escape(word) for _, _, words in named for word in words))
        self.ascii_words = all(word.isascii() for _, _, words in named for word in words)

    def __call__(self, kernel_name: str, base: str | None = None) -> str | None:
        lowered = (kernel_base_name(kernel_name) if base is None else base).lower()
        if self.any_word.search(lowered) is None:  # no operation's word at all: most names of a trace of many
            return None
        return self._ranked(lowered)

    def _ranked(self, lowered: str) -> str | None:
        for rank, search in zip(self.ranks, self.anywhere):
            if search(lowered) is None:
                continue
            hits = {op for op, words in rank if any(word in lowered for word in words)}
            if hits:
                candidates = [key for key, op in self.operations.items() if op in hits]
                return candidates[0] if len(candidates) == 1 else None
        return None

    def many(self, names: Sequence[str], bases: Sequence[str] | None = None) -> list[str | None]:
        """The suggestion for each name (`bases`: their base names, where the caller has them). The names
        holding any operation's word are found by one search over them all, one a line, and only those are
        looked at one by one. Without `bases` the search is over the full names: a base name is a part of
        its name, so a word (ASCII: lower() maps its letters alike in either) in the one is in the other."""
        if bases is None and not self.ascii_words:
            bases = [kernel_base_name(name) for name in names]
        texts = names if bases is None else bases
        found: list[str | None] = [None] * len(texts)
        joined = "\n".join(texts).lower().encode("utf-8", errors="surrogatepass")
        if joined.count(b"\n") != len(texts) - 1:  # a name holding a line break: each on its own
            return [self(name, None if bases is None else bases[i]) for i, name in enumerate(names)]
        line, at, done = 0, 0, -1
        for match in self._any_word_bytes().finditer(joined):  # a word never holds a line break: each is in one line
            line += joined.count(b"\n", at, match.start())
            at = match.start()
            if line != done:
                found[line], done = self(names[line], None if bases is None else bases[line]), line
        return found

    def _any_word_bytes(self) -> Any:
        """any_word for RE2 over UTF-8 bytes (a DFA: one pass over a million names, where Python's re tries
        each word at each character)."""
        import re2

        options = re2.Options()
        options.max_mem = 64 * 2**20  # the registry's few dozen words take far less
        return re2.compile(self.any_word.pattern.encode("utf-8"), options)
