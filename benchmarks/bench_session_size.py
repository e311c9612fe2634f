"""Benchmark of a very large session in the window: open, a keystroke, save and autosave of 5,000 runs.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_session_size.py [--runs 5000] [--samples 1000]

The session: 20 operations (vector adds of 20 sizes) and `--runs` run records, each a real NumPy measurement's
record (measured once here) with `--samples` raw samples and its own id, spread over the 20 operations. It is
written compact by the app's own save (about 62 MB at 5,000 × 1,000), then:

1. Open: `window.open_session(path)` and the events it posts delivered (the first repaint); wall time and the
   process's resident memory after it.
2. Keystroke: one digit typed into the declaration field and taken out again (edit, analysis, every view's
   refresh, the repaint), median of 2 × `--keystrokes`; target ≤ 16 ms. What dominates is shown by a profile
   of one keystroke (the workbench functions with the most cumulative time).
3. Save: an edit, the refreshes it schedules let finish (no event taking over 50 ms for 1.5 s), then File ▸
   Save (`window.save_to`) to a new file; wall time until it returns, and the GUI thread's longest block
   meanwhile: a 2 ms QTimer on the GUI thread records when it fires, and the longest gap between two firings
   is the longest the window could not react (the target: no gap near the save's own time, the save running
   in the writer's thread). A watcher thread samples the GUI thread's stack while the timer is late, and the
   row names the functions it was in during the longest block. Then a second save of the same file after one
   more edit (the runs already encoded once).
4. Autosave: an edit (its refreshes let finish), then the autosave timer's slot (`start_autosave`), waited
   for until the recovery file is written; wall time and the GUI thread's longest block, twice.

The first row says how fast the machine was (a fixed pure-Python loop) and its load average: on a shared machine
the same tree runs up to 2× slower from one minute to the next. `--out FILE` appends the rows to FILE as well.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Autosaves go to a scratch folder: a recovery question left by an earlier crash must not stop a run.
os.environ.setdefault("PERF_WORKBENCH_DATA_DIR", tempfile.mkdtemp(prefix="workbench-bench-data-"))
os.environ.setdefault("PERF_WORKBENCH_AUTOSAVE_S", "100000")  # the benchmark calls the autosave itself

ADD = "add(n=2**16, dtype=fp32)"
OPERATIONS = 20


def rss_mb() -> float:
    """This process's resident memory now, in MB (Linux), else its peak."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def write_session(path: Path, runs: int, samples: int) -> int:
    """The large session file, written by the app's own save; its size in bytes."""
    import random

    from workbench.measure import measure
    from workbench.documents.session import OperationEntry, Session, save

    record = measure(ADD, backend="numpy", iterations=30, warmup=2).to_dict()
    declarations = [f"add(n={2**16 + 1024 * index}, dtype=fp32)" for index in range(OPERATIONS)]
    generator = random.Random(35)
    base = record["samples_s"][0] if record.get("samples_s") else 1e-5
    stored = []
    for index in range(runs):
        run = dict(record)
        run["id"] = f"bench-{index:06d}"
        run["declaration"] = declarations[index % OPERATIONS]
        # four digits: the file with its derived figures is about 62 MiB at 5,000 x 1,000, near the 62 MB
        run["samples_s"] = [float(f"{base * (1 + 0.2 * generator.random()):.4g}") for _ in range(samples)]
        stored.append(run)
    session = Session(operations=[OperationEntry.automatic(text) for text in declarations], runs=stored)
    session.device.key = "cpu-generic"
    return len(save(session, path))


