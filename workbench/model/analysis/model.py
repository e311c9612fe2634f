"""The result of analysing one declared operation on one device: `Analysis` and its parts.

The CLI's JSON, the GUI's calculator panel, the roofline and the session file
all read the one `Analysis` that `analyze()` returns. Figures are fields,
computed eagerly; the derivation (`steps`) and `notes` are words built on
first access (derivation.py), because formatting costs more than the
arithmetic and most readers never ask for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from workbench.model.analysis.derivation import DerivationLine, convention_words, derivation_notes, derivation_steps
from workbench.model.analysis.link_term import LinkTerm
from workbench.model.analysis.rates import Overlap
from workbench.model.analysis.terms import COMPUTE, LINK, Term, memory_side
from workbench.model.declare import Declaration
from workbench.model.devices.catalogue import Device, Rate
from workbench.model.devices.interfaces import HOST
from workbench.model.ops.base import Workload
from workbench.model.units import format_time
from workbench.records import record, to_plain

if TYPE_CHECKING:
    from workbench.model.implementations import PhysicalWork

INTERFACE = "HBM → on-chip caches"  # the interface bytes are counted across (DRAM on GDDR cards and CPUs)


def interface_for(memory_name: str) -> str:
    """'HBM → on-chip caches' or 'DRAM → on-chip caches', after the device's memory."""
    return f"{memory_name} → on-chip caches"


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



record(TensorTraffic, leave_out=("shape_symbols",))  # `calc --json` gives the shape in numbers only


@dataclass(frozen=True)
class Basis:
    """What the words of an analysis are built from beyond its figures (not part of its value)."""

    workload: Workload
    device: Device | None
    binary: bool
    rate_entered: bool  # the compute rate was entered, so a path fallback is not the device's doing
    host_link_name: str = ""  # the link host ↔ device copies cross, when the declaration asks for them


