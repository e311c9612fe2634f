"""Several writers, one session file: the lock around each read-modify-write, and the merge of what others wrote.

The window, the command line (`workbench measure … --save-to`) and other
windows may all write the same session file. Each write is a read, a change
and an atomic replace (`workbench.documents.session.save`); `session_lock` holds an
operating-system lock on the file `NAME.lock` beside it for exactly that long,
so no writer replaces a file another has read but not yet written back. The
lock is a `filelock.FileLock` (fcntl on POSIX, msvcrt on Windows): the kernel
releases it when its holder dies, so a writer killed while holding it never
blocks the next one. A writer that cannot get it within LOCK_TIMEOUT_S says so
(`SessionLockTimeout`) and writes nothing; while the writers ahead of it are
replacing the file one after another, it keeps its place in the queue.

A writer that kept a session open (the window) knows the file as it last read
or wrote it: a `Snapshot` (the bytes' SHA-256 and a fingerprint of each part).
When the file on disk is no longer that, `merge` compares the three — the
snapshot (base), the open session (mine) and the file (theirs): runs are
records with unique ids, so the runs another writer appended are added and
the runs one side removed stay removed; any other part (operations, device,
settings, title, description, steps, profiles) is taken from whichever side
changed it; a part both sides changed differently is a conflict, which the
caller must resolve (reload, keep its own as a copy, or merge keeping its own
version of that part). Nothing here imports Qt.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from workbench.model.devices import Device
from workbench.records import from_plain, record, to_plain
from workbench.documents.session import (
    OperationEntry,
    RunEncodings,
    Session,
    SessionError,
    StepEntry,
    load_keeping_bytes,
    loads_named,
    read_session_bytes,
    save,
    session_to_dict,
)

LOCK_TIMEOUT_S = 10.0  # the longest a writer waits for another to finish with the file before it gives up
_PROGRESS_CHECK_S = 0.5  # how often a waiting writer looks whether the writers ahead of it are moving
LOCK_SUFFIX = ".lock"  # the lock file is NAME.json.lock beside NAME.json

# The parts of a session compared one by one. Lists are compared item by item, so that
# items appended on one side and edits on the other both survive.
_SCALAR_PARTS = ("title", "description", "device", "settings", "extra")
_LIST_PARTS = ("operations", "steps", "profiles")
_PART_WORDS = {
    "title": "the title",
    "description": "the description",
    "device": "the device and its rates",
    "settings": "the settings",
    "extra": "other data",
    "operations": "the operations",
    "steps": "the steps",
    "profiles": "the imported profiles",
}


class SessionLockTimeout(SessionError):
    """Another writer held the session file's lock for longer than LOCK_TIMEOUT_S."""


