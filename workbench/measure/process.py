"""A measurement in a worker process: Cancel ends it within half a second, even in the middle of one call.

`MeasurementRun` stops cooperatively, between calls. That is enough on a
GPU, where one call takes micro- to milliseconds, but one NumPy call on the
CPU can run for minutes (an fp16 GEMM has no BLAS path), and a thread cannot
be interrupted inside it. `ProcessRun` runs the same protocol in a child
process (never forked from the parent itself, which may be a Qt process with
threads of its own: see START_METHOD) and streams the same events back
through a queue:

    run = ProcessRun("gemm(M=N=K=4096, dtype=fp16)", backend="numpy", iterations=50)
    for event in run.events():   # RunStarted, PhaseChanged, SampleBatch…, RunFinished
        ...                       # run.cancel() from any thread

A cancel first asks the child to stop at its next check (the record it then
sends is complete: conditions after, check "not run"). If the child has not
finished within `STOP_GRACE_S` — it is inside one long call — the process is
ended, and the parent writes the cancelled record from what it has seen: the
declaration, the samples that arrived, the message. A cancelled record is
shown but never stored, so nothing is lost by this.

Errors raised in the child (refused sizes, unsupported dtypes) arrive as the
same error classes with the same one-line message. Qt-free.

The child never outlives the process that started it: it holds the reading
end of a pipe whose only writer is the parent, and ends itself when that pipe
closes, which the kernel does when the parent dies however it dies (a crash, a
SIGKILL). Its parent in the process tree is the forkserver, not the app, so a
parent-death signal would not do.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Type

from workbench.model.declare import Declaration, parse
from workbench.model.devices.catalogue import Device
from workbench.errors import WorkbenchError
from workbench.measure import errors as measure_errors
from workbench.measure.check import not_run
from workbench.measure.errors import MeasurementError
from workbench.measure.kernels import MeasuredKernel
from workbench.measure.record import CANCELLED, WARM, KernelInfo, RunRecord
from workbench.measure.run import (
    DEFAULT_ITERATIONS,
    MeasurementRun,
    RunEvent,
    RunFinished,
    RunStarted,
    SampleBatch,
    StoppableRun,
)

# Never "fork": the parent may be a Qt process with threads of its own. "forkserver" forks each run from
# a clean single-threaded server started once, with NumPy and the engine already imported, so a run after
# the first starts in milliseconds rather than the second an interpreter and NumPy take; where there is
# no forkserver (Windows), each run starts a fresh interpreter ("spawn").
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
PRELOAD = ["workbench.measure.preload"]  # NumPy, the engine, the units and the catalogue, loaded once
STOP_GRACE_S = 0.25  # after a cancel, how long the child may take to stop by itself before it is ended
POLL_S = 0.02  # how often the parent looks at the queue, the cancel flag and the child
END_WAIT_S = 0.3  # how long the parent waits for an ended child to be reaped
PARENT_GONE_EXIT = 3  # the child's exit code when it ended itself because its parent died


_preloaded = False


def _context() -> Any:
    """The multiprocessing context runs start in (the forkserver told once what to import first)."""
    global _preloaded
    context = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver" and not _preloaded:
        context.set_forkserver_preload(PRELOAD)
        _preloaded = True
    return context


@dataclass(frozen=True)
class RunOptions:
    """Everything the child needs to build the MeasurementRun: plain, picklable values."""

    declaration: str
    backend: str
    iterations: int
    mode: str
    warmup: int | None
    device: Device | str | None
    convention: str
    overlap: Any
    seed: int
    kernel_class: Type[MeasuredKernel] | None

    def measurement_run(self, should_stop: Callable[[], bool]) -> MeasurementRun:
        return MeasurementRun(
            self.declaration,
            backend=self.backend,
            iterations=self.iterations,
            mode=self.mode,
            warmup=self.warmup,
            device=self.device,
            convention=self.convention,
            overlap=self.overlap,
            seed=self.seed,
            should_stop=should_stop,
            kernel_class=self.kernel_class,
        )


@dataclass(frozen=True)
class _ChildError:
    """An error raised in the child, sent as its class name and its one line."""

    kind: str
    message: str
    workbench: bool


def _end_with_parent(lifeline: Any) -> None:
    """In the child: end this process at once when the parent's end of `lifeline` closes (the parent died)."""

    def wait() -> None:
        try:
            lifeline.recv_bytes()  # the parent never writes: this returns only by EOF
        except (EOFError, OSError):
            pass
        os._exit(PARENT_GONE_EXIT)  # nothing of the run is wanted any more, and a NumPy call cannot be interrupted

    threading.Thread(target=wait, name="workbench-parent-watch", daemon=True).start()


