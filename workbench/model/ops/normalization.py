"""Row normalisations of a rows × cols matrix: RMSNorm and LayerNorm, each with or without affine weights.

    rmsnorm:   y[r, :] = x[r, :] / √(mean(x[r, :]²) + ε) · w
    layernorm: y[r, :] = (x[r, :] − mean) / √(var + ε) · w + b

Both read x once and write y once (each row stays on chip between its passes);
the affine weights are one row of `cols` values, read once for the whole
matrix. The square root and its reciprocal count 1 FLOP, as softmax's exp does.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from workbench.model.dtypes import dtype
from workbench.model.ops import register
from workbench.model.ops.base import FMA, OP, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload
from workbench.model.ops.paths import vector_path

RSQRT_NOTE = "the row statistic's /cols, +ε and 1/√ count 1 FLOP each per row (hardware MUFU.RSQ)"
ONE_PASS_NOTE = "compulsory traffic assumes one pass: each row stays on chip between its statistics and its output"


def _params(weights: str) -> tuple[Param, ...]:
    return (
        Param("rows", "dim", doc="independent rows (tokens)"),
        Param("cols", "dim", doc="values normalised together (the hidden size)"),
        Param("affine", "bool", True, doc=f"multiply by learned {weights} of `cols` values"),
        Param("dtype", "dtype", "fp32", doc="element type of input, output and weights"),
    )


def _matrix_tensors(p: Mapping[str, Any], weights: tuple[str, ...]) -> tuple[Tensor, ...]:
    dt = dtype(p["dtype"])
    rows, cols = p["rows"], p["cols"]
    tensors = [Tensor("x", (rows, cols), ("rows", "cols"), dt, reads=1)]
    if p["affine"]:
        tensors += [Tensor(name, (cols,), ("cols",), dt, reads=1, note="read once, shared by every row") for name in weights]
    tensors.append(Tensor("y", (rows, cols), ("rows", "cols"), dt, writes=1))
    return tuple(tensors)


def rmsnorm(p: Mapping[str, Any]) -> Workload:
    """3·cols + 2 FLOP per row (+ cols with weights): square, sum, the row's 1/RMS, scale."""
    rows, cols = p["rows"], p["cols"]
    terms = [
        FlopTerm("square", OP, rows * cols, "rows·cols"),
        FlopTerm("row sum of squares", OP, rows * (cols - 1), "rows·(cols − 1)"),
        FlopTerm("mean, +ε, 1/√", OP, 3 * rows, "3·rows", note=RSQRT_NOTE),
        FlopTerm("normalise", OP, rows * cols, "rows·cols"),
    ]
    if p["affine"]:
        terms.append(FlopTerm("weight", OP, rows * cols, "rows·cols"))
    return Workload(
        tensors=_matrix_tensors(p, ("w",)),
        terms=tuple(terms),
        path=vector_path(dtype(p["dtype"])),
        values={"rows": rows, "cols": cols},
        notes=(RSQRT_NOTE, ONE_PASS_NOTE),
    )


def layernorm(p: Mapping[str, Any]) -> Workload:
    """5·cols + 2 FLOP per row, two passes for mean and variance; weight and bias are one multiply-add."""
    rows, cols = p["rows"], p["cols"]
    terms = [
        FlopTerm("row sum", OP, rows * (cols - 1), "rows·(cols − 1)"),
        FlopTerm("mean", OP, rows, "rows"),
        FlopTerm("subtract mean", OP, rows * cols, "rows·cols"),
        FlopTerm("square", OP, rows * cols, "rows·cols"),
        FlopTerm("row sum of squares", OP, rows * (cols - 1), "rows·(cols − 1)"),
        FlopTerm("variance, +ε, 1/√", OP, 3 * rows, "3·rows", note=RSQRT_NOTE),
        FlopTerm("normalise", OP, rows * cols, "rows·cols"),
    ]
    if p["affine"]:
        terms.append(FlopTerm("weight and bias", FMA, rows * cols, "rows·cols"))
    return Workload(
        tensors=_matrix_tensors(p, ("w", "b")),
        terms=tuple(terms),
        path=vector_path(dtype(p["dtype"])),
        values={"rows": rows, "cols": cols},
        notes=(RSQRT_NOTE, ONE_PASS_NOTE, "variance from the centred values (two passes), as PyTorch computes it"),
    )


def _namer(title: str) -> Callable[[Mapping[str, Any]], str]:
    def name(p: Mapping[str, Any]) -> str:
        weights = "" if p["affine"] else ", no weights"
        return f"{title} {p['rows']}×{p['cols']} {p['dtype']}{weights}"

    return name


register(
    OpSpec(
        name="rmsnorm",
        namer=_namer("RMSNorm"),
        position=55,
        kernel="workbench.measure.kernels.normalization:RmsNormKernel",
        examples=(
            "rmsnorm(rows=16, cols=100, affine=true, dtype=fp32)",
            "rmsnorm(rows=8, cols=64, affine=false, dtype=fp16)",
        ),
        tied_fields=("rows", "cols"),
        kernel_names=KernelNames(("rmsnorm", "rms_norm"), rank=15),
        summary="RMSNorm over the rows of a rows × cols matrix, with or without a weight",
        params=_params("weights w"),
        build=rmsnorm,
    )
)

register(
    OpSpec(
        name="layernorm",
        namer=_namer("LayerNorm"),
        position=56,
        kernel="workbench.measure.kernels.normalization:LayerNormKernel",
        examples=(
            "layernorm(rows=16, cols=100, affine=true, dtype=fp32)",
            "layernorm(rows=8, cols=64, affine=false, dtype=fp16)",
        ),
        tied_fields=("rows", "cols"),
        kernel_names=KernelNames(("layernorm", "layer_norm"), rank=15),
        summary="LayerNorm over the rows of a rows × cols matrix, with or without weight and bias",
        params=_params("weights w and bias b"),
        build=layernorm,
    )
)
