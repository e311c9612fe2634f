"""Time terms: an amount of work over a named resource, divided by that resource's rate.

The chapter's rule, "operation time ≥ work / sustained rate", applied once per
resource the operation uses:

- FLOP on the instruction path (`compute`);
- bytes across each named interface the device has a rate for (`hbm`, `l2`,
  `smem`: HBM → L2 → SM → registers; devices/interfaces.py), under the
  compulsory model the compulsory bytes once each, under an implementation
  model (implementations.py) the bytes that model says cross each;
- bytes between host and device memory (`host`), only when the declaration
  says its tensors live on the host (`resident=host`);
- a collective's bytes per rank over a link between chips (`link`).

How the terms combine (docs/terms.md has the worked figures):

    The interfaces of the memory hierarchy (hbm, l2, smem) are stages the
    same bytes pass one after another, and the hardware streams them
    concurrently, so together they take as long as the slowest of them: the
    memory side is max(hbm, l2, smem). The overlap setting says how the
    sides overlap one another — compute, memory, host, link:

        bound = max(sides) + (1 − f)·(sum(sides) − max(sides))

    full overlap (f = 1) is the longest side, none (f = 0) their sum; for
    compute and memory alone it is the familiar max(tc, tm) + (1 − f)·min(tc, tm).

The limiter is the longest side (ties go to link, host, compute, then memory),
and within the memory side the slowest interface names the limiting term:
`limiter` is "compute" | "memory" | "link", and `limiter_term` names the term
("hbm", "smem", "host", ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from workbench.model.devices.catalogue import Rate
from workbench.records import record
from workbench.model.devices.interfaces import HBM, HOST, L2, SMEM, interface

COMPUTE = "compute"
MEMORY = "memory"
LINK = "link"  # a collective whose bytes over a link between chips take longest (and the host link)

TERM_COMPUTE = "compute"  # the name of the FLOP term
TERM_LINK = "link"  # the name of a collective's link term

COMPUTE_KIND = "compute"
TRANSFER_KIND = "transfer"

HIERARCHY = (HBM, L2, SMEM)  # the interfaces of the memory side, outermost first
MLP = "mlp"  # memory-level parallelism: HBM bytes at the rate the loads in flight allow (analysis/mlp.py)
MEMORY_TERMS = (*HIERARCHY, MLP)  # every term on the memory side

# Sides in the order their times are summed, and the limiter each gives.
_SIDES = (COMPUTE, MEMORY, HOST, LINK)
_LIMITER_OF_SIDE = {COMPUTE: COMPUTE, MEMORY: MEMORY, HOST: LINK, LINK: LINK}
_TIE_ORDER = (LINK, HOST, COMPUTE, MEMORY)  # who is named when two sides take exactly as long


@dataclass(frozen=True)
class Term:
    """One time term: `amount` `unit` over `resource`, at `rate`, taking `time_s` (None without a rate)."""

    name: str  # "compute", "hbm", "l2", "smem", "host", "link"
    kind: str  # "compute" | "transfer"
    resource: str  # the instruction path ("fp16_tc"), the interface key ("hbm") or the link key ("nvlink4")
    title: str  # the resource in words: "fp16_tc path", "HBM → L2", "NVLink 4"
    amount: int  # FLOP or bytes
    unit: str  # "FLOP" | "B"
    rate: Rate | None
    rate_unit: str  # "FLOP/s" | "B/s"
    time_s: float | None  # amount / rate (a link term adds its latency steps)

    @property
    def side(self) -> str:
        """Which side of the bound the term belongs to: compute, memory (the hierarchy), host or link."""
        if self.kind == COMPUTE_KIND:
            return COMPUTE
        if self.name in MEMORY_TERMS:
            return MEMORY
        return HOST if self.name == HOST else LINK

    @property
    def limiter(self) -> str:
        """The limiter value this term gives when it limits: compute, memory or link."""
        return _LIMITER_OF_SIDE[self.side]

    @property
    def source(self) -> str | None:
        """Where the rate comes from: datasheet, derived, measured or entered (None without a rate)."""
        return self.rate.source if self.rate is not None else None


def _rate_value(rate: Rate | None) -> float | None:
    return rate.value if rate is not None else None


def _rate_origin(term: Term) -> dict[str, Any]:
    return {"source": term.source, "citation": term.rate.citation if term.rate is not None else None, "limiter": term.limiter}


# the rate as its figure, with where it comes from and the limiter the term gives after the time
record(Term, dump={"rate": _rate_value}, after={"time_s": _rate_origin})


def compute_term(path: str, flop: int, rate: Rate | None, quantization: Any = None) -> Term:
    """FLOP on the instruction path; a tiled kernel's waves (`quantization` with waves) time it in whole waves.

    Under wave quantization the time is waves × one tile's time at the per-SM-slot rate
    (implementations.wave_time), never less than FLOP / rate; the amount stays the physical FLOP.
    """
    time = flop / rate.value if rate is not None else None
    if rate is not None and quantization is not None:
        from workbench.model.implementations import wave_time

        waved = wave_time(quantization, rate.value)
        time = time if waved is None else waved
    return Term(TERM_COMPUTE, COMPUTE_KIND, path, f"{path} path", flop, "FLOP", rate, "FLOP/s", time)


def transfer_term(key: str, amount: int, rate: Rate | None, memory_name: str = "HBM") -> Term:
    """Bytes across the registered interface `key` (its name on a device whose memory is `memory_name`)."""
    time = amount / rate.value if rate is not None else None
    return Term(key, TRANSFER_KIND, key, interface(key).name_on(memory_name), amount, "B", rate, "B/s", time)


def link_term(key: str, title: str, amount: int, rate: Rate, time_s: float) -> Term:
    """A collective's bytes per rank over a link; `time_s` includes the latency steps."""
    return Term(TERM_LINK, TRANSFER_KIND, key, title, amount, "B", rate, "B/s", time_s)


