"""A Llama-style 8B training step traced and analysed: forward + backward + AdamW, data-parallel on 8 ranks.

Each run is a fresh process (so its peak memory is its own): `workbench import-torch`'s path — build the
model from resources/models/llama-8b.json on the meta device, trace it, write the step text, parse it — then
lay it out on an H100 SXM (bounds, critical path, exposed communication). Printed per run: wall time and the
process's CPU time for the whole run (imports of PyTorch and transformers included) and for each part, peak
resident memory, the step's operation counts, step time, critical path length and communication; then the
medians against the targets (≤ 30 s, ≤ 2 GB on a 2-core machine). Wall time on a loaded machine stretches;
CPU time is what the run itself costs.

    PYTHONPATH=. python benchmarks/bench_torch_trace.py [--runs 3] [--batch 1] [--seq 4096] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_S = 30.0
TARGET_BYTES = 2 * 10**9


def one_run(batch: int, seq: int) -> dict:
    """One measured run in this process (the child's side)."""
    started, cpu0 = time.perf_counter(), time.process_time()
    import torch  # noqa: F401  (imported here so that the import is its own part of the time)
    import transformers  # noqa: F401

    from workbench.model.devices.catalogue import find_device
    from workbench.steps import parse_step, step_timeline
    from workbench.tracing.sources import TraceRequest, trace_request

    imported, cpu1 = time.perf_counter(), time.process_time()
    step = trace_request(TraceRequest("llama-8b", batch=batch, sequence=seq, backward=True, optimizer="adamw", data_parallel=8))
    traced, cpu2 = time.perf_counter(), time.process_time()
    text = step.text()
    plan = parse_step(text)
    parsed, cpu3 = time.perf_counter(), time.process_time()
    timeline = step_timeline(plan, find_device("h100-sxm"))
    done, cpu4 = time.perf_counter(), time.process_time()
    reduces = [line for line in step.lines if line.declaration.op == "allreduce"]
    return {
        "wall_s": done - started,
        "cpu_s": cpu4 - cpu0,
        "parts_wall_s": {"import": imported - started, "trace": traced - imported, "text+parse": parsed - traced, "layout": done - parsed},
        "parts_cpu_s": {"import": cpu1 - cpu0, "trace": cpu2 - cpu1, "text+parse": cpu3 - cpu2, "layout": cpu4 - cpu3},
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "aten_calls": step.calls,
        "operations": len(plan.operations),
        "by_declaration": step.counts(),
        "unmapped": [op.text() for op in step.unmapped],
        "step_chars": len(text),
        "buckets": len(reduces),
        "step_time_s": timeline.step_time,
        "critical_path_ops": len(timeline.critical_path),
        "exposed_communication_s": timeline.exposed_communication,
        "hidden_communication_s": timeline.hidden_communication,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--json", help="write the runs and medians here")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_run(args.batch, args.seq)))
        return 0
    from workbench.model.units import format_time

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = []
    for number in range(args.runs):
        out = subprocess.run([sys.executable, __file__, "--one", "--batch", str(args.batch), "--seq", str(args.seq)],
                             capture_output=True, text=True, env=env, check=True)
        run = json.loads(out.stdout.strip().splitlines()[-1])
        runs.append(run)
        parts = ", ".join(f"{k} {v:.1f}" for k, v in run["parts_cpu_s"].items())
        print(f"run {number + 1}: wall {run['wall_s']:.1f} s, CPU {run['cpu_s']:.1f} s ({parts}), "
              f"peak RSS {run['peak_rss_bytes'] / 2**20:.0f} MiB")
    last = runs[-1]
    print(f"llama-8b, batch {args.batch} × sequence {args.seq} per rank, forward + backward + AdamW, data-parallel 8, H100 SXM")
    print(f"  {last['aten_calls']:,} ATen calls → {last['operations']:,} operations {last['by_declaration']}; "
          f"{last['buckets']} gradient buckets; {last['step_chars']:,} characters")
    print(f"  unmapped: {last['unmapped'] or 'none'}")
    print(f"  step time {format_time(last['step_time_s'])}, critical path {last['critical_path_ops']:,} operations, "
          f"communication exposed {format_time(last['exposed_communication_s'])}, hidden {format_time(last['hidden_communication_s'])}")
    wall = statistics.median(run["wall_s"] for run in runs)
    cpu = statistics.median(run["cpu_s"] for run in runs)
    peak = max(run["peak_rss_bytes"] for run in runs)
    load = os.getloadavg()[0]
    print(f"median wall {wall:.1f} s (load average {load:.1f} on {os.cpu_count()} cores), median CPU {cpu:.1f} s, "
          f"target {TARGET_S:.0f} s: CPU {cpu / TARGET_S:.2f}× of it; peak RSS {peak / 1e9:.2f} GB, "
          f"target 2 GB: {peak / TARGET_BYTES:.2f}× of it")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "median_wall_s": wall, "median_cpu_s": cpu, "peak_rss_bytes": peak,
                                               "load_average": load}, indent=2))
    return 0 if peak <= TARGET_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