@dataclass(frozen=True)
class Analysis:
    """Everything the workbench knows about one declared operation on one device.

    `terms` lists every time term (compute, each interface with a rate, the
    host link when asked for, a collective's link); `compute_time` and
    `memory_time` are the compute and HBM terms' times, kept for the readers
    that know only those two. `limiter` stays compute | memory | link, and
    `limiter_term` names the term that limits ("hbm", "smem", "link", ...).
    """

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
    interface: str = INTERFACE
    memory_name: str = "HBM"
    link: LinkTerm | None = None  # collectives: the time term over a link between chips
    terms: tuple[Term, ...] = ()
    limiter_term: str | None = None
    # Logical vs physical work under the declaration's implementation (left out of == and hash: it holds mappings,
    # and the declaration and the device's name already decide it).
    physical: "PhysicalWork | None" = field(default=None, compare=False)
    basis: Basis | None = field(default=None, compare=False, repr=False)
    # Why the compute bound is missing when the device has no rate for the path (analyze_partial), else None.
    missing_rate: str | None = None

    @cached_property
    def steps(self) -> tuple[DerivationLine, ...]:
        """The derivation, one step a line (built on first access)."""
        return derivation_steps(self)

    @cached_property
    def notes(self) -> tuple[str, ...]:
        """What the derivation assumes, in sentences (built on first access)."""
        return derivation_notes(self)

    @property
    def memory_side_term(self) -> Term | None:
        """The memory side's slowest interface (HBM unless an inner level is slower, as under a naive kernel)."""
        return memory_side(self.terms)

    def term(self, name: str) -> Term | None:
        """The term called `name` ("compute", "hbm", "l2", "smem", "host", "link"), or None."""
        return next((term for term in self.terms if term.name == name), None)

    @property
    def implementation(self) -> str:
        """The implementation model the figures assume ("compulsory" unless the declaration names one)."""
        return self.physical.implementation if self.physical is not None else "compulsory"

    @property
    def intensity(self) -> float:
        """Logical FLOP per compulsory byte (0 for an operation with no traffic)."""
        return self.flop / self.bytes if self.bytes else math.inf

    @cached_property  # the roofline asks it of every operation on each redraw
    def attainable_rate(self) -> float | None:
        """FLOP/s the roofline allows at this intensity: min(compute roof, intensity × bandwidth), and never more
        than the operation's link between chips allows (a collective: FLOP over its link time), so a point drawn
        at this height never claims more than its own bound."""
        if self.compute_rate is None or self.bandwidth is None:
            return None
        rate = min(self.compute_rate.value, self.intensity * self.bandwidth.value)
        link_time = self.link_time_s
        return min(rate, self.flop / link_time) if link_time else rate

    @cached_property
    def link_time_s(self) -> float | None:
        """The time of the operation's terms across links between chips (not roofs of the roofline), or None."""
        times = [term.time_s for term in self.terms if term.side == LINK and term.name != "host" and term.time_s]
        return max(times) if times else None

    def limiter_sentence(self) -> str:
        """The limiter in words: 'compute-limited: the fp16_tc path needs 1.374 ms, HBM traffic 40.27 µs'.

        Only times appear, so there is no binary/decimal choice to make.
        """
        if self.missing_rate is not None:
            return f"no time bound: {self.missing_rate}"
        if self.limiter is None or self.compute_time is None or self.memory_time is None:
            return "no limiter yet: choose a device or enter a compute rate and a bandwidth"
        tc, tm = format_time(self.compute_time), format_time(self.memory_time)
        limiting = self.term(self.limiter_term) if self.limiter_term else None
        if self.limiter == LINK and limiting is not None and limiting.name == HOST and limiting.time_s is not None:
            over = f" over {self.basis.host_link_name}" if self.basis is not None and self.basis.host_link_name else ""
            return f"link-limited: host ↔ device copies{over} need {format_time(limiting.time_s)}, the {self.path} path {tc}, {self.memory_name} traffic {tm}"
        if self.limiter == LINK and self.link is not None and self.link.time is not None:
            return f"link-limited: {self.link.link.name} needs {format_time(self.link.time)}, the {self.path} path {tc}, {self.memory_name} traffic {tm}"
        if self.limiter == COMPUTE:
            return f"compute-limited: the {self.path} path needs {tc}, {self.memory_name} traffic {tm}"
        if limiting is not None and limiting.name != "hbm" and limiting.time_s is not None:
            return f"memory-limited: {limiting.title} traffic needs {format_time(limiting.time_s)}, the {self.path} path {tc}, {self.memory_name} traffic {tm}"
        return f"memory-limited: {self.memory_name} traffic needs {tm}, the {self.path} path {tc}"

    def derivation_text(self) -> str:
        """The derivation as plain text, one step a line (Copy derivation, the CLI)."""
        width = max((len(step.label) for step in self.steps), default=0)
        lines = [f"{self.declaration}    [{self.convention}: {convention_words(self.convention)}]"]
        for step in self.steps:
            lines.append(f"  {step.label.ljust(width)}  {step.body}")
        if self.notes:
            lines.append("  notes:")
            lines += [f"    - {note}" for note in self.notes]
        return "\n".join(lines)

    def physical_dict(self) -> dict[str, Any] | None:
        """`calc --json`'s `physical`: logical and physical FLOP and bytes per interface, and the assumptions."""
        physical = self.physical
        if physical is None:
            return None
        quantization = physical.quantization
        return {
            "implementation": physical.implementation,
            "logical_flop": int(physical.logical_flop),
            "physical_flop": int(physical.physical_flop),
            "logical_bytes": int(physical.logical_bytes),
            "bytes_by_interface": {key: int(value) for key, value in physical.bytes_by_interface.items()},
            "assumptions": list(physical.assumptions),
            "launches": [
                {"title": launch.title, "threads": int(launch.threads), "threads_per_block": launch.threads_per_block,
                 "bytes_per_load": launch.bytes_per_load, "loads_in_flight": launch.loads_in_flight,
                 "read_bytes": int(launch.read_bytes), "write_bytes": int(launch.write_bytes)}
                for launch in physical.launches
            ],
            "quantization": None if quantization is None else {
                "tile_m": quantization.tile_m,
                "tile_n": quantization.tile_n,
                "tile_k": quantization.tile_k,
                "padded": dict(quantization.padded),
                "tiles": quantization.tiles,
                "sm_count": quantization.sm_count,
                "ctas_per_sm": quantization.ctas_per_sm,
                "waves": quantization.waves,
                "slot_use": quantization.slot_use,
            },
        }

    # by hand: `calc --json`'s figures are the analysis's properties, not its fields
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
            "tensors": to_plain(self.tensors),
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
            "limiter_term": self.limiter_term,
            "ridge_flop_per_byte": self.ridge,
            "terms": to_plain(self.terms),
            "physical": self.physical_dict(),
            "steps": to_plain(self.steps),
            "notes": list(self.notes),
            **(self.link.to_dict() if self.link is not None else {}),
            **({"missing_rate": self.missing_rate} if self.missing_rate is not None else {}),
        }


__all__ = ["Analysis", "Basis", "INTERFACE", "TensorTraffic", "interface_for"]