# ---------------------------------------------------------------- the lock


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of a session file: NAME.lock beside the file a link at `path` points to."""
    target = Path(os.path.realpath(os.fspath(path)))
    return target.with_name(target.name + LOCK_SUFFIX)


def check_lockable(path: str | os.PathLike[str]) -> Path:
    """The lock file of `path`, after checking that its folder exists and can take it (SessionError says which not)."""
    name = os.fspath(path)
    lock_file = lock_path(name)
    folder = lock_file.parent
    if not folder.is_dir():
        raise SessionError(f"cannot save session {name}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SessionError(f"cannot save session {name}: the folder {folder} is not writable (its lock file goes there)")
    return lock_file


@contextmanager
def session_lock(path: str | os.PathLike[str], timeout: float | None = None) -> Iterator[float]:
    """Hold the lock of session file `path` (yields the seconds spent waiting for it).

    SessionLockTimeout when one other writer holds it longer than `timeout` (default LOCK_TIMEOUT_S);
    SessionError when the lock file cannot be made (a folder that is missing or
    read-only), one line each. The lock is reentrant within a process.
    """
    from filelock import FileLock, Timeout

    name = os.fspath(path)
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    lock_file = check_lockable(name)
    # An OS lock (never a soft one): the kernel drops it when its holder dies. One object per file in a
    # process, so a save inside a save of the same file does not wait on itself.
    lock = FileLock(lock_file, is_singleton=True, fallback_to_soft=False)
    _import_what_saving_uses()
    started = time.monotonic()
    try:
        _acquire(lock, name, timeout)
    except Timeout:
        raise SessionLockTimeout(
            f"cannot save session {name}: another program has held its lock ({lock_file.name}) for over "
            f"{timeout:g} s; nothing was written"
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise SessionError(f"cannot save session {name}: cannot lock it ({lock_file}: {reason})") from None
    try:
        yield time.monotonic() - started
    finally:
        lock.release()


def _acquire(lock: Any, name: str, timeout: float) -> None:
    """Take the lock, waiting at most `timeout` for any one holder: while the writers ahead replace the file
    one after another the wait goes on, so fifty writers queued at once all get their turn, and a holder
    that keeps it (hung, or a program that locks and never writes) stops the wait after `timeout`."""
    from filelock import Timeout

    deadline = time.monotonic() + timeout
    stamp = DiskStamp.of(name)
    while True:
        try:
            lock.acquire(timeout=max(0.0, min(_PROGRESS_CHECK_S, deadline - time.monotonic())))
            return
        except Timeout:
            now_stamp = DiskStamp.of(name)
            if now_stamp != stamp:  # another writer has replaced the file: the queue moves
                stamp = now_stamp
                deadline = time.monotonic() + timeout
            elif time.monotonic() >= deadline:
                raise


def _import_what_saving_uses() -> None:
    """Import the modules reading and writing a session import on first use, before the lock is taken: a first
    import takes a second on a loaded machine, and the lock is for the read and the write alone."""
    import workbench.model.declare  # noqa: F401
    import workbench.model.naming  # noqa: F401
    import workbench.measure.runs  # noqa: F401
    import workbench.steps  # noqa: F401
    import workbench.model.units  # noqa: F401


# ---------------------------------------------------------------- reading with the file's state


@dataclass(frozen=True)
class DiskStamp:
    """What the file system says about a file, cheaply: enough to see that it may have changed."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> "DiskStamp | None":
        try:
            info = os.stat(path)
        except OSError:
            return None
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def digest(data: bytes) -> str:
    """The SHA-256 of a file's bytes: whether it is still the file a writer read."""
    return hashlib.sha256(data).hexdigest()


def read_session_file(path: str | os.PathLike[str]) -> tuple[Session, bytes]:
    """Load a session file and keep the bytes it was read from (bounded; SessionError names any fault)."""
    return load_keeping_bytes(path)


# ---------------------------------------------------------------- snapshots and the merge


