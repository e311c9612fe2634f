"""The device catalogue: resources/devices.toml's devices by key, by name, and by the name a driver reports.

The records themselves (Device, Rate, Latency, the rate sources) are in devices/device.py and are
re-exported here, where most readers have always looked for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Mapping

from workbench.model.devices.device import (  # noqa: F401  (re-exported)
    BANDWIDTH,
    DATASHEET,
    DERIVED,
    ENTERED,
    HOST_CPU_KEY,
    INTERFACE_RATE_KEYS,
    LATENCY_LOADS,
    LATENCY_ORIGINS,
    LINKS_TABLE,
    MAX_LATENCY_S,
    MAX_RATE,
    MEASURED,
    MIN_LATENCY_S,
    MIN_RATE,
    NOMINAL,
    PATH_TITLES,
    PATHS,
    SMEM_ARCHITECTURES,
    SMEM_BYTES_PER_CLOCK,
    SOURCES,
    Device,
    Latency,
    Rate,
    catalogue_data,
    device_from_table,
    host_link_rate,
    rate_problem,
    shared_memory_rate,
)
from workbench.model.devices.host import host_device
from workbench.model.devices.links import link_catalogue
from workbench.errors import DeviceError


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Device]:
    """Every device in resources/devices.toml, keyed by its short key; links named by a device must exist."""
    links = link_catalogue()
    data = catalogue_data()
    devices = {key: device_from_table(key, _with_base(key, table, data)) for key, table in data.items() if key != LINKS_TABLE}
    for device in devices.values():
        for field_name in ("nvlink", "host_link"):
            named = getattr(device, field_name)
            if named and named not in links:
                raise DeviceError(f"device catalogue, {device.key}.{field_name}: unknown link '{named}'")
    for key, device in devices.items():
        if device.host_link and "host" not in device.peak:  # host ↔ device: the host link's rate per direction
            devices[key] = replace(device, peak={**device.peak, "host": host_link_rate(links[device.host_link])})
    return devices


def _with_base(key: str, table: Mapping[str, Any], data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A variant's table (`variant_of = "v100-sxm2"`: another memory size, the same chip) over its base's."""
    base_key = table.get("variant_of")
    if base_key is None:
        return table
    base = data.get(str(base_key))
    if not isinstance(base, Mapping) or "variant_of" in base or base_key == LINKS_TABLE:
        raise DeviceError(f"device catalogue, {key}.variant_of: '{base_key}' is not a device entry")
    return {**base, **{name: value for name, value in table.items() if name != "variant_of"}}


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())




def find_device(name: str) -> Device:
    """A device by key ("h100-sxm"), full name, or NVML-style name; "host-cpu" is this machine's CPU.

    An unknown name raises DeviceError that suggests the closest keys.
    """
    devices = catalogue()
    wanted = _normalise(name)
    if not wanted:
        raise DeviceError("empty device name; see `workbench devices`")
    if wanted == _normalise(HOST_CPU_KEY):
        return host_device()
    for device in devices.values():
        if wanted in (_normalise(device.key), _normalise(device.name)):
            return device
    matched = match_reported_name(name)
    if matched is not None:
        return matched
    keys = ", ".join([*devices, HOST_CPU_KEY])
    suggestion = closest_keys(name)
    hint = f"did you mean {' or '.join(suggestion)}? " if suggestion else ""
    raise DeviceError(f"unknown device '{name}'; {hint}known: {keys}")


def closest_keys(name: str, limit: int = 2) -> list[str]:
    """Device keys that look like a mistyped `name` ('h100sx' → h100-sxm), best first."""
    import difflib

    keys = [*catalogue(), HOST_CPU_KEY]
    by_normal = {_normalise(key): key for key in keys}
    by_normal.update({_normalise(device.name): device.key for device in catalogue().values()})
    close = difflib.get_close_matches(_normalise(name), list(by_normal), n=limit * 3, cutoff=0.6)
    found: list[str] = []
    for normal in close:
        key = by_normal[normal]
        if key not in found:
            found.append(key)
    return found[:limit]


# -- matching the name a driver reports ----------------------------------------

_BUS_WORDS = {"pcie": "pcie", "sxm": "sxm"}
_MEMORY_TYPES = ("HBM3e", "HBM3", "HBM2e", "HBM2", "GDDR6X", "GDDR6")
_NAMED_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*G(?:B)?(?![a-z])", re.IGNORECASE)
_MEMORY_TOLERANCE = 1.6  # a memory size further than this factor from every candidate says nothing


@dataclass(frozen=True)
class DeviceMatch:
    """The catalogue entry chosen for a reported GPU name, and each step of why."""

    device: Device
    reasons: tuple[str, ...]
    candidates: tuple[str, ...]  # keys of the family the name belongs to
    closest: bool = False  # True when nothing told the variants apart and the first was taken

    # by hand: its key and name are its device's
    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.device.key,
            "name": self.device.name,
            "candidates": list(self.candidates),
            "reasons": list(self.reasons),
            "closest": self.closest,
        }


