"""One bounded reader for every file the workbench opens: regular files only, a size limit, never a hang.

Session files and profiler exports come from other people. A FIFO would block
`open()` forever, `/dev/zero` never ends, and a 20 GB file would be read whole
before anyone looked at its size. `read_bounded` opens without blocking, refuses
anything that is not a regular file, checks the size before reading and reads
at most `limit + 1` bytes, so a file that grows while it is read is still caught.
Callers turn `FileReadError` into their own error type (SessionError,
ProfileError) with the file's name in front.
"""

from __future__ import annotations

import io
import os
import stat

from workbench.errors import WorkbenchError

_CHUNK = 1 << 20


class FileReadError(WorkbenchError):
    """A file that cannot be read as data; the message is the reason alone (the caller names the file)."""


def describe_size(size: int) -> str:
    """An exact byte count with a binary-prefixed gloss: '67,108,865 B (64 MiB + 1 B)'."""
    for power, prefix in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        unit = 1 << power
        if size >= unit:
            whole, rest = divmod(size, unit)
            if rest == 0:
                return f"{size:,} B ({whole} {prefix})"
            if rest < 1024:
                return f"{size:,} B ({whole} {prefix} + {rest:,} B)"
            return f"{size:,} B ({size / unit:.3g} {prefix})"
    return f"{size:,} B"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def require_regular(name: str | os.PathLike[str], missing_ok: bool = False, follow_symlinks: bool = True) -> None:
    """Refuse (FileReadError, the reason alone) a path that is not a regular file: a folder, a FIFO, a socket,
    a device, or a symlink to one. The one check for what is read and for what is written over (a report,
    its companions, a session); `missing_ok` lets a path where nothing is yet pass (a file to be written);
    with `follow_symlinks` False a symlink itself is refused (a companion file the user did not name)."""
    try:
        mode = (os.stat(name) if follow_symlinks else os.lstat(name)).st_mode
    except FileNotFoundError:
        if missing_ok and not os.path.islink(name):
            return
        if missing_ok:
            raise FileReadError("it is a symbolic link to nothing (another file may appear there)") from None
        raise
    if stat.S_ISLNK(mode):
        raise FileReadError(f"it is a symbolic link (to {os.readlink(name)}), not a regular file")
    if not stat.S_ISREG(mode):
        raise FileReadError(f"it is {_kind(mode)}, not a regular file")


def _open_regular(name: str, limit: int, what: str) -> int:
    """A descriptor of the regular file `name`, opened without blocking, no larger than `limit` bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        # stat first: a folder cannot be opened on every platform, and the message should say what it is.
        require_regular(name)
        descriptor = os.open(name, flags)
    except FileReadError:
        raise
    except FileNotFoundError:
        raise FileReadError("no such file") from None
    except PermissionError:
        raise FileReadError("permission denied") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise FileReadError(getattr(exc, "strerror", None) or str(exc)) from None
    try:
        status = os.fstat(descriptor)  # the file opened may differ from the one stat'ed (a swapped link)
        if not stat.S_ISREG(status.st_mode):
            raise FileReadError(f"it is {_kind(status.st_mode)}, not a regular file")
        if status.st_size > limit:
            raise FileReadError(
                f"{describe_size(status.st_size)} is over the limit of {describe_size(limit)} for a {what}"
            )
    except FileReadError:
        os.close(descriptor)
        raise
    except OSError as exc:
        os.close(descriptor)
        raise FileReadError(exc.strerror or str(exc)) from None
    return descriptor


def read_bounded(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file at `path`, refused (FileReadError) past `limit` bytes or if not a file."""
    descriptor = _open_regular(os.fspath(path), limit, what)
    try:
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(descriptor, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise FileReadError(f"the file grew past the limit of {describe_size(limit)} for a {what} while it was read")
        return b"".join(chunks)
    except FileReadError:
        raise
    except OSError as exc:
        raise FileReadError(exc.strerror or str(exc)) from None
    finally:
        os.close(descriptor)


class _BoundedStream(io.RawIOBase):
    """A regular file's bytes read in pieces, refused (FileReadError) once more than `limit` have come."""

    def __init__(self, descriptor: int, limit: int, what: str) -> None:
        super().__init__()
        self._descriptor = descriptor
        self._limit = limit
        self._what = what
        self._total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "bytearray | memoryview") -> int:  # type: ignore[override]
        try:
            chunk = os.read(self._descriptor, min(len(buffer), self._limit + 1 - self._total))
        except OSError as exc:
            raise FileReadError(exc.strerror or str(exc)) from None
        self._total += len(chunk)
        if self._total > self._limit:
            raise FileReadError(
                f"the file grew past the limit of {describe_size(self._limit)} for a {self._what} while it was read"
            )
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def close(self) -> None:
        if not self.closed:
            os.close(self._descriptor)
        super().close()


def open_bounded(path: str | os.PathLike[str], limit: int, what: str = "file") -> io.BufferedReader:
    """`read_bounded`'s checks, then the file as a stream read piece by piece (for files read as they stream).

    The same refusals as read_bounded (not a regular file, over the limit, a
    file that grows past it while read, as FileReadError from read calls too).
    """
    descriptor = _open_regular(os.fspath(path), limit, what)
    return io.BufferedReader(_BoundedStream(descriptor, limit, what), _CHUNK)
