"""The session: what a user declared, on which device, with which settings, and what was measured.

A session is plain data (no Qt): the GUI observes it, the file format
serialises it, reports render it. Derived figures (FLOP, bytes, bounds) are
not stored as truth: the file carries them for readers without the app, and
they are recomputed from the declarations whenever a session is opened.

The file is JSON, `{"format": "perf-workbench-session", "version": 1, ...}`
(docs/session-format.md). Loading parses JSON and walks it against the
expected shape, never executing anything in it; every fault becomes one
`SessionError` naming where it is (`operations[2].declaration`). Saving
writes a temporary file beside the target, fsyncs it and renames it over the
target, so a failed save leaves the previous file as it was.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from workbench import __version__
from workbench.analysis import Analysis, analyze_partial
from workbench.devices import BANDWIDTH, PATHS, Device, Rate, find_device
from workbench.devices.catalogue import (
    ENTERED,
    LATENCY_LOADS,
    MAX_LATENCY_S,
    MEASURED,
    MIN_LATENCY_S,
    SOURCES,
    Latency,
    rate_problem,
)
from workbench.devices.interfaces import interface_keys
from workbench.devices.links import known_rate_key
from workbench.errors import WorkbenchError
from workbench.files import FileReadError, read_bounded, require_regular
from workbench.conventions import CONVENTIONS
# (at the top, not in the functions that read each operation: an import inside a function runs on every call, and
# under Qt's import hook costs tens of microseconds: three per operation when a session of thousands opens)
from workbench.declare import parse
from workbench.naming import automatic_name, is_legacy_default

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.runs import FigureContext, RunFigures

DEFAULT_DEVICE = "h100-sxm"

FORMAT = "perf-workbench-session"
VERSION = 1  # the format version this code writes, and the newest it reads
MAX_FILE_BYTES = 64 * 2**20  # a session file over 64 MiB is refused unread, and never written
# A session whose compact JSON is larger than this is written compact: indentation would grow it by a fifth (a
# session the app opened could then not be saved under MAX_FILE_BYTES), and the indenting formatter, in Python,
# takes minutes where the compact one, in C, takes a second.
COMPACT_FROM_BYTES = 4 * 2**20
MAX_NESTING = 64  # arrays and objects inside each other; real files need under ten
STALE_TEMPORARY_S = 60.0  # a save's temporary file untouched this long was left by a killed save
NVML_KEY_PREFIX = "nvml-"
GENERATOR = f"Performance Workbench {__version__}"
DERIVED_NOTE = (
    "Figures under 'derived' and 'rates_in_use' are written for readers without the app; "
    "the app recomputes them from the declarations and the raw samples and ignores these copies."
)

CONVENTION_CHOICES = CONVENTIONS  # the keys a session file may hold (workbench.ops.base)
_TOP_LEVEL_KEYS = (
    "format",
    "version",
    "generator",
    "about_derived",
    "title",
    "description",
    "device",
    "settings",
    "operations",
    "runs",
    "profiles",
    "steps",
)


class SessionError(WorkbenchError):
    """A session file that cannot be read or written, with one line saying what and where.

    `where` is the JSON path at fault (e.g. `operations[2].declaration`) when
    the fault is inside the file's data, otherwise None.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where


@dataclass
class OperationEntry:
    """One declared operation: its name, its declaration line, free-text notes (Markdown).

    With `name_automatic` the name is made from the declaration
    (`workbench.naming.automatic_name`) and follows every edit of it, until
    the user renames the operation.
    """

    name: str
    declaration: str
    notes: str = ""
    name_automatic: bool = False

    @classmethod
    def automatic(cls, declaration: str, notes: str = "") -> "OperationEntry":
        """An operation named after its declaration."""
        entry = cls("", declaration, notes, name_automatic=True)
        entry.follow_declaration()
        return entry

    def follow_declaration(self) -> bool:
        """With an automatic name, make the name from the declaration again; True when it changed.

        A declaration that does not parse keeps the last name (the one its valid form had).
        """
        if not self.name_automatic:
            return False
        name = automatic_name(self.declaration)
        if name is None or name == self.name:
            return False
        self.name = name
        return True


