"""Devices side by side: the same operations bounded on several devices.

Each cell is the ordinary `analyze()` of one operation on one device, so a
comparison says exactly what `workbench calc --device KEY` says for each
device, and the window, the exports and `workbench compare` read the same
figures. A device that cannot bound an operation (no rate for its path, too
little memory) gets the reason in its cell instead of stopping the rest.
A measured time is shown where a run of the operation ran on that device.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from workbench.model.analysis import Analysis, analyze
from workbench.model.devices.catalogue import HOST_CPU_KEY, Device, closest_keys, find_device, match_reported_name
from workbench.errors import DeviceError, WorkbenchError
from workbench.model.units import format_intensity, format_time

if TYPE_CHECKING:
    from workbench.measure.runs import Run
    from workbench.documents.session import Session


@dataclass(frozen=True)
class DeviceBound:
    """One operation on one device: the analysis (bound, limiter, ridge) or why there is none."""

    operation: str  # the entry's name, or the declaration when there is none
    declaration: str
    device: Device
    analysis: Analysis | None
    error: str | None = None
    measured_time_s: float | None = None  # median of the latest valid run on this device
    measured_runs: int = 0  # valid runs of this operation on this device

    @property
    def bound_time_s(self) -> float | None:
        return self.analysis.bound_time if self.analysis else None

    @property
    def percent_of_bound(self) -> float | None:
        """The bound as a percentage of the measured time (100 % = the run reached the bound)."""
        bound = self.bound_time_s
        if bound is None or not self.measured_time_s:
            return None
        return 100.0 * bound / self.measured_time_s

    # by hand: the cell's figures are its analysis's, or its device's where there is none
    def to_dict(self) -> dict[str, Any]:
        """The figures `workbench compare --json` prints; the shared keys equal `workbench calc --json`'s."""
        a = self.analysis
        return {
            "device": a.device_name if a is not None else self.device.name,
            "device_key": self.device.key,
            "operation": self.operation,
            "declaration": self.declaration,
            "path": a.path if a else None,
            "bound_time_s": a.bound_time if a else None,
            "limiter": a.limiter if a else None,
            "compute_time_s": a.compute_time if a else None,
            "memory_time_s": a.memory_time if a else None,
            "ridge_flop_per_byte": a.ridge if a else None,
            "intensity_flop_per_byte": (a.intensity if a.bytes else None) if a else None,
            "compute_rate_flop_per_s": a.compute_rate.value if a and a.compute_rate else None,
            "compute_rate_source": a.compute_rate.source if a and a.compute_rate else None,
            "bandwidth_byte_per_s": a.bandwidth.value if a and a.bandwidth else None,
            "bandwidth_source": a.bandwidth.source if a and a.bandwidth else None,
            "measured_time_s": self.measured_time_s,
            "measured_runs": self.measured_runs,
            "error": self.error,
        }


@dataclass(frozen=True)
class DeviceComparison:
    """Operations (rows) × devices (columns), each cell a DeviceBound."""

    devices: tuple[Device, ...]
    rows: tuple[tuple[DeviceBound, ...], ...]  # one tuple per operation, one cell per device
    convention: str = "fma2"

    @property
    def operations(self) -> list[str]:
        return [row[0].operation for row in self.rows if row]

    def cells(self) -> Iterable[DeviceBound]:
        for row in self.rows:
            yield from row

    # by hand: a list of its cells' dicts, not a mapping
    def to_dict(self) -> list[dict[str, Any]]:
        return [cell.to_dict() for cell in self.cells()]

    def fastest(self, row: int) -> list[int]:
        """The columns with the shortest bound for one operation (ties within 0.1 % all count); [] if none has one."""
        times = [(cell.bound_time_s, column) for column, cell in enumerate(self.rows[row]) if cell.bound_time_s is not None]
        if not times:
            return []
        best = min(time for time, _ in times)
        return [column for time, column in times if time <= best * 1.001]


# -- choosing devices ---------------------------------------------------------------


def split_keys(keys: str | Sequence[str]) -> list[str]:
    """'h100-sxm, a100-sxm-80gb' or a list → the keys, stripped, in order, each once."""
    parts = keys.split(",") if isinstance(keys, str) else [part for key in keys for part in str(key).split(",")]
    seen: list[str] = []
    for part in (p.strip() for p in parts):
        if part and part not in seen:
            seen.append(part)
    return seen


