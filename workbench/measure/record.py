"""The run record: everything one measurement produced, as a frozen, self-describing value.

A record keeps the raw samples, so every figure derived from them (median,
spread, achieved bytes/s and FLOP/s, fraction of the bound) can be recomputed
by anyone holding the file. `to_dict()` is plain JSON data — what
`workbench measure --json` prints and what the session stores in
`Session.runs` — and `from_dict()` reads it back, refusing anything that is
not a run record with one clear message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from workbench.measure.check import CheckResult
from workbench.measure.errors import MeasurementError
from workbench.measure.stats import TimingStats, summarize

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.analysis import Analysis

RECORD_FORMAT = "perf-workbench-run"
RECORD_VERSION = 1

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

    @property
    def intensity(self) -> float:
        """Logical FLOP per compulsory byte (the x-coordinate of the run on a roofline)."""
        return self.flop / self.bytes if self.bytes else math.inf

    def _per_second(self, amount: int, seconds: float | None) -> float | None:
        if seconds is None or seconds <= 0:
            return None
        return amount / seconds

    @property
    def achieved_byte_per_s(self) -> float | None:
        """Compulsory bytes over the median time."""
        return self._per_second(self.bytes, self.median_s)

    @property
    def achieved_flop_per_s(self) -> float | None:
        """Logical FLOP over the median time."""
        return self._per_second(self.flop, self.median_s)

    @property
    def implied_byte_per_s(self) -> float | None:
        """Bytes this implementation really moves (its passes) over the median time."""
        return self._per_second(self.kernel.implied_bytes, self.median_s)

    @property
    def flop_per_s_spread(self) -> tuple[float, float] | None:
        """Achieved FLOP/s at the p90 and p10 times (the spread bar on a roofline)."""
        stats = self.stats
        if not stats or not self.flop:
            return None
        return self.flop / stats.p90_s, self.flop / stats.p10_s

    @property
    def fraction_of_bound(self) -> float | None:
        """Bound time over median time: 1 means the run met the bound; above 1 beats it (check the cache)."""
        if self.bound is None or self.bound.bound_time_s is None or not self.median_s:
            return None
        return self.bound.bound_time_s / self.median_s

    # -- serialisation ------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data: the stored fields plus the derived figures (ignored when read back)."""
        stats = self.stats
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
            "derived": {
                "stats": stats.to_dict() if stats else None,
                "achieved_byte_per_s": self.achieved_byte_per_s,
                "achieved_flop_per_s": self.achieved_flop_per_s,
                "implied_byte_per_s": self.implied_byte_per_s,
                "intensity_flop_per_byte": self.intensity if self.bytes else None,
                "fraction_of_bound": self.fraction_of_bound,
            },
            # Flat copies of the figures a session report reads (workbench/report.py); ignored when read back.
            "valid": self.valid,
            "median_s": stats.median_s if stats else None,
            "p10_s": stats.p10_s if stats else None,
            "p90_s": stats.p90_s if stats else None,
            "achieved_bytes_per_s": self.achieved_byte_per_s,
            "achieved_flop_per_s": self.achieved_flop_per_s,
            "conditions": self.conditions_summary(),
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
        if not isinstance(version, int) or version > RECORD_VERSION:
            raise MeasurementError(f"run record version {version!r} is newer than this workbench reads ({RECORD_VERSION})")
        try:
            status = str(data["status"])
            if status not in STATUSES:
                raise MeasurementError(f"run record status '{status}' is not one of {', '.join(STATUSES)}")
            samples = tuple(float(s) for s in data["samples_s"])
            if any(not math.isfinite(s) or s < 0 for s in samples):
                raise MeasurementError("run record samples must be finite, non-negative seconds")
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
            )
        except MeasurementError:
            raise
        except KeyError as exc:
            raise MeasurementError(f"run record is missing '{exc.args[0]}'") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise MeasurementError(f"run record has a malformed field: {exc}") from None
