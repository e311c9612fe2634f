"""Sweep planning in the core: the fields one can sweep, the declaration at each size, runs on a sweep.

The Sweep view and the Measure tab both ask these functions (no Qt here).
"""

from __future__ import annotations

import pytest

from workbench.model.analysis import analyze
from workbench.model.declare import parse
from workbench.errors import DeclarationError, WorkbenchError
from workbench.measure.sweep import MAX_SWEEP_RUNS, powers_of_two, swept_size, sweep_choices, sweep_declarations


def test_a_square_gemm_offers_its_tied_sizes_first_then_each_size() -> None:
    choices = sweep_choices(analyze("gemm(M=4096, N=4096, K=4096, dtype=fp16)"))
    assert choices == [("M", "N", "K"), ("M",), ("N",), ("K",), ("batch",)]


def test_fields_that_are_not_sizes_are_not_offered() -> None:
    choices = sweep_choices(analyze("gemm(M=64, N=64, K=64, batch=2, dtype=fp16, beta=1)"))
    assert ("beta",) not in choices and ("dtype",) not in choices
    assert ("batch",) in choices


def test_tied_fields_all_take_each_size() -> None:
    sizes = powers_of_two(8, 10)
    declarations = sweep_declarations("gemm(M=4096, N=4096, K=4096, dtype=fp16)", ("M", "N", "K"), sizes)
    assert [str(d) for d in declarations] == [f"gemm(M={n}, N={n}, K={n}, dtype=fp16)" for n in (256, 512, 1024)]


def test_each_size_is_validated_as_a_typed_declaration() -> None:
    decl = parse("conv2d(N=8, C=64, H=56, W=56, K=64, R=3, S=3, pad=1, dtype=fp16)")
    with pytest.raises(DeclarationError):
        sweep_declarations(decl, "R", [64, 1024])  # a filter larger than the padded image


def test_no_field_or_an_unknown_field_is_refused() -> None:
    with pytest.raises(WorkbenchError, match="no size field"):
        sweep_declarations("add(n=1024, dtype=fp16)", (), [1024])
    with pytest.raises(DeclarationError, match="no field 'm'"):
        sweep_declarations("add(n=1024, dtype=fp16)", "m", [1024])


def test_a_backward_or_too_long_range_is_refused() -> None:
    assert powers_of_two(10, 12) == [1024, 2048, 4096]
    with pytest.raises(WorkbenchError, match="starts above its end"):
        powers_of_two(12, 10)
    with pytest.raises(WorkbenchError, match=f"at most {MAX_SWEEP_RUNS} sizes"):
        powers_of_two(0, MAX_SWEEP_RUNS)


def test_a_run_lies_on_a_sweep_only_when_the_held_fields_agree() -> None:
    swept = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    fields = ("M", "N", "K")
    assert swept_size(parse("gemm(M=512, N=512, K=512, dtype=fp16)"), swept, fields) == 512
    assert swept_size(parse("gemm(M=512, N=256, K=512, dtype=fp16)"), swept, fields) is None  # not one size
    assert swept_size(parse("gemm(M=512, N=512, K=512, dtype=bf16)"), swept, fields) is None  # a held field differs
    assert swept_size(parse("add(n=512, dtype=fp16)"), swept, fields) is None
    assert swept_size(None, swept, fields) is None
