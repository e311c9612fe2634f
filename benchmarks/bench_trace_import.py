"""Trace import speed: a 1,000,000-row Nsight Systems trace, as SQLite export and as cuda_gpu_trace CSV.

    .venv/bin/python benchmarks/bench_trace_import.py [--rows N] [--repeat R]

Writes one synthetic trace in each format (ROWS intervals, default
1,000,000: GEMM, elementwise and NCCL kernels on three streams, host copies
and memsets, 40 distinct kernel names, in the tables and columns of real
exports; see tests/trace_fixtures.py), then imports each in a fresh child
process (`workbench.profilers.trace_reader.read_trace`, then matched to the
data-parallel example step, as `workbench step --trace` does) and reports
the median over --repeat runs of: wall time, CPU time of the child (the fair
figure on a shared machine) and its peak resident memory (ru_maxrss).
Targets: ≤ 10 s and ≤ 1 GiB for 1,000,000 rows.

A floor for comparison, measured in the same conditions: a child that only
tokenizes the CSV with Python's csv module, or only fetches the database's
rows with sqlite3, and keeps nothing. The ratio import ÷ floor holds on a
loaded machine where the seconds do not.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from trace_fixtures import CSV_HEADER, DEVICE, NCCL_KERNEL, create_tables, csv_row  # noqa: E402

TARGET_S = 10.0
TARGET_BYTES = 2**30

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
from workbench.profilers.trace_reader import read_trace
from workbench.steps import parse_step, match_trace
from workbench.documents.examples import load_example
trace = read_trace(sys.argv[1])
t_read = time.perf_counter() - t0
plan = parse_step(load_example("data-parallel-step").steps[0].text)
measured = match_trace(plan, trace)
wall = time.perf_counter() - t0
print(json.dumps({"rows": len(trace), "read_s": t_read, "wall_s": wall, "cpu_s": time.process_time() - c0,
                  "matched": {k: len(v.intervals) for k, v in measured.matches.items()},
                  "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


FLOOR = {
    "csv": r"""
import csv, json, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    for row in csv.reader(f):
        pass
print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}))
""",
    "sqlite": r"""
import json, sqlite3, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
c = sqlite3.connect(sys.argv[1])
for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
    for row in c.execute(f'SELECT start, "end", deviceId, streamId FROM {table}'):
        pass
print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}))
""",
}


def synthetic_rows(count: int, seed: int = 13):  # type: ignore[no-untyped-def]
    """(kind, name, start, end, stream, bytes) rows in time order: a training loop's worth of activity."""
    rng = random.Random(seed)
    gemms = [f"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize{t}x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
             for t in (64, 128, 256)]
    elementwise = [f"void at::native::vectorized_elementwise_kernel<4, at::native::Functor{i}<float>, at::detail::Array<char *, 2>>(int, T2, T3)"
                   for i in range(34)]
    clock = 1_000_000
    for i in range(count):
        pick = i % 10
        if pick < 4:
            kind, name, stream, size = "kernel", gemms[i % 3], 7, None
            length = rng.randint(900_000, 1_900_000)
        elif pick < 7:
            kind, name, stream, size = "kernel", elementwise[i % 34], 7, None
            length = rng.randint(2_000, 40_000)
        elif pick < 9:
            kind, name, stream, size = "kernel", NCCL_KERNEL, 13, None
            length = rng.randint(300_000, 1_300_000)
        elif i % 20 == 9:
            kind, name, stream, size = "memcpy", "Host-to-Device", 21, rng.randint(1, 64) * 2**20
            length = size // 25_000
        else:
            kind, name, stream, size = "memset", "", 7, 2**20
            length = 3_000
        yield kind, name, clock, clock + length, stream, size
        clock += length // 2 + rng.randint(500, 5_000)


def write_sqlite(path: Path, count: int) -> None:
    from trace_fixtures import insert_rows

    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = OFF")
    connection.execute("PRAGMA synchronous = OFF")
    create_tables(connection)
    batch: list = []
    for row in synthetic_rows(count):
        batch.append(row)
        if len(batch) == 100_000:
            insert_rows(connection, batch)
            batch = []
    insert_rows(connection, batch)
    connection.commit()
    connection.close()


def write_csv(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(CSV_HEADER)
        for i, row in enumerate(synthetic_rows(count)):
            out.write(csv_row(*row, correlation=100 + i, device=DEVICE))


def run_child(path: Path, code: str = CHILD) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"child failed on {path.name}: {done.stderr.strip()}")
    figures = json.loads(done.stdout)
    figures["process_wall_s"] = time.perf_counter() - started  # with the interpreter's start-up
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", choices=("both", "sqlite", "csv"), default="both", help="which export to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results = {}
        for name, writer in (("sqlite", write_sqlite), ("csv", write_csv)):
            if args.format not in ("both", name):
                continue
            path = Path(folder) / f"trace.{name}"
            t0 = time.perf_counter()
            writer(path, args.rows)
            print(f"{name}: wrote {args.rows:,} rows, {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s", flush=True)
            runs, floors = [], []
            load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            for _ in range(args.repeat):  # interleaved, so both see the same load
                runs.append(run_child(path))
                floors.append(run_child(path, FLOOR[name]))
            load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            floor_cpu = statistics.median(run["cpu_s"] for run in floors)
            assert all(run["rows"] == args.rows for run in runs), runs
            median = {key: statistics.median(run[key] for run in runs)
                      for key in ("read_s", "wall_s", "cpu_s", "process_wall_s", "peak_rss_bytes")}
            median["floor_cpu_s"] = floor_cpu
            median["load_average_1min"] = [load_before, load_after]  # the machine may be shared: say how busy it was
            results[name] = median
            ok = median["process_wall_s"] <= TARGET_S and median["peak_rss_bytes"] <= TARGET_BYTES
            print(
                f"{name}: median of {args.repeat}: read {median['read_s']:.2f} s, read + match {median['wall_s']:.2f} s "
                f"(CPU {median['cpu_s']:.2f} s), whole process {median['process_wall_s']:.2f} s; "
                f"peak RSS {median['peak_rss_bytes'] / 2**20:.0f} MiB; "
                f"{'within' if ok else 'OVER'} the targets ({TARGET_S:.0f} s, {TARGET_BYTES / 2**30:.0f} GiB); "
                f"ratios {median['process_wall_s'] / TARGET_S:.2f} of the time, {median['peak_rss_bytes'] / TARGET_BYTES:.2f} of the memory",
                flush=True,
            )
            print(f"  floor ({'csv.reader alone' if name == 'csv' else 'sqlite3 fetching the rows alone'}): CPU {floor_cpu:.2f} s; "
                  f"import + match ÷ floor = {median['cpu_s'] / floor_cpu:.2f} (CPU)", flush=True)
            print(f"  matched: {runs[0]['matched']}", flush=True)
            print(f"  load average (1 min) before and after: {load_before:.2f}, {load_after:.2f}", flush=True)
        print(json.dumps(results))


if __name__ == "__main__":
    main()
