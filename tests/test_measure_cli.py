"""`workbench measure` and `workbench calibrate`: the record as a table or JSON, bad input in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from workbench.cli import main
from workbench.measure import RunRecord


def test_measure_json_is_a_run_record(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["measure", "add(n=2**16, dtype=fp32)", "--backend", "numpy", "--iterations", "30", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    record = RunRecord.from_dict(data)
    assert record.status == "ok" and len(record.samples_s) == 30
    assert data["derived"]["stats"]["median_s"] == pytest.approx(float(np.median(record.samples_s)))
    assert data["bytes"] == 3 * 2**16 * 4


def test_measure_table_shows_the_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", "gemm(M=64, N=64, K=64, dtype=fp32)", "--backend", "numpy", "--mode", "cold", "--iterations", "30"]) == 0
    out = capsys.readouterr().out
    for label in ("status", "median", "spread", "achieved", "bound", "check", "checksum", "before timing", "environment"):
        assert f"  {label}" in out
    assert "ok — valid" in out and "cold, 30 of 30 timed iterations" in out and "GFLOP/s" in out


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        (["measure", "add(n=1024, dtype=bf16)", "--backend", "numpy"], "NumPy has no bf16"),
        (["measure", "add(n=1024)", "--backend", "numpy", "--iterations", "5"], "at least 30"),
        (["measure", "add(n=2**40)", "--backend", "numpy"], "reduce the sizes"),
        (["measure", "add(n=-1)", "--backend", "numpy"], "positive"),
        (["measure", "add(n=1024)", "--backend", "numpy", "--device", "nonesuch"], "unknown device"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(
    arguments: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_unknown_backend_is_a_usage_error() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "workbench", "measure", "add(n=1024)", "--backend", "tpu"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 2 and "invalid choice" in completed.stderr


def test_calibrate_quick_prints_measured_rates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--backend", "numpy", "--quick", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # DRAM (hbm), the matrix paths and the host-link stand-in (host); the last-level cache copy is reported only.
    assert set(data["rates"]) == {"hbm", "fp64", "fp32", "host"}
    assert all(rate["source"] == "measured" and rate["value"] > 0 for rate in data["rates"].values())
    assert "CPU stand-in" in data["rates"]["host"]["citation"]
    stand_in = data["transfers"][-1]
    assert stand_in["key"] == "cpu-host-copy" and "CPU stand-in" in stand_in["label"] and len(stand_in["samples_s"]) >= 30
    assert [t["key"] for t in data["transfers"][:-1]] in ([], ["llc-copy"])  # [] where the CPU reports no cache size
    assert stand_in["rate_byte_per_s"] == data["rates"]["host"]["value"]
    assert main(["calibrate", "--backend", "numpy", "--quick"]) == 0
    table = capsys.readouterr().out
    assert "memory bandwidth (DRAM)" in table and "hbm" not in table and "measured / datasheet" in table
    assert "host memory copy (CPU stand-in for the host link)" in table
    assert "    how: CPU stand-in: numpy.copyto" in table and " GB/s" in table


def test_calibrate_without_links_or_interfaces_measures_what_it_did_before(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["calibrate", "--backend", "numpy", "--quick", "--no-links", "--no-interfaces", "--binary", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["rates"]) == {"hbm", "fp64", "fp32"} and data["transfers"] == []


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--link-size", "12 parsecs"], "--link-size: unknown unit 'parsecs'"),
        (["--link-size", "10 GB/s"], "--link-size must be in B"),
        (["--link-size", "1 KiB"], "--link-size must be 4 KiB to 64 GiB"),
        (["--iterations", "5"], "--iterations must be 30"),
        (["--device", "no-such-device"], "unknown device 'no-such-device'"),
    ],
)
def test_calibrate_refuses_bad_input_in_one_line(option: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--backend", "numpy", *option]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1
