"""Links between chips: NVLink generations, PCIe by generation and width, InfiniBand, Ethernet.

A link is a resource bytes cross, like HBM: collectives (ops/collectives.py)
count the bytes each rank sends over one, and the time bound divides them by
the link's rate PER DIRECTION (a rank sends and receives at once, so the
both-directions figure NVIDIA prints would halve the time: the classic
factor-of-two error). Network links are sold in bits per second; the
catalogue keeps the sold figure beside the byte rate and checks they agree
(400 Gb/s = 50 GB/s), so the factor of eight cannot slip either.

The figures live in resources/devices.toml under [links.KEY]; a GPU entry
names its NVLink generation (`nvlink`) and its host link (`host_link`).

A measured link rate (calibration on two or more GPUs: NCCL's busbw, the
figure nccl-tests holds against the link's per-direction rate) is a device
rate like the measured HBM bandwidth: it lives in `Device.overrides` under
`link_rate_key(link.key)` ("link:nvlink4"), and `link_in_use` puts it in
place of the catalogue figure wherever a collective's bound is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Mapping

from workbench.model.devices.device import BANDWIDTH, DATASHEET, DERIVED, LINKS_TABLE, Device, _quantity_value, catalogue_data
from workbench.model.devices.interfaces import interface_keys
from workbench.errors import DeviceError

LINK_KINDS = ("nvlink", "nvlink-c2c", "pcie", "infiniband", "ethernet")
LINK_RATE_PREFIX = "link:"  # a device rate keyed "link:nvlink4" is that link's measured per-direction rate
PCIE_WIDTHS = (1, 2, 4, 8, 16)
_BITS_TOLERANCE = 1e-9  # line_rate / 8 and per_direction are the same figure written twice


@dataclass(frozen=True)
class Link:
    """One link: its data rate per direction (B/s), both directions, and where the figure comes from."""

    key: str
    name: str
    kind: str
    per_direction: float  # B/s one way: what a rank's sends are bounded by
    both_directions: float  # B/s, both ways together (the NVLink figure on datasheets)
    source: str
    line_rate_bit_per_s: float | None = None  # the sold figure of a network link, in bits per second
    notes: str = ""
    origin: str = DATASHEET  # DERIVED for PCIe widths below x16

    @property
    def rate_words(self) -> str:
        """'450 GB/s per direction (900 GB/s both directions)'; a network link shows its bits too."""
        from workbench.model.units import format_bandwidth, format_si

        text = f"{format_bandwidth(self.per_direction)} per direction"
        if self.line_rate_bit_per_s is not None:
            text = f"{format_si(self.line_rate_bit_per_s, 'b/s')} = {text}"
        return f"{text} ({format_bandwidth(self.both_directions)} both directions)"


def link_from_table(key: str, table: Mapping[str, Any]) -> Link:
    """One [links.KEY] table as a Link; a network figure whose bits and bytes disagree is refused."""
    where = f"links.{key}"
    kind = str(table.get("kind", ""))
    if kind not in LINK_KINDS:
        raise DeviceError(f"device catalogue, {where}: kind must be one of {', '.join(LINK_KINDS)}; got '{kind}'")
    if "per_direction" not in table:
        raise DeviceError(f"device catalogue, {where}: needs per_direction (a rate in B/s)")
    per_direction = _quantity_value(table["per_direction"], "B/s", f"{where}.per_direction")
    if "both_directions" in table:
        both = _quantity_value(table["both_directions"], "B/s", f"{where}.both_directions")
        if not math.isclose(both, 2 * per_direction, rel_tol=_BITS_TOLERANCE):
            raise DeviceError(f"device catalogue, {where}: both_directions must be twice per_direction")
    else:
        both = 2 * per_direction
    line_rate_bits = None
    if "line_rate" in table:
        in_bytes = _quantity_value(table["line_rate"], "B/s", f"{where}.line_rate")
        if not math.isclose(in_bytes, per_direction, rel_tol=_BITS_TOLERANCE):
            raise DeviceError(
                f"device catalogue, {where}: line_rate {table['line_rate']} is {in_bytes / 1e9:g} GB/s, "
                f"not the per_direction {table['per_direction']} (bits ÷ 8 = bytes)"
            )
        line_rate_bits = in_bytes * 8
    elif kind in ("infiniband", "ethernet"):
        raise DeviceError(f"device catalogue, {where}: a network link needs its line_rate in Gb/s")
    return Link(
        key=key,
        name=str(table.get("name", key)),
        kind=kind,
        per_direction=per_direction,
        both_directions=both,
        source=str(table.get("source", "")),
        line_rate_bit_per_s=line_rate_bits,
        notes=str(table.get("notes", "")),
    )


def _pcie_widths(link: Link) -> dict[str, Link]:
    """pcie4x1 … pcie4x16 from the x16 figure; the bare key stays x16."""
    derived: dict[str, Link] = {}
    for width in PCIE_WIDTHS:
        share = width / 16
        derived[f"{link.key}x{width}"] = Link(
            key=f"{link.key}x{width}",
            name=f"{link.name} x{width}",
            kind=link.kind,
            per_direction=link.per_direction * share,
            both_directions=link.both_directions * share,
            source=link.source if width == 16 else f"{link.source}; x{width} = {width}/16 of x16",
            notes=link.notes,
            origin=DATASHEET if width == 16 else DERIVED,
        )
    return derived


@lru_cache(maxsize=1)
def link_catalogue() -> dict[str, Link]:
    """Every link in the catalogue by key, PCIe widths included (pcie5 is x16, pcie5x8 half of it)."""
    tables = catalogue_data().get(LINKS_TABLE, {})
    links: dict[str, Link] = {}
    for key, table in tables.items():
        link = link_from_table(key, table)
        links[key] = link
        if link.kind == "pcie":
            links.update(_pcie_widths(link))
    return links


def find_link(name: str) -> Link:
    """A link by key ('nvlink4', 'ib_ndr', 'pcie5x8'); DeviceError listing the known ones otherwise."""
    key = name.strip().lower()
    links = link_catalogue()
    if key in links:
        return links[key]
    import difflib

    close = difflib.get_close_matches(key, list(links), n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    known = ", ".join(k for k in links if not (k.startswith("pcie") and "x" in k))
    raise DeviceError(f"unknown link '{name}'; {hint}known: {known} (PCIe also as pcie4x8 etc.)")


def device_link(device: Device) -> Link:
    """The link a collective on `device` crosses by default: its NVLink, else its host link."""
    key = device.nvlink or device.host_link
    if not key:
        raise DeviceError(f"{device.name} names no link between chips; name one, e.g. link=ib_ndr")
    return find_link(key)


def link_rate_key(link_key: str) -> str:
    """The device-rate key a measured rate of this link is stored under: 'link:nvlink4'."""
    return f"{LINK_RATE_PREFIX}{link_key}"


def linked_key(rate_key: str) -> str | None:
    """The link key inside a device-rate key ('link:nvlink4' → 'nvlink4'); None for any other key."""
    return rate_key[len(LINK_RATE_PREFIX):] if rate_key.startswith(LINK_RATE_PREFIX) else None


def is_byte_rate(rate_key: str) -> bool:
    """True for the device rates counted in B/s: the memory bandwidth, every interface, every link."""
    return rate_key == BANDWIDTH or rate_key in interface_keys() or linked_key(rate_key) is not None


def known_rate_key(rate_key: str) -> bool:
    """True for an interface key or a link rate naming a catalogue link (what a session may store)."""
    link = linked_key(rate_key)
    if link is None:
        return rate_key in interface_keys()
    return link in link_catalogue()


def link_in_use(link: Link, device: Device | None) -> Link:
    """The link with the device's measured (or entered) per-direction rate in place of the catalogue one."""
    if device is None:
        return link
    rate = device.overrides.get(link_rate_key(link.key))
    if rate is None:
        return link
    return replace(
        link,
        per_direction=rate.value,
        both_directions=2 * rate.value,
        source=rate.citation or f"{rate.source} rate",
        origin=rate.source,
        line_rate_bit_per_s=None,
    )


__all__ = [
    "LINK_KINDS",
    "LINK_RATE_PREFIX",
    "Link",
    "device_link",
    "find_link",
    "is_byte_rate",
    "known_rate_key",
    "link_catalogue",
    "link_from_table",
    "link_in_use",
    "link_rate_key",
    "linked_key",
]
