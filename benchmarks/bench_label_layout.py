"""Benchmark of a fresh label layout (workbench.scenes.label_layout), on inputs recorded from the window.

    .venv/bin/python benchmarks/bench_label_layout.py                      # this tree
    .venv/bin/python benchmarks/bench_label_layout.py --against /tmp/main  # and another tree, back to back
    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python benchmarks/bench_label_layout.py --record

The window lays its labels out again on every edit that moves a point, and the
layout cache only answers inputs it has seen, so what an edit pays is a fresh
layout. The inputs are what the roofline view hands `layout_labels` in a
1600×1000 window (the view's width and height, roofs, marks, roof labels and
point labels, in pixels), recorded with `--record` (under a 1600×1000 virtual display, as
`scripts/screenshots.py` takes its shots) into
`benchmarks/label_layout_inputs.json`:

- the batched-GEMM sweep example (6 operations) at normal and at presentation
  size;
- 20 labelled operations (the set `bench_gui.py` edits: the default GEMM and
  19 more with short names) at normal and at presentation size;
- and, recorded once by wrapping `roofline_scene.layout_labels` (kept when
  `--record` rewrites the file): the batched-GEMM example at presentation
  size as `scripts/screenshots.py --only presentation` shows it ("screenshot")
  and as `tests/gui/test_presentation.py`'s 1600×1000 test lays it out
  ("test window").

Beyond 12 operation labels the layout gives each the first free place
(`UNTANGLED_LABELS`), so the 20-label cases time that path.

Each case is laid out `--runs` times with the cache emptied before each; the
median (and the fastest) in milliseconds are printed. With `--against DIR`
the `workbench.scenes.label_layout` of DIR (a checkout or `git archive` of
main, say) is timed on the same inputs, alternating run by run with this
tree's so that the machine's load falls on both alike, and the ratio of the
medians is printed. The load average is printed before and after: on a
shared machine, a figure taken under load is not a figure. Target: ≤ 5 ms
per fresh layout for each case (the issue's edit → repaint is ≤ 16 ms, of
which the layout must be a small part).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
INPUTS = Path(__file__).resolve().parent / "label_layout_inputs.json"
TARGET_MS = 5.0


def load_module(tree: Path) -> ModuleType:
    """`workbench.scenes.label_layout` of a source tree (a module or a package; it imports only NumPy), imported apart from
    any other tree's: the tree's `workbench` goes first on the path while it loads, then leaves `sys.modules` as it
    found it."""
    if not (tree / "workbench" / "label_layout.py").is_file() and not (tree / "workbench" / "label_layout").is_dir():
        raise SystemExit(f"no label layout in {tree / 'workbench'}")
    ours = {key: module for key, module in sys.modules.items() if key.split(".")[0] == "workbench"}
    for key in ours:
        del sys.modules[key]
    sys.path.insert(0, str(tree))
    try:
        return importlib.import_module("workbench.scenes.label_layout")
    finally:
        sys.path.remove(str(tree))
        for key in [key for key in sys.modules if key.split(".")[0] == "workbench"]:
            del sys.modules[key]
        sys.modules.update(ours)


def arguments(module: ModuleType, case: dict) -> tuple:
    """The recorded inputs as the module's own types."""
    roofs = [tuple(r) for r in case["roofs"]]
    marks = [tuple(m) for m in case["marks"]]
    roof_labels = [
        module.RoofLabel(r["key"], r["width"], r["height"], tuple(r["roof"]), r["from_left"], r["short_width"])
        for r in case["roof_labels"]
    ]
    point_labels = [module.PointLabel(p["key"], p["width"], p["height"], p["x"], p["y"]) for p in case["point_labels"]]
    return case["width"], case["height"], roofs, marks, roof_labels, point_labels