def _fingerprint(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _parts(session: Session) -> dict[str, Any]:
    """A session's parts as the file holds them (without derived figures)."""
    # Runs are known by their keys (run_keys): left out here, their samples are not walked on every check.
    data = session_to_dict(dataclasses.replace(session, runs=[]), include_derived=False)
    extra = {key: value for key, value in data.items() if key in session.extra}
    return {
        "title": data["title"],
        "description": data["description"],
        "device": data["device"],
        "settings": data["settings"],
        "extra": extra,
        "operations": data["operations"],
        "steps": data.get("steps", []),
        "profiles": data["profiles"],
    }


def run_keys(runs: Sequence[Any]) -> list[str]:
    """One key per run: its id (a run record's unique id) or, for an early run without one, its content;
    a key seen before gets `#n` after it, so that two copies of one run are two runs."""
    keys: list[str] = []
    seen: dict[str, int] = {}
    for run in runs:
        run_id = run.get("id") if isinstance(run, Mapping) else None
        if isinstance(run_id, (str, int)) and not isinstance(run_id, bool) and str(run_id):
            key = f"id:{run_id}"
        else:
            key = f"content:{_fingerprint(run)}"
        count = seen.get(key, 0)
        seen[key] = count + 1
        keys.append(key if count == 0 else f"{key}#{count}")
    return keys


@dataclass(frozen=True)
class Snapshot:
    """A session file as a writer last read or wrote it: its bytes' digest, each part's fingerprint, its runs.

    `parts` maps a scalar part to one fingerprint and a list part to its items'
    fingerprints. A part missing from it is unknown (a recovery file from before
    snapshots): then any difference there counts as a change on both sides.
    """

    digest: str
    parts: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    runs: tuple[str, ...] = ()

    @classmethod
    def of(cls, session: Session, file_bytes: bytes) -> "Snapshot":
        return cls(digest(file_bytes), _fingerprints(session), tuple(run_keys(session.runs)))

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> "Snapshot | None":
        """A snapshot kept in a recovery file; None when it is missing or not one (then nothing is assumed)."""
        try:
            return from_plain(data, cls) if isinstance(data, Mapping) else None
        except (KeyError, TypeError, ValueError):
            return None


def _digest_text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a snapshot's digest is text")
    return value


def _known_parts(value: Any) -> dict[str, str | tuple[str, ...]]:
    """The parts a snapshot names rightly: a scalar part's fingerprint, a list part's list of them; others left out."""
    if not isinstance(value, Mapping):
        raise TypeError("a snapshot's parts are a mapping")
    parts: dict[str, str | tuple[str, ...]] = {}
    for key in (*_SCALAR_PARTS, *_LIST_PARTS):
        part = value.get(key)
        if key in _SCALAR_PARTS and isinstance(part, str):
            parts[key] = part
        elif key in _LIST_PARTS and isinstance(part, list) and all(isinstance(item, str) for item in part):
            parts[key] = tuple(part)
    return parts


def _run_keys(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(key, str) for key in value):
        raise TypeError("a snapshot's runs are a list of keys")
    return tuple(value)


def _plain_parts(parts: Mapping[str, str | tuple[str, ...]]) -> dict[str, str | list[str]]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in parts.items()}


# every key is required (a snapshot missing one is none); a part of the wrong form is unknown, not a fault
record(
    Snapshot,
    missing={"parts": None, "runs": None},
    dump={"parts": _plain_parts},
    load={"digest": _digest_text, "parts": _known_parts, "runs": _run_keys},
)


def _fingerprints(session: Session) -> dict[str, str | tuple[str, ...]]:
    parts = _parts(session)
    result: dict[str, str | tuple[str, ...]] = {key: _fingerprint(parts[key]) for key in _SCALAR_PARTS}
    for key in _LIST_PARTS:
        result[key] = tuple(_fingerprint(item) for item in parts[key])
    return result


@dataclass
class Merge:
    """The open session with what another writer changed in the file taken in.

    `session` holds, for a conflicting part, the open session's version.
    """

    session: Session
    new_runs: list[dict[str, Any]]  # runs the other writer appended (now at the end of session.runs)
    removed_runs: int  # runs the other writer removed, removed here too
    appended: dict[str, list[Any]]  # list part -> items the other writer appended (now at its end)
    taken: list[str]  # parts taken from the file as a whole (the other writer changed them, this side did not)
    conflicts: list[str]  # parts both changed differently, in words ("operation 2 (gemm)", "the settings")

    @property
    def only_appended(self) -> bool:
        """The file only added runs or list items: the open session needs nothing but appending."""
        return not self.taken and not self.removed_runs and not self.conflicts

    @property
    def changed_anything(self) -> bool:
        return bool(self.new_runs or self.removed_runs or any(self.appended.values()) or self.taken)


_Item = TypeVar("_Item")


