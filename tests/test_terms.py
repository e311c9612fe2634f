"""An analysis as a list of time terms: compute, each interface, host, link; how they combine; the limiter."""

from __future__ import annotations

import pytest

from workbench.model.analysis import Overlap, analyze
from workbench.model.analysis.terms import Term, combine, compute_term, link_term, transfer_term
from workbench.model.devices.catalogue import DATASHEET, Rate
from workbench.errors import DeclarationError, DeviceError, UnitError

WORKED = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def test_worked_example_terms_on_h100_sxm() -> None:
    a = analyze(WORKED, device="h100-sxm")
    compute, hbm = a.term("compute"), a.term("hbm")
    assert compute is not None and hbm is not None
    # 2 × 4096³ = 137,438,953,472 FLOP on the fp16_tc path at 989 TFLOP/s = 138.97 µs
    assert (compute.kind, compute.resource, compute.amount, compute.unit) == ("compute", "fp16_tc", 137_438_953_472, "FLOP")
    assert compute.rate is not None and compute.rate.value == 989e12 and compute.rate_unit == "FLOP/s"
    assert compute.time_s == 137_438_953_472 / 989e12 == a.compute_time
    # 3 matrices × 4096² × 2 B = 100,663,296 B across HBM → L2 at 3.35 TB/s = 30.05 µs
    assert (hbm.kind, hbm.resource, hbm.amount, hbm.unit, hbm.title) == ("transfer", "hbm", 100_663_296, "B", "HBM → L2")
    assert hbm.time_s == 100_663_296 / 3.35e12 == a.memory_time
    assert (a.limiter, a.limiter_term) == ("compute", "compute")
    assert compute.source == hbm.source == DATASHEET


def test_collective_link_is_a_term() -> None:
    a = analyze("allreduce(n=2**28, dtype=bf16, ranks=8)", device="h100-sxm")
    link = a.term("link")
    assert link is not None and a.link is not None
    # ring: 2·(8−1)/8 × 2^28 × 2 B = 939,524,096 B per rank over NVLink 4 at 450 GB/s per direction = 2.088 ms
    assert (link.resource, link.amount, link.unit) == ("nvlink4", 939_524_096, "B")
    assert link.time_s == pytest.approx(939_524_096 / 450e9)
    assert (a.limiter, a.limiter_term) == ("link", "link")
    assert [term.name for term in a.terms][-1] == "link"


def _rate(value: float) -> Rate:
    return Rate(value, DATASHEET, "test")


def test_the_combination_rule_by_hand() -> None:
    # compute 10 s, hbm 4 s, smem 6 s (the memory side is its slowest level: 6 s), link 3 s
    terms = [
        compute_term("fp16_tc", 100, _rate(10.0)),
        transfer_term("hbm", 16, _rate(4.0)),
        transfer_term("smem", 36, _rate(6.0)),
        link_term("nvlink4", "NVLink 4", 9, _rate(3.0), 3.0),
    ]
    assert [t.time_s for t in terms] == [10.0, 4.0, 6.0, 3.0]
    full = combine(terms, Overlap(1.0))
    assert (full.full, full.none, full.bound) == (10.0, 19.0, 10.0)  # max(10, 6, 3); 10 + 6 + 3
    assert (full.limiter, full.limiter_term) == ("compute", "compute")
    half = combine(terms, Overlap(0.5))
    assert half.bound == pytest.approx(10.0 + 0.5 * (19.0 - 10.0))  # max + (1 − f)·(sum − max) = 14.5
    slow_smem = [terms[0], terms[1], transfer_term("smem", 120, _rate(6.0))]  # smem 20 s
    bounds = combine(slow_smem, Overlap(0.0))
    assert (bounds.limiter, bounds.limiter_term, bounds.bound) == ("memory", "smem", 30.0)  # 10 + max(4, 20)
    assert combine([terms[0], transfer_term("hbm", 1, None)], Overlap(1.0)).bound is None  # a term without a rate


