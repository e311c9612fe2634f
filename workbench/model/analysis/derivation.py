"""The derivation: each figure of an analysis as a line of arithmetic with its numbers, and the notes.

Formatting every figure with its unit costs far more than computing it, and
most callers (sweeps, comparisons, the measure table) never read the text, so
`Analysis.steps` and `Analysis.notes` are built here on first access from the
figures `analyze()` already holds. Nothing here can fail on a declaration
analyze() accepted: every check runs in analyze() before the result exists.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from workbench.model.analysis.terms import COMPUTE, HIERARCHY, LINK, MEMORY, MEMORY_TERMS, MLP, Term, side_times
from workbench.model.devices.interfaces import HBM, HOST
from workbench.model.ops.base import FlopTerm, Tensor
from workbench.records import record
from workbench.model.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_rate,
    format_int,
    format_intensity,
    format_number,
    format_time,
)

if TYPE_CHECKING:
    from workbench.model.analysis.link_term import LinkTerm
    from workbench.model.analysis.rates import Overlap
    from workbench.model.devices.catalogue import Rate
    from workbench.model.implementations import PhysicalWork


class Analysis(Protocol):
    """The figures of an analysis the derivation reads (`model.Analysis` has them): named here so that this module
    needs nothing from the one that uses it."""

    @property
    def basis(self) -> Any: ...  # model.Basis: the workload, device and unit choices the words are built from
    @property
    def convention(self) -> str: ...
    @property
    def flop(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def path(self) -> str: ...
    @property
    def device_name(self) -> str | None: ...
    @property
    def compute_rate(self) -> "Rate | None": ...
    @property
    def bandwidth(self) -> "Rate | None": ...
    @property
    def compute_time(self) -> float | None: ...
    @property
    def memory_time(self) -> float | None: ...
    @property
    def overlap(self) -> "Overlap": ...
    @property
    def bound_time(self) -> float | None: ...
    @property
    def limiter(self) -> str | None: ...
    @property
    def interface(self) -> str: ...
    @property
    def memory_name(self) -> str: ...
    @property
    def link(self) -> "LinkTerm | None": ...
    @property
    def terms(self) -> tuple[Term, ...]: ...
    @property
    def limiter_term(self) -> str | None: ...
    @property
    def physical(self) -> "PhysicalWork | None": ...
    @property
    def missing_rate(self) -> str | None: ...
    @property
    def memory_side_term(self) -> Term | None: ...
    def term(self, name: str) -> Term | None: ...

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


@dataclass(frozen=True)
class DerivationLine:
    """One line of the derivation: what is computed, with the numbers, and the result with its unit."""

    label: str
    expression: str
    result: str
    relation: str = "="  # "⇒" where the result is a conclusion rather than a value

    @property
    def body(self) -> str:
        """Expression and result as one line: '2·M·N·K = … = 137,438,953,472 FLOP'."""
        return f"{self.expression} {self.relation} {self.result}" if self.expression else self.result

    def as_text(self) -> str:
        return f"{self.label}: {self.body}"


record(DerivationLine, leave_out=("relation",))  # the relation is in `body`'s words, not in `calc --json`


def substitute(formula: str, values: Mapping[str, Any]) -> str:
    """'2·M·N·K' with M=N=K=4096 → '2 × 4096 × 4096 × 4096'."""
    def number(match: re.Match[str]) -> str:
        value = values.get(match.group(0))
        return match.group(0) if value is None else format_int(value)

    text = _SYMBOL.sub(number, formula)
    return text.replace("·", " × ")


def convention_words(convention: str) -> str:
    return "one multiply-add = 2 FLOP" if convention == "fma2" else "one multiply-add = 1 FLOP (MAC)"


# -- the work and the compulsory bytes -------------------------------------------


def _term_step(term: FlopTerm, convention: str, values: Mapping[str, Any]) -> DerivationLine:
    formula = term.formula_for(convention)
    flop = term.flop(convention)
    return DerivationLine(
        f"Work: {term.name}",
        f"{formula} = {substitute(formula, values)}",
        f"{format_int(flop)} FLOP ≈ {format_flop(flop)}",
    )


def _element_size(tensor: Tensor) -> str:
    bits = tensor.dtype.bits
    return f"{bits // 8} B" if bits % 8 == 0 else f"{bits} bit / 8"


def _tensor_step(tensor: Tensor, binary: bool) -> DerivationLine:
    symbols = "·".join(tensor.shape_symbols) or "1"
    numbers = " × ".join(format_int(extent) for extent in tensor.shape) or "1"
    passes = ""
    if tensor.crossings > 1:
        passes = f" × {tensor.crossings} ({tensor.role})"
    label = f"Bytes: {tensor.name}[{', '.join(tensor.shape_symbols)}] {tensor.dtype.name}, {tensor.role}"
    size = _element_size(tensor)
    whole, spare_bits = divmod(tensor.elements * tensor.dtype.bits, 8)
    if spare_bits:  # sub-byte elements that do not fill the last byte: the tensor takes whole bytes, rounded up
        exact = f"{format_int(whole)}{str(spare_bits / 8)[1:]}"
        rounded = f"{exact} B rounded up to whole bytes" if not passes else f"({exact} B rounded up to {format_int(whole + 1)} B){passes}"
        expression = f"⌈{symbols} × {size}⌉{passes} = ⌈{numbers} × {size}⌉{passes} = {rounded}"
    else:
        expression = f"{symbols} × {size}{passes} = {numbers} × {size}{passes}"
    return DerivationLine(label, expression, f"{format_int(tensor.bytes)} B ≈ {format_bytes(tensor.bytes, binary)}")


def _work_steps(a: "Analysis") -> list[DerivationLine]:
    workload, convention = a.basis.workload, a.convention
    values = dict(workload.values)
    steps = [_term_step(term, convention, values) for term in workload.terms]
    if len(workload.terms) > 1:
        steps.append(
            DerivationLine(
                "Work: total",
                " + ".join(f"{format_int(term.flop(convention))}" for term in workload.terms) + " FLOP",
                f"{format_int(a.flop)} FLOP ≈ {format_flop(a.flop)}",
            )
        )
    elif not workload.terms:
        steps.append(DerivationLine("Work", "", "0 FLOP (no arithmetic: pure data movement)"))
    return steps


def _byte_steps(a: "Analysis") -> list[DerivationLine]:
    binary, workload = a.basis.binary, a.basis.workload
    steps = [_tensor_step(tensor, binary) for tensor in workload.tensors]
    steps.append(
        DerivationLine(
            f"Bytes: compulsory traffic, {a.interface}",
            " + ".join(f"{format_int(t.bytes)} B" for t in workload.tensors),
            f"{format_int(a.bytes)} B ≈ {format_bytes(a.bytes, binary)}",
        )
    )
    intensity = a.flop / a.bytes if a.bytes else math.inf
    steps.append(
        DerivationLine(
            "Arithmetic intensity",
            f"{format_int(a.flop)} FLOP / {format_int(a.bytes)} B",
            format_intensity(intensity) + _fraction_hint(a.flop, a.bytes),
        )
    )
    return steps


def _fraction_hint(flop: int, total_bytes: int) -> str:
    """'(= 1/12)' when the intensity is a simple fraction below one, as the vector add's is."""
    if not total_bytes or flop == 0 or flop >= total_bytes:
        return ""
    ratio = Fraction(flop, total_bytes)
    return f" (= {ratio.numerator}/{ratio.denominator})" if ratio.denominator <= 1000 else ""


