"""How a profile file writes its numbers: which mark is the decimal point, decided once per file.

ncu and nsys print numbers the way the machine's locale does. On most
machines `1,234.5` is one thousand two hundred and thirty-four and a half;
on a Windows machine with a German or French locale ncu writes the same
figure `1.234,5`. A value such as `231.552` reads either way — 231.552 or
231,552 — so the format is decided from the values that read only one way:

- a number with two grouping marks (`9.437.184`: periods group, so the comma is decimal);
- both marks, the last being the decimal mark (`1,234.56`);
- a mark followed by other than three digits (`71,25`, `0.5`), or one no
  grouping could explain (`0.123`, `1234.567`, `.5`, `1.5e-05`);
- a percentage: `12.345 %` cannot be twelve thousand per cent.

`decide()` weighs a file's evidence: one reading when the unambiguous values
agree, a `ProfileError` quoting both lines when they contradict each other,
and the period (ncu's default) *assumed* — and said so — when no value settles
it. A user's choice (`--decimal-mark`, the import dialog) overrides all of it.
`NumberFormat.parse()` then reads every value of the file the one way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable

from workbench.profilers.errors import ProfileError
from workbench.records import record

PERIOD = "."
COMMA = ","
MARK_NAMES = {PERIOD: "period", COMMA: "comma"}

# How the reading was arrived at.
DECIDED = "decided"  # from the file's unambiguous values
ASSUMED = "assumed"  # no value settled it: the period, ncu's default
CHOSEN = "chosen"  # the user said so (--decimal-mark, the import dialog)

# A value this large is no count or time a profiler prints (and would not fit a float when scaled).
LARGEST = 1e300

_EXPONENT = r"(?:[eE][+-]?\d+)?"
_SIGN = r"[+-]?"
# One mark at most, any digits around it: a plain number in either reading.
_SINGLE = re.compile(rf"{_SIGN}(\d*)([.,]?)(\d*){_EXPONENT}")
_HAS_EXPONENT = re.compile(r"[eE][+-]?\d+$")


@dataclass(frozen=True)
class Evidence:
    """One value that reads only one way: the decimal mark it implies, where, and why."""

    decimal: str
    text: str
    line: int | None
    why: str

    def describe(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}'{self.text}' ({self.why})"


def _grammar(decimal: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Plain and grouped number patterns for a decimal mark."""
    d = re.escape(decimal)
    g = re.escape(COMMA if decimal == PERIOD else PERIOD)
    plain = re.compile(rf"{_SIGN}(?:\d+(?:{d}\d*)?|{d}\d+){_EXPONENT}")
    grouped = re.compile(rf"{_SIGN}[1-9]\d{{0,2}}(?:{g}\d{{3}})+(?:{d}\d*)?{_EXPONENT}")
    return plain, grouped


_GRAMMARS = {PERIOD: _grammar(PERIOD), COMMA: _grammar(COMMA)}


def classify(text: str, percent: bool = False, whole: bool = False) -> tuple[str, str] | None:
    """The decimal mark a value implies and why, or None when it reads either way (or is no number).

    `percent`: the value is a percentage, so a single mark before three
    digits is a decimal mark (no share is a thousand per cent or more).
    `whole`: the column holds whole numbers (nsys Instances), so such a mark groups thousands.
    """
    cell = text.strip()
    if not cell or cell.isdecimal():
        return None
    periods, commas = cell.count(PERIOD), cell.count(COMMA)
    if not periods and not commas:
        return None
    if periods and commas:
        last = PERIOD if cell.rfind(PERIOD) > cell.rfind(COMMA) else COMMA
        plain, grouped = _GRAMMARS[last]
        if grouped.fullmatch(cell):
            return last, f"grouped with {MARK_NAMES[COMMA if last == PERIOD else PERIOD]}s, {MARK_NAMES[last]} last"
        return None
    mark = PERIOD if periods else COMMA
    other = COMMA if mark == PERIOD else PERIOD
    if periods + commas >= 2:
        if _GRAMMARS[other][1].fullmatch(cell):
            return other, f"two or more {MARK_NAMES[mark]}s group thousands"
        return None
    match = _SINGLE.fullmatch(cell)
    if match is None:
        return None
    integer, _, fraction = match.groups()
    if len(fraction) != 3:
        return mark, f"a {MARK_NAMES[mark]} followed by {len(fraction)} digit{'s' if len(fraction) != 1 else ''}"
    if not integer or len(integer) > 3 or integer.startswith("0") or _HAS_EXPONENT.search(cell):
        return mark, f"no thousands grouping writes it so; the {MARK_NAMES[mark]} is a decimal mark"
    if percent:
        return mark, "a percentage: the mark is decimal"
    if whole:
        return other, f"a count of whole launches: the {MARK_NAMES[mark]} groups thousands"
    return None