def resolve_devices(keys: str | Sequence[str], known: Mapping[str, Device] | None = None) -> list[Device]:
    """The devices named by keys (catalogue, "host-cpu", or `known` ones such as detected GPUs), each once.

    Every unknown key is named in one DeviceError, with the closest keys.
    """
    wanted = split_keys(keys)
    if not wanted:
        raise DeviceError("no devices to compare; give keys such as h100-sxm,a100-sxm-80gb (see `workbench devices`)")
    devices: list[Device] = []
    unknown: list[str] = []
    for key in wanted:
        try:
            device = known[key] if known and key in known else find_device(key)
        except DeviceError:
            unknown.append(key)
            continue
        if all(_device_identity(device) != _device_identity(chosen) for chosen in devices):
            devices.append(device)  # "h100" and "h100-sxm" are one device: one column
    if unknown:
        hints = [f"{key} → {' or '.join(near)}" for key in unknown if (near := closest_keys(key))]
        hint = f" (did you mean: {'; '.join(hints)})" if hints else ""
        names = ", ".join(f"'{key}'" for key in unknown)
        raise DeviceError(f"unknown device{'s' if len(unknown) > 1 else ''} {names}{hint}; see `workbench devices`")
    return devices


# -- runs on a device -------------------------------------------------------------------


def _host_model(host: Device) -> str:
    return host.name.removeprefix("This machine: ").split(" (")[0]


def run_device_keys(run: "Run", host: Device | None = None) -> set[str]:
    """The keys of the devices a run counts as measured on (empty when nothing says where it ran).

    A GPU run: the catalogue entry its provenance recorded, else the GPU it
    names (with its memory size) matched afresh, else the GPU named in the
    device text older runs keep ("GPU 0: NVIDIA H100 80GB HBM3 (...)"). A CPU
    run: the entry its provenance recorded, and "host-cpu" when the CPU it
    names is this machine's.
    """
    from workbench.model.devices.provenance import CPU

    provenance = run.provenance
    keys: set[str] = set()
    if provenance.catalogue_key:
        keys.add(provenance.catalogue_key)
    head, _, rest = run.where.partition(":")
    described = rest.strip().split(" (")[0].strip() if rest else ""
    is_cpu = provenance.kind == CPU or head.strip().upper() == "CPU"
    if is_cpu:
        if host is None:
            from workbench.model.devices.host import host_device

            host = host_device()
        named = provenance.name or described
        if named and named == _host_model(host):
            keys.add(HOST_CPU_KEY)
        return keys
    if not keys:
        found = None
        if provenance.name:
            found = match_reported_name(provenance.name, provenance.memory_bytes)
        elif described:
            found = match_reported_name(described)
        if found is not None:
            keys.add(found.key)
    return keys


def measured_on(runs: Sequence["Run"], device: Device, host: Device | None = None) -> tuple[float | None, int]:
    """(median of the raw samples of the latest usable run on `device`, number of usable runs on it).

    Usable: finished with its reference check passed, or an older run that
    does not say (unchecked); failed and cancelled runs are left out.
    """
    from workbench.measure.stats import summarize
    from workbench.measure.runs import OK, UNCHECKED

    latest: float | None = None
    count = 0
    for run in runs:
        if run.status not in (OK, UNCHECKED) or not run.samples_s:
            continue
        if device.key not in run_device_keys(run, host):
            continue
        latest = summarize(run.samples_s).median_s
        count += 1
    return latest, count


# -- comparing ---------------------------------------------------------------------------


AnalysisCache = dict  # (declaration, device identity, convention, overlap, binary) -> DeviceBound without runs
_CACHE_LIMIT = 4096


def _device_identity(device: Device) -> tuple[Any, ...]:
    """What makes two Device values bound alike: catalogue identity, detected facts, and every override."""
    overrides = tuple(sorted((path, rate.value, rate.source) for path, rate in device.overrides.items()))
    return (device.key, device.name, device.memory_bytes, device.l2_bytes, overrides)


