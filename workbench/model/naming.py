"""Automatic operation names: "Vector add, 2^24 fp32", "GEMM 4096³ fp16", from the declaration.

An operation the user has not named carries a name made from its operation
family and its shape, so the list, the Analysis heading, the plot label and
the reports say what it is. Each operation names itself: its `OpSpec.namer`
lives in its own module beside its formulas (the pieces, such as 2^24 and
4096³, in `workbench.model.ops.names`); an operation without one is named from its
canonical declaration. Pure functions of a parsed `Declaration`: no Qt, no
device, no settings.

A name is a caption, not an identifier: two operations may share one (the
declaration tells them apart).
"""

from __future__ import annotations

import functools
from typing import Any

from workbench.model.declare import PARSED_LINES_KEPT, Declaration, parse
from workbench.errors import WorkbenchError

# Names the app gave before names followed declarations (docs/session-format.md, "Operation names").
LEGACY_DEFAULT_NAMES = ("new operation", "gemm 4096³ fp16")


def automatic_name(declaration: Any) -> str | None:
    """The automatic name of a declaration (a line or a parsed Declaration), or None when it does not parse."""
    if isinstance(declaration, Declaration):
        decl = declaration
    else:
        try:
            decl = parse(declaration)
        except WorkbenchError:
            return None
    return _name_of(decl, decl.spec.namer)


@functools.lru_cache(maxsize=PARSED_LINES_KEPT)
def _name_of(decl: Declaration, namer: Any) -> str:
    """`automatic_name` of a parsed declaration by its operation's `namer`, made once per declaration: an opened
    session asks for each of its operations twice (is its stored name the automatic one? then the name it
    follows), a keystroke once or twice."""
    if namer is None:
        return str(decl)
    return namer(decl.params) + _implementation_suffix(decl)


def _implementation_suffix(decl: Declaration) -> str:
    """', naive' or ', tiled 128×128×32' after the name of a declaration with impl=; '' under compulsory."""
    impl = decl.implementation
    if impl == "compulsory":
        return ""
    if impl == "tiled":
        p = decl.params
        return f", tiled {p['tile_m']}×{p['tile_n']}×{p['tile_k']}"
    return f", {impl}"


def is_legacy_default(name: str) -> bool:
    """True for a name the app itself gave an operation before automatic names: "new operation", "new operation 3"."""
    base = name.strip()
    for legacy in LEGACY_DEFAULT_NAMES:
        if base == legacy:
            return True
        if base.startswith(legacy + " ") and base[len(legacy) + 1 :].isdigit():
            return True
        if base == f"{legacy} (copy)":
            return True
    return False


def abbreviated_path(names: list[str] | tuple[str, ...], each_end: int = 3, arrow: str = " → ") -> str:
    """A path of operation names short enough for one line: the first and last `each_end` names, and how many
    stand between them ('a → b → c → … 494 more … → x → y → z'); a short path whole."""
    if len(names) <= 2 * each_end + 1:
        return arrow.join(names)
    hidden = len(names) - 2 * each_end
    return arrow.join([*names[:each_end], f"… {hidden:,} more …", *names[-each_end:]])
