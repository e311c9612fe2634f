"""`workbench calc --json`: the `terms` and `physical` keys beside today's keys."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main

WORKED = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
TERM_KEYS = {"name", "kind", "resource", "amount", "unit", "rate", "rate_unit", "time_s", "source"}


def calc_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["calc", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_worked_example_terms_on_h100_sxm(capsys: pytest.CaptureFixture[str]) -> None:
    data = calc_json(capsys, WORKED, "--device", "h100-sxm")
    terms = {term["name"]: term for term in data["terms"]}
    assert [term["name"] for term in data["terms"]] == ["compute", "hbm", "smem"]  # no L2 rate in the catalogue
    for term in data["terms"]:
        assert TERM_KEYS <= set(term)
    # compute: 2 × 4096³ = 137,438,953,472 FLOP on fp16_tc at 989 TFLOP/s (datasheet) = 138.97 µs
    compute = terms["compute"]
    assert (compute["kind"], compute["resource"], compute["amount"], compute["unit"]) == ("compute", "fp16_tc", 137_438_953_472, "FLOP")
    assert (compute["rate"], compute["rate_unit"], compute["source"]) == (989e12, "FLOP/s", "datasheet")
    assert compute["time_s"] == pytest.approx(138.97e-6, rel=1e-4)
    # hbm: 3 × 4096² × 2 B = 100,663,296 B at 3.35 TB/s (datasheet) = 30.05 µs
    hbm = terms["hbm"]
    assert (hbm["kind"], hbm["resource"], hbm["amount"], hbm["unit"]) == ("transfer", "hbm", 100_663_296, "B")
    assert (hbm["rate"], hbm["rate_unit"], hbm["source"]) == (3.35e12, "B/s", "datasheet")
    assert hbm["time_s"] == pytest.approx(30.05e-6, rel=1e-3)
    # smem: the same 100,663,296 B (compulsory: once per interface) at 132 × 128 B × 1.98 GHz = 33.45 TB/s (derived) = 3.009 µs
    smem = terms["smem"]
    assert (smem["amount"], smem["rate"], smem["source"]) == (100_663_296, 132 * 128 * 1.98e9, "derived")
    assert smem["time_s"] == pytest.approx(3.009e-6, rel=1e-3)
    # today's keys stay, with today's figures; the limiter names its term
    assert data["bytes"] == 100_663_296 and data["flop"] == 137_438_953_472
    assert data["compute_time_s"] == compute["time_s"] and data["memory_time_s"] == hbm["time_s"]
    assert data["bound_time_s"] == compute["time_s"] and data["limiter"] == "compute" and data["limiter_term"] == "compute"


def test_physical_key_for_each_implementation(capsys: pytest.CaptureFixture[str]) -> None:
    compulsory = calc_json(capsys, WORKED, "--device", "h100-sxm")["physical"]
    # compulsory: physical = logical, each interface carries the 100,663,296 compulsory bytes once
    assert compulsory["implementation"] == "compulsory"
    assert compulsory["logical_flop"] == compulsory["physical_flop"] == 137_438_953_472
    assert compulsory["bytes_by_interface"] == {"hbm": 100_663_296, "l2": 100_663_296, "smem": 100_663_296}
    assert compulsory["assumptions"]
    tiled = calc_json(capsys, "gemm(M=4097, N=4096, K=4096, dtype=fp16, impl=tiled, tile_m=128, tile_n=128, tile_k=32)", "--device", "h100-sxm")
    # M padded to 4,224: 2 × 4224 × 4096 × 4096 = 141,733,920,768 physical FLOP against 2 × 4097 × 4096² = 137,472,507,904
    physical = tiled["physical"]
    assert (physical["logical_flop"], physical["physical_flop"]) == (137_472_507_904, 141_733_920_768)
    assert physical["quantization"]["padded"]["M"] == 4224 and physical["quantization"]["tiles"] == 33 * 32
    assert tiled["flop"] == 137_472_507_904  # the logical figure stays the headline
    compute = next(term for term in tiled["terms"] if term["name"] == "compute")
    assert compute["amount"] == 141_733_920_768  # the compute term is charged the physical FLOP
    naive = calc_json(capsys, "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=naive)", "--device", "h100-sxm")
    assert naive["physical"]["implementation"] == "naive"
    smem = next(term for term in naive["terms"] if term["name"] == "smem")
    assert smem["amount"] == naive["physical"]["bytes_by_interface"]["smem"]


def test_calc_text_shows_logical_beside_physical(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled)", "--device", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    assert "Work: logical | physical" in out and "Bytes HBM → L2: logical | physical" in out
    assert "impl=tiled:" in out  # the model's assumptions, as notes
    assert "Transfer time bound (shared memory → registers, derived)" in out
