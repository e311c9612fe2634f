"""Sessions the size of a model: how the window, reports and steps grow with the number of operations.

    .venv/bin/python benchmarks/bench_scale.py [--sizes 100,1000,5000] [--step-lines 20000] [--repeat R] [--out FILE]
    .venv/bin/python benchmarks/bench_scale.py --in-window [--sizes 5000]   # only the edit and select rows

For each size N (sessions of GEMM, add, softmax and RMSNorm operations on an H100 SXM, made by
benchmarks/scale_inputs.py):

1. window shown: `workbench gui FILE --check` in a fresh process, wall time until it prints its line (the window
   built, the session opened, shown and settled: what a user waits for), and the process's CPU time to its exit;
   the row "…, to exit" gives the wall time to the process's exit too (closing the window and the interpreter's
   teardown, which a user does not wait for at start); median of --repeat runs. Twice: with bytecode, as a
   user's machine starts it (Python writes each module's bytecode on the first start and reads it on every
   later one; an installed copy has it from the install), and as this environment starts it
   (PYTHONDONTWRITEBYTECODE=1 with an editable install: the workbench's own modules compiled at every start,
   about half a second here); see "Bytecode" below;
2. edit → repaint: in one window with the session open on the roofline, a keystroke into the selected
   operation's declaration (a digit typed into M, then taken out again) and Qt delivering what it posted, the
   repaint among it; the median of 40 (the roofline must have painted after each);
3. selecting another operation: `document.select` of an operation further down the list, then the repaint;
   median of 20;
4. report: `workbench report FILE -o report.md` in a fresh process (plot, tables, Markdown); median of --repeat;
5. `workbench step STEP --device h100-sxm --json` for a step of N lines (scale_inputs.step_text); median of
   --repeat; and the same once for a step of --step-lines lines.

Each as wall time and as CPU time (user + system of the child process, or of this process for the in-window
rows): on a machine shared with others the wall time includes their load, the CPU time does not.
Then, for each measure, the log-log slope from the smallest to the largest size
(log(t_large / t_small) / log(N_large / N_small)): 1 is linear growth. Targets: slope ≤ 1.2 for each;
at the largest size the window shown ≤ 3 s and an edit ≤ 16 ms. `--distinct D` makes the sessions of D shapes
repeated, as a model repeats its layers (default: every operation a shape of its own, the worst case).

Bytecode: every fresh process here runs with PYTHONPYCACHEPREFIX set to a folder of the bench's own, so what
it compiles does not depend on what the tree's __pycache__ folders hold. Each command is run once, untimed,
with bytecode written there, before it is timed (the first start on a user's machine, which writes it);
the timed runs read it. For the row without bytecode, the workbench's part of that folder is taken away and
PYTHONDONTWRITEBYTECODE=1 set: the standard library's and the dependencies' bytecode is read (pip wrote it at
install), the workbench's modules compiled at each start, as in this environment.

A fresh process's time includes Python and Qt starting (about 1.5–2 s of the window's time here), so a
slope over those rows understates the growth of the work itself; the in-process rows (edit, select) do not.
The first and last rows say how fast the machine was (a fixed pure-Python loop) and its load average: on a
shared machine the same tree runs up to 2× slower from one minute to the next.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PERF_WORKBENCH_DATA_DIR", tempfile.mkdtemp(prefix="workbench-bench-data-"))
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gui import reference_seconds  # noqa: E402  (how fast the machine is now: the same loop as bench_gui's)
from scale_inputs import step_text, write_session  # noqa: E402

WINDOW_TARGET_S = 3.0
EDIT_TARGET_S = 0.016
SLOPE_TARGET = 1.2
EDITS = 40
SELECTS = 20
NO_BYTECODE_ROW = "  …, no bytecode"  # the window shown with the workbench's modules compiled at each start
TO_EXIT_ROW = "  …, to exit"  # the window shown, closed and the process ended
SHOWN_LINE = "window shown:"  # what `workbench gui --check` prints once the window is shown and settled


BYTECODE = Path(tempfile.mkdtemp(prefix="workbench-bench-bytecode-"))  # PYTHONPYCACHEPREFIX of every child


def child_environment(bytecode: bool) -> dict[str, str]:
    """A child's environment: Qt offscreen, settings in a scratch folder, bytecode in BYTECODE; with `bytecode`
    False, the workbench's own modules compiled at each start (see the module's text, "Bytecode")."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="workbench-bench-settings-"))
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(BYTECODE)
    else:
        without = BYTECODE.with_name(BYTECODE.name + "-without-workbench")
        if not without.exists():
            shutil.copytree(BYTECODE, without)
        shutil.rmtree(without / (ROOT / "workbench").relative_to(ROOT.anchor), ignore_errors=True)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = str(without)
    return env


