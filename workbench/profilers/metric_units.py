"""Nsight Compute's unit spellings, converted to base units.

ncu scales units to fit each value (`--print-units auto`, the default):
one launch prints `134.22 Mbyte`, the next `512 Kbyte`; times come as
`nsecond`, `usecond`, `msecond` (or `ns`, `us`, `ms` in newer releases);
rates as `Gbyte/second` or `Gbyte/s`; clocks as `cycle/nsecond` or `Ghz`.
`base_unit("Mbyte")` answers the factor to bytes and the base unit's symbol.
Every word below is a base unit of the project's registry (or a percentage),
so a factor is the prefixes' powers alone: they are read from the prefix
table of `workbench.model.units` (the prefixes units.txt defines) without loading
pint, which costs a second; tests/test_profilers.py checks each spelling
gives the registry's factor. Counts (`inst`, `sector`, `warp`, …) are plain
numbers and keep their word.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from workbench.model.units import binary_prefix_scale, si_prefix_scale

# ncu word (after any prefix) -> (registry unit, base symbol shown to the user); each a base unit of the registry
_MEASURED_WORDS: dict[str, tuple[str, str]] = {
    "byte": ("byte", "B"),
    "bytes": ("byte", "B"),
    "B": ("byte", "B"),
    "bit": ("bit", "bit"),
    "second": ("second", "s"),
    "seconds": ("second", "s"),
    "sec": ("second", "s"),
    "s": ("second", "s"),
    "cycle": ("cycle", "cycle"),
    "cycles": ("cycle", "cycle"),
    "hz": ("hertz", "Hz"),
    "Hz": ("hertz", "Hz"),
}

# Things ncu counts: a plain number whose word is kept as its unit.
_COUNT_WORDS = frozenset(
    {
        "inst",
        "warp",
        "warps",
        "thread",
        "threads",
        "block",
        "blocks",
        "sector",
        "sectors",
        "request",
        "requests",
        "register",
        "registers",
        "wavefront",
        "wavefronts",
        "transaction",
        "op",
        "ops",
        "SM",
        "TPC",
        "context",
        "launch",
        "pass",
    }
)

# ncu's prefix letters -> the SI prefix symbols of workbench.model.units
_PREFIXES: dict[str, str] = {
    "K": "k",
    "k": "k",
    "M": "M",
    "G": "G",
    "T": "T",
    "P": "P",
    "m": "m",
    "u": "µ",
    "µ": "µ",
    "μ": "µ",
    "n": "n",
    "p": "p",
}

_BINARY_PREFIXES = ("Ki", "Mi", "Gi", "Ti")

# Short spellings of scaled times that would otherwise read as prefix + count word: (prefix symbol, base symbol)
_WHOLE_WORDS: dict[str, tuple[str, str]] = {
    "ns": ("n", "s"),
    "us": ("µ", "s"),
    "µs": ("µ", "s"),
    "ms": ("m", "s"),
    "ps": ("p", "s"),
    "msecond": ("m", "s"),
    "usecond": ("µ", "s"),
    "nsecond": ("n", "s"),
    "psecond": ("p", "s"),
    "%": ("", "%"),
}


@dataclass(frozen=True)
class BaseUnit:
    """How to turn a value printed in some ncu unit into base units.

    factor: multiply the printed number by it (an int where exact);
    symbol: the base unit shown to users ("B", "s", "B/s", "Hz", "cycle/s", "inst", "%", "");
    known: False when some word of the unit is not one ncu is known to print
    (the value is then kept as printed, factor 1, the original text as symbol).
    """

    factor: int | float
    symbol: str
    known: bool = True

    @property
    def scaled(self) -> bool:
        """True when the printed unit carried a prefix, so the figure was rounded by the tool."""
        return self.factor != 1


def _tidy(factor: float) -> int | float:
    """12 significant figures, and an int when the factor is a whole number (10**6, not 999999.9999)."""
    tidy = float(f"{factor:.12g}")
    if tidy >= 1 and tidy == int(tidy):
        return int(tidy)
    return tidy


@dataclass(frozen=True)
class _Word:
    """One side of an ncu unit: its factor to the base unit (the prefix's), and the base unit's symbol."""

    factor: Fraction
    symbol: str  # "B", "s", "Hz", "inst", …


def _word(word: str) -> _Word | None:
    """One unit word → its factor and base symbol, or None when ncu is not known to print it."""
    if word in _WHOLE_WORDS:
        prefix, symbol = _WHOLE_WORDS[word]
        return _Word(si_prefix_scale(prefix), symbol)
    if word in _MEASURED_WORDS:
        return _Word(Fraction(1), _MEASURED_WORDS[word][1])
    if word in _COUNT_WORDS:
        return _Word(Fraction(1), word)
    if len(word) > 1 and word[0] in _PREFIXES:
        rest = word[1:]
        if rest.lower() == "hz":
            rest = "hz"
        if rest in _MEASURED_WORDS:
            return _Word(si_prefix_scale(_PREFIXES[word[0]]), _MEASURED_WORDS[rest][1])
        if rest in _COUNT_WORDS:
            return _Word(si_prefix_scale(_PREFIXES[word[0]]), rest)
    if len(word) > 2 and word[:2] in _BINARY_PREFIXES and word[2:] in ("B", "byte"):
        return _Word(Fraction(binary_prefix_scale(word[:2])), "B")
    return None


@lru_cache(maxsize=512)
def base_unit(unit_text: str) -> BaseUnit:
    """The factor and base symbol for one ncu unit spelling ('Mbyte', 'Gbyte/second', 'usecond', '%')."""
    text = unit_text.strip()
    if not text:
        return BaseUnit(1, "")
    parts = [part.strip() for part in text.split("/")]
    if len(parts) > 2 or not all(parts):
        return BaseUnit(1, text, known=False)
    words = [_word(part) for part in parts]
    if any(word is None for word in words):
        return BaseUnit(1, text, known=False)
    numerator, *rest = [word for word in words if word is not None]
    denominator = rest[0] if rest else None
    symbol = "/".join(word.symbol for word in (numerator, denominator) if word is not None)
    factor = numerator.factor / (denominator.factor if denominator else 1)
    return BaseUnit(int(factor) if factor.denominator == 1 else float(factor), symbol)


def to_base(number: int | float, unit: BaseUnit) -> int | float:
    """The printed number in base units; ints stay exact when the factor is a whole number."""
    if isinstance(number, int) and isinstance(unit.factor, int):
        return number * unit.factor
    if 0 < unit.factor < 1:
        # 3 / 10**9 is exactly the double nearest 3e-9; 3 * 1e-9 is not.
        return float(number) / _tidy(1 / unit.factor)
    return float(number) * float(unit.factor)


# The units ncu prints with --print-units base: nanoseconds are its base for durations.
_NCU_BASE_SPELLINGS = frozenset({"nsecond", "ns"})


def is_auto_scaled(unit_text: str) -> bool:
    """True when ncu scaled a figure to a larger unit ('Mbyte', 'usecond'): it then keeps ~4 digits."""
    text = unit_text.strip()
    if not text or text in _NCU_BASE_SPELLINGS:
        return False
    return base_unit(text).factor != 1
