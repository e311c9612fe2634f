"""Benchmarks of devices side by side (a script, not a test): prints medians against the targets.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_compare.py

- compare_session(): 10 operations × 5 devices (50 analyses), cold  target ≤ 100 ms
- the same after one operation was edited (5 analyses, cache kept)  target ≤ 16 ms
- an edit with the Compare tab in front (its refresh and the window's repaint), against the same
  edit with the Roofline tab in front                                 target ≤ 1.5 × the Roofline's
  (the Compare tab redraws on every edit while it is the visible tab)
- match_device() of an NVML name with its memory size                target ≤ 1 ms
- reading this machine's CPU from /proc and /sys (uncached)          target ≤ 20 ms
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Callable

# a throw-away data folder: the benchmark's window must neither autosave into nor recover from the user's
os.environ.setdefault("PERF_WORKBENCH_DATA_DIR", tempfile.mkdtemp(prefix="workbench-bench-data-"))

OPERATIONS = [
    ("GEMM 4096³ fp16", "gemm(M=4096, N=4096, K=4096, dtype=fp16)"),
    ("GEMM 4096³ int8", "gemm(M=4096, N=4096, K=4096, dtype=int8)"),
    ("GEMM 8192×1024×4096 bf16", "gemm(M=8192, N=1024, K=4096, dtype=bf16)"),
    ("vector add", "add(n=2**24, dtype=fp32)"),
    ("triad fp64", "triad(n=2**26, dtype=fp64)"),
    ("softmax", "softmax(rows=4096, cols=32768, dtype=fp16)"),
    ("sum", "reduce(n=2**28, dtype=fp32)"),
    ("GEMM 1024³ fp32", "gemm(M=1024, N=1024, K=1024, dtype=fp32)"),
    ("GEMM 2048³ fp8", "gemm(M=2048, N=2048, K=2048, dtype=fp8)"),
    ("copy", "copy(n=2**27, dtype=fp16)"),
]
DEVICES = "h100-sxm,h200-sxm,a100-sxm-80gb,mi300x,host-cpu"


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from workbench.documents.device_compare import compare_session, resolve_devices
    from workbench.model.devices.catalogue import match_device
    from workbench.model.devices.host import read_host_cpu
    from workbench.documents.session import OperationEntry, Session

    session = Session(operations=[OperationEntry(name, decl) for name, decl in OPERATIONS])
    devices = resolve_devices(DEVICES)
    comparison = compare_session(session, devices)
    errors = [cell.error for cell in comparison.cells() if cell.error]
    if len(errors) > 1:  # the A100 has no fp8 rate (the CPU bounds int8 and fp8 on its fp32 units); nothing else fails
        raise SystemExit(f"bench_compare: unexpected errors: {errors}")
    compare_s = median_seconds(lambda: compare_session(session, devices), 30)
    cache: dict = {}
    compare_session(session, devices, cache=cache)
    sizes = iter(range(10**6))

    def after_one_edit() -> None:
        session.operations[3].declaration = f"add(n={2**20 + next(sizes)}, dtype=fp32)"
        compare_session(session, devices, cache=cache)

    edit_s = median_seconds(after_one_edit, 50)
    match_s = median_seconds(lambda: match_device("NVIDIA A100 80GB PCIe", 81_920 * 2**20), 2000)
    host_s = median_seconds(read_host_cpu, 50)

    from workbench.gui.app import build_window, ensure_application
    from workbench.gui.compare_view import SESSION_DEVICE
    from workbench.model.devices.nvml import NO_DRIVER, Detection

    from PySide6.QtCore import QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp(prefix="workbench-bench-"))
    app = ensure_application()
    window = build_window(detect=lambda: Detection(NO_DRIVER, "benchmark"))
    window.resize(1600, 1000)
    window.show()
    window.document.replace_session(session)
    window.tabs.setCurrentWidget(window.compare)
    view = window.compare
    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb", "mi300x", "host-cpu"])
    app.processEvents()

    def refresh() -> None:
        window.document.edit_declaration(3, f"add(n={2**20 + next(sizes)}, dtype=fp32)")  # the tab refreshes itself
        app.processEvents()

    refresh_s = median_seconds(refresh, 30)
    window.tabs.setCurrentWidget(window.roofline)
    app.processEvents()
    roofline_s = median_seconds(refresh, 30)  # the same edit with the Roofline tab in front, for comparison
    window.document.undo_stack.setClean()  # closing asks nothing
    window.close()

    rows: list[tuple[str, float, float | None]] = [
        ("compare_session, 10 ops × 5 devices, cold", compare_s, 100e-3),
        ("compare_session after one edit (cache kept)", edit_s, 16e-3),
        ("edit with the Compare tab in front", refresh_s, 1.5 * roofline_s),
        ("same edit, Roofline tab in front (reference)", roofline_s, None),
        ("match_device with memory size", match_s, 1e-3),
        ("read this machine's CPU (uncached)", host_s, 20e-3),
    ]
    print(f"{'benchmark':46s} {'median':>10s} {'target':>10s}  ratio")
    failed = False
    for name, value, target in rows:
        if target is None:
            print(f"{name:46s} {value * 1e3:8.3f} ms")
            continue
        ratio = value / target
        failed |= ratio > 1
        print(f"{name:46s} {value * 1e3:8.3f} ms {target * 1e3:8.1f} ms  {ratio:5.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