@dataclass
class StepEntry:
    """A named step: operations on streams with dependencies, in the step text form (workbench/steps.py)."""

    name: str
    text: str


@dataclass
class Settings:
    """How figures are counted and shown."""

    convention: str = "fma2"  # "fma2" or "mac"
    overlap: float = 1.0  # fraction f of the shorter bound hidden: 1 full, 0 none
    binary: bool = False  # bytes in MiB/GiB instead of MB/GB


@dataclass
class DeviceChoice:
    """The device the bounds use: a catalogue key (or nvml-N) and rate overrides on top of it.

    `overrides` maps a path (or "hbm") to a Rate whose source is measured or entered.
    `latencies` holds measured or entered latencies by interface ("hbm") and load ("idle", "loaded"), which
    the memory-level-parallelism term uses in place of the catalogue's.
    `detected` keeps what NVML reported about the GPU the session was made on
    (`DetectedGPU.to_dict()`), so an nvml-N device that is not in the catalogue
    still resolves on a machine without that GPU.
    """

    key: str = DEFAULT_DEVICE
    overrides: dict[str, Rate] = field(default_factory=dict)
    detected: dict[str, Any] | None = None
    # Latencies measured (calibration) or entered, by interface and load: {"hbm": {"idle": Latency, ...}}.
    latencies: dict[str, dict[str, Latency]] = field(default_factory=dict)

    def resolve(self, detected: Device | None = None) -> Device:
        """The Device with overrides applied; `detected` stands in for an nvml-N key."""
        if detected is not None and detected.key == self.key:
            base = detected
        elif self.key.startswith(NVML_KEY_PREFIX) and self.detected is not None:
            base = device_from_detected_facts(self.detected)
        else:
            base = find_device(self.key)
        device = base
        for path, rate in self.overrides.items():
            device = device.with_rate(path, rate.value, rate.source, rate.citation)
        for interface, loads in self.latencies.items():
            for load, latency in loads.items():
                device = device.with_latency(interface, load, latency.seconds, latency.origin, latency.citation)
        return device


@dataclass
class Session:
    """Everything a user saves and shares."""

    operations: list[OperationEntry] = field(default_factory=list)
    device: DeviceChoice = field(default_factory=DeviceChoice)
    settings: Settings = field(default_factory=Settings)
    runs: list[dict[str, Any]] = field(default_factory=list)  # measurement run records
    profiles: list[dict[str, Any]] = field(default_factory=list)  # imported profiler kernels
    steps: list[StepEntry] = field(default_factory=list)  # steps: timelines of several operations
    title: str = ""
    description: str = ""  # what the session is for (examples explain themselves here)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown top-level keys, kept verbatim

    def analyze(self, entry: OperationEntry, device: Device | None = None) -> Analysis:
        """The analysis of one entry under this session's device and settings (as far as the device's rates go:
        `analyze_partial`)."""
        return analyze_partial(
            entry.declaration,
            device if device is not None else self.device.resolve(),
            convention=self.settings.convention,
            overlap=self.settings.overlap,
            binary=self.settings.binary,
        )

    def analyze_all(self, device: Device | None = None) -> list[Analysis | WorkbenchError]:
        """Each entry's analysis, or the error that stops it (one bad entry does not hide the rest)."""
        if device is None:
            try:
                device = self.device.resolve()
            except WorkbenchError as exc:
                return [exc for _ in self.operations]
        results: list[Analysis | WorkbenchError] = []
        for entry in self.operations:
            try:
                results.append(self.analyze(entry, device))
            except WorkbenchError as exc:
                results.append(exc)
        return results

    def figure_context(self, device: Device | None = None) -> "FigureContext":
        """What run figures depend on in this session: its convention, overlap, and the device it shows."""
        from workbench.runs import FigureContext

        if device is None:
            try:
                device = self.device.resolve()
            except WorkbenchError:
                device = None
        return FigureContext(self.settings.convention, self.settings.overlap, device, self.settings.binary)

    def run_figures(self, device: Device | None = None) -> "list[RunFigures]":
        """Every run's figures (`workbench.runs.run_figures`), each on the device it ran on."""
        from workbench.runs import all_run_figures

        return all_run_figures(self.runs, self.figure_context(device))

    def runs_for(self, entry: OperationEntry) -> list[dict[str, Any]]:
        """The measurement runs whose declaration is this entry's (compared in canonical form)."""
        wanted = canonical_declaration(entry.declaration)
        if wanted is None:
            return []
        return [run for run in self.runs if canonical_declaration(run.get("declaration")) == wanted]


