"""The error every profiler reader raises: a file that cannot be read, named with its line.

The lowest layer of `workbench.profilers`: it imports nothing from the package,
so the number parsing, the CSV table reader and the records can all raise it.
"""

from __future__ import annotations

from workbench.errors import WorkbenchError


class ProfileError(WorkbenchError):
    """A profiler export that cannot be read; the message names the file and, where known, the line."""

    def __init__(self, message: str, source: str = "", line: int | None = None) -> None:
        where = source or "profile"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.reason = message