@dataclass(frozen=True)
class Bounds:
    """The combined bound of a set of terms and what limits it (None when some term has no time)."""

    full: float | None
    none: float | None
    bound: float | None
    limiter: str | None
    limiter_term: str | None


def side_times(terms: Sequence[Term]) -> list[tuple[str, Any, Term]]:
    """[(side, time, the term that sets it)] in summing order; the memory side is its slowest interface.

    Works on float times and, in sweeps, on numpy arrays of times (the term
    given is then the side's first: a sweep names no single limiting term).
    """
    sides: list[tuple[str, Any, Term]] = []
    for side in _SIDES:
        members = [term for term in terms if term.side == side]
        if not members:
            continue
        time, slowest = members[0].time_s, members[0]
        for term in members[1:]:
            time, slowest = _slower(time, slowest, term)
        sides.append((side, time, slowest))
    return sides


def memory_side(terms: Sequence[Term]) -> Term | None:
    """The term that sets the memory side: its slowest interface with a time (HBM on a tie; None without one).

    The one answer the derivation, the calculator panel and the limiter share."""
    timed = [term for term in terms if term.side == MEMORY and term.time_s is not None]
    return side_times(timed)[0][2] if timed else None


def _slower(time: Any, slowest: Term, term: Term) -> tuple[Any, Term]:
    if isinstance(time, float) and isinstance(term.time_s, float):
        return (term.time_s, term) if term.time_s > time else (time, slowest)
    import numpy as np

    return np.maximum(time, term.time_s), slowest  # arrays (sweeps): the side's time; no single term is named


def combine(terms: Sequence[Term], overlap: Any) -> Bounds:
    """Full, none and chosen-overlap bounds over the sides of `terms`, and the limiter and limiting term."""
    if not terms or any(term.time_s is None for term in terms):
        return Bounds(None, None, None, None, None)
    sides = side_times(terms)
    times = [time for _side, time, _term in sides]
    full = max(times)
    none = sum(times)
    bound = overlap.combine_all(times)
    side, _time, term = sides[_longest_side(sides)]
    return Bounds(full, none, bound, _LIMITER_OF_SIDE[side], term.name)


def _tie_ordered(sides: Sequence[tuple[str, Any, Term]]) -> list[int]:
    """Indices of `sides` in the order ties are settled: link, host, compute, then memory."""
    return sorted(range(len(sides)), key=lambda index: _TIE_ORDER.index(sides[index][0]))


def _longest_side(sides: Sequence[tuple[str, Any, Term]]) -> int:
    """Index of the side that limits: the longest, a tie going to the side earliest in the tie order."""
    return max(_tie_ordered(sides), key=lambda index: sides[index][1])  # max keeps the first of equals


def limiters(sides: Sequence[tuple[str, Any, Term]]) -> Any:
    """The limiter at every point of a sweep: side_times() over arrays → an array of "compute" | "memory" | "link".

    The rule combine() names one operation's limiter by — the longest side,
    ties going to link, host, compute, then memory — applied point by point:
    numpy's argmax keeps the first of equal maxima, as max() does. A point
    whose times are NaN (refused) gets the tie order's first side: the sweep
    masks those.
    """
    import numpy as np

    order = _tie_ordered(sides)
    longest = np.argmax(np.vstack([np.asarray(sides[index][1], dtype=np.float64) for index in order]), axis=0)
    names = np.array([_LIMITER_OF_SIDE[sides[index][0]] for index in order], dtype=object)
    return names[longest]


__all__ = [
    "Bounds",
    "COMPUTE",
    "COMPUTE_KIND",
    "HIERARCHY",
    "LINK",
    "MEMORY",
    "MEMORY_TERMS",
    "MLP",
    "TRANSFER_KIND",
    "Term",
    "combine",
    "compute_term",
    "limiters",
    "link_term",
    "memory_side",
    "side_times",
    "transfer_term",
]