# -- logical and physical work side by side --------------------------------------


def _physical_steps(a: "Analysis") -> list[DerivationLine]:
    """Logical beside physical FLOP and bytes per interface, for an implementation model other than compulsory."""
    physical = a.physical
    if physical is None or physical.implementation == "compulsory":
        return []
    from workbench.model.devices.interfaces import interface

    binary = a.basis.binary
    logical_flop, physical_flop = int(physical.logical_flop), int(physical.physical_flop)
    extra = physical_flop - logical_flop
    steps = [
        DerivationLine(
            f"Implementation impl={physical.implementation}",
            "",
            "logical work (the algorithm's) beside physical work (what this kernel does); the terms below use the physical",
        ),
        DerivationLine(
            "Work: logical | physical",
            f"{format_int(logical_flop)} FLOP | {format_int(physical_flop)} FLOP",
            f"+{format_int(extra)} FLOP (+{format_number(100 * extra / logical_flop, 3)} %) computed and discarded"
            if extra and logical_flop else "physical = logical",
            relation="⇒",
        ),
    ]
    logical_bytes = int(physical.logical_bytes)
    for key, moved in physical.bytes_by_interface.items():
        ratio = f"{format_number(int(moved) / logical_bytes, 4)}× the compulsory bytes" if logical_bytes else "no compulsory bytes"
        steps.append(
            DerivationLine(
                f"Bytes {interface(key).name_on(a.memory_name)}: logical | physical",
                f"{format_int(logical_bytes)} B | {format_int(int(moved))} B ≈ {format_bytes(int(moved), binary)}",
                ratio,
                relation="⇒",
            )
        )
    return steps


