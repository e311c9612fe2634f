"""Collectives as operations: bytes per rank over a link, the time bound, nccl-tests' algbw and busbw."""

from __future__ import annotations

import json

import pytest

from workbench.model.analysis import LINK, analyze
from workbench.cli import main
from workbench.model.declare import parse
from workbench.errors import DeclarationError

COLLECTIVE_NAMES = ("allreduce", "allgather", "reducescatter", "broadcast", "rootreduce", "alltoall", "sendrecv")


def test_allreduce_over_nvlink4_must_show() -> None:
    # S = 2**28 × 4 B = 1,073,741,824 B. Ring all-reduce: 2 × 7/8 × S = 1,879,048,192 B per rank.
    # Over NVLink 4 at 450 GB/s per direction: 1,879,048,192 / 450e9 = 4.17566 ms → 4.176 ms.
    # algbw = S / t = 1,073,741,824 / 4.17566e-3 = 257.14 GB/s; busbw = algbw × 2·7/8 = 450 GB/s.
    a = analyze("allreduce(n=2**28, dtype=fp32, ranks=8)", "h100-sxm")
    assert a.link is not None and a.link.link.key == "nvlink4"
    assert a.link.bytes_per_rank == 1_879_048_192
    assert a.bound_time == pytest.approx(1_879_048_192 / 450e9)
    assert f"{a.bound_time * 1e3:.3f}" == "4.176"
    assert a.link.algbw == pytest.approx(257.142857e9)
    assert a.link.busbw == pytest.approx(450e9)
    assert a.limiter == LINK
    text = a.derivation_text()
    assert "NVLink 4" in text and "per direction" in text and "450 GB/s" in text
    assert "= 4.176 ms" in text


def test_allreduce_over_infiniband_ndr_must_show() -> None:
    # 400 Gb/s = 50 GB/s per direction: 1,879,048,192 B / 50e9 B/s = 37.58 ms.
    a = analyze("allreduce(n=2**28, dtype=fp32, ranks=8, link=ib_ndr)", "h100-sxm")
    assert f"{a.bound_time * 1e3:.2f}" == "37.58"
    assert a.link is not None and a.link.busbw == pytest.approx(50e9)


def test_the_link_bounds_not_hbm() -> None:
    # HBM: read S + write S = 2,147,483,648 B / 3.35 TB/s = 0.641 ms, far below the link's 4.176 ms.
    a = analyze("allreduce(n=2**28, dtype=fp32, ranks=8)", "h100-sxm")
    assert a.memory_time == pytest.approx(2_147_483_648 / 3.35e12)
    assert a.bound_time > 6 * a.memory_time


def test_a_link_limited_point_on_the_roofline_never_claims_more_than_its_own_bound() -> None:
    from workbench.scenes.roofline import operation_levels

    # the data-parallel example's all-reduce: 2^27 bf16 on 8 ranks, 1.044 ms over NVLink 4; the HBM roof at its
    # intensity (0.219 FLOP/B × 3.35 TB/s) would put it at 0.73 TFLOP/s, 6.5× what the link allows
    a = analyze("allreduce(n=2**27, dtype=bf16, ranks=8)", "h100-sxm")
    assert a.limiter == LINK and a.bound_time == pytest.approx(1.044e-3, rel=1e-3)
    allowed = a.flop / a.bound_time
    assert a.attainable_rate == pytest.approx(allowed)
    points = operation_levels(a)
    assert points and all(point.rate == pytest.approx(allowed) for point in points)
    # an operation without a link keeps its place on the roofs
    gemm = analyze("gemm(M=4096, N=4096, K=4096, dtype=bf16)", "h100-sxm")
    assert gemm.attainable_rate == pytest.approx(min(gemm.compute_rate.value, gemm.intensity * gemm.bandwidth.value))


@pytest.mark.parametrize(
    ("op", "per_rank", "factor"),
    [
        # S = 1200 × 2 B = 2400 B on 3 ranks.
        ("allreduce", 3200, 4 / 3),  # 2 × 2/3 × 2400
        ("allgather", 1600, 2 / 3),  # 2/3 × 2400
        ("reducescatter", 1600, 2 / 3),
        ("alltoall", 1600, 2 / 3),
        ("broadcast", 2400, 1.0),
        ("rootreduce", 2400, 1.0),
        ("sendrecv", 2400, 1.0),
    ],
)
def test_bytes_per_rank_and_busbw_factor(op: str, per_rank: int, factor: float) -> None:
    ranks = "" if op == "sendrecv" else ", ranks=3"
    a = analyze(f"{op}(n=1200, dtype=bf16{ranks}, link=pcie4)", None)
    assert a.link is not None
    assert a.link.bytes_per_rank == per_rank
    if op != "sendrecv":
        assert float(a.link.bus_factor) == pytest.approx(factor)
    # Without a device the link time exists but the bound needs compute and memory rates.
    assert a.link.time == pytest.approx(a.link.bytes_per_rank / 31.5e9)
    assert a.bound_time is None


