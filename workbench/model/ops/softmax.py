"""Row softmax: y[r, :] = exp(x[r, :] − max x[r, :]) / Σ exp(...)."""

from __future__ import annotations

from typing import Any, Mapping

from workbench.model.dtypes import dtype
from workbench.model.ops import register
from workbench.model.ops.base import OP, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload
from workbench.model.ops.paths import vector_path

EXP_NOTE = "exp counted as 1 FLOP (hardware MUFU.EX2); counting its polynomial would give several"


def softmax_terms(rows: Any, cols: Any, rows_sym: str, cols_sym: str) -> list[FlopTerm]:
    """The five passes of a numerically safe softmax over `rows` rows of `cols` values."""
    return [
        FlopTerm("row max", OP, rows * (cols - 1), f"{rows_sym}·({cols_sym} − 1)"),
        FlopTerm("subtract max", OP, rows * cols, f"{rows_sym}·{cols_sym}"),
        FlopTerm("exp", OP, rows * cols, f"{rows_sym}·{cols_sym}", note=EXP_NOTE),
        FlopTerm("row sum", OP, rows * (cols - 1), f"{rows_sym}·({cols_sym} − 1)"),
        FlopTerm("normalise", OP, rows * cols, f"{rows_sym}·{cols_sym}"),
    ]


def softmax(p: Mapping[str, Any]) -> Workload:
    """About 5 FLOP per element; the input read once and the output written once."""
    dt = dtype(p["dtype"])
    rows, cols = p["rows"], p["cols"]
    return Workload(
        tensors=(
            Tensor("x", (rows, cols), ("rows", "cols"), dt, reads=1),
            Tensor("y", (rows, cols), ("rows", "cols"), dt, writes=1),
        ),
        terms=tuple(softmax_terms(rows, cols, "rows", "cols")),
        path=vector_path(dt),
        values={"rows": rows, "cols": cols},
        notes=(EXP_NOTE, "compulsory traffic assumes one pass: each row stays on chip"),
    )


def _name(p: Mapping[str, Any]) -> str:
    return f"Softmax {p['rows']}×{p['cols']} {p['dtype']}"


register(
    OpSpec(
        name="softmax",
        namer=_name,
        position=50,
        kernel="workbench.measure.kernels.reduction:SoftmaxKernel",
        examples=(
            'softmax(rows=16, cols=100, dtype=fp32)',
        ),
        tied_fields=("rows", "cols"),
        kernel_names=KernelNames(("softmax",), rank=20),
        summary="row-wise softmax over a rows × cols matrix",
        params=(
            Param("rows", "dim", doc="independent rows"),
            Param("cols", "dim", doc="values per row"),
            Param("dtype", "dtype", "fp32", doc="element type of input and output"),
        ),
        build=softmax,
    )
)
