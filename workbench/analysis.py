"""Work, compulsory traffic, intensity, time bounds, overlap, limiter and the derivation.

`analyze()` is the core call: the CLI's JSON, the GUI's calculator panel and
the session file all read the one `Analysis` it returns. Counts are exact
Python ints; rates and times are floats in base units (FLOP/s, B/s, s); units
are attached when figures are formatted, so every displayed figure has one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

from workbench.declare import Declaration, parse
from workbench.devices.catalogue import BANDWIDTH, ENTERED, Device, Rate, find_device
from workbench.devices.links import Link
from workbench.errors import DeclarationError, UnitError, WorkbenchError
from workbench.ops.base import CONVENTIONS, FlopTerm, LinkTraffic, Param, Tensor, Workload
from workbench.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_rate,
    format_int,
    format_intensity,
    format_number,
    format_time,
)

COMPUTE = "compute"
MEMORY = "memory"
LINK = "link"  # a collective whose bytes over a link between chips take longest
INTERFACE = "HBM → on-chip caches"  # the interface bytes are counted across (DRAM on GDDR cards and CPUs)


def interface_for(memory_name: str) -> str:
    """'HBM → on-chip caches' or 'DRAM → on-chip caches', after the device's memory."""
    return f"{memory_name} → on-chip caches"

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


@dataclass(frozen=True)
class Step:
    """One line of the derivation: what is computed, with the numbers, and the result with its unit."""

    label: str
    expression: str
    result: str
    relation: str = "="  # "⇒" where the result is a conclusion rather than a value

    def to_dict(self) -> dict[str, str]:
        return {"label": self.label, "expression": self.expression, "result": self.result}

    @property
    def body(self) -> str:
        """Expression and result as one line: '2·M·N·K = … = 137,438,953,472 FLOP'."""
        return f"{self.expression} {self.relation} {self.result}" if self.expression else self.result

    def as_text(self) -> str:
        return f"{self.label}: {self.body}"


@dataclass(frozen=True)
class TensorTraffic:
    """One tensor's share of the compulsory traffic."""

    name: str
    role: str
    shape: tuple[int, ...]
    shape_symbols: tuple[str, ...]
    dtype: str
    bytes: int
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "bytes": self.bytes,
            "note": self.note,
        }


@dataclass(frozen=True)
class Overlap:
    """How compute and memory time combine: fraction f of the shorter one hidden under the longer."""

    fraction: float

    @property
    def label(self) -> str:
        if self.fraction == 1.0:
            return "full"
        if self.fraction == 0.0:
            return "none"
        return format_number(self.fraction)

    def combine(self, compute_time: Any, memory_time: Any) -> Any:
        """time = max(tc, tm) + (1 − f)·min(tc, tm), for two floats or two numpy arrays (sweeps)."""
        return _larger(compute_time, memory_time) + (1.0 - self.fraction) * _smaller(compute_time, memory_time)


def _larger(a: Any, b: Any) -> Any:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return max(a, b)
    import numpy as np

    return np.maximum(a, b)


def _smaller(a: Any, b: Any) -> Any:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return min(a, b)
    import numpy as np

    return np.minimum(a, b)


def parse_overlap(value: Any) -> Overlap:
    """'full' (max), 'none' (sum), or a fraction f in [0, 1]."""
    if isinstance(value, Overlap):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "full":
            return Overlap(1.0)
        if text == "none":
            return Overlap(0.0)
        try:
            value = float(text)
        except ValueError:
            raise UnitError(f"overlap must be full, none or a fraction 0–1; got '{value}'") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise UnitError(f"overlap must be full, none or a fraction 0–1; got {value!r}")
    return Overlap(float(value))


