"""Pieces of automatic operation names ("Vector add, 2^24 fp32", "GEMM 4096³ fp16").

Each operation's namer (`OpSpec.namer`, in its own module) writes its name
with these, so sizes read the same in every name. Pure text: no Qt, no device.
"""

from __future__ import annotations


def count_text(value: int) -> str:
    """An element count as a reader says it: 2^24 for a large power of two, 10^6 for a power of ten, else digits."""
    if value >= 1024 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    if value >= 10**4:
        exponent = len(str(value)) - 1
        if value == 10**exponent:
            return f"10^{exponent}"
        return f"{value:,}".replace(",", " ")
    return str(value)


def extents_text(*extents: int) -> str:
    """Extents joined by ×, a cube written n³ and a square n²: 4096³, 4096×1024×512, 56²."""
    if len(extents) == 3 and extents[0] == extents[1] == extents[2]:
        return f"{extents[0]}³"
    if len(extents) == 2 and extents[0] == extents[1]:
        return f"{extents[0]}²"
    return "×".join(str(e) for e in extents)


def batched(batch: int, text: str) -> str:
    """`text` for one, "8 × text" for a batch of 8."""
    return text if batch == 1 else f"{batch} × {text}"
