"""Sum reduction: rows independent sums of n elements each."""

from __future__ import annotations

from typing import Any, Mapping

from workbench.model.dtypes import dtype
from workbench.model.ops import register
from workbench.model.ops.base import OP, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload, is_one
from workbench.model.ops.names import count_text
from workbench.model.ops.paths import vector_path


def reduce(p: Mapping[str, Any]) -> Workload:
    """A sum of n values needs n − 1 additions; the input is read once, the sums written once."""
    dt = dtype(p["dtype"])
    n, rows = p["n"], p["rows"]
    lead, lead_sym = ((), ()) if is_one(rows) else ((rows,), ("rows",))
    tensors = (
        Tensor("x", lead + (n,), lead_sym + ("n",), dt, reads=1),
        Tensor("sum", lead if lead else (1,), lead_sym if lead_sym else ("1",), dt, writes=1),
    )
    formula = "n − 1" if is_one(rows) else "rows·(n − 1)"
    terms = (FlopTerm("additions", OP, rows * (n - 1), formula),)
    return Workload(
        tensors=tensors,
        terms=terms,
        path=vector_path(dt),
        values={"n": n, "rows": rows},
        notes=("a sum of n values counts n − 1 additions (some tools count n)",),
    )


def _name(p: Mapping[str, Any]) -> str:
    size = count_text(p["n"]) if p["rows"] == 1 else f"{p['rows']} × {count_text(p['n'])}"
    return f"Sum reduction, {size} {p['dtype']}"


register(
    OpSpec(
        name="reduce",
        namer=_name,
        position=40,
        kernel="workbench.measure.kernels.reduction:ReduceKernel",
        examples=(
            'reduce(n=4096, rows=4, dtype=fp16)',
        ),
        kernel_names=KernelNames(("reduce", "reduction", "sum_kernel"), rank=50),
        summary="sum reduction of n elements (rows independent sums)",
        params=(
            Param("n", "dim", doc="elements summed per row"),
            Param("rows", "dim", 1, doc="independent sums"),
            Param("dtype", "dtype", "fp32", doc="element type of input and result"),
        ),
        build=reduce,
        implementations=("compulsory", "library"),
    )
)
