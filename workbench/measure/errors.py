"""The measurement engine's errors: each one a user can cause, with one clear line."""

from __future__ import annotations

from workbench.errors import WorkbenchError


class MeasurementError(WorkbenchError):
    """A run that cannot start or cannot finish: bad settings, a CUDA error, a bad run record."""


class BackendUnavailable(MeasurementError):
    """The requested array backend is not installed or sees no device."""


class UnsupportedMeasurement(MeasurementError):
    """The declaration is valid, but this backend cannot run it (e.g. bf16 on NumPy)."""


class MemoryRefused(MeasurementError):
    """The buffers a run needs do not fit the free memory; raised before anything is allocated."""


def one_line(exc: BaseException) -> str:
    """An exception as one line: its text with whitespace collapsed, or its type name."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
