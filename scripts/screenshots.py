"""Write PNG screenshots of the workbench window under docs/screenshots/.

Run it under a display at 1600×1000, as `make screenshots` does:

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/screenshots.py

The window uses a throw-away QSettings folder (your own settings are not
read or written) and a fixed "no NVIDIA driver" detection, so the pictures
are the same on every machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.errors import WorkbenchError

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1600, 1000


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found (NVML Shared Library Not Found)")


def settle(app: QApplication, seconds: float = 0.3) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def settle_window(app: QApplication, window: Any, seconds: float = 0.3, still: float = 0.3, limit: float = 10.0) -> None:
    """Settle, then go on until the window's geometry and its roofline's labels have stayed the same for `still`
    seconds (at most `limit` seconds in all): a picture taken after a fixed pause could catch the plot before a
    late relayout (a status bar growing a turn after larger text, a first turn at presentation size that takes
    most of a second) or labels held for a tidy-up that is still to come."""

    def state() -> tuple[Any, ...]:
        roofline = window.roofline
        view = roofline.plot.getViewBox()
        placed = roofline.label_layout
        legend = roofline.plot.legend
        return (
            window.size().toTuple(), window.statusBar().height(), window.tabs.size().toTuple(),
            view.width(), view.height(), view.viewRange(),
            placed.layout.placements if placed is not None else None,
            (legend.isVisible(), legend.pos().toTuple(), legend.width(), legend.height()) if legend is not None else None,
            roofline._tidy_timer.isActive(),
        )

    start = time.monotonic()
    settle(app, seconds)
    last, since = state(), time.monotonic()
    while time.monotonic() - start < limit and (time.monotonic() - since < still or window.roofline._tidy_timer.isActive()):
        app.processEvents()
        time.sleep(0.02)
        now = state()
        if now != last:
            last, since = now, time.monotonic()
    if time.monotonic() - start >= limit:
        print(f"screenshots: the window was still changing after {limit:g} s", file=sys.stderr)


def save(widget: QWidget, path: Path) -> None:
    image = widget.grab()
    if not image.save(str(path), "PNG"):
        raise SystemExit(f"screenshots: could not write {path}")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"wrote {shown} ({image.width()}×{image.height()})")


def recovery_dialog(window: QWidget, app: QApplication, path: Path) -> None:
    """Leave two autosaves as killed processes would, and show the question the next start asks."""
    from workbench.documents.autosave import Autosaver, find_recoverable
    from workbench.documents.examples import load_example
    from workbench.gui.session_io import RecoveryDialog

    lab = load_example("gemm-4096-fp16")
    lab.operations[0].declaration = "gemm(M=8192, N=4096, K=4096, dtype=fp16)"
    Autosaver(pid=2_000_000_001).write(load_example("attention-naive-vs-fused"))
    time.sleep(0.01)
    Autosaver(pid=2_000_000_002).write(lab, str(Path.home() / "lab" / "gemm-bounds.json"))
    dialog = RecoveryDialog(find_recoverable(), window)
    dialog.show()
    settle(app)
    save(dialog, path)
    dialog.close()


def wait_until(app: QApplication, done: Callable[[], bool], what: str, seconds: float = 180.0) -> None:
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() > end:
            raise SystemExit(f"screenshots: gave up waiting for {what}")
        settle(app, 0.05)


def measurement_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """A CPU run of the vector add (2^24 fp32) in the Measurement tab; the CPU calibrated; with a
    1024³ fp32 GEMM measured beside it, the roofline with measured points; a size sweep over its bounds."""
    from workbench.documents.session import OperationEntry

    window.open_example("vector-add")
    tab = window.measurement
    window.tabs.setCurrentWidget(tab)
    wait_until(app, lambda: tab.backends is not None, "the backend check")
    tab.select_backend("numpy")
    tab.iterations.setValue(50)
    if not tab.start(ask=False):  # known short runs: no question (long_run_question shows it)
        raise SystemExit(f"screenshots: the run did not start: {tab.message.text()}")
    wait_until(app, lambda: not tab.running, "the vector-add run")
    if not window.document.session.runs:
        raise SystemExit(f"screenshots: the vector-add run failed: {tab.message.text()}")
    tab.select_run(0)
    settle(app)
    save(window, out / "measurement-tab.png")

    dialog = tab.open_calibration()
    dialog.quick.setChecked(True)
    dialog.start()
    wait_until(app, lambda: not dialog.running, "the calibration")
    settle(app)
    save(dialog, out / "calibration.png")
    dialog.accept()
    window.document.add_operation(OperationEntry("GEMM 1024³ fp32", "gemm(M=1024, N=1024, K=1024, dtype=fp32)"))
    if not tab.start(ask=False):  # known short runs: no question (long_run_question shows it)
        raise SystemExit(f"screenshots: the GEMM run did not start: {tab.message.text()}")
    wait_until(app, lambda: not tab.running, "the GEMM run")
    window.tabs.setCurrentWidget(window.roofline)
    settle(app)
    save(window, out / "roofline-measured.png")

    # a size sweep of the vector add, 2^14 … 2^24, over its bounds (a fresh copy of the example)
    window.open_example("vector-add")
    window.tabs.setCurrentWidget(tab)
    tab.select_backend("numpy")
    tab.sweep_box.setChecked(True)
    tab.set_sweep_range(14, 24)
    if not tab.start(ask=False):  # known short runs: no question (long_run_question shows it)
        raise SystemExit(f"screenshots: the sweep did not start: {tab.message.text()}")
    wait_until(app, lambda: not tab.running, "the sweep")
    tab.sweep_box.setChecked(False)
    window.tabs.setCurrentWidget(window.sweep)
    window.sweep.low.setValue(10)
    window.sweep.high.setValue(28)
    settle(app)
    save(window, out / "bound-vs-size-measured.png")


def outside_append_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """A session open in the window while a terminal measures into the same file (`measure --save-to`): the
    terminal's run and its operation join the roofline at once, and the status bar says where they came from."""
    import subprocess

    folder = Path(tempfile.mkdtemp(prefix="workbench-screenshots-lab-"))
    path = folder / "lab.json"

    def terminal(declaration: str) -> None:
        command = [sys.executable, "-m", "workbench", "measure", declaration, "--backend", "numpy",
                   "--iterations", "30", "--save-to", str(path)]
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if done.returncode != 0:
            raise SystemExit(f"screenshots: the terminal's measurement failed: {done.stderr.strip()}")

    if window.document.detection is None:  # a detection still pending when the script began was stopped
        window.start_detection()
    wait_until(app, lambda: window.document.detection is not None, "the GPU detection")
    terminal("add(n=2**22, dtype=fp32)")
    window.open_session(str(path))
    window.tabs.setCurrentWidget(window.roofline)
    settle(app)
    terminal("gemm(M=512, N=512, K=512, dtype=fp32)")
    wait_until(app, lambda: len(window.document.session.runs) == 2, "the terminal's run in the window", 60)
    settle_window(app, window)
    save(window, out / "outside-append.png")


