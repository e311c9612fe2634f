"""Scaled dot-product attention: O = softmax(Q·Kᵀ/√D [+ causal mask]) · V, per batch and head."""

from __future__ import annotations

from typing import Any, Mapping

from workbench.model.dtypes import dtype
from workbench.model.ops import register
from workbench.errors import DeclarationError
from workbench.model.ops.base import FMA, OP, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload, elementwise_max, elementwise_min
from workbench.model.ops.paths import matrix_path
from workbench.model.ops.softmax import EXP_NOTE

BOTTOM_RIGHT = "bottom_right"  # FlashAttention ≥ 2.1: the last query sees every key (the default)
TOP_LEFT = "top_left"  # PyTorch scaled_dot_product_attention(is_causal=True): query i sees keys 0..i
ALIGNMENTS = (BOTTOM_RIGHT, TOP_LEFT)

CAUSAL_NOTES = {
    BOTTOM_RIGHT: "causal mask aligned bottom-right, the default (query i sees keys j ≤ i + Skv − Sq, as "
                  "FlashAttention ≥ 2.1; align=top_left for PyTorch's is_causal); only unmasked scores are counted",
    TOP_LEFT: "causal mask aligned top-left (query i sees keys j ≤ i, as PyTorch's scaled_dot_product_attention "
              "with is_causal=True; the default is bottom-right, FlashAttention ≥ 2.1); only unmasked scores are counted",
}


def causal_offset(sq: Any, skv: Any, align: str = BOTTOM_RIGHT) -> Any:
    """How far right of the diagonal a query row sees: query i keeps keys j ≤ i + offset.

    Bottom-right: Skv − Sq (the last query sees every key); top-left: 0. The one place the alignment
    becomes arithmetic: the counts below and the measured kernel's mask both read it.
    """
    return skv - sq if align == BOTTOM_RIGHT else 0 * sq


def unmasked_scores(sq: Any, skv: Any, causal: bool, align: str = BOTTOM_RIGHT) -> tuple[Any, Any]:
    """(U, Rn): unmasked scores per head and rows with at least one unmasked score.

    Row i keeps L_i = min(Skv, max(0, i + offset + 1)) scores (offset from `causal_offset`). Rows before
    the first that keeps any keep none; from there L_i grows by one a row until it reaches Skv, so U is an
    arithmetic run up to Skv and then Skv a row.
    """
    if not causal:
        return sq * skv, sq
    offset = causal_offset(sq, skv, align)
    first_row = elementwise_max(0, -offset)  # rows before it see no key at all
    rows = sq - first_row
    lowest = first_row + offset + 1  # scores kept by the first row that keeps any
    full_from = elementwise_max(first_row, skv - offset - 1)  # the first row that sees every key
    growing = elementwise_min(full_from, sq) - first_row  # rows whose count still grows
    full = sq - first_row - growing
    return (2 * lowest + growing - 1) * growing // 2 + full * skv, rows


def _canonical(p: dict[str, Any]) -> dict[str, Any]:
    if p["Dv"] is None:
        p["Dv"] = p["D"]
    if p["align"] not in ALIGNMENTS:
        raise DeclarationError(f"align must be bottom_right or top_left; got {p['align']}", field="align")
    if p["align"] != BOTTOM_RIGHT and not p["causal"]:
        raise DeclarationError("align=top_left places a causal mask: add causal=true or remove align", field="align")
    return p


def _format_fields(p: Mapping[str, Any]) -> list[tuple[str, Any]]:
    fields: list[tuple[str, Any]] = [(name, p[name]) for name in ("B", "H", "Sq", "Skv", "D")]
    if p["Dv"] != p["D"]:
        fields.append(("Dv", p["Dv"]))
    fields += [("causal", p["causal"])]
    if p["align"] != BOTTOM_RIGHT:
        fields.append(("align", p["align"]))
    fields += [("fused", p["fused"]), ("dtype", p["dtype"])]
    if p["backward"]:
        fields.append(("backward", True))
    return fields