def _bus_in_name(text: str) -> str:
    lowered = text.lower()
    for word, bus in _BUS_WORDS.items():
        if word in lowered:
            return bus
    return ""


def _memory_type_in_name(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    for memory_type in _MEMORY_TYPES:
        if memory_type.lower() in words:
            return memory_type
    return ""


def _size_in_name(text: str) -> int | None:
    found = _NAMED_SIZE.search(text)
    return int(float(found.group(1)) * 1e9) if found else None


def _gib(size: int) -> str:
    return f"{size / 2**30:.0f} GiB" if size >= 2**30 else f"{size} B"


def match_device(reported: str, memory_bytes: int | None = None, bus: str = "") -> DeviceMatch | None:
    """The catalogue entry for a name a driver reports, told apart by bus and memory; None if no family fits.

    The longest `match` fragment found in the name picks the family ("GH200"
    wins over "H200"); then the bus ("PCIe" in the name, or `bus`), a memory
    type in the name ("HBM3e"), and the memory size (`memory_bytes` from
    NVML, else a size in the name such as "80GB") pick the variant. NVIDIA
    puts "PCIe" in its PCIe cards' names, so a name without it is the SXM form.
    """
    text = _normalise(reported)
    if not text:
        return None
    best_length = 0
    family: list[Device] = []
    fragment_seen = ""
    for device in catalogue().values():
        for fragment in device.match:
            normal = _normalise(fragment)
            if not normal or normal not in text:
                continue
            if len(normal) > best_length:
                best_length, family, fragment_seen = len(normal), [device], fragment
            elif len(normal) == best_length and device not in family:
                family.append(device)
    if not family:
        return None
    keys = tuple(d.key for d in family)
    reasons = [f"'{fragment_seen}' in the name: " + (f"{len(family)} entries ({', '.join(keys)})" if len(family) > 1 else f"the {family[0].key} entry")]
    candidates = list(family)

    def narrow(keep: list[Device], why: str) -> None:
        nonlocal candidates
        if keep and len(keep) < len(candidates):
            candidates = keep
            reasons.append(why)

    wanted_bus = bus.lower() or _bus_in_name(reported)
    buses = {d.bus for d in candidates}
    if len(buses) > 1:
        if wanted_bus:
            told = "given" if bus else "in the name"
            narrow([d for d in candidates if d.bus == wanted_bus], f"bus {'PCIe' if wanted_bus == 'pcie' else wanted_bus.upper()} ({told}): {', '.join(d.key for d in candidates if d.bus == wanted_bus)}")
        elif any(d.bus == "sxm" for d in candidates):
            narrow([d for d in candidates if d.bus == "sxm"], "no 'PCIe' in the name: NVIDIA names its PCIe cards '… PCIe', so the SXM form")

    memory_type = _memory_type_in_name(reported)
    if memory_type and len({d.memory_type for d in candidates}) > 1:
        narrow([d for d in candidates if d.memory_type.lower() == memory_type.lower()], f"{memory_type} in the name")

    size, size_from = (memory_bytes, "NVML reports") if memory_bytes else (_size_in_name(reported), "the name says")
    sized = [d for d in candidates if d.memory_bytes]
    if size and len(sized) > 1 and len({d.memory_bytes for d in sized}) > 1:
        import math

        distance = {d.key: abs(math.log(size / d.memory_bytes)) for d in sized}  # type: ignore[operator]
        nearest = min(sized, key=lambda d: distance[d.key])
        if distance[nearest.key] <= math.log(_MEMORY_TOLERANCE):
            shown = f"{size / 1e9:.0f} GB" if size_from == "the name says" else _gib(size)
            narrow([nearest], f"{size_from} {shown} of memory: nearest is {nearest.key} ({nearest.memory_bytes / 1e9:.0f} GB)")  # type: ignore[operator]
        else:
            reasons.append(f"{size_from} {size / 1e9:.0f} GB, far from every variant's GPU memory: not used to choose")
    closest = len(candidates) > 1
    if closest:
        reasons.append(
            f"{len(candidates)} entries still fit ({', '.join(d.key for d in candidates)}): the first, {candidates[0].key}, "
            "is used; give the memory size (--memory-gib) to choose"
        )
    return DeviceMatch(candidates[0], tuple(reasons), keys, closest)


def match_reported_name(reported: str, memory_bytes: int | None = None) -> Device | None:
    """The catalogue entry for a name NVML reports (and its memory size, when known), if any."""
    found = match_device(reported, memory_bytes)
    return found.device if found is not None else None