def fresh_ms(module: ModuleType, args: tuple) -> float:
    module.clear_layout_cache()
    start = time.perf_counter()
    module.layout_labels(*args)
    return (time.perf_counter() - start) * 1000.0


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def bench(cases: dict, runs: int, against: Path | None) -> int:
    this = load_module(ROOT)
    other = load_module(against) if against is not None else None
    print(f"load average before: {load_average()}  ({os.cpu_count()} CPUs)")
    print(f"fresh layouts, median of {runs} (fastest in brackets), ms; target ≤ {TARGET_MS:g} ms")
    over = 0
    for name, case in cases.items():
        args_this = arguments(this, case)
        args_other = arguments(other, case) if other is not None else None
        fresh_ms(this, args_this)  # warm: NumPy's first calls
        if other is not None:
            fresh_ms(other, args_other)
        times_this, times_other = [], []
        for _ in range(runs):
            times_this.append(fresh_ms(this, args_this))
            if other is not None:
                times_other.append(fresh_ms(other, args_other))
        median = statistics.median(times_this)
        over += median > TARGET_MS
        line = f"  {name:<34} this {median:7.2f} ({min(times_this):6.2f})"
        if other is not None:
            median_other = statistics.median(times_other)
            line += f"   against {median_other:7.2f} ({min(times_other):6.2f})   ratio {median_other / median:5.1f}×"
        print(line + ("" if median <= TARGET_MS else "   over target"))
    print(f"load average after:  {load_average()}")
    return 1 if over else 0


def record() -> dict:
    """Open the window offscreen (1600×1000, as bench_gui.py), and record what the roofline view asks of the layout."""
    if not os.environ.get("DISPLAY"):  # under xvfb-run, as the screenshot script: the window gets its 1600×1000
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("PERF_WORKBENCH_DATA_DIR", tempfile.mkdtemp(prefix="workbench-bench-data-"))
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp(prefix="workbench-bench-"))
    import window_bench
    from window_bench import add_twenty_labelled, shown_window

    from workbench.scenes import roofline_scene

    asked: list[tuple] = []
    layout_labels = roofline_scene.layout_labels

    def recording(*args):  # type: ignore[no-untyped-def]
        asked.append(args)
        return layout_labels(*args)

    roofline_scene.layout_labels = recording
    app, window = shown_window(settled=False)
    window.move(0, 0)

    def settle() -> None:
        window_bench.settle(app)

    def last_asked() -> dict:
        asked.clear()
        window.roofline.refresh()
        window.roofline._place_labels()
        width, height, roofs, marks, roof_labels, point_labels = asked[-1]
        return {
            "width": width,
            "height": height,
            "roofs": [list(r) for r in roofs],
            "marks": [list(m) for m in marks],
            "roof_labels": [
                {"key": r.key, "width": r.width, "height": r.height, "roof": list(r.roof), "from_left": r.from_left, "short_width": r.short_width}
                for r in roof_labels
            ],
            "point_labels": [{"key": p.key, "width": p.width, "height": p.height, "x": p.x, "y": p.y} for p in point_labels],
        }

    cases = {}
    settle()
    window.wait_for_workers()
    # 20 labelled operations first, on the start-up session (as bench_gui.py builds them)
    add_twenty_labelled(window)
    twenty = {}
    for presentation in (False, True):
        window.set_presentation(presentation)
        settle()
        twenty[f"20 labelled, {'presentation' if presentation else 'normal'}"] = last_asked()
    window.set_presentation(False)
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    for presentation in (False, True):
        window.set_presentation(presentation)
        settle()
        cases[f"batched GEMM, {'presentation' if presentation else 'normal'}"] = last_asked()
    cases.update(twenty)
    window.set_presentation(False)
    window.close()
    window.wait_for_workers()
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help=f"record the inputs from the window into {INPUTS.name}")
    parser.add_argument("--against", type=Path, help="a source tree (a checkout of main) to time on the same inputs")
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--only", help="only the cases whose name contains this")
    options = parser.parse_args()
    if options.record:
        kept = json.loads(INPUTS.read_text()) if INPUTS.exists() else {}
        cases = {**kept, **record()}  # cases recorded elsewhere (see the module's text) are kept
        INPUTS.write_text(json.dumps(cases, indent=1) + "\n")
        for name, case in cases.items():
            print(f"recorded {name}: {len(case['roof_labels'])} roof labels, {len(case['point_labels'])} point labels")
        return 0
    cases = json.loads(INPUTS.read_text())
    if options.only:
        cases = {name: case for name, case in cases.items() if options.only in name}
    return bench(cases, options.runs, options.against)


if __name__ == "__main__":
    raise SystemExit(main())
