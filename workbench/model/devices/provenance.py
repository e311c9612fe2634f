"""Provenance: the device a run or an imported profile really ran on, as it was stated at the time.

A measurement belongs to its hardware. A CuPy run states the GPU through
NVML and CUDA (name, UUID, PCI bus id, driver and CUDA versions), a NumPy
run states the CPU's model name, an Nsight file states what it printed
(a device name, a compute capability, clocks). `catalogue_key` is the
catalogue entry that statement was matched to, and `matched_by` says how,
so a reader can judge the match. Plain data, Qt-free, JSON both ways.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from workbench.records import from_plain, record, to_plain

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.model.devices.catalogue import Device

GPU = "gpu"
CPU = "cpu"

# Who stated the device: the order is also how much a reader may trust it.
STATED_BY_NVML = "NVML and the CUDA runtime"
STATED_BY_OS = "the operating system (CPU model name)"
STATED_BY_FILE = "the profile file"
STATED_BY_USER = "the user (--device)"
INFERRED = "inferred: the run was recorded before runs carried their device"


@dataclass(frozen=True)
class DeviceProvenance:
    """What one run or profile says about the device it ran on, and the catalogue entry that matches it."""

    kind: str  # "gpu", "cpu", or "" when nothing says
    name: str  # "NVIDIA H100 80GB HBM3", "AMD EPYC 9654 96-Core Processor"; "" when unknown
    catalogue_key: str = ""  # the matched catalogue entry ("h100-sxm", "cpu-generic"); "" when none
    matched_by: str = ""  # how the entry was chosen: "name", "compute capability 9.0", "--device"
    stated_by: str = ""  # one of the STATED_BY_* texts, or INFERRED
    uuid: str = ""
    pci_bus_id: str = ""
    driver_version: str = ""
    cuda_version: str = ""  # the CUDA runtime the run used
    compute_capability: str = ""
    memory_bytes: int | None = None
    cache_bytes: int | None = None  # L2 on a GPU, the last-level cache on a CPU, as the hardware reports it
    clocks_hz: Mapping[str, float] = field(default_factory=dict)  # "sm", "dram": what a profile states

    @property
    def stated(self) -> bool:
        """True when the device was stated by the run or the file, not guessed afterwards."""
        return self.stated_by not in ("", INFERRED)

    @property
    def label(self) -> str:
        """The device in a few words: its stated name, or the kind when nothing names it."""
        if self.name:
            return self.name
        if self.compute_capability:
            return f"a GPU of compute capability {self.compute_capability}"
        return {GPU: "an unnamed GPU", CPU: "an unnamed CPU"}.get(self.kind, "an unknown device")

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> "DeviceProvenance":
        """Read what `to_dict()` wrote; anything malformed is left out rather than trusted."""
        if not isinstance(data, Mapping):
            return cls(kind="", name="", stated_by=INFERRED)
        return from_plain(data, cls)


_OPTIONAL_TEXTS = ("uuid", "pci_bus_id", "driver_version", "cuda_version", "compute_capability")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _clocks(value: Any) -> dict[str, float]:
    return {
        str(name): float(rate)
        for name, rate in (value.items() if isinstance(value, Mapping) else ())
        if isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0
    }


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


# Every field is read leniently (a wrong type reads as unknown); the optional facts are written only when known.
_PROVENANCE_TEXTS = ("name", "catalogue_key", "matched_by", "stated_by", *_OPTIONAL_TEXTS)
record(
    DeviceProvenance,
    omit_default=(*_OPTIONAL_TEXTS, "memory_bytes", "cache_bytes", "clocks_hz"),
    missing={**dict.fromkeys(("kind", *_PROVENANCE_TEXTS), ""), "memory_bytes": None, "cache_bytes": None, "clocks_hz": None},
    load={
        "kind": lambda value: value if value in (GPU, CPU) else "",
        **dict.fromkeys(_PROVENANCE_TEXTS, _text),
        "memory_bytes": _positive_int,
        "cache_bytes": _positive_int,
        "clocks_hz": _clocks,
    },
)


def provenance_from_environment(backend_kind: str, environment: Mapping[str, Any], catalogue_key: str, matched_by: str) -> DeviceProvenance:
    """The provenance a measurement backend's `environment()` states (NVML/CUDA for a GPU, the OS for a CPU)."""
    if backend_kind == GPU:
        return DeviceProvenance(
            kind=GPU,
            name=str(environment.get("device_name") or ""),
            catalogue_key=catalogue_key,
            matched_by=matched_by,
            stated_by=STATED_BY_NVML,
            uuid=str(environment.get("uuid") or ""),
            pci_bus_id=str(environment.get("pci_bus_id") or ""),
            driver_version=str(environment.get("driver") or ""),
            cuda_version=str(environment.get("cuda_runtime") or ""),
            compute_capability=str(environment.get("compute_capability") or ""),
            memory_bytes=_positive_int(environment.get("memory_total_bytes")),
            cache_bytes=_positive_int(environment.get("l2_bytes")),
        )
    return DeviceProvenance(
        kind=CPU,
        name=str(environment.get("cpu") or ""),
        catalogue_key=catalogue_key,
        matched_by=matched_by,
        stated_by=STATED_BY_OS,
        cache_bytes=_positive_int(environment.get("last_level_cache_bytes")),
    )


