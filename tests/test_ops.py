"""Each operation's FLOP terms and tensors, checked against the hand calculation in a comment."""

from __future__ import annotations

import ast
import re

import pytest

from workbench.model.analysis import substitute
from workbench.model.declare import _integer_expression, parse
from workbench.model.ops import REGISTRY
from workbench.model.ops.attention import unmasked_scores


def terms(text: str, convention: str = "fma2") -> dict[str, int]:
    return {t.name: t.flop(convention) for t in parse(text).workload().terms}


def tensor_bytes(text: str) -> dict[str, int]:
    return {t.name: t.bytes for t in parse(text).workload().tensors}


def test_gemm_worked_example() -> None:
    w = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)").workload()
    # 2 * 4096 * 4096 * 4096 = 137,438,953,472
    assert w.flop() == 137_438_953_472
    # 4096 * 4096 * 2 B = 33,554,432 B per matrix; A + B + C = 100,663,296 B
    assert tensor_bytes("gemm(M=4096, N=4096, K=4096, dtype=fp16)") == {"A": 33_554_432, "B": 33_554_432, "C": 33_554_432}
    assert w.bytes == 100_663_296
    assert w.path == "fp16_tc"


def test_gemm_beta_is_its_own_term_and_reads_c() -> None:
    t = terms("gemm(M=64, N=32, K=16, dtype=fp32, beta=1)")
    # product 2*64*32*16 = 65,536; epilogue 2*64*32 = 4,096
    assert t == {"product A·B": 65_536, "β·C epilogue": 4_096}
    # C[64,32] fp32 = 8,192 B, read once and written once = 16,384 B
    assert tensor_bytes("gemm(M=64, N=32, K=16, dtype=fp32, beta=1)")["C"] == 16_384


def test_gemm_mixed_operands_and_batch() -> None:
    b = tensor_bytes("gemm(M=128, N=256, K=64, batch=4, a=fp8_e4m3, b=fp8_e4m3, c=bf16)")
    # A 4*128*64*1 = 32,768; B 4*64*256*1 = 65,536; C 4*128*256*2 = 262,144
    assert b == {"A": 32_768, "B": 65_536, "C": 262_144}
    assert parse("gemm(M=8, N=8, K=8, a=fp8_e4m3, b=fp8_e4m3, c=bf16)").workload().path == "fp8_tc"
    assert parse("gemm(M=8, N=8, K=8, dtype=fp16, acc=fp16)").workload().path == "fp16_tc_fp16acc"


def test_mac_convention_counts_a_multiply_add_once() -> None:
    # MAC: 4096^3 = 68,719,476,736
    assert terms("gemm(M=4096, N=4096, K=4096)", "mac") == {"product A·B": 68_719_476_736}
    # triad a = b + q*c: one FMA per element: fma2 2n, mac n
    assert terms("triad(n=1000)", "fma2") == {"multiply-add": 2000}
    assert terms("triad(n=1000)", "mac") == {"multiply-add": 1000}
    # an add is not a multiply-add: 1 FLOP under both
    assert terms("add(n=1000)", "mac") == {"add": 1000}


@pytest.mark.parametrize(
    ("op", "flop", "reads", "writes"),
    [
        # STREAM weights: copy 1/1, scale 1/1, add 2/1, triad 2/1; axpy reads x, y writes y
        ("copy", 0, 1, 1),
        ("scale", 1, 1, 1),
        ("add", 1, 2, 1),
        ("triad", 2, 2, 1),
        ("axpy", 2, 2, 1),
    ],
)
def test_stream_kernels(op: str, flop: int, reads: int, writes: int) -> None:
    n = 2**24
    w = parse(f"{op}(n={n}, dtype=fp32)").workload()
    assert w.flop() == flop * n
    assert w.bytes == (reads + writes) * n * 4
    assert sum(t.reads for t in w.tensors) == reads
    assert sum(t.writes for t in w.tensors) == writes


def test_vector_add_practice() -> None:
    w = parse("add(n=2**24, dtype=fp32)").workload()
    # 2^24 = 16,777,216 additions; 3 arrays * 2^24 * 4 B = 201,326,592 B; 1/12 FLOP/B
    assert w.flop() == 16_777_216
    assert w.bytes == 201_326_592
    assert w.flop() * 12 == w.bytes
    assert w.path == "fp32"


