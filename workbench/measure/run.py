"""The measurement protocol: one declared operation, run for real, as a generator of events.

    run = MeasurementRun("add(n=2**24, dtype=fp32)", backend="auto", iterations=50, mode="warm")
    for event in run.events():          # in a worker thread; run.cancel() from any thread
        ...                              # RunStarted, PhaseChanged, SampleBatch..., RunFinished
    record = event.record               # RunFinished carries the frozen RunRecord

or simply `record = measure("add(n=2**24, dtype=fp32)")`.

Protocol: sizes checked against free memory before anything is allocated;
inputs random (never zeros) and outputs NaN; one untimed call (compilation,
library handles, page faults); warm-up; at least 30 timed iterations whose raw
samples are all kept; in cold mode a buffer at least the size of the
last-level cache is written before each iteration; on a GPU each start event
waits behind a device-side delay while the host queues the call, so the
events time the device work and not the launch (launch_cover.py; the run's
notes say what it did); conditions read just before and just after timing;
then the reference check and a checksum. A run whose check fails is recorded
as invalid.

Cancellation is cooperative: `should_stop()` (and `cancel()`) is consulted
between calls, and timed calls go in batches of about 50 ms, so a cancel
lands within half a second unless a single call of the kernel itself takes
longer (a huge GEMM on the CPU): `workbench.measure.process.ProcessRun` runs
the same protocol in a worker process, which is ended if it must be, and
`workbench.measure.estimate` says how long a run will take before it starts.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterator, Type, Union

from workbench.model.declare import Declaration, parse
from workbench.model.devices.catalogue import NOMINAL, Device
from workbench.model.devices.provenance import DeviceProvenance
from workbench.errors import WorkbenchError
from workbench.measure.backends import Backend, select_backend
from workbench.measure.check import judge, not_run
from workbench.measure.errors import MeasurementError, MemoryRefused
from workbench.measure.kernels import MeasuredKernel, kernel_for
from workbench.measure.kernels.base import StopRequested
from workbench.measure.record import CANCELLED, COLD, INVALID, MODES, OK, WARM, BoundInfo, KernelInfo, RunRecord
from workbench.model.ops.base import CONVENTIONS

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.model.analysis import Analysis

MIN_ITERATIONS = 30
DEFAULT_ITERATIONS = 50
MAX_ITERATIONS = 1_000_000
MAX_WARMUP_CALLS = 10_000  # clocks and caches settle within seconds; more warm-up only delays the run
CANCEL_SLICE_S = 0.05  # timed calls per batch are sized to about this much work
AUTO_WARMUP_S = 0.1  # automatic warm-up runs at least this long ...
AUTO_WARMUP_MIN_CALLS = 2  # ... and at least this many calls ...
AUTO_WARMUP_MAX_CALLS = 50  # ... but no more than this many
MEMORY_HEADROOM = {"gpu": 0.9, "cpu": 0.8}  # share of free memory a run may plan to use

ALLOCATE = "allocate"
FIRST_CALL = "first call"
WARMUP = "warm-up"
TIMING = "timing"
CHECK = "check"


@dataclass(frozen=True)
class RunStarted:
    """Sizes accepted; nothing allocated yet."""

    declaration: str
    backend: str
    device: str
    mode: str
    iterations: int
    planned_bytes: int


@dataclass(frozen=True)
class PhaseChanged:
    """The run entered a phase: allocate, first call, warm-up, timing, check."""

    phase: str
    detail: str = ""


@dataclass(frozen=True)
class SampleBatch:
    """New raw samples (seconds) of timed iterations first_index … first_index + len − 1."""

    first_index: int
    samples_s: tuple[float, ...]
    done: int
    total: int

    @property
    def progress(self) -> float:
        return self.done / self.total if self.total else 1.0


@dataclass(frozen=True)
class RunFinished:
    """The run is over (finished, invalid or cancelled); the record is final."""

    record: RunRecord


RunEvent = Union[RunStarted, PhaseChanged, SampleBatch, RunFinished]


def _never() -> bool:
    return False


class StoppableRun:
    """What every run shares: a cancel flag any thread may set, the caller's own stop, and run() over events()."""

    _cancel: threading.Event
    _external_stop: Callable[[], bool]

    def cancel(self) -> None:
        """Ask the run to stop at its next check (safe from any thread)."""
        self._cancel.set()

    def should_stop(self) -> bool:
        return self._cancel.is_set() or bool(self._external_stop())

    def run(self, on_event: Callable[[RunEvent], None] | None = None) -> RunRecord:
        """Run to the end, passing each event to `on_event`; the final record."""
        record = None
        for event in self.events():
            if on_event is not None:
                on_event(event)
            if isinstance(event, RunFinished):
                record = event.record
        assert record is not None
        return record

    def events(self) -> Iterator[RunEvent]:  # pragma: no cover - each run kind says how it runs
        raise NotImplementedError


