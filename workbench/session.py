"""The session: what a user declared, on which device, with which settings, and what was measured.

A session is plain data (no Qt): the GUI observes it, the file format
serialises it, reports render it. Derived figures (FLOP, bytes, bounds) are
not stored as truth: they are recomputed from the declarations on load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.analysis import Analysis, analyze
from workbench.devices import Device, Rate, find_device

DEFAULT_DEVICE = "h100-sxm"


@dataclass
class OperationEntry:
    """One declared operation: a name the user chose, its declaration line, free-text notes."""

    name: str
    declaration: str
    notes: str = ""


@dataclass
class Settings:
    """How figures are counted and shown."""

    convention: str = "fma2"  # "fma2" or "mac"
    overlap: float = 1.0  # fraction f of the shorter bound hidden: 1 full, 0 none
    binary: bool = False  # bytes in MiB/GiB instead of MB/GB


@dataclass
class DeviceChoice:
    """The device the bounds use: a catalogue key (or nvml-N) and rate overrides on top of it.

    `overrides` maps a path (or "hbm") to a Rate whose source is measured or entered.
    """

    key: str = DEFAULT_DEVICE
    overrides: dict[str, Rate] = field(default_factory=dict)

    def resolve(self, detected: Device | None = None) -> Device:
        """The Device with overrides applied; `detected` stands in for an nvml-N key."""
        base = detected if detected is not None and detected.key == self.key else find_device(self.key)
        device = base
        for path, rate in self.overrides.items():
            device = device.with_rate(path, rate.value, rate.source, rate.citation)
        return device


@dataclass
class Session:
    """Everything a user saves and shares."""

    operations: list[OperationEntry] = field(default_factory=list)
    device: DeviceChoice = field(default_factory=DeviceChoice)
    settings: Settings = field(default_factory=Settings)
    runs: list[dict[str, Any]] = field(default_factory=list)  # measurement run records
    profiles: list[dict[str, Any]] = field(default_factory=list)  # imported profiler kernels
    title: str = ""

    def analyse(self, entry: OperationEntry, device: Device | None = None) -> Analysis:
        """The analysis of one entry under this session's device and settings."""
        return analyze(
            entry.declaration,
            device=device if device is not None else self.device.resolve(),
            convention=self.settings.convention,
            overlap=self.settings.overlap,
            binary=self.settings.binary,
        )
