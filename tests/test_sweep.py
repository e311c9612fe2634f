"""sweep() is analyze() point by point: the same figures, and the same refusals, for any operation and field."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.analysis import analyze, sweep
from workbench.declare import Declaration, parse
from workbench.errors import DeclarationError, WorkbenchError
from workbench.ops import REGISTRY

DEVICES = ["h100-sxm", "h200", "rtx-4090", "cpu-generic"]


def analyze_each(decl: Declaration, fields: dict[str, list[Any]], index: int, **options: Any) -> Any:
    """analyze() of one point, or the error it raises (making the declaration included)."""
    try:
        return analyze(decl.replace(**{name: values[index] for name, values in fields.items()}), **options)
    except WorkbenchError as exc:
        return exc


def assert_sweep_is_analyze_per_point(decl: Declaration, fields: dict[str, list[Any]], **options: Any) -> None:
    result = sweep(decl, {name: np.array(values, dtype=object) for name, values in fields.items()}, **options)
    length = len(next(iter(fields.values())))
    assert len(result.errors) == length
    for index in range(length):
        expected = analyze_each(decl, fields, index, **options)
        if isinstance(expected, WorkbenchError):
            error = result.errors[index]
            assert type(error) is type(expected) and str(error) == str(expected), (index, error, expected)
            assert math.isnan(result.flop[index]) and math.isnan(result.bound_time[index])
            continue
        assert result.errors[index] is None, (index, result.errors[index])
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
    value = st.one_of(st.integers(-2, 300), st.integers(1, 2**40), st.sampled_from([2**53 + 1, 2**62, 2**63]))
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