# -- time terms, bounds and the limiter ------------------------------------------


def _term_time_step(term: Term, a: "Analysis") -> DerivationLine:
    """'Transfer time bound (shared memory → registers, derived): 100.7 MB / (33.45 TB/s) = 3.009 µs'."""
    binary = a.basis.binary
    assert term.rate is not None and term.time_s is not None
    if term.name == HOST:
        what = f"Host ↔ device time bound ({a.basis.host_link_name or 'host link'}, per direction, {term.rate.source})"
    elif term.name == MLP:
        what = f"Memory-level-parallelism time bound ({term.title}, {term.rate.source})"
    else:
        what = f"Transfer time bound ({term.title}, {term.rate.source})"
    return DerivationLine(what, f"{format_bytes(term.amount, binary)} / ({format_bandwidth(term.rate.value, binary)})", format_time(term.time_s))


def _bound_steps(a: "Analysis") -> list[DerivationLine]:
    """The compute and HBM time bounds (and each inner interface's), then the bounds over those sides."""
    binary, memory = a.basis.binary, a.memory_name
    compute_rate, hbm = a.compute_rate, a.bandwidth
    compute_time, memory_time, used_path = a.compute_time, a.memory_time, a.path
    compute = next(term for term in a.terms if term.name == COMPUTE)
    steps: list[DerivationLine] = []
    quantization = a.physical.quantization if a.physical is not None else None
    if compute_rate is not None and compute_time is not None and quantization is not None and quantization.wave_flop is not None:
        steps.append(_wave_step(a, quantization))
    elif compute_rate is not None and compute_time is not None:
        steps.append(
            DerivationLine(
                f"Compute time bound ({used_path}, {compute_rate.source})",
                f"{format_flop(compute.amount)} / ({format_flop_rate(compute_rate.value)})",
                format_time(compute_time),
            )
        )
    elif a.missing_rate is not None:  # the device has no rate for this path (analyze_partial)
        steps.append(DerivationLine(f"Compute time bound ({a.path})", "", f"none: {a.missing_rate}"))
    else:
        steps.append(DerivationLine("Compute time bound", "", "needs a compute rate: choose a device or enter one"))
    hbm_term = next(term for term in a.terms if term.name == HBM)
    if hbm is not None and memory_time is not None:
        steps.append(
            DerivationLine(
                f"Memory time bound ({memory}, {hbm.source})",
                f"{format_bytes(hbm_term.amount, binary)} / ({format_bandwidth(hbm.value, binary)})",
                format_time(memory_time),
            )
        )
    else:
        steps.append(DerivationLine("Memory time bound", "", "needs a bandwidth: choose a device or enter one"))
    inner = [term for term in a.terms if term.name in MEMORY_TERMS and term.name != HBM]
    steps += _mlp_steps(a)
    steps += [_term_time_step(term, a) for term in inner if term.time_s is not None]
    if compute_rate is None or hbm is None or compute_time is None or memory_time is None:
        return steps
    return steps + _compute_memory_bound_steps(a, inner)


