"""The one unit registry and the formatting of figures with their units.

The registry is built from the project's own definitions file
(`resources/units.txt`), not pint's default file: bits and bytes are
[information], FLOP is [computation], so adding a byte count to a FLOP count,
or reading bytes per FLOP/s as a time, raises.

pint costs tens of microseconds per scalar operation, so hot paths compute on
plain ints and floats and use the `format_*` helpers below, which never touch
pint; quantities are built at the boundary (user input, the scratchpad).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Iterable

from workbench.errors import UnitError

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pint

DEFINITIONS_FILE = "units.txt"

_SI_PREFIXES: tuple[tuple[int, str], ...] = (
    (-12, "p"),
    (-9, "n"),
    (-6, "µ"),
    (-3, "m"),
    (0, ""),
    (3, "k"),
    (6, "M"),
    (9, "G"),
    (12, "T"),
    (15, "P"),
    (18, "E"),
)
_BINARY_PREFIXES: tuple[str, ...] = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_SI_POWERS: dict[str, int] = {symbol: power for power, symbol in _SI_PREFIXES}




def si_prefix_scale(symbol: str) -> Fraction:
    """An SI prefix's factor, exactly ('k' → 1000, 'µ' → 1/1000000, '' → 1), for the prefixes units.txt defines."""
    power = _SI_POWERS[symbol]
    return Fraction(10) ** power


def binary_prefix_scale(symbol: str) -> int:
    """A binary prefix's factor ('Ki' → 1024, 'Gi' → 1024**3, '' → 1)."""
    return 1024 ** _BINARY_PREFIXES.index(symbol)


_PLAIN_FIGURE = re.compile(
    r"\s*(?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(?P<prefix>[kMGTPE]i|[kMGTPE]|)(?P<unit>\S+)\s*"
)


def plain_figure(text: str, unit: str) -> float | None:
    """The value of a figure written plainly as "<number> <prefix><unit>" ("989 TFLOP/s", "80 GiB") in `unit`;
    None for anything else, which then goes through the registry (`scratchpad.parse_quantity`).

    Start-up reads the device catalogue before the window's first paint; its figures are all this simple, and
    loading pint costs half a second. The prefixes are this module's (the ones units.txt defines);
    tests/test_units.py checks every catalogue figure gives the registry's value.
    """
    match = _PLAIN_FIGURE.fullmatch(text)
    if match is None:
        return None
    written = match["unit"]
    per_unit = 1.0
    if written != unit:
        if not (unit.startswith("B") and written == "b" + unit[1:]):  # network line rates are in bits ("400 Gb/s")
            return None
        per_unit = 1 / 8
    prefix = match["prefix"]
    scale = binary_prefix_scale(prefix) if prefix.endswith("i") else si_prefix_scale(prefix)
    return float(match["number"]) * scale * per_unit


@lru_cache(maxsize=1)
def registry() -> "pint.UnitRegistry":
    """Return the application's one registry, built once from the project's definitions."""
    import pint

    path = resources.files("workbench.resources").joinpath(DEFINITIONS_FILE)
    with resources.as_file(path) as definitions:
        reg: pint.UnitRegistry = pint.UnitRegistry(str(definitions), autoconvert_offset_to_baseunit=False)
    reg.formatter.default_format = "~P"
    return reg


def quantity(value: Any, unit: str) -> "pint.Quantity":
    """A quantity in the application registry."""
    return registry().Quantity(value, unit)


def dimension_words(dimensionality: Any) -> str:
    """Name a pint dimensionality the way a person says it: 'information·time/computation'."""
    numerator: list[str] = []
    denominator: list[str] = []
    for name, power in sorted(dict(dimensionality).items()):
        word = name.strip("[]")
        term = word if abs(power) == 1 else f"{word}^{abs(power):g}"
        (numerator if power > 0 else denominator).append(term)
    if not numerator and not denominator:
        return "dimensionless"
    text = "·".join(numerator) if numerator else "1"
    if denominator:
        text += "/" + "/".join(denominator)
    return text


def require_dimension(q: "pint.Quantity", unit: str, what: str) -> float:
    """Return `q` as a float in `unit`, or raise UnitError naming both dimensions."""
    target = registry().Unit(unit)
    if q.dimensionality != target.dimensionality:
        raise UnitError(
            f"{what} must be in {unit} ({dimension_words(target.dimensionality)}); "
            f"got {format_quantity(q)} ({dimension_words(q.dimensionality)})"
        )
    return float(q.to(target).magnitude)


# ----------------------------------------------------------------------------
# Formatting on plain numbers (no pint): every figure leaves here with its unit.


def format_int(n: int) -> str:
    """An exact integer with thousands separators: 137,438,953,472."""
    return f"{int(n):,}"