@dataclass
class _Progress:
    """What one run has gathered so far; the record is made from it whatever way the run ends."""

    samples: list[float] = field(default_factory=list)
    status: str = OK
    message: str = ""
    check: Any = None
    first_call: float | None = None
    warmup_calls: int = 0
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    timing_started: bool = False


def _kernel_info(kernel: MeasuredKernel) -> KernelInfo:
    """What the record keeps of the kernel: family, algorithm, executed path, implied traffic, buffers."""
    implied_bytes, implied_note = kernel.implied_traffic()
    return KernelInfo(
        family=kernel.family,
        algorithm=kernel.algorithm(),
        executed_path=kernel.executed_path(),
        implied_bytes=int(implied_bytes),
        implied_note=implied_note,
        notes=tuple(kernel.notes()),
        buffers=tuple(spec.to_dict() for spec in kernel.buffers()),
    )


class MeasurementRun(StoppableRun):
    """One measurement as a plain object: validate at construction, run through `events()` once.

    backend: "auto" (CuPy when it sees a GPU, else NumPy), "cupy", "numpy", or a Backend.
    iterations: timed iterations, at least 30. mode: "warm" or "cold". warmup: calls
    (default: at least 2 calls and 0.1 s). device: the catalogue device (or key) the
    bound is computed for, "auto" for the detected GPU or the generic CPU, None for
    no bound. analysis: an Analysis of the same declaration whose bound is used as
    is (the session's device, overrides and overlap); it also sets the convention.
    should_stop: polled between calls, with `cancel()`. kernel_class: a MeasuredKernel
    subclass to run instead of the registered one (tests, experiments).
    """

    def __init__(
        self,
        declaration: str | Declaration,
        *,
        backend: str | Backend = "auto",
        iterations: int = DEFAULT_ITERATIONS,
        mode: str = WARM,
        warmup: int | None = None,
        device: str | Device | None = "auto",
        analysis: "Analysis | None" = None,
        convention: str = "fma2",
        overlap: Any = "full",
        should_stop: Callable[[], bool] | None = None,
        seed: int = 0,
        kernel_class: Type[MeasuredKernel] | None = None,
    ) -> None:
        self.declaration = parse(declaration) if isinstance(declaration, str) else declaration
        if isinstance(iterations, bool) or not isinstance(iterations, int):
            raise MeasurementError(f"iterations must be a whole number; got {iterations!r}")
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise MeasurementError(
                f"iterations must be {MIN_ITERATIONS}–{MAX_ITERATIONS:,} (the protocol needs at least {MIN_ITERATIONS} "
                f"timed samples); got {iterations}"
            )
        if mode not in MODES:
            raise MeasurementError(f"mode must be warm or cold; got '{mode}'")
        if warmup is not None and (isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 1):
            raise MeasurementError(f"warm-up must be a positive number of calls; got {warmup!r}")
        if warmup is not None and warmup > MAX_WARMUP_CALLS:
            raise MeasurementError(f"warm-up must be at most {MAX_WARMUP_CALLS:,} calls; got {warmup:,}")
        if convention not in CONVENTIONS:
            raise MeasurementError(f"convention must be fma2 or mac; got '{convention}'")
        if analysis is not None:
            if str(analysis.declaration) != str(self.declaration):
                raise MeasurementError(
                    f"the analysis is of {analysis.declaration}, not of the measured {self.declaration}"
                )
            convention = analysis.convention
        if isinstance(device, str) and device != "auto":
            from workbench.model.devices.catalogue import find_device

            device = find_device(device)
        self.iterations = iterations
        self.mode = mode
        self.warmup = warmup
        self.convention = convention
        self.overlap = overlap
        self.seed = seed
        self._backend_choice = backend
        self._device_choice = device
        self._analysis = analysis
        self._kernel_class = kernel_class
        self._external_stop = should_stop or _never
        self._cancel = threading.Event()
        self._started = False

    # -- running --------------------------------------------------------------------
    def events(self) -> Iterator[RunEvent]:
        """The run, step by step; the last event is RunFinished with the record."""
        if self._started:
            raise MeasurementError("a MeasurementRun runs once; create a new one to measure again")
        self._started = True
        backend = select_backend(self._backend_choice)
        kernel = kernel_for(self.declaration, backend, self._kernel_class)
        kernel.should_stop = self.should_stop
        flush_bytes = backend.flush_bytes() if self.mode == COLD else 0
        planned = refuse_if_too_large(self.declaration, backend, kernel, flush_bytes)
        bound, notes = self._bound(backend)
        kernel_info = _kernel_info(kernel)
        environment = backend.environment()
        provenance = self._provenance(backend, environment)
        yield RunStarted(str(self.declaration), backend.name, backend.describe(), self.mode, self.iterations, planned)

        progress = _Progress()
        try:
            yield from self._measure(backend, kernel, planned, flush_bytes, progress)
        except StopRequested:
            progress.status = CANCELLED
            progress.message = f"cancelled after {len(progress.samples)} of {self.iterations} timed iterations"
            progress.check = not_run("the run was cancelled")
            if progress.timing_started and not progress.after:
                progress.after = backend.conditions()
        except WorkbenchError:
            raise
        except Exception as exc:
            translated = backend.translate(exc)
            if translated is not None:
                raise translated from exc
            raise
        finally:
            kernel.release()
            backend.release()
        if progress.timing_started:
            notes.extend(backend.timing_notes())  # what the timer did to the samples (the GPU's launch cover)
        yield RunFinished(self._record(backend, kernel_info, bound, notes, environment, provenance, progress))

    def _measure(
        self, backend: Backend, kernel: MeasuredKernel, planned: int, flush_bytes: int, progress: "_Progress"
    ) -> Iterator[RunEvent]:
        """Allocate, the untimed first call, warm-up, the timed iterations and the reference check, into `progress`;
        StopRequested when asked to stop."""
        yield PhaseChanged(ALLOCATE, f"{planned:,} bytes of buffers")
        if not kernel.allocate(self.seed, self.should_stop):
            raise StopRequested
        flush = backend.make_flush(flush_bytes) if self.mode == COLD else None
        flush_time = backend.wall_time(flush) if flush is not None else 0.0

        yield PhaseChanged(FIRST_CALL, "untimed: compilation, library handles, first touch of memory")
        progress.first_call = first_call = backend.wall_time(kernel)
        if self.should_stop():
            raise StopRequested

        backend.prepare_timing()  # after the first call (compilation), before the warm-up that sizes the timer
        yield PhaseChanged(WARMUP)
        progress.warmup_calls, per_call = self._warm_up(backend, kernel, first_call)

        progress.before = backend.conditions()
        progress.timing_started = True
        yield PhaseChanged(TIMING, f"{self.iterations} timed iterations, {self.mode}")
        per_iteration = per_call + flush_time + backend.iteration_overhead_s()
        batch = max(1, min(1000, int(CANCEL_SLICE_S / max(per_iteration, 1e-7))))
        samples = progress.samples
        while len(samples) < self.iterations:
            if self.should_stop():
                raise StopRequested
            count = min(batch, self.iterations - len(samples))
            new = backend.time_calls(kernel, count, flush, sync_each=self.mode == WARM)
            samples.extend(new)
            yield SampleBatch(len(samples) - len(new), tuple(new), len(samples), self.iterations)
        progress.after = backend.conditions()

        yield PhaseChanged(CHECK, "reference check against float64 on the CPU, checksum")
        if kernel.in_place:
            kernel.reset()
            kernel()
            backend.synchronize()
        import numpy as np

        comparison = kernel.compare(np.random.default_rng(self.seed + 7919))
        progress.check = check = judge(comparison, kernel.precision(), kernel.checksum())
        if check.passed:
            progress.message = check.message
        else:
            progress.status = INVALID
            progress.message = f"invalid: the reference check {check.message}"

    def _record(
        self, backend: Backend, kernel_info: KernelInfo, bound: Any, notes: list[str], environment: Any,
        provenance: Any, progress: "_Progress",
    ) -> RunRecord:
        """The run's record: what was measured and under which conditions, never a figure derived from it."""
        workload = self.declaration.workload()
        return RunRecord(
            id=uuid.uuid4().hex[:12],
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            declaration=str(self.declaration),
            operation=self.declaration.op,
            params=_plain_params(self.declaration),
            backend=backend.name,
            device=backend.describe(),
            mode=self.mode,
            iterations=self.iterations,
            warmup_calls=progress.warmup_calls,
            first_call_s=progress.first_call,
            status=progress.status,
            message=progress.message,
            notes=tuple(notes),
            samples_s=tuple(progress.samples),
            convention=self.convention,
            flop=int(workload.flop(self.convention)),
            bytes=int(workload.bytes),
            kernel=kernel_info,
            check=progress.check,
            bound=bound,
            timer=backend.timer_name,
            environment=environment,
            conditions_before=progress.before,
            conditions_after=progress.after,
            provenance=provenance,
        )

    # -- steps ----------------------------------------------------------------------
    def _warm_up(self, backend: Backend, kernel: MeasuredKernel, first_call: float) -> tuple[int, float]:
        """Warm-up calls (a fixed count, or ≥ 0.1 s and ≥ 2 calls); the median warm call time."""
        times: list[float] = []
        started = time.perf_counter()
        while True:
            if self.warmup is not None:
                if len(times) >= self.warmup:
                    break
            elif len(times) >= AUTO_WARMUP_MAX_CALLS or (
                len(times) >= AUTO_WARMUP_MIN_CALLS and time.perf_counter() - started >= AUTO_WARMUP_S
            ):
                break
            if self.should_stop():
                raise StopRequested
            times.append(backend.wall_time(kernel))
        if not times:
            return 0, first_call
        ordered = sorted(times)
        return len(times), ordered[len(ordered) // 2]

    def _provenance(self, backend: Backend, environment: dict[str, Any]) -> DeviceProvenance:
        """The device the run runs on, as the hardware states it, and the catalogue entry it matches.

        A device chosen explicitly (`device=`, the CLI's --device) names the
        entry; otherwise the stated name is matched (the GPU through NVML, the
        CPU entry for a CPU). The session's device never stands in for it.
        """
        from workbench.model.devices.provenance import cpu_catalogue_device, provenance_from_environment

        choice = self._device_choice
        if isinstance(choice, Device):
            if choice.kind != backend.kind:
                raise MeasurementError(
                    f"{choice.name} is a {choice.kind.upper()}, but {backend.name} runs on the {backend.kind.upper()}: "
                    f"choose a {backend.kind.upper()} device"
                )
            return provenance_from_environment(backend.kind, environment, choice.key, "--device")
        if backend.kind == "cpu":
            try:
                return provenance_from_environment("cpu", environment, cpu_catalogue_device().key, "this machine's CPU")
            except WorkbenchError:
                return provenance_from_environment("cpu", environment, "", "")
        known = default_device(backend)
        if known is not None and not known.key.startswith("nvml-"):
            return provenance_from_environment(backend.kind, environment, known.key, "name")
        return provenance_from_environment(backend.kind, environment, "", "")

    def _bound(self, backend: Backend) -> tuple[BoundInfo | None, list[str]]:
        """The analysed lower bound on the chosen device, or None with the reason in a note."""
        if self._analysis is not None:
            return BoundInfo.from_analysis(self._analysis), []
        choice = self._device_choice
        device = default_device(backend) if choice == "auto" else choice
        if not isinstance(device, Device):
            return None, ["no device model for this backend: achieved figures only, no bound"]
        from workbench.model.analysis import analyze

        try:
            analysis = analyze(self.declaration, device=device, convention=self.convention, overlap=self.overlap)
        except (WorkbenchError, ImportError) as exc:
            return None, [f"no bound: {exc}"]
        bound = BoundInfo.from_analysis(analysis)
        notes = []
        from workbench.model.units import format_bandwidth, format_flop_rate

        nominal = []
        if analysis.compute_rate is not None and analysis.compute_rate.source == NOMINAL:
            nominal.append(f"{analysis.path} {format_flop_rate(analysis.compute_rate.value)}")
        if analysis.bandwidth is not None and analysis.bandwidth.source == NOMINAL:
            nominal.append(f"{device.memory_name} bandwidth {format_bandwidth(analysis.bandwidth.value)}")
        if nominal:
            notes.append(
                f"the bound uses nominal figures ({', '.join(nominal)}: stand-ins, not measured), so no run is called "
                "impossible against it; calibrate to measure them"
            )
        return bound, notes


def refuse_if_too_large(declaration: Declaration, backend: Backend, kernel: MeasuredKernel, flush_bytes: int = 0) -> int:
    """The bytes a run plans to allocate; MemoryRefused, before any allocation, if they do not fit."""
    from workbench.model.units import format_bytes

    planned = kernel.planned_bytes() + flush_bytes
    free, source = backend.free_memory()
    share = MEMORY_HEADROOM.get(backend.kind, 0.8)
    if planned <= free * share:
        return planned
    parts = sorted(((spec.bytes, spec.name) for spec in kernel.buffers()), reverse=True)
    listed = [f"{name} {format_bytes(size)}" for size, name in parts[:4]]
    if flush_bytes:
        listed.append(f"cold-mode flush {format_bytes(flush_bytes)}")
    if kernel.temporary_bytes():
        listed.append(f"library temporaries {format_bytes(kernel.temporary_bytes())}")
    raise MemoryRefused(
        f"{declaration} needs {format_bytes(planned)} ({', '.join(listed)}), more than "
        f"{share:.0%} of the {format_bytes(free)} free on {backend.describe()} ({source}); reduce the sizes"
    )


@contextmanager
def prepared_kernel(declaration: str | Declaration, backend: str | Backend = "auto", seed: int = 0) -> Iterator[MeasuredKernel]:
    """A kernel allocated, filled and called once, for timing it with another tool (benchmarks).

    The buffers are released when the block ends.
    """
    decl = parse(declaration) if isinstance(declaration, str) else declaration
    chosen = select_backend(backend)
    kernel = kernel_for(decl, chosen)
    refuse_if_too_large(decl, chosen, kernel)
    try:
        kernel.allocate(seed, _never)
        kernel()
        chosen.synchronize()
        yield kernel
    finally:
        kernel.release()
        chosen.release()


def default_device(backend: Backend) -> Device | None:
    """The device model a backend's runs are compared with: the detected GPU, or the generic CPU."""
    try:
        if backend.kind == "cpu":
            from workbench.model.devices.provenance import cpu_catalogue_device

            return cpu_catalogue_device()
        from workbench.model.devices.catalogue import match_reported_name
        from workbench.model.devices.nvml import detect, device_for

        index = getattr(backend, "nvml_index", lambda: None)()
        detection = detect()
        for gpu in detection.gpus:
            if gpu.index == index:
                return device_for(gpu)
        name = getattr(backend, "device_name", "")
        return match_reported_name(name) if name else None
    except (WorkbenchError, ImportError):
        return None


def _plain_params(declaration: Declaration) -> dict[str, Any]:
    """The declaration's fields as JSON values (ints stay exact)."""
    params = {}
    for name, value in declaration.fields:
        if isinstance(value, float) and not math.isfinite(value):
            value = str(value)
        params[name] = value
    return params


def measure(declaration: str | Declaration, **options: Any) -> RunRecord:
    """Run one measurement to the end (see MeasurementRun for the options)."""
    return MeasurementRun(declaration, **options).run()
