"""Data types and their storage sizes in bits (exact, so sub-byte types stay exact)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import DeclarationError


@dataclass(frozen=True)
class DType:
    """A tensor element type: canonical name, storage bits, and its family."""

    name: str
    bits: int
    kind: str  # "float" or "int"
    description: str

    @property
    def is_float(self) -> bool:
        return self.kind == "float"


_TABLE: tuple[DType, ...] = (
    DType("fp64", 64, "float", "IEEE binary64"),
    DType("fp32", 32, "float", "IEEE binary32"),
    DType("tf32", 32, "float", "stored as fp32; tensor cores keep a 10-bit mantissa"),
    DType("bf16", 16, "float", "bfloat16: 8-bit exponent, 7-bit mantissa"),
    DType("fp16", 16, "float", "IEEE binary16"),
    DType("fp8_e4m3", 8, "float", "8-bit float, 4-bit exponent, 3-bit mantissa"),
    DType("fp8_e5m2", 8, "float", "8-bit float, 5-bit exponent, 2-bit mantissa"),
    DType("fp4", 4, "float", "4-bit float (e2m1), two per byte"),
    DType("int64", 64, "int", "64-bit signed integer"),
    DType("int32", 32, "int", "32-bit signed integer"),
    DType("int8", 8, "int", "8-bit signed integer"),
    DType("int4", 4, "int", "4-bit signed integer, two per byte"),
)

DTYPES: dict[str, DType] = {d.name: d for d in _TABLE}

ALIASES: dict[str, str] = {
    "float64": "fp64",
    "double": "fp64",
    "f64": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "f32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
    "bfloat16": "bf16",
    "fp8": "fp8_e4m3",
    "e4m3": "fp8_e4m3",
    "e5m2": "fp8_e5m2",
    "fp4_e2m1": "fp4",
}


def dtype(name: str) -> DType:
    """Look up a dtype by canonical name or common alias; unknown names raise DeclarationError."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    try:
        return DTYPES[key]
    except KeyError:
        allowed = ", ".join(DTYPES)
        raise DeclarationError(f"unknown dtype '{name}'; allowed: {allowed}") from None


def storage_bytes(elements: int, dt: DType) -> int:
    """Bytes to store `elements` values of `dt`, packed, rounded up to whole bytes."""
    return -(-elements * dt.bits // 8)