def format_number(x: float, digits: int = 4) -> str:
    """`x` to `digits` significant figures, trailing zeros dropped: 1.374, 40.27, 2.5, 1365."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if not 1e-9 <= abs(x) < 1e21:  # 5e-324 would take 320 digits, 1e300 301: in powers of ten instead
        mantissa, _, exponent = f"{x:.{max(digits - 1, 0)}e}".partition("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(digits - 1 - magnitude, 0)
    # The common case, a float, through %-formatting: the same text as f"{x:.{decimals}f}" gives, sooner
    # (tables of a million imported kernels format four times a row). Other numbers keep their own __format__.
    text = "%.*f" % (decimals, x) if type(x) is float else f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_percent(percent: float, digits: int = 3) -> str:
    """A percentage to `digits` significant figures, never rounded to nothing: '80.5 %', '0.045 %', '100 %'.

    The one way the workbench writes a share (of the bound, of a datasheet rate): `percent` is
    already in percent (0.045 means 0.045 %, not 4.5 %).
    """
    if not math.isfinite(percent):
        return f"{percent} %"
    return f"{format_number(percent, digits)} %"


_SI_PREFIX = dict(_SI_PREFIXES)
_SI_POWER = {exponent: 10**exponent for exponent, _ in _SI_PREFIXES}  # each exactly the 10**exponent it stands for


def format_si(value: float, unit: str, digits: int = 4, max_exponent: int = 18) -> str:
    """`value` in `unit` with the SI prefix that puts the mantissa in [1, 1000): '1.374 ms'."""
    if value == 0 or not math.isfinite(value):
        return f"{format_number(value)} {unit}"
    exponent = math.floor(math.log10(abs(value)) / 3) * 3
    exponent = min(max(exponent, -12), max_exponent)
    mantissa = value / (_SI_POWER[exponent] if exponent in _SI_POWER else 10**exponent)
    text = format_number(mantissa, digits)
    # Rounding can carry 999.95 up to 1000: step to the next prefix.
    if abs(float(text)) >= 1000 and exponent + 3 <= max_exponent:
        exponent += 3
        mantissa = value / (_SI_POWER[exponent] if exponent in _SI_POWER else 10**exponent)
        text = format_number(mantissa, digits)
    return f"{text} {_SI_PREFIX[exponent]}{unit}"


def format_binary(value: float, unit: str, digits: int = 4) -> str:
    """`value` in `unit` with the IEC prefix that puts the mantissa in [1, 1024): '96 MiB'."""
    if value == 0 or not math.isfinite(value):
        return f"{format_number(value)} {unit}"
    step = 0
    mantissa = float(value)
    while abs(mantissa) >= 1024 and step < len(_BINARY_PREFIXES) - 1:
        mantissa /= 1024
        step += 1
    return f"{format_number(mantissa, digits)} {_BINARY_PREFIXES[step]}{unit}"


def format_bytes(n: float, binary: bool = False, digits: int = 4) -> str:
    """A byte amount in decimal (MB, GB) or binary (MiB, GiB) units; less than a byte in bits ('4 bit').

    A byte is the smallest unit with a prefix here: half a byte is 4 bit, never
    '500 mB' (a milli-byte is no amount of storage anyone means).
    """
    if 0 < abs(n) < 1:
        return f"{format_number(n * 8, digits)} bit"
    return format_binary(n, "B", digits) if binary else format_si(n, "B", digits)


def format_flop(n: float, digits: int = 4) -> str:
    """An amount of work: '137.4 GFLOP'."""
    return format_si(n, "FLOP", digits)


def format_time(seconds: float, digits: int = 4) -> str:
    """A duration with a prefix no larger than seconds: '1.374 ms', '40.27 µs'."""
    return format_si(seconds, "s", digits, max_exponent=0)


def format_times(values: "Iterable[float | None]", none: str, digits: int = 4) -> list[str]:
    """format_time() of each value (`none` for None), for long columns: the same texts, made several
    times sooner by doing format_si's and format_number's steps inline for plain floats."""
    texts: list[str] = []
    append = texts.append
    log10, floor = math.log10, math.floor
    powers, prefixes = _SI_POWER, _SI_PREFIX
    for value in values:
        if value is None:
            append(none)
            continue
        if type(value) is not float or value == 0 or value - value != 0:  # not a plain finite nonzero float
            append(format_time(value, digits))
            continue
        exponent = floor(log10(-value if value < 0 else value) / 3) * 3
        exponent = -12 if exponent < -12 else (0 if exponent > 0 else exponent)
        mantissa = value / powers[exponent]
        size = -mantissa if mantissa < 0 else mantissa
        if not 1e-9 <= size < 1e21:  # format_number writes these in powers of ten
            append(format_time(value, digits))
            continue
        # format_number's floor(log10(size)), by comparison where the mantissa is in [1, 1000): the two
        # differ only within an ulp of 10 or 100, where both precisions round to the same text.
        magnitude = (0 if size < 10 else 1 if size < 100 else 2) if 1 <= size < 1000 else floor(log10(size))
        decimals = digits - 1 - magnitude
        text = "%.*f" % (decimals if decimals > 0 else 0, mantissa)
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if exponent < 0 and size >= 999 and abs(float(text)) >= 1000:  # 999.95 rounded up to 1000: the next prefix
            append(format_time(value, digits))
            continue
        append(f"{text} {prefixes[exponent]}s")
    return texts


def format_flop_rate(flop_per_s: float, digits: int = 4) -> str:
    """A compute rate: '100 TFLOP/s'."""
    return format_si(flop_per_s, "FLOP/s", digits)


def format_bandwidth(byte_per_s: float, binary: bool = False, digits: int = 4) -> str:
    """A transfer rate: '2.5 TB/s' (or GiB/s with binary prefixes); under a byte per second in bit/s."""
    if 0 < abs(byte_per_s) < 1:
        return f"{format_number(byte_per_s * 8, digits)} bit/s"
    if binary:
        return format_binary(byte_per_s, "B/s", digits)
    return format_si(byte_per_s, "B/s", digits)


def format_intensity(flop_per_byte: float, digits: int = 4) -> str:
    """Arithmetic intensity: '1365 FLOP/B' (no prefix: the ratio reads best plain)."""
    return f"{format_number(flop_per_byte, digits)} FLOP/B"


def format_quantity(q: Any, digits: int = 4) -> str:
    """A pint quantity as '1.007 MB·s/TFLOP': significant figures, short unit symbols."""
    magnitude = q.magnitude
    number = format_number(float(magnitude), digits) if isinstance(magnitude, (int, float)) else str(magnitude)
    unit = f"{q.units:~P}"
    return f"{number} {unit}".strip()