def long_run_question(window: Any, app: QApplication, path: Path) -> None:
    """Examples ▸ Worked example ▸ Measurement ▸ Run on the CPU: the estimate, and the question before hours
    of NumPy fp16 GEMM, offering a smaller size and fp32. The screen is grabbed: the dialog over the window."""
    window.open_example("gemm-4096-fp16")
    tab = window.measurement
    window.tabs.setCurrentWidget(tab)
    wait_until(app, lambda: tab.backends is not None, "the backend check")
    tab.select_backend("numpy")
    tab.iterations.setValue(50)
    if tab.start() or tab.question is None:
        raise SystemExit("screenshots: the worked example on the CPU was not asked about")
    settle(app, 0.5)
    image = app.primaryScreen().grabWindow(0, 0, 0, WIDTH, HEIGHT)
    if not image.save(str(path), "PNG"):
        raise SystemExit(f"screenshots: could not write {path}")
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({image.width()}×{image.height()})")
    tab.question.choose(None)
    settle(app)


def profile_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """Nsight Compute's raw page of a vector add and a 4096³ fp16 GEMM on an H200, imported and matched:
    the matching dialog, the Profile tab comparing the GEMM kernel with its declaration, and the
    roofline with the imported kernels as stars linked to their operations."""
    from workbench.documents.session import OperationEntry

    window.new_session()
    window.document.set_device("h200-sxm")
    window.document.add_operation(OperationEntry("vector add", "add(n=2**24, dtype=fp32)"))
    window.document.select(0)
    window.import_profile(str(ROOT / "tests" / "data" / "ncu_raw.csv"))
    end = time.monotonic() + 60
    while window.profile_importer.dialog is None:
        if time.monotonic() > end:
            raise SystemExit(f"screenshots: the profile import did not reach its dialog ({window.banner.text()})")
        settle(app, 0.05)
    dialog = window.profile_importer.dialog
    settle(app)
    save(dialog, out / "profile-match-dialog.png")
    dialog.accept()
    window.tabs.setCurrentWidget(window.profile_view)
    settle(app)
    save(window, out / "profile-comparison.png")
    window.tabs.setCurrentWidget(window.roofline)
    settle(app)
    save(window, out / "roofline-profiled.png")

    # A file whose every number reads either way: the dialog says the reading was assumed, and offers the comma.
    window.import_profile(str(ROOT / "tests" / "data" / "formats" / "ncu_details_all_ambiguous.csv"))
    end = time.monotonic() + 60
    while window.profile_importer.dialog is None:
        if time.monotonic() > end:
            raise SystemExit(f"screenshots: the second import did not reach its dialog ({window.banner.text()})")
        settle(app, 0.05)
    dialog = window.profile_importer.dialog
    settle(app)
    save(dialog, out / "profile-match-dialog-assumed.png")
    dialog.reject()
    settle(app)


