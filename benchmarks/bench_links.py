"""Measured links and caches: each transfer's median rate against the catalogue figure it stands for.

CPU (always): the host-link stand-in (one NumPy buffer copied into another,
far larger than the last-level cache, bytes counted once) and a copy inside
the last-level cache against one in DRAM (both bytes read + written, the
harness's protocol): the cache / DRAM ratio.

GPU (when CuPy sees one): the L2 read kernel (a working set of a quarter of
the L2) against the HBM datasheet figure (L2 / HBM, expected > 1); pinned and
pageable host ↔ device copies each way against the device's host link per
direction (pinned typically 80–90 % of PCIe, pageable less); with two or more
GPUs, peer copies each way and NCCL all-reduce / all-gather busbw against the
device's link per direction (nccl-tests' comparison).

Every figure is the median of at least 30 timed calls, printed in GB/s and
GiB/s. What cannot run is a SKIP row with the reason; a failure an ERROR row;
the JSON file, when asked for, is rewritten after every row.

    PYTHONPATH=. python benchmarks/bench_links.py [--cpu-only] [--gpu-only] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.model.units import format_bandwidth, format_bytes  # noqa: E402

BENCH_FORMAT = "perf-workbench-bench-links"
INFO, SKIP, ERROR = "INFO", "SKIP", "ERROR"


@dataclass
class Row:
    check: str
    measured: str
    reference: str
    ratio: float | None
    verdict: str
    rate_byte_per_s: float | None = None
    samples: int = 0


@dataclass
class Report:
    json_path: Path | None
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        ratio = f"{row.ratio:.3f}" if row.ratio is not None else "–"
        print(f"{row.verdict:5s} {row.check:52s} {row.measured:40s} ref {row.reference:34s} ratio {ratio}", flush=True)
        self.write()

    def write(self) -> None:
        if self.json_path is None:
            return
        data = {
            "format": BENCH_FORMAT,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": platform.node(),
            "rows": [asdict(row) for row in self.rows],
            "notes": self.notes,
        }
        self.json_path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.json_path.with_name(self.json_path.name + ".partial")
        partial.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(partial, self.json_path)


def _both(rate: float) -> str:
    return f"{format_bandwidth(rate)} = {format_bandwidth(rate, True)}"


def _guarded(report: Report, check: str, body: Callable[[], None]) -> None:
    try:
        body()
    except Exception as exc:  # one failing check is a row, the others still run
        verdict = SKIP if type(exc).__name__ in ("UnsupportedMeasurement", "BackendUnavailable") else ERROR
        report.add(Row(check, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:120], "–", None, verdict))


def cpu_rows(report: Report, quick: bool) -> None:
    from workbench.model.devices import host
    from workbench.measure import measure
    from workbench.measure.transfers import measure_cpu_host_copy

    cache = host.last_level_cache_bytes()

    def stand_in() -> None:
        nbytes = max(4 * (cache or 0), (32 if quick else 256) * 2**20)
        t = measure_cpu_host_copy(nbytes, 30)
        report.add(Row(f"host-link stand-in copy ({format_bytes(nbytes, True)}, once)", _both(t.rate), "–", None, INFO, t.rate, len(t.samples_s)))

    def cache_vs_dram() -> None:
        if not cache:
            report.add(Row("last-level cache vs DRAM copy", "the CPU reports no last-level cache", "–", None, SKIP))
            return
        small = max(cache // 4 // 8, 1024)
        large = max(8 * cache // 8, 2**22)
        rates = []
        for n in (small, large):
            n = 1 << (n.bit_length() - 1)
            record = measure(f"copy(n={n}, dtype=fp32)", backend="numpy", iterations=30, mode="warm")
            rates.append((n, record.bytes / record.median_s, len(record.samples_s)))
        (n_cache, cache_rate, samples), (n_dram, dram_rate, _) = rates
        report.add(
            Row(
                f"LLC copy ({format_bytes(8 * n_cache, True)}) vs DRAM copy ({format_bytes(8 * n_dram, True)}), r+w",
                _both(cache_rate),
                f"DRAM {_both(dram_rate)}",
                cache_rate / dram_rate,
                INFO,
                cache_rate,
                samples,
            )
        )

    _guarded(report, "host-link stand-in copy", stand_in)
    _guarded(report, "last-level cache vs DRAM copy", cache_vs_dram)


def gpu_rows(report: Report, quick: bool) -> None:
    from workbench.model.devices import BANDWIDTH
    from workbench.model.devices.links import device_link, find_link
    from workbench.measure.backends import select_backend
    from workbench.measure.caches import measure_l2_read
    from workbench.measure.transfers import gpu_count, measure_collectives, measure_host_device, measure_peer_copies
    from workbench.measure.run import default_device

    try:
        backend = select_backend("cupy")
    except Exception as exc:
        report.add(Row("GPU links", f"no GPU: {str(exc).splitlines()[0]}", "–", None, SKIP))
        return
    device: Any = default_device(backend)
    report.notes.append(f"GPU: {backend.describe()}; catalogue entry: {device.key if device else 'none'}")
    nbytes = (64 if quick else 256) * 2**20

    def l2() -> None:
        t = measure_l2_read(30)
        hbm = device.peak.get(BANDWIDTH) if device is not None else None
        report.add(
            Row(t.label, _both(t.rate), f"HBM datasheet {_both(hbm.value)}" if hbm else "–", t.rate / hbm.value if hbm else None, INFO, t.rate, len(t.samples_s))
        )

    def host_device() -> None:
        link = find_link(device.host_link) if device is not None and device.host_link else None
        for t in measure_host_device(nbytes, 30):
            ratio = t.rate / link.per_direction if link else None
            reference = f"{link.name} {_both(link.per_direction)}" if link else "–"
            report.add(Row(f"{t.label} ({format_bytes(nbytes, True)})", _both(t.rate), reference, ratio, INFO, t.rate, len(t.samples_s)))

    def between_gpus() -> None:
        if gpu_count() < 2:
            report.add(Row("peer copies and NCCL", f"needs two GPUs; CuPy sees {gpu_count()}", "–", None, SKIP))
            return
        link = device_link(device) if device is not None else None
        reference = f"{link.name} {_both(link.per_direction)} per direction" if link else "–"
        for t in measure_peer_copies(nbytes, 30):
            report.add(Row(t.label, _both(t.rate), reference, t.rate / link.per_direction if link else None, INFO, t.rate, len(t.samples_s)))
        for t in measure_collectives(nbytes, 30):
            measured = f"busbw {format_bandwidth(t.rate)}, algbw {format_bandwidth(t.algbw)}"
            report.add(Row(t.label, measured, reference, t.rate / link.per_direction if link else None, INFO, t.rate, len(t.samples_s)))

    _guarded(report, "L2 read", l2)
    _guarded(report, "host ↔ device copies", host_device)
    _guarded(report, "peer copies and NCCL", between_gpus)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-only", action="store_true", help="skip the GPU measurements")
    parser.add_argument("--gpu-only", action="store_true", help="skip the CPU measurements")
    parser.add_argument("--quick", action="store_true", help="64 MiB copies on the GPU, 32 MiB on the CPU")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON (rewritten after every row)")
    parser.add_argument("--note", action="append", default=[], help="a line to keep in the JSON (repeatable)")
    args = parser.parse_args(argv)
    report = Report(Path(args.json) if args.json else None, notes=list(args.note))
    if not args.gpu_only:
        cpu_rows(report, args.quick)
    if not args.cpu_only:
        gpu_rows(report, args.quick)
    report.write()
    return 1 if any(row.verdict == ERROR for row in report.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
