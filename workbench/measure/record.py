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
from typing import TYPE_CHECKING, Any, Mapping

from workbench.model.devices.provenance import DeviceProvenance
from workbench.measure.check import CheckResult
from workbench.measure.errors import MeasurementError
from workbench.measure.stats import TimingStats, summarize

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
        return {
            "family": self.family,
            "algorithm": self.algorithm,
            "executed_path": self.executed_path,
            "implied_bytes": self.implied_bytes,
            "implied_note": self.implied_note,
            "notes": list(self.notes),
            "buffers": [dict(b) for b in self.buffers],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "KernelInfo":
        return cls(
            family=str(data["family"]),
            algorithm=str(data["algorithm"]),
            executed_path=str(data["executed_path"]),
            implied_bytes=int(data["implied_bytes"]),
            implied_note=str(data["implied_note"]),
            notes=tuple(str(n) for n in data.get("notes", ())),
            buffers=tuple(dict(b) for b in data.get("buffers", ())),
        )


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
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BoundInfo":
        def number(name: str) -> float | None:
            return None if data.get(name) is None else float(data[name])

        def text(name: str) -> str | None:
            return None if data.get(name) is None else str(data[name])

        return cls(
            device=str(data["device"]),
            path=str(data["path"]),
            compute_rate_flop_per_s=number("compute_rate_flop_per_s"),
            compute_rate_source=text("compute_rate_source"),
            bandwidth_byte_per_s=number("bandwidth_byte_per_s"),
            bandwidth_source=text("bandwidth_source"),
            compute_time_s=number("compute_time_s"),
            memory_time_s=number("memory_time_s"),
            bound_time_s=number("bound_time_s"),
            overlap=str(data.get("overlap", "full")),
            limiter=text("limiter"),
        )


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
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "id": self.id,
            "created": self.created,
            "declaration": self.declaration,
            "operation": self.operation,
            "params": dict(self.params),
            "backend": self.backend,
            "device": self.device,
            "mode": self.mode,
            "iterations": self.iterations,
            "warmup_calls": self.warmup_calls,
            "first_call_s": self.first_call_s,
            "status": self.status,
            "message": self.message,
            "notes": list(self.notes),
            "samples_s": list(self.samples_s),
            "convention": self.convention,
            "flop": self.flop,
            "bytes": self.bytes,
            "kernel": self.kernel.to_dict(),
            "check": self.check.to_dict() if self.check else None,
            "bound": self.bound.to_dict() if self.bound else None,
            "timer": self.timer,
            "environment": dict(self.environment),
            "conditions_before": dict(self.conditions_before),
            "conditions_after": dict(self.conditions_after),
            "provenance": self.provenance.to_dict() if self.provenance else None,
        }

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
            status = str(data["status"])
            if status not in STATUSES:
                raise MeasurementError(f"run record status '{status}' is not one of {', '.join(STATUSES)}")
            samples = tuple(float(s) for s in data["samples_s"])
            if any(not math.isfinite(s) or s < 0 or s > MAX_SAMPLE_S for s in samples):
                raise MeasurementError(f"run record samples must be seconds from 0 to {MAX_SAMPLE_S:g}")
            return cls(
                id=str(data["id"]),
                created=str(data["created"]),
                declaration=str(data["declaration"]),
                operation=str(data["operation"]),
                params=dict(data["params"]),
                backend=str(data["backend"]),
                device=str(data["device"]),
                mode=str(data["mode"]),
                iterations=int(data["iterations"]),
                warmup_calls=int(data["warmup_calls"]),
                first_call_s=None if data.get("first_call_s") is None else float(data["first_call_s"]),
                status=status,
                message=str(data["message"]),
                notes=tuple(str(n) for n in data.get("notes", ())),
                samples_s=samples,
                convention=str(data["convention"]),
                flop=int(data["flop"]),
                bytes=int(data["bytes"]),
                kernel=KernelInfo.from_dict(data["kernel"]),
                check=CheckResult.from_dict(data["check"]) if data.get("check") else None,
                bound=BoundInfo.from_dict(data["bound"]) if data.get("bound") else None,
                timer=str(data["timer"]),
                environment=dict(data.get("environment", {})),
                conditions_before=dict(data.get("conditions_before", {})),
                conditions_after=dict(data.get("conditions_after", {})),
                provenance=DeviceProvenance.from_dict(data["provenance"]) if data.get("provenance") else None,
            )
        except MeasurementError:
            raise
        except KeyError as exc:
            raise MeasurementError(f"run record is missing '{exc.args[0]}'") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise MeasurementError(f"run record has a malformed field: {exc}") from None
