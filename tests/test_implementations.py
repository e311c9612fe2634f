"""Implementation models: logical vs physical FLOP and bytes per interface (issue 17).

Hand calculations sit beside each figure; the assertions hold the exact integers.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.declare import parse
from workbench.model.devices.catalogue import catalogue
from workbench.model.devices.interfaces import HBM, L2, SMEM
from workbench.errors import DeclarationError
from workbench.model.implementations import COMPULSORY, MODEL_INTERFACES, PhysicalWork, physical_work
from workbench.model.ops import REGISTRY

WORKED = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def work(text: str, device: str | None = "h100-sxm") -> PhysicalWork:
    decl = parse(text)
    return physical_work(decl, decl.workload(), catalogue()[device] if device else None)


def test_compulsory_worked_example_keeps_todays_figures() -> None:
    # 2·4096³ = 137,438,953,472 FLOP; (3 · 4096² elements) · 2 B = 100,663,296 B
    physical = work(WORKED)
    assert physical.implementation == COMPULSORY
    assert physical.logical_flop == physical.physical_flop == 137_438_953_472
    assert physical.logical_bytes == 100_663_296
    # every interface carries the compulsory bytes once; the host interface is never implied
    assert dict(physical.bytes_by_interface) == {HBM: 100_663_296, L2: 100_663_296, SMEM: 100_663_296}
    assert physical.quantization is None
    assert physical.assumptions and all(sentence.strip() for sentence in physical.assumptions)


@pytest.mark.parametrize("spec", list(REGISTRY.values()), ids=lambda spec: spec.name)
def test_compulsory_equals_the_workload_for_every_example(spec) -> None:
    for example in spec.examples:
        decl = parse(example)
        workload = decl.workload()
        physical = physical_work(decl, workload, None)
        assert physical.logical_flop == physical.physical_flop == workload.flop()
        assert physical.logical_bytes == workload.bytes
        assert set(physical.bytes_by_interface) == set(MODEL_INTERFACES)
        assert set(physical.bytes_by_interface.values()) == {workload.bytes}


# --- the declaration keywords ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (
            "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=128, tile_n=128, tile_k=32)",
            "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=128, tile_n=128, tile_k=32)",
        ),
        # the tile sizes are written whenever impl=tiled; ctas_per_sm only when it is not 1
        ("gemm(M=64, N=64, K=64, impl=tiled)", "gemm(M=64, N=64, K=64, dtype=fp16, impl=tiled, tile_m=128, tile_n=128, tile_k=32)"),
        ("gemm(M=64, N=64, K=64, impl=tiled, ctas_per_sm=1, tile_k=16)",
         "gemm(M=64, N=64, K=64, dtype=fp16, impl=tiled, tile_m=128, tile_n=128, tile_k=16)"),
        ("gemm(M=64, N=64, K=64, impl=Tiled, ctas_per_sm=2, tile_m=64, tile_n=256)",
         "gemm(M=64, N=64, K=64, dtype=fp16, impl=tiled, tile_m=64, tile_n=256, tile_k=32, ctas_per_sm=2)"),
        ("gemm(M=64, N=64, K=64, impl=naive)", "gemm(M=64, N=64, K=64, dtype=fp16, impl=naive)"),
        # compulsory is the default and is left out when printing
        ("gemm(M=64, N=64, K=64, impl=compulsory)", "gemm(M=64, N=64, K=64, dtype=fp16)"),
        ("add(n=2**24, impl=compulsory)", "add(n=2**24, dtype=fp32)"),
        ("gemm(impl=naive, M=64, batch=2, N=64, K=64, beta=1)", "gemm(M=64, N=64, K=64, batch=2, dtype=fp16, beta=1, impl=naive)"),
        ("attention(B=1, H=2, Sq=64, Skv=64, D=16, causal=true, impl=naive)",
         "attention(B=1, H=2, Sq=64, Skv=64, D=16, causal=true, fused=true, dtype=bf16, impl=naive)"),
    ],
)
def test_implementation_keywords_round_trip(text: str, canonical: str) -> None:
    decl = parse(text)
    assert str(decl) == canonical
    assert parse(canonical) == decl
    assert str(parse(canonical)) == canonical


def test_replace_keeps_and_changes_the_implementation() -> None:
    decl = parse("gemm(M=64, N=64, K=64, impl=tiled, tile_m=64)")
    assert decl.implementation == "tiled"
    assert decl.replace(M=128)["tile_m"] == 64
    assert str(decl.replace(impl="naive", tile_m=None, tile_n=None, tile_k=None)) == "gemm(M=64, N=64, K=64, dtype=fp16, impl=naive)"
    assert decl.replace(impl="compulsory", tile_m=None, tile_n=None, tile_k=None).implementation == "compulsory"
    assert parse(WORKED).implementation == "compulsory"


@pytest.mark.parametrize(
    ("text", "field", "fragment"),
    [
        ("gemm(M=8, N=8, K=8, impl=fast)", "impl", "unknown implementation impl=fast; known: compulsory, library, naive, tiled, vectorized"),
        ("gemm(M=8, N=8, K=8, impl=3)", "impl", "impl must be a name such as tiled"),
        ("add(n=8, impl=naive)", "impl", "add has impl=compulsory, library, vectorized; not impl=naive"),
        ("reduce(n=8, impl=naive)", "impl", "reduce has impl=compulsory, library; not impl=naive"),
        ("add(n=8, impl=library, threads_per_block=64)", "threads_per_block", "describes your own kernel's launch; impl=library has its own"),
        ("add(n=8, bytes_per_load=3)", "bytes_per_load", "bytes_per_load must be 1, 2, 4, 8 or 16"),
        ("add(n=8, threads_per_block=2048)", "threads_per_block", "at most 1024"),
        ("add(n=8, loads_in_flight=0)", "loads_in_flight", "positive integer"),
        ("softmax(rows=8, cols=8, impl=tiled)", "impl", "impl=tiled is modelled for gemm"),
        ("attention(B=1, H=1, Sq=4, Skv=4, D=8, impl=tiled)", "impl", "attention has impl=compulsory, naive; not impl=tiled"),
        ("gemm(M=8, N=8, K=8, tile_m=64)", "tile_m", "tile_m belongs to impl=tiled; add impl=tiled or remove tile_m"),
        ("gemm(M=8, N=8, K=8, impl=naive, tile_k=8)", "tile_k", "tile_k belongs to impl=tiled"),
        ("gemm(M=8, N=8, K=8, ctas_per_sm=2)", "ctas_per_sm", "ctas_per_sm belongs to impl=tiled"),
        ("gemm(M=8, N=8, K=8, impl=tiled, tile_m=0)", "tile_m", "tile_m must be a positive integer; got 0"),
        ("gemm(M=8, N=8, K=8, impl=tiled, tile_n=-16)", "tile_n", "tile_n must be a positive integer; got -16"),
        ("gemm(M=8, N=8, K=8, impl=tiled, tile_k=2.5)", "tile_k", "whole number"),
        ("gemm(M=8, N=8, K=8, impl=tiled, ctas_per_sm=0)", "ctas_per_sm", "positive integer"),
        ("gemm(M=8, N=8, K=8, impl=tiled, ctas_per_sm=65)", "ctas_per_sm", "at most 64"),
        ("gemm(M=8, N=8, K=8, impl=tiled, tile_m=2**17)", "tile_m", "at most 65536"),
        ("gemm(M=8, N=8, K=8, impl=naive, impl=tiled)", "impl", "given twice"),
        ("gemm(M=8, N=8, K=8, tiles=2)", "tiles", "allowed: M, N, K, batch, dtype, a, b, c, acc, beta, impl, tile_m"),
    ],
)
def test_bad_implementation_keywords_are_one_line(text: str, field: str, fragment: str) -> None:
    with pytest.raises(DeclarationError) as caught:
        parse(text)
    assert fragment in str(caught.value)
    assert caught.value.field == field
    assert "\n" not in str(caught.value)


def test_every_registered_implementation_has_a_model() -> None:
    from workbench.model.implementations import models

    named = {name for spec in REGISTRY.values() for name in spec.implementations}
    assert named == set(models())
    assert all(spec.implementations[0] == COMPULSORY for spec in REGISTRY.values())


# --- Must show: naive and tiled traffic, tile and wave quantization ------------------


def test_naive_gemm_loads_a_row_and_a_column_per_output() -> None:
    physical = work("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=naive)")
    # global loads: 2·M·N·K elements = 2 · 68,719,476,736 = 137,438,953,472 elements × 2 B = 274,877,906,944 B
    # plus C written once: 4096² × 2 B = 33,554,432 B
    assert physical.bytes_across(L2) == 274_877_906_944 + 33_554_432
    assert physical.bytes_across(SMEM) == 274_877_906_944 + 33_554_432
    # compulsory HBM stays 100,663,296 B, and on an H100 the L2 rule keeps HBM at it:
    # B is 33,554,432 B, the 16-row A panel 16 · 4096 · 2 = 131,072 B; together 33,685,504 B ≤ 52,428,800 B of L2
    assert physical.logical_bytes == 100_663_296
    assert physical.bytes_across(HBM) == 100_663_296
    assert physical.physical_flop == physical.logical_flop == 137_438_953_472
    assert any("L1 is assumed to catch nothing" in sentence for sentence in physical.assumptions)


def test_naive_gemm_rereads_b_from_hbm_when_it_does_not_fit_in_l2() -> None:
    physical = work("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=naive)")
    # fp32 B = 4096² × 4 B = 67,108,864 B > 52,428,800 B of L2: B is read once per 16-row block row,
    # ⌈4096 / 16⌉ = 256 times = 17,179,869,184 B; A once (67,108,864 B); C written once (67,108,864 B)
    assert physical.bytes_across(HBM) == 67_108_864 + 256 * 67_108_864 + 67_108_864
    # without a device the L2 rule cannot be applied: the compulsory floor, and the sentence says so
    floor = work("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=naive)", device=None)
    assert floor.bytes_across(HBM) == 3 * 67_108_864
    assert any("no device chosen" in sentence for sentence in floor.assumptions)


def test_tiled_gemm_loads_and_waves_of_the_worked_example() -> None:
    physical = work("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=128, tile_n=128, tile_k=32)")
    # loads into shared memory: M·N·K·(1/128 + 1/128) = 68,719,476,736 / 64 = 1,073,741,824 elements × 2 B
    # = 2,147,483,648 B, plus C written once: 33,554,432 B
    assert physical.bytes_across(L2) == 2_147_483_648 + 33_554_432
    assert physical.bytes_across(HBM) == 100_663_296  # B (32 MiB) + A panel (1 MiB) fit in 50 MiB of L2
    assert physical.logical_bytes == 100_663_296
    # fp16 runs on tensor cores: 2 × 2 warps of 64 × 64 read each staged value twice = 2 × the loads
    assert physical.bytes_across(SMEM) == 2 * 2_147_483_648 + 33_554_432
    q = physical.quantization
    assert q is not None
    # 4096 / 128 = 32 tiles each way: 32 × 32 = 1,024 tiles; 132 SMs × 1 CTA: 1,024 / 132 = 7.76 → 8 waves
    assert q.tiles == 1_024 and q.sm_count == 132 and q.ctas_per_sm == 1
    assert q.waves == 8
    # 1,024 of 8 × 132 = 1,056 slots: 96.97 % → 97.0 %
    assert q.slots == 132 and q.slot_use == pytest.approx(1_024 / 1_056)
    assert f"{q.slot_use:.1%}" == "97.0%"
    assert any("7.76 → 8 waves" in sentence and "(97.0%)" in sentence for sentence in physical.assumptions)
    assert physical.physical_flop == physical.logical_flop == 137_438_953_472


def test_tile_quantization_pads_m_to_whole_tiles() -> None:
    physical = work("gemm(M=4097, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=128, tile_n=128, tile_k=32)")
    q = physical.quantization
    assert q is not None
    # ⌈4097 / 128⌉ = 33 tiles of 128 rows: M is padded to 33 × 128 = 4,224
    assert dict(q.padded) == {"M": 4_224, "N": 4_096, "K": 4_096}
    # logical 2 · 4097 · 4096 · 4096 = 137,472,507,904; physical 2 · 4224 · 4096 · 4096 = 141,733,920,768
    assert physical.logical_flop == 137_472_507_904
    assert physical.physical_flop == 141_733_920_768
    assert physical.extra_flop / physical.logical_flop == pytest.approx(0.031, abs=0.0005)  # +3.1 %
    # 33 × 32 = 1,056 tiles = 8 × 132: exactly 8 waves, every slot used
    assert q.tiles == 1_056 and q.waves == 8 and q.slot_use == 1.0
    # loads: A (4097·4096·2 B) × 32 tile columns + B (4096²·2 B) × 33 tile rows; padding is zero-filled, not loaded
    assert physical.bytes_across(L2) == 4_097 * 4_096 * 2 * 32 + 4_096 * 4_096 * 2 * 33 + 4_097 * 4_096 * 2
    assert any("M 4,097 → 4,224" in sentence and "+3.1% FLOP" in sentence for sentence in physical.assumptions)


def test_waves_need_an_sm_count_and_follow_ctas_per_sm() -> None:
    alone = work("gemm(M=4096, N=4096, K=4096, impl=tiled)", device=None).quantization
    assert alone is not None and alone.tiles == 1_024 and alone.waves is None and alone.slot_use is None
    two = work("gemm(M=4096, N=4096, K=4096, impl=tiled, ctas_per_sm=2)").quantization
    # 1,024 tiles over 132 × 2 = 264 slots: 3.88 → 4 waves, 1,024 of 1,056 slots
    assert two is not None and two.waves == 4 and two.slot_use == pytest.approx(1_024 / 1_056)


def test_tiled_simt_kernel_reads_its_micro_tiles_from_shared_memory() -> None:
    physical = work("gemm(M=1024, N=1024, K=1024, dtype=fp32, impl=tiled, tile_m=64, tile_n=64, tile_k=16)")
    # fp32 has no tensor-core path: 16 × 16 threads, each a 4 × 4 micro-tile; per k step a thread reads
    # 4 values of A and 4 of B: M·N·K·(1/4 + 1/4) = 2^30 / 2 = 536,870,912 values × 4 B, plus C (4 MiB)
    assert physical.bytes_across(SMEM) == 536_870_912 * 4 + 1024 * 1024 * 4
    # loads: M·N·K·(1/64 + 1/64) = 2^30 / 32 = 33,554,432 values × 4 B, plus C
    assert physical.bytes_across(L2) == 33_554_432 * 4 + 1024 * 1024 * 4


def test_batched_gemm_counts_every_batch_entry() -> None:
    one = work("gemm(M=512, N=512, K=512, dtype=fp16, impl=naive)")
    eight = work("gemm(M=512, N=512, K=512, batch=8, dtype=fp16, impl=naive)")
    assert eight.bytes_across(L2) == 8 * one.bytes_across(L2)
    assert eight.bytes_across(HBM) == 8 * one.bytes_across(HBM)
    tiled = work("gemm(M=500, N=512, K=512, batch=8, dtype=fp16, impl=tiled)")
    q = tiled.quantization
    # ⌈500/128⌉ = 4 tile rows × 4 tile columns × 8 entries = 128 tiles; physical FLOP 2·8·512·512·512
    assert q is not None and q.tiles == 128 and tiled.physical_flop == 2 * 8 * 512**3
    assert tiled.logical_flop == 2 * 8 * 500 * 512 * 512


def test_beta_reads_c_on_every_interface() -> None:
    physical = work("gemm(M=256, N=256, K=256, dtype=fp32, beta=1, impl=naive)")
    c = 256 * 256 * 4
    # C read for β·C and written: 2 × 262,144 B beside the loads 2 · 256³ · 4 B
    assert physical.bytes_across(L2) == 2 * 256**3 * 4 + 2 * c


# --- attention: score round trip and masked work ------------------------------------


def test_naive_attention_sends_scores_through_hbm_and_computes_masked_work() -> None:
    text = "attention(B=1, H=2, Sq=1024, Skv=1024, D=64, causal=true, dtype=bf16, impl=naive)"
    physical = work(text)
    # compulsory (fused): Q, K, V read and O written, 4 × (1·2·1024·64) × 2 B = 1,048,576 B
    assert physical.logical_bytes == 1_048_576
    # S and P: 2·1024·1024 × 2 B = 4,194,304 B each, written once and read once: + 16,777,216 B
    assert physical.bytes_across(HBM) == 1_048_576 + 16_777_216
    # logical (causal): U = 1024·1025/2 = 524,800 unmasked scores per head;
    #   Q·Kᵀ 2·2·U·64 + softmax 2·(6U − 2·1024) + P·V 2·2·U·64 = 134,348,800 + 6,293,504 + 134,348,800
    assert physical.logical_flop == 274_991_104
    # physical: all 1024² scores computed: 2·2·2^20·64 · 2 + 2·(6·2^20 − 2048) = 536,870,912 + 12,578,816
    assert physical.physical_flop == 549_449_728
    assert any("masked" in sentence for sentence in physical.assumptions)


def test_naive_attention_on_an_unfused_declaration_adds_no_bytes() -> None:
    text = "attention(B=1, H=2, Sq=128, Skv=128, D=64, fused=false, dtype=bf16, impl=naive)"
    physical = work(text)
    assert physical.bytes_across(HBM) == physical.logical_bytes  # S and P already counted
    assert physical.physical_flop == physical.logical_flop  # no mask: nothing discarded
    assert any("already unfused" in sentence for sentence in physical.assumptions)


# --- the lab demo example ---------------------------------------------------------------


def test_the_lab_demo_example_holds_the_figures_its_notes_promise() -> None:
    from workbench.documents.examples import load_example
    from workbench.model.units import format_bytes

    session = load_example("gemm-naive-tiled-cublas")
    device = catalogue()[session.device.key]
    decls = [parse(entry.declaration) for entry in session.operations]
    assert [d.implementation for d in decls] == ["naive", "tiled", "compulsory"]
    works = [physical_work(d, d.workload(), device) for d in decls]
    assert {w.logical_flop for w in works} == {137_438_953_472}  # same logical work, 2 · 4096³
    assert {w.logical_bytes for w in works} == {201_326_592}  # 3 · 4096² · 4 B
    naive, tiled, library = works
    notes = [entry.notes for entry in session.operations]
    # naive: 2 · 4096³ · 4 B + C = 549.8 GB across L2 → SM; HBM: A + 256 × B + C = 17.3 GB
    assert format_bytes(naive.bytes_across(L2)) == "549.8 GB" and "549.8 GB" in notes[0]
    assert format_bytes(naive.bytes_across(HBM)) == "17.31 GB" and "17.3 GB" in notes[0]
    # tiled 128×128×8: 4.4 GB across L2 → SM, 2.3 GB from HBM, 68.8 GB from shared memory, 8 waves at 97.0 %
    assert format_bytes(tiled.bytes_across(L2)).startswith("4.36") and "4.4 GB" in notes[1]
    assert format_bytes(tiled.bytes_across(HBM)).startswith("2.28") and "2.3 GB" in notes[1]
    assert format_bytes(tiled.bytes_across(SMEM)).startswith("68.79") and "68.8 GB" in notes[1]
    q = tiled.quantization
    assert q is not None and (q.tiles, q.waves, f"{q.slot_use:.1%}") == (1_024, 8, "97.0%")
    assert "1,024 tiles over 132 SMs are 8 waves, 97.0 %" in notes[1]
    assert set(library.bytes_by_interface.values()) == {201_326_592}
    assert "show" in session.description and "model only" in session.description
    # the bounds the notes quote: naive limited by L1 → registers, 549.8 GB / 33.45 TB/s (derived) ≈ 16.4 ms,
    # about 8 × cuBLAS's compute bound 137.4 GFLOP / 67 TFLOP/s = 2.05 ms
    naive_bound, tiled_bound, library_bound = session.analyze_all()
    assert naive_bound.limiter_term == SMEM and round(naive_bound.bound_time * 1e3, 1) == 16.4
    assert "16.4 ms, the limiter" in notes[0] and "eight times" in notes[0]
    assert round(naive_bound.bound_time / library_bound.bound_time) == 8
    assert round(library_bound.bound_time * 1e3, 2) == 2.05 and library_bound.limiter == "compute"
    # tiled: 8 whole waves of one tile's time, 2 · 128 · 128 · 4096 FLOP / (67 TFLOP/s ÷ 132 SMs) = 264.4 µs
    # each: 8 × 264.4 µs = 2.115 ms, above 137.4 GFLOP / 67 TFLOP/s = 2.051 ms and the shared-memory term
    # (68.8 GB / 33.45 TB/s = 2.06 ms)
    assert tiled_bound.limiter == "compute" and round(tiled_bound.bound_time * 1e3, 2) == 2.12
    assert tiled_bound.bound_time == pytest.approx(8 * 2 * 128 * 128 * 4096 / (67e12 / 132))
    assert "8 whole waves, 2.12 ms" in notes[1]


# --- sweeps: the same figures on numpy arrays ------------------------------------------


@pytest.mark.parametrize(
    ("text", "swept"),
    [
        ("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=tiled, tile_m=128, tile_n=128, tile_k=8)", {"M": [1000, 4096, 4097]}),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled)", {"tile_m": [16, 64, 128, 256]}),
        ("gemm(M=4096, N=4000, K=4096, dtype=fp16, impl=tiled, ctas_per_sm=2)", {"K": [64, 4096, 100_000]}),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=naive)", {"N": [16, 3000, 8192]}),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp32)", {"M": [16, 4096]}),
        ("attention(B=1, H=2, Sq=1024, Skv=1024, D=64, causal=true, impl=naive)", {"Sq": [1, 1024, 4000]}),
    ],
)
def test_a_sweep_gets_the_exact_figures_elementwise(text: str, swept: dict[str, list[int]]) -> None:
    np = pytest.importorskip("numpy")
    device = catalogue()["h100-sxm"]
    decl = parse(text)
    arrays = {name: np.asarray(values, dtype=np.float64) for name, values in swept.items()}
    workload = decl.spec.build({**decl.params, **arrays})
    together = physical_work(decl, workload, device, params=arrays)
    assert all(sentence and "\n" not in sentence for sentence in together.assumptions)
    (name, values), = swept.items()
    for index, value in enumerate(values):
        one = parse(text).replace(**{name: value})
        alone = physical_work(one, one.workload(), device)
        assert np.broadcast_to(together.physical_flop, (len(values),))[index] == pytest.approx(alone.physical_flop, rel=1e-12)
        for key, moved in alone.bytes_by_interface.items():
            assert np.broadcast_to(together.bytes_by_interface[key], (len(values),))[index] == pytest.approx(moved, rel=1e-12)
        if alone.quantization is not None:
            q = together.quantization
            assert q is not None
            assert np.broadcast_to(q.tiles, (len(values),))[index] == alone.quantization.tiles
            assert np.broadcast_to(q.waves, (len(values),))[index] == alone.quantization.waves


def test_automatic_names_say_which_implementation() -> None:
    from workbench.model.naming import automatic_name

    assert automatic_name(WORKED) == "GEMM 4096³ fp16"
    assert automatic_name("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=naive)") == "GEMM 4096³ fp16, naive"
    assert automatic_name("gemm(M=4096, N=4096, K=4096, impl=tiled, tile_k=16)") == "GEMM 4096³ fp16, tiled 128×128×16"
    assert automatic_name("attention(B=1, H=2, Sq=64, Skv=64, D=16, impl=naive)").endswith(", naive")


@st.composite
def implemented_gemms(draw: st.DrawFn) -> str:
    sizes = ", ".join(f"{name}={draw(st.integers(1, 5000))}" for name in ("M", "N", "K"))
    impl = draw(st.sampled_from(["", "compulsory", "naive", "tiled"]))
    fields = [sizes]
    if draw(st.booleans()):
        fields.append(f"batch={draw(st.integers(1, 8))}")
    if impl:
        fields.append(f"impl={impl}")
    if impl == "tiled":
        for name in ("tile_m", "tile_n", "tile_k", "ctas_per_sm"):
            if draw(st.booleans()):
                fields.append(f"{name}={draw(st.integers(1, 64 if name == 'ctas_per_sm' else 512))}")
    order = draw(st.permutations(fields))
    return f"gemm({', '.join(order)}, dtype={draw(st.sampled_from(['fp16', 'fp32', 'bf16', 'fp8_e4m3']))})"


@settings(max_examples=200, deadline=None)
@given(implemented_gemms())
def test_random_implemented_gemms_round_trip_and_keep_physical_at_or_above_logical(text: str) -> None:
    decl = parse(text)
    assert parse(str(decl)) == decl and str(parse(str(decl))) == str(decl)
    physical = physical_work(decl, decl.workload(), catalogue()["h100-sxm"])
    assert physical.physical_flop >= physical.logical_flop
    # an implementation moves at least the compulsory bytes across every interface, and HBM no more than L2 → SM
    assert all(moved >= physical.logical_bytes for moved in physical.bytes_by_interface.values())
    assert physical.bytes_across(HBM) <= physical.bytes_across(L2)
    q = physical.quantization
    if q is not None:
        assert q.waves is not None and q.slot_use is not None and 0 < q.slot_use <= 1
        assert (q.waves - 1) * q.slots < q.tiles <= q.waves * q.slots