def snapshot(session: Session) -> Session:
    """A copy of `session` that later edits of it do not reach, cheap enough to take on every save.

    What the window edits in place (operation entries, settings, the device
    choice, steps) is copied; run and profile dicts are shared, since they are
    replaced and never edited in place (`workbench.runs.read_runs`), so a
    session of thousands of runs costs a copy of two lists of references.
    """
    return Session(
        operations=[dataclasses.replace(entry) for entry in session.operations],
        device=copy.deepcopy(session.device),
        settings=dataclasses.replace(session.settings),
        runs=list(session.runs),
        profiles=list(session.profiles),
        steps=[dataclasses.replace(step) for step in session.steps],
        title=session.title,
        description=session.description,
        extra=dict(session.extra),  # unknown keys, kept verbatim and never edited
    )


def same_session(a: Session, b: Session) -> bool:
    """Whether two sessions hold the same data (a document against what a save wrote of it): parts compared by
    value, runs and profiles by identity (their dicts are replaced, never edited in place), so a session of
    thousands of runs is compared in a blink."""
    return (
        a.operations == b.operations
        and a.device == b.device
        and a.settings == b.settings
        and a.steps == b.steps
        and a.title == b.title
        and a.description == b.description
        and a.extra == b.extra
        and len(a.runs) == len(b.runs)
        and all(x is y for x, y in zip(a.runs, b.runs))
        and len(a.profiles) == len(b.profiles)
        and all(x is y for x, y in zip(a.profiles, b.profiles))
    )


def canonical_declaration(text: Any) -> str | None:
    """The canonical form of a declaration line, or None when it is not one."""
    if not isinstance(text, str):
        return None
    try:
        return str(parse(text))
    except WorkbenchError:
        return None


def device_from_detected_facts(facts: Mapping[str, Any]) -> Device:
    """Rebuild the Device for a GPU from the NVML facts a session kept (`DetectedGPU.to_dict()`)."""
    from workbench.devices.nvml import DetectedGPU, device_for

    def optional_int(key: str) -> int | None:
        value = facts.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    name = facts.get("name")
    memory = optional_int("memory_total_bytes")
    if not isinstance(name, str) or not name or memory is None:
        raise SessionError("the detected GPU needs at least a name and memory_total_bytes", "device.detected")
    gpu = DetectedGPU(
        index=optional_int("index") or 0,
        name=name,
        memory_total=memory,
        memory_free=optional_int("memory_free_bytes") or memory,
        sm_clock_max_mhz=optional_int("sm_clock_max_mhz"),
        memory_clock_max_mhz=optional_int("memory_clock_max_mhz"),
        bus_width_bits=optional_int("bus_width_bits"),
        compute_capability=str(facts.get("compute_capability") or ""),
        driver_version=str(facts.get("driver_version") or ""),
        cuda_driver_version=str(facts.get("cuda_driver_version") or ""),
        l2_bytes=optional_int("l2_bytes"),
    )
    return device_for(gpu)


# ---------------------------------------------------------------- writing


