"""A collective's term over a link between chips: bytes per rank, the link's rate, latency, algbw and busbw.

The compute and HBM terms are time terms over named resources; a collective
adds one more, its bytes per rank over a link, and it combines with the others
by the one overlap rule (terms.py). nccl-tests' algbw (S / t) and busbw
(algbw × the collective's bus factor) are given at the combined bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from workbench.model.devices.catalogue import Device
from workbench.model.devices.links import Link
from workbench.model.ops.base import LinkTraffic


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

    @property
    def latency(self) -> float:
        """The latency term: steps × α per step (0 unless the declaration sets latency_us)."""
        return self.latency_steps * self.latency_per_step_s

    def at_bound(self, bound: float) -> "LinkTerm":
        """This term with algbw = S / bound and busbw = algbw × bus factor."""
        algbw = self.message_bytes / bound
        return replace(self, algbw=algbw, busbw=algbw * float(self.bus_factor))

    # by hand: half the keys are the link's or derived (latency = time − transfer time)
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


def link_for(traffic: LinkTraffic, device: Device | None) -> Link | None:
    """The link a collective crosses: the one the declaration names, else the device's; None without either.

    DeviceError when the named link is unknown or the device names no link between chips.
    """
    from workbench.model.devices.links import device_link, find_link, link_in_use

    if traffic.link:
        link = find_link(traffic.link)
    elif device is not None:
        link = device_link(device)
    else:
        return None
    return link_in_use(link, device)  # a measured rate of this link (calibration on 2+ GPUs) replaces the catalogue's


def link_term_for(traffic: LinkTraffic, device: Device | None) -> LinkTerm | None:
    """The link term of a collective (algbw and busbw still unset), or None when there is no link to cross."""
    link = link_for(traffic, device)
    if link is None:
        return None
    per_rank, message = int(traffic.bytes), int(traffic.message_bytes)
    transfer = per_rank / link.per_direction
    latency = traffic.latency_steps * traffic.latency_per_step_s
    return LinkTerm(
        link,
        per_rank,
        message,
        traffic.formula,
        Fraction(traffic.bus_factor),
        traffic.bus_factor_text,
        int(traffic.latency_steps),
        traffic.latency_per_step_s,
        transfer,
        transfer + latency,
    )


__all__ = ["LinkTerm", "link_for", "link_term_for"]