def timed_child(arguments: list[str], repeat: int, bytecode: bool = True) -> tuple[float, float]:
    """Median wall time and CPU time (user + system) of `workbench ARGUMENTS` run `repeat` times in fresh
    processes (each must succeed), after one untimed run that writes the bytecode they read (`child_environment`)."""
    _, to_exit, cpu = timed_lines(arguments, repeat, bytecode)
    return to_exit, cpu


def timed_lines(arguments: list[str], repeat: int, bytecode: bool = True, line: str = "") -> tuple[float, float, float]:
    """Medians of the wall time until the child prints a line starting with `line` (to its exit when `line` is
    empty), of the wall time to its exit, and of its CPU time (user + system, to its exit)."""
    at_line, times, cpu = [], [], []
    warm = child_environment(True)
    subprocess.run([sys.executable, "-m", "workbench", *arguments], capture_output=True, env=warm, cwd=ROOT, timeout=1200)
    env = child_environment(bytecode)
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with tempfile.TemporaryFile() as errors:
            start = time.perf_counter()
            child = subprocess.Popen([sys.executable, "-m", "workbench", *arguments], stdout=subprocess.PIPE,
                                     stderr=errors, env=env, cwd=ROOT, text=True)
            seen = None
            assert child.stdout is not None
            for text in child.stdout:
                if line and seen is None and text.startswith(line):
                    seen = time.perf_counter() - start
            returncode = child.wait(timeout=1200)
            times.append(time.perf_counter() - start)
            errors.seek(0)
            message = errors.read().decode(errors="replace")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if returncode != 0 or (line and seen is None):
            raise SystemExit(f"workbench {' '.join(arguments)} failed ({returncode}):\n{message[-2000:]}")
        at_line.append(seen if line else times[-1])
    return statistics.median(at_line), statistics.median(times), statistics.median(cpu)


