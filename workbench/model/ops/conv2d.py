"""2-D convolution, NCHW, as cuDNN and PyTorch define it (cross-correlation)."""

from __future__ import annotations

from typing import Any, Mapping

from workbench.model.dtypes import dtype
from workbench.errors import DeclarationError
from workbench.model.ops import register
from workbench.model.ops.base import FMA, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload, is_one
from workbench.model.ops.names import extents_text
from workbench.model.ops.paths import matrix_path


def output_extent(size: Any, kernel: Any, stride: Any, pad: Any, dilation: Any) -> Any:
    """Output positions along one axis: ⌊(size + 2·pad − dilation·(kernel − 1) − 1) / stride⌋ + 1."""
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def _check(p: Mapping[str, Any]) -> None:
    groups = p["groups"]
    if p["C"] % groups:
        raise DeclarationError(f"C={p['C']} is not divisible by groups={groups}", field="groups")
    if p["K"] % groups:
        raise DeclarationError(f"K={p['K']} is not divisible by groups={groups}", field="groups")
    for axis, size, kernel, field in (("H", p["H"], p["R"], "R"), ("W", p["W"], p["S"], "S")):
        if output_extent(size, kernel, p["stride"], p["pad"], p["dilation"]) < 1:
            span = p["dilation"] * (kernel - 1) + 1
            raise DeclarationError(
                f"the filter ({field}={kernel}, dilation={p['dilation']}) spans {span} pixels, more than "
                f"{axis} + 2·pad = {size + 2 * p['pad']}: no output positions",
                field=field,
            )


def conv2d(p: Mapping[str, Any]) -> Workload:
    """N·K·P·Q·(C/groups)·R·S multiply-adds; x and w read once, y written once."""
    dt = dtype(p["dtype"])
    n, c, h, w, k, r, s = p["N"], p["C"], p["H"], p["W"], p["K"], p["R"], p["S"]
    groups = p["groups"]
    out_h = output_extent(h, r, p["stride"], p["pad"], p["dilation"])
    out_w = output_extent(w, s, p["stride"], p["pad"], p["dilation"])
    cg = c // groups
    cg_sym = "C" if is_one(groups) else "Cg"
    tensors = (
        Tensor("x", (n, c, h, w), ("N", "C", "H", "W"), dt, reads=1, note="input activations"),
        Tensor("w", (k, cg, r, s), ("K", cg_sym, "R", "S"), dt, reads=1, note="filters"),
        Tensor("y", (n, k, out_h, out_w), ("N", "K", "P", "Q"), dt, writes=1, note="output activations"),
    )
    # y[n,k,p,q] = Σ_{c∈group, r, s} x[n, c, p·stride + r·dil − pad, q·stride + s·dil − pad] · w[k,c,r,s]
    terms = (FlopTerm("convolution", FMA, n * k * out_h * out_w * cg * r * s, f"N·K·P·Q·{cg_sym}·R·S"),)
    notes = [
        "P = ⌊(H + 2·pad − dilation·(R − 1) − 1)/stride⌋ + 1, Q likewise with W and S",
        "implicit-GEMM view: M = N·P·Q, N = K, K = (C/groups)·R·S per group",
        "x counted whole even where a stride skips pixels",
    ]
    if not is_one(groups):
        notes.insert(0, "Cg = C/groups input channels per group")
    return Workload(
        tensors=tensors,
        terms=terms,
        path=matrix_path(dt, dtype("fp32")),
        values={"N": n, "C": c, "H": h, "W": w, "K": k, "R": r, "S": s, "P": out_h, "Q": out_w, "Cg": cg},
        notes=tuple(notes),
    )


def _name(p: Mapping[str, Any]) -> str:
    kernel = extents_text(p["R"], p["S"])
    image = extents_text(p["H"], p["W"])
    return f"Conv2d {kernel}, {p['C']}→{p['K']} ch, {image}, N={p['N']} {p['dtype']}"


register(
    OpSpec(
        name="conv2d",
        namer=_name,
        position=60,
        kernel="workbench.measure.kernels.matrix:Conv2dKernel",
        examples=(
            'conv2d(N=2, C=4, H=9, W=9, K=6, R=3, S=3, pad=1, dtype=fp32)',
            'conv2d(N=1, C=4, H=10, W=9, K=4, R=3, S=2, stride=2, dilation=2, groups=2, dtype=fp32)',
        ),
        tied_fields=("H", "W"),
        implementations=("compulsory", "tiled"),
        kernel_names=KernelNames(("conv", "winograd", "implicit_gemm", "dgrad", "wgrad", "fprop"), rank=30),
        pads_to_tiles=True,
        summary="2-D convolution (NCHW input, KCRS filters)",
        params=(
            Param("N", "dim", doc="batch"),
            Param("C", "dim", doc="input channels"),
            Param("H", "dim", doc="input height"),
            Param("W", "dim", doc="input width"),
            Param("K", "dim", doc="output channels (filters)"),
            Param("R", "dim", doc="filter height"),
            Param("S", "dim", doc="filter width"),
            Param("stride", "dim", 1, doc="step between output positions"),
            Param("pad", "dim", 0, minimum=0, doc="zero padding on each side"),
            Param("dilation", "dim", 1, doc="spacing of filter taps"),
            Param("groups", "dim", 1, doc="channel groups (C and K divisible by it)"),
            Param("dtype", "dtype", "fp16", doc="type of x, w and y"),
        ),
        build=conv2d,
        check=_check,
    )
)