def _merge_list(
    part: str,
    base: tuple[str, ...] | None,
    mine: list[_Item],
    theirs: list[_Item],
    mine_fp: tuple[str, ...],
    theirs_fp: tuple[str, ...],
    describe: Callable[[int, _Item], str],
) -> tuple[list[_Item], list[_Item], bool, list[str]]:
    """(merged items, items appended from theirs, whether theirs was taken beyond appending, conflicts)."""
    if mine_fp == theirs_fp or (base is not None and theirs_fp == base):
        return list(mine), [], False, []
    known = base if base is not None else ()
    count = len(known)
    theirs_appended = [item for item, fp in zip(theirs[count:], theirs_fp[count:]) if fp not in mine_fp]
    if base is not None and theirs_fp[:count] == known:  # theirs only appended: mine with their new items
        return [*mine, *theirs_appended], theirs_appended, False, []
    if base is not None and mine_fp == base:
        return list(theirs), [], True, []
    if base is not None and mine_fp[:count] == known:  # mine only appended: theirs with mine's new items
        return [*theirs, *(i for i, fp in zip(mine[count:], mine_fp[count:]) if fp not in theirs_fp)], [], True, []
    if base is not None and len(mine) >= count and len(theirs) >= count:
        # Both edited items in place (and maybe appended): item by item.
        merged: list[_Item] = []
        conflicts: list[str] = []
        took = False
        for index in range(count):
            b, m, t = known[index], mine_fp[index], theirs_fp[index]
            if t == b or m == t:
                merged.append(mine[index])
            elif m == b:
                merged.append(theirs[index])
                took = True
            else:
                merged.append(mine[index])
                conflicts.append(describe(index, mine[index]))
        own = [item for item, fp in zip(mine[count:], mine_fp[count:])]
        return [*merged, *own, *theirs_appended], theirs_appended, took, conflicts
    if base is None:  # nothing known: items only theirs has are added, mine kept, the difference is a conflict
        return [*mine, *theirs_appended], theirs_appended, False, [_PART_WORDS[part]]
    return list(mine), [], False, [_PART_WORDS[part]]  # both removed or reordered items


def _describe_operation(index: int, entry: OperationEntry) -> str:
    return f"operation {index + 1} ({entry.name})"


def _describe_step(index: int, step: StepEntry) -> str:
    return f"step {index + 1} ({step.name})"


def _describe_profile(index: int, _: Any) -> str:
    return f"imported profile record {index + 1}"


def merge(base: Snapshot | None, mine: Session, theirs: Session) -> Merge:
    """Mine with what the file (theirs) changed since `base`; see the module's docstring.

    Runs: every run of mine the file still has or never had, then the file's
    runs that neither `base` nor mine has. With no base (nothing known about
    the file as it was) no run of either side is dropped.
    """
    known = base.parts if base is not None else {}
    mine_fps, theirs_fps = _fingerprints(mine), _fingerprints(theirs)
    taken: list[str] = []
    conflicts: list[str] = []
    values: dict[str, Any] = {}
    for part in _SCALAR_PARTS:
        b, m, t = known.get(part), mine_fps[part], theirs_fps[part]
        if m == t or t == b:
            values[part] = getattr(mine, part)
        elif m == b:
            values[part] = getattr(theirs, part)
            taken.append(_PART_WORDS[part])
        else:
            values[part] = getattr(mine, part)
            conflicts.append(_PART_WORDS[part])

    appended: dict[str, list[Any]] = {}
    describers: dict[str, Callable[[int, Any], str]] = {
        "operations": _describe_operation,
        "steps": _describe_step,
        "profiles": _describe_profile,
    }
    for part in _LIST_PARTS:
        base_fp = known.get(part)
        merged, added, took, clashes = _merge_list(
            part,
            base_fp if isinstance(base_fp, tuple) else None,
            getattr(mine, part),
            getattr(theirs, part),
            mine_fps[part],  # type: ignore[arg-type]
            theirs_fps[part],  # type: ignore[arg-type]
            describers[part],
        )
        values[part] = merged
        appended[part] = added
        if took:
            taken.append(_PART_WORDS[part])
        conflicts.extend(clashes)

    base_runs = set(base.runs) if base is not None else set()
    mine_keys, theirs_keys = run_keys(mine.runs), run_keys(theirs.runs)
    theirs_set, mine_set = set(theirs_keys), set(mine_keys)
    kept = [run for run, key in zip(mine.runs, mine_keys) if key in theirs_set or key not in base_runs]
    removed = len(mine.runs) - len(kept)
    new_runs = [run for run, key in zip(theirs.runs, theirs_keys) if key not in base_runs and key not in mine_set]
    session = Session(runs=[*kept, *new_runs], **values)
    return Merge(session, new_runs, removed, appended, taken, conflicts)