class GuiTicks:
    """A 2 ms timer on the GUI thread: the longest gap between its firings is the longest the window was blocked.

    A watcher thread samples the GUI thread's stack while the timer is late, so the row can say what the GUI
    thread was doing in its longest block (the save itself, or a view's refresh that an edit had scheduled)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.stamps: list[float] = []
        self.timer = QTimer()
        self.timer.setInterval(2)
        self.timer.timeout.connect(lambda: self.stamps.append(time.perf_counter()))
        self.busy_in = ""

    def _watch(self, stop: threading.Event, samples: list[tuple[float, str]]) -> None:
        main = threading.main_thread().ident
        while not stop.wait(0.02):
            late = time.perf_counter() - self.stamps[-1]
            frame = sys._current_frames().get(main) if late > 0.1 else None
            if frame is not None:
                samples.append((late, _where(frame)))

    def measure(self, app: Any, action: Callable[[], Any], done: Callable[[], bool] = lambda: True) -> tuple[float, float, Any]:
        """(wall seconds, longest GUI-thread block in seconds, what `action` returned): the action, then events
        delivered until `done()`. `busy_in` says where the GUI thread was in its longest block."""
        self.stamps = [time.perf_counter()]
        samples: list[tuple[float, str]] = []
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(stop, samples))
        watcher.start()
        self.timer.start()
        start = time.perf_counter()
        result = action()
        while not done():
            app.processEvents()
            time.sleep(0.001)
        wall = time.perf_counter() - start
        self.stamps.append(time.perf_counter())
        self.timer.stop()
        stop.set()
        watcher.join()
        gaps = [b - a for a, b in zip(self.stamps, self.stamps[1:])]
        self.busy_in = max(samples)[1] if samples else ""
        return wall, max(gaps), result


def _where(frame: Any) -> str:
    """The innermost three functions of the workbench or pyqtgraph on a stack (what the GUI thread was doing)."""
    names = []
    while frame is not None and len(names) < 3:
        code = frame.f_code
        if ("workbench" in code.co_filename or "pyqtgraph" in code.co_filename) and "benchmarks" not in code.co_filename:
            package = "pyqtgraph/" if "pyqtgraph" in code.co_filename else ""
            names.append(f"{package}{Path(code.co_filename).name}:{code.co_name}")
        frame = frame.f_back
    return " < ".join(names)


def quiet(app: Any, calm_s: float = 1.5) -> None:
    """Deliver events until none has taken over 50 ms for `calm_s`: the refreshes an edit scheduled (the label
    layout once typing pauses, a keystroke's cost) are done before a save is timed, and not counted in it."""
    calm_since = time.perf_counter()
    while time.perf_counter() - calm_since < calm_s:
        start = time.perf_counter()
        app.processEvents()
        if time.perf_counter() - start > 0.05:
            calm_since = time.perf_counter()
        time.sleep(0.01)


def autosave_idle(window: Any) -> Callable[[], bool]:
    """Whether the window has no autosave being written (a window that writes it on the GUI thread never has)."""
    files = window.session_io
    return lambda: not getattr(files, "autosave_in_flight", lambda: False)()


def keystroke_profile(app: Any, line: Any) -> str:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    profiler = cProfile.Profile()
    profiler.enable()
    QTest.keyClick(line, Qt.Key.Key_1)
    app.processEvents()
    profiler.disable()
    QTest.keyClick(line, Qt.Key.Key_Backspace)
    app.processEvents()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative")
    rows = []
    for (filename, lineno, name), (_, _, _, cumulative, _) in sorted(
        stats.stats.items(), key=lambda item: item[1][3], reverse=True  # type: ignore[attr-defined]
    ):
        if "workbench" not in filename or name in {"wrapper", "_run_pending", "<lambda>"}:
            continue
        rows.append(f"    {cumulative * 1e3:8.1f} ms  {Path(filename).name}:{lineno} {name}")
        if len(rows) == 8:
            break
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5000)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--keystrokes", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--session", type=Path, default=None,
                        help="the session file: written there if absent, else opened as it is (repeated runs)")
    parser.add_argument("--keystroke-only", action="store_true", help="open and keystrokes only (no save, autosave)")
    args = parser.parse_args(argv)

    rows: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        rows.append(text)

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from window_bench import reference_seconds

    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    say(f"machine: reference loop {reference_seconds() * 1e3:.0f} ms, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    scratch = Path(tempfile.mkdtemp(prefix="workbench-bench-session-"))
    path = args.session or scratch / "large.json"
    start = time.perf_counter()
    if args.session is not None and args.session.exists():  # written by an earlier run with the same --runs
        say(f"session: {path} ({path.stat().st_size / 1e6:.1f} MB), as an earlier run wrote it")
    else:
        size = write_session(path, args.runs, args.samples)
        say(f"session: {args.runs:,} runs x {args.samples:,} samples, {OPERATIONS} operations, {size / 1e6:.1f} MB "
            f"(written by the app's save in {time.perf_counter() - start:.1f} s, before the window)")

    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(scratch / "settings"))
    from window_bench import settle, shown_window

    app, window = shown_window()
    before = rss_mb()
    ticks = GuiTicks()

    def open_it() -> bool:
        opened = window.open_session(str(path))
        app.processEvents()
        return opened

    wall, block, opened = ticks.measure(app, open_it)
    assert opened, window.banner.text()
    settle(app, 5)
    say(f"open: {wall:.2f} s (GUI thread blocked {block:.2f} s), resident memory {before:.0f} MB -> {rss_mb():.0f} MB")

    line = window.editor.line
    line.setFocus()
    line.setCursorPosition(len("add(n=6553"))
    times, cpu = [], []
    for index in range(2 * args.keystrokes):
        start, start_cpu = time.perf_counter(), time.thread_time()
        QTest.keyClick(line, Qt.Key.Key_1 if index % 2 == 0 else Qt.Key.Key_Backspace)
        app.processEvents()
        times.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    say(f"keystroke (edit -> repaint): median {statistics.median(times) * 1e3:.1f} ms wall, "
        f"{statistics.median(cpu) * 1e3:.1f} ms CPU of the GUI thread, of {len(times)} "
        f"(wall min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}; load average {load[0]:.1f}); target <= 16 ms")
    say("  one keystroke's profile (cumulative, workbench functions):\n" + keystroke_profile(app, line))
    if not args.keystroke_only:
        save_and_autosave(app, window, ticks, scratch, say)
    window.document.undo_stack.setClean()
    window.close()
    window.wait_for_workers()
    if args.out is not None:
        with args.out.open("a", encoding="utf-8") as stream:
            stream.write("\n".join(rows) + "\n\n")
    return 0


