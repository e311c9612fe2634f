"""The formatters' faster code gives the very text the straightforward code gave.

`format_number` formats floats through %-formatting, `format_si` computes
each text once with precomputed prefixes and powers, and `format_times`
does format_time's steps inline for long columns. The reference functions
below are the formatters as they were before those changes, kept verbatim;
random floats (and values an ulp around the prefix and rounding boundaries)
must format byte for byte alike.
"""

from __future__ import annotations

import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.model.units import format_number, format_si, format_time, format_times

_SI_PREFIXES = ((-12, "p"), (-9, "n"), (-6, "µ"), (-3, "m"), (0, ""), (3, "k"), (6, "M"), (9, "G"), (12, "T"), (15, "P"), (18, "E"))


def reference_number(x: float, digits: int = 4) -> str:
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if not 1e-9 <= abs(x) < 1e21:  # outside this, powers of ten (5e-324 is not 320 digits)
        mantissa, _, exponent = f"{x:.{max(digits - 1, 0)}e}".partition("e")
        return f"{mantissa.rstrip('0').rstrip('.') if '.' in mantissa else mantissa}e{int(exponent)}"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(digits - 1 - magnitude, 0)
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def reference_si(value: float, unit: str, digits: int = 4, max_exponent: int = 18) -> str:
    if value == 0 or not math.isfinite(value):
        return f"{reference_number(value)} {unit}"
    exponent = math.floor(math.log10(abs(value)) / 3) * 3
    exponent = min(max(exponent, -12), max_exponent)
    mantissa = value / 10**exponent
    if abs(float(reference_number(mantissa, digits))) >= 1000 and exponent + 3 <= max_exponent:
        exponent += 3
        mantissa = value / 10**exponent
    prefix = dict(_SI_PREFIXES)[exponent]
    return f"{reference_number(mantissa, digits)} {prefix}{unit}"


def near_boundaries() -> st.SearchStrategy[float]:
    """Values within a few ulps of 10**k and of 999.95 × 10**k, where prefixes and roundings change."""
    scale = st.integers(min_value=-16, max_value=22)
    base = st.sampled_from([1.0, 9.9995, 99.995, 999.95, 999.5, 1000.0, 10.0, 100.0])
    steps = st.integers(min_value=-4, max_value=4)

    def build(b: float, k: int, n: int) -> float:
        value = b * 10.0**k
        for _ in range(abs(n)):
            value = math.nextafter(value, math.inf if n > 0 else -math.inf)
        return value

    return st.builds(build, base, scale, steps)


floats = st.floats(allow_nan=True, allow_infinity=True) | near_boundaries() | st.floats(min_value=1e-13, max_value=1e4)


@settings(max_examples=1000, deadline=None)
@given(floats, st.integers(min_value=1, max_value=6))
@example(999.95e-6, 4)
@example(9.9995e-7, 4)
@example(-1.5e-9, 4)
@example(1e-13, 4)
def test_format_number_and_format_si_as_before(value: float, digits: int) -> None:
    assert format_number(value, digits) == reference_number(value, digits)
    assert format_si(value, "B", digits) == reference_si(value, "B", digits)
    assert format_time(value, digits) == reference_si(value, "s", digits, max_exponent=0)


@settings(max_examples=150, deadline=None)
@given(st.lists(floats | st.none(), max_size=50), st.integers(min_value=1, max_value=6))
def test_format_times_is_format_time_of_each(values: list[float | None], digits: int) -> None:
    expected = ["–" if value is None else reference_si(value, "s", digits, max_exponent=0) for value in values]
    assert format_times(values, "–", digits) == expected


def test_numbers_that_are_not_floats_keep_their_own_formatting() -> None:
    from decimal import Decimal
    from fractions import Fraction

    assert format_number(1365) == reference_number(1365) == "1365"
    assert format_number(Decimal("0.1")) == reference_number(Decimal("0.1")) == "0.1"
    assert format_times([3, Fraction(1, 3)], "–") == [reference_si(3, "s", 4, 0), reference_si(Fraction(1, 3), "s", 4, 0)]
