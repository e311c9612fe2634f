"""Calibration: sustained memory bandwidth and matrix rates, measured with the same protocol as any run.

Bandwidth comes from a large device copy, counting bytes read plus bytes
written; matrix rates from a large square GEMM per dtype the backend can run.
The results are `Rate`s with source "measured", keyed by instruction path and
by "hbm", ready for `Device.with_rate` or `DeviceChoice.overrides`, so the
bounds use them (labelled measured) from then on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Mapping, Union

from workbench.declare import parse
from workbench.devices.catalogue import BANDWIDTH, MEASURED, Device, Rate
from workbench.measure.backends import Backend, select_backend
from workbench.measure.errors import MeasurementError, MemoryRefused, UnsupportedMeasurement
from workbench.measure.record import CANCELLED, COLD, WARM, RunRecord
from workbench.measure.run import MIN_ITERATIONS, MEMORY_HEADROOM, MeasurementRun, RunEvent, RunFinished, default_device
from workbench.measure.stats import per_second

CALIBRATION_FORMAT = "perf-workbench-calibration"
CALIBRATION_VERSION = 1

# Copy size (bytes read + written) and GEMM edge, full and quick.
_GPU_COPY_BYTES, _GPU_COPY_QUICK = 2 * 1024**3, 512 * 1024**2
_CPU_COPY_BYTES, _CPU_COPY_QUICK = 512 * 1024**2, 64 * 1024**2
_GPU_MATRIX, _GPU_MATRIX_QUICK = 8192, 2048
_CPU_MATRIX, _CPU_MATRIX_QUICK = 1024, 256
_GPU_DTYPES = ("fp16", "bf16", "tf32", "fp32", "fp64")
_CPU_DTYPES = ("fp64", "fp32")


@dataclass(frozen=True)
class CalibrationStep:
    """The calibration moved to its next measurement."""

    index: int
    total: int
    label: str
    declaration: str


@dataclass(frozen=True)
class CalibrationFinished:
    """All steps done (or cancelled); the result is final."""

    result: "CalibrationResult"


CalibrationEvent = Union[CalibrationStep, CalibrationFinished, RunEvent]


@dataclass(frozen=True)
class CalibrationResult:
    """Measured rates by path (and "hbm"), the runs they came from, and what was skipped."""

    backend: str
    device: str
    created: str
    rates: Mapping[str, Rate]
    runs: tuple[RunRecord, ...]
    skipped: tuple[str, ...] = ()
    cancelled: bool = False

    def overrides(self) -> dict[str, Rate]:
        """The rates as DeviceChoice.overrides wants them."""
        return dict(self.rates)

    def apply(self, device: Device) -> Device:
        """The device with every measured rate put in place of its datasheet figure."""
        for path, rate in self.rates.items():
            device = device.with_rate(path, rate.value, MEASURED, rate.citation)
        return device

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CALIBRATION_FORMAT,
            "version": CALIBRATION_VERSION,
            "backend": self.backend,
            "device": self.device,
            "created": self.created,
            "rates": {path: {"value": r.value, "source": r.source, "citation": r.citation} for path, r in self.rates.items()},
            "runs": [run.to_dict() for run in self.runs],
            "skipped": list(self.skipped),
            "cancelled": self.cancelled,
        }

    @classmethod
    def from_dict(cls, data: Any) -> "CalibrationResult":
        if not isinstance(data, Mapping) or data.get("format") != CALIBRATION_FORMAT:
            raise MeasurementError(f"not a calibration result (expected format '{CALIBRATION_FORMAT}')")
        try:
            return cls(
                backend=str(data["backend"]),
                device=str(data["device"]),
                created=str(data["created"]),
                rates={
                    str(path): Rate(float(r["value"]), str(r["source"]), str(r.get("citation", "")))
                    for path, r in dict(data["rates"]).items()
                },
                runs=tuple(RunRecord.from_dict(run) for run in data.get("runs", ())),
                skipped=tuple(str(s) for s in data.get("skipped", ())),
                cancelled=bool(data.get("cancelled", False)),
            )
        except MeasurementError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise MeasurementError(f"calibration result has a malformed field: {exc}") from None


def _largest_power_of_two(limit: int) -> int:
    return 1 << max(limit.bit_length() - 1, 0)


class CalibrationRun:
    """A sequence of measurement runs that yields their events and ends with CalibrationFinished."""

    def __init__(
        self,
        backend: str | Backend = "auto",
        *,
        iterations: int = MIN_ITERATIONS,
        quick: bool = False,
        device: Device | None | str = "auto",
        should_stop: Callable[[], bool] | None = None,
        copy_bytes: int | None = None,
        matrix_size: int | None = None,
        dtypes: tuple[str, ...] | None = None,
    ) -> None:
        self._backend_choice = backend
        self.iterations = iterations
        self.quick = quick
        self._device_choice = device
        self._external_stop = should_stop or (lambda: False)
        self._cancel = threading.Event()
        self.copy_bytes = copy_bytes
        self.matrix_size = matrix_size
        self.dtypes = dtypes

    def cancel(self) -> None:
        self._cancel.set()

    def should_stop(self) -> bool:
        return self._cancel.is_set() or bool(self._external_stop())

    def run(self, on_event: Callable[[Any], None] | None = None) -> CalibrationResult:
        result = None
        for event in self.events():
            if on_event is not None:
                on_event(event)
            if isinstance(event, CalibrationFinished):
                result = event.result
        assert result is not None
        return result

    def plan(self, backend: Backend) -> list[tuple[str, str]]:
        """(label, declaration) of each measurement, sized to the device and its free memory."""
        gpu = backend.kind == "gpu"
        free, _ = backend.free_memory()
        budget = int(free * MEMORY_HEADROOM.get(backend.kind, 0.8)) - (backend.flush_bytes() if gpu else 0)
        if budget <= 0:
            raise MemoryRefused(f"no free memory left on {backend.describe()} to calibrate with")
        copy_target = self.copy_bytes or (
            (_GPU_COPY_QUICK if self.quick else _GPU_COPY_BYTES) if gpu else (_CPU_COPY_QUICK if self.quick else _CPU_COPY_BYTES)
        )
        elements = _largest_power_of_two(max(min(copy_target, budget) // 8, 1024))
        steps = [("memory bandwidth (copy, bytes read + written)", f"copy(n={elements}, dtype=fp32)")]
        edge = self.matrix_size or (
            (_GPU_MATRIX_QUICK if self.quick else _GPU_MATRIX) if gpu else (_CPU_MATRIX_QUICK if self.quick else _CPU_MATRIX)
        )
        for dtype_name in self.dtypes or (_GPU_DTYPES if gpu else _CPU_DTYPES):
            size = edge
            itemsize = 8 if dtype_name == "fp64" else 2 if dtype_name in ("fp16", "bf16") else 4
            while size > 64 and 3 * size * size * itemsize > budget:
                size //= 2
            steps.append((f"matrix rate, {dtype_name}", f"gemm(M={size}, N={size}, K={size}, dtype={dtype_name})"))
        return [(label, str(parse(text))) for label, text in steps]

    def events(self) -> Iterator[Any]:
        backend = select_backend(self._backend_choice)
        device = default_device(backend) if self._device_choice == "auto" else self._device_choice
        if isinstance(device, str):
            from workbench.devices.catalogue import find_device

            device = find_device(device)
        mode = COLD if backend.kind == "gpu" else WARM
        steps = self.plan(backend)
        rates: dict[str, Rate] = {}
        runs: list[RunRecord] = []
        skipped: list[str] = []
        cancelled = False
        today = datetime.now(timezone.utc).date().isoformat()
        for index, (label, text) in enumerate(steps):
            if self.should_stop():
                cancelled = True
                break
            yield CalibrationStep(index, len(steps), label, text)
            try:
                run = MeasurementRun(
                    text, backend=backend, iterations=self.iterations, mode=mode, device=device, should_stop=self.should_stop
                )
                record = None
                for event in run.events():
                    yield event
                    if isinstance(event, RunFinished):
                        record = event.record
            except (UnsupportedMeasurement, MemoryRefused) as exc:
                skipped.append(f"{label}: {exc}")
                continue
            assert record is not None
            runs.append(record)
            if record.status == CANCELLED:
                cancelled = True
                break
            if not record.valid:
                skipped.append(f"{label}: the run was invalid ({record.message})")
                continue
            key = BANDWIDTH if record.operation == "copy" else (record.bound.path if record.bound else record.kernel.executed_path)
            value = per_second(record.bytes if record.operation == "copy" else record.flop, record.median_s)
            if not value:
                skipped.append(f"{label}: no time measured")
                continue
            citation = (
                f"measured: {record.declaration}, median of {len(record.samples_s)} {record.mode} iterations, "
                f"{record.backend} on {record.device}, {today}"
            )
            rates[key] = Rate(float(value), MEASURED, citation)
        result = CalibrationResult(
            backend=backend.name,
            device=backend.describe(),
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            rates=rates,
            runs=tuple(runs),
            skipped=tuple(skipped),
            cancelled=cancelled,
        )
        yield CalibrationFinished(result)


def calibrate(backend: str | Backend = "auto", **options: Any) -> CalibrationResult:
    """Measure sustained bandwidth and matrix rates on a backend (see CalibrationRun for the options)."""
    return CalibrationRun(backend, **options).run()