def _cell(
    operation: str,
    declaration: str,
    device: Device,
    convention: str,
    overlap: Any,
    binary: bool,
    cache: AnalysisCache | None = None,
) -> DeviceBound:
    key = (declaration, _device_identity(device), convention, overlap, binary) if cache is not None else None
    if cache is not None and key in cache:
        cached: DeviceBound = cache[key]
        return DeviceBound(operation, declaration, device, cached.analysis, cached.error)
    try:
        analysis = analyze(declaration, device=device, convention=convention, overlap=overlap, binary=binary)
        cell = DeviceBound(operation, declaration, device, analysis)
        if analysis.bound_time is None:
            cell = DeviceBound(operation, declaration, device, analysis, "no bound: the device lacks a rate or a bandwidth")
    except WorkbenchError as exc:
        cell = DeviceBound(operation, declaration, device, None, str(exc))
    if cache is not None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = cell
    return cell


def compare_declaration(
    declaration: str,
    devices: Sequence[Device],
    convention: str = "fma2",
    overlap: Any = "full",
    binary: bool = False,
) -> DeviceComparison:
    """One declaration bounded on each device (a bad declaration raises, as `calc` does)."""
    from workbench.model.analysis import resolve_setting
    from workbench.model.declare import parse

    canonical = str(parse(declaration))  # a syntax error is the user's, once, not one per device
    resolve_setting(None, None, None, convention, overlap)  # a bad convention or overlap refused as calc refuses it
    row = tuple(_cell(canonical, canonical, device, convention, overlap, binary) for device in devices)
    return DeviceComparison(tuple(devices), (row,), convention)


def compare_session(
    session: "Session", devices: Sequence[Device], host: Device | None = None, cache: AnalysisCache | None = None
) -> DeviceComparison:
    """The session's operations × devices under its settings, with measured times where runs exist.

    `cache` (a dict the caller keeps) reuses the analyses of unchanged operations on unchanged devices.
    """
    from workbench.measure.runs import read_runs
    from workbench.documents.session import canonical_declaration

    settings = session.settings
    runs = read_runs(session.runs)
    rows = []
    for entry in session.operations:
        wanted = canonical_declaration(entry.declaration)
        entry_runs = [run for run in runs if wanted is not None and run.declaration is not None and str(run.declaration) == wanted]
        row = []
        for device in devices:
            cell = _cell(
                entry.name or entry.declaration, entry.declaration, device, settings.convention, settings.overlap, settings.binary, cache
            )
            measured, count = measured_on(entry_runs, device, host)
            row.append(DeviceBound(cell.operation, cell.declaration, device, cell.analysis, cell.error, measured, count))
        rows.append(tuple(row))
    return DeviceComparison(tuple(devices), tuple(rows), settings.convention)


# -- the roofs, for an overlaid plot -------------------------------------------------


def roofline_points(device: Device, path: str, low: float, high: float) -> list[tuple[float, float]]:
    """The roofline of one path as (intensity FLOP/B, attainable FLOP/s) corners from `low` to `high`.

    Attainable = min(compute roof, intensity × bandwidth): a slope up to the
    ridge, then flat. Raises DeviceError when the device has no rate or bandwidth.
    """
    if not (0 < low < high):
        raise ValueError("the intensity range must be positive and increasing")
    roof = device.rate(path).value
    bandwidth = device.bandwidth.value
    ridge = roof / bandwidth
    points = [(low, min(roof, low * bandwidth))]
    if low < ridge < high:
        points.append((ridge, roof))
    points.append((high, min(roof, high * bandwidth)))
    return points


# -- exports ----------------------------------------------------------------------------

EXPORT_COLUMNS = (
    "operation",
    "declaration",
    "device_key",
    "device",
    "path",
    "bound_time_s",
    "limiter",
    "compute_time_s",
    "memory_time_s",
    "ridge_flop_per_byte",
    "intensity_flop_per_byte",
    "measured_time_s",
    "measured_runs",
    "error",
)


def comparison_csv(comparison: DeviceComparison) -> str:
    """One line per operation and device, seconds and FLOP/B as plain numbers."""
    from workbench.documents.report import CSV_LINE_END, spreadsheet_text  # names come from shared sessions: untrusted

    out = io.StringIO()
    writer = csv.writer(out, lineterminator=CSV_LINE_END)
    writer.writerow(EXPORT_COLUMNS)
    for cell in comparison.cells():
        data = cell.to_dict()
        writer.writerow(
            ["" if (value := data[column]) is None else spreadsheet_text(value) if isinstance(value, str) else value
             for column in EXPORT_COLUMNS]
        )
    return out.getvalue()


