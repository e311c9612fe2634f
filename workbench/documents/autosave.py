"""Autosave of unsaved work, and recovery of it after a crash (Qt-free; the GUI owns the timer).

Each running app writes its unsaved session to its own recovery file in the
user data folder (platformdirs), atomically, every AUTOSAVE_INTERVAL_S while
the session is dirty, and discards the file when the work is saved or
deliberately thrown away. A recovery file whose writer is no longer running
is what a crash or a kill leaves behind: the next start lists it with
`find_recoverable()` and offers to open it.

A recovery file is JSON: `{"format": "perf-workbench-autosave", "version": 1,
"pid", "host", "process_start", "saved_at", "source_path", "source_snapshot",
"session": {...}}`, where `session` is exactly a session file's data and
`source_snapshot` what the session file held when the window last read or
wrote it (`workbench.documents.session_sync.Snapshot`). Recovering merges the session
file as it is now into the recovered work (`recover_session`), so runs that
reached the file after the crash are kept, and the work is saved by the same
merge, under the same lock, as any save.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from workbench.files import FileReadError, read_bounded
from workbench.documents.session import (
    MAX_FILE_BYTES,
    RunEncodings,
    SaveStopped,
    Session,
    SessionError,
    check_file_data,
    session_pieces,
    session_from_dict,
    write_atomic,
)
from workbench.documents.session_sync import Merge, Snapshot, merge, read_session_file

AUTOSAVE_FORMAT = "perf-workbench-autosave"
AUTOSAVE_VERSION = 1
AUTOSAVE_INTERVAL_S = 30
APP_NAME = "perf-workbench"
DATA_DIR_VARIABLE = "PERF_WORKBENCH_DATA_DIR"  # overrides the platformdirs folder (tests, portable installs)
_PREFIX = "autosave-"
_SUFFIX = ".json"


def data_dir() -> Path:
    """The user data folder: $PERF_WORKBENCH_DATA_DIR, else platformdirs' user data path."""
    override = os.environ.get(DATA_DIR_VARIABLE)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_path(APP_NAME, appauthor=False))


def autosave_dir() -> Path:
    """Where recovery files live."""
    return data_dir() / "autosave"


def process_start_marker(pid: int) -> str | None:
    """Something that tells this process from a later one given the same pid (Linux: its start tick)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None  # field 22 of the whole line: starttime


def process_is_running(pid: int, start_marker: str | None = None) -> bool:
    """True while process `pid` on this host is alive (and is the same process, where that can be told)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        alive = _windows_process_alive(pid)
    else:
        try:
            os.kill(pid, 0)  # signal 0 checks existence and sends nothing
            alive = True
        except ProcessLookupError:
            alive = False
        except PermissionError:
            alive = True  # it exists but belongs to someone else
        except OSError:
            alive = False
    if alive and start_marker is not None:
        current = process_start_marker(pid)
        if current is not None and current != start_marker:
            return False  # the pid was reused by a later process
    if alive:
        try:  # a killed child not yet reaped by its parent is a zombie: it is gone for our purposes
            state = Path(f"/proc/{pid}/stat").read_text()
            if state[state.rfind(")") + 2 :].startswith("Z"):
                return False
        except OSError:
            pass
    return alive


def _windows_process_alive(pid: int) -> bool:
    import ctypes

    query_limited_information = 0x1000
    still_active = 259
    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(query_limited_information, False, pid)
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return False
        return code.value == still_active
    finally:
        kernel32.CloseHandle(handle)