def test_ties_name_the_same_limiter_as_before() -> None:
    even = [compute_term("fp32", 5, _rate(1.0)), transfer_term("hbm", 5, _rate(1.0))]
    assert combine(even, Overlap(1.0)).limiter == "compute"  # compute ≥ memory
    even.append(link_term("ib_ndr", "IB NDR", 5, _rate(1.0), 5.0))
    assert combine(even, Overlap(1.0)).limiter == "link"  # the link wins a tie


def test_terms_json_keys() -> None:
    data = analyze(WORKED, device="h100-sxm").to_dict()
    assert data["limiter"] == "compute" and data["limiter_term"] == "compute"
    for entry in data["terms"]:
        assert {"name", "kind", "resource", "amount", "unit", "rate", "rate_unit", "time_s", "source"} <= set(entry)
    assert [entry["name"] for entry in data["terms"]][:2] == ["compute", "hbm"]


def test_the_derivation_is_built_on_first_access_and_errors_stay_eager() -> None:
    a = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s")
    assert "steps" not in a.__dict__ and "notes" not in a.__dict__  # not built by analyze()
    assert a.steps[0].label.startswith("Work") and "steps" in a.__dict__
    assert a.steps is a.steps  # built once
    with pytest.raises(DeclarationError):
        analyze("gemm(M=0, N=1, K=1, dtype=fp16)")
    with pytest.raises(DeviceError):
        analyze("gemm(M=8, N=8, K=8, dtype=fp8)", device="v100-sxm2")
    with pytest.raises(UnitError):
        analyze(WORKED, rate="1 TB/s")
    with pytest.raises(DeclarationError):  # more than the 80 GB of memory
        analyze("add(n=2**36, dtype=fp32)", device="h100-sxm")


def test_limiter_sentence_takes_no_binary_flag() -> None:
    a = analyze(WORKED, rate="100 TFLOP/s", bandwidth="2.5 TB/s")
    assert a.limiter_sentence() == "compute-limited: the fp16_tc path needs 1.374 ms, HBM traffic 40.27 µs"
    with pytest.raises(TypeError):
        a.limiter_sentence(True)  # type: ignore[call-arg]


def test_term_is_frozen() -> None:
    term = compute_term("fp32", 1, None)
    assert isinstance(term, Term) and term.time_s is None and term.source is None
    with pytest.raises(AttributeError):
        term.amount = 2  # type: ignore[misc]


def test_resident_host_adds_a_host_term() -> None:
    from workbench.model.declare import parse

    text = "add(n=2**24, dtype=fp32, resident=host)"
    assert str(parse(text)) == text  # round-trips
    assert str(parse("add(n=2**24, dtype=fp32, resident=device)")) == "add(n=2**24, dtype=fp32)"  # the default
    a = analyze(text, device="h100-sxm", overlap="none")
    host = a.term("host")
    # 3 × 2^24 × 4 B = 201,326,592 B cross PCIe 5.0 x16 at 63 GB/s per direction = 3.1957 ms
    assert host is not None and (host.kind, host.amount, host.unit) == ("transfer", 201_326_592, "B")
    assert host.time_s == 201_326_592 / 63e9
    assert (a.limiter, a.limiter_term) == ("link", "host")
    # no overlap: compute 16,777,216 / 67e12 = 250.4 ns + memory side max(HBM 60.10 µs, smem 6.02 µs) + host 3.1957 ms
    assert a.bound_time == pytest.approx(16_777_216 / 67e12 + 201_326_592 / 3.35e12 + 201_326_592 / 63e9, rel=1e-12)
    assert a.compute_time == 16_777_216 / 67e12 and a.memory_time == 201_326_592 / 3.35e12  # unchanged by the host term
    assert "host ↔ device copies over PCIe 5.0 need 3.196 ms" in a.limiter_sentence()
    assert any("Host ↔ device time bound" in step.label for step in a.steps)
    with pytest.raises(DeviceError, match="resident=host"):
        analyze(text, device="cpu-generic")
    without_link = analyze(text, rate="100 TFLOP/s", bandwidth="2.5 TB/s")  # no device: no host link rate
    assert without_link.term("host").time_s is None and without_link.bound_time is None
    with pytest.raises(DeclarationError, match="device or host"):
        parse("add(n=4, dtype=fp32, resident=gpu)")


