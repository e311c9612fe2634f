"""Reading that stops when asked: an import of a large export (a 400 MB ncu page reads for about a minute)
ends within a fraction of a second of a Cancel or of the window closing.

The readers pull lines from a `LineSource`; `until_stopped` wraps one so that every line first asks
`should_stop()` (a `threading.Event.is_set`, some tens of nanoseconds against microseconds of parsing a line)
and the read ends with `ReadStopped` once it answers yes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from workbench.errors import WorkbenchError
from workbench.profilers.lines import LineSource


class ReadStopped(WorkbenchError):
    """The reading was stopped on request (not a fault of the file)."""


def until_stopped(source: LineSource, should_stop: Callable[[], bool]) -> LineSource:
    """`source`, ending with ReadStopped at the first line read after `should_stop()` answers True."""

    def lines() -> Iterator[str]:
        opened = source()
        try:
            for line in opened:
                if should_stop():
                    raise ReadStopped("reading stopped")
                yield line
        finally:
            close = getattr(opened, "close", None)
            if close is not None:
                close()

    return lines
