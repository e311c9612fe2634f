"""Quitting (and cancelling) while a large profile is read: how long the user waits.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_import_cancel.py [MEGABYTES] [--repeat N]

Writes a synthetic `ncu --csv --page details` export of MEGABYTES (default 400: the test file's launches again
and again under new IDs, as a profile of a long run is), then, N times (default 3), in a fresh process: opens
the window, imports the file, waits SECONDS_IN (4 s, well inside a read that takes about a minute here) and
quits through the window's Quit action. Prints the exit code, the time from the quit to the process's end
(target ≤ 2 s) and whether Qt warned of a thread destroyed while running; then the same with the status bar's
Cancel, timing the click to the worker's end (target ≤ 1 s). The "idle" row quits the same window with no
import: what the process's own teardown takes on this machine. Medians over the runs.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DETAILS = ROOT / "tests" / "data" / "ncu_details.csv"
SECONDS_IN = 4.0

CHILD = """
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.gui.app import build_window

path, how, seconds_in = sys.argv[1], sys.argv[2], float(sys.argv[3])
window = build_window(detect=lambda: Detection(NO_DRIVER, "benchmark"))
app = QApplication.instance()
window.show()
if how != "idle":
    window.import_profile(path)

def act():
    worker = window.profile_importer.worker
    if how != "idle":
        assert worker is not None and worker.isRunning(), "the read ended before the quit"
    if how in ("quit", "idle"):
        print("go", time.monotonic(), flush=True)
        window.actions["quit"].trigger()
        return
    started = time.monotonic()
    window.cancel_import.click()
    worker.wait()
    print("cancelled", time.monotonic() - started, flush=True)
    window.close()

QTimer.singleShot(int(seconds_in * 1000), act)
sys.exit(app.exec())
"""


def write_details(path: Path, megabytes: float) -> int:
    lines = DETAILS.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    head, rows = lines[: start + 1], lines[start + 1 :]
    target = int(megabytes * 1e6)
    with path.open("w") as out:
        out.write("\n".join(head) + "\n")
        passes = 0
        while out.tell() < target:
            block = []
            for row in rows:
                launch, rest = row[1:].split('"', 1)
                block.append(f'"{int(launch) + 1000 * passes}"{rest}')
            out.write("\n".join(block) + "\n")
            passes += 1
    return path.stat().st_size


def one(path: Path, how: str) -> tuple[int, float, bool]:
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    with tempfile.TemporaryDirectory() as home:
        environment.update(HOME=home, XDG_CONFIG_HOME=home)
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), how, str(SECONDS_IN)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=environment, cwd=ROOT)
        assert child.stdout is not None and child.stderr is not None
        word, value = child.stdout.readline().split()
        code = child.wait(120)
        ended = time.monotonic()
        errors = child.stderr.read()
        child.stdout.close()
        child.stderr.close()
    waited = ended - float(value) if word == "go" else float(value)
    return code, waited, "QThread" in errors


def main() -> None:
    arguments = sys.argv[1:]
    repeat = 3
    if "--repeat" in arguments:
        at = arguments.index("--repeat")
        repeat = int(arguments[at + 1])
        del arguments[at : at + 2]
    megabytes = float(arguments[0]) if arguments else 400.0
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big-details.csv"
        size = write_details(path, megabytes)
        print(f"file: {size / 1e6:.0f} MB ncu details page; quit or cancel {SECONDS_IN:.0f} s into the read")
        for how, target in (("idle", 2.0), ("quit", 2.0), ("cancel", 1.0)):
            results = [one(path, how) for _ in range(repeat)]
            waits = [waited for _, waited, _ in results]
            codes = sorted({code for code, _, _ in results})
            warned = any(warning for _, _, warning in results)
            print(f"{how:>6}: exit codes {codes}, waited median {statistics.median(waits):.2f} s "
                  f"(runs: {', '.join(f'{w:.2f}' for w in waits)}; target ≤ {target:.0f} s), "
                  f"thread warning: {'yes' if warned else 'no'}")


if __name__ == "__main__":
    main()