def _wave_step(a: "Analysis", q: Any) -> DerivationLine:
    """'Compute time bound, whole waves': waves × one tile's time at the per-slot rate (implementations.wave_time)."""
    from workbench.model.implementations import tile_time

    rate = a.compute_rate
    assert rate is not None and a.compute_time is not None
    slots = f"{q.sm_count} SMs" if q.ctas_per_sm == 1 else f"{q.sm_count} SMs × {q.ctas_per_sm}"
    return DerivationLine(
        f"Compute time bound, whole waves ({a.path}, {rate.source})",
        f"{format_int(q.waves)} wave{'s' if q.waves != 1 else ''} × {format_flop(q.tile_flop)} a tile / "
        f"({format_flop_rate(rate.value)} ÷ {slots}) = {format_int(q.waves)} × {format_time(tile_time(q, rate.value))}",
        format_time(a.compute_time),
    )


def _mlp_steps(a: "Analysis") -> list[DerivationLine]:
    """Little's law for each kernel launch: threads resident per SM, bytes in flight, the read rate, the achievable bandwidth."""
    from workbench.model.analysis.mlp import little, noted, shortfall

    term = a.term(MLP)
    hbm = a.term(HBM)
    if term is None or a.physical is None or hbm is None:
        return []
    found = little(a.physical.launches, a.basis.device, hbm.rate)
    if found is None:
        return []
    binary, latency = a.basis.binary, found.latency
    many = len(found.kernels) > 1
    steps: list[DerivationLine] = []
    for kernel in found.kernels:
        launch = kernel.launch
        who = f" ({launch.title})" if many else ""
        per_block = launch.threads_per_block
        limit = f"min({found.max_blocks_per_sm} blocks, {format_int(found.max_threads_per_sm)} ÷ {per_block} threads) × {per_block} threads"
        if kernel.threads_per_sm < kernel.blocks_per_sm * per_block:
            limit = f"⌈{format_int(launch.threads)} threads ÷ {found.sm_count} SMs⌉ (fewer than {format_int(kernel.blocks_per_sm * per_block)} resident)"
        steps += [
            DerivationLine(f"Little's law{who}: threads resident per SM", limit, f"{format_int(kernel.threads_per_sm)} threads"),
            DerivationLine(
                f"Bytes in flight per SM{who}",
                f"{format_int(kernel.threads_per_sm)} threads × {launch.loads_in_flight} load{'s' if launch.loads_in_flight != 1 else ''} × {launch.bytes_per_load} B",
                f"{format_int(kernel.in_flight_per_sm)} B ≈ {format_bytes(kernel.in_flight_per_sm, binary)}",
            ),
            DerivationLine(
                f"Reads the loads in flight allow{who} ({a.memory_name} loaded latency, {latency.origin})",
                f"{found.sm_count} SMs × {format_bytes(kernel.in_flight_per_sm, binary)} ÷ {format_time(latency.seconds)}",
                format_bandwidth(kernel.read_rate, binary),
            ),
            DerivationLine(
                f"Bytes in flight Little's law needs per SM{who}",
                f"{format_bandwidth(found.rate.value, binary)} × {format_time(latency.seconds)} × "
                f"{format_bytes(launch.read_bytes, binary)} read ÷ {format_bytes(launch.bytes, binary)} ÷ {found.sm_count} SMs",
                f"{format_bytes(kernel.needed_per_sm, binary)}",
            ),
            DerivationLine(
                f"Achievable bandwidth{who}",
                f"min({format_bandwidth(found.rate.value, binary)}, {format_bandwidth(kernel.read_rate, binary)} × "
                f"{format_bytes(launch.bytes, binary)} ÷ {format_bytes(launch.read_bytes, binary)} read)",
                format_bandwidth(kernel.achievable, binary),
            ),
        ]
        why = shortfall(found, kernel, binary)
        if why and noted(found, kernel):
            steps.append(DerivationLine(f"Why below the memory's roof{who}", "", why))
        if many:
            steps.append(DerivationLine(f"Time{who}", f"{format_bytes(launch.bytes, binary)} / ({format_bandwidth(kernel.achievable, binary)})", format_time(kernel.time_s)))
    return steps


