"""The named interfaces bytes cross, from far memory to the registers, registered once.

The chapter's rule: "the kernel moves 100 MB" says nothing until it names the
source and the destination. Every byte figure in the workbench therefore
belongs to one of these interfaces, and every bandwidth a device has is keyed
by the same key in its rates (`Device.peak` / `Device.overrides`), so a
measured L2 rate overrides the datasheet one exactly as a measured HBM rate
does.

Order is from the host inwards; a hierarchical roofline draws one roof per
interface in this order. The HBM interface keeps the key `hbm` that the memory
bandwidth always had (`devices.catalogue.BANDWIDTH`); on GDDR cards and CPUs
the same interface is DRAM, and `name_on` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import DeviceError

HOST = "host"  # host memory ↔ device memory: PCIe or NVLink-C2C
HBM = "hbm"  # device memory → the on-chip caches (L2): the compulsory interface
L2 = "l2"  # L2 → the SMs (L1 / shared memory)
SMEM = "smem"  # shared memory → registers


@dataclass(frozen=True)
class Interface:
    """One named interface: where the bytes come from and where they go."""

    key: str
    source: str  # where the bytes live before the transfer ("HBM", "L2")
    destination: str  # where they are used after it ("L2", "SM (L1 / shared memory)")
    description: str

    @property
    def name(self) -> str:
        """'HBM → L2': the interface as the derivation and the plots name it."""
        return f"{self.source} → {self.destination}"

    def name_on(self, memory_name: str) -> str:
        """The name on a device whose memory is `memory_name` ('DRAM → L2' on a GDDR card)."""
        if self.key == HBM:
            return f"{memory_name} → {self.destination}"
        return self.name


INTERFACES: tuple[Interface, ...] = (
    Interface(HOST, "host memory", "device memory", "host ↔ device copies over PCIe or NVLink-C2C"),
    Interface(HBM, "HBM", "L2", "device memory into the on-chip caches; each input read once and each output written once under the compulsory model"),
    Interface(L2, "L2", "SM (L1 / shared memory)", "the L2 cache into each SM's L1 / shared memory"),
    Interface(SMEM, "shared memory", "registers", "shared memory into the registers the math units read"),
)

_BY_KEY = {interface.key: interface for interface in INTERFACES}


def interface(key: str) -> Interface:
    """The registered interface with this key; DeviceError naming the known keys otherwise."""
    try:
        return _BY_KEY[key]
    except KeyError:
        known = ", ".join(_BY_KEY)
        raise DeviceError(f"unknown interface {key!r} (known: {known})") from None


def interface_keys() -> tuple[str, ...]:
    """Every interface key, from the host inwards."""
    return tuple(_BY_KEY)
