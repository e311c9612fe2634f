"""A measurement's worker processes end when the process that started them dies, however it dies.

The app (here a child Python process standing in for the window) starts a CPU measurement whose first call
takes minutes (a 4096³ fp16 GEMM: NumPy has no BLAS path for it) and is killed with SIGKILL inside that call.
The worker, and with it the forkserver and multiprocessing's resource tracker the app had started, must be gone
within seconds rather than run on at 100 % CPU until the call ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and /proc are POSIX")

APP = """
import sys
from workbench.measure import PhaseChanged
from workbench.measure.process import ProcessRun
from workbench.measure.run import FIRST_CALL

run = ProcessRun("gemm(M=4096, N=4096, K=4096, dtype=fp16)", backend="numpy", iterations=30)
for event in run.events():
    if isinstance(event, PhaseChanged) and event.phase == FIRST_CALL:
        print(run.child_pid, flush=True)
"""
ENDED_WITHIN_S = 10.0


def _running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for a parent to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _in_session(session: int) -> list[int]:
    """The live processes of one session (the app's, started with its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[3]) == session and fields[0] != "Z":
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the processes")
def test_the_worker_ends_when_the_app_is_killed_inside_a_long_call() -> None:
    app = subprocess.Popen(
        [sys.executable, "-c", APP], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    try:
        assert app.stdout is not None
        worker = int(app.stdout.readline())  # the worker is inside its first call
        assert _running(worker)
        time.sleep(0.5)
        assert _running(worker), "the first call takes minutes"
        os.kill(app.pid, signal.SIGKILL)
        app.wait(5)
        deadline = time.monotonic() + ENDED_WITHIN_S
        while time.monotonic() < deadline and (_running(worker) or _in_session(app.pid)):
            time.sleep(0.1)
        assert not _running(worker), "the worker ran on after the app died"
        assert not _in_session(app.pid), "a process the app started (forkserver, resource tracker) ran on"
    finally:
        if app.poll() is None:
            os.kill(app.pid, signal.SIGKILL)
        for pid in _in_session(app.pid):
            os.kill(pid, signal.SIGKILL)
        if app.stdout is not None:
            app.stdout.close()
