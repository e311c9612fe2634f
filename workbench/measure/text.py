"""Run records and calibration results as plain text tables (the CLI; copy-and-paste evidence)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from workbench.model.devices.catalogue import BANDWIDTH, PATH_TITLES, Device
from workbench.measure.calibrate import CalibrationResult
from workbench.measure.record import RunRecord
from workbench.model.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_rate,
    format_intensity,
    format_number,
    format_percent,
    format_time,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.measure.runs import RunFigures


def _conditions(values: Mapping[str, Any]) -> str:
    if not values:
        return "not reported"
    labels = {
        "sm_clock_mhz": ("SM", "MHz"),
        "memory_clock_mhz": ("memory", "MHz"),
        "temperature_c": ("", "°C"),
        "power_w": ("", "W"),
        "cpu_clock_mhz_mean": ("mean core clock", "MHz"),
        "load_average_1m": ("load", ""),
    }
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        label, unit = labels.get(key, (key, ""))
        number = f"{value:g}" if isinstance(value, (int, float)) else str(value)
        parts.append(" ".join(p for p in (label, f"{number}{' ' if unit and unit != '°C' else ''}{unit}") if p))
    return ", ".join(parts) or "not reported"


def provenance_text(record: RunRecord) -> str:
    """The device the run ran on, as stated, with the catalogue entry it matched."""
    p = record.provenance
    if p is None:
        return record.device
    parts = [p.label]
    for label, value in (("UUID", p.uuid), ("PCI", p.pci_bus_id), ("driver", p.driver_version), ("CUDA", p.cuda_version)):
        if value:
            parts.append(f"{label} {value}")
    entry = f"catalogue entry {p.catalogue_key}" + (f" (by {p.matched_by})" if p.matched_by else "") if p.catalogue_key else "no catalogue entry"
    return f"{', '.join(parts)}; {entry}"


def run_table(record: RunRecord, figures: "RunFigures", binary: bool = False) -> str:
    """The run as aligned 'label  value' lines, the way the CLI prints it; every figure from `figures`."""
    rows: list[tuple[str, str]] = []
    stats = figures.stats
    status = {"ok": "ok — valid: the reference check passed"}.get(record.status, record.message or record.status)
    rows.append(("status", status))
    rows.append(("backend", f"{record.backend} on {record.device}"))
    rows.append(("ran on", provenance_text(record)))
    rows.append(("protocol", f"{record.mode}, {len(record.samples_s)} of {record.iterations} timed iterations, "
                             f"{record.warmup_calls} warm-up calls; {record.timer}"))
    if record.first_call_s is not None:
        rows.append(("first call", f"{format_time(record.first_call_s)} (untimed)"))
    if stats:
        rows.append(("median", format_time(stats.median_s)))
        rows.append(("spread", f"min {format_time(stats.min_s)}, p10 {format_time(stats.p10_s)}, "
                               f"p90 {format_time(stats.p90_s)}, max {format_time(stats.max_s)}"))
    if figures.flop is not None and figures.bytes is not None:
        rows.append(("work", f"{format_flop(figures.flop)} [{figures.convention}] · compulsory {format_bytes(figures.bytes, binary)}"
                             + (f" · {format_intensity(figures.intensity)}" if figures.intensity else "")))
    if figures.achieved_byte_per_s is not None:
        achieved = f"{format_bandwidth(figures.achieved_byte_per_s, binary)} compulsory"
        if figures.achieved_flop_per_s is not None:
            achieved += f" · {format_flop_rate(figures.achieved_flop_per_s)}"
        rows.append(("achieved", achieved))
    implied = figures.implied_byte_per_s
    if record.kernel.implied_bytes != record.bytes and implied is not None:
        rows.append(("implied traffic", f"{format_bytes(record.kernel.implied_bytes, binary)} per call → "
                                        f"{format_bandwidth(implied, binary)}; {record.kernel.implied_note}"))
    if figures.bound_time_s is not None:
        text = f"{format_time(figures.bound_time_s)} on {figures.device_name} ({figures.limiter}-limited, {figures.path} path)"
        if figures.percent_of_bound is not None:
            text += f" → the median reaches {format_percent(figures.percent_of_bound)} of the bound"
        rows.append(("bound", text))
        if figures.device_note:
            rows.append(("device", figures.device_note))
        if figures.missed:
            rows.append(("why short", figures.missed))
    elif figures.bound_note:
        rows.append(("bound", figures.bound_note))
    if figures.impossible is not None:
        rows.append(("IMPOSSIBLE", figures.impossible.headline))
        for reason in figures.impossible.reasons:
            rows.append(("  check", reason.as_text()))
    rows.append(("kernel", f"{record.kernel.algorithm} [{record.kernel.executed_path}]"))
    if record.check is not None:
        rows.append(("check", record.check.message))
        if record.check.checksum is not None:
            rows.append(("checksum", f"{record.check.checksum:.17g} (float64 sum of every output)"))
    rows.append(("before timing", _conditions(record.conditions_before)))
    rows.append(("after timing", _conditions(record.conditions_after)))
    env = record.environment
    versions = [f"{name} {env[name]}" for name in ("numpy", "cupy", "cuda_runtime", "driver", "blas", "python") if env.get(name)]
    rows.append(("environment", ", ".join(versions)))
    for note in (*record.kernel.notes, *record.notes):
        rows.append(("note", note))
    width = max(len(label) for label, _ in rows)
    lines = [f"{record.declaration}    [run {record.id}, {record.created}]"]
    lines += [f"  {label.ljust(width)}  {value}" for label, value in rows]
    return "\n".join(lines)


def _calibration_cells(path: str, value: float, device: Device | None, binary: bool) -> tuple[str, str, str]:
    """Measured, datasheet and their ratio for one calibrated rate (a link's datasheet is its catalogue figure)."""
    from workbench.model.devices.links import is_byte_rate
    from workbench.model.devices.rate_titles import reference_rate

    def text(rate: float) -> str:
        return format_bandwidth(rate, binary) if is_byte_rate(path) else format_flop_rate(rate)

    reference = reference_rate(path, device)
    if reference is None:
        return text(value), "–", "–"
    return text(value), f"{text(reference.value)} ({reference.source})", f"{format_percent(100 * value / reference.value)}"


def calibration_table(result: CalibrationResult, device: Device | None = None, binary: bool = False) -> str:
    """Measured rates beside the datasheet figures of `device` (when given), then every transfer and how it was measured."""
    from workbench.model.devices.rate_titles import rate_title

    lines = [f"Calibration on {result.device} ({result.backend}), {result.created}"]
    header = ("rate", "measured", "datasheet", "measured / datasheet")
    rows = [header]
    gpu = result.backend == "cupy"
    memory = device.memory_name if device is not None else ("HBM" if gpu else "DRAM")  # CPU memory is DRAM
    for path, rate in result.rates.items():
        # Titles name GPU units ("CUDA cores"); on a CPU the key alone is clearer. The memory row is named by
        # the memory it measured, never by the rate's key ("hbm").
        title = rate_title(path, gpu, memory)
        if path != BANDWIDTH and title != path and not path.startswith("link:") and path in PATH_TITLES:
            title = f"{path} ({title})"
        rows.append((title, *_calibration_cells(path, rate.value, device, binary)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    lines += transfer_lines(result, binary, indent="  ")
    lines += latency_lines(result, indent="  ")
    for reason in result.skipped:
        lines.append(f"  skipped: {reason}")
    for note in result.notes:
        lines.append(f"  note: {note}")
    if result.cancelled:
        lines.append("  cancelled before every rate was measured")
    lines.append("Measured rates replace the datasheet figures in the bounds once stored (source: measured).")
    return "\n".join(lines)


def transfer_lines(result: CalibrationResult, binary: bool = False, indent: str = "") -> list[str]:
    """Each link and cache measurement: its figure (busbw and algbw for a collective), bytes, median, and how."""
    if not result.transfers:
        return []
    lines = ["Transfers and caches (median of the timed calls; how each counts its bytes is in its line):"]
    for transfer in result.transfers:
        figure = format_bandwidth(transfer.rate, binary)
        if transfer.bus_factor is not None:
            figure = f"busbw {figure}, algbw {format_bandwidth(transfer.algbw, binary)}"
        lines.append(
            f"{indent}• {transfer.label}: {figure} "
            f"({format_bytes(transfer.bytes_per_call, binary)} in {format_time(transfer.median_s)})"
        )
        lines.append(f"{indent}    how: {transfer.description()}")
    return lines


def latency_lines(result: CalibrationResult, indent: str = "") -> list[str]:
    """Each HBM latency measured (idle, under load) and how: the figure the Little's-law term then uses."""
    if not result.latencies:
        return []
    lines = ["HBM latency (the memory-level-parallelism term uses the loaded figure):"]
    for reading in result.latencies:
        lines.append(f"{indent}• {reading.load}: {format_time(reading.seconds)}")
        lines.append(f"{indent}    how: {reading.how}")
    return lines