# ---------------------------------------------------------------- writing under the lock


@dataclass
class SaveOutcome:
    """What `save_merged` did: wrote the file (with what it merged), or found conflicts and wrote nothing."""

    written: bool
    session: Session  # what the file now holds (when written), else the open session unchanged
    snapshot: Snapshot | None  # the file as written (when written)
    merge: Merge | None = None  # the merge done, when the file had changed since the snapshot
    theirs: Session | None = None  # the file's session, when it had changed
    theirs_snapshot: Snapshot | None = None
    waited_s: float = 0.0


def save_merged(
    path: str | os.PathLike[str],
    mine: Session,
    base: Snapshot | None,
    keep_mine_in_conflicts: bool = False,
    overwrite: bool = False,
    timeout: float | None = None,
    device: Device | None = None,
    encodings: RunEncodings | None = None,
) -> SaveOutcome:
    """Save `mine` to `path` under its lock, taking in what others wrote since `base`.

    The file is read under the lock; when its bytes are still those of `base`
    (or there is no file, or `overwrite`: a Save As the user confirmed), mine is
    written as it is, and the file is not parsed. Otherwise the file's session
    is merged in (`merge`); when parts conflict and `keep_mine_in_conflicts` is
    not set, nothing is written and the outcome carries the conflicts and the
    file's session for the caller to ask about. SessionError
    (SessionLockTimeout) says why nothing could be saved. `device` (mine's
    device as resolved) and `encodings` as for `workbench.documents.session.save`.
    """
    name = os.fspath(path)
    with session_lock(name, timeout) as waited:
        if overwrite or not os.path.lexists(name):
            written = save(mine, name, device, encodings)
            return SaveOutcome(True, mine, Snapshot.of(mine, written), waited_s=waited)
        data = read_session_bytes(name)
        if base is not None and digest(data) == base.digest:
            written = save(mine, name, device, encodings)
            return SaveOutcome(True, mine, Snapshot.of(mine, written), waited_s=waited)
        theirs = loads_named(data, name)
        merged = merge(base, mine, theirs)
        theirs_snapshot = Snapshot.of(theirs, data)
        if merged.conflicts and not keep_mine_in_conflicts:
            return SaveOutcome(False, mine, None, merged, theirs, theirs_snapshot, waited)
        written = save(merged.session, name, encodings=encodings)  # its device may be the file's: resolved anew
        return SaveOutcome(True, merged.session, Snapshot.of(merged.session, written), merged, theirs, theirs_snapshot, waited)


def update_session_file(
    path: str | os.PathLike[str],
    change: Callable[[Session], Any],
    new: Callable[[], Session],
    timeout: float | None = None,
) -> tuple[Session, Any, float]:
    """Read the session file (or start `new()` when there is none), apply `change`, write it back, under its lock.

    Returns the session written, what `change` returned and the seconds spent
    waiting for the lock. This is the command line's append: nothing another
    writer saves in between can be lost.
    """
    name = os.fspath(path)
    with session_lock(name, timeout) as waited:
        session = read_session_file(name)[0] if os.path.lexists(name) else new()
        result = change(session)
        save(session, name)
    return session, result, waited


def unused_path(path: str | os.PathLike[str], words: str) -> Path:
    """`NAME (words).json` beside `path`, or `NAME (words 2).json`, … : a name no file has yet."""
    target = Path(os.fspath(path))
    stem, suffix = target.stem, target.suffix or ".json"
    candidate = target.with_name(f"{stem} ({words}){suffix}")
    number = 2
    while os.path.lexists(candidate):
        candidate = target.with_name(f"{stem} ({words} {number}){suffix}")
        number += 1
    return candidate