def _child_main(options: RunOptions, events: Any, stop: Any, lifeline: Any) -> None:
    """The child process: run the protocol and put every event on the queue."""
    _end_with_parent(lifeline)
    try:
        run = options.measurement_run(stop.is_set)
        for event in run.events():
            events.put(event)
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent as one line
        text = " ".join(str(exc).split())
        events.put(_ChildError(type(exc).__name__, text, isinstance(exc, WorkbenchError)))


def _error_from_child(error: _ChildError) -> WorkbenchError:
    """The child's error as the same measurement error class where there is one, else a MeasurementError."""
    if error.workbench:
        cls = getattr(measure_errors, error.kind, None)
        if isinstance(cls, type) and issubclass(cls, WorkbenchError):
            try:
                return cls(error.message)
            except TypeError:
                pass
        return MeasurementError(error.message)
    return MeasurementError(f"unexpected {error.kind} in the measurement process: {error.message}")


class ProcessRun(StoppableRun):
    """One measurement run in a child process; the same options and events as `MeasurementRun`.

    The options are checked here, in the parent (a bad iteration count is
    refused at once); the backend is opened in the child. `kernel_class`
    must be importable by name (a module-level class), as the child imports it.
    """

    def __init__(
        self,
        declaration: str | Declaration,
        *,
        backend: str = "numpy",
        iterations: int = DEFAULT_ITERATIONS,
        mode: str = WARM,
        warmup: int | None = None,
        device: str | Device | None = "auto",
        convention: str = "fma2",
        overlap: Any = "full",
        should_stop: Callable[[], bool] | None = None,
        seed: int = 0,
        kernel_class: Type[MeasuredKernel] | None = None,
    ) -> None:
        if not isinstance(backend, str):
            raise MeasurementError("a run in a worker process names its backend ('numpy', 'cupy', 'auto')")
        decl = parse(declaration) if isinstance(declaration, str) else declaration
        # Validates every option the same way an in-process run does (nothing is opened yet).
        MeasurementRun(decl, backend=backend, iterations=iterations, mode=mode, warmup=warmup, device=device,
                       convention=convention, overlap=overlap, seed=seed, kernel_class=kernel_class)
        self.declaration = decl
        self.options = RunOptions(str(decl), backend, iterations, mode, warmup, device, convention, overlap, seed,
                                  kernel_class)
        self._external_stop = should_stop or (lambda: False)
        self._cancel = threading.Event()
        self._started = False
        self.ended_by_force = False  # True when the child had to be ended inside a call
        self.child_pid: int | None = None  # the worker process's id once it has started

    # cancel() stops the run at the child's next check, or by ending the child after STOP_GRACE_S.

    # -- running --------------------------------------------------------------------
    def events(self) -> Iterator[RunEvent]:
        """The run's events as the child sends them; the last is RunFinished."""
        if self._started:
            raise MeasurementError("a ProcessRun runs once; create a new one to measure again")
        self._started = True
        self._plan()
        context = _context()
        events = context.Queue()
        stop = context.Event()
        lifeline, parent_end = context.Pipe(duplex=False)
        child = context.Process(target=_child_main, args=(self.options, events, stop, lifeline),
                                name="workbench-measure", daemon=True)
        child.start()
        lifeline.close()  # the child holds the reading end; the parent keeps only the writing end
        self.child_pid = child.pid
        started: RunStarted | None = None
        samples: list[float] = []
        stop_deadline: float | None = None
        gone_since: float | None = None
        try:
            while True:
                if stop_deadline is None and self.should_stop():
                    stop.set()
                    stop_deadline = time.monotonic() + STOP_GRACE_S
                try:
                    event = events.get(timeout=POLL_S)
                except queue_module.Empty:
                    event = None
                if isinstance(event, _ChildError):
                    raise _error_from_child(event)
                if event is not None:
                    if isinstance(event, RunStarted):
                        started = event
                    elif isinstance(event, SampleBatch):
                        samples.extend(event.samples_s)
                    yield event
                    if isinstance(event, RunFinished):
                        return
                    continue
                if stop_deadline is not None and time.monotonic() >= stop_deadline:
                    self._end(child)
                    self.ended_by_force = True
                    yield RunFinished(self._cancelled_record(started, samples))
                    return
                if not child.is_alive():  # its last events may still be in the pipe: allow them a moment
                    gone_since = gone_since if gone_since is not None else time.monotonic()
                    if time.monotonic() - gone_since > END_WAIT_S:
                        raise MeasurementError(
                            f"the measurement process ended unexpectedly (exit code {child.exitcode}) "
                            f"while measuring {self.declaration}"
                        )
        finally:
            self._end(child)
            parent_end.close()
            events.close()
            events.cancel_join_thread()

    # -- helpers --------------------------------------------------------------------
    def _plan(self) -> None:
        """Refuse here, before a process starts, what the child would refuse at once: an unsupported dtype,
        sizes that do not fit in free memory (nothing is allocated; the child checks again)."""
        from workbench.measure.backends import select_backend
        from workbench.measure.kernels import kernel_for
        from workbench.measure.record import COLD
        from workbench.measure.run import refuse_if_too_large

        options = self.options
        if options.backend != "numpy":
            return  # opening a GPU backend here would import CuPy in the parent too
        backend = select_backend(options.backend)
        kernel = kernel_for(self.declaration, backend, options.kernel_class)
        refuse_if_too_large(self.declaration, backend, kernel, backend.flush_bytes() if options.mode == COLD else 0)

    @staticmethod
    def _end(child: Any) -> None:
        """End the child if it still runs (terminate, then kill), and reap it."""
        if child.is_alive():
            child.terminate()
            child.join(END_WAIT_S)
            if child.is_alive():
                child.kill()
        child.join(END_WAIT_S)

    def _cancelled_record(self, started: RunStarted | None, samples: list[float]) -> RunRecord:
        """The record of a run ended inside a call: what the parent saw (not stored by the window)."""
        options = self.options
        workload = self.declaration.workload()
        done = len(samples)
        where = "before timing" if started is None or not samples else f"after {done} of {options.iterations} timed iterations"
        return RunRecord(
            id=uuid.uuid4().hex[:12],
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            declaration=str(self.declaration),
            operation=self.declaration.op,
            params=dict(self.declaration.fields),
            backend=started.backend if started is not None else options.backend,
            device=started.device if started is not None else "",
            mode=options.mode,
            iterations=options.iterations,
            warmup_calls=0,
            first_call_s=None,
            status=CANCELLED,
            message=f"cancelled {where}; the measurement process was ended inside a call",
            notes=(),
            samples_s=tuple(samples),
            convention=options.convention,
            flop=int(workload.flop(options.convention)),
            bytes=int(workload.bytes),
            kernel=KernelInfo(self.declaration.op, "", "", int(workload.bytes), ""),
            check=not_run("the run was cancelled"),
            bound=None,
            timer="",
        )