@dataclass(frozen=True)
class Analysis:
    """Everything the workbench knows about one declared operation on one device."""

    declaration: Declaration
    convention: str
    flop: int
    flop_terms: tuple[tuple[str, int], ...]
    tensors: tuple[TensorTraffic, ...]
    bytes: int
    path: str
    device_name: str | None
    compute_rate: Rate | None
    bandwidth: Rate | None
    compute_time: float | None
    memory_time: float | None
    overlap: Overlap
    bound_full_overlap: float | None
    bound_no_overlap: float | None
    bound_time: float | None
    limiter: str | None
    ridge: float | None
    steps: tuple[Step, ...]
    notes: tuple[str, ...]
    interface: str = INTERFACE
    memory_name: str = "HBM"
    link: LinkTerm | None = None  # collectives: the time term over a link between chips

    @property
    def intensity(self) -> float:
        """Logical FLOP per compulsory byte (0 for an operation with no traffic)."""
        return self.flop / self.bytes if self.bytes else math.inf

    @property
    def attainable_rate(self) -> float | None:
        """FLOP/s the roofline allows at this intensity: min(compute roof, intensity × bandwidth)."""
        if self.compute_rate is None or self.bandwidth is None:
            return None
        return min(self.compute_rate.value, self.intensity * self.bandwidth.value)

    def limiter_sentence(self, binary: bool = False) -> str:
        """The limiter in words: 'compute-limited: the fp16_tc path needs 1.374 ms, HBM traffic 40.27 µs'."""
        if self.limiter is None or self.compute_time is None or self.memory_time is None:
            return "no limiter yet: choose a device or enter a compute rate and a bandwidth"
        tc, tm = format_time(self.compute_time), format_time(self.memory_time)
        if self.limiter == LINK and self.link is not None and self.link.time is not None:
            return f"link-limited: {self.link.link.name} needs {format_time(self.link.time)}, the {self.path} path {tc}, {self.memory_name} traffic {tm}"
        if self.limiter == COMPUTE:
            return f"compute-limited: the {self.path} path needs {tc}, {self.memory_name} traffic {tm}"
        return f"memory-limited: {self.memory_name} traffic needs {tm}, the {self.path} path {tc}"

    def derivation_text(self) -> str:
        """The derivation as plain text, one step a line (Copy derivation, the CLI)."""
        width = max((len(step.label) for step in self.steps), default=0)
        lines = [f"{self.declaration}    [{self.convention}: {_convention_words(self.convention)}]"]
        for step in self.steps:
            lines.append(f"  {step.label.ljust(width)}  {step.body}")
        if self.notes:
            lines.append("  notes:")
            lines += [f"    - {note}" for note in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Exactly what `workbench calc --json` prints."""
        return {
            "declaration": str(self.declaration),
            "operation": self.declaration.op,
            "convention": self.convention,
            "flop": self.flop,
            "flop_terms": dict(self.flop_terms),
            "bytes": self.bytes,
            "interface": self.interface,
            "memory": self.memory_name,
            "tensors": [t.to_dict() for t in self.tensors],
            "intensity_flop_per_byte": self.intensity if self.bytes else None,
            "path": self.path,
            "device": self.device_name,
            "compute_rate_flop_per_s": self.compute_rate.value if self.compute_rate else None,
            "compute_rate_source": self.compute_rate.source if self.compute_rate else None,
            "bandwidth_byte_per_s": self.bandwidth.value if self.bandwidth else None,
            "bandwidth_source": self.bandwidth.source if self.bandwidth else None,
            "compute_time_s": self.compute_time,
            "memory_time_s": self.memory_time,
            "overlap": self.overlap.label,
            "overlap_fraction": self.overlap.fraction,
            "bound_time_full_overlap_s": self.bound_full_overlap,
            "bound_time_no_overlap_s": self.bound_no_overlap,
            "bound_time_s": self.bound_time,
            "limiter": self.limiter,
            "ridge_flop_per_byte": self.ridge,
            "steps": [step.to_dict() for step in self.steps],
            "notes": list(self.notes),
            **(self.link.to_dict() if self.link is not None else {}),
        }


def _convention_words(convention: str) -> str:
    return "one multiply-add = 2 FLOP" if convention == "fma2" else "one multiply-add = 1 FLOP (MAC)"


def as_rate(value: Any, unit: str, what: str) -> Rate | None:
    """A user-entered rate (text with units, a pint quantity, a number in base units, or a Rate)."""
    if value is None or isinstance(value, Rate):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        number = _rate_text_value(value, unit, what)
    else:
        from workbench.units import require_dimension

        number = require_dimension(value, unit, what)
    if not (number > 0) or not math.isfinite(number):
        raise UnitError(f"{what} must be a positive {unit} figure; got {value}")
    return Rate(number, ENTERED, "entered by the user")


@lru_cache(maxsize=256)
def _rate_text_value(text: str, unit: str, what: str) -> float:
    """A rate typed as text ('100 TFLOP/s') in base units, parsed by pint once per distinct text.

    pint takes a few hundred µs per parse; the rate fields and the CLI repeat
    the same few texts on every analysis. A text that fails raises each time
    (errors are not cached).
    """
    from workbench.scratchpad import parse_quantity, rate_spelling
    from workbench.units import require_dimension

    # Datasheet spellings ("67 TFLOPS") read as rates here, in the one place rate texts are parsed.
    return float(require_dimension(parse_quantity(rate_spelling(text), require_number=True), unit, what))


def substitute(formula: str, values: Mapping[str, Any]) -> str:
    """'2·M·N·K' with M=N=K=4096 → '2 × 4096 × 4096 × 4096'."""
    def number(match: re.Match[str]) -> str:
        value = values.get(match.group(0))
        return match.group(0) if value is None else format_int(value)

    text = _SYMBOL.sub(number, formula)
    return text.replace("·", " × ")


def _term_step(term: FlopTerm, convention: str, values: Mapping[str, Any]) -> Step:
    formula = term.formula_for(convention)
    flop = term.flop(convention)
    return Step(
        f"Work: {term.name}",
        f"{formula} = {substitute(formula, values)}",
        f"{format_int(flop)} FLOP ≈ {format_flop(flop)}",
    )


def _element_size(tensor: Tensor) -> str:
    bits = tensor.dtype.bits
    return f"{bits // 8} B" if bits % 8 == 0 else f"{bits} bit / 8"


def _tensor_step(tensor: Tensor, binary: bool) -> Step:
    symbols = "·".join(tensor.shape_symbols) or "1"
    numbers = " × ".join(format_int(extent) for extent in tensor.shape) or "1"
    passes = ""
    if tensor.crossings > 1:
        passes = f" × {tensor.crossings} ({tensor.role})"
    label = f"Bytes: {tensor.name}[{', '.join(tensor.shape_symbols)}] {tensor.dtype.name}, {tensor.role}"
    return Step(
        label,
        f"{symbols} × {_element_size(tensor)}{passes} = {numbers} × {_element_size(tensor)}{passes}",
        f"{format_int(tensor.bytes)} B ≈ {format_bytes(tensor.bytes, binary)}",
    )


@dataclass(frozen=True)
class _Setting:
    """What analyze() and sweep() resolve once per call, in this order: convention, overlap, device, entered rates."""

    convention: str
    overlap: Overlap
    device: Device | None
    entered_rate: Rate | None
    entered_bandwidth: Rate | None


def _setting(device: Any, rate: Any, bandwidth: Any, convention: str, overlap: Any) -> _Setting:
    if convention not in CONVENTIONS:
        raise UnitError(f"convention must be fma2 or mac; got '{convention}'")
    combine = parse_overlap(overlap)
    dev = find_device(device) if isinstance(device, str) else device
    return _Setting(convention, combine, dev, as_rate(rate, "FLOP/s", "rate"), as_rate(bandwidth, "B/s", "bandwidth"))


@dataclass(frozen=True)
class _Figures:
    """The numbers of one analysed point, before any text: what analyze() and every sweep point share."""

    workload: Workload
    flop: int
    bytes: int
    compute_rate: Rate | None
    bandwidth: Rate | None
    used_path: str
    compute_time: float | None
    memory_time: float | None
    bound_time: float | None


def _rates(path: str, setting: _Setting) -> tuple[Rate | None, Rate | None, str]:
    """(compute rate, bandwidth, path whose rate is used): entered figures first, else the device's."""
    dev = setting.device
    compute_rate = setting.entered_rate or (dev.rate(path) if dev is not None else None)
    hbm = setting.entered_bandwidth or (dev.bandwidth if dev is not None else None)
    used_path = path
    if setting.entered_rate is None and dev is not None:
        used_path = dev.resolve_path(path) or path
    return compute_rate, hbm, used_path


def _check_footprint(workload: Workload, dev: Device | None, binary: bool) -> None:
    if dev is not None and dev.memory_bytes and workload.footprint_bytes > dev.memory_bytes:
        raise DeclarationError(
            f"the tensors need {format_bytes(workload.footprint_bytes, binary)}, more than the "
            f"{format_bytes(dev.memory_bytes, binary)} of {dev.name} memory"
        )


def _figures(decl: Declaration, setting: _Setting, binary: bool) -> _Figures:
    """Work, traffic, rates and time bounds of one declaration (refused when it cannot fit the device)."""
    workload: Workload = decl.workload()
    _check_footprint(workload, setting.device, binary)
    compute_rate, hbm, used_path = _rates(workload.path, setting)
    flop = int(workload.flop(setting.convention))
    total_bytes = int(workload.bytes)
    compute_time = flop / compute_rate.value if compute_rate is not None else None
    memory_time = total_bytes / hbm.value if hbm is not None else None
    bound = None
    if compute_time is not None and memory_time is not None:
        bound = setting.overlap.combine(compute_time, memory_time)
    return _Figures(workload, flop, total_bytes, compute_rate, hbm, used_path, compute_time, memory_time, bound)


def analyze(
    declaration: str | Declaration,
    device: str | Device | None = None,
    rate: Any = None,
    bandwidth: Any = None,
    convention: str = "fma2",
    overlap: Any = "full",
    binary: bool = False,
) -> Analysis:
    """Analyse one operation: work, compulsory HBM traffic, bounds on a device, and the derivation.

    `rate` and `bandwidth` override the device's figures (labelled entered);
    without a device or rates the work and bytes are still computed and the
    time bounds are None.
    """
    decl = parse(declaration) if isinstance(declaration, str) else declaration
    setting = _setting(device, rate, bandwidth, convention, overlap)
    figures = _figures(decl, setting, binary)
    dev, combine, entered_rate = setting.device, setting.overlap, setting.entered_rate
    memory = dev.memory_name if dev is not None else "HBM"
    interface = interface_for(memory)
    workload = figures.workload
    compute_rate, hbm, used_path = figures.compute_rate, figures.bandwidth, figures.used_path

    flop, total_bytes = figures.flop, figures.bytes
    values = dict(workload.values)
    steps: list[Step] = [_term_step(term, convention, values) for term in workload.terms]
    if len(workload.terms) > 1:
        steps.append(
            Step(
                "Work: total",
                " + ".join(f"{format_int(term.flop(convention))}" for term in workload.terms) + " FLOP",
                f"{format_int(flop)} FLOP ≈ {format_flop(flop)}",
            )
        )
    elif not workload.terms:
        steps.append(Step("Work", "", "0 FLOP (no arithmetic: pure data movement)"))
    steps += [_tensor_step(tensor, binary) for tensor in workload.tensors]
    steps.append(
        Step(
            f"Bytes: compulsory traffic, {interface}",
            " + ".join(f"{format_int(t.bytes)} B" for t in workload.tensors),
            f"{format_int(total_bytes)} B ≈ {format_bytes(total_bytes, binary)}",
        )
    )
    intensity = flop / total_bytes if total_bytes else math.inf
    steps.append(
        Step(
            "Arithmetic intensity",
            f"{format_int(flop)} FLOP / {format_int(total_bytes)} B",
            format_intensity(intensity) + _fraction_hint(flop, total_bytes),
        )
    )

    compute_time, memory_time, bound = figures.compute_time, figures.memory_time, figures.bound_time
    full = none = ridge = None
    limiter = None
    if compute_rate is not None and compute_time is not None:
        steps.append(
            Step(
                f"Compute time bound ({used_path}, {compute_rate.source})",
                f"{format_flop(flop)} / ({format_flop_rate(compute_rate.value)})",
                format_time(compute_time),
            )
        )
    else:
        steps.append(Step("Compute time bound", "", "needs a compute rate: choose a device or enter one"))
    if hbm is not None and memory_time is not None:
        steps.append(
            Step(
                f"Memory time bound ({memory}, {hbm.source})",
                f"{format_bytes(total_bytes, binary)} / ({format_bandwidth(hbm.value, binary)})",
                format_time(memory_time),
            )
        )
    else:
        steps.append(Step("Memory time bound", "", "needs a bandwidth: choose a device or enter one"))
    if compute_rate is not None and hbm is not None and compute_time is not None and memory_time is not None:
        ridge = compute_rate.value / hbm.value
        steps.append(
            Step(
                "Ridge point",
                f"{format_flop_rate(compute_rate.value)} / ({format_bandwidth(hbm.value, binary)})",
                format_intensity(ridge),
            )
        )
        full = max(compute_time, memory_time)
        none = compute_time + memory_time
        tc, tm = format_time(compute_time), format_time(memory_time)
        steps.append(Step("Bound, full overlap", f"max({tc}, {tm})", format_time(full)))
        steps.append(Step("Bound, no overlap", f"{tc} + {tm}", format_time(none)))
        if combine.label not in ("full", "none"):
            f = format_number(combine.fraction)
            steps.append(
                Step(
                    f"Bound, overlap f = {f}",
                    f"max({tc}, {tm}) + (1 − {f}) × min({tc}, {tm})",
                    format_time(bound),
                )
            )
        limiter = COMPUTE if compute_time >= memory_time else MEMORY
        relation = "≥" if limiter == COMPUTE else "<"
        steps.append(
            Step(
                "Limiter",
                f"compute {tc} {relation} memory {tm}",
                f"{limiter}-limited" + (f" ({used_path})" if limiter == COMPUTE else f" ({memory})"),
                relation="⇒",
            )
        )

    link_term = None
    if workload.link_traffic is not None:
        link_term, bound_times, link_steps = link_term_for(workload.link_traffic, dev, (compute_time, memory_time), combine, binary)
        steps += link_steps
        if bound_times is not None:
            full, none, bound, limiter = bound_times

    notes = [f"FLOP convention {convention}: {_convention_words(convention)}"]
    notes += list(workload.notes)
    notes.append(f"bytes: compulsory {interface}; each input read once, each output written once")
    if compute_rate is not None and used_path != workload.path and entered_rate is None:
        notes.append(f"{dev.name if dev else 'device'} has no {workload.path} rate; the {used_path} rate is used")
    if dev is not None and dev.l2_bytes and workload.footprint_bytes <= dev.l2_bytes:
        notes.append(
            f"the working set ({format_bytes(workload.footprint_bytes, binary)}) fits in L2 "
            f"({format_bytes(dev.l2_bytes, binary)}): warm runs may beat the {memory} bound"
        )

    return Analysis(
        declaration=decl,
        convention=convention,
        flop=flop,
        flop_terms=tuple((term.name, int(term.flop(convention))) for term in workload.terms),
        tensors=tuple(
            TensorTraffic(t.name, t.role, tuple(int(x) for x in t.shape), t.shape_symbols, t.dtype.name, int(t.bytes), t.note)
            for t in workload.tensors
        ),
        bytes=total_bytes,
        path=used_path,
        device_name=dev.name if dev is not None else None,
        compute_rate=compute_rate,
        bandwidth=hbm,
        compute_time=compute_time,
        memory_time=memory_time,
        overlap=combine,
        bound_full_overlap=full,
        bound_no_overlap=none,
        bound_time=bound,
        limiter=limiter,
        ridge=ridge,
        steps=tuple(steps),
        notes=tuple(notes),
        interface=interface,
        memory_name=memory,
        link=link_term,
    )


def _fraction_hint(flop: int, total_bytes: int) -> str:
    """'(= 1/12)' when the intensity is a simple fraction below one, as the vector add's is."""
    if not total_bytes or flop == 0 or flop >= total_bytes:
        return ""
    from fractions import Fraction

    ratio = Fraction(flop, total_bytes)
    return f" (= {ratio.numerator}/{ratio.denominator})" if ratio.denominator <= 1000 else ""


# -- a time term over a link between chips (collectives) ---------------------
# The compute and HBM terms above are two time terms over named resources; a
# collective adds a third, its bytes per rank over a link. The terms combine
# like the two: full overlap takes the longest, no overlap the sum, and an
# overlap fraction f hides f of everything but the longest term:
#     time = max(terms) + (1 − f)·(sum(terms) − max(terms)),
# which is Overlap.combine for two terms.


@dataclass(frozen=True)
class LinkTerm:
    """Bytes each rank sends over a link, the time they take, and nccl-tests' algbw and busbw at the bound."""

    link: Link
    bytes_per_rank: int
    message_bytes: int
    formula: str
    bus_factor: Fraction
    bus_factor_text: str
    latency_steps: int
    latency_per_step_s: float
    transfer_time: float  # bytes_per_rank / per-direction rate
    time: float  # transfer time plus the latency term
    algbw: float | None = None  # S / bound time, B/s
    busbw: float | None = None  # algbw × bus factor, B/s

    def to_dict(self) -> dict[str, Any]:
        """The keys `workbench calc --json` adds for a collective."""
        return {
            "link": self.link.key,
            "link_name": self.link.name,
            "link_byte_per_s_per_direction": self.link.per_direction,
            "bytes_per_rank": self.bytes_per_rank,
            "message_bytes": self.message_bytes,
            "link_time_s": self.time,
            "latency_s": self.time - self.transfer_time,
            "algbw_byte_per_s": self.algbw,
            "busbw_byte_per_s": self.busbw,
            "busbw_factor": float(self.bus_factor),
        }


def link_term_for(
    traffic: LinkTraffic,
    device: Device | None,
    other_times: tuple[float | None, ...],
    combine: Overlap,
    binary: bool,
) -> tuple[LinkTerm | None, tuple[float, float, float, str] | None, list[Step]]:
    """The link term of a collective, the bounds with it (full, none, chosen, limiter), and its derivation.

    The link is the one the declaration names, else the device's (its NVLink,
    else its host link). Without either the bytes are still derived and the
    bounds stay None.
    """
    from workbench.devices.links import device_link, find_link

    per_rank, message = int(traffic.bytes), int(traffic.message_bytes)
    steps = [
        Step(
            f"Link bytes per rank ({traffic.algorithm})",
            f"{traffic.formula} = {substitute(traffic.formula, {'ranks': traffic.ranks, 'S': message})} B",
            f"{format_int(per_rank)} B ≈ {format_bytes(per_rank, binary)}",
        )
    ]
    if traffic.link:
        link = find_link(traffic.link)
    elif device is not None:
        link = device_link(device)
    else:
        steps.append(Step("Link time bound", "", "needs a link: choose a device or name one (link=nvlink4)"))
        return None, None, steps
    transfer = per_rank / link.per_direction
    latency = traffic.latency_steps * traffic.latency_per_step_s
    link_time = transfer + latency
    steps.append(
        Step(
            f"Link time bound ({link.name}, per direction, {link.origin})",
            f"{format_bytes(per_rank, binary)} / ({format_bandwidth(link.per_direction, binary)})",
            format_time(transfer),
        )
    )
    steps_text = f"{format_int(traffic.latency_steps)} steps × {format_time(traffic.latency_per_step_s) if latency else '0 s'}"
    steps.append(
        Step(
            "Link latency term",
            steps_text,
            format_time(latency) if latency else "0 s (off: set latency_us to add α per step)",
        )
    )
    term = LinkTerm(link, per_rank, message, traffic.formula, Fraction(traffic.bus_factor), traffic.bus_factor_text,
                    int(traffic.latency_steps), traffic.latency_per_step_s, transfer, link_time)
    known = [t for t in other_times if t is not None]
    if len(known) < len(other_times):
        return term, None, steps
    terms = [*known, link_time]
    longest, total = max(terms), sum(terms)
    bound = longest + (1.0 - combine.fraction) * (total - longest)
    limiter = LINK if link_time >= longest else (COMPUTE if other_times[0] >= other_times[1] else MEMORY)  # type: ignore[operator]
    algbw = message / bound
    busbw = algbw * float(term.bus_factor)
    term = replace(term, algbw=algbw, busbw=busbw)
    shown = ", ".join(format_time(t) for t in terms)
    steps.append(Step("Bound with the link, full overlap", f"max({shown})", format_time(longest)))
    steps.append(Step("Bound with the link, no overlap", " + ".join(format_time(t) for t in terms), format_time(total)))
    steps.append(Step("algbw (nccl-tests) at the bound", f"S / t = {format_bytes(message, binary)} / {format_time(bound)}", format_bandwidth(algbw, binary)))
    steps.append(
        Step(
            "busbw (nccl-tests) at the bound",
            f"algbw × {traffic.bus_factor_text} = {format_bandwidth(algbw, binary)} × {format_number(float(term.bus_factor))}",
            format_bandwidth(busbw, binary),
        )
    )
    named = {LINK: link.name, COMPUTE: "compute", MEMORY: "memory"}[limiter]
    steps.append(Step("Limiter with the link", f"the longest term is {format_time(longest)}", f"{limiter}-limited ({named})", relation="⇒"))
    return term, (longest, total, bound, limiter), steps


@dataclass(frozen=True)
class Sweep:
    """Bounds over many shapes at once: numpy float64 arrays, one entry per point.

    A point analyze() would refuse (a swept size below its minimum, a filter
    larger than its padded image, tensors beyond the device's memory) holds
    NaN, and its error — the very exception analyze() raises — is in `errors`.
    """

    flop: Any
    bytes: Any
    intensity: Any
    compute_time: Any
    memory_time: Any
    bound_time: Any
    errors: tuple[WorkbenchError | None, ...] = ()
    footprint: Any = None  # bytes resident at once (each distinct tensor stored once)

    @property
    def valid(self) -> Any:
        """Boolean mask of the points with figures."""
        import numpy as np

        return np.array([error is None for error in self.errors], dtype=bool)

    @property
    def first_error(self) -> WorkbenchError | None:
        return next((error for error in self.errors if error is not None), None)

    def limiter_changes(self) -> list[int]:
        """Indices i where the limiter differs from entry i − 1 (compute-limited vs memory-limited)."""
        import numpy as np

        compute_limited = np.asarray(self.compute_time) > np.asarray(self.memory_time)
        return [int(i) for i in np.nonzero(compute_limited[1:] != compute_limited[:-1])[0] + 1]

    def first_beyond(self, capacity: float | None) -> int | None:
        """The first index whose footprint exceeds `capacity` bytes (a device's memory), or None."""
        import numpy as np

        if capacity is None or self.footprint is None:
            return None
        over = np.nonzero(np.asarray(self.footprint) > capacity)[0]
        return int(over[0]) if over.size else None


# Swept values above this are taken the exact (integer) way: float64 holds every integer up to 2^53.
_EXACT_IN_FLOAT = 2**53


def _plain(value: Any) -> Any:
    """A swept value as a declaration field takes it: numpy scalars as Python values, 64.0 as 64."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _swept_values(decl: Declaration, fields: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """Each swept field's values as a 1-D numpy array, all of one length."""
    import numpy as np

    params = decl.params
    columns: dict[str, Any] = {}
    length = None
    for name, values in fields.items():
        if name not in params:
            raise DeclarationError(f"{decl.op} has no field '{name}' to sweep", field=name)
        array = np.asarray(values)
        if array.ndim != 1 or (length is not None and array.shape[0] != length):
            raise DeclarationError("swept fields must be 1-D arrays of one length", field=name)
        length = array.shape[0]
        columns[name] = array
    return columns, length or 0


def _as_float_sizes(array: Any, minimum: int) -> tuple[Any, Any] | None:
    """float64 sizes and the points the arrays cannot vouch for (below `minimum`, not whole, beyond 2^53).

    None when the values are not numbers at all (the exact way then says why).
    """
    import numpy as np

    if array.dtype.kind in "iu":
        floats = array.astype(np.float64)
        doubtful = (array < minimum) | (array > _EXACT_IN_FLOAT)
        return (np.where(doubtful, float(minimum), floats) if doubtful.any() else floats), doubtful
    if array.dtype.kind == "f":
        floats = array.astype(np.float64)
    elif array.dtype.kind == "O" and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in array):
        floats = np.array([float(v) if abs(v) <= _EXACT_IN_FLOAT else math.nan for v in array], dtype=np.float64)
    else:
        return None
    with np.errstate(invalid="ignore"):
        doubtful = ~np.isfinite(floats) | (floats < minimum) | (floats > _EXACT_IN_FLOAT) | (floats != np.floor(floats))
    return np.where(doubtful, float(minimum), floats), doubtful


