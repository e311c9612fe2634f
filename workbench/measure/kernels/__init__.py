"""Measured kernels, one class per operation of the core.

Each operation's spec names its kernel class ("module:Class", see
`workbench.model.ops.base.OpSpec.kernel`); this package resolves that name, so no
list here repeats the registry.
"""

from __future__ import annotations

from typing import Type

from workbench.model.declare import Declaration
from workbench.measure.backends import Backend
from workbench.measure.errors import UnsupportedMeasurement
from workbench.measure.kernels.base import BufferSpec, MeasuredKernel, named
from workbench.model.ops import spec_for


def kernel_class(op: str) -> Type[MeasuredKernel] | None:
    """The kernel class the operation `op` registered, or None when it has none."""
    reference = spec_for(op).kernel
    if not reference:
        return None
    cls = named(reference)
    if not (isinstance(cls, type) and issubclass(cls, MeasuredKernel)):
        raise TypeError(f"operation {op!r} names {reference!r} as its kernel, which is not a MeasuredKernel class")
    return cls


def kernel_for(declaration: Declaration, backend: Backend, kernel_class_override: Type[MeasuredKernel] | None = None) -> MeasuredKernel:
    """The planned (not yet allocated) kernel that measures `declaration` on `backend`."""
    cls = kernel_class_override or kernel_class(declaration.op)
    if cls is None:
        raise UnsupportedMeasurement(f"no measured kernel for '{declaration.op}' yet")
    return cls.for_declaration(declaration)(declaration, backend)


__all__ = ["BufferSpec", "MeasuredKernel", "kernel_class", "kernel_for"]
