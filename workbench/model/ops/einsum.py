"""einsum: any contraction written in index notation, e.g. "bmk,bkn->bmn"."""

from __future__ import annotations

import string
from typing import Any, Mapping

from workbench.model.dtypes import dtype
from workbench.errors import DeclarationError
from workbench.model.ops import register
from workbench.model.ops.base import FMA, OP, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload
from workbench.model.ops.paths import matrix_path, vector_path

MAX_OPERANDS = 8
FUSED, OPTIMAL, GIVEN = "fused", "optimal", "given"
ORDERS = (FUSED, OPTIMAL, GIVEN)
ORDER_WORDS = {
    FUSED: "fused, the default: one loop nest over every index (one multiply-add per point, a further multiply per further operand)",
    OPTIMAL: "optimal: the pairwise order NumPy's einsum_path(optimize='optimal') chooses, each step counted as "
             "einsum_path and opt_einsum count it (2 × the product of its indices' extents with a summed index, 1 × without)",
    GIVEN: "given: pairwise, left to right as written, each step counted as einsum_path and opt_einsum count it",
}


def parse_spec(spec: str) -> tuple[list[str], str]:
    """Split "bmk,bkn->bmn" into (['bmk', 'bkn'], 'bmn'); an implicit output follows numpy's rule."""
    text = spec.replace(" ", "")
    if not text:
        raise DeclarationError("einsum needs a spec such as \"mk,kn->mn\"", field="spec")
    if text.count("->") > 1:
        raise DeclarationError(f"einsum spec '{spec}' has more than one '->'", field="spec")
    lhs, arrow, rhs = text.partition("->")
    operands = lhs.split(",")
    if len(operands) > MAX_OPERANDS:
        raise DeclarationError(f"einsum takes at most {MAX_OPERANDS} operands", field="spec")
    for operand in operands + ([rhs] if arrow else []):
        bad = [ch for ch in operand if ch not in string.ascii_letters]
        if bad:
            raise DeclarationError(
                f"einsum spec '{spec}': '{bad[0]}' is not an index; use one letter per index "
                "(a–z, A–Z), operands separated by ',' and '->' before the output",
                field="spec",
            )
    if any(not operand for operand in operands):
        raise DeclarationError(f"einsum spec '{spec}' has an empty operand", field="spec")
    if not arrow:
        counts: dict[str, int] = {}
        for operand in operands:
            for index in operand:
                counts[index] = counts.get(index, 0) + 1
        rhs = "".join(sorted(index for index, count in counts.items() if count == 1))
    seen = set("".join(operands))
    for index in rhs:
        if index not in seen:
            raise DeclarationError(f"einsum output index '{index}' appears in no input", field="spec")
        if rhs.count(index) > 1:
            raise DeclarationError(f"einsum output repeats index '{index}'", field="spec")
    return operands, rhs


def indices_in_order(spec: str) -> list[str]:
    """Every index of the spec, in order of first appearance."""
    operands, output = parse_spec(spec)
    order: list[str] = []
    for index in "".join(operands) + output:
        if index not in order:
            order.append(index)
    return order


def canonical_spec(spec: str) -> str:
    operands, output = parse_spec(spec)
    return ",".join(operands) + "->" + output


def _canonical(p: dict[str, Any]) -> dict[str, Any]:
    p["spec"] = canonical_spec(p["spec"])
    if p["order"] not in ORDERS:
        raise DeclarationError(f"order must be fused, optimal or given; got {p['order']}", field="order")
    return p


def _check(p: Mapping[str, Any]) -> None:
    order = indices_in_order(p["spec"])
    for index in order:
        if index not in p:
            raise DeclarationError(
                f"einsum index '{index}' has no extent; add {index}=... to the declaration", field=index
            )
    for key in p:
        if len(key) == 1 and key not in order:
            raise DeclarationError(f"'{key}' is not an index of einsum spec '{p['spec']}'", field=key)


def _format_fields(p: Mapping[str, Any]) -> list[tuple[str, Any]]:
    fields = [(index, p[index]) for index in indices_in_order(p["spec"])] + [("dtype", p["dtype"])]
    return fields + ([("order", p["order"])] if p["order"] != FUSED else [])


def contraction_path(operands: list[str], output: str, extent: Mapping[str, int], order: str) -> list[tuple[int, int]]:
    """The pairwise steps, as NumPy's einsum_path gives them: positions in the current list, the result appended.

    order=optimal asks einsum_path(optimize='optimal') itself (shapes only: zero-stride views, nothing
    allocated); order=given contracts the first two operands each time, left to right.
    """
    if order == GIVEN:
        return [(0, 1)] * (len(operands) - 1)
    import numpy as np

    try:
        views = [np.broadcast_to(np.float32(0), tuple(int(extent[x]) for x in operand)) for operand in operands]
        path, _text = np.einsum_path(",".join(operands) + "->" + output, *views, optimize="optimal")
    except ValueError as exc:
        raise DeclarationError(f"order=optimal: NumPy cannot plan these shapes ({exc})", field="order") from None
    return [tuple(step) for step in path[1:]]  # type: ignore[misc]


def pairwise_steps(operands: list[str], output: str, path: list[tuple[int, int]]) -> list[tuple[str, str, str, str]]:
    """Each step of `path`: (left, right, result indices, every index of the step), the result keeping only the
    indices a later operand or the output still needs."""
    current = list(operands)
    steps = []
    for step in path:
        picked = [current[i] for i in step]
        rest = [operand for i, operand in enumerate(current) if i not in step]
        union = "".join(dict.fromkeys("".join(picked)))
        needed = set("".join(rest) + output)
        result = output if not rest else "".join(index for index in union if index in needed)
        steps.append((picked[0], picked[1] if len(picked) > 1 else "", result, union))
        current = rest + [result]
    return steps