def session_to_dict(session: Session, include_derived: bool = True, device: Device | None = None) -> dict[str, Any]:
    """The file's data for a session; with `include_derived`, the recomputed figures beside it.

    `device` is the session's device as a caller already resolved it (the
    window's, whose run figures are cached); without it, it is resolved here.
    """
    device_data: dict[str, Any] = {"key": session.device.key}
    resolved: Device | None = device
    resolve_error: str | None = None
    if resolved is None:
        try:
            resolved = session.device.resolve()
        except WorkbenchError as exc:
            resolve_error = str(exc)
    if include_derived and resolved is not None:
        device_data["name"] = resolved.name
    device_data["overrides"] = {
        path: _rate_to_dict(rate) for path, rate in sorted(session.device.overrides.items())
    }
    device_data["detected"] = _plain_json(session.device.detected, "device.detected")
    if session.device.latencies:  # written only when there are any: other sessions stay as they were
        device_data["latencies"] = {
            interface: {load: _latency_to_dict(latency) for load, latency in sorted(loads.items())}
            for interface, loads in sorted(session.device.latencies.items())
        }
    if include_derived:
        if resolved is not None:
            device_data["rates_in_use"] = {
                key: _rate_to_dict(rate)
                for key in [*resolved.paths(), BANDWIDTH]
                if (rate := _rate_in_use(resolved, key)) is not None
            }
        else:
            device_data["rates_in_use"] = {"error": resolve_error}

    operations = []
    analyses = session.analyze_all(resolved) if include_derived and resolved is not None else None
    for index, entry in enumerate(session.operations):
        item: dict[str, Any] = {
            "name": entry.name,
            "name_automatic": entry.name_automatic,
            "declaration": entry.declaration,
            "notes": entry.notes,
        }
        if include_derived:
            result = analyses[index] if analyses is not None else SessionError(resolve_error or "no device")
            item["derived"] = _derived_figures(result, session.settings.binary)
        operations.append(item)

    data: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    if include_derived:
        data["generator"] = GENERATOR
        data["about_derived"] = DERIVED_NOTE
    data["title"] = session.title
    data["description"] = session.description
    data["device"] = device_data
    data["settings"] = {
        "convention": session.settings.convention,
        "overlap": float(session.settings.overlap),
        "binary": bool(session.settings.binary),
    }
    data["operations"] = operations
    data["runs"] = [_plain_json(run, f"runs[{i}]") for i, run in enumerate(session.runs)]
    if include_derived:
        _add_run_figures(session, resolved, data["runs"])
    data["profiles"] = [_plain_json(record, f"profiles[{i}]") for i, record in enumerate(session.profiles)]
    if session.steps:
        data["steps"] = [{"name": step.name, "text": step.text} for step in session.steps]
    for key, value in session.extra.items():
        if key not in data:
            data[key] = _plain_json(value, key)
    return data


def dumps(session: Session) -> str:
    """The session file's text: stable key order and indentation (compact when large), so the same session gives
    the same bytes."""
    return encode_session(session).decode("utf-8")


def format_json(data: Any) -> str:
    """JSON indented by two spaces, except that an array of plain values stays on one line.

    Raw timing samples are long arrays of numbers: one line each keeps a
    session readable and its file several times smaller than one number a line.
    """
    try:
        return _format_value(data, "") + "\n"
    except (TypeError, ValueError) as exc:  # _plain_json should have caught these; say so plainly
        raise SessionError(f"the session holds data that is not plain JSON ({exc})") from None