def is_ambiguous(text: str) -> bool:
    """True for a value whose reading depends on the decimal mark ('1.234', '-12,500')."""
    cell = text.strip()
    match = _SINGLE.fullmatch(cell)
    if match is None or not match.group(2):
        return False
    integer, _, fraction = match.groups()
    return len(fraction) == 3 and 0 < len(integer) <= 3 and not integer.startswith("0") and not _HAS_EXPONENT.search(cell)


class NumberRangeError(ValueError):
    """A number too large (or not finite) to be a profiler's figure; the caller names where it stood."""


@dataclass(frozen=True)
class NumberFormat:
    """The decimal mark a file is read with, how that was decided, and the value that decided it."""

    decimal: str = PERIOD
    how: str = ASSUMED
    evidence: str = ""  # "line 12: '71,25' (a comma followed by 2 digits)", where DECIDED
    ambiguous: int = 0  # values whose reading depended on the mark

    def __post_init__(self) -> None:
        if self.decimal not in MARK_NAMES:
            raise ValueError(f"decimal mark must be '.' or ','; got {self.decimal!r}")

    @property
    def grouping(self) -> str:
        return COMMA if self.decimal == PERIOD else PERIOD

    @property
    def assumed(self) -> bool:
        """True when no value settled the reading and some value depended on it."""
        return self.how == ASSUMED and self.ambiguous > 0

    def parse(self, text: str) -> int | float:
        """A number as this file writes it: exact ints for counts; ValueError for anything else.

        NumberRangeError (a ValueError) for a number no profiler prints: 1e300 or
        more in size, infinite, or not a number.
        """
        return _PARSERS[self.decimal](text)

    @property
    def parser(self) -> "Callable[[str], int | float]":
        """parse() as a plain function, for loops over millions of cells."""
        return _PARSERS[self.decimal]

    def note(self) -> str:
        """The line an import's notes carry about the reading used."""
        name = MARK_NAMES[self.decimal]
        example = "1,234.5" if self.decimal == PERIOD else "1.234,5"
        if self.how == CHOSEN:
            return f"numbers read with the {name} as decimal mark ({example}), as chosen"
        if self.how == DECIDED:
            return f"numbers read with the {name} as decimal mark ({example}), decided from {self.evidence}"
        if self.ambiguous:
            return (
                f"number format assumed: no value shows which mark is the decimal one, so {self.ambiguous:,} "
                f"value{'s' if self.ambiguous != 1 else ''} such as '1.234' {'were' if self.ambiguous != 1 else 'was'} "
                "read with the period as decimal mark (ncu's default); if the file comes from a comma-decimal "
                "locale, import it again with --decimal-mark , (or the import dialog's choice)"
            )
        return f"numbers read with the {name} as decimal mark ({example}); no value in the file depends on it"



# a profile record's number format (read back, with its checks, by records.number_format_from)
record(NumberFormat, keys={"decimal": "decimal_mark"})


def _parser(decimal: str) -> "Callable[[str], int | float]":
    """The parse function of one decimal mark (see NumberFormat.parse)."""
    plain, grouped = (pattern.fullmatch for pattern in _GRAMMARS[decimal])
    grouping = COMMA if decimal == PERIOD else PERIOD
    comma = decimal == COMMA

    def parse(text: str) -> int | float:
        cell = text.strip()
        if cell.isdecimal():  # the common case: a plain count
            if len(cell) > 300:
                raise NumberRangeError(f"'{_short(cell)}' ({len(cell)} digits)")
            return int(cell)
        if grouping in cell:
            if grouped(cell) is None:
                raise ValueError(f"not a number: {text!r}")
            cell = cell.replace(grouping, "")
        elif plain(cell) is None:
            raise ValueError(f"not a number: {text!r}")
        if len(cell) > 330:  # more digits than any figure (int() of 4,300+ would refuse anyway)
            raise NumberRangeError(f"'{_short(text.strip())}' ({len(cell)} characters)")
        if comma:
            cell = cell.replace(COMMA, PERIOD)
        if PERIOD in cell or "e" in cell or "E" in cell:
            value = float(cell)
            if not -LARGEST < value < LARGEST:  # infinity too
                raise NumberRangeError(f"'{_short(text.strip())}'")
            return value
        number = int(cell)
        if not -LARGEST < number < LARGEST:
            raise NumberRangeError(f"'{_short(text.strip())}'")
        return number

    return parse


