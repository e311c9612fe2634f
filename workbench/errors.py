"""The project's own error types: everything a user can cause raises one of these."""

from __future__ import annotations


def shown(text: str) -> str:
    """User text as it may appear inside a one-line message: control characters (a newline, an escape)
    and lone surrogates written as escapes, so a message quoting the input stays one printable line."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class WorkbenchError(Exception):
    """Base of every error caused by user input; its message is one clear line.

    The message often quotes what the user gave (a key from a shared file, an
    expression), which may hold a newline or a lone surrogate: it is passed
    through `shown` here, once for every error type, so it stays one printable line.
    """

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(shown(str(message)), *args)


class DeclarationError(WorkbenchError):
    """A declaration line that cannot be parsed or describes an impossible operation.

    `field` names the parameter at fault (None when the fault is not one field),
    so the GUI can mark it inline.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class UnitError(WorkbenchError):
    """A quantity that cannot be parsed, or has the wrong dimensions."""


class DeviceError(WorkbenchError):
    """An unknown device, or a device without a rate the analysis needs.

    `missing_path` names the instruction path when the fault is only that the device has no rate for it: the
    operation's work and bytes still stand (`workbench.model.analysis.analyze_partial`), its compute bound does not.
    """

    missing_path: str | None = None

    @classmethod
    def missing_rate(cls, message: str, path: str) -> "DeviceError":
        error = cls(message)
        error.missing_path = path
        return error
