"""The unit registry keeps dimensions apart; formatting keeps units visible."""

from __future__ import annotations

import pint
import pytest

from workbench.errors import UnitError
from workbench.model.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_int,
    format_number,
    format_time,
    quantity,
    registry,
    require_dimension,
)


def test_registry_is_built_from_the_project_file_not_pint_defaults() -> None:
    reg = registry()
    assert "FLOP" in reg and "byte" in reg and "bit" in reg
    # pint's default file defines meters; ours does not.
    assert "meter" not in reg


def test_adding_a_plain_number_to_gigabytes_raises() -> None:
    with pytest.raises(pint.DimensionalityError):
        quantity(1, "GB") + 1


def test_bytes_per_flop_rate_is_not_a_time() -> None:
    wrong = quantity(100.7, "MB") / quantity(100, "TFLOP/s")
    with pytest.raises(UnitError, match="information·time/computation"):
        require_dimension(wrong, "s", "time")


def test_decimal_and_binary_prefixes_differ() -> None:
    # 1 GB = 10^9 B; 1 GiB = 2^30 B = 1,073,741,824 B
    assert quantity(1, "GB").to("B").magnitude == 1e9
    assert quantity(1, "GiB").to("B").magnitude == 2**30
    # a byte is 8 bits: 1 GB/s = 8 Gbit/s
    assert quantity(1, "GB/s").to("Gbit/s").magnitude == pytest.approx(8)


def test_flop_over_flop_rate_is_a_time() -> None:
    # 137.4 GFLOP / 100 TFLOP/s = 1.374e-3 s
    assert (quantity(137.4, "GFLOP") / quantity(100, "TFLOP/s")).to("ms").magnitude == pytest.approx(1.374)


@pytest.mark.parametrize(
    ("value", "binary", "expected"),
    [
        (100_663_296, False, "100.7 MB"),
        (100_663_296, True, "96 MiB"),  # 100,663,296 / 2^20 = 96
        (33_554_432, False, "33.55 MB"),
        (201_326_592, True, "192 MiB"),
        (0, False, "0 B"),
        (512, True, "512 B"),
    ],
)
def test_format_bytes(value: int, binary: bool, expected: str) -> None:
    assert format_bytes(value, binary) == expected


def test_format_helpers_carry_units_and_significant_figures() -> None:
    assert format_flop(137_438_953_472) == "137.4 GFLOP"
    assert format_time(137_438_953_472 / 100e12) == "1.374 ms"
    assert format_time(100_663_296 / 2.5e12) == "40.27 µs"
    assert format_bandwidth(2.5e12) == "2.5 TB/s"
    assert format_bandwidth(2**30, binary=True) == "1 GiB/s"
    assert format_int(137_438_953_472) == "137,438,953,472"
    assert format_number(1 / 12) == "0.08333"
    # rounding that carries into the next prefix moves the prefix
    assert format_time(0.99999e-3) == "1 ms"


def test_less_than_a_byte_reads_in_bits_not_millibytes() -> None:
    """Half a byte is 4 bit; "500 mB" names no amount of storage anyone means."""
    from workbench.model.units import format_bandwidth

    assert format_bytes(0.5) == "4 bit"
    assert format_bytes(0.5, binary=True) == "4 bit"
    assert format_bytes(0.125) == "1 bit"
    assert format_bytes(1.5) == "1.5 B"  # a byte and more keeps bytes
    assert format_bandwidth(0.25) == "2 bit/s"
    assert format_bytes(0) == "0 B"


def test_plain_figures_read_as_the_registry_reads_them() -> None:
    """The start-up fast path (units.plain_figure) gives the registry's value for every catalogue figure it reads,
    and leaves anything else to the registry."""
    from workbench.model.devices.catalogue import catalogue_data
    from workbench.model.scratchpad import parse_quantity
    from workbench.model.units import plain_figure, require_dimension

    units = {"FLOP/s", "B/s", "Hz", "B"}
    read = 0

    def walk(value: object) -> None:
        nonlocal read
        if isinstance(value, dict):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, str):
            for unit in units:
                fast = plain_figure(value, unit)
                if fast is not None:
                    read += 1
                    assert fast == pytest.approx(require_dimension(parse_quantity(value), unit, value), rel=1e-12), value

    walk(catalogue_data())
    assert read > 100  # the catalogue's figures do take the fast path
    assert plain_figure("80 GiB", "B") == 80 * 1024**3
    assert plain_figure("1.5 TB/s", "B/s") == 1.5e12
    assert plain_figure("400 Gb/s", "B/s") == 50e9
    for other in ("989 TFLOPS", "2 GFLOP/s + 1 GFLOP/s", "1e3 mFLOP/s", "TFLOP/s", "5 µs", "3.35 TB/s"):
        assert plain_figure(other, "FLOP/s") is None, other  # the registry reads (or refuses) these