def test_elementwise_general() -> None:
    w = parse("elementwise(n=2**20, inputs=3, outputs=2, flop_per_element=4, dtype=fp16)").workload()
    # 4 * 2^20 = 4,194,304 FLOP; (3 + 2) * 2^20 * 2 B = 10,485,760 B
    assert w.flop() == 4_194_304
    assert w.bytes == 10_485_760


def test_reduce_counts_n_minus_one_additions() -> None:
    w = parse("reduce(n=1000, rows=3, dtype=fp32)").workload()
    # 3 * (1000 - 1) = 2,997 additions; read 3*1000*4 = 12,000 B, write 3*4 = 12 B
    assert w.flop() == 2_997
    assert w.bytes == 12_012


def test_softmax_terms() -> None:
    t = terms("softmax(rows=10, cols=100, dtype=bf16)")
    # max 10*99, subtract 10*100, exp 10*100, sum 10*99, normalise 10*100 = 4,980
    assert sum(t.values()) == 4_980
    assert set(t) == {"row max", "subtract max", "exp", "row sum", "normalise"}
    # x and y: 10*100*2 B each = 4,000 B
    assert parse("softmax(rows=10, cols=100, dtype=bf16)").workload().bytes == 4_000


def test_conv2d_same_padding() -> None:
    w = parse("conv2d(N=32, C=64, H=56, W=56, K=128, R=3, S=3, pad=1, dtype=fp16)").workload()
    # P = Q = (56 + 2 - 2 - 1)//1 + 1 = 56
    # FLOP = 2 * 32*128*56*56*64*3*3 = 14,797,504,512
    assert w.flop() == 14_797_504_512
    b = {t.name: t.bytes for t in w.tensors}
    # x 32*64*56*56*2 = 12,845,056; w 128*64*3*3*2 = 147,456; y 32*128*56*56*2 = 25,690,112
    assert b == {"x": 12_845_056, "w": 147_456, "y": 25_690_112}


def test_conv2d_stride_pad_dilation_groups() -> None:
    w = parse("conv2d(N=2, C=8, H=15, W=9, K=12, R=3, S=3, stride=2, pad=1, dilation=2, groups=4, dtype=fp32)").workload()
    # P = (15 + 2 - 2*2 - 1)//2 + 1 = 12//2 + 1 = 7; Q = (9 + 2 - 4 - 1)//2 + 1 = 4
    assert (w.values["P"], w.values["Q"]) == (7, 4)
    # Cg = 8/4 = 2; FLOP = 2 * 2*12*7*4*2*3*3 = 24,192
    assert w.flop() == 24_192
    # w[K, C/groups, R, S] = 12*2*3*3*4 B = 864 B
    assert {t.name: t.bytes for t in w.tensors}["w"] == 864


def test_attention_non_causal() -> None:
    t = terms("attention(B=2, H=4, Sq=128, Skv=256, D=64, dtype=bf16)")
    # Q·Kᵀ: 2*2*4*128*256*64 = 33,554,432 ; P·V the same with Dv = 64
    assert t["Q·Kᵀ scores"] == 33_554_432
    assert t["P·V"] == 33_554_432
    # together 4·B·H·Sq·Skv·D = 67,108,864
    assert t["Q·Kᵀ scores"] + t["P·V"] == 4 * 2 * 4 * 128 * 256 * 64
    # softmax per head: 6*128*256 - 2*128 = 196,352; * B*H = 8 → 1,570,816
    assert t["softmax"] == 1_570_816


def test_attention_causal_counts_exactly_the_unmasked_scores() -> None:
    # square: row i keeps i+1 scores → 1 + 2 + ... + 4 = 10
    assert unmasked_scores(4, 4, True) == (10, 4)
    # Sq=2, Skv=5, bottom-right: rows keep 4 and 5 → 9
    assert unmasked_scores(2, 5, True) == (9, 2)
    # Sq=5, Skv=2: rows 0-2 see nothing, rows 3, 4 keep 1 and 2 → 3 over 2 rows
    assert unmasked_scores(5, 2, True) == (3, 2)
    t = terms("attention(B=1, H=2, Sq=4, Skv=4, D=8, causal=true)")
    # Q·Kᵀ: 2 * 1*2*10*8 = 320
    assert t["Q·Kᵀ scores"] == 320


def test_attention_causal_against_brute_force() -> None:
    for sq in range(1, 9):
        for skv in range(1, 9):
            kept = [sum(1 for j in range(skv) if j <= i + skv - sq) for i in range(sq)]
            assert unmasked_scores(sq, skv, True) == (sum(kept), sum(1 for k in kept if k)), (sq, skv)