def _format_value(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{inner}{json.dumps(str(key), ensure_ascii=False)}: {_format_value(item, inner)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if not any(isinstance(item, (dict, list)) for item in value):
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        return "[\n" + ",\n".join(inner + _format_value(item, inner) for item in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


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
    (`workbench.session_sync`).
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

    Run dicts are replaced, never edited in place (`workbench.runs.read_runs`):
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
    from workbench.runs import DERIVED_KEY

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


def _rate_to_dict(rate: Rate) -> dict[str, Any]:
    return {"value": float(rate.value), "source": rate.source, "citation": rate.citation}


def _latency_to_dict(latency: Latency) -> dict[str, Any]:
    return {"seconds": float(latency.seconds), "origin": latency.origin, "citation": latency.citation}


def _rate_in_use(device: Device, key: str) -> Rate | None:
    return device.overrides.get(key) or device.peak.get(key)


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _derived_figures(result: Analysis | WorkbenchError, binary: bool) -> dict[str, Any]:
    """The figures a reader without the app wants, for one operation (or why there are none)."""
    if isinstance(result, WorkbenchError):
        return {"error": str(result)}
    a = result
    return {
        "canonical": str(a.declaration),
        "convention": a.convention,
        "flop": a.flop,
        "bytes": a.bytes,
        "intensity_flop_per_byte": _finite_or_none(a.intensity) if a.bytes else None,
        "path": a.path,
        "compute_rate_flop_per_s": a.compute_rate.value if a.compute_rate else None,
        "bandwidth_byte_per_s": a.bandwidth.value if a.bandwidth else None,
        "compute_time_s": a.compute_time,
        "memory_time_s": a.memory_time,
        "bound_time_full_overlap_s": a.bound_full_overlap,
        "bound_time_no_overlap_s": a.bound_no_overlap,
        "bound_time_s": a.bound_time,
        "limiter": a.limiter,
        **({"error": a.missing_rate} if a.missing_rate is not None else {}),
        "summary": a.limiter_sentence(),
        "derivation": [step.as_text() for step in a.steps],
    }


def _run_figures_by_index(session: Session, device: Device | None) -> "dict[int, RunFigures]":
    from workbench.runs import all_run_figures

    return {item.index: item for item in all_run_figures(session.runs, session.figure_context(device))}


def _add_run_figures(session: Session, device: Device | None, runs: list[Any]) -> None:
    """Beside each stored run, its figures for readers without the app (the app recomputes and ignores them)."""
    from workbench.runs import DERIVED_KEY

    by_index = _run_figures_by_index(session, device)
    for index, run in enumerate(runs):
        if isinstance(run, dict) and index in by_index:
            run[DERIVED_KEY] = _plain_json(by_index[index].to_dict(), f"runs[{index}].{DERIVED_KEY}")


def _plain_json(value: Any, where: str) -> Any:
    """`value` as plain JSON data: numpy scalars and arrays become numbers and lists, NaN/∞ become null.

    Anything else that JSON cannot hold raises SessionError naming where it is.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): _plain_json(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        plain: list[Any] = []
        for index, item in enumerate(value):  # long sample arrays: no recursion for plain numbers
            kind = type(item)
            if kind is float:
                plain.append(item if math.isfinite(item) else None)
            elif kind is int or kind is str or kind is bool or item is None:
                plain.append(item)
            else:
                plain.append(_plain_json(item, f"{where}[{index}]"))
        return plain
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays, without importing numpy
    if callable(tolist):
        return _plain_json(tolist(), where)
    raise SessionError(f"a {type(value).__name__} cannot be saved in a session file", where)


# ---------------------------------------------------------------- reading


_FLOAT_LIMIT_BITS = 1000  # integers longer than this are checked against the float range


def check_file_data(data: Any, where: str = "", depth: int = 1) -> None:
    """Refuse data no reader of the file can handle, naming where: nesting deeper than MAX_NESTING,
    text with a lone surrogate (not Unicode, cannot be written as UTF-8), integers beyond a double.

    A colleague's file may hold a list nested 900 deep in a run's conditions
    or `"\\udcff"` in its title: json parses both, but every later step
    (reports, saving, autosave) would fail with Python's own exceptions. The
    walk is iterative, so it cannot exhaust the stack itself. `depth` is the
    level `data` sits at in the file (1: the file's top object; a run is at 3).
    """
    pending: list[tuple[Any, str, int]] = [(data, where, depth)]
    while pending:
        value, place, depth = pending.pop()
        if isinstance(value, dict):
            if depth > MAX_NESTING:
                raise SessionError(f"nested more than {MAX_NESTING} levels deep", _short_place(place))
            for key, item in value.items():
                _check_text(key, place, key=True)
                inner = f"{place}.{key}" if place else str(key)
                if isinstance(item, (dict, list)):
                    pending.append((item, inner, depth + 1))
                else:
                    _check_scalar(item, inner)
        elif isinstance(value, list):
            if depth > MAX_NESTING:
                raise SessionError(f"nested more than {MAX_NESTING} levels deep", _short_place(place))
            for index, item in enumerate(value):
                if isinstance(item, (dict, list)):
                    pending.append((item, f"{place}[{index}]", depth + 1))
                elif type(item) is not float:  # long arrays of samples: plain floats need no check
                    _check_scalar(item, f"{place}[{index}]")
        else:
            _check_scalar(value, place)


def _short_place(place: str, limit: int = 60) -> str | None:
    """A JSON path cut to `limit` characters: sixty levels of [0][0]... say nothing more than ten do."""
    if not place:
        return None
    return place if len(place) <= limit else place[:limit] + "…"


def _check_scalar(value: Any, where: str) -> None:
    if isinstance(value, str):
        _check_text(value, where)
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _FLOAT_LIMIT_BITS:
        try:
            float(value)
        except OverflowError:
            digits = len(str(abs(value)))
            raise SessionError(
                f"a number of {digits} digits; numbers in a session file must fit a double (up to about 1.8e308)",
                where or None,
            ) from None


def _check_text(value: Any, where: str, key: bool = False) -> None:
    if not isinstance(value, str):
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        what = "a key" if key else "text"
        raise SessionError(
            f"{what} holding a lone surrogate (U+{ord(bad):04X}), which is not Unicode and cannot be saved as UTF-8",
            where or None,
        ) from None



def load(path: str | os.PathLike[str]) -> Session:
    """Read and validate a session file; any fault raises SessionError with one line naming it."""
    return load_keeping_bytes(path)[0]


def load_keeping_bytes(path: str | os.PathLike[str]) -> tuple[Session, bytes]:
    """`load`, and the bytes the session was read from (a writer compares them with the file before it saves)."""
    data = read_session_bytes(path)
    return loads_named(data, path), data


def read_session_bytes(path: str | os.PathLike[str]) -> bytes:
    """A session file's bytes, read bounded (SessionError naming the file when it cannot be read)."""
    name = os.fspath(path)
    try:
        return read_bounded(name, MAX_FILE_BYTES, "session file")
    except FileReadError as exc:
        raise SessionError(f"cannot open {name}: {exc}") from None


def loads_named(data: bytes, path: str | os.PathLike[str]) -> Session:
    """`loads` of the bytes read from the file at `path`, its faults named with the file."""
    try:
        return loads(data)
    except SessionError as exc:
        raise SessionError(f"session file {os.fspath(path)}: {exc}") from None


def _size_words(size: int) -> str:
    from workbench.units import format_bytes

    return format_bytes(size, binary=True)


def loads(data: bytes | str) -> Session:
    """Parse a session file's bytes or text (UTF-8, an optional byte-order mark) into a Session."""
    if isinstance(data, bytes):
        if len(data) > MAX_FILE_BYTES:
            raise SessionError(f"{_size_words(len(data))} is over the {_size_words(MAX_FILE_BYTES)} limit for a session file")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SessionError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    else:
        if len(data) > MAX_FILE_BYTES:
            raise SessionError(f"over the {_size_words(MAX_FILE_BYTES)} limit for a session file")
        text = data.removeprefix("\ufeff")
    if not text.strip():
        raise SessionError("the file is empty")
    try:
        parsed = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates)
    except json.JSONDecodeError as exc:
        ends_early = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated")
        truncated = "; the file looks truncated" if ends_early else ""
        raise SessionError(f"not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno}){truncated}") from None
    except RecursionError:
        raise SessionError("not a session file: the JSON is nested too deeply") from None
    except ValueError as exc:  # an integer with thousands of digits, a duplicate key, NaN
        raise SessionError(f"not valid JSON: {exc}") from None
    return session_from_dict(parsed)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key '{key}' appears twice in one object")
        result[key] = value
    return result


# Each migration turns a file's data of version n into version n + 1 (keyed by n).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def migrate(data: dict[str, Any], version: int) -> dict[str, Any]:
    """Bring an older file's data up to VERSION, one step at a time."""
    while version < VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise SessionError(f"no way to read format version {version} (this app reads {VERSION})", "version")
        data = step(dict(data))
        version += 1
        data["version"] = version
    return data


def session_from_dict(data: Any) -> Session:
    """Validate a session file's data and build the Session; derived figures in it are ignored."""
    root = _object(data, "")
    check_file_data(root)
    if "format" not in root:
        raise SessionError('not a Performance Workbench session (no "format" key)')
    if root["format"] != FORMAT:
        raise SessionError(f'not a Performance Workbench session ("format" is {_show(root["format"])})')
    if "version" not in root:
        raise SessionError('the "version" key is missing')
    version = root["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SessionError(f"must be a whole number ≥ 1, not {_show(version)}", "version")
    if version > VERSION:
        raise SessionError(
            f"written by a newer Performance Workbench (format version {version}; this one reads up to "
            f"{VERSION}): update the app to open it"
        )
    root = migrate(root, version)

    settings = _settings(root.get("settings", {}), "settings")
    device = _device(root.get("device", {}), "device")
    operations = [
        _operation(item, f"operations[{i}]") for i, item in enumerate(_array(root.get("operations", []), "operations"))
    ]
    from workbench.runs import stored_run

    runs = [stored_run(_object(item, f"runs[{i}]")) for i, item in enumerate(_array(root.get("runs", []), "runs"))]
    profiles = [
        _object(item, f"profiles[{i}]") for i, item in enumerate(_array(root.get("profiles", []), "profiles"))
    ]
    steps = [_step(item, f"steps[{i}]") for i, item in enumerate(_array(root.get("steps", []), "steps"))]
    extra = {key: value for key, value in root.items() if key not in _TOP_LEVEL_KEYS}
    return Session(
        steps=steps,
        operations=operations,
        device=device,
        settings=settings,
        runs=runs,
        profiles=profiles,
        title=_text(root.get("title", ""), "title"),
        description=_text(root.get("description", ""), "description"),
        extra=extra,
    )


def _settings(value: Any, where: str) -> Settings:
    data = _object(value, where)
    convention = _text(data.get("convention", "fma2"), f"{where}.convention")
    if convention not in CONVENTION_CHOICES:
        raise SessionError(f"must be fma2 or mac, not {_show(convention)}", f"{where}.convention")
    overlap = _number(data.get("overlap", 1.0), f"{where}.overlap")
    if not 0.0 <= overlap <= 1.0:
        raise SessionError(f"must be a fraction from 0 (no overlap) to 1 (full), not {overlap:g}", f"{where}.overlap")
    binary = _boolean(data.get("binary", False), f"{where}.binary")
    return Settings(convention=convention, overlap=overlap, binary=binary)


def _device(value: Any, where: str) -> DeviceChoice:
    data = _object(value, where)
    key = _text(data.get("key", DEFAULT_DEVICE), f"{where}.key")
    detected_value = data.get("detected")
    detected = None if detected_value is None else _object(detected_value, f"{where}.detected")
    overrides: dict[str, Rate] = {}
    for path, rate_value in _object(data.get("overrides", {}), f"{where}.overrides").items():
        rate_where = f"{where}.overrides.{path}"
        if path not in PATHS and path != BANDWIDTH and not known_rate_key(path):
            allowed = ", ".join((*PATHS, BANDWIDTH, *interface_keys(), "link:KEY"))
            raise SessionError(f"'{path}' is not a rate this app knows (allowed: {allowed})", rate_where)
        overrides[path] = _rate(rate_value, rate_where)
    latencies = _latencies(data.get("latencies", {}), f"{where}.latencies")
    choice = DeviceChoice(key=key, overrides=overrides, detected=detected, latencies=latencies)
    try:
        choice.resolve()
    except SessionError:
        raise
    except WorkbenchError as exc:
        where_key = f"{where}.key" if not key.startswith(NVML_KEY_PREFIX) else f"{where}.detected"
        if key.startswith(NVML_KEY_PREFIX) and detected is None:
            raise SessionError(f"'{key}' is a detected GPU but the file keeps no facts about it", where_key) from None
        raise SessionError(str(exc), where_key) from None
    return choice


def _latencies(value: Any, where: str) -> dict[str, dict[str, Latency]]:
    """`device.latencies`: {interface: {load: {seconds, origin, citation}}}, each figure checked."""
    latencies: dict[str, dict[str, Latency]] = {}
    for interface, loads in _object(value, where).items():
        if interface not in interface_keys():
            raise SessionError(f"{_show(interface)} is not an interface this app knows ({', '.join(interface_keys())})", where)
        for load, item in _object(loads, f"{where}.{interface}").items():
            here = f"{where}.{interface}.{load}"
            if load not in LATENCY_LOADS:
                raise SessionError(f"a latency is {' or '.join(LATENCY_LOADS)}, not {_show(load)}", here)
            data = _object(item, here)
            seconds = _number(data.get("seconds"), f"{here}.seconds")
            if not MIN_LATENCY_S <= seconds <= MAX_LATENCY_S:
                raise SessionError(f"must be from {MIN_LATENCY_S:g} s to {MAX_LATENCY_S:g} s, not {seconds:g}", f"{here}.seconds")
            origin = _text(data.get("origin", ENTERED), f"{here}.origin")
            if origin not in (MEASURED, ENTERED):
                raise SessionError(f"must be {MEASURED} or {ENTERED}, not {_show(origin)}", f"{here}.origin")
            citation = _text(data.get("citation", ""), f"{here}.citation")
            latencies.setdefault(interface, {})[load] = Latency(seconds, origin, citation)
    return latencies


def _rate(value: Any, where: str) -> Rate:
    data = _object(value, where)
    if "value" not in data:
        raise SessionError("a rate needs a value (FLOP/s or B/s)", where)
    number = _number(data["value"], f"{where}.value")
    if not number > 0:
        raise SessionError(f"must be a positive rate, not {number:g}", f"{where}.value")
    problem = rate_problem(number)
    if problem is not None:
        raise SessionError(problem, f"{where}.value")
    source = _text(data.get("source", "entered"), f"{where}.source")
    if source not in SOURCES:
        raise SessionError(f"must be one of {', '.join(SOURCES)}, not {_show(source)}", f"{where}.source")
    citation = _text(data.get("citation", ""), f"{where}.citation")
    return Rate(number, source, citation)


def _operation(value: Any, where: str) -> OperationEntry:
    data = _object(value, where)
    if "declaration" not in data:
        raise SessionError("an operation needs a declaration line", where)
    declaration = _text(data["declaration"], f"{where}.declaration")
    try:
        parse(declaration)
    except WorkbenchError as exc:
        raise SessionError(str(exc), f"{where}.declaration") from None
    name = _text(data.get("name", ""), f"{where}.name")
    notes = _text(data.get("notes", ""), f"{where}.notes")
    if "name_automatic" in data:
        automatic = data["name_automatic"]
        if not isinstance(automatic, bool):
            raise SessionError(f"must be true or false, not {_kind(automatic)}", f"{where}.name_automatic")
    else:
        automatic = _name_was_automatic(name, declaration)
    derived = data.get("derived")
    if derived is not None:
        _object(derived, f"{where}.derived")  # kept for readers; its figures are never trusted
    entry = OperationEntry(name=name, declaration=declaration, notes=notes, name_automatic=automatic)
    entry.follow_declaration()
    return entry


def _name_was_automatic(name: str, declaration: str) -> bool:
    """For a file written before names followed declarations: is this name the app's rather than the user's?

    Empty, one the app gave ("new operation 2", "gemm 4096³ fp16"), or the
    automatic name of its declaration up to letter case ("Vector add, 2^24 FP32").
    """
    if not name.strip() or is_legacy_default(name):
        return True
    derived = automatic_name(declaration)
    return derived is not None and derived.casefold() == name.strip().casefold()


def _step(value: Any, where: str) -> StepEntry:
    """A stored step: a name and a step text that must parse (the error names the step's line)."""
    from workbench.steps import parse_step

    data = _object(value, where)
    if "text" not in data:
        raise SessionError("a step needs its text (name = declaration [on stream] [after a, b] lines)", where)
    text = _text(data["text"], f"{where}.text")
    try:
        parse_step(text)
    except WorkbenchError as exc:
        raise SessionError(str(exc), f"{where}.text") from None
    return StepEntry(name=_text(data.get("name", ""), f"{where}.name"), text=text)


_JSON_TYPE_NAMES = {dict: "an object", list: "an array", str: "text", bool: "true/false", type(None): "null"}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return json.dumps(shown, ensure_ascii=False)
    if isinstance(value, (dict, list)):
        return _kind(value)
    return json.dumps(value)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SessionError(f"expected an object, found {_kind(value)}", where or None)
    return value


def _array(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise SessionError(f"expected an array, found {_kind(value)}", where)
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise SessionError(f"expected text, found {_kind(value)}", where)
    return value


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise SessionError(f"expected true or false, found {_kind(value)}", where)
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SessionError(f"expected a number, found {_kind(value)}", where)
    try:
        number = float(value)
    except OverflowError:
        raise SessionError("the number is too large", where) from None
    if not math.isfinite(number):
        raise SessionError("the number is too large", where)
    return number
