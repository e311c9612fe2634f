"""Benchmark of the bound-versus-size view: a 10,000-size sweep, its analysis and its drawing timed apart.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_sweep.py [--repeats N] [--against DIR]

The window is built offscreen at 1600×1000 with the square fp16 GEMM of
bench_gui.py (gemm(M=4096, N=4096, K=4096, dtype=fp16) on the default device),
the Sweep tab shown, `sweep_scene.SWEEP_POINTS = 10000` and M=N=K swept over
2^10..2^30, as bench_gui.py's row "sweep recompute + redraw, 10,000 sizes"
does. Rows (medians of N runs):

1. analysis: `workbench.model.analysis.sweep()` over the very sizes the view asks
   for (every term, the refused sizes included);
2. drawing: the view's `refresh()` with that analysis already made (sweep()
   answers from a cache for the timing), then the plot painted: the lines,
   the shading, the limiter mark, the caption;
3. the whole, painted: `refresh()` + `widget.viewport().repaint()`, as
   bench_gui.py times it now (target ≤ 50 ms); each run must have painted
   the plot (a paint event on the viewport);
4. the whole as bench_gui.py timed it before: `refresh()` +
   `widget.repaint()`. A PlotWidget is a QGraphicsView, and repainting the
   view does not paint its viewport, where the scene is drawn: the plot's
   paint waited for the event loop, outside the timing (no target).

`--against DIR` runs the same script on another source tree (say an export
of `main`) in a child process right after this one and prints each row's
ratio, so both sides are measured back to back under the same load; the
1-minute load average before and after is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PERF_WORKBENCH_DATA_DIR", tempfile.mkdtemp(prefix="workbench-bench-data-"))

POINTS = 10_000
DECLARATION = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
TARGET_S = 0.050


def measure(repeats: int) -> dict[str, float]:
    """Medians in seconds of the three rows, on the workbench this interpreter imports."""
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp(prefix="workbench-bench-"))
    import numpy as np

    from window_bench import PaintCounter, shown_window

    from workbench.scenes import sweep_scene

    app, window = shown_window()
    window.document.edit_declaration(0, DECLARATION)
    sweep_scene.SWEEP_POINTS = POINTS
    view = window.sweep
    window.tabs.setCurrentWidget(view)
    view.low.setValue(10)
    view.high.setValue(30)
    app.processEvents()
    view.refresh()
    view.widget.repaint()
    swept = len(getattr(view, "sizes", view.bound_line.getData()[0]))  # (a tree whose view keeps no `sizes`: NaN drawn)
    assert swept == POINTS, f"the view swept {swept} sizes, not {POINTS}"

    # The analysis the view asks for: the same call with the same arguments (recorded from the view).
    calls: list[tuple[tuple, dict]] = []
    real_sweep = sweep_scene.sweep

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((args, kwargs))
        return real_sweep(*args, **kwargs)

    sweep_scene.sweep = recording
    view.refresh()
    sweep_scene.sweep = real_sweep
    (args, kwargs), = calls
    analysis_times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = real_sweep(*args, **kwargs)
        analysis_times.append(time.perf_counter() - start)
    assert int(np.count_nonzero(result.valid)) > 0

    painted = PaintCounter()
    viewport = view.widget.viewport()
    viewport.installEventFilter(painted)

    def timed(paint) -> list[float]:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(repeats):
            before = painted.count
            start = time.perf_counter()
            view.refresh()
            paint()
            times.append(time.perf_counter() - start)
            if paint == viewport.repaint:
                assert painted.count > before, "the plot was not painted"
            app.processEvents()  # what the refresh left for the event loop, outside the timing
        return times

    # Drawing: refresh() with the analysis made already, then the paint.
    sweep_scene.sweep = lambda *a, **k: result
    drawing_times = timed(viewport.repaint)
    sweep_scene.sweep = real_sweep
    whole_times = timed(viewport.repaint)
    view_only_times = timed(view.widget.repaint)
    window.close()
    window.wait_for_workers()
    return {
        "analysis": statistics.median(analysis_times),
        "drawing": statistics.median(drawing_times),
        "whole": statistics.median(whole_times),
        "view only": statistics.median(view_only_times),
    }


ROWS = (
    ("analysis: sweep(), 10,000 sizes", "analysis", None),
    ("drawing: refresh() with the analysis made, plot painted", "drawing", None),
    ("sweep recompute + redraw, 10,000 sizes (plot painted)", "whole", TARGET_S),
    ("the same, view repainted without its plot (bench_gui before)", "view only", None),
)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="runs per row (median reported)")
    parser.add_argument("--against", metavar="DIR", help="another source tree to time right after this one")
    parser.add_argument("--against-repeats", type=int, default=5, help="runs per row for --against (a slow tree)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the child's answer to --against
    options = parser.parse_args()
    load_before = os.getloadavg()[0]
    here = measure(options.repeats)
    if options.json:
        import workbench

        print(json.dumps({**here, "source": str(Path(workbench.__file__).parent)}))
        return 0
    other = None
    if options.against:
        env = dict(os.environ, PYTHONPATH=str(Path(options.against).resolve()))
        child = subprocess.run(
            [sys.executable, __file__, "--json", "--repeats", str(options.against_repeats)],
            capture_output=True, text=True, env=env, cwd=options.against, timeout=1800,
        )
        if child.returncode != 0:
            raise SystemExit(f"the run against {options.against} failed:\n{child.stderr}")
        other = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"against: workbench from {other['source']}")
    load_after = os.getloadavg()[0]
    import workbench

    print(f"workbench from {Path(workbench.__file__).parent}; load average (1 min) {load_before:.2f} before, {load_after:.2f} after")
    width = max(len(name) for name, *_ in ROWS)
    header = f"{'benchmark'.ljust(width)}  {'median':>10}  {'target':>9}  ok "
    if other is not None:
        header += f"  {'against':>10}  {'ratio':>7}"
    print(header)
    failed = False
    for name, key, target in ROWS:
        line = f"{name.ljust(width)}  {_ms(here[key]):>10}  "
        if target is None:
            line += f"{'—':>9}     "
        else:
            ok = here[key] <= target
            failed |= not ok
            line += f"{'≤ ' + _ms(target):>9}  {'yes' if ok else 'NO ':<3}"
        if other is not None:
            line += f"  {_ms(other[key]):>10}  {other[key] / here[key]:>6.0f}×"
        print(line)
    print(f"{options.repeats} runs per row here" + (f", {options.against_repeats} against {options.against}" if other else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