# ---------------------------------------------------------------- the catalogue entry for a provenance

CPU_DEVICE_KEY = "cpu-generic"  # the catalogue's stand-in CPU: for a CPU that is not this machine's


def cpu_catalogue_device(name: str | None = None) -> "Device":
    """The device a CPU run is compared with: this machine's CPU (detected: cores, SIMD, caches) when the run
    states this machine's CPU model, or states none because it runs now (`name` None); the generic stand-in
    for another machine's CPU, whose figures nothing here knows.
    """
    from workbench.model.devices.catalogue import find_device
    from workbench.model.devices.host import host_cpu_names, host_device

    if name is None or (name and name in host_cpu_names()):
        return host_device()
    return find_device(CPU_DEVICE_KEY)


def devices_with_compute_capability(capability: str) -> "list[Device]":
    """Catalogue GPUs of one compute capability ('9.0': the Hopper parts), in catalogue order."""
    from workbench.model.devices.catalogue import catalogue

    return [d for d in catalogue().values() if d.kind == GPU and capability and d.compute_capability == capability]


def match_catalogue(kind: str, name: str, compute_capability: str = "") -> "tuple[Device | None, str]":
    """The catalogue entry a stated device matches, and how: by name, else by compute capability, else none.

    A compute capability alone names an architecture, not a part: the first
    entry of that capability is taken and the others are listed in the
    returned words, so the choice stays visible.
    """
    from workbench.model.devices.catalogue import match_reported_name

    if kind == CPU:
        device = cpu_catalogue_device(name)
        return device, "this machine's CPU" if device.key != CPU_DEVICE_KEY else "the CPU entry"
    if name:
        known = match_reported_name(name)
        if known is not None:
            return known, "name"
    candidates = devices_with_compute_capability(compute_capability)
    if candidates:
        first = candidates[0]
        others = ", ".join(d.name for d in candidates[1:])
        how = f"compute capability {compute_capability}, no GPU named"
        return first, how + (f"; could also be {others}" if others else "")
    return None, ""


def catalogue_device(provenance: DeviceProvenance) -> "Device | None":
    """The catalogue Device of a provenance: its recorded key, else a fresh match of what it states."""
    from workbench.model.devices.catalogue import catalogue

    automatic_cpu = provenance.kind == CPU and provenance.matched_by != "--device"
    if provenance.catalogue_key and not automatic_cpu:
        known = catalogue().get(provenance.catalogue_key)
        if known is not None:
            return known
    if provenance.kind == CPU:
        return cpu_catalogue_device(provenance.name)
    device, _ = match_catalogue(provenance.kind, provenance.name, provenance.compute_capability)
    return device