def roof_label_screenshot(window: Any, app: QApplication, out: Path) -> None:
    """An fp32 GEMM on the H100 SXM: it sits on the roof FP32 shares with FP64 tensor cores (67 TFLOP/s), and the
    highlighted roof's label names FP32, the path the GEMM uses, first."""
    window.open_example("gemm-4096-fp16")
    window.document.edit_declaration(0, "gemm(M=4096, N=4096, K=4096, dtype=fp32)")
    window.document.rename_operation(0, "Square GEMM, 4096³ FP32")
    window.document.set_notes(0, "An FP32 GEMM: on the H100 SXM it sits on the 67 TFLOP/s roof that FP32 shares with "
                                 "FP64 tensor cores; the highlighted roof names FP32 first.")
    window.document.set_device("h100-sxm")
    window.document.reset_rates()  # the datasheet's figures, not the worked example's entered ones
    window.tabs.setCurrentWidget(window.roofline)
    settle_window(app, window)
    save(window, out / "fp32-gemm-roof-label.png")


def model_size_screenshot(window: Any, app: QApplication, out: Path) -> None:
    """A session the size of a model: 1,000 operations (GEMMs, adds, softmaxes, RMSNorms of as many shapes) on the
    roofline, one selected: it and the ten that take the most time are labelled, the legend counts the others."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scale_inputs import write_session

    folder = Path(tempfile.mkdtemp(prefix="workbench-screenshots-model-"))
    window.open_session(str(write_session(folder / "model-1000.json", 1000)))
    window.document.select(417)
    window.tabs.setCurrentWidget(window.roofline)
    settle_window(app, window)
    save(window, out / "roofline-1000-operations.png")


def run_device_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """Runs keep their own device: a CPU vector add shown while the session shows an H100 (table and roofline,
    the run in its own device's style), and a run faster than its device allows under a wrongly entered
    bandwidth (flagged in the table and on the roofline); a Hopper profile in the CPU example."""
    window.open_example("vector-add")
    window.document.edit_declaration(0, "add(n=2**22, dtype=fp32)")
    tab = window.measurement
    window.tabs.setCurrentWidget(tab)
    wait_until(app, lambda: tab.backends is not None, "the backend check")
    tab.select_backend("numpy")
    tab.iterations.setValue(50)
    if not tab.start(ask=False):  # known short runs: no question (long_run_question shows it)
        raise SystemExit(f"screenshots: the run did not start: {tab.message.text()}")
    wait_until(app, lambda: not tab.running, "the vector-add run")
    window.document.set_device("h100-sxm")
    tab.select_run(0)
    settle(app)
    save(window, out / "measurement-cpu-run-h100-session.png")
    window.tabs.setCurrentWidget(window.roofline)
    settle(app)
    save(window, out / "roofline-cpu-run-h100-session.png")

    # back on this machine's CPU, with a bandwidth typed in a hundred times too low: the run now beats its own bound
    window.document.set_device("host-cpu")
    window.document.set_rate("hbm", "0.5 GB/s")
    window.tabs.setCurrentWidget(tab)
    tab.select_run(0)
    settle(app)
    save(window, out / "measurement-impossible-run.png")
    window.tabs.setCurrentWidget(window.roofline)
    settle(app)
    save(window, out / "roofline-impossible-run.png")

    # a Hopper GPU's Nsight Compute export (it states compute capability 9.0) imported into the CPU example:
    # the kernel is compared with the GPU it ran on, not with the CPU the session shows
    window.open_example("vector-add")
    window.import_profile(str(ROOT / "tests" / "data" / "ncu_details.csv"))
    wait_until(app, lambda: window.profile_importer.dialog is not None, "the profile import")
    window.profile_importer.dialog.accept()
    wait_until(app, lambda: not window.profile_importer.busy, "the profile import")
    window.tabs.setCurrentWidget(window.profile_view)
    settle(app)
    save(window, out / "profile-hopper-in-cpu-session.png")


def levels_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The Profile tab's levels: a 4096³ fp16 GEMM kernel's L2 and L1 points counted as Nsight Compute's
    hierarchical-roofline sections count them and as NERSC's method does, each labelled with its method."""
    window.new_session()  # its one operation: the 4096³ fp16 GEMM
    window.document.set_device("h100-sxm")
    window.document.select(0)
    window.import_profile(str(ROOT / "tests" / "data" / "ncu_raw_levels_h100.csv"))
    wait_until(app, lambda: window.profile_importer.dialog is not None, "the profile import")
    window.profile_importer.dialog.choose(0, 0)
    window.profile_importer.dialog.accept()
    wait_until(app, lambda: not window.profile_importer.busy, "the profile import")
    window.tabs.setCurrentWidget(window.profile_view)
    window.profile_view.splitter.setSizes([150, 700])
    settle(app)
    save(window, out / "profile-levels.png")


def compare_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The Compare tab: a 4096³ fp16 GEMM, the same GEMM in int8 and a 2^24 fp32 vector add on the
    session's H100 SXM, an H200 SXM and an A100 SXM 80 GB; the rooflines of four devices overlaid for the
    memory-bound vector add; and this machine's CPU beside the generic CPU after a real NumPy run."""
    from workbench.model.devices.catalogue import HOST_CPU_KEY
    from workbench.gui.compare_view import SESSION_DEVICE
    from workbench.documents.session import OperationEntry

    window.new_session()
    window.document.set_device("h100-sxm")
    window.document.rename_operation(0, "GEMM 4096³ fp16")
    window.document.add_operation(OperationEntry("GEMM 4096³ int8", "gemm(M=4096, N=4096, K=4096, dtype=int8)"))
    window.document.add_operation(OperationEntry("vector add", "add(n=2**24, dtype=fp32)"))
    view = window.compare
    window.tabs.setCurrentWidget(view)
    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb"])
    window.document.select(0)
    settle(app)
    save(window, out / "compare-devices.png")

    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb", "mi300x"])
    window.document.select(2)
    settle(app)
    save(view, out / "compare-rooflines.png")

    # a real NumPy run of the vector add, then this machine's CPU beside the generic stand-in
    tab = window.measurement
    window.document.select(2)
    window.tabs.setCurrentWidget(tab)
    wait_until(app, lambda: tab.backends is not None, "the backend check")
    tab.select_backend("numpy")
    tab.iterations.setValue(50)
    if not tab.start():
        raise SystemExit(f"screenshots: the run did not start: {tab.message.text()}")
    wait_until(app, lambda: not tab.running, "the vector-add run")
    window.tabs.setCurrentWidget(view)
    view.set_chosen([HOST_CPU_KEY, "cpu-generic", SESSION_DEVICE])
    window.document.select(2)
    settle(app)
    save(window, out / "compare-this-machine.png")


def timeline_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The Step timeline tab: the data-parallel step example on an H100 SXM (ar2 exposed, shaded), the
    same step with the optimizer update made 4× faster in the what-if column, and a bad line shown inline."""
    from workbench.documents.examples import load_example

    window.document.replace_session(load_example("data-parallel-step"))
    view = window.timeline
    window.tabs.setCurrentWidget(view)
    settle(app)
    save(window, out / "timeline-step.png")
    model = view.table.whatif
    model.setData(model.index(5, 4), 4.0)  # as the speed-up column's spin box commits it
    settle(app)
    save(window, out / "timeline-what-if.png")
    lines = view.editor.toPlainText().splitlines(keepends=True)
    lines[3] = lines[3].replace("ranks=8", "rank=8")
    view.editor.setPlainText("".join(lines))
    settle(app, 0.6)
    save(window, out / "timeline-error.png")
    trace_screenshots(window, app, out)


def trace_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The Timeline tab with an imported Nsight Systems trace (hand-made fixtures, tests/trace_fixtures.py):
    the data-parallel step timed by its trace, and the chapter's 4096³ fp16 GEMM (1.8 ms measured) beside its
    1.374 ms bound at the example's entered 100 TFLOP/s."""
    sys.path.insert(0, str(ROOT / "tests"))
    from trace_fixtures import CHAPTER_ROWS, data_parallel_rows, write_sqlite

    from workbench.documents.examples import load_example
    from workbench.profilers.trace_reader import read_trace

    folder = Path(tempfile.mkdtemp(prefix="workbench-screenshots-trace-"))
    view = window.timeline
    window.document.replace_session(load_example("data-parallel-step"))
    window.tabs.setCurrentWidget(view)
    settle(app)
    view._trace_read(read_trace(write_sqlite(folder / "data-parallel.sqlite", data_parallel_rows())))
    settle(app, 0.5)
    save(window, out / "timeline-trace.png")
    window.open_example("gemm-4096-fp16")
    window.tabs.setCurrentWidget(view)
    view.editor.setPlainText("# the chapter: one 4096³ fp16 GEMM, measured at 1.8 ms in an Nsight Systems trace\n"
                             "gemm = gemm(M=4096, N=4096, K=4096, dtype=fp16)\n")
    settle(app, 0.6)
    view._trace_read(read_trace(write_sqlite(folder / "chapter.sqlite", CHAPTER_ROWS)))
    settle(app, 0.5)
    save(window, out / "timeline-trace-gemm.png")


def torch_trace_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The Timeline tab with a real PyTorch profiler trace (../shared/real-profiles, read in place; skipped where
    absent): the MLP training step of tests/data/torch-mlp-gp100.step timed by its kernels, each beside its bound
    (the GP100 is not in the catalogue, so the bounds are a V100 PCIe's), and the where-the-time-goes table."""
    from workbench.profilers.torch_trace import read_torch_trace

    trace = ROOT.parent / "shared" / "real-profiles" / "torch-trace-train-mlp-gp100.json.gz"
    if not trace.is_file():
        print(f"skipped the PyTorch trace screenshots: {trace} is absent")
        return
    view = window.timeline
    window.tabs.setCurrentWidget(view)
    window.document.set_device("v100-pcie")
    view.editor.setPlainText((ROOT / "tests" / "data" / "torch-mlp-gp100.step").read_text())
    settle(app, 0.6)
    view._trace_read(read_torch_trace(trace))
    settle(app, 0.5)
    view.tables.setCurrentWidget(view.table)
    settle(app, 0.3)
    save(window, out / "timeline-torch-trace-times.png")  # each operation's traced time, its bound beside
    view.tables.setCurrentWidget(view.breakdown_view)
    view.breakdown_view.by.setCurrentIndex(view.breakdown_view.by.findData("module"))
    settle(app, 0.3)
    save(window, out / "timeline-torch-trace.png")


def gpt2_training_step() -> str | None:
    """GPT-2 small's training step (batch 8 × 1,024 per rank, AdamW, 8 data-parallel ranks, 25 MiB buckets) traced
    on the meta device (resources/models/gpt2-small.json); None, said why, without PyTorch or transformers."""
    try:
        from workbench.tracing.sources import TraceRequest, trace_request
    except ImportError as exc:
        print(f"skipped the traced-model screenshots: {exc}")
        return None
    request = TraceRequest("gpt2-small", batch=8, sequence=1024, backward=True, optimizer="adamw", data_parallel=8)
    try:
        return trace_request(request).text()
    except WorkbenchError as exc:  # no PyTorch or transformers here
        print(f"skipped the traced-model screenshots: {exc}")
        return None


def model_step_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """GPT-2 small's training step laid out on an H100 SXM: the Timeline with its gradient all-reduces on the comm
    stream, and where the time goes by kind and by module."""
    step = gpt2_training_step()
    if step is None:
        return
    view = window.timeline
    window.tabs.setCurrentWidget(view)
    window.document.set_device("h100-sxm")
    view.open_step(step)
    settle(app, 1.5)
    view.tables.setCurrentWidget(view.breakdown_view)
    view.breakdown_view.by.setCurrentIndex(view.breakdown_view.by.findData("kind"))
    settle(app, 0.5)
    save(window, out / "timeline-gpt2-training-dp8.png")
    view.breakdown_view.by.setCurrentIndex(view.breakdown_view.by.findData("module"))
    settle(app, 0.5)
    save(window, out / "timeline-gpt2-training-dp8-modules.png")


def batched_gemm_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The batched-GEMM sweep example's roofline: six labelled points packed along the memory roof and the ridge."""
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    settle_window(app, window)
    save(window, out / "roofline-batched-gemm-labels.png")


def presentation_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The batched-GEMM example's roofline in presentation mode (View ▸ Presentation): larger text everywhere; then
    its Analysis panel, each figure's detail under it so that the panel fits its dock."""
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.roofline)
    window.set_presentation(True)
    settle_window(app, window, 0.5)
    save(window, out / "presentation-roofline-batched-gemm.png")
    notes_shown = not window.notes_dock.visibleRegion().isEmpty()
    window.panel_dock.raise_()
    settle_window(app, window)
    save(window, out / "presentation-analysis-panel.png")
    if notes_shown:
        window.notes_dock.raise_()
        settle_window(app, window)
    window.set_presentation(False)
    window.resize(WIDTH, HEIGHT)
    settle(app)


def screen_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The window as large as the screen it is on (a 1280 × 720 projector, a 1366 × 768 laptop, 1920 × 1080, or a
    HiDPI screen under QT_SCALE_FACTOR=2): the worked example's roofline on each; on 1280 × 720 also the Compare tab
    with three devices and presentation mode from the Measurement tab, the roofline and the Timeline (GPT-2 small's
    training step, where PyTorch is installed); on 1920 × 1080 presentation.
    Named by the screen's size in device-independent pixels and its pixel ratio (`make screenshots` takes them)."""
    from workbench.gui.compare_view import SESSION_DEVICE

    screen = window.screen()
    room = screen.availableGeometry()
    ratio = screen.devicePixelRatio()
    name = f"{room.width()}x{room.height()}" + (f"-at-{ratio:g}x" if ratio != 1 else "")
    window.move(room.topLeft())
    window.resize(room.size())
    settle(app)
    window._default_dock_sizes()  # as a first start on this screen lays the docks out
    window.open_example("gemm-4096-fp16")
    window.tabs.setCurrentWidget(window.roofline)
    settle_window(app, window, 0.5)
    save(window, out / f"main-window-{name}.png")
    if ratio != 1 or room.width() not in (1280, 1920):
        return  # the laptop and HiDPI screens: the main window only
    if room.width() == 1920:
        window.open_example("batched-gemm-sweep")
        window.tabs.setCurrentWidget(window.roofline)
        window.set_presentation(True)
        settle_window(app, window, 0.5)
        save(window, out / f"presentation-{name}.png")
        window.set_presentation(False)
        settle(app)
        return
    window.document.set_device("h100-sxm")
    view = window.compare
    window.tabs.setCurrentWidget(view)
    view.set_chosen([SESSION_DEVICE, "h200-sxm", "a100-sxm-80gb"])
    window.document.select(0)
    settle(app, 0.5)
    save(window, out / f"compare-devices-{name}.png")
    window.open_example("batched-gemm-sweep")
    window.tabs.setCurrentWidget(window.measurement)
    window.set_presentation(True)
    settle_window(app, window, 0.5)
    save(window, out / f"presentation-measurement-{name}.png")
    window.tabs.setCurrentWidget(window.roofline)
    settle_window(app, window, 0.5)
    save(window, out / f"presentation-{name}.png")
    step = gpt2_training_step()  # the Timeline page of a step of hundreds of operations, at presentation size
    if step is not None:
        window.document.set_device("h100-sxm")
        window.tabs.setCurrentWidget(window.timeline)
        window.timeline.open_step(step)
        settle_window(app, window, 1.0)
        save(window, out / f"presentation-timeline-{name}.png")
    window.set_presentation(False)
    settle(app)


def bound_vs_size_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """A memory-bound vector add on the H100 swept past its 80 GB: the memory line dashed over the combined one,
    the sizes beyond memory shaded and labelled."""
    window.open_example("vector-add")
    window.document.set_device("h100-sxm")
    window.tabs.setCurrentWidget(window.sweep)
    window.sweep.low.setValue(16)
    window.sweep.high.setValue(36)
    settle(app)
    save(window, out / "bound-vs-size-memory-bound-beyond-memory.png")
    window.tabs.setCurrentWidget(window.roofline)


def save_derivation_at(window: Any, app: QApplication, path: Path, *finds: str) -> None:
    """The analysis dock with its derivation scrolled to a step: each text in `finds` searched backwards from the
    end in turn (the last one found is at the view's top), then the dock saved."""
    browser = window.panel.derivation
    browser.moveCursor(browser.textCursor().MoveOperation.End)
    for text in finds:
        browser.find(text, browser.document().FindFlag.FindBackward)
    browser.ensureCursorVisible()
    cursor = browser.textCursor()
    cursor.clearSelection()  # scrolled there, not selected
    browser.setTextCursor(cursor)
    settle(app, 0.3)
    save(window.panel_dock, path)


def hierarchy_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The worked example on the H100 as a hierarchical roofline (HBM, L2 and shared-memory roofs, each operation at
    each interface's intensity), its tiled implementation's derivation with logical beside physical, and the
    bound-vs-size view with a line per term.

    The catalogue has no L2 → SM figure for any part (none is published), so one is entered here, as a user
    would in the device panel, and the plot labels it "entered"; calibration measures it on a GPU.
    """
    from workbench.model.devices import Rate
    from workbench.state.commands import SetRate

    window.open_example("gemm-4096-fp16")
    doc = window.document
    doc.undo_stack.push(SetRate(doc.core, "l2", None, Rate(10e12, "entered", "entered for the screenshot: no datasheet figure")))
    doc.duplicate_operation(0)
    doc.edit_declaration(1, "gemm(M=4096, N=4096, K=4096, dtype=fp16, impl=tiled)")
    doc.rename_operation(1, "Same GEMM, tiled 128×128")
    doc.select(1)
    window.panel_dock.raise_()
    window.tabs.setCurrentWidget(window.roofline)
    settle(app, 0.5)
    save(window, out / "roofline-hierarchical-h100.png")
    # the derivation scrolled to the implementation's steps, the dock a little wider for the two columns
    from PySide6.QtCore import Qt as _Qt

    window.resizeDocks([window.panel_dock], [470], _Qt.Orientation.Horizontal)
    settle(app, 0.3)
    save_derivation_at(window, app, out / "derivation-logical-physical.png", "Implementation")
    window.resizeDocks([window.panel_dock], [420], _Qt.Orientation.Horizontal)
    window.tabs.setCurrentWidget(window.sweep)
    settle(app, 0.5)
    save(window, out / "bound-vs-size-all-terms.png")
    window.tabs.setCurrentWidget(window.roofline)


def little_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """One add, two implementations on the H200: the roofline with the library add's lowered roof (loads in
    flight, Little's law) and the vectorized add beside it; the library add's derivation at its
    memory-level-parallelism lines and the sentence naming its shortfall; the bound-vs-size view with the term
    as a line; the library's fp16 row sum added, under its own lowered roof, with its derivation."""
    from PySide6.QtCore import Qt as _Qt

    window.open_example("one-add-two-implementations")
    window.document.select(0)
    window.panel_dock.raise_()
    window.tabs.setCurrentWidget(window.roofline)
    settle_window(app, window)
    save(window, out / "roofline-lowered-roof-little.png")
    window.resizeDocks([window.panel_dock], [520], _Qt.Orientation.Horizontal)
    settle(app, 0.3)
    save_derivation_at(window, app, out / "derivation-little.png", "Little's law", "Memory time bound")
    # the bytes in flight the roof needs beside those the launch holds, and the sentence naming the shortfall
    save_derivation_at(window, app, out / "derivation-little-why.png", "Why below the memory's roof", "Bytes in flight per SM")
    window.resizeDocks([window.panel_dock], [420], _Qt.Orientation.Horizontal)
    window.tabs.setCurrentWidget(window.sweep)
    settle(app, 0.5)
    save(window, out / "bound-vs-size-little.png")
    window.tabs.setCurrentWidget(window.roofline)
    # the library's fp16 row sum (CuPy's CUB block reduction, 4 loads of 2 B a thread) under its lowered roof
    doc = window.document
    doc.duplicate_operation(0)  # the copy lands beside the library add, above the vectorized one
    row = 1
    doc.edit_declaration(row, "reduce(rows=8192, n=8192, dtype=fp16, impl=library)")
    doc.rename_operation(row, "Row sums, fp16 in fp32 (library)")
    doc.select(row)
    window.resizeDocks([window.panel_dock], [520], _Qt.Orientation.Horizontal)
    settle_window(app, window)
    save(window, out / "roofline-lowered-roof-row-sum.png")
    save_derivation_at(window, app, out / "derivation-little-row-sum.png", "Why below the memory's roof", "Bytes in flight per SM (CuPy CUB")
    window.resizeDocks([window.panel_dock], [420], _Qt.Orientation.Horizontal)


def notes_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The vector-add practice's evidence checklist in the Notes panel, two boxes ticked and a figure written."""
    window.open_example("vector-add")
    window.tabs.setCurrentWidget(window.roofline)
    doc = window.document
    doc.set_checked(0, 0, True)
    doc.set_checked(0, 2, True)
    notes = doc.operations[0].notes.replace("- [x] The median time.", "- [x] The median time. **8.7 ms** (30 iterations, NumPy)")
    doc.set_notes(0, notes)
    settle(app)
    save(window, out / "notes-vector-add-checklist.png")


def markup_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """A shared session whose title, names and notes are all markup (issue 33): each shown as the text it is,
    an image in a note as its alt text, `2**27` as written, the Markdown lists and emphasis rendered."""
    from workbench.documents import session as session_module
    from workbench.documents.examples import load_example

    session = load_example("attention-naive-vs-fused")
    session.title = "<img src='/dev/zero'> <b>Bold title?</b>"
    session.description = (
        "<script>alert(1)</script> A **shared** session: `<img>` tags show as text.\n\n"
        "- [x] ![the alt text](/dev/zero) is not loaded\n- [ ] 2**27 BF16 and 2**28 FP32 stay as written"
    )
    session.operations[0].name = "<h1>Naive</h1> <img src='/dev/urandom'>"
    session.operations[1].name = "<a href='file:///etc/passwd'>Fused</a> &amp; <i>co</i>"
    session.operations[0].notes = "<u>Underlined?</u> No: ![z](file:///dev/zero) and n=2**24, *emphasis* kept."
    folder = Path(tempfile.mkdtemp(prefix="workbench-screenshots-markup-"))
    path = folder / "<i>shared.json"
    session_module.save(session, path)
    window.open_session(str(path))
    window.document.select(0)
    window.tabs.setCurrentWidget(window.roofline)
    window.notes_dock.show()
    window.notes_dock.raise_()
    settle_window(app, window)
    save(window, out / "markup-as-text.png")


def calibration_screenshots(window: Any, app: QApplication, out: Path) -> None:
    """The CPU calibrated (quick): the dialog with every rate and transfer, the device panel with the measured
    last-level cache and host-link stand-in and how each was measured; an H100 session's panel with its link row."""
    window.open_example("vector-add")
    dialog = window.measurement.open_calibration()
    dialog.quick.setChecked(True)
    dialog.start()
    wait_until(app, lambda: not dialog.running, "the calibration")
    dialog.resize(760, 620)
    settle(app)
    save(dialog, out / "calibration.png")
    dialog.accept()
    settle(app)
    save(window.device_dock, out / "device-panel-calibrated-cpu.png")
    window.open_example("gemm-4096-fp16")
    window.document.set_device("h100-sxm")
    settle(app)
    save(window.device_dock, out / "device-panel-h100-links.png")


# The groups `--only` can take, by name.
GROUPS = {
    "compare": compare_screenshots,
    "timeline": timeline_screenshots,
    "torch-trace": torch_trace_screenshots,
    "model-step": model_step_screenshots,
    "calibration": calibration_screenshots,
    "hierarchy": hierarchy_screenshots,
    "batched-gemm": batched_gemm_screenshots,
    "presentation": presentation_screenshots,
    "levels": levels_screenshots,
    "outside-append": outside_append_screenshots,
    "markup": markup_screenshots,
    "roof-label": roof_label_screenshot,
    "little": little_screenshots,
    "screen": screen_screenshots,
    "model-size": model_size_screenshot,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="folder for the PNGs")
    parser.add_argument("--only", choices=tuple(GROUPS),
                        help="take one group of screenshots only (screen: the window on the display's own screen size)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    settings_dir = tempfile.mkdtemp(prefix="workbench-screenshots-")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir)
    from workbench.documents.autosave import DATA_DIR_VARIABLE

    os.environ[DATA_DIR_VARIABLE] = tempfile.mkdtemp(prefix="workbench-screenshots-data-")  # no real recovery files

    from workbench.gui.app import build_window, ensure_application
    from workbench.gui.session_io import DISCARD, LATER, RecoveryAnswer

    app = ensure_application()
    window = build_window(detect=no_driver)
    window.session_io.ask_unsaved_changes = lambda action: DISCARD  # the script's edits are thrown away unasked
    window.session_io.ask_recovery = lambda found: RecoveryAnswer(LATER)
    window.resize(WIDTH, HEIGHT)
    window.show()
    window.move(0, 0)
    settle(app, 0.5)
    window.wait_for_workers()
    settle(app, 0.3)

    if args.only is not None:
        GROUPS[args.only](window, app, out)
        window.close()
        window.deleteLater()
        settle(app, 0.1)
        return 0

    # 1. the seed's worked example: 4096³ fp16 GEMM at an entered 100 TFLOP/s and 2.5 TB/s
    window.open_example("gemm-4096-fp16")
    window.tabs.setCurrentWidget(window.roofline)
    settle(app)
    save(window, out / "main-window.png")

    # 2. the device panel with no NVIDIA driver
    save(window.device_dock, out / "device-panel-no-driver.png")

    # 3. bound against size for the same operation
    window.tabs.setCurrentWidget(window.sweep)
    settle(app)
    save(window, out / "bound-vs-size.png")
    window.tabs.setCurrentWidget(window.roofline)

    # 4. an error: a negative dimension typed into the form keeps the last valid figures, marked stale
    field = window.editor.fields["M"].widget
    field.setFocus()
    field.selectAll()
    QTest.keyClicks(field, "-4096")
    settle(app)
    save(window, out / "error-state.png")

    # 5. two operations on one roofline: attention with and without fusion
    window.open_example("attention-naive-vs-fused")
    settle(app)
    save(window, out / "attention-roofline.png")

    # 5-labels. many points near the ridge, each label off the roofs, the points and the others
    batched_gemm_screenshots(window, app, out)

    # 5-presentation. the same roofline at presentation size
    presentation_screenshots(window, app, out)

    # 5-sweep. a memory-bound operation against size, past the device's memory
    bound_vs_size_screenshots(window, app, out)

    # 5-hierarchy. the worked example as a hierarchical roofline, logical beside physical, a line per term
    hierarchy_screenshots(window, app, out)
    little_screenshots(window, app, out)

    # 5-notes. the lab's instructions and checklist, ticked in the window
    notes_screenshots(window, app, out)

    # 5-markup. a session whose title, names and notes are all markup, shown as text
    markup_screenshots(window, app, out)

    # 5a. an Nsight Compute export imported, matched, compared, and on the roofline
    profile_screenshots(window, app, out)
    levels_screenshots(window, app, out)

    # 5b. a terminal's `measure --save-to` into the session the window has open
    outside_append_screenshots(window, app, out)

    # 5c. measurement: a CPU run in the Measurement tab, calibration, measured points on the roofline
    long_run_question(window, app, out / "measure-long-run-question.png")
    measurement_screenshots(window, app, out)

    # 5c. runs compared with the device they ran on; a run beyond its own device's bound flagged
    run_device_screenshots(window, app, out)

    # 5d. devices side by side: the Compare tab and overlaid rooflines
    compare_screenshots(window, app, out)

    # 5e. a step of several operations: the timeline, a what-if, an inline error
    timeline_screenshots(window, app, out)

    # 6. the next start after a crash: the recovery question, over the window
    recovery_dialog(window, app, out / "recovery.png")

    window.close()
    window.deleteLater()
    settle(app, 0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