def _compute_memory_bound_steps(a: "Analysis", inner: list[Term]) -> list[DerivationLine]:
    """Ridge, the compute/memory bounds under full, no and partial overlap, and the limiter between the two sides."""
    binary, memory, combine = a.basis.binary, a.memory_name, a.overlap
    compute_rate, hbm, compute_time, memory_time = a.compute_rate, a.bandwidth, a.compute_time, a.memory_time
    assert compute_rate is not None and hbm is not None and compute_time is not None and memory_time is not None
    steps: list[DerivationLine] = []
    memory_side = memory_time
    memory_title = memory
    if inner:
        hierarchy = [term for term in a.terms if term.name in MEMORY_TERMS]
        slowest = a.memory_side_term
        assert slowest is not None and slowest.time_s is not None
        memory_side = slowest.time_s
        memory_title = memory if slowest.name == HBM else slowest.title
        steps.append(
            DerivationLine(
                "Memory side (the slowest interface)",
                f"max({', '.join(format_time(term.time_s or 0.0) for term in hierarchy)})",
                f"{format_time(memory_side)} ({slowest.title})",
            )
        )
    steps.append(
        DerivationLine(
            "Ridge point",
            f"{format_flop_rate(compute_rate.value)} / ({format_bandwidth(hbm.value, binary)})",
            format_intensity(compute_rate.value / hbm.value),
        )
    )
    tc, tm = format_time(compute_time), format_time(memory_side)
    steps.append(DerivationLine("Bound, full overlap", f"max({tc}, {tm})", format_time(max(compute_time, memory_side))))
    steps.append(DerivationLine("Bound, no overlap", f"{tc} + {tm}", format_time(compute_time + memory_side)))
    if combine.label not in ("full", "none"):
        f = format_number(combine.fraction)
        steps.append(
            DerivationLine(
                f"Bound, overlap f = {f}",
                f"max({tc}, {tm}) + (1 − {f}) × min({tc}, {tm})",
                format_time(combine.combine(compute_time, memory_side)),
            )
        )
    limiter = COMPUTE if compute_time >= memory_side else MEMORY
    relation = "≥" if limiter == COMPUTE else "<"
    steps.append(
        DerivationLine(
            "Limiter",
            f"compute {tc} {relation} memory {tm}",
            f"{limiter}-limited" + (f" ({a.path})" if limiter == COMPUTE else f" ({memory_title})"),
            relation="⇒",
        )
    )
    return steps


def _host_steps(a: "Analysis") -> list[DerivationLine]:
    """The host ↔ device term of a declaration whose tensors live in host memory (resident=host)."""
    host = next((term for term in a.terms if term.name == HOST), None)
    if host is None:
        return []
    if host.time_s is None:
        return [DerivationLine("Host ↔ device time bound", "", f"needs a host link: {a.device_name or 'no device'} names none")]
    steps = [_term_time_step(host, a)]
    if a.bound_time is None or a.link is not None:
        return steps  # a collective's link block below names every term
    steps += _sides_block(a, "the host copies")
    return steps


def _sides_block(a: "Analysis", what: str) -> list[DerivationLine]:
    """Full and no-overlap bounds over every side, and the limiter, once terms beyond compute and memory exist."""
    sides = side_times(a.terms)
    times = [time for _side, time, _term in sides]
    shown = ", ".join(format_time(time) for time in times)
    steps = [
        DerivationLine(f"Bound with {what}, full overlap", f"max({shown})", format_time(max(times))),
        DerivationLine(f"Bound with {what}, no overlap", " + ".join(format_time(time) for time in times), format_time(sum(times))),
    ]
    if a.link is not None and a.link.algbw is not None and a.bound_time is not None:
        binary, link = a.basis.binary, a.link
        steps.append(DerivationLine("algbw (nccl-tests) at the bound", f"S / t = {format_bytes(link.message_bytes, binary)} / {format_time(a.bound_time)}", format_bandwidth(link.algbw, binary)))
        steps.append(
            DerivationLine(
                "busbw (nccl-tests) at the bound",
                f"algbw × {link.bus_factor_text} = {format_bandwidth(link.algbw, binary)} × {format_number(float(link.bus_factor))}",
                format_bandwidth(link.busbw or 0.0, binary),
            )
        )
    term = next(term for term in a.terms if term.name == a.limiter_term)
    named = {LINK: term.title, COMPUTE: "compute", MEMORY: "memory"}[a.limiter or MEMORY]
    steps.append(DerivationLine(f"Limiter with {what}", f"the longest term is {format_time(max(times))}", f"{a.limiter}-limited ({named})", relation="⇒"))
    return steps