def limiter_text(analysis: Analysis, path_name: "Callable[[str], str] | None" = None) -> str:
    """The limiter and what it is: 'compute (fp16_tc)', 'memory (HBM)', 'link (NVLink 4)'.

    One place for the Compare tab, its Markdown and terminal tables and the
    reports; `path_name` shortens the compute path's name where space is short.
    """
    from workbench.model.analysis import COMPUTE, LINK, MEMORY

    a = analysis
    if a.limiter == LINK:  # a collective's link between chips, or the host link of data resident on the host
        limiting = a.term(a.limiter_term) if a.limiter_term else None
        if limiting is not None:
            return f"link ({limiting.title})"
        return f"link ({a.link.link.name})" if a.link is not None else "link"
    if a.limiter == COMPUTE:
        return f"compute ({path_name(a.path) if path_name else a.path})"
    if a.limiter == MEMORY:
        return f"memory ({a.memory_name})"
    return a.limiter or "—"


def _cell_text(cell: DeviceBound) -> str:
    if cell.analysis is None or cell.bound_time_s is None:
        return f"— ({cell.error})" if cell.error else "—"
    a = cell.analysis
    text = f"{format_time(cell.bound_time_s)}, {limiter_text(a)}"
    if cell.measured_time_s is not None:
        text += f"; measured {format_time(cell.measured_time_s)}"
    return text


def _escape(text: str) -> str:
    from workbench.documents.report import markdown_inline  # operation names come from shared sessions: untrusted

    return markdown_inline(text)


def comparison_markdown(comparison: DeviceComparison) -> str:
    """A Markdown table of bounds (rows: operations, columns: devices) and one of ridge points."""
    devices = comparison.devices
    lines = [
        f"Lower-bound times (FLOP convention {comparison.convention}); the limiter follows each time.",
        "",
        "| Operation | " + " | ".join(_escape(d.name) for d in devices) + " |",
        "|---|" + "---|" * len(devices),
    ]
    for row in comparison.rows:
        if not row:
            continue
        lines.append(f"| {_escape(row[0].operation)} | " + " | ".join(_escape(_cell_text(cell)) for cell in row) + " |")
    lines += ["", "| Operation | " + " | ".join(f"Ridge on {_escape(d.key)}" for d in devices) + " |", "|---|" + "---|" * len(devices)]
    for row in comparison.rows:
        if not row:
            continue
        ridges = [format_intensity(cell.analysis.ridge) if cell.analysis and cell.analysis.ridge else "—" for cell in row]
        lines.append(f"| {_escape(row[0].operation)} | " + " | ".join(ridges) + " |")
    lines += ["", "Sources: " + _escape("; ".join(f"{d.key}: {d.source}" for d in devices if d.source))]
    return "\n".join(lines) + "\n"


def comparison_text(comparison: DeviceComparison) -> str:
    """The terminal table of `workbench compare`: one line per device."""
    header = ("device", "bound", "limiter", "compute", "memory", "ridge", "path")
    table = [header]
    reasons: list[str] = []
    for cell in comparison.cells():
        a = cell.analysis
        if a is None or a.bound_time is None:
            table.append((cell.device.key, "—", "no bound", "", "", "", ""))
            reasons.append(f"{cell.device.key}: {cell.error or 'no bound'}")
            continue
        table.append(
            (
                cell.device.key,
                format_time(a.bound_time),
                limiter_text(a) if a.limiter != "compute" else "compute",  # the path has its own column
                format_time(a.compute_time) if a.compute_time is not None else "—",
                format_time(a.memory_time) if a.memory_time is not None else "—",
                format_intensity(a.ridge) if a.ridge else "—",
                a.path,
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]
    first = comparison.rows[0][0] if comparison.rows and comparison.rows[0] else None
    title = [f"{first.declaration}    [{comparison.convention}]"] if first else []
    return "\n".join([*title, *lines, *reasons])