_PARSERS = {PERIOD: _parser(PERIOD), COMMA: _parser(COMMA)}


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}…{text[-6:]}"


class FormatSniffer:
    """Collects a file's evidence value by value (the readers feed it), then `decide()`s.

    Readers stop feeding it at the first witness (`decided`): a later value
    that contradicts the reading cannot be read in it, and `contradiction()`
    turns that value into the error that quotes both. With no witness at all
    every value has been seen, and `ambiguous` counts those read by assumption.
    """

    def __init__(self) -> None:
        self.first: dict[str, Evidence] = {}
        self.ambiguous = 0

    @property
    def decided(self) -> bool:
        """True once some value has settled the reading (readers stop looking then)."""
        return bool(self.first)

    def see(self, text: str, line: int | None, percent: bool = False, whole: bool = False) -> None:
        cell = text.strip()
        if not cell or cell.isdecimal() or (PERIOD not in cell and COMMA not in cell):
            return
        if len(self.first) < 2:
            found = classify(cell, percent, whole)
            if found is not None:
                decimal, why = found
                self.first.setdefault(decimal, Evidence(decimal, cell, line, why))
                return
        if is_ambiguous(cell):
            self.ambiguous += 1

    def decide(self, source: str, chosen: str | None = None) -> NumberFormat:
        """The file's number format; a file whose values contradict each other is a ProfileError."""
        if chosen is not None:
            return NumberFormat(chosen, CHOSEN, "", self.ambiguous)
        if len(self.first) == 2:
            period, comma = self.first[PERIOD], self.first[COMMA]
            raise ProfileError(
                f"the numbers mix two formats: {period.describe()} has the period as decimal mark, "
                f"{comma.describe()} the comma; fix the file or choose a reading (--decimal-mark . or ,)",
                source,
            )
        if self.first:
            (evidence,) = self.first.values()
            return NumberFormat(evidence.decimal, DECIDED, evidence.describe(), self.ambiguous)
        return NumberFormat(PERIOD, ASSUMED, "", self.ambiguous)


def contradiction(text: str, number_format: NumberFormat, source: str, line: int | None, percent: bool = False) -> "Exception | None":
    """The ProfileError for a value that reads only in the other format, None for any other unreadable text."""
    found = classify(text, percent)
    if found is None or found[0] == number_format.decimal:
        return None
    decimal, why = found
    settled = {
        CHOSEN: "as chosen",
        DECIDED: f"decided from {number_format.evidence}",
        ASSUMED: "assumed (no earlier value showed the format)",
    }[number_format.how]
    return ProfileError(
        f"'{text.strip()}' has the {MARK_NAMES[decimal]} as decimal mark ({why}), but the file is read with the "
        f"{MARK_NAMES[number_format.decimal]}, {settled}; the numbers mix two formats (choose one with --decimal-mark)",
        source,
        line,
    )


def decide(values: Iterable[tuple[str, int | None, bool]], source: str = "profile", chosen: str | None = None) -> NumberFormat:
    """The number format of (text, line, is-percentage) values: see the module's description."""
    sniffer = FormatSniffer()
    for text, line, percent in values:
        sniffer.see(text, line, percent)
    return sniffer.decide(source, chosen)


def parse_decimal_mark(text: str | None) -> str | None:
    """'.' or ',' (also the words 'period'/'comma'), None for automatic; ValueError otherwise."""
    if text is None:
        return None
    folded = text.strip().lower()
    for mark, name in MARK_NAMES.items():
        if folded in (mark, name):
            return mark
    if folded in ("", "auto"):
        return None
    raise ValueError(f"decimal mark must be '.' or ','; got {text!r}")


def plain_column(text: str, decimal: str, whole: bool = False) -> "Any | None":
    """The numbers of a column whose cells (joined by newlines) are all plain, read at once with NumPy;
    None when any cell is otherwise (the caller then reads the column its slower way, which says what is wrong).

    See plain_cells for what plain is; this splits the text at its newlines for it.
    """
    import numpy as np

    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    raw = np.frombuffer(data, np.uint8)
    if raw.size == 0:
        return None
    breaks = np.flatnonzero(raw == _NEWLINE_BYTE)
    lengths = np.diff(np.concatenate(([-1], breaks, [raw.size]))) - 1
    return plain_cells(np.delete(raw, breaks), lengths, decimal, whole)


