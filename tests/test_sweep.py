"""sweep() is analyze() point by point: the same figures, and the same refusals, for any operation and field."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.model.analysis import analyze, sweep
from workbench.model.declare import Declaration, parse
from workbench.errors import DeclarationError, WorkbenchError
from workbench.model.ops import REGISTRY

DEVICES = ["h100-sxm", "h200", "rtx-4090", "cpu-generic"]


def analyze_each(decl: Declaration, fields: dict[str, list[Any]], index: int, **options: Any) -> Any:
    """analyze() of one point, or the error it raises (making the declaration included)."""
    try:
        return analyze(decl.replace(**{name: values[index] for name, values in fields.items()}), **options)
    except WorkbenchError as exc:
        return exc


def footprint_of(decl: Declaration, fields: dict[str, list[Any]], index: int) -> int | None:
    """The bytes resident at once at one point, None where the declaration itself is refused."""
    try:
        return decl.replace(**{name: values[index] for name, values in fields.items()}).workload().footprint_bytes
    except WorkbenchError:
        return None


def assert_sweep_is_analyze_per_point(decl: Declaration, fields: dict[str, list[Any]], **options: Any) -> None:
    result = sweep(decl, {name: np.array(values, dtype=object) for name, values in fields.items()}, **options)
    length = len(next(iter(fields.values())))
    assert len(result.errors) == length
    for index in range(length):
        expected = analyze_each(decl, fields, index, **options)
        if isinstance(expected, WorkbenchError):
            error = result.errors[index]
            assert type(error) is type(expected) and str(error) == str(expected), (index, error, expected)
            assert not result.valid[index] and result.limiter[index] is None, index
            assert math.isnan(result.flop[index]) and math.isnan(result.bound_time[index])
            for term in result.terms:
                assert math.isnan(term.amount[index]) and math.isnan(term.time_s[index]), (index, term.name)
            footprint = footprint_of(decl, fields, index)
            if footprint is not None:  # a size refused for its memory is still shaded by its footprint
                assert result.footprint[index] == pytest.approx(float(footprint), rel=1e-12), index
            continue
        assert result.errors[index] is None, (index, result.errors[index])
        assert result.valid[index] and result.limiter[index] == expected.limiter, (index, result.limiter[index], expected.limiter)
        assert result.footprint[index] == pytest.approx(float(expected.basis.workload.footprint_bytes), rel=1e-12), index
        for got, want in (
            (result.flop[index], expected.flop),
            (result.bytes[index], expected.bytes),
            (result.compute_time[index], expected.compute_time),
            (result.memory_time[index], expected.memory_time),
            (result.bound_time[index], expected.bound_time),
            (result.intensity[index], expected.intensity),
        ):
            assert got == pytest.approx(float(want), rel=1e-12), (index, got, want)
        for term in expected.terms:  # every term analyze() gives, with its amount and time
            swept = result.term(term.name)
            assert swept is not None, (index, term.name)
            assert swept.amount[index] == pytest.approx(float(term.amount), rel=1e-12), (index, term.name)
            assert swept.time_s[index] == pytest.approx(term.time_s, rel=1e-12), (index, term.name)


@st.composite
def sweeps(draw: st.DrawFn) -> tuple[Declaration, dict[str, list[int]], dict[str, Any]]:
    spec = draw(st.sampled_from(list(REGISTRY.values())))
    decl = parse(draw(st.sampled_from(spec.examples)))
    dims = [name for name, value in decl.fields if isinstance(value, int) and not isinstance(value, bool)]
    choices = [(name,) for name in dims] + ([spec.tied_fields] if spec.tied_fields else [])
    names = draw(st.sampled_from(choices))
    # Mostly small sizes, some at or below zero, some far beyond any device's memory; elementwise's
    # inputs and outputs count tensor objects, so they stay small (parse builds one object per array).
    # (2^17..2^36 on its own: hypothesis draws small integers from a wide range far more often than large ones,
    # and sizes beyond memory are refused from the arrays, a path of their own.)
    value = st.one_of(st.integers(-2, 300), st.integers(1, 2**40), st.integers(2**17, 2**36),
                      st.sampled_from([2**53 + 1, 2**62, 2**63]))
    if spec.name == "elementwise" and set(names) & {"inputs", "outputs"}:
        value = st.integers(-2, 300)
    values = draw(st.lists(value, min_size=1, max_size=6))
    options = {
        "device": draw(st.sampled_from(DEVICES)),
        "convention": draw(st.sampled_from(["fma2", "mac"])),
        "overlap": draw(st.sampled_from(["full", "none", 0.25])),
    }
    if draw(st.booleans()):
        options["rate"], options["bandwidth"] = "50 TFLOP/s", "2 TB/s"
    if draw(st.integers(0, 3)) == 0:  # tensors in host memory: a host ↔ device term joins the others
        decl = decl.replace(resident="host")
    return decl, {name: values for name in names}, options


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sweeps())
def test_a_sweep_equals_analyze_of_each_point_errors_included(case: tuple[Declaration, dict[str, list[int]], dict[str, Any]]) -> None:
    decl, fields, options = case
    assert_sweep_is_analyze_per_point(decl, fields, **options)


def test_elementwise_outputs_and_flop_per_element_sweep_like_analyze() -> None:
    # Was a TypeError / ValueError: the builder counts tensors with range(outputs).
    decl = parse("elementwise(n=2**20, inputs=3, outputs=1, flop_per_element=4, dtype=fp16)")
    for field in ("outputs", "inputs", "flop_per_element"):
        assert_sweep_is_analyze_per_point(decl, {field: [0, 1, 2, 7, 64]}, device="h100-sxm")
    result = sweep(decl, {"outputs": np.array([1, 2, 4])}, device="h100-sxm")
    # n * 2 B per array: 3 reads + 1, 2, 4 writes → 4, 5, 7 arrays of 2,097,152 B
    assert list(result.bytes) == [4 * 2_097_152, 5 * 2_097_152, 7 * 2_097_152]
    none = sweep(decl, {"flop_per_element": np.array([0, 4])}, device="h100-sxm")
    assert list(none.flop) == [0, 4 * 2**20] and none.errors == (None, None)


def test_a_conv2d_filter_larger_than_its_image_is_refused_not_negative() -> None:
    decl = parse("conv2d(N=8, C=64, H=56, W=56, K=64, R=3, S=3, pad=1, dtype=fp16)")
    result = sweep(decl, {"R": np.array([3, 58, 64, 1024])}, device="h100-sxm")
    # R=58 still fits 56 + 2·1 = 58 pixels (P = 1); R=64 and 1024 leave no output positions
    assert list(result.valid) == [True, True, False, False]
    assert np.all(result.flop[result.valid] > 0) and np.all(result.bytes[result.valid] > 0)
    assert isinstance(result.errors[2], DeclarationError) and "no output positions" in str(result.errors[2])
    assert_sweep_is_analyze_per_point(decl, {"R": [3, 58, 64, 1024]}, device="h100-sxm")


def test_conv2d_groups_that_do_not_divide_the_channels_are_refused() -> None:
    decl = parse("conv2d(N=8, C=64, H=56, W=56, K=64, R=3, S=3, pad=1, dtype=fp16)")
    result = sweep(decl, {"groups": np.array([1, 2, 3, 4])}, device="h100-sxm")
    assert list(result.valid) == [True, True, False, True]
    assert str(result.errors[2]) == "C=64 is not divisible by groups=3"
    # groups=2: 8·64·56·56·(64/2)·3·3 multiply-adds = 462,422,016 → 924,844,032 FLOP
    assert result.flop[1] == 924_844_032


def test_sizes_beyond_the_device_memory_are_refused_like_analyze() -> None:
    decl = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    sizes = 2 ** np.arange(10, 21)  # M=N=K=2^20: 3 · 2^40 · 2 B = 6.6 TB, beyond the 80 GB of an H100
    result = sweep(decl, {"M": sizes, "N": sizes, "K": sizes}, device="h100-sxm")
    assert result.valid[0] and not result.valid[-1]
    assert str(result.errors[-1]).startswith("the tensors need 6.597 TB, more than the 80 GB of ")
    assert_sweep_is_analyze_per_point(decl, {"M": [2**16, 2**17, 2**18]}, device="h100-sxm")


def test_a_sweep_without_rates_or_with_a_bad_field_is_refused_as_a_whole() -> None:
    with pytest.raises(WorkbenchError, match="needs a compute rate and a bandwidth"):
        sweep("add(n=1024)", {"n": np.array([1, 2])})
    with pytest.raises(DeclarationError, match="no field 'm'"):
        sweep("add(n=1024)", {"m": np.array([1, 2])}, device="h100-sxm")


def test_a_collective_sweep_carries_its_link_term() -> None:
    # allreduce over NVLink 4 on an H100 SXM: the link term (2·7/8·S per rank at 450 GB/s) is far longer than
    # the HBM term, so the swept bound must be the link time analyze() gives, not max(compute, memory).
    decl = parse("allreduce(n=2**28, dtype=fp32, ranks=8)")
    assert_sweep_is_analyze_per_point(decl, {"n": [2**20, 2**28]}, device="h100-sxm")
    assert_sweep_is_analyze_per_point(decl, {"ranks": [2, 8, 1]}, device="h100-sxm")


def test_the_edge_of_device_memory_is_where_analyze_puts_it() -> None:
    # fp16 M=N=K=s holds 6·s² bytes: s = 115,470 fits the H100's 80 GB (79,999,925,400 B), 115,471 does not
    # (80,001,311,046 B). Sizes beyond memory are refused from the arrays alone; each must be a size analyze()
    # refuses, and the error read back must be analyze()'s own. 2^30 also has a tensor over 1 EiB (its own error).
    decl = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    sizes = [115_000, 115_469, 115_470, 115_471, 116_000, 2**20, 2**30]
    result = sweep(decl, {"M": np.array(sizes), "N": np.array(sizes), "K": np.array(sizes)}, device="h100-sxm")
    assert list(result.valid) == [True, True, True, False, False, False, False]
    assert str(result.errors[3]) == "the tensors need 80 GB, more than the 80 GB of NVIDIA H100 SXM memory"
    assert "over 1 EiB" in str(result.errors[6])
    assert result.first_error is result.errors[3]
    assert result.footprint[3] == 6 * 115_471**2 and result.footprint[5] == 6 * 2**40
    assert_sweep_is_analyze_per_point(decl, {"M": sizes, "N": sizes, "K": sizes}, device="h100-sxm")
    assert_sweep_is_analyze_per_point(decl, {"K": sizes}, device="h100-sxm", overlap="none")


def test_the_ten_thousand_size_sweep_of_the_view_is_analyze_at_every_size_sampled() -> None:
    # What the bound-vs-size view asks for (10,000 exponents, M=N=K; from 2^4 so the limiter changes near s = 900):
    # every 23rd size, and both neighbours of the limiter change and of the first size beyond memory, against
    # analyze() at that size.
    decl = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    sizes = np.unique(np.round(2.0 ** np.linspace(4, 30, 10_000)))
    result = sweep(decl, {"M": sizes, "N": sizes, "K": sizes}, device="h100-sxm")
    assert len(sizes) == 8_571 and int(result.valid.sum()) == 3_501  # whole sizes; those up to 115,470 fit in 80 GB
    (change,) = result.limiter_changes()  # memory- then compute-limited; no change into the refused sizes
    assert (result.limiter[change - 1], result.limiter[change]) == ("memory", "compute")
    beyond = result.first_beyond(80e9)
    assert beyond is not None and result.valid[beyond - 1] and not result.valid[beyond]
    picked = sorted({*range(0, len(sizes), 23), change - 1, change, beyond - 1, beyond, len(sizes) - 1})
    values = [int(sizes[i]) for i in picked]
    assert_sweep_is_analyze_per_point(decl, {"M": values, "N": values, "K": values}, device="h100-sxm")
    sampled = sweep(decl, {"M": np.array(values), "N": np.array(values), "K": np.array(values)}, device="h100-sxm")
    for position, index in enumerate(picked):  # the 10,000-size sweep holds the same figures as the sample
        assert result.bound_time[index] == sampled.bound_time[position] or not result.valid[index]
        assert result.limiter[index] == sampled.limiter[position]


def test_a_tie_between_compute_and_memory_names_the_limiter_analyze_names() -> None:
    # fp16 M=N=K=75 does 843,750 FLOP over 33,750 B: at 50 TFLOP/s and 2 TB/s both take 16.875 ns exactly.
    # analyze() gives a tie to compute (link, host, compute, then memory); the sweep must too, point by point.
    decl = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    sizes = [74, 75, 76]
    options: dict[str, Any] = {"device": "h100-sxm", "rate": "50 TFLOP/s", "bandwidth": "2 TB/s"}
    tie = analyze(decl.replace(M=75, N=75, K=75), **options)
    assert tie.compute_time == tie.memory_time and tie.limiter == "compute"
    result = sweep(decl, {name: np.array(sizes) for name in ("M", "N", "K")}, **options)
    assert list(result.limiter) == ["memory", "compute", "compute"]
    assert result.limiter_changes() == [1]
    assert_sweep_is_analyze_per_point(decl, {name: sizes for name in ("M", "N", "K")}, **options)


def test_refusals_read_back_as_a_sequence_of_analyze_errors() -> None:
    decl = parse("add(n=1024, dtype=fp32)")
    sizes = np.array([2**10, 2**40, 2**12])  # 2^40 fp32 elements × 3 arrays: 13 TB, beyond 80 GB
    result = sweep(decl, {"n": sizes}, device="h100-sxm")
    assert len(result.errors) == 3 and result.errors[0] is None and result.errors[-1] is None
    assert result.errors == (None, result.errors[1], None) and result.errors[1] is result.errors[-2]
    assert result.errors[0:2] == (None, result.errors[1])
    assert list(result.valid) == [True, False, True]
    with pytest.raises(DeclarationError) as refused:
        analyze(decl.replace(n=2**40), device="h100-sxm")
    assert str(result.errors[1]) == str(refused.value)
    with pytest.raises(IndexError):
        result.errors[3]


def test_a_refusal_read_later_is_of_the_size_swept_even_if_the_caller_reuses_its_array() -> None:
    sizes = np.array([2**10, 2**40])
    result = sweep("add(n=1024, dtype=fp32)", {"n": sizes}, device="h100-sxm")
    sizes[1] = 2**41  # the caller's array changes after the sweep; the refusal is still that of n = 2^40
    assert str(result.errors[1]).startswith("the tensors need 13.19 TB, more than the 80 GB")


def test_the_limiter_crossover_is_exact_not_a_point_between_two_samples() -> None:
    from workbench.model.analysis import analyze
    from workbench.model.analysis.sweep import limiter_crossover

    # a square fp16 GEMM on the H100 SXM: n / 3 FLOP per byte against the ridge 989 / 3.35 = 295.2
    fields = ("M", "N", "K")
    at = limiter_crossover("gemm(M=8, N=8, K=8, dtype=fp16)", fields, 512, 1024, device="h100-sxm")
    assert at == 886
    limiters = [analyze(f"gemm(M={n}, N={n}, K={n}, dtype=fp16)", "h100-sxm").limiter for n in (885, 886)]
    assert limiters == ["memory", "compute"]
    # no change between the two sizes: nothing to find
    assert limiter_crossover("gemm(M=8, N=8, K=8, dtype=fp16)", fields, 1024, 2048, device="h100-sxm") is None
