"""The launch cover: CupyBackend's event timing against a simulated CUDA stream, on the CPU.

No GPU here. `SimulatedStream` is one CUDA stream on a virtual clock, as the
hardware behaves: every API call costs the host time, queued work starts when
the stream is free, an event is stamped when the stream reaches it. On that
timeline, events recorded around a call on an idle stream include the host's
launch (what the H200 showed: add(n=2**20) warm 16.1 µs against 10.2 µs cold),
and the delay CupyBackend queues before each start event takes it out again.
The real kernel's timing is checked by the gpu-marked tests.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from workbench.measure.backend_base import Backend
from workbench.measure.backends import CupyBackend
from workbench.measure.launch_cover import COVER_KERNEL, MAX_COVER_S, MIN_COVER_S, LaunchCover
from workbench.measure.numpy_backend import NumpyBackend

US = 1e-6
RECORD_COST = 2 * US  # host time of one cudaEventRecord from Python
COVER_LAUNCH_COST = 4 * US  # host time of launching the cover kernel


class SimulatedStream:
    """One CUDA stream and the host that feeds it, on a virtual clock (seconds)."""

    def __init__(self, backlog_s: float = 1.0) -> None:
        self.backlog_s = backlog_s  # queued work beyond this makes the host wait (the launch queue is full)
        self.host = 0.0  # the host's clock
        self.free_at = 0.0  # when the stream has finished everything queued so far
        self.log: list[str] = []  # what was queued, in order
        self.covers: list[float] = []  # seconds each cover kernel was asked to spin

    def clock(self) -> float:
        return self.host

    def queue(self, what: str, host_cost: float, device_s: float) -> None:
        """An API call that takes `host_cost` on the host and queues `device_s` of work when it returns."""
        self.host += host_cost
        self.host = max(self.host, self.free_at - self.backlog_s)  # waits for room in the launch queue
        begins = max(self.host, self.free_at)
        self.free_at = begins + device_s
        self.log.append(what)

    def launch(self, what: str, launch_s: float, device_s: float) -> None:
        self.queue(what, launch_s, device_s)

    def cupy(self) -> Any:
        """The part of the cupy module CupyBackend's timer uses."""
        stream = self

        class Event:
            stamp = 0.0

            def record(self) -> None:
                stream.queue("event", RECORD_COST, 0.0)
                self.stamp = stream.free_at  # stamped when the stream reaches it

            def synchronize(self) -> None:
                stream.host = max(stream.host, self.stamp)

            @property
            def done(self) -> bool:
                return self.stamp <= stream.host

        class RawKernel:
            def __init__(self, source: str, name: str) -> None:
                assert name == COVER_KERNEL and "globaltimer" in source
                self.name = name

            def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]) -> None:
                assert grid == (1,) and block == (1,)
                nanoseconds, max_cycles = (int(a) for a in args)
                assert max_cycles >= nanoseconds  # the cycle cap never ends the spin before the timer does
                stream.covers.append(nanoseconds * 1e-9)
                stream.queue("cover", COVER_LAUNCH_COST, nanoseconds * 1e-9)

        def elapsed_ms(start: Event, end: Event) -> float:
            return (end.stamp - start.stamp) * 1e3

        cuda = types.SimpleNamespace(Event=Event, get_elapsed_time=elapsed_ms)
        return types.SimpleNamespace(cuda=cuda, RawKernel=RawKernel, uint64=np.uint64)


def simulated_backend(stream: SimulatedStream, *, cover_launch: bool = True) -> CupyBackend:
    """A CupyBackend whose cupy is the simulated stream (only its timer is exercised)."""
    backend = object.__new__(CupyBackend)
    backend._cupy = stream.cupy()  # type: ignore[attr-defined]
    backend._device = types.SimpleNamespace(synchronize=lambda: setattr(stream, "host", max(stream.host, stream.free_at)))  # type: ignore[attr-defined]
    backend._init_timing(cover_launch, clock=stream.clock)
    return backend