def _check(p: Mapping[str, Any]) -> None:
    if p["backward"] and not p["fused"]:
        raise DeclarationError("backward=true is the fused (FlashAttention-style) backward: remove fused=false", field="backward")



def attention(p: Mapping[str, Any]) -> Workload:
    """Two matrix products and a softmax; fused kernels keep scores on chip, unfused ones do not."""
    dt = dtype(p["dtype"])
    b, h, sq, skv, d, dv = p["B"], p["H"], p["Sq"], p["Skv"], p["D"], p["Dv"]
    causal, fused = bool(p["causal"]), bool(p["fused"])
    u, rn = unmasked_scores(sq, skv, causal, p["align"])
    scores = "U" if causal else "Sq·Skv"
    rows = "Rn" if causal else "Sq"
    if p["backward"]:
        return _backward(p, dt, u, rn, scores)
    tensors = [
        Tensor("Q", (b, h, sq, d), ("B", "H", "Sq", "D"), dt, reads=1),
        Tensor("K", (b, h, skv, d), ("B", "H", "Skv", "D"), dt, reads=1),
        Tensor("V", (b, h, skv, dv), ("B", "H", "Skv", "Dv"), dt, reads=1),
        Tensor("O", (b, h, sq, dv), ("B", "H", "Sq", "Dv"), dt, writes=1),
    ]
    if not fused:
        tensors += [
            Tensor("S", (b, h, sq, skv), ("B", "H", "Sq", "Skv"), dt, reads=1, writes=1,
                   note="scores: written by Q·Kᵀ, read by softmax"),
            Tensor("P", (b, h, sq, skv), ("B", "H", "Sq", "Skv"), dt, reads=1, writes=1,
                   note="probabilities: written by softmax, read by P·V"),
        ]
    terms = (
        FlopTerm("Q·Kᵀ scores", FMA, b * h * u * d, f"B·H·{scores}·D"),
        FlopTerm(
            "softmax",
            OP,
            b * h * (6 * u - 2 * rn),
            f"B·H·(6·{scores} − 2·{rows})",
            note="per row of L scores: L scale, L − 1 max, L subtract, L exp, L − 1 sum, L normalise",
        ),
        FlopTerm("P·V", FMA, b * h * u * dv, f"B·H·{scores}·Dv"),
    )
    notes = [EXP_NOTE]
    if causal:
        notes.insert(0, CAUSAL_NOTES[p["align"]])
        notes.insert(1, "U = unmasked scores per head; Rn = query rows that see at least one key")
    notes.append(
        "fused (FlashAttention-style): scores stay on chip, only Q, K, V read and O written"
        if fused
        else "unfused: S and P make a round trip through HBM at the same dtype"
    )
    return Workload(
        tensors=tuple(tensors),
        terms=terms,
        path=matrix_path(dt, dtype("fp32")),
        values={"B": b, "H": h, "Sq": sq, "Skv": skv, "D": d, "Dv": dv, "U": u, "Rn": rn},
        notes=tuple(notes),
    )


