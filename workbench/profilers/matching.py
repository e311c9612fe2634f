"""Which declared operation an imported kernel implements: rules from text, pairing, and a first guess.

A `MatchRule` (in `profilers.names`, the data layer, with `kernel_base_name`)
pairs a kernel-name pattern with a declaration line. Here: `parse_match()`
reads one from `PATTERN=DECL` text through the core's parser,
`match_kernels()` pairs kernels with the first rule that selects each, and the
GUI's import dialog preselects with `suggest_operation()`.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from workbench.errors import WorkbenchError
from workbench.profilers.names import REGEX_PREFIX, MatchError, MatchRule, kernel_base_name

__all__ = ["REGEX_PREFIX", "MatchError", "MatchRule", "first_rule", "kernel_base_name", "match_kernels", "operation_suggester", "parse_match",
           "suggest_operation"]

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


def operation_suggester(declarations: Mapping[str, str]) -> Callable[..., str | None]:
    """suggest_operation() for many kernels against the same declarations: they are parsed once, and
    the function made takes a kernel's name (and its base name, where the caller has it)."""
    from workbench.declare import parse
    from workbench.ops import REGISTRY

    operations: dict[str, str] = {}
    for key, line in declarations.items():
        try:
            operations[key] = parse(line).op
        except WorkbenchError:
            continue
    named = sorted((spec.kernel_names.rank, spec.name, spec.kernel_names.words) for spec in REGISTRY.values() if spec.kernel_names)
    ranks = [[(op, words) for op_rank, op, words in named if op_rank == rank] for rank in sorted({rank for rank, _, _ in named})]
    # Per rank, whether any of its words is in the name at all, asked in one C search (the registry's own
    # words, escaped: no pattern from a file); only a rank with a hit is looked at word by word.
    anywhere = [re.compile("|".join(re.escape(word) for _, words in rank for word in words)).search for rank in ranks]
    any_rank = re.compile("|".join(re.escape(word) for _, _, words in named for word in words)).search

    def suggest(kernel_name: str, base: str | None = None) -> str | None:
        lowered = (kernel_base_name(kernel_name) if base is None else base).lower()
        if any_rank(lowered) is None:  # no operation's word at all: most names of a trace of many
            return None
        for rank, search in zip(ranks, anywhere):
            if search(lowered) is None:
                continue
            hits = {op for op, words in rank if any(word in lowered for word in words)}
            if hits:
                candidates = [key for key, op in operations.items() if op in hits]
                return candidates[0] if len(candidates) == 1 else None
        return None

    return suggest
