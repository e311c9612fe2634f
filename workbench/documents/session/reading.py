"""Reading a session file: bounded reads, JSON parsed without executing anything, the data checked against
the format (every fault one `SessionError` naming where it is), migrations from older versions."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Callable

from workbench.model.devices import BANDWIDTH, PATHS, Rate
from workbench.model.devices.catalogue import (
    ENTERED,
    LATENCY_LOADS,
    MAX_LATENCY_S,
    MEASURED,
    MIN_LATENCY_S,
    SOURCES,
    Latency,
    rate_problem,
)
from workbench.model.devices.interfaces import interface_keys
from workbench.model.devices.links import known_rate_key
from workbench.errors import WorkbenchError
# (at the top, not in the functions that read each operation: an import inside a function runs on every call, and
# under Qt's import hook costs tens of microseconds: three per operation when a session of thousands opens)
from workbench.model.declare import parse
from workbench.model.naming import automatic_name, is_legacy_default
from workbench.files import FileReadError, read_bounded
from workbench.documents.session.model import (
    CONVENTION_CHOICES,
    DEFAULT_DEVICE,
    FORMAT,
    MAX_FILE_BYTES,
    MAX_NESTING,
    NVML_KEY_PREFIX,
    VERSION,
    _TOP_LEVEL_KEYS,
    DeviceChoice,
    OperationEntry,
    Session,
    SessionError,
    Settings,
    StepEntry,
)

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
    from workbench.model.units import format_bytes

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
    from workbench.measure.runs import stored_run

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
