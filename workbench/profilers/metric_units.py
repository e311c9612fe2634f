"""Nsight Compute's unit spellings, converted to base units through the project's registry.

ncu scales units to fit each value (`--print-units auto`, the default):
one launch prints `134.22 Mbyte`, the next `512 Kbyte`; times come as
`nsecond`, `usecond`, `msecond` (or `ns`, `us`, `ms` in newer releases);
rates as `Gbyte/second` or `Gbyte/s`; clocks as `cycle/nsecond` or `Ghz`.
`base_unit("Mbyte")` answers the factor to bytes and the base unit's symbol,
with the factor taken from `workbench.units.registry()` so that the
definitions file stays the one source of prefixes and units. Counts
(`inst`, `sector`, `warp`, …) are plain numbers and keep their word.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

# ncu word (after any prefix) -> (registry unit, base symbol shown to the user)
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

# ncu's prefix letters -> the registry's prefix names (units.txt defines them).
_PREFIXES: dict[str, str] = {
    "K": "kilo",
    "k": "kilo",
    "M": "mega",
    "G": "giga",
    "T": "tera",
    "P": "peta",
    "m": "milli",
    "u": "micro",
    "µ": "micro",
    "μ": "micro",
    "n": "nano",
    "p": "pico",
}

# Short spellings of scaled times that would otherwise read as prefix + count word.
_WHOLE_WORDS: dict[str, tuple[str, str]] = {
    "ns": ("nanosecond", "s"),
    "us": ("microsecond", "s"),
    "µs": ("microsecond", "s"),
    "ms": ("millisecond", "s"),
    "ps": ("picosecond", "s"),
    "msecond": ("millisecond", "s"),
    "usecond": ("microsecond", "s"),
    "nsecond": ("nanosecond", "s"),
    "psecond": ("picosecond", "s"),
    "%": ("percent", "%"),
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


@lru_cache(maxsize=None)
def _prefix_factor(prefix: str) -> int | float:
    """A prefix's factor, read from the registry (which only knows prefixes attached to a unit)."""
    from workbench.units import registry

    return _tidy(registry().Quantity(1, f"{prefix}bit").to("bit").magnitude)


def _word(word: str) -> tuple[str | None, int | float, str] | None:
    """One unit word → (registry expression or None for a count, prefix factor, base symbol)."""
    if word in _WHOLE_WORDS:
        expression, symbol = _WHOLE_WORDS[word]
        return expression, 1, symbol
    if word in _MEASURED_WORDS:
        unit, symbol = _MEASURED_WORDS[word]
        return unit, 1, symbol
    if word in _COUNT_WORDS:
        return None, 1, word
    if len(word) > 1 and word[0] in _PREFIXES:
        prefix, rest = _PREFIXES[word[0]], word[1:]
        if rest in _MEASURED_WORDS:
            unit, symbol = _MEASURED_WORDS[rest]
            return prefix + unit, 1, symbol
        if rest.lower() == "hz":
            return prefix + "hertz", 1, "Hz"
        if rest in _COUNT_WORDS:
            return None, _prefix_factor(prefix), rest
    if len(word) > 2 and word[:2] in ("Ki", "Mi", "Gi", "Ti") and word[2:] in ("B", "byte"):
        binary = {"Ki": "kibi", "Mi": "mebi", "Gi": "gibi", "Ti": "tebi"}[word[:2]]
        return binary + "byte", 1, "B"
    return None


@lru_cache(maxsize=512)
def base_unit(unit_text: str) -> BaseUnit:
    """The factor and base symbol for one ncu unit spelling ('Mbyte', 'Gbyte/second', 'usecond', '%')."""
    from workbench.units import registry

    text = unit_text.strip()
    if not text:
        return BaseUnit(1, "")
    parts = [part.strip() for part in text.split("/")]
    if len(parts) > 2 or not all(parts):
        return BaseUnit(1, text, known=False)
    expressions: list[str] = []
    bases: list[str] = []
    symbols: list[str] = []
    count_factor: int | float = 1
    for position, part in enumerate(parts):
        parsed = _word(part)
        if parsed is None:
            return BaseUnit(1, text, known=False)
        expression, prefix_factor, symbol = parsed
        symbols.append(symbol)
        if expression is None:
            count_factor = count_factor * prefix_factor if position == 0 else count_factor / prefix_factor
            expressions.append("")
            bases.append("")
            continue
        expressions.append(expression)
        bases.append({"B": "byte", "s": "second", "Hz": "hertz", "%": "percent"}.get(symbol, symbol))
    factor: int | float = 1
    measured = [i for i, expression in enumerate(expressions) if expression]
    if measured:
        numerator = expressions[0] or "1"
        base_numerator = bases[0] or "1"
        if len(parts) == 2 and expressions[1]:
            quantity = registry().Quantity(1, f"{numerator} / {expressions[1]}")
            target = f"{base_numerator} / {bases[1]}"
        else:
            quantity = registry().Quantity(1, numerator)
            target = base_numerator
        factor = _tidy(quantity.to(target).magnitude)
    factor = _tidy(factor * count_factor) if count_factor != 1 else factor
    return BaseUnit(factor, "/".join(symbols))


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
