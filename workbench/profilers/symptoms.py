"""The symptom of a misread profile: a kernel that moves more bytes per second than its device can.

A number read in the wrong format is off by a factor of a thousand (a
duration `231.552` ns read as 231.552 instead of 231,552), and no check
on a single value can tell. Bytes over duration can: a kernel whose DRAM
counters and duration imply several times its device's peak bandwidth
did not run as the file was read. `bandwidth_symptom()` finds it and names
the misread number format as a cause to check (likely when the format was
assumed), for the comparison's list of causes, the import's warnings, and
the impossible-result flag's reasons.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.model.devices.catalogue import BANDWIDTH, Device
from workbench.profilers.kernels import Kernel
from workbench.profilers.numbers import MARK_NAMES, NumberFormat
from workbench.model.units import format_bandwidth, format_bytes, format_number, format_time

# Implied bandwidth above this multiple of the datasheet peak is no measurement error or cache effect
# (DRAM counters count only DRAM traffic; L2 hits never reach them).
WIDE_MARGIN = 1.5


@dataclass(frozen=True)
class BandwidthSymptom:
    """A kernel whose DRAM bytes over its duration exceed its device's peak bandwidth by a wide margin."""

    kernel: str
    implied: float  # bytes per second the counters imply
    peak: float  # the device's datasheet bandwidth, bytes per second
    device: str
    explanation: str
    evidence: str
    likely: bool

    @property
    def ratio(self) -> float:
        return self.implied / self.peak

    def warning(self) -> str:
        """One line for the import's output."""
        return f"{self.kernel}: {self.evidence}: impossible; possible cause: a misread number format — {self.explanation}"


def _peak_bandwidth(device: Device) -> float | None:
    rate = device.peak.get(BANDWIDTH) or device.overrides.get(BANDWIDTH)
    return None if rate is None or rate.value <= 0 else float(rate.value)


def bandwidth_symptom(
    kernel: Kernel, device: Device | None, number_format: NumberFormat | None, binary: bool = False
) -> BandwidthSymptom | None:
    """The symptom where the kernel's DRAM bytes and duration imply over WIDE_MARGIN × the device's peak; else None."""
    if device is None or kernel.dram.total is None or kernel.duration is None:
        return None
    moved, seconds = float(kernel.dram.total.value), float(kernel.duration.value)
    peak = _peak_bandwidth(device)
    if peak is None or seconds <= 0 or moved <= 0:
        return None
    implied = moved / seconds
    if implied <= WIDE_MARGIN * peak:
        return None
    if number_format is None:
        how = "the file's number format is not recorded"
    else:
        mark = MARK_NAMES[number_format.decimal]
        how = {
            "assumed": f"the file was read with the {mark} as decimal mark by assumption (no value showed it)",
            "chosen": f"the file was read with the {mark} as decimal mark, as chosen",
            "decided": f"the file was read with the {mark} as decimal mark, decided from {number_format.evidence}",
        }[number_format.how]
    other = "," if number_format is None or number_format.decimal == "." else "."
    return BandwidthSymptom(
        kernel=kernel.base_name,
        implied=implied,
        peak=peak,
        device=device.name,
        explanation=(
            "a duration or byte count read with the wrong decimal mark is a thousand times off; "
            f"{how}: import it again with --decimal-mark {other} if it comes from a locale that writes numbers so"
        ),
        evidence=(
            f"{format_bytes(moved, binary)} in {format_time(seconds)} = {format_bandwidth(implied, binary)}, "
            f"{format_number(implied / peak, 3)}× the {format_bandwidth(peak, binary)} peak of {device.name}"
        ),
        likely=number_format is None or number_format.how != "chosen",
    )
