"""Counting conventions a user chooses (issue 28): einsum's contraction order, causal attention's alignment."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.analysis import analyze, sweep
from workbench.model.declare import parse
from workbench.errors import DeclarationError
from workbench.measure import OK, measure

CHAIN = 'einsum("ij,jk,kl->il", i=64, j=128, k=256, l=32, dtype=fp32{order})'


def chain(order: str = "") -> str:
    return CHAIN.format(order=f", order={order}" if order else "")


def numpy_cost(optimize: object) -> float:
    """NumPy's own count for the chain (einsum_path's 'Optimized FLOP count', 4 significant digits)."""
    views = [np.broadcast_to(np.float32(0), shape) for shape in ((64, 128), (128, 256), (256, 32))]
    text = np.einsum_path("ij,jk,kl->il", *views, optimize=optimize)[1]
    line = next(line for line in text.splitlines() if "Optimized FLOP count" in line)
    return float(line.split(":")[1])


def test_fused_is_the_default_and_counts_one_loop_nest() -> None:
    # one loop nest over i·j·k·l = 64 · 128 · 256 · 32 = 67,108,864 points: a multiply-add (2 FLOP) and a further
    # multiply (1 FLOP) each = 3 × 67,108,864 = 201,326,592 FLOP, einsum_path's "Naive FLOP count" (2.013e+08)
    a = analyze(chain())
    assert a.flop == 201_326_592 == 3 * 64 * 128 * 256 * 32
    assert str(a.declaration) == str(parse(chain("fused")))  # the default is left out when printing
    assert any("fused, the default" in note for note in a.notes)


def test_optimal_order_is_numpys_einsum_path() -> None:
    # einsum_path(optimize='optimal') contracts jk,kl first: 2 · 128 · 256 · 32 = 2,097,152 (j·k·l, k summed),
    # then ij,jl->il: 2 · 64 · 128 · 32 = 524,288 (i·j·l, j summed): 2,621,440 in all (opt_einsum's cost too)
    a = analyze(chain("optimal"))
    assert [(name, flop) for name, flop in a.flop_terms] == [("step 1: jk,kl->jl", 2_097_152), ("step 2: ij,jl->il", 524_288)]
    assert a.flop == 2_621_440
    assert numpy_cost("optimal") == pytest.approx(a.flop, rel=1e-3)  # "2.621e+06"
    # the intermediate jl (128 × 32 fp32 = 16,384 B) is written once and read once: 32,768 B beyond the
    # inputs (32,768 + 131,072 + 32,768 B) and the output (8,192 B)
    assert a.bytes == 32_768 + 131_072 + 32_768 + 2 * 16_384 + 8_192
    assert any("einsum_path(optimize='optimal')" in note for note in a.notes)


def test_each_order_is_opt_einsums_cost() -> None:
    # opt_einsum (the test extra; skipped where it is absent) counts a pairwise step with a summed index as
    # 2 × the product of its extents: optimal [(1, 2), (0, 1)] = 2,097,152 + 524,288 = 2,621,440; the given
    # order [(0, 1), (0, 1)] = 4,194,304 + 1,048,576 = 5,242,880; its naive cost is the one fused loop nest,
    # 3 × 64 · 128 · 256 · 32 = 201,326,592
    oe = pytest.importorskip("opt_einsum")
    views = [np.empty(shape, dtype=np.float32) for shape in ((64, 128), (128, 256), (256, 32))]
    optimal = oe.contract_path("ij,jk,kl->il", *views, optimize="optimal")[1]
    given = oe.contract_path("ij,jk,kl->il", *views, optimize=[(0, 1), (0, 1)])[1]
    assert analyze(chain("optimal")).flop == optimal.opt_cost == 2_621_440
    assert analyze(chain("given")).flop == given.opt_cost == 5_242_880
    assert analyze(chain()).flop == optimal.naive_cost == 201_326_592


def test_given_order_goes_left_to_right() -> None:
    # (ij,jk)->ik: 2 · 64 · 128 · 256 = 4,194,304; then ik,kl->il: 2 · 64 · 256 · 32 = 1,048,576: 5,242,880
    a = analyze(chain("given"))
    assert a.flop == 4_194_304 + 1_048_576 == 5_242_880
    assert numpy_cost(["einsum_path", (0, 1), (0, 1)]) == pytest.approx(a.flop, rel=1e-3)  # "5.243e+06"
    # under mac a multiply-add is 1: half of each step
    assert analyze(chain("given"), convention="mac").flop == 5_242_880 // 2
    # the intermediate ik: 64 × 256 × 4 B = 65,536 B written and read
    assert a.bytes == 32_768 + 131_072 + 32_768 + 2 * 65_536 + 8_192


def test_order_round_trips_and_bad_orders_are_one_line() -> None:
    for order in ("optimal", "given"):
        decl = parse(chain(order))
        assert parse(str(decl)) == decl and f"order={order}" in str(decl)
    with pytest.raises(DeclarationError, match="order must be fused, optimal or given; got fastest"):
        parse(chain("fastest"))


def test_an_outer_product_step_counts_one_multiply_per_point() -> None:
    # "i,j,ij->ij" given: i,j->ij has no summed index: 4 · 5 = 20 multiplies (1 FLOP each); then ij,ij->ij: 20 more
    a = analyze('einsum("i,j,ij->ij", i=4, j=5, dtype=fp32, order=given)')
    assert a.flop == 20 + 20


def test_a_sweep_of_a_pairwise_order_takes_each_point_exactly() -> None:
    sizes = np.array([32, 64, 128])
    swept = sweep(chain("optimal"), {"i": sizes}, "h100-sxm")
    for index, i in enumerate(sizes):
        assert swept.flop[index] == analyze(chain("optimal").replace("i=64", f"i={i}")).flop


def test_numpy_measures_the_declared_order() -> None:
    record = measure('einsum("ij,jk,kl->il", i=8, j=12, k=16, l=4, dtype=fp32, order=given)', backend="numpy", iterations=30, warmup=1)
    assert record.status == OK and record.check is not None and record.check.passed, record.message


# --- causal attention: top-left (PyTorch is_causal) or bottom-right (FlashAttention ≥ 2.1) -------------


def causal(align: str = "") -> str:
    extra = f", align={align}" if align else ""
    return f"attention(B=1, H=1, Sq=512, Skv=1024, D=64, causal=true{extra}, dtype=fp16)"


def test_bottom_right_is_the_default_and_keeps_393472_scores() -> None:
    # bottom-right: query i sees keys j ≤ i + (1024 − 512): row i keeps i + 513 scores, 513 … 1024:
    # U = (513 + 1024) · 512 / 2 = 393,472; every row keeps some (Rn = 512)
    a = analyze(causal())
    assert (a.basis.workload.values["U"], a.basis.workload.values["Rn"]) == (393_472, 512)
    # Q·Kᵀ 2 · 393,472 · 64 = 50,364,416; P·V the same; softmax 6 · 393,472 − 2 · 512 = 2,359,808
    assert dict(a.flop_terms) == {"Q·Kᵀ scores": 50_364_416, "softmax": 2_359_808, "P·V": 50_364_416}
    assert a.flop == 103_088_640
    assert any("aligned bottom-right, the default" in note for note in a.notes)
    assert str(parse(causal("bottom_right"))) == str(parse(causal())) and "align" not in str(parse(causal()))  # the default is left out


def test_top_left_keeps_131328_scores() -> None:
    # top-left (PyTorch's is_causal): query i sees keys j ≤ i: row i keeps i + 1 scores, 1 … 512:
    # U = 512 · 513 / 2 = 131,328; Rn = 512
    a = analyze(causal("top_left"))
    assert (a.basis.workload.values["U"], a.basis.workload.values["Rn"]) == (131_328, 512)
    # Q·Kᵀ 2 · 131,328 · 64 = 16,809,984; P·V the same; softmax 6 · 131,328 − 2 · 512 = 786,944
    assert dict(a.flop_terms) == {"Q·Kᵀ scores": 16_809_984, "softmax": 786_944, "P·V": 16_809_984}
    assert a.flop == 34_406_912
    assert any("aligned top-left" in note and "is_causal" in note for note in a.notes)
    assert parse(str(parse(causal("top_left")))) == parse(causal("top_left"))


def test_top_left_with_more_queries_than_keys_saturates() -> None:
    # Sq = 1024, Skv = 512, top-left: rows 0 … 511 keep 1 … 512, rows 512 … 1023 keep all 512:
    # U = 512 · 513 / 2 + 512 · 512 = 131,328 + 262,144 = 393,472
    a = analyze("attention(B=1, H=1, Sq=1024, Skv=512, D=64, causal=true, align=top_left, dtype=fp16)")
    assert a.basis.workload.values["U"] == 393_472


def test_align_without_causal_is_refused_in_one_line() -> None:
    with pytest.raises(DeclarationError, match="align=top_left places a causal mask"):
        parse("attention(B=1, H=1, Sq=8, Skv=8, D=8, align=top_left)")
    with pytest.raises(DeclarationError, match="align must be bottom_right or top_left"):
        parse("attention(B=1, H=1, Sq=8, Skv=8, D=8, causal=true, align=middle)")


@pytest.mark.parametrize("align", ["top_left", "bottom_right"])
def test_numpy_measures_each_alignment(align: str) -> None:
    record = measure(f"attention(B=1, H=1, Sq=12, Skv=20, D=8, causal=true, align={align}, dtype=fp32)",
                     backend="numpy", iterations=30, warmup=1)
    assert record.status == OK and record.check is not None and record.check.passed, record.message
