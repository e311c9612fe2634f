"""GEMM and batched GEMM: C[batch,M,N] = A[batch,M,K] · B[batch,K,N] (+ β·C)."""

from __future__ import annotations

from typing import Any, Mapping

from workbench.model.dtypes import dtype
from workbench.model.ops import register
from workbench.model.ops.base import FMA, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload, is_one
from workbench.model.ops.names import batched, extents_text
from workbench.model.ops.paths import matrix_path

_LOW_PRECISION = {"fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4", "tf32"}


def default_acc(input_dtype: str) -> str:
    """The accumulator libraries use by default: fp32 for low precision, int32 for ints."""
    if input_dtype in _LOW_PRECISION:
        return "fp32"
    if input_dtype in ("int8", "int4"):
        return "int32"
    return input_dtype


def _canonical(p: dict[str, Any]) -> dict[str, Any]:
    base = p["dtype"]
    for operand in ("a", "b", "c"):
        if p[operand] is None:
            p[operand] = base
    if p["acc"] is None:
        p["acc"] = default_acc(p["a"])
    # `dtype` names the shared type when all operands agree, else the inputs' type.
    p["dtype"] = p["a"] if p["a"] == p["b"] == p["c"] else None
    return p


def _format_fields(p: Mapping[str, Any]) -> list[tuple[str, Any]]:
    fields: list[tuple[str, Any]] = [("M", p["M"]), ("N", p["N"]), ("K", p["K"])]
    if p["batch"] != 1:
        fields.append(("batch", p["batch"]))
    if p["dtype"] is not None:
        fields.append(("dtype", p["dtype"]))
    else:
        fields += [("a", p["a"]), ("b", p["b"]), ("c", p["c"])]
    if p["acc"] != default_acc(p["a"]):
        fields.append(("acc", p["acc"]))
    if p["beta"] != 0:
        fields.append(("beta", p["beta"]))
    return fields


def gemm(p: Mapping[str, Any]) -> Workload:
    """Logical work 2·batch·M·N·K; compulsory traffic: A and B read once, C written once."""
    batch, m, n, k = p["batch"], p["M"], p["N"], p["K"]
    a, b, c, acc = dtype(p["a"]), dtype(p["b"]), dtype(p["c"]), dtype(p["acc"])
    beta = p["beta"]
    batched = not is_one(batch)
    lead: tuple[Any, ...] = (batch,) if batched else ()
    lead_sym: tuple[str, ...] = ("batch",) if batched else ()
    tensors = [
        Tensor("A", lead + (m, k), lead_sym + ("M", "K"), a, reads=1),
        Tensor("B", lead + (k, n), lead_sym + ("K", "N"), b, reads=1),
        Tensor(
            "C",
            lead + (m, n),
            lead_sym + ("M", "N"),
            c,
            reads=1 if beta != 0 else 0,
            writes=1,
            note="read for β·C, then written" if beta != 0 else "",
        ),
    ]
    prefix = "batch·" if batched else ""
    # C[b,m,n] = Σ_k A[b,m,k]·B[b,k,n]: one multiply-add per (b, m, n, k)
    terms = [FlopTerm("product A·B", FMA, batch * m * n * k, f"{prefix}M·N·K")]
    if beta != 0:
        # β·C + (A·B) per output element: one multiply-add per (b, m, n)
        terms.append(FlopTerm("β·C epilogue", FMA, batch * m * n, f"{prefix}M·N"))
    notes = [f"products accumulate in {acc.name}"]
    if a.name != b.name:
        notes.append(f"mixed inputs ({a.name} · {b.name}): the path follows A's type")
    notes.append("α = 1 folded into the product; scaling by α is not counted")
    return Workload(
        tensors=tuple(tensors),
        terms=tuple(terms),
        path=matrix_path(a, acc),
        values={"batch": batch, "M": m, "N": n, "K": k},
        notes=tuple(notes),
    )


def _name(p: Mapping[str, Any]) -> str:
    shape = batched(p["batch"], extents_text(p["M"], p["N"], p["K"]))
    return f"GEMM {shape} {p['dtype']}"


SPEC = register(
    OpSpec(
        name="gemm",
        namer=_name,
        position=10,
        kernel="workbench.measure.kernels.matrix:GemmKernel",
        examples=(
            'gemm(M=48, N=40, K=64, dtype=fp32)',
            'gemm(M=32, N=32, K=64, batch=3, dtype=fp64, beta=1)',
            'gemm(M=16, N=24, K=32, dtype=fp16)',
        ),
        tied_fields=("M", "N", "K"),
        implementations=("compulsory", "naive", "tiled"),
        kernel_names=KernelNames(("gemm", "matmul", "mma", "cutlass", "xmma", "sm90_", "sm80_", "cublas"), rank=40),
        pads_to_tiles=True,
        summary="matrix product C = A·B (+ β·C), optionally batched",
        params=(
            Param("M", "dim", doc="rows of A and C"),
            Param("N", "dim", doc="columns of B and C"),
            Param("K", "dim", doc="the contracted dimension"),
            Param("batch", "dim", 1, doc="independent products of the same shape"),
            Param("dtype", "dtype", "fp16", doc="type of A, B and C unless a/b/c say otherwise"),
            Param("a", "dtype", None, doc="type of A"),
            Param("b", "dtype", None, doc="type of B"),
            Param("c", "dtype", None, doc="type of C"),
            Param("acc", "dtype", None, doc="accumulator type (fp32 for 16-bit inputs)"),
            Param("beta", "number", 0, doc="β ≠ 0 reads C and adds β·C"),
        ),
        build=gemm,
        canonical=_canonical,
        format_fields=_format_fields,
    )
)