def _link_steps(a: "Analysis") -> list[DerivationLine]:
    traffic = a.basis.workload.link_traffic
    if traffic is None:
        return []
    binary = a.basis.binary
    per_rank, message = int(traffic.bytes), int(traffic.message_bytes)
    steps = [
        DerivationLine(
            f"Link bytes per rank ({traffic.algorithm})",
            f"{traffic.formula} = {substitute(traffic.formula, {'ranks': traffic.ranks, 'S': message})} B",
            f"{format_int(per_rank)} B ≈ {format_bytes(per_rank, binary)}",
        )
    ]
    link = a.link
    if link is None:
        steps.append(DerivationLine("Link time bound", "", "needs a link: choose a device or name one (link=nvlink4)"))
        return steps
    steps.append(
        DerivationLine(
            f"Link time bound ({link.link.name}, per direction, {link.link.origin})",
            f"{format_bytes(per_rank, binary)} / ({format_bandwidth(link.link.per_direction, binary)})",
            format_time(link.transfer_time),
        )
    )
    latency = link.latency
    steps_text = f"{format_int(traffic.latency_steps)} steps × {format_time(traffic.latency_per_step_s) if latency else '0 s'}"
    steps.append(DerivationLine("Link latency term", steps_text, format_time(latency) if latency else "0 s (off: set latency_us to add α per step)"))
    if a.bound_time is None:
        return steps
    what = "the link" if not any(term.name == HOST for term in a.terms) else "the host copies and the link"
    return steps + _sides_block(a, what)


def derivation_steps(a: "Analysis") -> tuple[DerivationLine, ...]:
    """Every step of the derivation, in reading order: work, bytes, logical vs physical, terms, bounds, limiter."""
    return tuple(_work_steps(a) + _byte_steps(a) + _physical_steps(a) + _bound_steps(a) + _host_steps(a) + _link_steps(a))


def derivation_notes(a: "Analysis") -> tuple[str, ...]:
    """The notes under the derivation: convention, the operation's own notes, the traffic model, fallbacks, L2 fit."""
    basis, convention = a.basis, a.convention
    workload, dev, binary = basis.workload, basis.device, basis.binary
    notes = [f"FLOP convention {convention}: {convention_words(convention)}"]
    notes += list(workload.notes)
    notes.append(f"bytes: compulsory {a.interface}; each input read once, each output written once")
    if a.physical is not None and a.physical.implementation != "compulsory":
        notes += [f"impl={a.physical.implementation}: {sentence}" for sentence in a.physical.assumptions]
    mlp = a.term(MLP)
    if mlp is not None and mlp.rate is not None:
        notes.append(
            "memory-level parallelism (Little's law): bandwidth ≤ bytes in flight ÷ latency; only loads are in flight "
            "(stores are posted), the writes go out beside the reads at their pace, and no kernel beats the memory's rate; "
            f"the achievable bandwidth is {mlp.rate.citation}"
        )
    if any(term.name == HOST for term in a.terms):
        notes.append(
            "resident=host: the tensors live in host memory, so the compulsory bytes also cross the host link once "
            "(inputs copied in, outputs copied back, one direction at a time)"
        )
    if a.compute_rate is not None and a.path != workload.path and not basis.rate_entered:
        notes.append(f"{dev.name if dev else 'device'} has no {workload.path} rate; the {a.path} rate is used")
    if dev is not None and dev.l2_bytes and workload.footprint_bytes <= dev.l2_bytes:
        notes.append(
            f"the working set ({format_bytes(workload.footprint_bytes, binary)}) fits in L2 "
            f"({format_bytes(dev.l2_bytes, binary)}): warm runs may beat the {a.memory_name} bound"
        )
    return tuple(notes)


__all__ = ["DerivationLine", "convention_words", "derivation_notes", "derivation_steps", "substitute"]
