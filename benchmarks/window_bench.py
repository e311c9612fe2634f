"""What the window benchmarks share: the window as they open it, a paint counter, the 20 labelled operations.

Imported by bench_gui.py, bench_sweep.py and bench_label_layout.py (each run as a script, so this folder is on
`sys.path`) after they have pointed QSettings at a scratch folder. The workbench it drives is whichever the
interpreter imports (`--against DIR` runs put another tree first on PYTHONPATH).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect

SCREEN = QRect(0, 0, 1600, 1000)  # the offscreen screen is 800×800; presentation mode keeps the window within it


class PaintCounter(QObject):
    """Counts the paint events of the widget it filters: a timed run must have painted what it claims to time."""

    count = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def settle(app: Any, rounds: int = 20) -> None:
    """Let the window lay itself out and paint: events delivered `rounds` times, 10 ms apart."""
    for _ in range(rounds):
        app.processEvents()
        time.sleep(0.01)


def shown_window(settled: bool = True) -> tuple[Any, Any]:
    """The application and its main window, shown at 1600×1000 as on such a screen, with no GPU detected and
    closing never stopped by the unsaved-changes question; `settled`: laid out, painted and detection done.

    Autosaves go to a scratch folder: a benchmark neither writes into the user's data folder nor stops at the
    offer to recover what an interrupted run left there."""
    import os
    import tempfile

    from workbench.documents.autosave import DATA_DIR_VARIABLE
    from workbench.model.devices.nvml import NO_DRIVER, Detection
    from workbench.gui.app import build_window, ensure_application
    from workbench.gui.session_io import DISCARD

    os.environ.setdefault(DATA_DIR_VARIABLE, tempfile.mkdtemp(prefix="workbench-bench-data-"))
    app = ensure_application()
    window = build_window(detect=lambda: Detection(NO_DRIVER, "benchmark"))
    window.session_io.ask_unsaved_changes = lambda action: DISCARD
    window.available_screen = lambda: SCREEN
    window.resize(SCREEN.width(), SCREEN.height())
    window.show()
    if settled:
        settle(app)
        window.wait_for_workers()
    return app, window


def add_twenty_labelled(window: Any) -> None:
    """19 more GEMMs beside the first, with short names, as a presenter names them: at presentation size the
    automatic names ("gemm 1987×2048×1536 fp16") of 20 operations do not fit a 1600×1000 window's plot, and every
    label would go to the legend instead. The first keeps its automatic name (an edit renames it too)."""
    from workbench.documents.session import OperationEntry

    for size in range(19):
        window.document.add_operation(OperationEntry.automatic(f"gemm(M={256 + 173 * size}, N=2048, K={128 * (size + 1)}, dtype=fp16)"))
    for index in range(1, 20):
        window.document.rename_operation(index, f"op {index + 1}")
    window.document.select(0)
    window.tabs.setCurrentWidget(window.roofline)


def reference_seconds() -> float:
    """The machine's speed now: a fixed pure-Python loop (a million additions), median of 5. This shared 2-core
    machine's speed swings by up to 2× within minutes; the row shows, beside each run, how fast the machine was."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        total = 0
        for number in range(1_000_000):
            total += number
        times.append(time.perf_counter() - start)
    return statistics.median(times)
