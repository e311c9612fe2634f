"""The unit scratchpad reads expressions the way people write them, and refuses wrong dimensions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import UnitError, WorkbenchError
from workbench.model.scratchpad import evaluate, format_result


@pytest.mark.parametrize(
    ("expression", "to", "expected"),
    [
        ("137.4 GFLOP / (100 TFLOP/s)", "ms", "1.374 ms"),
        ("137.4 GFLOP / 100 TFLOP/s", "ms", "1.374 ms"),  # "TFLOP/s" written without spaces is one unit
        ("100.7 MB / 2.5 TB/s", "µs", "40.28 µs"),
        ("200 GFLOP / 80 GB", "FLOP/B", "2.5 FLOP/B"),  # a number binds to its unit
        ("2**24 * 4 B", "MiB", "64 MiB"),
        ("1 GB/s", "Gbit/s", "8 Gbit/s"),
        ("96 MiB", "B", "100663296 B"),
    ],
)
def test_expressions_with_a_target_unit(expression: str, to: str, expected: str) -> None:
    assert format_result(evaluate(expression, to=to), keep_unit=True) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("200 GFLOP / (80 GB)", "2.5 FLOP/B"),
        ("137.4 GFLOP / (100 TFLOP/s)", "1.374 ms"),
        ("33554432 B * 3", "100.7 MB"),
        ("989 TFLOP/s / (3.35 TB/s)", "295.2 FLOP/B"),
        ("2 TB/s * 1 ms", "2 GB"),
        ("6 GB / 2", "3 GB"),
    ],
)
def test_results_are_simplified_to_plain_units(expression: str, expected: str) -> None:
    assert format_result(evaluate(expression)) == expected


@pytest.mark.parametrize(
    ("expression", "to", "fragment"),
    [
        ("100.7 MB / (100 TFLOP/s)", "s", "information·time/computation, s has time"),
        ("1 GB + 1", None, "cannot add 1 (dimensionless) to 1 GB (information)"),
        ("1 GB - 1 GFLOP", None, "cannot subtract"),
        ("5 GFLOPS", None, "for a rate write GFLOP/s"),
        ("3 Gbps", None, "GB/s for bytes"),
        ("1 / 0 s", None, "division by zero"),
        ("(1 GB", None, "missing ')'"),
        ("1 GB $", None, "unexpected '$'"),
        ("", None, "empty"),
        ("2 ** 1000", None, "exponent too large"),
        ("1 GB", "100 ms", "convert to a unit"),
    ],
)
def test_refusals_name_the_problem(expression: str, to: str | None, fragment: str) -> None:
    with pytest.raises(UnitError) as caught:
        evaluate(expression, to=to)
    assert fragment in str(caught.value)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789.eE+-*/^() GMkTBbFLOPsmµi%_x", max_size=40))
def test_random_expressions_raise_only_the_projects_error(text: str) -> None:
    try:
        evaluate(text)
    except WorkbenchError:
        pass


def test_datasheet_rate_spellings_become_rates_only_where_a_rate_is_expected() -> None:
    from workbench.model.analysis import as_rate
    from workbench.errors import UnitError
    from workbench.model.scratchpad import parse_quantity, rate_spelling

    assert rate_spelling("67 TFLOPS") == "67 TFLOP/s"
    assert rate_spelling("1.979 pflops") == "1.979 PFLOP/s"
    assert rate_spelling("12 MFlops") == "12 MFLOP/s"
    assert rate_spelling("768 GFLOPS + 1 kflops") == "768 GFLOP/s + 1 kFLOP/s"
    assert rate_spelling("3 TFLOP/s") == "3 TFLOP/s"  # already a rate: untouched
    assert as_rate("67 TFLOPS", "FLOP/s", "rate").value == 67e12
    assert as_rate("3.35 TB/s", "B/s", "bandwidth").value == 3.35e12
    assert as_rate("900 GB/s", "B/s", "bandwidth").value == 900e9
    with pytest.raises(UnitError, match="FLOP/s"):
        parse_quantity("67 TFLOPS")  # a general expression keeps its hint


def test_a_sub_byte_amount_is_shown_in_bits() -> None:
    assert format_result(evaluate("4 bit")) == "4 bit"
    assert format_result(evaluate("12 bit")) == "1.5 B"