def test_attention_unfused_adds_score_round_trips_and_dv() -> None:
    fused = parse("attention(B=1, H=1, Sq=128, Skv=128, D=64, Dv=32, dtype=fp16)").workload()
    unfused = parse("attention(B=1, H=1, Sq=128, Skv=128, D=64, Dv=32, fused=false, dtype=fp16)").workload()
    # Q 128*64*2 + K 128*64*2 + V 128*32*2 + O 128*32*2 = 49,152
    assert fused.bytes == 49_152
    # S and P: 128*128*2 = 32,768 each, written and read → 4 * 32,768 = 131,072 more
    assert unfused.bytes - fused.bytes == 131_072
    assert unfused.flop() == fused.flop()  # logical work does not depend on the implementation


def test_einsum_agrees_with_gemm_on_the_same_contraction() -> None:
    e = parse('einsum("bmk,bkn->bmn", b=8, m=1024, k=4096, n=1024, dtype=fp16)').workload()
    g = parse("gemm(M=1024, N=1024, K=4096, batch=8, dtype=fp16)").workload()
    assert e.flop() == g.flop()
    assert e.bytes == g.bytes
    assert e.path == g.path == "fp16_tc"


def test_einsum_other_contractions() -> None:
    # row sum "ij->i": i*j - i additions = 6*5 - 6 = 24
    assert parse('einsum("ij->i", i=6, j=5, dtype=fp32)').workload().flop() == 24
    # Hadamard "ij,ij->ij": one multiply per element = 30
    assert parse('einsum("ij,ij->ij", i=6, j=5, dtype=fp32)').workload().flop() == 30
    # dot "i,i->": 2*7 = 14 (one multiply-add per i)
    assert parse('einsum("i,i->", i=7, dtype=fp32)').workload().flop() == 14
    # chain "ij,jk,kl->il": points i*j*k*l = 2*3*4*5 = 120 → 2*120 + 120 extra multiplies = 360
    assert parse('einsum("ij,jk,kl->il", i=2, j=3, k=4, l=5, dtype=fp32)').workload().flop() == 360


SAMPLES = [
    "gemm(M=300, N=200, K=100, batch=3, dtype=fp16, beta=1)",
    "triad(n=1000)",
    "elementwise(n=1000, inputs=2, outputs=1, flop_per_element=3, dtype=fp32)",
    "reduce(n=1000, rows=7, dtype=fp32)",
    "softmax(rows=10, cols=30, dtype=fp32)",
    "conv2d(N=2, C=8, H=15, W=9, K=12, R=3, S=3, stride=2, pad=1, dilation=2, groups=4, dtype=fp32)",
    "attention(B=2, H=3, Sq=5, Skv=9, D=8, Dv=4, causal=true, dtype=bf16)",
    "attention(B=2, H=3, Sq=5, Skv=9, D=8, dtype=bf16)",
    'einsum("ij,jk,kl->il", i=2, j=3, k=4, l=5, dtype=fp32)',
    'einsum("ij->i", i=6, j=5, dtype=fp32)',
]


@pytest.mark.parametrize("text", SAMPLES + [text for spec in REGISTRY.values() for text in spec.examples])
@pytest.mark.parametrize("convention", ["fma2", "mac"])
def test_each_terms_formula_text_computes_its_count(text: str, convention: str) -> None:
    """The formula a user reads in the derivation must give the number the code computed."""
    workload = parse(text).workload()
    for term in workload.terms:
        arithmetic = substitute(term.formula_for(convention), workload.values)
        arithmetic = arithmetic.replace(",", "").replace("×", "*").replace("−", "-")
        # ⌈a/b⌉ (the collectives' chunk per rank) as integer arithmetic: -(-a // b)
        arithmetic = re.sub(r"⌈([^⌉/]+)/([^⌉]+)⌉", r"(-(-(\1)//(\2)))", arithmetic)
        arithmetic = re.sub(r"⌊([^⌋/]+)/([^⌋]+)⌋", r"((\1)//(\2))", arithmetic)  # ⌊a/b⌋: the ring's smallest chunk
        node = ast.parse(arithmetic, mode="eval").body
        assert _integer_expression(node, term.name, False) == term.flop(convention), term.name


def test_every_operation_module_registers_and_the_registry_lists_them_by_position() -> None:
    import pkgutil

    import workbench.model.ops as ops

    modules = {m.name for m in pkgutil.iter_modules(ops.__path__)} - ops._HELPER_MODULES
    registering = {spec.build.__module__.rsplit(".", 1)[-1] for spec in REGISTRY.values()}
    assert registering == modules  # adding a module is all it takes to add an operation
    positions = [spec.position for spec in REGISTRY.values()]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert next(iter(REGISTRY)) == "gemm"  # the editor and `workbench calc --help` lead with the product


