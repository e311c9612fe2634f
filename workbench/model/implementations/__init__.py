"""Implementation models: the physical work a real kernel does for a declared operation.

Logical work follows from the algorithm (the operation's FLOP terms and its
compulsory bytes: each input read once, each output written once). Physical
work follows from the implementation: a kernel pads dimensions to whole tiles,
computes masked values it then discards, and loads the same value many times.
Two kernels with the same logical FLOP can put very different demands on each
interface between HBM and the registers.

An implementation model turns a declaration into `PhysicalWork`: logical and
physical FLOP, the compulsory bytes, the physical bytes across every named
interface (`workbench.model.devices.interfaces`), and the assumptions the model
makes, written as sentences the derivation prints. The model in use is the
declaration's `impl` keyword; `compulsory` (the default) is today's ideal
reuse, where each interface carries the compulsory bytes once.

One module per kind of kernel: `compulsory` (the default), `gemm` (naive and
tiled GEMM, tiled conv2d), `stream` (library and vectorized elementwise
kernels), `reduction` (the library's row sums), `attention` (naive); `base`
holds what they share. This module maps (operation, model) to its model.

No Qt here; this package imports the operations, the declaration language and
the devices only.
"""

from __future__ import annotations

from typing import Any, Mapping

from workbench.model.declare import Declaration
from workbench.model.devices.catalogue import Device
from workbench.model.implementations.attention import naive_attention
from workbench.model.implementations.base import (
    COMPULSORY,
    LIBRARY,
    MODEL_INTERFACES,
    NAIVE,
    TILED,
    VECTORIZED,
    Case,
    KernelLaunch,
    Model,
    PhysicalWork,
    Quantization,
    tile_time,
    wave_time,
)
from workbench.model.implementations.compulsory import compulsory, declared_launch
from workbench.model.implementations.gemm import naive_gemm, tiled_conv2d, tiled_gemm
from workbench.model.implementations.reduction import library_reduce
from workbench.model.implementations.stream import library_stream, vectorized_stream
from workbench.model.ops import Workload

__all__ = [
    "COMPULSORY",
    "LIBRARY",
    "MODEL_INTERFACES",
    "NAIVE",
    "TILED",
    "VECTORIZED",
    "Case",
    "KernelLaunch",
    "PhysicalWork",
    "Quantization",
    "declared_launch",
    "models",
    "physical_work",
    "tile_time",
    "wave_time",
]


def physical_work(
    decl: Declaration,
    workload: Workload,
    device: Device | None,
    convention: str = "fma2",
    params: Mapping[str, Any] | None = None,
) -> PhysicalWork:
    """The physical work of `decl` under its implementation model on `device` (None: no device chosen).

    `workload` is `decl.workload()` (passed in because the caller has built it
    already). The device supplies the L2 size and SM count the models need;
    without one, a model says what it could not decide. A vectorised sweep
    passes the fields it swept in `params` (numpy arrays, e.g. {"M": ...} or
    {"tile_m": ...}) with the workload built from them; every figure then
    comes back as an array and the sentences say "(swept)" where a number
    would stand.
    """
    fields = dict(decl.params)
    if params:
        fields.update(params)
    model = _MODELS[decl.implementation]
    return model(Case(decl, fields, workload, device, convention))


_OP_MODELS: dict[tuple[str, str], Model] = {
    ("gemm", NAIVE): naive_gemm,
    ("gemm", TILED): tiled_gemm,
    ("conv2d", TILED): tiled_conv2d,
    **{(op, LIBRARY): library_stream for op in ("copy", "scale", "add", "triad", "elementwise")},
    **{(op, VECTORIZED): vectorized_stream for op in ("copy", "scale", "add", "triad")},
    ("attention", NAIVE): naive_attention,
    ("reduce", LIBRARY): library_reduce,
}


def _dispatch(name: str) -> Model:
    def model(case: Case) -> PhysicalWork:
        return _OP_MODELS[(case.decl.op, name)](case)

    return model


_MODELS: dict[str, Model] = {
    COMPULSORY: compulsory,
    NAIVE: _dispatch(NAIVE),
    TILED: _dispatch(TILED),
    LIBRARY: _dispatch(LIBRARY),
    VECTORIZED: _dispatch(VECTORIZED),
}


def models() -> tuple[str, ...]:
    """Every implementation model's name (what `impl=` may say, per operation as its OpSpec allows)."""
    return tuple(_MODELS)
