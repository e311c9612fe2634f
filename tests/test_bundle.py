"""The PyInstaller bundle builds and starts offscreen (`make bundle-test`; not part of `make test`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist" / "perf-workbench"
EXECUTABLE = DIST / "perf-workbench"

pytestmark = pytest.mark.bundle


@pytest.fixture(scope="module")
def bundle() -> Path:
    if shutil.which("pyinstaller", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("PyInstaller is not installed in this environment: run `make bundle-test`, which installs it")
    start = time.perf_counter()
    subprocess.run(
        [str(Path(sys.executable).parent / "pyinstaller"), "--noconfirm", "--log-level", "WARN",
         "--distpath", str(ROOT / "dist"), "--workpath", str(ROOT / "build" / "pyinstaller"),
         str(ROOT / "packaging" / "perf-workbench.spec")],
        check=True, cwd=ROOT, capture_output=True, timeout=900,
    )
    seconds = time.perf_counter() - start
    size = sum(f.stat().st_size for f in DIST.rglob("*") if f.is_file() and not f.is_symlink())
    print(f"\nbundle built in {seconds:.1f} s, {size / 1e6:.0f} MB in {DIST}")
    return EXECUTABLE


def run_bundle(executable: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run([str(executable), *args], capture_output=True, text=True, env=env, timeout=120)


def test_bundle_reports_its_version_and_parts(bundle: Path) -> None:
    result = run_bundle(bundle, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("workbench ")
    assert "NVML: nvidia-ml-py" in result.stdout  # metadata travels with the bundle


def test_bundle_calculates(bundle: Path) -> None:
    result = run_bundle(bundle, "calc", "add(n=2**24, dtype=fp32)", "--device", "h200")
    assert result.returncode == 0, result.stderr
    assert "201,326,592 B" in result.stdout and "memory-limited" in result.stdout


def test_bundle_opens_the_window_with_an_example(bundle: Path) -> None:
    result = run_bundle(bundle, "gui", "--example", "gemm-4096-fp16", "--check")
    assert result.returncode == 0, result.stderr
    assert "window shown: True" in result.stdout
    assert "1.374 ms" in result.stdout  # the example's analysis is on screen


def test_bundle_finds_its_resources_through_importlib(bundle: Path) -> None:
    """The top-level resources/ folder travels as the package `workbench.resources` (packaging/perf-workbench.spec)."""
    bundled = DIST / "_internal" / "workbench" / "resources"
    shipped = sorted(p.relative_to(ROOT / "resources").as_posix() for p in (ROOT / "resources").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
    assert [name for name in shipped if not (bundled / name).is_file()] == []
    devices = run_bundle(bundle, "devices")  # the catalogue, read with importlib.resources
    assert devices.returncode == 0, devices.stderr
    assert "H100" in devices.stdout
    shown = run_bundle(bundle, "gui", "--example", "vector-add", "--check")  # examples and the icon
    assert shown.returncode == 0, shown.stderr
    assert "window shown: True" in shown.stdout
