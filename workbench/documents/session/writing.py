"""A session as the file's data (`session_to_dict`, with the figures derived for readers without the app) and
that data as JSON text (`format_json`)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Mapping

from workbench.model.analysis import Analysis
from workbench.model.devices import BANDWIDTH, Device, Rate
from workbench.errors import WorkbenchError
from workbench.records import to_plain
from workbench.documents.session.model import DERIVED_NOTE, FORMAT, GENERATOR, VERSION, Session, SessionError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.measure.runs import RunFigures


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
    device_data["overrides"] = {path: to_plain(rate) for path, rate in sorted(session.device.overrides.items())}
    device_data["detected"] = _plain_json(session.device.detected, "device.detected")
    if session.device.latencies:  # written only when there are any: other sessions stay as they were
        device_data["latencies"] = {
            interface: {load: to_plain(latency) for load, latency in sorted(loads.items())}
            for interface, loads in sorted(session.device.latencies.items())
        }
    if include_derived:
        if resolved is not None:
            device_data["rates_in_use"] = {
                key: to_plain(rate)
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
    data["settings"] = to_plain(session.settings)
    data["operations"] = operations
    data["runs"] = [_plain_json(run, f"runs[{i}]") for i, run in enumerate(session.runs)]
    if include_derived:
        _add_run_figures(session, resolved, data["runs"])
    data["profiles"] = [_plain_json(record, f"profiles[{i}]") for i, record in enumerate(session.profiles)]
    if session.steps:
        data["steps"] = to_plain(session.steps)
    for key, value in session.extra.items():
        if key not in data:
            data[key] = _plain_json(value, key)
    return data


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
    from workbench.measure.runs import all_run_figures

    return {item.index: item for item in all_run_figures(session.runs, session.figure_context(device))}


def _add_run_figures(session: Session, device: Device | None, runs: list[Any]) -> None:
    """Beside each stored run, its figures for readers without the app (the app recomputes and ignores them)."""
    from workbench.measure.runs import DERIVED_KEY

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
