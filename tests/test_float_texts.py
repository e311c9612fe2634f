"""float_texts writes floats exactly as repr does, NumPy's way where that is exact (profilers/float_texts.py)."""

from __future__ import annotations

import random
import struct
from array import array

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.profilers.float_texts import _short_decimals, float_texts


def _reprs(values):
    return [float.__repr__(value) for value in values]


def _decimals(rng: random.Random, count: int) -> list[float]:
    """n / 10**k and -n / 10**k for n of 1 to 17 digits and k from 0 to 25: every layout repr has."""
    values = []
    for _ in range(count):
        size = rng.randint(1, 17)
        n, k = rng.randint(10 ** (size - 1), 10**size - 1), rng.randint(0, 25)
        values += [n / 10**k, -n / 10**k]
    return values


def test_decimals_of_every_length_and_scale_read_as_repr_writes_them():
    values = _decimals(random.Random(11), 40_000)
    assert float_texts(values) == _reprs(values)


def test_any_bit_pattern_reads_as_repr_writes_it():
    rng = random.Random(12)
    values = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(20_000)]
    assert float_texts(values) == _reprs(values)


def test_the_edges_of_each_layout():
    """Around each power of ten (where repr turns from fixed notation to an exponent at 1e-05 and 1e+16, and
    where 14 digits become 15), whole numbers, zeros of both signs, NaN, the infinities, the extremes."""
    values = []
    for exponent in range(-30, 31):
        power = 10.0**exponent
        values += [power, -power, float(np.nextafter(power, 0)), float(np.nextafter(power, np.inf)), power * 9.99999999999999]
    values += [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]
    values += [float(n) for n in range(-200, 200)] + [99999999999999.0, 99999999999999.5, 1e14, 2.0**53, 1e-9, 9.99999999999999e-10]
    assert float_texts(values) == _reprs(values)


def test_a_profile_s_times_take_the_numpy_way():
    """Times in nanoseconds over 10**9 and percentages of one decimal are short decimals: written without
    repr (else the speed-up would be gone without any test failing)."""
    times = np.array([n / 1e9 for n in range(1, 10**12, 10**12 // 5000)] + [n / 10 for n in range(1, 1000)])
    whole, _ = _short_decimals(times)
    assert (whole > 0).all()
    assert float_texts(times) == _reprs(times.tolist())


def test_arrays_lists_and_iterators_alike():
    values = _decimals(random.Random(13), 500)
    expected = _reprs(values)
    assert float_texts(array("d", values)) == expected
    assert float_texts(iter(values)) == expected
    assert float_texts(values[:10]) == expected[:10]  # a few: repr itself
    assert float_texts([]) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=64, max_size=400))
def test_any_floats_read_as_repr_writes_them(values):
    assert float_texts(values) == _reprs(values)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-(10**15), max_value=10**15), min_size=64, max_size=300), st.integers(min_value=0, max_value=24))
def test_any_scaled_integers_read_as_repr_writes_them(numbers, places):
    values = [n / 10**places for n in numbers]
    assert float_texts(values) == _reprs(values)