def test_registering_a_name_twice_is_refused() -> None:
    from workbench.model.ops import register

    with pytest.raises(ValueError, match="registered twice"):
        register(REGISTRY["gemm"])


@pytest.mark.parametrize("op", list(REGISTRY))
def test_each_operation_registers_what_the_other_layers_need(op: str) -> None:
    spec = REGISTRY[op]
    assert spec.examples, "an example declaration (measured and analysed by the tests)"
    for text in spec.examples:
        assert parse(text).op == op
    dims = {p.name for p in spec.params if p.kind == "dim"}
    assert set(spec.tied_fields) <= dims
    assert spec.kernel_names is not None and spec.kernel_names.words


def test_sub_byte_types_are_exact_in_bits() -> None:
    # int4: 2 per byte; 1001 elements → 4004 bits → 501 bytes (rounded up)
    w = parse("copy(n=1001, dtype=int4)").workload()
    assert [t.bytes for t in w.tensors] == [501, 501]


def test_rmsnorm_worked_example() -> None:
    text = "rmsnorm(rows=8192, cols=8192, dtype=bf16)"  # affine weights by default
    # per row: square 8192 + sum 8191 + (mean, +ε, 1/√) 3 + normalise 8192 + weight 8192 = 32,770
    # 8192 rows * 32,770 = 268,451,840 FLOP
    assert terms(text) == {
        "square": 67_108_864,  # 8192 * 8192
        "row sum of squares": 67_100_672,  # 8192 * 8191
        "mean, +ε, 1/√": 24_576,  # 3 * 8192
        "normalise": 67_108_864,
        "weight": 67_108_864,
    }
    assert parse(text).workload().flop() == 268_451_840
    # x and y: 8192 * 8192 * 2 B = 134,217,728 B each; w: 8192 * 2 B = 16,384 B
    assert tensor_bytes(text) == {"x": 134_217_728, "w": 16_384, "y": 134_217_728}
    assert parse(text).workload().bytes == 268_451_840  # 2 * 134,217,728 + 16,384
    assert parse(text).workload().path == "fp32"  # 16-bit elementwise math runs on the fp32 vector pipe


def test_rmsnorm_without_weights() -> None:
    text = "rmsnorm(rows=10, cols=100, affine=false, dtype=fp32)"
    # per row: 100 + 99 + 3 + 100 = 302; 10 rows → 3,020 FLOP (no weight term)
    assert parse(text).workload().flop() == 3_020
    # x and y: 10 * 100 * 4 B = 4,000 B each, no w
    assert tensor_bytes(text) == {"x": 4_000, "y": 4_000}


def test_layernorm_worked_example() -> None:
    text = "layernorm(rows=4096, cols=1024, dtype=fp16)"
    # per row: sum 1023 + mean 1 + subtract 1024 + square 1024 + sum 1023 + (var, +ε, 1/√) 3
    #          + normalise 1024 = 5,122; weight and bias: 1024 multiply-adds = 2,048 FLOP (fma=2)
    # 4096 * (5,122 + 2,048) = 4096 * 7,170 = 29,368,320 FLOP
    assert parse(text).workload().flop() == 29_368_320
    assert terms(text)["weight and bias"] == 8_388_608  # 2 * 4096 * 1024
    # counting a multiply-add once: 4096 * (5,122 + 1,024) = 4096 * 6,146 = 25,174,016
    assert parse(text).workload().flop("mac") == 25_174_016
    # x and y: 4096 * 1024 * 2 B = 8,388,608 B each; w and b: 1024 * 2 B = 2,048 B each
    assert tensor_bytes(text) == {"x": 8_388_608, "w": 2_048, "b": 2_048, "y": 8_388_608}
    assert parse(text).workload().bytes == 16_781_312  # 2 * 8,388,608 + 2 * 2,048


def test_layernorm_without_weights() -> None:
    text = "layernorm(rows=3, cols=5, affine=false, dtype=fp64)"
    # per row: 4 + 1 + 5 + 5 + 4 + 3 + 5 = 27 = 5*5 + 2; 3 rows → 81 FLOP
    assert parse(text).workload().flop() == 81
    # x and y: 3 * 5 * 8 B = 120 B each
    assert parse(text).workload().bytes == 240