def kernel_call(stream: SimulatedStream, launch_s: float, kernel_s: float, launches: int = 1) -> Any:
    def call() -> None:
        for _ in range(launches):
            stream.launch("kernel", launch_s, kernel_s / launches)

    return call


def warm_samples(backend: CupyBackend, stream: SimulatedStream, call: Any, count: int = 30, warmup: int = 3) -> list[float]:
    backend.prepare_timing()
    for _ in range(warmup):
        backend.wall_time(call)
    return backend.time_calls(call, count, None, sync_each=True)


def test_the_simulated_stream_reproduces_the_h200_finding_without_the_cover() -> None:
    # Uncovered (cupyx's protocol), a 5 µs kernel launched in 12 µs reads as launch + kernel: the timer's fault.
    stream = SimulatedStream()
    backend = simulated_backend(stream, cover_launch=False)
    samples = warm_samples(backend, stream, kernel_call(stream, 12 * US, 5 * US))
    assert samples == pytest.approx([12 * US + 5 * US] * 30, rel=1e-9)  # the launch, then the kernel
    assert "cover" not in stream.log
    assert "no launch cover" in backend.timer_name and "include the host's launch" in backend.timing_notes()[0]


@pytest.mark.parametrize("launch_us", [1, 12, 30])
def test_warm_events_time_the_kernel_alone_behind_the_cover(launch_us: int) -> None:
    stream = SimulatedStream()
    backend = simulated_backend(stream)
    samples = warm_samples(backend, stream, kernel_call(stream, launch_us * US, 5 * US))
    assert samples == pytest.approx([5 * US] * 30, rel=1e-9)  # fails when the cover is not queued
    # One cover per timed iteration, queued before its start event: cover, start, kernel, end.
    timed = stream.log[-4 * 30:]
    assert timed == ["cover", "event", "kernel", "event"] * 30
    assert stream.covers[0] == 0.0  # prepare_timing launched it once, empty: compiled before anything is timed
    assert all(cover >= MIN_COVER_S - 1e-9 for cover in stream.covers[1:])
    assert backend.timing_notes()[0].startswith("launch cover: each timed call's start event waited behind")
    assert len(backend.timing_notes()) == 1  # nothing exposed
    assert "device-side delay" in backend.timer_name


def test_cold_iterations_queue_the_cover_then_the_flush_then_the_events() -> None:
    stream = SimulatedStream()
    backend = simulated_backend(stream)
    backend.prepare_timing()
    backend.wall_time(kernel_call(stream, 20 * US, 8 * US))

    def flush() -> None:
        stream.launch("flush", 3 * US, 60 * US)

    samples = backend.time_calls(kernel_call(stream, 20 * US, 8 * US), 30, flush, sync_each=False)
    assert samples == pytest.approx([8 * US] * 30, rel=1e-9)
    # The flush stays right before the call (nothing idles the caches in between), the cover before the flush.
    assert stream.log[-5 * 30:] == ["cover", "flush", "event", "kernel", "event"] * 30


def test_cold_iterations_behind_a_full_launch_queue_do_not_lengthen_the_cover() -> None:
    # The host runs ahead in cold mode until the launch queue is full, then waits inside its calls. That wait is
    # not launch time: were it to size the cover, each longer cover would lengthen the wait (up to 5 ms a call).
    stream = SimulatedStream(backlog_s=400 * US)
    backend = simulated_backend(stream)
    backend.prepare_timing()
    backend.wall_time(kernel_call(stream, 10 * US, 5 * US))

    def flush() -> None:
        stream.launch("flush", 2 * US, 100 * US)

    samples = backend.time_calls(kernel_call(stream, 10 * US, 5 * US), 300, flush, sync_each=False)
    assert samples == pytest.approx([5 * US] * 300, rel=1e-9)
    assert max(stream.covers) == pytest.approx(MIN_COVER_S)
    assert len(backend.timing_notes()) == 1  # nothing counted as exposed