def _backward(p: Mapping[str, Any], dt: Any, u: Any, rn: Any, scores: str) -> Workload:
    """FlashAttention-2's backward: the scores recomputed on chip, then dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K and
    dK = dSᵀ·Q, five products where the forward has two; Q, K, V, O, dO read once, dQ, dK, dV written once."""
    b, h, sq, skv, d, dv = p["B"], p["H"], p["Sq"], p["Skv"], p["D"], p["Dv"]
    tensors = (
        Tensor("Q", (b, h, sq, d), ("B", "H", "Sq", "D"), dt, reads=1),
        Tensor("K", (b, h, skv, d), ("B", "H", "Skv", "D"), dt, reads=1),
        Tensor("V", (b, h, skv, dv), ("B", "H", "Skv", "Dv"), dt, reads=1),
        Tensor("O", (b, h, sq, dv), ("B", "H", "Sq", "Dv"), dt, reads=1, note="read for D = rowsum(dO∘O)"),
        Tensor("dO", (b, h, sq, dv), ("B", "H", "Sq", "Dv"), dt, reads=1),
        Tensor("dQ", (b, h, sq, d), ("B", "H", "Sq", "D"), dt, writes=1),
        Tensor("dK", (b, h, skv, d), ("B", "H", "Skv", "D"), dt, writes=1),
        Tensor("dV", (b, h, skv, dv), ("B", "H", "Skv", "Dv"), dt, writes=1),
    )
    terms = (
        FlopTerm("Q·Kᵀ recomputed", FMA, b * h * u * d, f"B·H·{scores}·D"),
        FlopTerm("dV = Pᵀ·dO", FMA, b * h * u * dv, f"B·H·{scores}·Dv"),
        FlopTerm("dP = dO·Vᵀ", FMA, b * h * u * dv, f"B·H·{scores}·Dv"),
        FlopTerm("dQ = dS·K", FMA, b * h * u * d, f"B·H·{scores}·D"),
        FlopTerm("dK = dSᵀ·Q", FMA, b * h * u * d, f"B·H·{scores}·D"),
        FlopTerm(
            "softmax backward",
            OP,
            b * h * 5 * u,
            f"B·H·5·{scores}",
            note="per score: scale, exp (P recomputed from the saved log-sum-exp), subtract D, multiply by P, scale",
        ),
    )
    notes = [EXP_NOTE, "fused backward (FlashAttention-2): scores and their gradients stay on chip; "
             "the per-row log-sum-exp and D = rowsum(dO∘O) are not counted (one value a row)"]
    if p["causal"]:
        notes.insert(0, CAUSAL_NOTES[p["align"]])
    return Workload(
        tensors=tensors,
        terms=terms,
        path=matrix_path(dt, dtype("fp32")),
        values={"B": b, "H": h, "Sq": sq, "Skv": skv, "D": d, "Dv": dv, "U": u, "Rn": rn},
        notes=tuple(notes),
    )


def _name(p: Mapping[str, Any]) -> str:
    length = f"S={p['Sq']}" if p["Sq"] == p["Skv"] else f"Sq={p['Sq']} Skv={p['Skv']}"
    head = f"D={p['D']}" if p["Dv"] == p["D"] else f"D={p['D']}/{p['Dv']}"
    kind = ("Attention backward" if p["backward"] else "Attention") if p["fused"] else "Unfused attention"
    causal = " causal" if p["causal"] else ""
    return f"{kind}{causal} {p['B']}×{p['H']} heads, {length} {head} {p['dtype']}"


register(
    OpSpec(
        name="attention",
        namer=_name,
        position=70,
        kernel="workbench.measure.kernels.matrix:AttentionKernel",
        examples=(
            'attention(B=1, H=2, Sq=16, Skv=24, D=8, fused=false, dtype=fp32)',
            'attention(B=1, H=1, Sq=24, Skv=16, D=8, causal=true, dtype=fp32)',
        ),
        tied_fields=("Sq", "Skv"),
        implementations=("compulsory", "naive"),
        kernel_names=KernelNames(("attention", "attn", "fmha", "flash", "sdpa"), rank=10),
        pads_to_tiles=True,
        summary="scaled dot-product attention, fused or unfused, causal or not",
        params=(
            Param("B", "dim", doc="batch"),
            Param("H", "dim", doc="heads"),
            Param("Sq", "dim", doc="query length"),
            Param("Skv", "dim", doc="key/value length"),
            Param("D", "dim", doc="head dimension of Q and K"),
            Param("Dv", "dim", None, doc="head dimension of V and O (default D)"),
            Param("causal", "bool", False, doc="mask scores above the diagonal"),
            Param("align", "name", BOTTOM_RIGHT, doc="where the causal diagonal starts: bottom_right (FlashAttention ≥ 2.1, default) or top_left (PyTorch is_causal)"),
            Param("fused", "bool", True, doc="scores stay on chip (FlashAttention-style)"),
            Param("dtype", "dtype", "bf16", doc="type of Q, K, V, O (and S, P when unfused)"),
            Param("backward", "bool", False, doc="the fused backward: dQ, dK, dV from dO (five products, scores recomputed)"),
        ),
        build=attention,
        check=_check,
        canonical=_canonical,
        format_fields=_format_fields,
    )
)
