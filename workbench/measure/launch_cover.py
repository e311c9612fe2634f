"""Keeping the host's launch time out of CUDA-event timings: a device-side delay before each start event.

A CUDA event is stamped when the GPU reaches it in its stream. When the stream
is idle — warm mode waits for each call before queueing the next — the start
event is stamped as soon as the host records it, and the kernel starts only
when the host has finished launching it. CuPy's Python launch path takes
microseconds to tens of microseconds, as long as a small kernel runs, so the
events would time the launch as well: on an H200, add(n=2**20, dtype=fp32)
measured 16.1 µs warm against 10.2 µs cold, where the cache flush before each
iteration kept the stream busy while the call was queued.

The remedy (nvbench blocks the stream the same way): before each start event
the backend queues a one-thread kernel that spins on the GPU's global timer for
a set time, the *cover*. The host records the start event, queues the call and
records the end event while the cover runs; when it ends, the start event is
stamped with the whole call already queued behind it, so the events bracket the
call's device work alone. The cover runs before the start event and is in no
sample. It touches no memory, and in cold mode it runs before the flush, so
the flush still directly precedes the call (as in triton.testing.do_bench)
and the caches are as the mode leaves them.

The cover lasts COVER_FACTOR × the longest time the host took to queue one call
(start event, call, end event) over the last WINDOW calls made on an idle
stream, at least MIN_COVER_S and at most MAX_COVER_S; the warm-up calls seed
that window before timing. A timed call queued on an idle stream that took
longer to queue than the cover before it may include part of its launch: such
calls are counted and the run's notes say how many (the samples are kept as
measured, never dropped or corrected). Behind queued work (cold mode, where the
host does not wait between iterations) the start event cannot be stamped before
the earlier work and the cover are done; the host may also have waited there
for room in the launch queue, so those calls neither count nor size the cover.
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field

MIN_COVER_S = 50e-6  # longer than one CuPy or cuBLAS launch from Python on a current host
MAX_COVER_S = 5e-3  # a call that takes longer to queue is not helped by waiting longer
COVER_FACTOR = 2.0
WINDOW = 16
CYCLE_CAP_PER_NS = 4  # the spin also ends after this many SM cycles per nanosecond (a stuck timer)

COVER_KERNEL = "workbench_launch_cover"
COVER_SOURCE = r"""
extern "C" __global__ void workbench_launch_cover(unsigned long long nanoseconds, unsigned long long max_cycles) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    const long long first_cycle = clock64();
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds && (unsigned long long)(clock64() - first_cycle) < max_cycles);
}
"""


def format_us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds >= 10e-6 else f"{seconds * 1e6:.1f} µs"


@dataclass
class LaunchCover:
    """How long the delay before each start event lasts, and how the host's queueing compared with it."""

    minimum_s: float = MIN_COVER_S
    maximum_s: float = MAX_COVER_S
    factor: float = COVER_FACTOR
    window: int = WINDOW
    _recent: deque = field(default_factory=deque, repr=False)
    _queued_s: list[float] = field(default_factory=list, repr=False)
    _covers_s: list[float] = field(default_factory=list, repr=False)
    exposed: int = 0

    def reset(self) -> None:
        """Forget earlier calls (a new run: its warm-up seeds the window again)."""
        self._recent.clear()
        self._queued_s.clear()
        self._covers_s.clear()
        self.exposed = 0

    def cover_s(self) -> float:
        """The delay to queue before the next start event."""
        longest = max(self._recent, default=0.0)
        return min(self.maximum_s, max(self.minimum_s, self.factor * longest))

    def _remember(self, queued_s: float) -> None:
        self._recent.append(queued_s)
        while len(self._recent) > self.window:
            self._recent.popleft()

    def seed(self, queued_s: float) -> None:
        """An untimed call's queueing time (warm-up): it sizes the cover, counts nowhere."""
        self._remember(queued_s)

    def observe(self, queued_s: float, cover_s: float, idle: bool = True) -> None:
        """A timed call took `queued_s` on the host to queue behind a cover of `cover_s`.

        `idle`: the stream had finished everything before the cover when it was queued. Only then can the
        start event be stamped before the call is queued, and only then is `queued_s` the host's own time:
        behind queued work (cold mode, where the host does not wait) the host may have waited for room in
        the launch queue, and letting that wait lengthen the cover would lengthen the wait in turn.
        """
        self._queued_s.append(queued_s)
        self._covers_s.append(cover_s)
        if not idle:
            return
        self._remember(queued_s)
        if queued_s >= cover_s:
            self.exposed += 1

    @property
    def calls(self) -> int:
        return len(self._queued_s)

    def notes(self) -> list[str]:
        """What the cover did for the timed calls since the last reset, in words for the run record."""
        if not self._queued_s:
            return []
        low, high = min(self._covers_s), max(self._covers_s)
        span = format_us(low) if high - low < 0.5e-6 else f"{format_us(low)}–{format_us(high)}"
        notes = [
            f"launch cover: each timed call's start event waited behind a {span} device-side delay while the host "
            f"queued the call (the host took at most {format_us(max(self._queued_s))}, median "
            f"{format_us(statistics.median(self._queued_s))}); the events time the device work, not the launch"
        ]
        if self.exposed:
            notes.append(
                f"{self.exposed} of {self.calls} timed calls took longer to queue than the delay before them: those "
                "samples may include part of the host's launch time (kept as measured)"
            )
        return notes


__all__ = ["COVER_KERNEL", "COVER_SOURCE", "CYCLE_CAP_PER_NS", "LaunchCover", "MAX_COVER_S", "MIN_COVER_S"]
