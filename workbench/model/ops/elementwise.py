"""A general elementwise kernel: k inputs, m outputs, f operations per element."""

from __future__ import annotations

from typing import Any, Mapping

from workbench.model.dtypes import dtype
from workbench.model.ops import register
from workbench.model.ops.base import OP, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload
from workbench.model.ops.names import count_text
from workbench.model.ops.paths import vector_path

MAX_ARRAYS = 64  # inputs and outputs each: every array is one tensor in the workload and the derivation


def elementwise(p: Mapping[str, Any]) -> Workload:
    """n·flop_per_element operations; each input read once, each output written once."""
    dt = dtype(p["dtype"])
    n = p["n"]
    tensors = [Tensor(f"in{i}", (n,), ("n",), dt, reads=1) for i in range(p["inputs"])]
    tensors += [Tensor(f"out{i}", (n,), ("n",), dt, writes=1) for i in range(p["outputs"])]
    terms = []
    if p["flop_per_element"]:
        terms.append(FlopTerm("per-element arithmetic", OP, n * p["flop_per_element"], "n·flop_per_element"))
    return Workload(
        tensors=tuple(tensors),
        terms=tuple(terms),
        path=vector_path(dt),
        values={"n": n, "flop_per_element": p["flop_per_element"]},
        notes=("each operation counts 1 FLOP; a multiply-add written as one op counts 1 here",),
    )


def _name(p: Mapping[str, Any]) -> str:
    shape = f"{p['inputs']} in → {p['outputs']} out"
    return f"Elementwise {shape}, {count_text(p['n'])} {p['dtype']}"


register(
    OpSpec(
        name="elementwise",
        namer=_name,
        position=30,
        kernel="workbench.measure.kernels.stream:ElementwiseKernel",
        examples=(
            'elementwise(n=4096, inputs=3, outputs=2, flop_per_element=6, dtype=fp32)',
        ),
        kernel_names=KernelNames(("elementwise", "pointwise", "unrolled_elementwise"), rank=100),
        summary="general elementwise kernel with k inputs and m outputs",
        params=(
            Param("n", "dim", doc="elements per array"),
            Param("inputs", "dim", 1, doc="arrays read", maximum=MAX_ARRAYS),
            Param("outputs", "dim", 1, doc="arrays written", maximum=MAX_ARRAYS),
            Param("flop_per_element", "dim", 1, minimum=0, doc="operations per element"),
            Param("dtype", "dtype", "fp32", doc="element type"),
        ),
        build=elementwise,
        implementations=("compulsory", "library"),
    )
)