def _pairwise(p: Mapping[str, Any], operands: list[str], output: str, extent: Mapping[str, Any], dt: Any) -> Workload:
    """A contraction of three or more operands as the pairwise steps `order` gives: FLOP per step, intermediates through HBM."""
    if not all(isinstance(extent[index], int) for index in extent):
        raise TypeError("a pairwise order is planned per shape")  # a sweep takes each point the exact way
    order = p["order"]
    steps = pairwise_steps(operands, output, contraction_path(operands, output, extent, order))
    names = [chr(ord("A") + i) for i in range(len(operands) + 1)]
    tensors = [Tensor(names[i], tuple(extent[x] for x in operand), tuple(operand), dt, reads=1) for i, operand in enumerate(operands)]
    terms: list[FlopTerm] = []
    for number, (left, right, result, union) in enumerate(steps, 1):
        size: Any = 1
        for index in union:
            size = size * extent[index]
        summed = set(union) - set(result)
        what = f"step {number}: {left},{right}->{result}"
        terms.append(FlopTerm(what, FMA if summed else OP, size, _product(union),
                              note="a summed index: one multiply-add per point" if summed else "no summed index: one multiply per point"))
        if number < len(steps):
            tensors.append(Tensor(f"T{number}", tuple(extent[x] for x in result), tuple(result), dt, reads=1, writes=1,
                                  note=f"intermediate of {what}: written once, read once"))
    tensors.append(Tensor(names[-1], tuple(extent[x] for x in output), tuple(output), dt, writes=1))
    return Workload(
        tensors=tuple(tensors),
        terms=tuple(terms),
        path=matrix_path(dt, dtype("fp32")),
        values=dict(extent),
        notes=(
            f"'{canonical_spec(p['spec'])}': contraction order {ORDER_WORDS[order]}",
            "each intermediate is written to HBM once and read once (a library materialises it)",
        ),
    )


def _product(symbols: str) -> str:
    return "·".join(symbols) if symbols else "1"


def einsum(p: Mapping[str, Any]) -> Workload:
    """A contraction costs one multiply-add per point of the full index space."""
    dt = dtype(p["dtype"])
    operands, output = parse_spec(p["spec"])
    order = indices_in_order(p["spec"])
    extent = {index: p[index] for index in order}

    def size_of(indices: str) -> Any:
        total: Any = 1
        for index in indices:
            total = total * extent[index]
        return total

    if len(operands) >= 3 and p.get("order", FUSED) != FUSED:
        return _pairwise(p, operands, output, extent, dt)
    names = [chr(ord("A") + i) for i in range(len(operands) + 1)]
    tensors = [
        Tensor(names[i], tuple(extent[x] for x in operand), tuple(operand), dt, reads=1)
        for i, operand in enumerate(operands)
    ]
    tensors.append(Tensor(names[-1], tuple(extent[x] for x in output), tuple(output), dt, writes=1))
    space = "".join(order)
    points = size_of(space)  # every combination of index values
    contracted = [index for index in order if index not in output]
    terms: list[FlopTerm] = []
    if len(operands) >= 2 and contracted:
        terms.append(FlopTerm("multiply-accumulate", FMA, points, _product(space)))
        if len(operands) > 2:
            extra = len(operands) - 2
            terms.append(FlopTerm("further multiplies", OP, extra * points, f"{extra}·{_product(space)}"))
        path = matrix_path(dt, dtype("fp32")) if len(operands) == 2 else vector_path(dt)
    elif len(operands) >= 2:
        factors = len(operands) - 1
        formula = _product(space) if factors == 1 else f"{factors}·{_product(space)}"
        terms.append(FlopTerm("multiplies", OP, factors * points, formula))
        path = vector_path(dt)
    else:
        if contracted:
            terms.append(
                FlopTerm("additions", OP, points - size_of(output), f"{_product(space)} − {_product(output)}")
            )
        path = vector_path(dt)
    return Workload(
        tensors=tuple(tensors),
        terms=tuple(terms),
        path=path,
        values=dict(extent),
        notes=(
            f"'{canonical_spec(p['spec'])}': contracted indices {', '.join(contracted) or 'none'}",
            "logical work of the direct contraction; a library may reorder or split it"
            + (f" (contraction order {ORDER_WORDS[FUSED]}; order=optimal or order=given counts pairwise steps)"
               if len(operands) >= 3 else ""),
        ),
    )


def _name(p: Mapping[str, Any]) -> str:
    return f"Einsum {p['spec']} {p['dtype']}"


register(
    OpSpec(
        name="einsum",
        namer=_name,
        position=80,
        kernel="workbench.measure.kernels.matrix:EinsumKernel",
        examples=(
            'einsum("bmk,bkn->bmn", b=2, m=16, k=32, n=8, dtype=fp32)',
        ),
        kernel_names=KernelNames(("gemm", "matmul", "mma", "cutlass", "xmma", "sm90_", "sm80_", "cublas", "einsum"), rank=40),
        pads_to_tiles=True,
        summary="any contraction in index notation",
        params=(
            Param("spec", "spec", doc='index notation, e.g. "bmk,bkn->bmn"'),
            Param("dtype", "dtype", "fp16", doc="type of every operand"),
            Param("order", "name", FUSED, doc="contraction order of 3+ operands: fused (default), optimal (NumPy's einsum_path) or given"),
        ),
        build=einsum,
        check=_check,
        canonical=_canonical,
        format_fields=_format_fields,
        extra_dims=True,
    )
)