@dataclass(frozen=True)
class Recovery:
    """A recovery file left by an app that is no longer running."""

    path: Path
    saved_at: float  # seconds since the epoch
    source_path: str | None  # the session file the work belonged to, if it had been saved before
    title: str
    operations: int

    def load(self) -> Session:
        """The unsaved session it holds."""
        return read_recovery_file(self.path)[1]

    def base(self) -> Snapshot | None:
        """The session file as the crashed window last knew it (None when the recovery file does not say)."""
        return Snapshot.from_dict(read_recovery_file(self.path)[0].get("source_snapshot"))

    def discard(self) -> None:
        """Delete the recovery file (after recovering it, or when the user declines)."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise SessionError(f"cannot remove recovery file {self.path}: {exc.strerror or exc}") from None

    def describe(self) -> str:
        """One line for the recovery prompt: what, from where, when."""
        what = self.title or (Path(self.source_path).name if self.source_path else "an unsaved session")
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.saved_at))
        count = f"{self.operations} operation{'s' if self.operations != 1 else ''}"
        return f"{what} ({count}), autosaved {when}"


class Autosaver:
    """This process's recovery file: write it while work is unsaved, discard it once the work is safe."""

    def __init__(self, directory: Path | None = None, pid: int | None = None) -> None:
        self.directory = Path(directory) if directory is not None else autosave_dir()
        self.pid = os.getpid() if pid is None else pid
        self.host = socket.gethostname()
        self.process_start = process_start_marker(self.pid)
        self.path = self.directory / f"{_PREFIX}{self.host}-{self.pid}{_SUFFIX}"

    def write(
        self,
        session: Session,
        source_path: str | os.PathLike[str] | None = None,
        base: Snapshot | None = None,
        encodings: RunEncodings | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Path:
        """Save the session to this process's recovery file (atomically); SessionError says why not.

        `base` is the session file as the window last read or wrote it: a recovery merges against it.
        `encodings` keeps each run's text from one autosave (or save) to the next (workbench.documents.session.RunEncodings);
        `should_stop` is asked between runs (SaveStopped, nothing written: the work was saved or closed meanwhile).
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(f"cannot create the autosave folder {self.directory}: {exc.strerror or exc}") from None
        header = {
            "format": AUTOSAVE_FORMAT,
            "version": AUTOSAVE_VERSION,
            "pid": self.pid,
            "host": self.host,
            "process_start": self.process_start,
            "saved_at": time.time(),
            # Absolute: the app that recovers it may start in another folder.
            "source_path": os.path.abspath(os.fspath(source_path)) if source_path is not None else None,
            "source_snapshot": base.to_dict() if base is not None and source_path is not None else None,
        }
        try:
            check_file_data(header)
        except SessionError as exc:
            raise SessionError(f"cannot write the recovery file: {exc}") from None
        try:
            # The session as a session file holds it (without derived figures), after the header: one compact
            # line, whatever the size (nobody reads a recovery file but the app), joined once.
            body = session_pieces(session, include_derived=False, encodings=encodings, should_stop=should_stop)
            opening = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")[:-1]
            encoded = b"".join([opening, b',"session":', *body, b"}\n"])
        except SaveStopped:
            raise
        except SessionError as exc:  # a place in the session is named as the recovery file holds it
            place = "session." if exc.where else ""
            raise SessionError(f"cannot write the recovery file: {place}{exc}") from None
        # A link planted at the recovery file's name is replaced, never followed.
        write_atomic(self.path, encoded, what="recovery file", follow_symlinks=False)
        return self.path

    def discard(self) -> None:
        """Remove this process's recovery file: the work was saved, or the user chose to drop it."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise SessionError(f"cannot remove recovery file {self.path}: {exc.strerror or exc}") from None

    @property
    def exists(self) -> bool:
        return self.path.exists()


def read_recovery_file(path: Path) -> tuple[dict[str, Any], Session]:
    """The header fields and the session of one recovery file; SessionError if it is damaged."""
    try:
        # Bounded and non-blocking: a FIFO or a device in the folder must not hang the scan at start.
        text = read_bounded(path, MAX_FILE_BYTES, "recovery file").decode("utf-8")
        record = json.loads(text)
    except (FileReadError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SessionError(f"recovery file {path} cannot be read: {exc}") from None
    if not isinstance(record, dict) or record.get("format") != AUTOSAVE_FORMAT:
        raise SessionError(f"{path} is not a recovery file")
    if record.get("version") != AUTOSAVE_VERSION:
        raise SessionError(f"recovery file {path} has an unknown version")
    try:
        session = session_from_dict(record.get("session"))
    except SessionError as exc:
        raise SessionError(f"recovery file {path}: {exc}") from None
    return record, session


def _is_stale(record: dict[str, Any], this_host: str) -> bool:
    """Whether the app that wrote the record is gone (so its work needs recovering)."""
    pid = record.get("pid")
    if record.get("host") != this_host:
        # Another machine sharing this folder: its process cannot be checked from here.
        return False
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < 2**31:
        return True  # no process can have it: whatever wrote the file is gone
    if pid == os.getpid():
        return False  # this process's own file is not something to recover
    marker = record.get("process_start")
    return not process_is_running(pid, marker if isinstance(marker, str) else None)


def _timestamp(value: Any) -> float:
    """A recovery file's saved_at as seconds since the epoch; 0 when it is not a plausible time."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value) if 0 <= value < 32_503_680_000 else 0.0  # up to the year 3000 (what every platform can show)


def find_recoverable(directory: Path | None = None) -> list[Recovery]:
    """Recovery files whose writers have exited without saving or discarding them, newest first."""
    return scan_recovery_files(directory)[0]


def scan_recovery_files(directory: Path | None = None) -> tuple[list[Recovery], list[str]]:
    """The recoverable sessions (as find_recoverable) and, for each recovery file that cannot be read (damaged,
    too large, not a file), why, naming the file: nothing in it can be offered, but the work may still be in it,
    so the window says so instead of passing over it. A file is written whole or not at all (write_atomic): one
    being written by a running window is never among them."""
    folder = Path(directory) if directory is not None else autosave_dir()
    if not folder.is_dir():
        return [], []
    host = socket.gethostname()
    found: list[Recovery] = []
    unreadable: list[str] = []
    for path in sorted(folder.glob(f"{_PREFIX}*{_SUFFIX}")):
        try:
            record, session = read_recovery_file(path)
        except SessionError as exc:
            unreadable.append(str(exc))
            continue
        if not _is_stale(record, host):
            continue
        saved_at = record.get("saved_at")
        source = record.get("source_path")
        if isinstance(source, str) and not os.path.isabs(source):
            source = None  # an older file's relative path would resolve against whatever folder the app starts in
        found.append(
            Recovery(
                path=path,
                saved_at=_timestamp(saved_at),
                source_path=source if isinstance(source, str) else None,
                title=session.title,
                operations=len(session.operations),
            )
        )
    found.sort(key=lambda recovery: recovery.saved_at, reverse=True)
    return found, unreadable


@dataclass
class Recovered:
    """A recovered session with the session file's later changes merged in."""

    session: Session
    base: Snapshot | None  # what a save merges against: the file as merged here, or as the crashed window knew it
    merge: Merge | None  # the merge with the file as it is now (None: no file, or it had not changed)
    file_error: str = ""  # why the session file could not be read (the recovered work is still offered)


def recover_session(recovery: Recovery) -> Recovered:
    """The recovery file's session, with what reached its session file after the crash taken in.

    The file as the crashed window knew it is the merge's base: runs appended
    to the file since then are added, parts only the file changed are taken,
    and parts both changed stay the recovered ones (the save asks about them).
    SessionError when the recovery file itself cannot be read.
    """
    record, session = read_recovery_file(recovery.path)
    base = Snapshot.from_dict(record.get("source_snapshot"))
    source = recovery.source_path
    if source is None or not os.path.lexists(source):
        return Recovered(session, base, None)
    try:
        theirs, data = read_session_file(source)
    except SessionError as exc:
        return Recovered(session, base, None, str(exc))
    if base is not None and base.digest == Snapshot.of(theirs, data).digest:
        return Recovered(session, base, None)
    merged = merge(base, session, theirs)
    # Without conflicts the file as read now is the base of what is merged; with them the old base stays,
    # so that the save still sees both sides' changes and asks.
    new_base = Snapshot.of(theirs, data) if not merged.conflicts else base
    return Recovered(merged.session, new_base, merged)
