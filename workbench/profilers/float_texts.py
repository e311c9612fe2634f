"""Floats as `repr` writes them (the JSON the CLI prints), many at a time, written by NumPy where that is exact.

`float.__repr__` finds the shortest digits that read back to the same
double: about 0.9 µs a value here, most of the time of a million-kernel
summary's JSON. Most figures in a profile are decimals of a few digits (a
time in nanoseconds divided by 10**9), and for a double that is the
correctly rounded value of a decimal of at most 14 significant digits there
is nothing to search: its shortest digits are that decimal's. `float_texts`
finds such values with NumPy, writes their texts as bytes in one array and
splits them apart once; every other value is written by `repr` itself.

Why the digits are the same: with v the double nearest the decimal
d = n·10**-p (n < 10**14, no trailing zero), d is the only decimal of at most
15 significant digits that reads back as v (two such decimals never share a
double), so repr's shortest digits are n's. The layout is repr's: an
exponent ("1e-05", "1.5e-09": at least two exponent digits) when the first
digit's place is below 10**-4 or from 10**16 on, fixed notation otherwise,
with ".0" after a whole number.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Sequence

_FEW = 64  # below this many values the NumPy work costs more than it saves
_DIGITS = 14  # significant digits at most of a value written here
_POWERS = [10.0**k for k in range(23)]  # exact doubles: 10**22 is the largest power of ten a double holds
_END = ord("\n")
_GAP = 0  # a byte no text holds: taken out before the texts are split


def float_texts(values: "Sequence[float] | Iterable[float]") -> list[str]:
    """`[float.__repr__(v) for v in values]`: the same texts ('nan' and 'inf' included), sooner."""
    held = values if hasattr(values, "__len__") else list(values)
    if len(held) < _FEW:  # type: ignore[arg-type]
        return list(map(float.__repr__, held))
    import numpy as np

    array = np.asarray(held, dtype=np.float64)
    whole, places = _short_decimals(array)
    short = whole > 0
    count = int(np.count_nonzero(short))
    if count < _FEW:
        return list(map(float.__repr__, held))
    written = _written(whole[short], places[short], np.signbit(array[short]))
    if count == array.size:
        return written
    texts = np.empty(array.size, object)
    texts[short] = written
    texts[~short] = list(map(float.__repr__, array[~short].tolist()))
    return texts.tolist()


def _short_decimals(array: Any) -> tuple[Any, Any]:
    """For each value the decimal n·10**-p whose nearest double it is, n < 10**14 a whole number without a
    trailing zero, when there is one with 0 ≤ p ≤ 22 (so that 10**p is an exact double): (n, p) as int64
    arrays, n = 0 where there is none (zero, NaN, infinities, and values needing more digits)."""
    import numpy as np

    size = np.abs(array)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        exponent = np.floor(np.log10(size))
        places = (_DIGITS - 1) - exponent  # places after the point that give 14 significant digits
        usable = np.isfinite(places) & (places >= 0) & (places <= len(_POWERS) - 1)
        places = np.where(usable, places, 0).astype(np.int64)
        scale = np.take(_POWERS, places)
        scaled = np.rint(size * scale)
        exact = usable & (scaled < 10.0**_DIGITS) & (scaled / scale == size)  # one IEEE division: v nearest n·10**-p
        whole = np.where(exact, scaled, 0.0).astype(np.int64)
    for step in (8, 4, 2, 1):  # trailing zeros off: n and p each the smallest
        power = 10**step
        drop = (whole % power == 0) & (places >= step) & (whole > 0)
        whole = np.where(drop, whole // power, whole)
        places = places - step * drop
    return whole, places


def _written(whole: Any, places: Any, negative: Any) -> list[str]:
    """The repr texts of -n·10**-p (negative) or n·10**-p, each n ≥ 1 below 10**14 without trailing zeros.

    Each text is laid out in a row of bytes with a slot for everything a text of its batch may hold, unused
    slots a byte no text holds (taken out at the end, so the rows need no alignment). In order, each part
    only when some text of the batch needs it: the sign; "0." and up to three zeros (a value below 1 in
    fixed notation); the digit places of the longest n (each n right aligned, the places before its first
    digit unused), each followed by a slot for the point; up to 14 zeros and ".0" (a whole number); "e±XX"
    (the exponent form); and the end of the line.
    """
    import numpy as np

    count = whole.size
    digits = np.searchsorted(_tens(), whole, side="right")  # n's digits: 1 to 14
    point = digits - places  # value = 0.d1d2… × 10**point
    exponent_form = (point <= -4) | (point > 16)
    below_one = ~exponent_form & (point <= 0)
    whole_number = ~exponent_form & (point >= digits)
    span = int(digits.max() + 1) // 2 * 2  # digit places laid out: an even number, two digits a lookup
    first = span - digits  # the place of n's first digit
    parts = {"sign": negative.any(), "below one": below_one.any(), "digits": True, "zeros": whole_number.any(),
             "exponent": exponent_form.any(), "end": True}
    sizes = {"sign": 1, "below one": 5, "digits": 2 * span, "zeros": _DIGITS + 2, "exponent": 4, "end": 1}
    at, width = {}, 0
    for part, used in parts.items():
        at[part], width = width, width + (sizes[part] if used else 0)
    out = np.zeros((count, width), np.uint8)
    if parts["sign"]:
        out[:, 0] = negative * np.uint8(ord("-"))
    if parts["below one"]:
        start = at["below one"]
        out[:, start] = below_one * np.uint8(ord("0"))
        out[:, start + 1] = below_one * np.uint8(ord("."))
        leading = np.where(below_one, -point, 0)  # the zeros after "0."
        for place in range(3):
            out[:, start + 2 + place] = (leading > place) * np.uint8(ord("0"))
    start = at["digits"]
    out[:, start:start + 2 * span:2] = _ascii_digits(whole, span) * (_places(span) >= first[:, None])
    inside = ~exponent_form & (point > 0) & (point < digits)
    dot = np.where(exponent_form & (digits > 1), first, np.where(inside, first + point - 1, -1))
    with_dot = np.flatnonzero(dot >= 0)
    out[with_dot, start + 1 + 2 * dot[with_dot]] = ord(".")
    if parts["zeros"]:
        chosen, start = np.flatnonzero(whole_number), at["zeros"]
        zeros = (point - digits)[chosen]
        out[chosen, start:start + _DIGITS] = (_places(_DIGITS) < zeros[:, None]) * np.uint8(ord("0"))
        out[chosen, start + _DIGITS] = ord(".")
        out[chosen, start + _DIGITS + 1] = ord("0")
    if parts["exponent"]:
        chosen, start = np.flatnonzero(exponent_form), at["exponent"]
        power = point[chosen] - 1
        magnitude = np.abs(power)
        out[chosen, start] = ord("e")
        out[chosen, start + 1] = np.where(power < 0, ord("-"), ord("+"))
        out[chosen, start + 2] = magnitude // 10 + ord("0")
        out[chosen, start + 3] = magnitude % 10 + ord("0")
    out[:, -1] = _END
    return out.tobytes().translate(None, b"\0").decode("ascii").split("\n")[:-1]


def _ascii_digits(whole: Any, span: int) -> Any:
    """The last `span` (even) decimal digits of each n, leading zeros included, as ASCII bytes: an array of
    count × span uint8, two digits at a time looked up in a table of "00" to "99"."""
    import numpy as np

    pairs = np.empty((whole.size, span // 2), np.int64)
    rest = whole
    for index in range(span // 2 - 1, -1, -1):
        rest, pairs[:, index] = np.divmod(rest, 100)
    return _pair_table().take(pairs).view(np.uint8)


@lru_cache(maxsize=1)
def _pair_table() -> Any:
    """"00" to "99", each two ASCII bytes read as one uint16 (in the machine's byte order, so that viewed as
    bytes again they are in order)."""
    import numpy as np

    return np.frombuffer("".join(f"{pair:02d}" for pair in range(100)).encode("ascii"), np.uint16)


@lru_cache(maxsize=4)
def _places(count: int) -> Any:
    """0 to count - 1 as one row of an int64 array."""
    import numpy as np

    return np.arange(count)[None, :]


@lru_cache(maxsize=1)
def _tens() -> Any:
    """10**0 to 10**14 as int64."""
    import numpy as np

    return np.array([10**k for k in range(_DIGITS + 1)], np.int64)
