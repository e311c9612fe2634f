"""Operation families. Each module registers one OpSpec (or a few close relatives) here."""

from __future__ import annotations

import importlib
import pkgutil

from workbench.errors import DeclarationError
from workbench.model.ops.base import FMA, OP, REQUIRED, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload

REGISTRY: dict[str, OpSpec] = {}

# Modules of this package that hold shared pieces rather than operations.
_HELPER_MODULES = frozenset({"base", "names", "paths"})


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


def _discover() -> None:
    """Import every operation module of this package (each registers its specs), then order by position.

    Adding an operation is adding its module: no list here or elsewhere names it.
    """
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda found: found.name):
        if module.name not in _HELPER_MODULES and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    ordered = sorted(REGISTRY.values(), key=lambda spec: spec.position)
    REGISTRY.clear()
    REGISTRY.update((spec.name, spec) for spec in ordered)


_discover()

__all__ = [
    "FMA",
    "OP",
    "REQUIRED",
    "REGISTRY",
    "FlopTerm",
    "KernelNames",
    "OpSpec",
    "Param",
    "Tensor",
    "Workload",
    "register",
    "spec_for",
]
