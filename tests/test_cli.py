"""The command line: the worked example, JSON, errors in one line with exit code 2, fast --version."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from workbench.cli import main
from workbench.cli.display import has_display


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=environment, timeout=60
    )


def test_calc_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calc", "gemm(M=4096, N=4096, K=4096, dtype=fp16)", "--rate", "100 TFLOP/s", "--bandwidth", "2.5 TB/s"])
    out = capsys.readouterr().out
    assert code == 0
    for figure in ("137,438,953,472 FLOP", "33,554,432 B", "100,663,296 B", "1.374 ms", "40.27 µs", "compute-limited"):
        assert figure in out


def test_calc_json_keys_and_exact_integers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "add(n=2**24, dtype=fp32)", "--device", "h100-sxm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["flop"] == 16_777_216 and data["bytes"] == 201_326_592
    assert data["intensity_flop_per_byte"] == pytest.approx(1 / 12)
    assert data["limiter"] == "memory"
    assert [t["name"] for t in data["tensors"]] == ["a", "b", "c"]


def test_calc_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "gemm(M=4096, N=4096, K=4096)", "--rate", "100 TFLOP/s", "--bandwidth", "2.5 TB/s",
                 "--overlap", "none", "--convention", "mac", "--binary", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["convention"] == "mac" and data["flop"] == 68_719_476_736
    assert data["bound_time_s"] == pytest.approx(data["compute_time_s"] + data["memory_time_s"])
    assert any("MiB" in step["result"] for step in data["steps"])


def test_units_scratchpad(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["units", "137.4 GFLOP / (100 TFLOP/s)", "--to", "ms"]) == 0
    assert capsys.readouterr().out.strip() == "137.4 GFLOP / (100 TFLOP/s) = 1.374 ms"
    assert main(["units", "200 GFLOP / (80 GB)"]) == 0
    assert capsys.readouterr().out.strip().endswith("= 2.5 FLOP/B")


def test_devices_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NVML: ") and "h100-sxm" in out and "3.35 TB/s" in out
    assert main(["devices", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["key"] for d in data["catalogue"]} >= {"h100-sxm", "cpu-generic"}
    assert "status" in data["detected"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["calc", "gemm(M=0, N=1, K=1)"], "M must be a positive integer"),
        (["calc", "gemmm(M=1)"], "unknown operation 'gemmm'"),
        (["calc", "gemm(M=1, N=1, K=1, dtype=fp17)"], "unknown dtype"),
        (["calc", "add(n=4)", "--device", "Voodoo"], "unknown device"),
        (["calc", "add(n=4)", "--rate", "5 GB"], "rate must be in FLOP/s"),
        (["calc", "add(n=4)", "--bandwidth", "fast"], "unknown unit 'fast'"),
        (["calc", "add(n=4)", "--overlap", "2"], "overlap"),
        (["calc", "gemm(M=2**17, N=2**17, K=2**17)", "--device", "h100-sxm"], "more than the 80 GB"),
        (["units", "100.7 MB / (100 TFLOP/s)", "--to", "s"], "information·time/computation"),
        (["units", "5 GFLOPS"], "GFLOP/s"),
        (["calc"], "required"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(args: list[str], fragment: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_no_display_says_so_in_one_line() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-m", "workbench"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 2
    assert "xvfb-run" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not has_display({})
    assert has_display({"QT_QPA_PLATFORM": "offscreen"})


def test_version_and_help_import_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from workbench.cli import main\n"
        "for args in (['--version'], ['--help'], ['calc', '--help']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('PySide6', 'pyqtgraph', 'numpy', 'pint', 'cupy', 'torch') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in result.stderr
    assert "workbench 0.1.0" in result.stdout
    for part in ("CuPy:", "NVML:", "PyTorch:"):
        assert part in result.stdout
