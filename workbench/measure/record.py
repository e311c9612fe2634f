"""The run record: everything one measurement produced, as a frozen, self-describing value.

A record keeps the raw samples and the device the run ran on (its
provenance), not figures derived from them: the median, achieved bytes/s and
FLOP/s and the fraction of a bound are derived by `workbench.measure.runs.run_figures`
(under the session's convention, on the run's own device), the one place
every view reads them from. `to_dict()` is plain JSON data — what the session
stores in `Session.runs` — and `from_dict()` reads it back (version 1 records
too), refusing anything that is not a run record with one clear message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from workbench.model.devices.provenance import DeviceProvenance
from workbench.measure.check import CheckResult
from workbench.measure.errors import MeasurementError
from workbench.measure.stats import TimingStats, summarize
from workbench.records import from_plain, record, to_plain

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.model.analysis import Analysis

RECORD_FORMAT = "perf-workbench-run"
MAX_SAMPLE_S = 1e6  # a timing sample past 11 days is not one (and 1.7e308 overflows a sum of samples)
RECORD_VERSION = 2  # 2: the device the run ran on (provenance); no derived figures stored

OK = "ok"
INVALID = "invalid"
CANCELLED = "cancelled"
STATUSES = (OK, INVALID, CANCELLED)

WARM = "warm"
COLD = "cold"
MODES = (WARM, COLD)


@dataclass(frozen=True)
class KernelInfo:
    """What ran: the algorithm, the instruction path, and the traffic this implementation implies."""

    family: str
    algorithm: str
    executed_path: str
    implied_bytes: int
    implied_note: str
    notes: tuple[str, ...] = ()
    buffers: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "KernelInfo":
        return from_plain(data, cls)


@dataclass(frozen=True)
class BoundInfo:
    """The lower bound the run is compared with: device, rates and their sources, times."""

    device: str
    path: str
    compute_rate_flop_per_s: float | None
    compute_rate_source: str | None
    bandwidth_byte_per_s: float | None
    bandwidth_source: str | None
    compute_time_s: float | None
    memory_time_s: float | None
    bound_time_s: float | None
    overlap: str
    limiter: str | None

    @classmethod
    def from_analysis(cls, analysis: "Analysis") -> "BoundInfo":
        """The bound an Analysis computed (its device, rates, overlap and limiter)."""
        return cls(
            device=analysis.device_name or "entered rates",
            path=analysis.path,
            compute_rate_flop_per_s=analysis.compute_rate.value if analysis.compute_rate else None,
            compute_rate_source=analysis.compute_rate.source if analysis.compute_rate else None,
            bandwidth_byte_per_s=analysis.bandwidth.value if analysis.bandwidth else None,
            bandwidth_source=analysis.bandwidth.source if analysis.bandwidth else None,
            compute_time_s=analysis.compute_time,
            memory_time_s=analysis.memory_time,
            bound_time_s=analysis.bound_time,
            overlap=analysis.overlap.label,
            limiter=analysis.limiter,
        )

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BoundInfo":
        return from_plain(data, cls)


@dataclass(frozen=True)
class RunRecord:
    """One measurement of one declared operation: samples, derived figures, check, conditions."""

    id: str
    created: str  # ISO 8601, UTC
    declaration: str
    operation: str
    params: Mapping[str, Any]
    backend: str
    device: str
    mode: str
    iterations: int  # requested timed iterations
    warmup_calls: int
    first_call_s: float | None
    status: str
    message: str
    notes: tuple[str, ...]
    samples_s: tuple[float, ...]
    convention: str
    flop: int
    bytes: int  # compulsory bytes of the declared operation (the core's count)
    kernel: KernelInfo
    check: CheckResult | None
    bound: BoundInfo | None
    timer: str
    environment: Mapping[str, Any] = field(default_factory=dict)
    conditions_before: Mapping[str, Any] = field(default_factory=dict)
    conditions_after: Mapping[str, Any] = field(default_factory=dict)
    provenance: DeviceProvenance | None = None  # None only in a version-1 record read back

    # -- figures derived from the raw samples ----------------------------------------
    @property
    def stats(self) -> TimingStats | None:
        return summarize(self.samples_s) if self.samples_s else None

    @property
    def valid(self) -> bool:
        """True only for a finished run whose reference check passed: the only kind worth plotting as good."""
        return self.status == OK

    @property
    def median_s(self) -> float | None:
        stats = self.stats
        return stats.median_s if stats else None

    # -- serialisation ------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data: the measured facts only (figures are derived from them, never stored)."""
        return to_plain(self)

    def conditions_summary(self) -> dict[str, Any]:
        """One flat mapping of what the run ran on and under: device, backend, mode, timer, before/after readings."""
        summary: dict[str, Any] = {"device": self.device, "backend": self.backend, "mode": self.mode, "timer": self.timer}
        for key in ("numpy", "cupy", "cuda_runtime", "driver", "blas"):
            if self.environment.get(key) not in (None, ""):
                summary[key] = self.environment[key]
        for when, readings in (("before", self.conditions_before), ("after", self.conditions_after)):
            for key, value in readings.items():
                summary[f"{key} ({when})"] = value
        return summary

    @classmethod
    def from_dict(cls, data: Any) -> "RunRecord":
        """Read a record written by `to_dict()`; MeasurementError names what is wrong."""
        if not isinstance(data, Mapping) or data.get("format") != RECORD_FORMAT:
            raise MeasurementError(f"not a measurement run record (expected format '{RECORD_FORMAT}')")
        version = data.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise MeasurementError(f"run record version {version!r} is not one the workbench writes (1 to {RECORD_VERSION})")
        if version > RECORD_VERSION:
            raise MeasurementError(f"run record version {version!r} is newer than this workbench reads ({RECORD_VERSION})")
        try:
            return from_plain(data, cls)
        except MeasurementError:
            raise
        except KeyError as exc:
            raise MeasurementError(f"run record is missing '{exc.args[0]}'") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise MeasurementError(f"run record has a malformed field: {exc}") from None


def _status(value: Any) -> str:
    status = str(value)
    if status not in STATUSES:
        raise MeasurementError(f"run record status '{status}' is not one of {', '.join(STATUSES)}")
    return status


def _samples(value: Any) -> tuple[float, ...]:
    samples = tuple(float(s) for s in value)
    if any(not math.isfinite(s) or s < 0 or s > MAX_SAMPLE_S for s in samples):
        raise MeasurementError(f"run record samples must be seconds from 0 to {MAX_SAMPLE_S:g}")
    return samples


def _present(read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A nested record read from a value that is there; an empty or null one reads as None."""
    return lambda value: read(value) if value else None


record(KernelInfo)
# only the device and the path are required of a bound; a missing figure or source is None
_BOUND_OPTIONAL = [name for name in BoundInfo.__dataclass_fields__ if name not in ("device", "path", "overlap")]
record(BoundInfo, missing={**dict.fromkeys(_BOUND_OPTIONAL), "overlap": "full"})
record(
    RunRecord,
    header={"format": RECORD_FORMAT, "version": RECORD_VERSION},
    missing={**dict.fromkeys(("first_call_s", "check", "bound", "provenance")), "notes": ()},
    load={
        "status": _status,
        "samples_s": _samples,
        "check": _present(CheckResult.from_dict),
        "bound": _present(BoundInfo.from_dict),
        "provenance": _present(DeviceProvenance.from_dict),
    },
)
