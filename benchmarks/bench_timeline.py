"""Benchmark of the Timeline page with several thousand operations: pan and zoom frame times.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_timeline.py [OPERATIONS]

A step of OPERATIONS operations (default 6,000: 24 layers of forward, backward and optimizer ops
on a compute stream, and a gradient all-reduce per layer on a communication stream, as a traced
data-parallel training step has) is laid out on an H100 SXM in the Timeline page, shown offscreen
at 1600×1000. Then:

1. Pan: the step plot's x range moved by a tenth of its width, and the plot painted synchronously
   (`repaint()` of its viewport: the frame a drag produces). Median and maximum of 60 frames;
   target ≤ 16 ms a frame.
2. Zoom: the x range narrowed by 20 % about its centre, then widened back, each painted. Median and
   maximum of 60 frames; target ≤ 16 ms.
3. Whole step in view: the full range, painted. Median of 20.
4. For reference (no target): laying the step out and drawing it once, the what-if and
   where-the-time-goes tables filled.

Every figure is measured first for a step of 96 operations and then for the large one, in the same
window: on a loaded machine the ratio of the two medians says what the operation count adds to a
frame, apart from what painting the plot costs at all.

Frame times depend on the machine and its load: the script prints the load average beside them.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

LAYERS = 24
FRAMES = 60


def step_text(operations: int) -> str:
    """A data-parallel training step of about `operations` operations: per layer its forward ops, as many
    backward, an optimizer update, and an all-reduce of the layer's gradients on the comm stream."""
    per_layer = max(4, operations // LAYERS)
    lines = []
    previous = ""
    for layer in range(LAYERS):
        grads = []
        for index in range(per_layer - 1):
            name = f"layers.{layer}.op{index}.{'mm' if index % 3 == 0 else 'add'}"
            declaration = ("gemm(M=4096, N=4096, K=1024, dtype=bf16)" if index % 3 == 0
                           else "elementwise(n=2**22, inputs=2, outputs=1, flop_per_element=1, dtype=bf16)")
            after = f" after {previous}" if previous and index == 0 else ""
            lines.append(f"{name} = {declaration}{after}")
            previous = name
            grads.append(name)
        lines.append(f"layers.{layer}.grads.allreduce = allreduce(n=2**24, dtype=bf16, ranks=8) on comm after {previous}")
    return "\n".join(lines) + "\n"


def measure(view, app, text: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Lay `text` out in the page, then time pan, zoom and whole-step frames."""
    started = time.perf_counter()
    view.apply_text(text)  # the page is shown: it lays the step out and draws it at once
    app.processEvents()
    laid_out = time.perf_counter() - started
    timeline = view.timeline
    assert timeline is not None, "the step did not lay out"
    box = view.plot.getViewBox()
    viewport = view.plot.viewport()
    low, high = 0.0, timeline.step_time

    def frame(x0: float, x1: float) -> float:
        begun = time.perf_counter()
        box.setXRange(x0, x1, padding=0)
        app.processEvents()
        viewport.repaint()
        return time.perf_counter() - begun

    frame(low, high)
    width = (high - low) / 4  # a quarter of the step in view, as one looks at a few layers
    pans = [frame(low + width * 0.05 * i, low + width * (1 + 0.05 * i)) for i in range(FRAMES)]
    zooms = []
    for i in range(FRAMES // 2):
        centre = low + (high - low) * (i + 1) / (FRAMES // 2 + 1)
        zooms.append(frame(centre - width * 0.4, centre + width * 0.4))
        zooms.append(frame(centre - width * 0.5, centre + width * 0.5))
    whole = [frame(low, high) for _ in range(FRAMES // 3)]
    return {"operations": len(timeline.placed), "streams": len(timeline.plan.streams()), "laid_out": laid_out,
            "pan": pans, "zoom": zooms, "whole": whole}


def main() -> int:
    operations = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
    from PySide6.QtWidgets import QApplication

    from workbench.gui.document import Document
    from workbench.gui.timeline_view import TimelineView

    app = QApplication.instance() or QApplication([])
    document = Document()
    document.set_device("h100-sxm")
    view = TimelineView(document)
    view.resize(1600, 1000)
    view.show()
    app.processEvents()
    # The same frames for a step of LAYERS × 4 operations first: on a loaded machine the ratio of the two
    # says what the operation count adds, apart from what painting the plot costs at all.
    small = measure(view, app, step_text(LAYERS * 4))
    large = measure(view, app, step_text(operations))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Timeline frames (load average {load:.1f} on {os.cpu_count()} CPUs); medians, max in brackets")
    for result in (small, large):
        print(f"  {result['operations']:,} operations on {result['streams']} streams: laid out and drawn in "
              f"{result['laid_out'] * 1e3:,.0f} ms")
        for label in ("pan", "zoom", "whole"):
            times = result[label]
            median = statistics.median(times)
            print(f"    {label:<6} {median * 1e3:7.2f} ms  (max {max(times) * 1e3:7.2f} ms)  "
                  f"target ≤ 16 ms: {'met' if median <= 0.016 else 'NOT met'}")
    for label in ("pan", "zoom", "whole"):
        ratio = statistics.median(large[label]) / statistics.median(small[label])
        print(f"  {label}: {large['operations']:,} operations ÷ {small['operations']:,}: {ratio:.2f}×")
    view.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
