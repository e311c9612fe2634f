"""Operation families. Each module registers one OpSpec (or a few close relatives) here."""

from __future__ import annotations

from workbench.errors import DeclarationError
from workbench.ops.base import FMA, OP, REQUIRED, FlopTerm, OpSpec, Param, Tensor, Workload

REGISTRY: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    """Add an operation family to the one registry; names are unique."""
    if spec.name in REGISTRY:
        raise ValueError(f"operation {spec.name!r} registered twice")
    REGISTRY[spec.name] = spec
    return spec


def spec_for(name: str) -> OpSpec:
    """The spec of a registered operation, or a DeclarationError listing the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(REGISTRY)
        raise DeclarationError(f"unknown operation '{name}'; known: {known}") from None


# Registration order is the order the editor and the docs list them in.
from workbench.ops import gemm as _gemm  # noqa: E402,F401
from workbench.ops import stream as _stream  # noqa: E402,F401
from workbench.ops import elementwise as _elementwise  # noqa: E402,F401
from workbench.ops import reduce as _reduce  # noqa: E402,F401
from workbench.ops import softmax as _softmax  # noqa: E402,F401
from workbench.ops import conv2d as _conv2d  # noqa: E402,F401
from workbench.ops import attention as _attention  # noqa: E402,F401
from workbench.ops import einsum as _einsum  # noqa: E402,F401
from workbench.ops import collectives as _collectives  # noqa: E402,F401

__all__ = [
    "FMA",
    "OP",
    "REQUIRED",
    "REGISTRY",
    "FlopTerm",
    "OpSpec",
    "Param",
    "Tensor",
    "Workload",
    "register",
    "spec_for",
]
