"""Calibration: sustained memory bandwidth, matrix rates, interface and link rates, all measured.

Bandwidth comes from a large device copy, counting bytes read plus bytes
written; matrix rates from a large square GEMM per dtype the backend can run.
Then the interfaces and links (measure/caches.py, measure/transfers.py):

- on a GPU, the L2 → SM bandwidth (a working set of a quarter of the L2,
  read over and over) stored as `l2`; host ↔ device copies, pinned and pageable, each
  way, with the faster pinned direction stored as `host`; with two or more
  GPUs, peer copies (reported) and NCCL all-reduce / all-gather, the
  all-reduce busbw stored as the rate of the device's link between GPUs
  (`link:<key>`, devices/links.py);
- on a CPU, a copy inside the last-level cache (a quarter of its size, bytes
  read + written, like the DRAM copy) against the DRAM copy, planned at least
  eight caches large and stored as before as the `hbm` rate (DRAM on a CPU).
  The cache copy is measured and reported (a transfer row, with its ratio to
  DRAM in the notes) but NOT stored: the only interface key it could go under
  is `l2`, which the analysis names "L2 → SM (L1 / shared memory)", a GPU
  interface; under the compulsory model a faster cache can never be a CPU
  bound's limiter, and a cache copy slowed by other work on a shared cache (a
  virtual machine's slice of an L3) would wrongly become it. The CPU stand-in
  for the host link (one NumPy buffer copied into another, bytes counted once)
  is stored as `host`, labelled as a stand-in wherever it shows; no CPU bound
  uses it (`resident=host` is refused on a CPU), it is there to be read.

The results are `Rate`s with source "measured", keyed by instruction path, by
interface key and by link key, ready for `Device.with_rate` or
`DeviceChoice.overrides`, so the bounds use them (labelled measured) from then on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Mapping, Union

from workbench.model.declare import parse
from workbench.model.devices.catalogue import BANDWIDTH, MEASURED, Device, Rate
from workbench.model.devices.interfaces import HOST, L2
from workbench.measure.backends import Backend, select_backend
from workbench.measure.errors import MeasurementError, MemoryRefused, UnsupportedMeasurement
from workbench.measure.latency import CHASE_BYTES, CHASE_STEPS, LOADED_COPY, LatencyReading, measure_idle_latency, measure_loaded_latency
from workbench.measure.transfers import COLLECTIVE, HOST_DEVICE, Cancelled, TransferMeasurement
from workbench.measure.record import CANCELLED, COLD, WARM, RunRecord
from workbench.measure.run import MIN_ITERATIONS, MEMORY_HEADROOM, MeasurementRun, RunEvent, RunFinished, default_device
from workbench.measure.stats import per_second
from workbench.records import from_plain, record, to_plain

CALIBRATION_FORMAT = "perf-workbench-calibration"
CALIBRATION_VERSION = 1

# Copy size (bytes read + written) and GEMM edge, full and quick.
_GPU_COPY_BYTES, _GPU_COPY_QUICK = 2 * 1024**3, 512 * 1024**2
_CPU_COPY_BYTES, _CPU_COPY_QUICK = 512 * 1024**2, 64 * 1024**2
_GPU_MATRIX, _GPU_MATRIX_QUICK = 8192, 2048
_CPU_MATRIX, _CPU_MATRIX_QUICK = 1024, 256
_GPU_DTYPES = ("fp16", "bf16", "tf32", "fp32", "fp64")
_CPU_DTYPES = ("fp64", "fp32")
# Link copies (bytes that cross once), full and quick; the CPU stand-in's buffer is also at least 4× the LLC.
_GPU_LINK_BYTES, _GPU_LINK_QUICK = 256 * 1024**2, 64 * 1024**2
_CPU_LINK_BYTES, _CPU_LINK_QUICK = 256 * 1024**2, 32 * 1024**2
_DRAM_OVER_LLC = 8  # the DRAM copy's working set is at least this many last-level caches
_LLC_FRACTION = 4  # the cache-resident copy's working set is this fraction of the last-level cache
_LLC_REPORTED = "llc-copy"  # the cache copy's key among the transfers: reported, never a device rate
LLC_LABEL = "last-level cache bandwidth (copy inside the cache, bytes read + written)"


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
    transfers: tuple[TransferMeasurement, ...] = ()  # link and L2 measurements, stored or only reported
    notes: tuple[str, ...] = ()  # what a reader of the figures should know (a cache copy no faster than DRAM)
    latencies: tuple[LatencyReading, ...] = ()  # HBM latency idle and under load (a GPU's calibration)

    def overrides(self) -> dict[str, Rate]:
        """The rates as DeviceChoice.overrides wants them."""
        return dict(self.rates)

    def apply(self, device: Device) -> Device:
        """The device with every measured rate and latency put in place of its datasheet figure."""
        for path, rate in self.rates.items():
            device = device.with_rate(path, rate.value, MEASURED, rate.citation)
        for reading in self.latencies:
            device = reading.apply(device)
        return device

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> "CalibrationResult":
        if not isinstance(data, Mapping) or data.get("format") != CALIBRATION_FORMAT:
            raise MeasurementError(f"not a calibration result (expected format '{CALIBRATION_FORMAT}')")
        try:
            return from_plain(data, cls)
        except MeasurementError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise MeasurementError(f"calibration result has a malformed field: {exc}") from None


def _rates(value: Any) -> dict[str, Rate]:
    return {str(path): from_plain(rate, Rate) for path, rate in dict(value).items()}


def _each(read: Callable[[Any], Any]) -> Callable[[Any], tuple[Any, ...]]:
    return lambda items: tuple(read(item) for item in items)


def _to_dicts(items: Any) -> list[Any]:
    return [item.to_dict() for item in items]


# the runs, transfers and latencies are read by their own classes' from_dict (each checks its format and ranges)
record(
    CalibrationResult,
    header={"format": CALIBRATION_FORMAT, "version": CALIBRATION_VERSION},
    omit_default=("latencies",),
    missing={"runs": ()},
    dump={"transfers": _to_dicts},
    load={
        "rates": _rates,
        "runs": _each(RunRecord.from_dict),
        "transfers": _each(TransferMeasurement.from_dict),
        "latencies": _each(LatencyReading.from_dict),
    },
)


def _largest_power_of_two(limit: int) -> int:
    return 1 << max(limit.bit_length() - 1, 0)


@dataclass
class _Gathered:
    """What a calibration has measured so far: its result is made from this whichever way it ends."""

    total: int  # steps planned
    rates: dict[str, Rate] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    transfers: list[TransferMeasurement] = field(default_factory=list)
    latencies: list[LatencyReading] = field(default_factory=list)
    cancelled: bool = False


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
        interfaces: bool = True,
        links: bool = True,
        link_bytes: int | None = None,
        latency: bool = True,
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
        self.interfaces = interfaces  # L2 (GPU) / last-level cache (CPU)
        self.links = links  # host ↔ device, peer, NCCL (GPU) / the host-link stand-in (CPU)
        self.link_bytes = link_bytes
        self.latency = latency  # HBM latency idle and under load (GPU only: analysis/mlp.py's Little's-law term)
        self._keys: dict[str, str] = {}  # step label -> the rate key it measures

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
        llc = None if gpu else _last_level_cache()
        if llc and not self.copy_bytes:
            copy_target = max(copy_target, _DRAM_OVER_LLC * llc)  # DRAM: far larger than the cache
        elements = _largest_power_of_two(max(min(copy_target, budget) // 8, 1024))
        steps = [("memory bandwidth (copy, bytes read + written)", f"copy(n={elements}, dtype=fp32)")]
        self._keys = {steps[0][0]: BANDWIDTH}
        if llc and self.interfaces:
            # Source and destination together take a quarter of the cache: resident after the first call (warm),
            # even where other work shares the cache (a virtual machine's slice of an L3 can be far smaller).
            cache_elements = _largest_power_of_two(max(min(llc // _LLC_FRACTION, budget) // 8, 1024))
            steps.append((LLC_LABEL, f"copy(n={cache_elements}, dtype=fp32)"))
            self._keys[LLC_LABEL] = _LLC_REPORTED
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
            from workbench.model.devices.catalogue import find_device

            device = find_device(device)
        mode = COLD if backend.kind == "gpu" else WARM
        steps = self.plan(backend)
        transfer_steps = self.transfer_plan(backend)
        latency_steps, latency_skipped = self.latency_plan(backend, device, mode)
        after = [(label, text, measure, "transfer") for label, text, measure in transfer_steps]
        after += [(label, text, measure, "latency") for label, text, measure in latency_steps]
        gathered = _Gathered(skipped=list(latency_skipped), total=len(steps) + len(after))
        today = datetime.now(timezone.utc).date().isoformat()
        yield from self._rate_steps(steps, backend, device, mode, today, gathered)
        if not gathered.cancelled:
            yield from self._measurement_steps(after, len(steps), gathered)
        gathered.cancelled = gathered.cancelled or self.should_stop()  # a step ended early on a cancel skipped itself
        if not gathered.cancelled:
            link_rates, reasons = transfer_rates(gathered.transfers, device, today)
            gathered.rates.update(link_rates)
            gathered.skipped.extend(reasons)
        notes = _hierarchy_notes(gathered.rates, gathered.transfers, backend.kind == "gpu")
        result = CalibrationResult(
            backend=backend.name,
            device=backend.describe(),
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            rates=gathered.rates,
            runs=tuple(gathered.runs),
            skipped=tuple(gathered.skipped),
            cancelled=gathered.cancelled,
            transfers=tuple(gathered.transfers),
            notes=tuple(notes),
            latencies=tuple(gathered.latencies),
        )
        yield CalibrationFinished(result)

    def _rate_steps(
        self, steps: list[tuple[str, str]], backend: Backend, device: Any, mode: str, today: str, gathered: "_Gathered"
    ) -> Iterator[Any]:
        """The measurement runs that give rates (memory bandwidth, each matrix path) and the cache copy."""
        for index, (label, text) in enumerate(steps):
            if self.should_stop():
                gathered.cancelled = True
                return
            yield CalibrationStep(index, gathered.total, label, text)
            # The last-level-cache copy runs warm everywhere: a flush before each call would defeat it.
            step_mode = WARM if self._keys.get(label) == _LLC_REPORTED else mode
            try:
                run = MeasurementRun(
                    text, backend=backend, iterations=self.iterations, mode=step_mode, device=device, should_stop=self.should_stop
                )
                record = None
                for event in run.events():
                    yield event
                    if isinstance(event, RunFinished):
                        record = event.record
            except (UnsupportedMeasurement, MemoryRefused) as exc:
                gathered.skipped.append(f"{label}: {exc}")
                continue
            assert record is not None
            gathered.runs.append(record)
            if record.status == CANCELLED:
                gathered.cancelled = True
                return
            if not record.valid:
                gathered.skipped.append(f"{label}: the run was invalid ({record.message})")
                continue
            key = self._keys.get(label) or (record.bound.path if record.bound else record.kernel.executed_path)
            value = per_second(record.bytes if record.operation == "copy" else record.flop, record.median_s)
            if not value:
                gathered.skipped.append(f"{label}: no time measured")
                continue
            if key == _LLC_REPORTED:
                gathered.transfers.append(_cache_copy(record))
                continue
            citation = (
                f"measured: {record.declaration}, median of {len(record.samples_s)} {record.mode} iterations, "
                f"{record.backend} on {record.device}, {today}"
            )
            gathered.rates[key] = Rate(float(value), MEASURED, citation)

    def _measurement_steps(self, after: list[tuple[str, str, Callable[[], Any], str]], first: int, gathered: "_Gathered") -> Iterator[Any]:
        """The transfer and latency measurements, each a call that returns its figures; a failed one is skipped."""
        for offset, (label, text, measure, kind) in enumerate(after):
            if self.should_stop():
                gathered.cancelled = True
                return
            yield CalibrationStep(first + offset, gathered.total, label, text)
            try:
                found = measure()
            except Cancelled:
                gathered.cancelled = True
                return
            except (UnsupportedMeasurement, MemoryRefused, MeasurementError) as exc:
                gathered.skipped.append(f"{label}: {exc}")
                continue
            except Exception as exc:  # a CUDA, NCCL or allocation error ends this step only
                if not _device_error(exc):
                    raise
                gathered.skipped.append(f"{label}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no message'}")
                continue
            if kind == "latency":
                gathered.latencies.append(found)
            else:
                gathered.transfers.extend(found)

    def transfer_plan(self, backend: Backend) -> list[tuple[str, str, Callable[[], list[TransferMeasurement]]]]:
        """(label, what, measure) of each interface and link measurement on this backend, sized to its memory."""
        from workbench.measure import caches, transfers

        gpu = backend.kind == "gpu"
        free, _ = backend.free_memory()
        budget = int(free * MEMORY_HEADROOM.get(backend.kind, 0.8))
        target = self.link_bytes or (
            (_GPU_LINK_QUICK if self.quick else _GPU_LINK_BYTES) if gpu else (_CPU_LINK_QUICK if self.quick else _CPU_LINK_BYTES)
        )
        iterations, stop = max(self.iterations, transfers.MIN_TRANSFER_ITERATIONS), self.should_stop
        plan: list[tuple[str, str, Callable[[], list[TransferMeasurement]]]] = []
        if not gpu:
            llc = _last_level_cache()
            if llc and not self.link_bytes:
                target = max(target, 4 * llc)
            nbytes = _largest_power_of_two(max(min(target, budget // 2), 4096))
            if self.links:
                plan.append(
                    (
                        "host link, CPU stand-in (NumPy buffer to NumPy buffer)",
                        f"numpy.copyto of {_size(nbytes)}, bytes counted once",
                        lambda: [transfers.measure_cpu_host_copy(nbytes, iterations, stop)],
                    )
                )
            return plan
        device_index = int(backend.xp.cuda.runtime.getDevice())
        nbytes = _largest_power_of_two(max(min(target, budget // 2), 4096))
        if self.interfaces:
            plan.append(
                (
                    "L2 bandwidth (a working set of a quarter of the L2, read repeatedly)",
                    "CuPy kernel, __ldcg loads, bytes = working set × passes",
                    lambda: [caches.measure_l2_read(iterations, device_index, should_stop=stop)],
                )
            )
        if self.links:
            plan.append(
                (
                    "host ↔ device copies (pinned and pageable, each way)",
                    f"{_size(nbytes)} per copy, bytes counted once",
                    lambda: transfers.measure_host_device(nbytes, iterations, device_index, stop),
                )
            )
            gpus = transfers.gpu_count()
            if gpus >= 2:
                peers = (device_index, 1 if device_index == 0 else 0)
                plan.append(
                    (
                        f"peer copies GPU {peers[0]} ↔ GPU {peers[1]}",
                        f"cudaMemcpyPeerAsync of {_size(nbytes)} each way",
                        lambda: transfers.measure_peer_copies(nbytes, iterations, peers, stop),
                    )
                )
                plan.append(
                    (
                        f"NCCL all-reduce and all-gather over {gpus} GPUs",
                        f"S = {_size(nbytes)} fp32, algbw and busbw as nccl-tests defines them",
                        lambda: transfers.measure_collectives(nbytes, iterations, should_stop=stop),
                    )
                )
        return plan


    def latency_plan(
        self, backend: Backend, device: Device | None, mode: str
    ) -> tuple[list[tuple[str, str, Callable[[], LatencyReading]]], list[str]]:
        """(label, what, measure) of the HBM latency measurements, and why any is left out.

        On a GPU: the pointer chase (idle) and the library copy read backwards through Little's law (under
        load), each only where its buffers fit the free memory. None on a CPU, which keeps its nominal DRAM
        latency (the chase is a CUDA kernel, and the CPU has no Little's-law term to feed).
        """
        if not self.latency:
            return [], []
        label_idle = "HBM latency, idle (pointer chase)"
        label_loaded = "HBM latency under load (library copy, Little's law backwards)"
        if backend.kind != "gpu":
            return [], []
        free, _ = backend.free_memory()
        budget = int(free * MEMORY_HEADROOM.get(backend.kind, 0.8)) - backend.flush_bytes()
        plan: list[tuple[str, str, Callable[[], LatencyReading]]] = []
        skipped: list[str] = []
        if CHASE_BYTES * 5 // 4 <= budget:
            plan.append((label_idle, f"one thread, {CHASE_STEPS:,} dependent loads over {_size(CHASE_BYTES)}",
                         lambda: measure_idle_latency(backend)))
        else:
            skipped.append(f"{label_idle}: needs {_size(CHASE_BYTES)} of free memory")
        copy_bytes = parse(LOADED_COPY).workload().bytes  # source and destination
        if device is None or device.sm_count is None or device.max_threads_per_sm is None:
            skipped.append(f"{label_loaded}: the device's SM count and compute capability are needed to read the occupancy")
        elif copy_bytes > budget:
            skipped.append(f"{label_loaded}: needs {_size(copy_bytes)} of free memory")
        else:
            plan.append((label_loaded, LOADED_COPY, lambda: measure_loaded_latency(
                backend, device, iterations=self.iterations, mode=mode, should_stop=self.should_stop)))
        return plan, skipped


def transfer_rates(
    transfers: tuple[TransferMeasurement, ...] | list[TransferMeasurement], device: Device | None, today: str
) -> tuple[dict[str, Rate], list[str]]:
    """The rates the bounds use from the transfer measurements, and why any was not stored.

    `l2` from the L2 read; `host` from the faster pinned direction (GPU) or the
    CPU stand-in; `link:<key>` from the NCCL all-reduce busbw, keyed by the
    link a collective on `device` crosses by default (its NVLink, else its host link).
    """
    from workbench.model.devices.links import device_link, link_rate_key
    from workbench.errors import DeviceError
    from workbench.model.units import format_bandwidth

    by_key = {t.key: t for t in transfers}
    rates: dict[str, Rate] = {}
    reasons: list[str] = []
    if "l2-read" in by_key:
        l2 = by_key["l2-read"]
        rates[L2] = Rate(l2.rate, MEASURED, f"measured: L2 → SM, {l2.description()}, {today}")
    if "cpu-host-copy" in by_key:
        stand_in = by_key["cpu-host-copy"]
        rates[HOST] = Rate(stand_in.rate, MEASURED, f"measured, {stand_in.description()} (for the host link), {today}")
    pinned = [by_key[k] for k in ("h2d-pinned", "d2h-pinned") if k in by_key]
    if pinned:
        fastest = max(pinned, key=lambda t: t.rate)
        others = "; ".join(
            f"{t.label} {format_bandwidth(t.rate)}" for t in transfers if t.kind == HOST_DEVICE and t is not fastest
        )
        rates[HOST] = Rate(
            fastest.rate,
            MEASURED,
            f"measured: {fastest.label} (the faster pinned direction), {fastest.description()}; also {others}, {today}",
        )
    collective = by_key.get("nccl-allreduce")
    if collective is not None and collective.kind == COLLECTIVE:
        try:
            if device is None:
                raise DeviceError("no catalogue device to name the link")
            link = device_link(device)
        except DeviceError as exc:
            reasons.append(f"NCCL all-reduce busbw {format_bandwidth(collective.rate)} not stored as a link rate: {exc}")
        else:
            rates[link_rate_key(link.key)] = Rate(
                collective.rate,
                MEASURED,
                f"measured: {link.name} per direction as NCCL all-reduce busbw, {collective.description()}, {today}",
            )
    return rates, reasons


def _cache_copy(record: RunRecord) -> TransferMeasurement:
    """The CPU's cache-resident copy as a reported transfer (bytes read + written, as the DRAM copy counts them)."""
    from workbench.measure.transfers import CACHE

    return TransferMeasurement(
        key=_LLC_REPORTED,
        kind=CACHE,
        label="last-level cache copy (CPU; reported, not stored)",
        bytes_per_call=int(record.bytes),
        samples_s=tuple(record.samples_s),
        timer=record.timer,
        method=(
            f"{record.declaration}, a working set of a quarter of the {_size(_last_level_cache())} last-level cache, "
            f"{record.mode}, bytes read + written (as the DRAM copy counts them)"
        ),
        device=record.device,
    )


def _hierarchy_notes(rates: Mapping[str, Rate], transfers: list[TransferMeasurement], gpu: bool) -> list[str]:
    """The cache against the memory beyond it: the ratio, and plainly when the cache was no faster."""
    from workbench.model.units import format_bandwidth

    memory = rates.get(BANDWIDTH)
    cache_rate = rates[L2].value if gpu and L2 in rates else next((t.rate for t in transfers if t.key == _LLC_REPORTED), None)
    if cache_rate is None or memory is None:
        return []
    name = "L2" if gpu else "the last-level cache copy"
    beyond = "HBM" if gpu else "DRAM"
    if cache_rate > memory.value:
        return [f"{name} ran at {cache_rate / memory.value:.1f}× the {beyond} rate ({format_bandwidth(cache_rate)} against {format_bandwidth(memory.value)})"]
    return [
        f"{name} measured {format_bandwidth(cache_rate)}, no faster than {beyond} ({format_bandwidth(memory.value)}): "
        f"the machine was busy, or the cache is shared with other work"
    ]


def _last_level_cache() -> int | None:
    from workbench.model.devices import host

    return host.last_level_cache_bytes()


def _size(nbytes: int | None) -> str:
    from workbench.model.units import format_bytes

    return format_bytes(nbytes, True) if nbytes else "unknown"


def _device_error(exc: BaseException) -> bool:
    """A failure of CUDA, NCCL or an allocation (skip the step), as opposed to a bug (raise it)."""
    module = type(exc).__module__ or ""
    return isinstance(exc, (MemoryError, OSError)) or module.startswith(("cupy", "cupy_backends"))


def calibrate(backend: str | Backend = "auto", **options: Any) -> CalibrationResult:
    """Measure sustained bandwidth and matrix rates on a backend (see CalibrationRun for the options)."""
    return CalibrationRun(backend, **options).run()
