"""Size sweeps: which fields of an operation can be swept, and the declaration at each size.

The Sweep view (bound against size), the Measure tab's size sweep and the
command line plan sweeps here, so a sweep of tied fields (a square GEMM's M=N=K,
self-attention's Sq=Skv) is the same list of declarations wherever it is asked
for, each validated as a typed declaration is. Qt-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from workbench.model.declare import Declaration, parse
from workbench.errors import DeclarationError, WorkbenchError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.model.analysis import Analysis

MAX_SWEEP_RUNS = 24  # sizes one measured sweep may run (each is a full measurement)


def sweep_choices(analysis: "Analysis") -> list[tuple[str, ...]]:
    """The field groups one can sweep for an operation: a tied group first, then each size field."""
    decl = analysis.declaration
    dims = [name for name, value in decl.fields if isinstance(value, int) and not isinstance(value, bool)]
    spec_dims = [p.name for p in decl.spec.params if p.kind == "dim"]
    ordered = [name for name in dims if name in spec_dims or decl.spec.extra_dims]
    choices: list[tuple[str, ...]] = []
    tied = decl.spec.tied_fields  # swept together by default: a square GEMM, self-attention, a square image
    if tied and all(name in ordered for name in tied):
        choices.append(tied)
    choices += [(name,) for name in ordered]
    return choices


def sweep_declarations(declaration: str | Declaration, fields: str | Sequence[str], values: Iterable[Any]) -> list[Declaration]:
    """The declaration at each value of the swept size fields (tied fields all take the value).

    Each declaration is validated as a parsed one: a size the operation
    refuses raises DeclarationError naming the field.
    """
    decl = parse(declaration) if isinstance(declaration, str) else declaration
    names = (fields,) if isinstance(fields, str) else tuple(fields)
    if not names:
        raise WorkbenchError(f"{decl.op} has no size field to sweep")
    for name in names:
        if name not in decl.params:
            raise DeclarationError(f"{decl.op} has no field '{name}' to sweep", field=name)
    return [decl.replace(**{name: int(value) for name in names}) for value in values]


def powers_of_two(low: int, high: int, limit: int = MAX_SWEEP_RUNS) -> list[int]:
    """2^low … 2^high, refused when the range runs backwards or holds more than `limit` sizes."""
    if low > high:
        raise WorkbenchError(f"the sweep starts above its end (2^{low} > 2^{high})")
    if high - low + 1 > limit:
        raise WorkbenchError(f"a sweep runs at most {limit} sizes; 2^{low} … 2^{high} is {high - low + 1}")
    return [2**exponent for exponent in range(low, high + 1)]


def swept_size(other: Declaration | None, declaration: Declaration, fields: Sequence[str]) -> int | None:
    """The size at which `other` lies on the sweep of `declaration` over `fields`, else None.

    `other` lies on it when it is the same operation, its swept fields all
    hold one positive size, and every other field equals the declaration's
    (a measured run drawn on the bound-vs-size plot).
    """
    if other is None or other.op != declaration.op or not fields:
        return None
    sizes = {other.params.get(name) for name in fields}
    if len(sizes) != 1:
        return None
    size = sizes.pop()
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return None
    held = {name: value for name, value in declaration.params.items() if name not in fields}
    if {name: value for name, value in other.params.items() if name not in fields} != held:
        return None
    return size