def save_and_autosave(app: Any, window: Any, ticks: "GuiTicks", scratch: Path, say: Callable[[str], None]) -> None:
    """Two saves and two autosaves, each after an edit whose refreshes are let finish."""
    saved = scratch / "saved.json"
    for attempt in ("first", "second"):
        window.document.rename_operation(0, f"renamed {attempt}")
        quiet(app)  # the edit's own refreshes (a keystroke's cost, above) done before the save is timed
        wall, block, ok = ticks.measure(app, lambda: window.save_to(str(saved)))
        assert ok, window.banner.text()
        say(f"save ({attempt}): {wall:.2f} s, GUI thread's longest block {block * 1e3:.0f} ms"
            f"{f' (in {ticks.busy_in})' if ticks.busy_in else ''}, {saved.stat().st_size / 1e6:.1f} MB, "
            f"clean after: {window.document.undo_stack.isClean()}")

    files = window.session_io
    for attempt in ("first", "second"):
        window.document.rename_operation(0, f"autosaved {attempt}")
        quiet(app)
        start_autosave = getattr(files, "start_autosave", files.autosave_now)  # what the autosave timer calls
        wall, block, ok = ticks.measure(app, start_autosave, autosave_idle(window))
        written = files.autosaver.path
        say(f"autosave ({attempt}): {wall:.2f} s, GUI thread's longest block {block * 1e3:.0f} ms"
            f"{f' (in {ticks.busy_in})' if ticks.busy_in else ''}, "
            f"{written.stat().st_size / 1e6 if written.exists() else 0:.1f} MB written")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    say(f"peak resident memory {peak:.0f} MB")


if __name__ == "__main__":
    raise SystemExit(main())
