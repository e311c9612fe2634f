"""Results faster than their own device allows: the one test, and the reasons a reader should check.

A time bound is a floor: a run or a profiled kernel that beats the bound of
the device it ran on by more than its own spread did not happen as
described. `impossible_result()` is the one place that decides so (for the
Measurement table, the plots, reports, the CLI and the Profile tab) and
gathers the likely reasons from `REASON_CHECKS`. A check is a small pure
function of the `Evidence`; another part of the app adds its own with
`register_reason` (an imported number read in the wrong unit, say).

A bound that uses a nominal figure (a stand-in guess such as a CPU's DRAM
bandwidth, which the OS does not report) is not a floor: a result beyond it
gets no verdict, only its percent beside the figure labelled nominal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from workbench.model.devices.catalogue import NOMINAL
from workbench.model.units import format_bytes, format_number
from workbench.records import record

IMPOSSIBLE_FRACTION = 1.05  # bound time / measured time above this (and above 1 at the slow end) is flagged


@dataclass(frozen=True)
class Evidence:
    """What is known about one result beyond its bound: the numbers the reasons are judged from.

    fraction_of_bound: bound time / measured (median) time; slow_fraction: the same at
    the slow end of the spread (p90), None when the result has no spread (a profile).
    """

    fraction_of_bound: float
    slow_fraction: float | None
    device_name: str
    device_stated: bool  # the run or file named its device (not guessed)
    device_note: str  # how the device was matched, when not by its name
    rate_sources: tuple[str, ...]  # where the rates in use came from: datasheet, derived, entered, measured
    nominal_rates: bool  # a rate the bound uses is a nominal stand-in (no verdict then): `uses_nominal_rate`
    limiter: str | None  # "compute" or "memory"
    warm: bool | None  # a warm-mode run (caches not flushed); None when not known
    working_set_bytes: int | None
    cache_bytes: int | None  # the device's L2 (GPU) or last-level cache (CPU)
    declared_bytes: int | None  # compulsory bytes of the declaration
    moved_bytes: float | None  # what the kernel moves: implied traffic of a run, DRAM counters of a profile
    measured_time_s: float | None
    binary: bool = False
    bandwidth_byte_per_s: float | None = None  # the memory rate in use on the device (implied bandwidth checks)
    compute_rate_flop_per_s: float | None = None  # the compute rate in use on the device's path


@dataclass(frozen=True)
class Reason:
    """One way a result can beat its bound, and whether the evidence points at it."""

    name: str
    explanation: str
    evidence: str = ""
    likely: bool = False

    def as_text(self) -> str:
        tail = f" [{self.evidence}]" if self.evidence else ""
        return f"{'likely' if self.likely else 'possible'}: {self.name} — {self.explanation}{tail}"


ReasonCheck = Callable[[Evidence], "Reason | None"]


def _wrong_device(e: Evidence) -> Reason | None:
    if e.device_stated and not e.device_note:
        evidence = f"compared with {e.device_name}, the device the result states"
    else:
        evidence = e.device_note or f"the result does not state its device; compared with {e.device_name}"
    return Reason(
        "wrong device",
        "the bound belongs to another device than the one that ran the kernel",
        evidence,
        likely=not e.device_stated or bool(e.device_note),
    )


def _wrong_rates(e: Evidence) -> Reason | None:
    soft = sorted({s for s in e.rate_sources if s in ("entered", "derived")})
    evidence = []
    if soft:
        evidence.append(f"rate source: {', '.join(soft)}")
    return Reason(
        "wrong rates",
        "a rate in use is below what the device sustains: calibrate, or check an entered figure",
        "; ".join(evidence),
        likely=bool(evidence),
    )


def _served_from_cache(e: Evidence) -> Reason | None:
    if e.limiter == "compute":
        return None
    fits = e.working_set_bytes is not None and e.cache_bytes is not None and e.working_set_bytes <= e.cache_bytes
    evidence = ""
    if e.working_set_bytes is not None and e.cache_bytes is not None:
        relation = "fits in" if fits else "exceeds"
        evidence = (
            f"working set {format_bytes(e.working_set_bytes, e.binary)} {relation} the "
            f"{format_bytes(e.cache_bytes, e.binary)} cache"
        )
    if e.warm:
        evidence = f"warm mode; {evidence}" if evidence else "warm mode"
    return Reason(
        "data served from cache",
        "the bound counts every compulsory byte across memory; a warm working set that fits in the cache "
        "arrives faster (measure in cold mode)",
        evidence,
        likely=fits and e.warm is not False,
    )


def _declaration_mismatch(e: Evidence) -> Reason | None:
    fewer = e.moved_bytes is not None and e.declared_bytes is not None and e.moved_bytes < 0.95 * e.declared_bytes
    evidence = ""
    if fewer and e.moved_bytes is not None and e.declared_bytes:
        evidence = f"the kernel moves {format_number(e.moved_bytes / e.declared_bytes, 3)}× the declared bytes"
    return Reason(
        "declaration does not describe the kernel",
        "the declared sizes, dtype or operation count more work than the kernel does",
        evidence,
        likely=fewer,
    )


REASON_CHECKS: list[ReasonCheck] = [_wrong_device, _wrong_rates, _served_from_cache, _declaration_mismatch]


def register_reason(check: ReasonCheck) -> ReasonCheck:
    """Add a reason check (usable as a decorator); it sees every flagged result's Evidence."""
    if check not in REASON_CHECKS:
        REASON_CHECKS.append(check)
    return check


@dataclass(frozen=True)
class ImpossibleResult:
    """A result beyond its own device's bound, with the reasons to check (likely ones first)."""

    percent_of_bound: float
    device_name: str
    reasons: tuple[Reason, ...]

    @property
    def headline(self) -> str:
        return (
            f"impossible: {format_number(self.percent_of_bound, 3)} % of the bound on {self.device_name}, "
            "faster than the device allows"
        )

    @property
    def likely_reasons(self) -> tuple[Reason, ...]:
        return tuple(r for r in self.reasons if r.likely)

    def as_text(self) -> str:
        """The headline and each reason on its own line."""
        return "\n".join([self.headline, *(f"  {reason.as_text()}" for reason in self.reasons)])



record(Reason)
record(ImpossibleResult, keys={"device_name": "device"})


def is_beyond_bound(fraction_of_bound: float | None, slow_fraction: float | None = None) -> bool:
    """True when a result beats its bound by more than 5 % and, where it has a spread, even at its slow end."""
    if fraction_of_bound is None or fraction_of_bound <= IMPOSSIBLE_FRACTION:
        return False
    return slow_fraction is None or slow_fraction > 1.0


def uses_nominal_rate(rate_sources: "tuple[str, ...]") -> bool:
    """True when a bound rests on a nominal figure (a guess, not a datasheet's or a measurement's)."""
    return NOMINAL in rate_sources


def impossible_result(evidence: Evidence) -> ImpossibleResult | None:
    """The flag and its reasons for a result beyond its own device's bound, or None for a possible one.

    None too for a bound that rests on a nominal figure: a guess is not a floor.
    """
    if evidence.nominal_rates or not is_beyond_bound(evidence.fraction_of_bound, evidence.slow_fraction):
        return None
    reasons = [reason for check in REASON_CHECKS if (reason := check(evidence)) is not None]
    reasons.sort(key=lambda reason: not reason.likely)
    return ImpossibleResult(100.0 * evidence.fraction_of_bound, evidence.device_name, tuple(reasons))
