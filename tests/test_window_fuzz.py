"""The hostile-input fuzzing of the window (issue 33): session files whose every text field is markup naming a
file Qt must never read, each opened with `workbench gui FILE --check` in its own process under a memory cap.

Rich text loads the images, style sheets and backgrounds it names, and Qt's Markdown loads a note's images: a
title `<img src='/dev/zero'>` made the window read /dev/zero until memory ran out. Each session here puts a
different kind of markup in each field (an image, a Markdown image, a table or paragraph background, a style
sheet link) naming one target: /dev/zero, /dev/urandom, a FIFO nobody writes (a read blocks forever), a very
large (sparse) file, and a small real image. The window must open and exit normally, within the time and memory
a plain session takes. Each process runs under RLIMIT_AS (a memory bomb ends it instead of the machine) and a
timeout (a FIFO read is a hang).
"""

from __future__ import annotations

import os
import subprocess
import sys
from itertools import cycle
from pathlib import Path

import pytest

from markup_sessions import FIELDS, dev_zero, write_markup_session

MEMORY_LIMIT_BYTES = 3 * 2**30
TIMEOUT_S = 240  # a window's --check takes seconds (17 s seen on a loaded two-core machine); a hang takes forever
LARGE_FILE_BYTES = 8 * 2**30  # sparse: larger than the memory cap, nothing written to disk

# Each form of markup that makes Qt load what it names; `{url}` is the target.
MARKUP = (
    "<img src='{url}'>",
    "![z]({url})",
    "<table background='{url}'><tr><td>x</td></tr></table>",
    "<p style=\"background-image: url('{url}')\">x</p>",
    "<link rel='stylesheet' href='{url}'>x",
    "[![z]({url})]({url}) ![z][ref]\n\n[ref]: {url}",
    "<qt><img src=\"{url}\" width=4000 height=4000></qt>",
)

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, /dev/zero and FIFOs"),
    pytest.mark.slow,  # each input is a window started in a process of its own
]


def _limit_memory() -> None:  # in the child, before it starts Python
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def hostile_session(path: Path, target: str) -> Path:
    """A session whose fields each hold one form of markup naming `target` (as a path and as a file: URL)."""
    urls = cycle([target, f"file://{target}"])
    forms = cycle(MARKUP)
    texts = {field: next(forms).format(url=next(urls)) for field in FIELDS}
    return write_markup_session(path, lambda field: texts[field])


def open_with_check(session: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        PERF_WORKBENCH_DATA_DIR=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
    )
    return subprocess.run(
        [sys.executable, "-m", "workbench", "gui", str(session), "--check"],
        capture_output=True, text=True, timeout=TIMEOUT_S, env=env, preexec_fn=_limit_memory, cwd=home,
    )


def _targets(folder: Path) -> dict[str, str]:
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    large = folder / "large.png"
    with open(large, "wb") as file:
        file.truncate(LARGE_FILE_BYTES)
    image = folder / "real.png"
    # a valid 1×1 PNG: were images loaded at all, this one would be drawn
    image.write_bytes(bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d4944415478da63f8cfc0f01f0005000201e2b3b1a40000000049454e44ae426082"
    ))
    return {"/dev/zero": "/dev/zero", "/dev/urandom": "/dev/urandom", "fifo": str(fifo), "large": str(large),
            "image": str(image)}


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "fifo", "large", "image"])
def test_a_session_of_markup_naming_hostile_files_opens_the_window_normally(target: str, tmp_path: Path) -> None:
    path = _targets(tmp_path)[target]
    session = hostile_session(tmp_path / "hostile.json", path)
    done = open_with_check(session, tmp_path)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert done.stdout.startswith("window shown: True;"), done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-4000:]


PEAK_MEMORY = (
    "import resource, sys\n"
    "from workbench.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('peak KiB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    "sys.exit(code)\n"
)


def peak_kib(session: Path, home: Path) -> int:
    """The peak resident memory of `workbench gui SESSION --check` (which must exit normally), in KiB."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_MEMORY, "gui", str(session), "--check"],
        capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=_limit_memory, cwd=home,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen", PERF_WORKBENCH_DATA_DIR=str(home / "data"),
                 XDG_CONFIG_HOME=str(home / "config")),
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert done.stdout.startswith("window shown: True;"), done.stdout
    return int(done.stdout.split("peak KiB")[-1])


def test_issue_33_every_field_an_image_of_dev_zero_opens_in_the_memory_of_a_plain_session(tmp_path: Path) -> None:
    """The reproduction: each field `<img src='/dev/zero'>`, the notes and description `![z](/dev/zero)`. Before,
    the window read /dev/zero until a 6 GB cap killed it; now it takes what the same session in plain words takes
    (the margin is for the allocator, not for an image: /dev/zero would fill the 3 GB cap in a second)."""
    hostile = peak_kib(write_markup_session(tmp_path / "zero.json", dev_zero), tmp_path)
    plain = peak_kib(write_markup_session(tmp_path / "plain.json", lambda field: f"plain {field}"), tmp_path)
    assert hostile < plain + 200 * 1024, (hostile, plain)
