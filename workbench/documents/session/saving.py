"""A session file's bytes and how they reach the disk: `dumps` and `save`, the encoding of a session in pieces
(runs encoded once and kept, a save that can be stopped), and the atomic write beside the target."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from workbench.model.devices import Device
from workbench.errors import WorkbenchError
from workbench.files import FileReadError, require_regular
from workbench.documents.session.model import COMPACT_FROM_BYTES, MAX_FILE_BYTES, STALE_TEMPORARY_S, Session, SessionError
from workbench.documents.session.reading import _kind, _size_words, check_file_data, session_from_dict
from workbench.documents.session.writing import _plain_json, _run_figures_by_index, format_json, session_to_dict


def dumps(session: Session) -> str:
    """The session file's text: stable key order and indentation (compact when large), so the same session gives
    the same bytes."""
    return encode_session(session).decode("utf-8")


def save(
    session: Session,
    path: str | os.PathLike[str],
    device: Device | None = None,
    encodings: "RunEncodings | None" = None,
    should_stop: Callable[[], bool] | None = None,
) -> bytes:
    """Write the session atomically; on any failure the previous file is left intact and SessionError says why.

    The data is checked as the loader checks it before it is written, so a
    file this function writes always opens again: every part but the runs is
    read back with the loader, and each run was checked when it was encoded
    (an object, plain JSON the loader takes). Returns the bytes written.
    `device` and `encodings` as for `encode_session`. A writer that may share
    the file with others holds its lock around the read and this write
    (`workbench.documents.session_sync`).
    """
    name = os.fspath(path)
    try:
        encoded = encode_session(session, True, device, encodings, should_stop)
    except SessionError as exc:
        raise SessionError(f"cannot save {name}: {exc}") from None
    if len(encoded) > MAX_FILE_BYTES:
        raise SessionError(
            f"cannot save {name}: the session is {_size_words(len(encoded))}, over the "
            f"{_size_words(MAX_FILE_BYTES)} limit for a session file (remove some runs' raw samples)"
        )
    try:
        head = session_to_dict(dataclasses.replace(session, runs=[]), include_derived=False, device=device)
        session_from_dict(json.loads(_compact_bytes(head)))
    except SessionError as exc:
        raise SessionError(f"cannot save {name}: the session would not open again ({exc})") from None
    write_atomic(path, encoded, what="session")
    return encoded


def encode_file_data(data: Any) -> bytes:
    """A session (or recovery) file's data as the UTF-8 bytes written to disk.

    The data is checked first (check_file_data), so text that UTF-8 cannot
    hold (a lone surrogate) or a number no reader can take is refused with a
    SessionError naming where it is, instead of failing half-way through a write.
    """
    check_file_data(data)
    compact = _compact_bytes(data)
    if len(compact) > COMPACT_FROM_BYTES:
        return compact + b"\n"
    return format_json(data).encode("utf-8")


def _compact_bytes(data: Any) -> bytes:
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as exc:  # check_file_data should have caught these; say so plainly
        raise SessionError(f"the session holds data that is not plain JSON ({exc})") from None


class SaveStopped(SessionError):
    """An encoding was stopped by its caller (`should_stop`) before it finished; nothing was written."""


_RUN_DEPTH = 3  # where a run sits in a session file: the top object 1, the runs array 2, the run 3
_STOP_EVERY = 64  # runs encoded between two looks at should_stop


class RunEncodings:
    """Each run's compact text in the file, made once per run dict and kept while the run is in the session.

    Run dicts are replaced, never edited in place (`workbench.measure.runs.read_runs`):
    a run made plain JSON, checked as the loader checks it (an object; no
    nesting past MAX_NESTING, no lone surrogate, no number beyond a double) and
    encoded once gives the same text at every later save and autosave, so a
    session of thousands of runs is walked once, not at every save. Used by one
    thread at a time (the window's writer, or one save).
    """

    def __init__(self) -> None:
        self._texts: dict[int, tuple[Any, bytes]] = {}

    def texts(self, runs: Sequence[Any], should_stop: Callable[[], bool] | None = None) -> list[bytes]:
        """The text of each run, in order (SessionError naming the first run that cannot be saved)."""
        kept: dict[int, tuple[Any, bytes]] = {}
        texts = []
        for index, run in enumerate(runs):
            if should_stop is not None and index % _STOP_EVERY == 0 and should_stop():
                raise SaveStopped("stopped before it was written")
            known = self._texts.get(id(run))
            text = known[1] if known is not None and known[0] is run else _run_text(run, index)
            kept[id(run)] = (run, text)
            texts.append(text)
        self._texts = kept  # runs no longer in the session are let go
        return texts


def _run_text(run: Any, index: int) -> bytes:
    """One run as the file holds it, checked as the loader checks it."""
    where = f"runs[{index}]"
    if not isinstance(run, Mapping):
        raise SessionError(f"expected an object, found {_kind(run)}", where)
    plain = _plain_json(run, where)
    check_file_data(plain, where, _RUN_DEPTH)
    return _compact_bytes(plain)


def encode_session(
    session: Session,
    include_derived: bool = True,
    device: Device | None = None,
    encodings: RunEncodings | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> bytes:
    """The session file's bytes: `encode_file_data(session_to_dict(session, include_derived))`, made piece by piece
    (`session_pieces`) and joined once."""
    pieces = session_pieces(session, include_derived, device, encodings, should_stop)
    if sum(len(piece) for piece in pieces) > COMPACT_FROM_BYTES:
        pieces.append(b"\n")
        return b"".join(pieces)
    return format_json(json.loads(b"".join(pieces))).encode("utf-8")  # small: indented, as people read it


def session_pieces(
    session: Session,
    include_derived: bool = True,
    device: Device | None = None,
    encodings: RunEncodings | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[bytes]:
    """The session's compact JSON as pieces whose concatenation is the whole (the bytes of a large session file
    without its final newline).

    Each run's text comes from `encodings` (made once per run dict, kept there
    for the next save) with its derived figures put after it. The pieces are
    joined once by the caller: no call into the JSON encoder, and no copy of
    the whole, holds the interpreter for seconds (a window saving in a thread
    stays responsive), and no sample is walked again at each save. `device` is
    the session's device as the caller resolved it (the window's, whose run
    figures are cached). SaveStopped when `should_stop()` says so between runs.
    """
    from workbench.measure.runs import DERIVED_KEY

    encodings = encodings if encodings is not None else RunEncodings()
    if device is None:
        try:
            device = session.device.resolve()
        except WorkbenchError:
            device = None  # session_to_dict says why in the derived figures
    head = session_to_dict(dataclasses.replace(session, runs=[]), include_derived, device)
    check_file_data(head)
    texts = encodings.texts(session.runs, should_stop)
    if include_derived:
        figures = _run_figures_by_index(session, device)
        for index, text in enumerate(texts):
            if index in figures:
                where = f"runs[{index}].{DERIVED_KEY}"
                derived = _plain_json(figures[index].to_dict(), where)
                check_file_data(derived, where, _RUN_DEPTH + 1)
                run = session.runs[index]
                if DERIVED_KEY in run:  # a copy of its own (loading drops them): replaced where it stands
                    texts[index] = _compact_bytes({**_plain_json(run, f"runs[{index}]"), DERIVED_KEY: derived})
                    continue
                joint = b"," if text != b"{}" else b""
                texts[index] = text[:-1] + joint + b'"' + DERIVED_KEY.encode() + b'":' + _compact_bytes(derived) + b"}"
    if should_stop is not None and should_stop():
        raise SaveStopped("stopped before it was written")
    pieces = [b"{"]
    for number, (key, value) in enumerate(head.items()):
        pieces.append((b"," if number else b"") + _compact_bytes(key) + b":")
        if key == "runs":
            pieces.append(b"[")
            for index, text in enumerate(texts):
                if index:
                    pieces.append(b",")
                pieces.append(text)
            pieces.append(b"]")
        else:
            pieces.append(_compact_bytes(value))
    pieces.append(b"}")
    return pieces


def write_atomic(
    path: str | os.PathLike[str], data: bytes, what: str = "file", follow_symlinks: bool = True
) -> None:
    """Write `data` to `path` through a temporary file in the same folder: write, flush, fsync, rename.

    A failure at any step removes the temporary file, leaves any previous file
    at `path` unchanged, and raises SessionError naming the path and the cause.
    A symlink at `path` is followed (the saved file stays where it points)
    unless `follow_symlinks` is False: then the link itself is replaced and
    whatever it pointed at is never written (recovery files, whose folder
    others might plant links in). Temporary files that killed saves of the
    same file left behind are removed after a successful write.
    """
    name = os.fspath(path)
    temporary: str | None = None
    try:
        target = Path(os.path.realpath(name) if follow_symlinks else os.path.abspath(name))
        folder = target.parent
        if not folder.is_dir():
            raise SessionError(f"cannot save {what} {name}: the folder {folder} does not exist")
        try:
            existing: os.stat_result | None = os.stat(target) if follow_symlinks else os.lstat(target)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise SessionError(f"cannot save {what} {name}: it is a folder")
        if existing is not None and follow_symlinks:
            try:  # a FIFO, socket or device (or a link to one) is never replaced by a file
                require_regular(target)
            except FileReadError as exc:
                raise SessionError(f"cannot save {what} {name}: {exc}; nothing was written") from None
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        try:
            keep_mode = existing is not None and stat.S_ISREG(existing.st_mode)
            os.chmod(temporary, stat.S_IMODE(existing.st_mode) if existing is not None and keep_mode else 0o644)
        except OSError:
            pass  # permissions are a courtesy; the data is what must not be lost
        os.replace(temporary, target)  # replaces a link itself, never the file it points at
        temporary = None
        _fsync_folder(folder)
        remove_stale_temporaries(target)
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise SessionError(
            f"cannot save {what} {os.fspath(path)}: {reason}; the previous file (if any) is unchanged"
        ) from None
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def remove_stale_temporaries(target: Path, older_than_s: float = STALE_TEMPORARY_S) -> list[Path]:
    """Delete `.NAME.XXXXXXXX.tmp` files that killed saves of `target` left beside it; returns those removed.

    Only names write_atomic itself makes for this target are touched, and only
    regular files untouched for `older_than_s`, so a save of the same file in
    progress in another window keeps its temporary file.
    """
    pattern = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")
    now = time.time()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime >= older_than_s:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # tidying is a courtesy; the save itself has succeeded
    return removed


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable where the platform allows opening a folder."""
    if os.name != "posix":
        return
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