def _vectorised(decl: Declaration, columns: Mapping[str, Any], setting: _Setting, length: int) -> tuple[Any, Any]:
    """Work and traffic of every point at once on float64 arrays, and the points to take the exact way.

    A fast path only: a point is marked for the exact way (`decl.replace` and
    analyze's own checks) whenever the arrays cannot vouch that analyze would
    accept it — a value below its minimum, not whole, beyond 2^53, a tensor or
    footprint near a limit, an operation with checks of its own — and every
    point when the operation's shape depends on the swept field (the count of
    elementwise inputs).
    """
    import numpy as np

    spec = decl.spec
    every_point = np.ones(length, dtype=bool)
    swept_params = [spec.param(name) or Param(name, "dim") for name in columns]
    if spec.check is not None or any(param.kind != "dim" for param in swept_params):
        return None, every_point
    params: dict[str, Any] = decl.params
    exact = np.zeros(length, dtype=bool)
    for param in swept_params:
        sizes = _as_float_sizes(columns[param.name], param.minimum)
        if sizes is None:
            return None, every_point
        params[param.name], doubtful = sizes
        exact |= doubtful
    try:
        workload = spec.build(params)
        flop = np.broadcast_to(np.asarray(workload.flop(setting.convention), dtype=np.float64), (length,))
        traffic = np.broadcast_to(np.asarray(workload.bytes, dtype=np.float64), (length,))
        for tensor in workload.tensors:
            exact |= np.asarray(tensor.bytes_each, dtype=np.float64) > 2**60 * (1 - 1e-9)
        dev = setting.device
        if dev is not None and dev.memory_bytes:
            exact |= np.asarray(workload.footprint_bytes, dtype=np.float64) > dev.memory_bytes * (1 - 1e-9)
    except (TypeError, ValueError):
        # The builder needs a plain int for this field (a count of tensors, a branch on a value).
        return None, every_point
    return (workload, flop, traffic), exact


