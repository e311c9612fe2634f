"""A unit-aware scratchpad: "137.4 GFLOP / (100 TFLOP/s)" to ms gives 1.374 ms.

Expressions are tokenised and parsed here (numbers, unit names, + − × / **,
parentheses, implicit multiplication "100 TFLOP/s"), then computed with
quantities of the application registry. Nothing is evaluated as Python.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from workbench.errors import UnitError, shown
from workbench.model.units import dimension_words, format_quantity, registry

if TYPE_CHECKING:  # pragma: no cover
    import pint

MAX_EXPRESSION = 500
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
      | (?P<name>[A-Za-zµμ%][A-Za-z0-9_µμ]*)
      | (?P<op>\*\*|\^|[-+*/()×·÷−])
    )""",
    re.VERBOSE,
)
_OP_ALIASES = {"^": "**", "×": "*", "·": "*", "÷": "/", "−": "-"}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    column: int
    end: int = 0


def _tokenise(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    stripped = text.rstrip()
    while position < len(stripped):
        match = _TOKEN.match(stripped, position)
        if match is None or match.end() == position:
            bad = stripped[position:].lstrip()[:1]
            raise UnitError(f"unexpected '{shown(bad)}' at column {position + 1} in '{shown(text)}'")
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "op":
            value = _OP_ALIASES.get(value, value)
        token = _Token(kind, value, match.start(kind) + 1, match.end(kind) + 1)
        if kind == "number" and tokens and tokens[-1].kind == "number":
            # "1..2" reads as 1. times .2 and "2 3" as 6: almost always a typo, never what was meant.
            raise UnitError(
                f"two numbers in a row at column {token.column} ('{tokens[-1].text}' then '{value}') in '{shown(text)}'; "
                "put an operator between them"
            )
        tokens.append(token)
        position = match.end()
    return _compound_units(tokens)


def _compound_units(tokens: list[_Token]) -> list[_Token]:
    """Merge a unit written without spaces, "TB/s" or "FLOP/B", into one name.

    So "100.7 MB / 2.5 TB/s" divides by the rate, as a person means, while
    spaced slashes stay ordinary division.
    """
    merged: list[_Token] = []
    for token in tokens:
        if (
            token.kind == "name"
            and len(merged) >= 2
            and merged[-1].text == "/"
            and merged[-2].kind == "name"
            and merged[-2].end == merged[-1].column
            and merged[-1].end == token.column
        ):
            slash = merged.pop()
            unit = merged.pop()
            token = _Token("name", f"{unit.text}/{token.text}", unit.column, token.end)
        merged.append(token)
    return merged


class _Parser:
    """Recursive descent: sum := product (± product)*; product := juxtaposed ((*|/) juxtaposed)*;
    juxtaposed := power power*  (so "2.5 TB/s" and "200 GFLOP / 80 GB" read as people mean them)."""

    def __init__(self, text: str) -> None:
        self.text = shown(text)  # only ever quoted in messages, which must stay one line
        self.tokens = _tokenise(text)
        self.index = 0
        self.registry = registry()

    def peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def parse(self) -> Any:
        if not self.tokens:
            raise UnitError("empty expression; write e.g. 137.4 GFLOP / (100 TFLOP/s)")
        value = self.sum()
        extra = self.peek()
        if extra is not None:
            raise UnitError(f"unexpected '{extra.text}' at column {extra.column} in '{self.text}'")
        return value

    def sum(self) -> Any:
        value = self.product()
        while (token := self.peek()) is not None and token.text in ("+", "-"):
            self.take()
            right = self.product()
            value = self._checked(self._combine(value, right, token.text))
        return value

    def product(self) -> Any:
        value = self.juxtaposed()
        while (token := self.peek()) is not None and token.text in ("*", "/"):
            self.take()
            right = self.juxtaposed()
            value = self._checked(value * right if token.text == "*" else self._divide(value, right))
        return value

    def juxtaposed(self) -> Any:
        """A number written next to its unit binds tighter than × and /: "200 GFLOP / 80 GB"."""
        value = self.power()
        while (token := self.peek()) is not None and (token.kind in ("number", "name") or token.text == "("):
            value = self._checked(value * self.power())
        return value

    def power(self) -> Any:
        base = self.unary()
        token = self.peek()
        if token is not None and token.text == "**":
            self.take()
            exponent = self.power()
            magnitude = getattr(exponent, "magnitude", exponent)
            if getattr(exponent, "dimensionless", True) is False:
                raise UnitError(f"an exponent must be a plain number, not {format_quantity(exponent)}")
            if abs(float(magnitude)) > 64:
                raise UnitError("exponent too large (at most 64)")
            return self._checked(base ** float(magnitude) if not float(magnitude).is_integer() else base ** int(magnitude))
        return base

    def unary(self) -> Any:
        token = self.peek()
        if token is not None and token.text in ("+", "-"):
            self.take()
            value = self.unary()
            return -value if token.text == "-" else value
        return self.atom()

    def atom(self) -> Any:
        token = self.peek()
        if token is None:
            raise UnitError(f"expression '{self.text}' ends too early")
        self.take()
        if token.kind == "number":
            text = token.text.replace("_", "")
            try:
                number = float(text) if any(c in text for c in ".eE") else int(text)
                finite = math.isfinite(float(number))
            except (OverflowError, ValueError):  # 310 digits do not fit a float; 5,000 do not even make an int
                finite = False
            if not finite:
                raise UnitError(f"the number at column {token.column} is too large (at most about 1.8e308)")
            return self.registry.Quantity(number, "")
        if token.kind == "name":
            return self.registry.Quantity(1, _unit(token.text))
        if token.text == "(":
            value = self.sum()
            closing = self.peek()
            if closing is None or closing.text != ")":
                raise UnitError(f"missing ')' in '{self.text}'")
            self.take()
            return value
        raise UnitError(f"unexpected '{token.text}' at column {token.column} in '{self.text}'")

    def _checked(self, value: Any) -> Any:
        """An intermediate result, refused when it is not a finite real number (1e300 × 1e300, (−1)**0.5).

        Checked at every step, so an overflow cannot be hidden by a later
        operation (1e300 × 1e300 × 0) and exact integers never grow past a float.
        """
        magnitude = getattr(value, "magnitude", value)
        if isinstance(magnitude, complex):
            raise UnitError(f"'{self.text}' has no real value (a negative number to a fractional power)")
        try:
            finite = math.isfinite(float(magnitude))
        except OverflowError:
            finite = False
        except (TypeError, ValueError):  # not a plain number (an array from a unit conversion): leave it to pint
            return value
        if not finite:
            raise UnitError(f"'{self.text}' is too large to compute (beyond about 1.8e308)")
        return value

    def _combine(self, left: Any, right: Any, sign: str) -> Any:
        if left.dimensionality != right.dimensionality:
            raise UnitError(
                f"cannot {'add' if sign == '+' else 'subtract'} {format_quantity(right)} ({dimension_words(right.dimensionality)}) "
                f"{'to' if sign == '+' else 'from'} {format_quantity(left)} ({dimension_words(left.dimensionality)})"
            )
        return left + right if sign == "+" else left - right

    def _divide(self, left: Any, right: Any) -> Any:
        if right.magnitude == 0:
            raise UnitError(f"division by zero in '{self.text}'")
        return left / right


def _unit(name: str) -> str:
    """Check a unit name against the registry, with a hint for the classic mistakes."""
    reg = registry()
    try:
        reg.Unit(name)
    except Exception:  # pint raises UndefinedUnitError (and AttributeError for odd names)
        hint = ""
        if name.upper().endswith("FLOPS"):
            hint = f"; for a rate write {name[:-1]}/s"
        elif name.lower() in ("gbps", "tbps", "mbps"):
            hint = f"; write {name[0].upper()}B/s for bytes or {name[0].upper()}bit/s for bits"
        raise UnitError(f"unknown unit '{name}'{hint}") from None
    return name


_DATASHEET_FLOPS = re.compile(r"(?<![A-Za-z])(?P<prefix>[kKmMgGtTpPeE]?)flops(?![A-Za-z/])", re.IGNORECASE)


def rate_spelling(text: str) -> str:
    """A rate as datasheets write it, in the registry's units: "67 TFLOPS" → "67 TFLOP/s".

    Only where a rate is expected (`workbench.model.analysis.as_rate`, the device
    panel's cells): in a general expression "FLOPS" might be a plural amount,
    so the scratchpad itself still refuses it with a hint. A datasheet's
    prefix letter is a capital whatever its case ("mflops" is mega, not milli).
    """

    def spelled(match: re.Match[str]) -> str:
        prefix = match["prefix"]
        return (prefix if prefix in ("", "k") else prefix.upper()) + "FLOP/s"

    return _DATASHEET_FLOPS.sub(spelled, text)


def parse_quantity(text: str, require_number: bool = False) -> "pint.Quantity":
    """Parse a quantity expression such as '2.5 TB/s' or '137.4 GFLOP / (100 TFLOP/s)'.

    With `require_number`, a bare unit ('TFLOP/s') is refused: a figure the
    user enters must say how much, not silently mean one of the unit.
    """
    if not isinstance(text, str):
        raise UnitError("a quantity must be text such as '2.5 TB/s'")
    if len(text) > MAX_EXPRESSION:
        raise UnitError(f"expression longer than {MAX_EXPRESSION} characters")
    try:
        parser = _Parser(text)
        value = parser._checked(parser.parse())  # unknown units are named first
        if require_number and not any(token.kind == "number" for token in parser.tokens):
            raise UnitError(f"'{shown(text.strip())}' has no number; write the figure with its unit, e.g. 100 TFLOP/s")
        return value
    except UnitError:
        raise
    except (OverflowError, ZeroDivisionError, ValueError, RecursionError) as exc:
        raise UnitError(f"cannot compute '{shown(text)}': {exc}") from None


def convert(value: "pint.Quantity", to: str) -> "pint.Quantity":
    """Express `value` in the unit `to`, or raise naming the dimensions it has and needs."""
    target = parse_quantity(to)
    if target.magnitude != 1:
        raise UnitError(f"convert to a unit such as ms or TB/s, not '{shown(to)}'")
    if value.dimensionality != target.dimensionality:
        raise UnitError(
            f"cannot express {format_quantity(value)} in {shown(to)}: it has dimensions "
            f"{dimension_words(value.dimensionality)}, {shown(to)} has {dimension_words(target.dimensionality)}"
        )
    return value.to(target.units)


def evaluate(text: str, to: str | None = None) -> "pint.Quantity":
    """Compute a unit expression; with `to`, convert the result (dimensions must agree)."""
    value = parse_quantity(text)
    try:
        result = simplify(value) if to is None else convert(value, to)
    except OverflowError:
        result = None
    magnitude = getattr(result, "magnitude", None)
    try:
        finite = magnitude is not None and math.isfinite(float(magnitude))
    except (OverflowError, TypeError, ValueError):
        finite = False
    if not finite:  # 1e300 s in ps: each part fits a float, the converted figure does not
        raise UnitError(f"'{shown(text)}' is too large to express{f' in {shown(to)}' if to else ''} (beyond about 1.8e308)")
    return result


_PLAIN_UNIT = {"[information]": "B", "[computation]": "FLOP", "[time]": "s", "[operation]": "OP", "[cycles]": "cycle"}


def simplify(value: Any) -> Any:
    """Cancel mixed prefixes (GFLOP·s/TFLOP → s): express the value in plain B, FLOP and s."""
    if value.dimensionless:
        return value.to("")
    numerator: list[str] = []
    denominator: list[str] = []
    for dimension, exponent in sorted(dict(value.dimensionality).items()):
        unit = _PLAIN_UNIT.get(dimension)
        if unit is None:
            return value.to_base_units()
        power = float(exponent)
        term = unit if abs(power) == 1 else f"{unit}**{abs(power)!r}"  # exact: B**1.015625 is not B**1.01562
        (numerator if power > 0 else denominator).append(term)
    text = "*".join(numerator) if numerator else "1"
    if denominator:
        text += "/(" + "*".join(denominator) + ")"
    return value.to(text)


def format_result(value: "pint.Quantity", keep_unit: bool = False) -> str:
    """A scratchpad result for people: SI prefixes for the familiar units, exact unit when asked for."""
    from workbench.model.units import (
        format_bandwidth,
        format_bytes,
        format_flop,
        format_flop_rate,
        format_number,
        format_time,
    )

    if keep_unit:
        return format_quantity(value)
    if value.dimensionless:
        return format_number(float(value.magnitude))
    unit = f"{value.units:~P}"
    magnitude = float(value.magnitude)
    formatters: dict[str, Callable[[float], str]] = {
        "s": format_time,
        "B": format_bytes,
        "FLOP": format_flop,
        "FLOP/s": format_flop_rate,
        "B/s": format_bandwidth,
    }
    if unit in formatters:
        return formatters[unit](magnitude)
    return format_quantity(value)