def in_window(path: Path, app: object, window: object) -> tuple[tuple[float, float], tuple[float, float]]:
    """Median edit → repaint and select → repaint times (wall, and the process's CPU time) with the session at
    `path` open on the roofline."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from window_bench import PaintCounter, settle

    window.open_session(str(path))  # type: ignore[attr-defined]
    window.tabs.setCurrentWidget(window.roofline)  # type: ignore[attr-defined]
    settle(app, 10)
    painted = PaintCounter()
    window.roofline.widget.viewport().installEventFilter(painted)  # type: ignore[attr-defined]
    document = window.document  # type: ignore[attr-defined]
    count = len(document.operations)
    gemm = next(row for row, entry in enumerate(document.operations) if entry.declaration.startswith("gemm"))
    document.select(gemm)
    settle(app, 5)
    line = window.editor.line  # type: ignore[attr-defined]
    line.setFocus()
    text = line.text()
    line.setCursorPosition(text.index(",", text.index("M=")))
    edits, edits_cpu = [], []
    for index in range(EDITS):
        before = painted.count
        start, start_cpu = time.perf_counter(), time.process_time()
        QTest.keyClick(line, Qt.Key.Key_1 if index % 2 == 0 else Qt.Key.Key_Backspace)
        app.processEvents()  # type: ignore[attr-defined]
        edits.append(time.perf_counter() - start)
        edits_cpu.append(time.process_time() - start_cpu)
        if painted.count == before:
            raise SystemExit("an edit did not repaint the roofline")
    assert document.state(document.current_entry).error is None
    selects, selects_cpu = [], []
    for index in range(SELECTS):
        row = (gemm + 1 + index * max(count // SELECTS, 1)) % count
        before = painted.count
        start, start_cpu = time.perf_counter(), time.process_time()
        document.select(row)
        app.processEvents()  # type: ignore[attr-defined]
        selects.append(time.perf_counter() - start)
        selects_cpu.append(time.process_time() - start_cpu)
        if painted.count == before:
            raise SystemExit("selecting another operation did not repaint the roofline")
    return (statistics.median(edits), statistics.median(edits_cpu)), (statistics.median(selects), statistics.median(selects_cpu))


def slope(small: tuple[int, float], large: tuple[int, float]) -> float:
    return math.log(large[1] / small[1]) / math.log(large[0] / small[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--step-lines", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--distinct", type=int, default=None,
                        help="shapes in the session, repeated (a model's layers); default: every operation its own")
    parser.add_argument("--out", help="also write the results as JSON here")
    parser.add_argument("--in-window", action="store_true",
                        help="only the in-window rows (edit, select): no fresh processes, no step")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    if args.in_window:
        return in_window_only(sizes, args.distinct)

    load_before, reference_before = os.getloadavg(), reference_seconds()
    folder = Path(tempfile.mkdtemp(prefix="workbench-bench-scale-"))
    settings_dir = tempfile.mkdtemp(prefix="workbench-bench-")
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir)
    from window_bench import shown_window

    app, window = shown_window()
    rows: dict[str, dict[int, tuple[float, float]]] = {
        "window shown": {}, TO_EXIT_ROW: {}, NO_BYTECODE_ROW: {}, "edit → repaint": {}, "select → repaint": {}, "report (Markdown)": {},
        "step --json": {}}
    for size in sizes:
        session = write_session(folder / f"session-{size}.json", size, args.distinct)
        step = folder / f"step-{size}.step"
        step.write_text(step_text(size))
        shown, to_exit, cpu = timed_lines(["gui", str(session), "--check"], args.repeat, line=SHOWN_LINE)
        rows["window shown"][size], rows[TO_EXIT_ROW][size] = (shown, cpu), (to_exit, cpu)
        shown, _, cpu = timed_lines(["gui", str(session), "--check"], args.repeat, bytecode=False, line=SHOWN_LINE)
        rows[NO_BYTECODE_ROW][size] = (shown, cpu)
        rows["edit → repaint"][size], rows["select → repaint"][size] = in_window(session, app, window)
        rows["report (Markdown)"][size] = timed_child(["report", str(session), "-o", str(folder / f"report-{size}.md")], args.repeat)
        rows["step --json"][size] = timed_child(["step", str(step), "--device", "h100-sxm", "--json"], args.repeat)
        print(f"  {size} operations done", file=sys.stderr, flush=True)
    big_step = folder / "step-big.step"
    big_step.write_text(step_text(args.step_lines))
    big_step_s = timed_child(["step", str(big_step), "--device", "h100-sxm", "--json"], 1)
    window.close()
    load_after, reference_after = os.getloadavg(), reference_seconds()

    shapes = f"{args.distinct} shapes repeated" if args.distinct else "every operation a shape of its own"
    lines = [f"machine: reference loop {reference_before * 1e3:.0f} ms before, {reference_after * 1e3:.0f} ms after; "
             f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after ({os.cpu_count()} CPUs); "
             f"sessions: {shapes}; medians of {args.repeat} fresh processes, {EDITS} edits, {SELECTS} selections",
             "each cell: wall time / CPU time (user + system) of the process; window shown: wall time until the "
             "window is shown and settled (the line printed) / CPU time to the process's exit",
             f"fresh processes read bytecode written by an untimed first run (a user's machine from its second "
             f"start on); '{NO_BYTECODE_ROW.strip()}': the workbench's modules compiled at each start, as with "
             f"this environment's PYTHONDONTWRITEBYTECODE=1", ""]
    lines.append(f"{'':20}" + "".join(f"{size:>22,}" for size in sizes) + f"{'slope wall/CPU':>16}  target")
    results: dict[str, object] = {"sizes": sizes, "distinct": args.distinct, "rows": {}, "load_before": load_before[0],
                                  "load_after": load_after[0], "reference_s": [reference_before, reference_after]}
    failed = False
    for name, by_size in rows.items():
        small, large = sizes[0], sizes[-1]
        wall_slope = slope((small, by_size[small][0]), (large, by_size[large][0])) if len(sizes) > 1 else float("nan")
        cpu_slope = slope((small, by_size[small][1]), (large, by_size[large][1])) if len(sizes) > 1 else float("nan")
        cells = "".join(f"{_time(by_size[size][0]) + ' / ' + _time(by_size[size][1]):>22}" for size in sizes)
        targets = [f"slope ≤ {SLOPE_TARGET}"]
        ok = not min(wall_slope, cpu_slope) > SLOPE_TARGET
        if name in ("window shown", NO_BYTECODE_ROW):
            targets.append(f"≤ {WINDOW_TARGET_S:.0f} s at {large:,} (wall)")
            ok &= by_size[large][0] <= WINDOW_TARGET_S
        if name == "edit → repaint":
            targets.append(f"≤ {EDIT_TARGET_S * 1e3:.0f} ms at {large:,}")
            ok &= min(by_size[large]) <= EDIT_TARGET_S
        failed |= not ok
        lines.append(f"{name:20}{cells}{wall_slope:>8.2f}/{cpu_slope:<7.2f}  {', '.join(targets)}: {'met' if ok else 'MISSED'}")
        results["rows"][name] = {  # type: ignore[index]
            "wall_s": {str(size): by_size[size][0] for size in sizes}, "cpu_s": {str(size): by_size[size][1] for size in sizes},
            "slope_wall": wall_slope, "slope_cpu": cpu_slope, "met": ok}
    lines.append(f"step --json, {args.step_lines:,} lines: {_time(big_step_s[0])} / {_time(big_step_s[1])}")
    results["big_step"] = {"lines": args.step_lines, "wall_s": big_step_s[0], "cpu_s": big_step_s[1]}
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 1 if failed else 0


def in_window_only(sizes: list[int], distinct: int | None) -> int:
    """The edit → repaint and select → repaint rows alone (minutes less than the whole table), with the machine's
    speed and load before and after; exit 1 if the edit misses its target at the largest size."""
    load_before, reference_before = os.getloadavg(), reference_seconds()
    folder = Path(tempfile.mkdtemp(prefix="workbench-bench-scale-"))
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp(prefix="workbench-bench-"))
    from window_bench import shown_window

    app, window = shown_window()
    lines = []
    for size in sizes:
        session = write_session(folder / f"session-{size}.json", size, distinct)
        edit, select = in_window(session, app, window)
        lines.append(f"{size:>7,} operations: edit → repaint {_time(edit[0])} / {_time(edit[1])}, "
                     f"select → repaint {_time(select[0])} / {_time(select[1])}")
    window.close()
    load_after, reference_after = os.getloadavg(), reference_seconds()
    print(f"machine: reference loop {reference_before * 1e3:.0f} ms before, {reference_after * 1e3:.0f} ms after; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after ({os.cpu_count()} CPUs); "
          f"medians of {EDITS} edits, {SELECTS} selections; each: wall time / CPU time of the process")
    print("\n".join(lines))
    return 0 if edit[1] <= EDIT_TARGET_S or edit[0] <= EDIT_TARGET_S else 1


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


if __name__ == "__main__":
    raise SystemExit(main())
