"""What each device rate is called and what it is held against: paths, interfaces, links, in one place.

A device's rates are keyed by instruction path ("fp16_tc"), by interface
("hbm", "l2", "host", "smem": devices/interfaces.py) and by link
("link:nvlink4": devices/links.py). The calibration dialog, the device panel
and `workbench calibrate` all name them with `rate_title` and compare a
measured figure with `reference_rate`, so the three never disagree.
"""

from __future__ import annotations

from workbench.model.devices.catalogue import BANDWIDTH, DATASHEET, DERIVED, PATH_TITLES, Device, Rate
from workbench.model.devices.interfaces import HOST, L2, interface
from workbench.model.devices.links import find_link, linked_key
from workbench.errors import DeviceError


def rate_title(key: str, gpu: bool, memory_name: str = "") -> str:
    """What a calibrated (or any) device rate is called in the dialog, the panel and the CLI.

    'memory bandwidth (HBM)', 'L2 → SM (L1 / shared memory)', on a CPU
    'last-level cache → cores' and the host-link stand-in; a link rate by the
    link's name; an instruction path by its title ('FP16 tensor cores, FP32
    accumulate' on a GPU, the key alone on a CPU).
    """
    if key == BANDWIDTH:
        return f"memory bandwidth ({memory_name or ('HBM' if gpu else 'DRAM')})"
    if key == L2:
        return interface(L2).name if gpu else "last-level cache → cores (the CPU's L2 interface)"
    if key == HOST:
        return "host ↔ device" if gpu else "host memory copy (CPU stand-in for the host link)"
    link = linked_key(key)
    if link is not None:
        try:
            return f"{find_link(link).name}, per direction"
        except DeviceError:
            return f"link {link}, per direction"
    try:
        return interface(key).name
    except DeviceError:
        return PATH_TITLES.get(key, key) if gpu else key


def reference_rate(key: str, device: Device | None) -> Rate | None:
    """The device's own figure for a calibrated key (datasheet or derived), for 'measured / datasheet'."""
    link = linked_key(key)
    if link is not None:
        try:
            found = find_link(link)
        except DeviceError:
            return None
        return Rate(found.per_direction, found.origin if found.origin in (DATASHEET, DERIVED) else DATASHEET, found.source)
    if device is None:
        return None
    return device.peak.get(key)


__all__ = ["rate_title", "reference_rate"]
