"""Hostile scale: the trace and match-rule surfaces with inputs shaped to be slow, through the CLI.

    .venv/bin/python benchmarks/bench_hostile_scale.py [--repeat R] [--scale F] [--cases 1,2,3,4]

Four cases, each run by `workbench` in a fresh child process with
its output discarded:

1. `workbench step STEP --device h100-sxm --trace T --json`, T a
   cuda_gpu_trace CSV of 200,000 kernels, each on a stream of its own
   (200,000 streams: the lanes' labels were quadratic in their count);
2. the same with T holding 1,000,000 kernels of 1,000,000 distinct names
   (each name's base, rule and suggested operation were found per name with
   the declarations parsed again each time);
3. `workbench import-nsys S --match '*=add(n=2**20, dtype=fp32)' --json`,
   S a `cuda_gpu_kern_sum` summary of 1,000,000 kernels and the glob
   matching every one (the declaration was analysed once per kernel, and
   each kernel compared: now the first 1,000 are, with a note; the JSON,
   375 MB, holds each summary row once, docs/import-json.md);
4. `workbench step D --device h100-sxm --json`, D a step of 1,000 lines
   with 52,515 dependencies (each line after the 54 before it): the what-if
   of each operation lays the step out again (operations × dependencies).

For each: the median over --repeat runs of the child's wall time, and its
peak resident memory (ru_maxrss of the child, from os.wait4, the
resource.getrusage figures of that one child) and CPU time. Targets: ≤ 10 s and ≤ 1 GB each.
The machine these figures come from may be shared: CPU time is the fairer
figure there, wall time includes the neighbours. --scale shrinks the inputs
(0.1: a tenth) for a quick look.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from trace_fixtures import CSV_HEADER, GEMM_KERNEL, csv_row  # noqa: E402

TARGET_S = 10.0
TARGET_BYTES = 10**9
STEP = "fwd = gemm(M=8192, N=8192, K=8192, dtype=bf16)\nupd = add(n=2**20, dtype=fp32) after fwd\n"


def write_streams_trace(path: Path, rows: int) -> None:
    """`rows` GEMM kernels, 1 µs apart, each on a stream of its own."""
    with path.open("w") as out:
        out.write(CSV_HEADER)
        for index in range(rows):
            out.write(csv_row("kernel", GEMM_KERNEL, 1_000 * index, 1_000 * index + 800, index + 1, None))


def write_names_trace(path: Path, rows: int) -> None:
    """`rows` kernels of as many distinct names on 4 streams."""
    with path.open("w") as out:
        out.write(CSV_HEADER)
        for index in range(rows):
            name = f"void synthetic_kernel_{index}<float, {index % 8}>(float *, const float *, int)"
            out.write(csv_row("kernel", name, 1_000 * index, 1_000 * index + 800, 7 + index % 4, None))


def write_dense_step(path: Path, lines: int = 1000, fan_in: int = 54) -> int:
    """A step of `lines` adds, each after the `fan_in` before it (two-character names to fit the size limit)."""
    import string

    first, rest = string.ascii_letters, string.ascii_letters + string.digits
    names = [first[i // len(rest)] + rest[i % len(rest)] for i in range(lines)]
    text, count = [], 0
    for i, name in enumerate(names):
        deps = names[max(0, i - fan_in):i]
        count += len(deps)
        text.append(f"{name}=add(n=4,dtype=fp32)" + (" after " + ",".join(deps) if deps else ""))
    path.write_text("\n".join(text) + "\n")
    return count


def run_child(arguments: list[str]) -> tuple[float, int, float]:
    """`workbench ARGS` in a fresh process, stdout discarded: (wall s, peak RSS bytes, CPU s) of the child."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "workbench", *arguments], stdout=subprocess.DEVNULL,
                                 stderr=errors, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own resource usage (peak RSS, CPU)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"workbench {' '.join(arguments)} failed: {errors.read().decode(errors='replace').strip()}")
    return wall, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--cases", default="1,2,3,4", help="which of the cases above to run, e.g. 2,3")
    args = parser.parse_args(argv)
    from bench_profile_import import big_nsys_summary

    streams, names, kernels = (max(1, int(n * args.scale)) for n in (200_000, 1_000_000, 1_000_000))
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        step = base / "train.step"
        step.write_text(STEP)
        write_streams_trace(base / "streams.csv", streams)
        write_names_trace(base / "names.csv", names)
        big_nsys_summary(base / "summary.csv", kernels)
        dependencies = write_dense_step(base / "dense.step")
        cases = [
            (f"step --trace --json, {streams:,} streams",
             ["step", str(step), "--device", "h100-sxm", "--trace", str(base / "streams.csv"), "--json"]),
            (f"step --trace --json, {names:,} distinct names",
             ["step", str(step), "--device", "h100-sxm", "--trace", str(base / "names.csv"), "--json"]),
            (f"import-nsys --match '*=…' --json, {kernels:,} kernels",
             ["import-nsys", str(base / "summary.csv"), "--match", "*=add(n=2**20, dtype=fp32)", "--device",
              "h100-sxm", "--json"]),
            (f"step --json, 1,000 lines with {dependencies:,} dependencies",
             ["step", str(base / "dense.step"), "--device", "h100-sxm", "--json"]),
        ]
        chosen = {int(number) for number in args.cases.split(",")}
        for title, arguments in (case for number, case in enumerate(cases, start=1) if number in chosen):
            runs = [run_child(arguments) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[2] for r in runs)
            peak = max(r[1] for r in runs)
            ok = wall <= TARGET_S and peak <= TARGET_BYTES
            failed |= not ok
            print(f"{title}: median wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {peak / 1e6:.0f} MB "
                  f"over {args.repeat} runs ({', '.join(f'{r[0]:.2f}' for r in runs)} s)  "
                  f"[{'ok' if ok else 'OVER'}: ≤ {TARGET_S:g} s, ≤ {TARGET_BYTES / 1e9:g} GB]")
    print(f"(os.cpu_count() {os.cpu_count()}, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
