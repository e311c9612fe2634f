"""Attention: the naive three-kernel model, S and P through HBM and a causal mask computed, then discarded."""

from __future__ import annotations

from workbench.model.implementations.base import MODEL_INTERFACES, NAIVE, Case, PhysicalWork


def naive_attention(case: Case) -> PhysicalWork:
    """Three kernels (Q·Kᵀ, softmax, P·V) with S and P through HBM; causal masks computed, then discarded."""
    workload, convention, params = case.workload, case.convention, case.params
    causal, fused = bool(params["causal"]), bool(params["fused"])
    unmasked = case.decl.spec.build({**params, "causal": False, "fused": False})  # the full Sq × Skv square
    physical_flop = unmasked.flop(convention)
    moved = unmasked.bytes
    sentences = [
        "naive attention: three kernels — Q·Kᵀ writes the scores S to HBM, softmax reads S and writes the "
        "probabilities P, P·V reads P — so S and P (B·H·Sq·Skv each) are written once and read once"
        + (" beyond the fused kernel's compulsory bytes" if fused else "; the declaration is already unfused (fused=false), so its compulsory bytes count them"),
    ]
    if causal:
        sentences.append(
            "causal mask applied after the fact: every one of the Sq·Skv scores is computed, the masked ones "
            "are set to −∞ before the softmax and their P·V products are computed with zeros, so the masked work "
            "is physical FLOP above the logical count (the select itself is not counted)"
        )
    else:
        sentences.append("no mask: the physical FLOP are the logical FLOP")
    sentences.append(
        "the products inside are assumed to reach compulsory reuse on chip: L2 → SM and shared memory → "
        "registers carry the same bytes as HBM"
    )
    return PhysicalWork(
        implementation=NAIVE,
        logical_flop=workload.flop(convention),
        physical_flop=physical_flop,
        logical_bytes=workload.bytes,
        bytes_by_interface={key: moved for key in MODEL_INTERFACES},
        assumptions=tuple(sentences),
    )