@pytest.mark.parametrize(
    "declaration, device",
    [
        (WORKED, "h100-sxm"),
        ("add(n=2**24, dtype=fp32, resident=host)", "a100-sxm-80gb"),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled)", "h100-sxm"),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=64, tile_n=256, tile_k=64, resident=host)", "a100-sxm-80gb"),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=naive)", "rtx-4090"),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled)", "mi300x"),
        ("allreduce(n=2**20, dtype=fp32, ranks=8)", "h100-sxm"),
    ],
)
def test_sweep_gives_every_term_analyze_gives(declaration: str, device: str) -> None:
    import numpy as np

    from workbench.model.analysis import sweep
    from workbench.model.declare import parse

    decl = parse(declaration)
    field = "n" if "n" in decl.params else "M"
    values = np.array([1024, 3000, 4097, 65536, 2**20])  # 3000 and 4097 are not whole tiles: padding
    result = sweep(decl, {field: values}, device=device, overlap=0.3)
    from workbench.errors import WorkbenchError

    for index, value in enumerate(values):
        try:
            expected = analyze(decl.replace(**{field: int(value)}), device=device, overlap=0.3)
        except WorkbenchError as exc:  # refused (beyond the device's memory): the sweep says the same at that point
            assert str(result.errors[index]) == str(exc)
            continue
        assert result.errors[index] is None
        assert [term.name for term in result.terms] == [term.name for term in expected.terms]
        for term in expected.terms:
            swept = result.term(term.name)
            assert swept is not None and swept.amount[index] == pytest.approx(term.amount, rel=1e-12)
            assert swept.time_s[index] == pytest.approx(term.time_s, rel=1e-12)
        assert result.bound_time[index] == pytest.approx(expected.bound_time, rel=1e-12)


def test_a_tile_size_sweep_is_taken_point_by_point_and_refuses_like_analyze() -> None:
    import numpy as np

    from workbench.model.analysis import sweep
    from workbench.model.declare import parse

    decl = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled)")
    result = sweep(decl, {"tile_m": np.array([32, 128, 2**17])}, device="h100-sxm")
    for index, tile in enumerate((32, 128)):
        expected = analyze(decl.replace(tile_m=tile), device="h100-sxm")
        assert result.term("smem").amount[index] == expected.term("smem").amount
    assert result.errors[2] is not None and np.isnan(result.bound_time[2])  # beyond tile_m's maximum, as analyze refuses


def test_compulsory_hbm_of_4096_cubed_fp16_stays_100_663_296_bytes() -> None:
    # A, B and C are 4096 × 4096 fp16: 4096² × 2 B = 33,554,432 B each; A and B read once, C written once:
    # 3 × 33,554,432 = 100,663,296 B — on every device, with or without interface rates, and as the HBM term.
    for device in (None, "h100-sxm", "a100-sxm-80gb", "rtx-4090", "mi300x", "cpu-generic"):
        a = analyze(WORKED, device=device)
        assert a.bytes == 100_663_296
        assert a.term("hbm").amount == 100_663_296
        assert a.physical is not None and a.physical.implementation == "compulsory"
        assert dict(a.physical.bytes_by_interface) == {"hbm": 100_663_296, "l2": 100_663_296, "smem": 100_663_296}
        for term in a.terms[1:]:
            assert term.amount == 100_663_296  # each interface carries the compulsory bytes once


def test_the_memory_side_is_the_slowest_interface_not_their_sum() -> None:
    # naive GEMM on an H100: every output element loads its row and column: the shared-memory stage is now slowest
    a = analyze("gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=naive)", device="h100-sxm", overlap="none")
    smem, hbm = a.term("smem"), a.term("hbm")
    assert smem.time_s > hbm.time_s
    assert (a.limiter, a.limiter_term) == ("memory", "smem")
    # none: compute + max(hbm, smem) — the hierarchy streams at once, so its levels do not add up
    assert a.bound_time == a.compute_time + smem.time_s
    assert a.memory_time == hbm.time_s  # memory_time stays the HBM term for today's readers
    assert "memory-limited: shared memory → registers traffic needs" in a.limiter_sentence()