def sweep(
    declaration: str | Declaration,
    fields: Mapping[str, Any],
    device: str | Device | None = None,
    rate: Any = None,
    bandwidth: Any = None,
    convention: str = "fma2",
    overlap: Any = "full",
) -> Sweep:
    """Bounds for many values of some fields (e.g. M=N=K over 2^10..2^14): `[analyze(each)]` as arrays.

    Every point is the declaration with the swept fields replaced, validated
    and refused exactly as analyze() would, with the same rate resolution and
    overlap formula. Points analyze() accepts get float64 figures (counts above
    2^53 are rounded: sweeps are for plots; analyze() gives exact integers);
    refused points get NaN and their error. Without a device or entered rates
    there are no bounds to sweep (UnitError).
    """
    import numpy as np

    decl = parse(declaration) if isinstance(declaration, str) else declaration
    columns, length = _swept_values(decl, fields)
    setting = _setting(device, rate, bandwidth, convention, overlap)
    if setting.device is None and (setting.entered_rate is None or setting.entered_bandwidth is None):
        raise UnitError("a sweep needs a compute rate and a bandwidth: choose a device or enter them")
    errors: list[WorkbenchError | None] = [None] * length
    fast, exact = _vectorised(decl, columns, setting, length)
    flop, traffic = np.full(length, math.nan), np.full(length, math.nan)
    footprint = np.full(length, math.nan)
    compute_time, memory_time = np.full(length, math.nan), np.full(length, math.nan)
    if fast is not None and not exact.all():
        workload, fast_flop, fast_traffic = fast
        try:
            compute_rate, hbm, _ = _rates(workload.path, setting)
        except WorkbenchError as exc:  # the device has no rate for this path: every point says so
            for index in np.flatnonzero(~exact):
                errors[index] = exc
        else:
            assert compute_rate is not None and hbm is not None  # a device, or both rates entered
            flop = np.where(exact, math.nan, fast_flop)
            traffic = np.where(exact, math.nan, fast_traffic)
            compute_time = flop / compute_rate.value
            memory_time = traffic / hbm.value
            footprint = np.where(exact, math.nan, np.broadcast_to(np.asarray(workload.footprint_bytes, dtype=np.float64), (length,)))
    for index in np.flatnonzero(exact):
        point = {name: _plain(values[index]) for name, values in columns.items()}
        try:
            figures = _figures(decl.replace(**point), setting, binary=False)
        except WorkbenchError as exc:
            errors[index] = exc
            try:  # a point refused for its size still has a footprint, so the view can mark "beyond memory"
                footprint[index] = decl.replace(**point).workload().footprint_bytes
            except WorkbenchError:
                pass
            continue
        assert figures.compute_time is not None and figures.memory_time is not None
        flop[index], traffic[index] = figures.flop, figures.bytes
        compute_time[index], memory_time[index] = figures.compute_time, figures.memory_time
        footprint[index] = figures.workload.footprint_bytes
    bound = setting.overlap.combine(compute_time, memory_time)
    if decl.workload().link_traffic is not None:
        # A collective's link term joins its bound; analyze() owns that rule, so each point asks it.
        for index in range(length):
            if errors[index] is None:
                point = decl.replace(**{name: _plain(values[index]) for name, values in columns.items()})
                try:
                    exact_bound = analyze(point, device, rate, bandwidth, convention, overlap).bound_time
                except WorkbenchError as exc:  # e.g. a device that names no link between chips
                    errors[index] = exc
                    flop[index] = traffic[index] = compute_time[index] = memory_time[index] = footprint[index] = math.nan
                    exact_bound = None
                bound[index] = math.nan if exact_bound is None else exact_bound
    with np.errstate(divide="ignore", invalid="ignore"):
        intensity = np.where(traffic > 0, flop / np.where(traffic > 0, traffic, 1), np.where(np.isnan(traffic), math.nan, np.inf))
    return Sweep(flop, traffic, intensity, compute_time, memory_time, bound, tuple(errors), footprint)


__all__ = [
    "Analysis",
    "BANDWIDTH",
    "COMPUTE",
    "LINK",
    "LinkTerm",
    "MEMORY",
    "Overlap",
    "Step",
    "Sweep",
    "TensorTraffic",
    "analyze",
    "as_rate",
    "parse_overlap",
    "substitute",
    "sweep",
]