def plain_cells(flat: "Any", lengths: "Any", decimal: str, whole: bool = False) -> "Any | None":
    """The numbers of cells laid end to end in `flat` (ASCII bytes as a NumPy uint8 array), `lengths`
    bytes each, when every cell is plain; None when any is otherwise.

    Plain here is a narrower form than the file's format allows: an unsigned
    number of digits with at most one decimal mark, thousands grouped
    correctly or not at all (`1,234,567.5`, `1234567.5`, `.5`, `7.`), at most
    7 groups and 20 fraction digits (5 groups and no mark for `whole`), at
    most 18 digits in all and their integer below 2**53 (10**18 for
    `whole`) — no exponent, sign, space or other text: a subset of what
    nsys._PlainShapes accepts. For such a cell,
    float(text) is the correctly rounded quotient of that integer by 10**f,
    which is what one IEEE division of the two exact doubles gives: the values
    are exactly those of float() (int64 and int() for `whole`).
    """
    import numpy as np

    count = lengths.size
    if count == 0 or flat.size == 0 or lengths.min() == 0:
        return None
    kind = _byte_kinds(decimal).take(flat)
    if kind.max() > _GROUP:
        return None
    starts = np.cumsum(lengths) - lengths
    integer_end = lengths.copy()  # where each cell's integer part ends: its mark, or its end
    marks = np.flatnonzero(kind == _MARK)
    if marks.size:
        owner = np.searchsorted(starts, marks, side="right") - 1  # the cell of each mark
        if whole or np.bincount(owner, minlength=count).max() > 1:
            return None
        integer_end[owner] = marks - starts[owner]
    fraction = np.where(integer_end < lengths, lengths - integer_end - 1, 0)
    grouped = np.zeros(count, np.int64)
    groups = np.flatnonzero(kind == _GROUP)
    if groups.size:
        owner = np.searchsorted(starts, groups, side="right") - 1
        # Each grouping mark stands 4k places before the integer part's end; with m marks in a cell the
        # leading group is 1 to 3 digits (not starting with 0), so the m marks fill every such place.
        apart = integer_end[owner] - (groups - starts[owner])
        if (apart <= 0).any() or (apart % 4).any():
            return None
        grouped = np.bincount(owner, minlength=count)
        lead = (integer_end - 4 * grouped)[grouped > 0]
        if (lead < 1).any() or (lead > 3).any() or (flat[starts[grouped > 0]] == 48).any():
            return None
        if grouped.max() > (5 if whole else 7):
            return None
    digits = integer_end - grouped + fraction
    if digits.min() < 1 or digits.max() > _WIDTH or fraction.max() > 20:
        return None
    # Each digit times the power of ten of its place in its cell, summed cell by cell (exact in int64: at most
    # 18 digits, below 10**18).
    places = np.flatnonzero(kind == _DIGIT)
    first = np.cumsum(digits) - digits  # each cell's first digit among `places`
    place = np.repeat(first + digits - 1, digits) - np.arange(places.size)  # digits after each one in its cell
    powers, tens = _powers_of_ten()
    integers = np.add.reduceat((flat[places] - 48).astype(np.int64) * powers.take(place), first)
    if whole:
        return integers
    if integers.max() >= 2**53:
        return None
    return integers.astype(np.float64) / tens.take(fraction)


@lru_cache(maxsize=1)
def _powers_of_ten() -> "tuple[Any, Any]":
    """10**0 to 10**(_WIDTH - 1) as int64, and 10**0 to 10**20 as (exact) doubles."""
    import numpy as np

    return np.array([10**k for k in range(_WIDTH)], np.int64), np.array([float(10**k) for k in range(21)])


# What plain_column makes of each byte.
_DIGIT, _MARK, _GROUP, _OTHER = 0, 1, 2, 3
_NEWLINE_BYTE = 10
_WIDTH = 18  # digits at most in a cell it reads (10**18 < 2**63)


@lru_cache(maxsize=2)
def _byte_kinds(decimal: str) -> "Any":
    import numpy as np

    kinds = np.full(256, _OTHER, np.uint8)
    kinds[ord("0"):ord("9") + 1] = _DIGIT
    kinds[ord(decimal)] = _MARK
    kinds[ord(COMMA if decimal == PERIOD else PERIOD)] = _GROUP
    return kinds