def test_bytes_per_rank_round_up_to_whole_bytes() -> None:
    # S = 10 × 4 B = 40 B on 3 ranks: 2 × 2/3 × 40 = 53.33 → 54 B.
    a = analyze("allreduce(n=10, dtype=fp32, ranks=3, link=nvlink4)", "h100-sxm")
    assert a.link is not None and a.link.bytes_per_rank == 54


def test_latency_term_is_off_by_default_and_stated() -> None:
    off = analyze("allreduce(n=2**20, dtype=fp32, ranks=8)", "h100-sxm")
    assert off.link is not None and off.link.time == off.link.transfer_time
    assert "14 steps × 0 s" in off.derivation_text()
    # 2(8−1) = 14 ring steps × 5 µs = 70 µs on top of the transfer.
    on = analyze("allreduce(n=2**20, dtype=fp32, ranks=8, latency_us=5)", "h100-sxm")
    assert on.link is not None
    assert on.link.time - on.link.transfer_time == pytest.approx(70e-6)
    assert on.bound_time == pytest.approx(off.bound_time + 70e-6)


def test_collectives_round_trip() -> None:
    for text in (
        "allreduce(n=2**28, dtype=fp32, ranks=8)",
        "allgather(n=1000, dtype=bf16, ranks=4, link=ib_ndr)",
        "reducescatter(n=4096, dtype=fp16, ranks=2, link=pcie5x8, latency_us=2.5)",
        "sendrecv(n=7, dtype=fp32)",
    ):
        decl = parse(text)
        assert str(decl) == text
        assert parse(str(decl)) == decl
    assert str(parse('broadcast(n=8, ranks=2, link="NVLINK4")')) == "broadcast(n=8, dtype=fp32, ranks=2, link=nvlink4)"
    assert set(COLLECTIVE_NAMES) <= {p for p in __import__("workbench.model.ops", fromlist=["REGISTRY"]).REGISTRY}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("allreduce(n=8, ranks=1)", "ranks must be an integer ≥ 2"),
        ("allreduce(n=8)", "allreduce needs ranks"),
        ("allreduce(n=8, ranks=2, link=nvlink9)", "unknown link 'nvlink9'"),
        ("allreduce(n=8, ranks=2, link=3)", "link must be a name"),
        ("allreduce(n=8, ranks=2, latency_us=-1)", "latency_us must be between 0"),
    ],
)
def test_bad_collectives_are_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(DeclarationError, match=message):
        parse(text)


def test_no_link_on_the_device_says_so() -> None:
    from workbench.errors import DeviceError

    with pytest.raises(DeviceError, match="names no link"):
        analyze("allreduce(n=8, ranks=2)", "cpu-generic")


def test_calc_json_adds_link_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "allreduce(n=2**28, dtype=fp32, ranks=8)", "--device", "h100-sxm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["link"] == "nvlink4"
    assert data["bytes_per_rank"] == 1_879_048_192
    assert data["algbw_byte_per_s"] == pytest.approx(257.142857e9)
    assert data["busbw_byte_per_s"] == pytest.approx(450e9)
    assert data["limiter"] == "link"
    # A plain operation's JSON has no link keys.
    assert main(["calc", "add(n=2**20, dtype=fp32)", "--device", "h100-sxm", "--json"]) == 0
    assert "link" not in json.loads(capsys.readouterr().out)


def test_calc_bad_link_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "allreduce(n=8, ranks=2, link=ib_nd)"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "did you mean ib_ndr" in err


def test_measure_refuses_a_collective_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # Measured links (CuPy copies, NCCL through cupy.cuda.nccl) are a later part of issue 13.
    assert main(["measure", "allreduce(n=1024, dtype=fp32, ranks=8)", "--backend", "numpy"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no measured kernel for 'allreduce'" in err


def test_replace_keeps_the_default_link() -> None:
    # Declaration.replace rebuilds from every field, the empty default link included.
    decl = parse("allreduce(n=2**20, dtype=bf16, ranks=8)")
    smaller = decl.replace(n=2**10)
    assert str(smaller) == "allreduce(n=1024, dtype=bf16, ranks=8)"
    assert smaller["link"] == ""