def test_a_call_slower_to_queue_than_the_cover_is_counted_and_the_cover_grows() -> None:
    # Three launches of 40 µs each: 120 µs of queueing, more than the first cover when nothing seeded it.
    stream = SimulatedStream()
    backend = simulated_backend(stream)
    call = kernel_call(stream, 40 * US, 9 * US, launches=3)
    backend.prepare_timing()  # no warm-up: the first timed call meets the minimum cover
    samples = backend.time_calls(call, 30, None, sync_each=True)
    assert samples[0] > 9 * US * 1.5  # exposed: the launch gaps are in the first sample, as measured
    assert samples[1:] == pytest.approx([9 * US] * 29, rel=1e-9)  # the cover grew to twice the queueing time
    assert stream.covers[1] == pytest.approx(MIN_COVER_S) and stream.covers[2] >= 2 * 120 * US
    notes = backend.timing_notes()
    assert notes[1].startswith("1 of 30 timed calls took longer to queue than the delay before them")


def test_the_warm_up_seeds_the_cover_so_no_timed_call_is_exposed() -> None:
    stream = SimulatedStream()
    backend = simulated_backend(stream)
    samples = warm_samples(backend, stream, kernel_call(stream, 40 * US, 9 * US, launches=3), warmup=2)
    assert samples == pytest.approx([9 * US] * 30, rel=1e-9)
    assert len(backend.timing_notes()) == 1


def test_prepare_timing_forgets_the_previous_run() -> None:
    stream = SimulatedStream()
    backend = simulated_backend(stream)
    warm_samples(backend, stream, kernel_call(stream, 1 * US, 1 * US, launches=1))
    backend.wall_time(kernel_call(stream, 2000 * US, 1 * US))  # a first call that compiles: not a launch time
    backend.prepare_timing()
    assert backend.iteration_overhead_s() == pytest.approx(MIN_COVER_S)
    assert backend.timing_notes() == []


def test_cover_length_follows_the_slowest_recent_queueing_within_its_bounds() -> None:
    cover = LaunchCover()
    assert cover.cover_s() == MIN_COVER_S
    cover.seed(10 * US)
    assert cover.cover_s() == MIN_COVER_S
    cover.seed(100 * US)
    assert cover.cover_s() == pytest.approx(200 * US)
    cover.seed(1.0)  # a call that synchronises, or a host pause
    assert cover.cover_s() == MAX_COVER_S
    for _ in range(cover.window):  # the slow one ages out of the window
        cover.observe(10 * US, MAX_COVER_S)
    assert cover.cover_s() == MIN_COVER_S
    assert cover.exposed == 0 and cover.calls == cover.window
    cover.observe(MAX_COVER_S * 2, MAX_COVER_S)
    assert cover.exposed == 1


def test_the_run_prepares_the_timer_after_the_first_call_and_keeps_its_notes() -> None:
    from workbench.measure import measure

    order: list[str] = []

    class NotingBackend(NumpyBackend):
        def wall_time(self, call: Any) -> float:
            order.append("wall")
            return super().wall_time(call)

        def prepare_timing(self) -> None:
            order.append("prepare")

        def time_calls(self, call: Any, count: int, flush: Any, sync_each: bool) -> list[float]:
            order.append("timed")
            return super().time_calls(call, count, flush, sync_each)

        def timing_notes(self) -> list[str]:
            return ["the timer's own note"]

    record = measure("add(n=1024, dtype=fp32)", backend=NotingBackend(), iterations=30, warmup=2)
    assert record.valid, record.message
    assert order[:4] == ["wall", "prepare", "wall", "wall"] and order[4] == "timed"  # first call, prepare, warm-up
    assert "the timer's own note" in record.notes
    assert Backend.timing_notes(NotingBackend()) == [] and NumpyBackend().iteration_overhead_s() == 0.0
