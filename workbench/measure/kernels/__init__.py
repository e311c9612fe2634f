"""Measured kernels, one class per operation of the core, registered by operation name."""

from __future__ import annotations

from typing import Type

from workbench.declare import Declaration
from workbench.measure.backends import Backend
from workbench.measure.errors import UnsupportedMeasurement
from workbench.measure.kernels.base import BufferSpec, Kernel
from workbench.measure.kernels.matrix import AttentionKernel, Conv2dKernel, EinsumKernel, GemmKernel
from workbench.measure.kernels.reduction import ReduceKernel, SoftmaxKernel
from workbench.measure.kernels.stream import (
    AddKernel,
    AxpyKernel,
    CopyKernel,
    ElementwiseKernel,
    ScaleKernel,
    TriadKernel,
)

KERNELS: dict[str, Type[Kernel]] = {
    "gemm": GemmKernel,
    "copy": CopyKernel,
    "scale": ScaleKernel,
    "add": AddKernel,
    "triad": TriadKernel,
    "axpy": AxpyKernel,
    "elementwise": ElementwiseKernel,
    "reduce": ReduceKernel,
    "softmax": SoftmaxKernel,
    "conv2d": Conv2dKernel,
    "attention": AttentionKernel,
    "einsum": EinsumKernel,
}


def kernel_for(declaration: Declaration, backend: Backend, kernel_class: Type[Kernel] | None = None) -> Kernel:
    """The planned (not yet allocated) kernel that measures `declaration` on `backend`."""
    cls = kernel_class or KERNELS.get(declaration.op)
    if cls is None:
        raise UnsupportedMeasurement(f"no measured kernel for '{declaration.op}' yet")
    return cls(declaration, backend)


__all__ = ["KERNELS", "BufferSpec", "Kernel", "kernel_for"]
