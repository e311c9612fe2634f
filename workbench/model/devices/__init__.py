"""Devices: the datasheet catalogue, NVML detection and instruction-path rates."""

from workbench.model.devices.catalogue import (
    BANDWIDTH,
    DATASHEET,
    DERIVED,
    ENTERED,
    MEASURED,
    NOMINAL,
    PATH_TITLES,
    PATHS,
    Device,
    Rate,
    catalogue,
    find_device,
    match_reported_name,
)

__all__ = [
    "BANDWIDTH",
    "DATASHEET",
    "DERIVED",
    "ENTERED",
    "MEASURED",
    "NOMINAL",
    "PATH_TITLES",
    "PATHS",
    "Device",
    "Rate",
    "catalogue",
    "find_device",
    "match_reported_name",
]
