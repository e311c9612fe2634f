"""Devices side by side: the comparison core, its exports and `workbench compare`."""

from __future__ import annotations

import csv
import io
import json

import pytest

from workbench.cli import main
from workbench.documents.device_compare import (
    compare_declaration,
    compare_session,
    comparison_csv,
    comparison_markdown,
    measured_on,
    resolve_devices,
    roofline_points,
    run_device_keys,
)
from workbench.model.devices import find_device
from workbench.model.devices.catalogue import HOST_CPU_KEY
from workbench.errors import DeviceError
from workbench.documents.session import OperationEntry, Session

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
SHARED_KEYS = ("device", "bound_time_s", "limiter", "compute_time_s", "memory_time_s", "ridge_flop_per_byte")


def test_compare_json_equals_calc_json_device_by_device(capsys: pytest.CaptureFixture[str]) -> None:
    keys = ["h100-sxm", "h200-sxm", "a100-sxm-80gb"]
    assert main(["compare", GEMM, "--devices", ",".join(keys), "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert isinstance(compared, list) and [row["device_key"] for row in compared] == keys
    for key, row in zip(keys, compared):
        assert main(["calc", GEMM, "--device", key, "--json"]) == 0
        calc = json.loads(capsys.readouterr().out)
        for name in SHARED_KEYS:
            assert row[name] == calc[name], (key, name)
    # the figures differ between devices: H100 vs A100 compute time is 989 / 312
    h100, _, a100 = compared
    assert a100["compute_time_s"] / h100["compute_time_s"] == pytest.approx(989 / 312)
    assert h100["limiter"] == "compute" and h100["ridge_flop_per_byte"] == pytest.approx(989e12 / 3.35e12)


def test_unknown_device_keys_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", GEMM, "--devices", "h100-sxm,h10-sxm,nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'h10-sxm', 'nope'" in err and "h100-sxm" in err and "Traceback" not in err
    assert main(["compare", GEMM, "--devices", " , "]) == 2
    assert main(["compare", "gemm(M=4096", "--devices", "h100-sxm"]) == 2


def test_a_device_without_the_path_says_why_and_the_rest_still_compare(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "gemm(M=4096, N=4096, K=4096, dtype=int8)", "--devices", "h100-sxm,v100-sxm2", "--json"]) == 0
    h100, v100 = json.loads(capsys.readouterr().out)
    assert h100["bound_time_s"] == pytest.approx(max(2 * 4096**3 / 1979e12, h100["memory_time_s"]))
    assert v100["bound_time_s"] is None and "int8_tc" in v100["error"]
    assert main(["compare", "gemm(M=4096, N=4096, K=4096, dtype=int8)", "--devices", "h100-sxm,v100-sxm2"]) == 0
    text = capsys.readouterr().out
    assert "v100-sxm2: NVIDIA Tesla V100 SXM2 has no rate for the int8_tc path" in text


def test_resolve_devices_accepts_known_extra_devices_and_dedupes() -> None:
    detected = {"nvml-0": find_device("h200-sxm")}
    devices = resolve_devices("h100-sxm, nvml-0 ,h100-sxm,host-cpu,H100", detected)
    assert [d.key for d in devices] == ["h100-sxm", "h200-sxm", HOST_CPU_KEY]
    with pytest.raises(DeviceError, match="no devices"):
        resolve_devices([])


def test_roofline_points() -> None:
    h100 = find_device("h100-sxm")
    points = roofline_points(h100, "fp16_tc", 1.0, 1e4)
    # slope to the ridge (989e12 / 3.35e12 = 295.2 FLOP/B), then flat
    assert points[0] == (1.0, pytest.approx(3.35e12))
    assert points[1] == (pytest.approx(989e12 / 3.35e12), 989e12)
    assert points[2] == (1e4, 989e12)
    assert len(roofline_points(h100, "fp16_tc", 1e3, 1e4)) == 2  # ridge outside the range
    with pytest.raises(DeviceError):
        roofline_points(find_device("v100-sxm2"), "int8_tc", 1.0, 10.0)


def _run(device_text: str, samples: list[float], declaration: str = GEMM, valid: bool | None = True, **extra: object) -> dict[str, object]:
    """A loose run dict as early sessions kept them: the device only as the backend's text."""
    data: dict[str, object] = {"declaration": declaration, "device": device_text, "samples_s": samples, **extra}
    if valid is not None:
        data["valid"] = valid
    return data


def _parsed(*runs: dict[str, object]) -> list:
    from workbench.measure.runs import read_runs

    return read_runs(list(runs))


def test_runs_are_placed_on_the_device_they_ran_on() -> None:
    from dataclasses import replace

    from workbench.model.devices.provenance import CPU, GPU, STATED_BY_NVML, STATED_BY_OS, DeviceProvenance

    host = find_device(HOST_CPU_KEY)
    model = host.name.removeprefix("This machine: ").split(" (")[0]
    (h100, a100_pcie, cpu_here, cpu_elsewhere, silent) = _parsed(
        _run("GPU 0: NVIDIA H100 80GB HBM3 (compute capability 9.0)", [1.0]),
        _run("GPU 0: NVIDIA A100 80GB PCIe (compute capability 8.0)", [1.0]),
        _run(f"CPU: {model} (2 logical cores)", [1.0]),
        _run("CPU: Some Other CPU (64 logical cores)", [1.0]),
        {"declaration": GEMM, "samples_s": [1.0]},  # an old run that says nothing
    )
    assert run_device_keys(h100) == {"h100-sxm"}
    assert run_device_keys(a100_pcie) == {"a100-pcie-80gb"}
    assert run_device_keys(cpu_here, host) == {HOST_CPU_KEY}
    assert run_device_keys(cpu_elsewhere, host) == set()
    assert run_device_keys(silent) == set()
    # provenance, when a run carries it, wins over the text
    stated = replace(h100, provenance=DeviceProvenance(GPU, "NVIDIA H200", "h200-sxm", "name", STATED_BY_NVML))
    assert run_device_keys(stated) == {"h200-sxm"}
    named = replace(h100, provenance=DeviceProvenance(GPU, "NVIDIA A100", stated_by=STATED_BY_NVML, memory_bytes=40 * 2**30))
    assert run_device_keys(named) == {"a100-sxm-40gb"}  # the memory size picks the variant
    numpy_run = replace(cpu_here, provenance=DeviceProvenance(CPU, model, "cpu-generic", "the CPU entry", STATED_BY_OS))
    assert run_device_keys(numpy_run, host) == {"cpu-generic", HOST_CPU_KEY}


def test_measured_time_is_the_latest_usable_runs_median() -> None:
    h100 = find_device("h100-sxm")
    gpu = "GPU 0: NVIDIA H100 80GB HBM3 (compute capability 9.0)"
    runs = _parsed(
        _run(gpu, [3e-4, 1e-4, 2e-4]),
        _run(gpu, [5e-4, 4e-4, 6e-4, 7e-4], valid=None),  # unchecked: median 5.5e-4
        _run(gpu, [1e-9], valid=False),  # its check failed: never a measured time
        _run(gpu, []),
        _run("GPU 0: NVIDIA A100-SXM4-80GB", [9.0]),
    )
    assert measured_on(runs, h100) == (pytest.approx(5.5e-4), 2)
    assert measured_on(runs, find_device("h200-sxm")) == (None, 0)


def session_with_runs() -> Session:
    session = Session(operations=[OperationEntry("GEMM fp16", GEMM), OperationEntry("vector add", "add(n=2**24, dtype=fp32)")])
    session.runs = [_run("GPU 0: NVIDIA H100 80GB HBM3 (compute capability 9.0)", [2e-4, 1.8e-4, 2.2e-4])]
    return session


def test_session_comparison_and_exports() -> None:
    devices = resolve_devices("h100-sxm,h200-sxm,a100-sxm-80gb")
    comparison = compare_session(session_with_runs(), devices)
    assert comparison.operations == ["GEMM fp16", "vector add"]
    gemm = comparison.rows[0]
    assert gemm[0].measured_time_s == pytest.approx(2e-4) and gemm[0].measured_runs == 1
    assert gemm[1].measured_time_s is None and gemm[2].measured_time_s is None
    # bound 139 µs / measured 200 µs
    assert gemm[0].percent_of_bound == pytest.approx(100 * (2 * 4096**3 / 989e12) / 2e-4)
    assert comparison.fastest(1) == [1]  # the vector add is memory-bound: the H200's 4.8 TB/s wins
    assert comparison.fastest(0) == [0, 1]  # the GEMM ties on the H100 and H200: both 989 TFLOP/s

    rows = list(csv.DictReader(io.StringIO(comparison_csv(comparison))))
    assert len(rows) == 6 and rows[0]["device_key"] == "h100-sxm" and rows[0]["operation"] == "GEMM fp16"
    assert float(rows[0]["bound_time_s"]) == pytest.approx(2 * 4096**3 / 989e12)
    assert rows[1]["measured_time_s"] == ""
    markdown = comparison_markdown(comparison)
    assert "| Operation | NVIDIA H100 SXM | NVIDIA H200 SXM | NVIDIA A100 SXM 80 GB |" in markdown
    assert "| GEMM fp16 | 139 µs, compute (fp16_tc); measured 200 µs |" in markdown
    assert "Ridge on h100-sxm" in markdown and "Sources: h100-sxm: NVIDIA H100" in markdown


def test_compare_declaration_uses_the_canonical_form() -> None:
    comparison = compare_declaration("gemm(M=64,N=64,K=64,dtype=fp16)", [find_device("h100-sxm")], convention="mac")
    cell = comparison.rows[0][0]
    assert cell.declaration == "gemm(M=64, N=64, K=64, dtype=fp16)" and cell.analysis is not None
    assert cell.analysis.flop == 64**3  # mac: one multiply-add is one FLOP


def test_the_cache_reuses_unchanged_cells_and_sees_every_change() -> None:
    session = session_with_runs()
    h100 = find_device("h100-sxm")
    cache: dict = {}
    first = compare_session(session, [h100], cache=cache)
    again = compare_session(session, [h100], cache=cache)
    assert again.rows[0][0].analysis is first.rows[0][0].analysis  # reused, not recomputed
    assert again.rows[0][0].measured_time_s == pytest.approx(2e-4)  # runs are read afresh
    measured = h100.with_rate("fp16_tc", 700e12, "measured")
    changed = compare_session(session, [measured], cache=cache)
    assert changed.rows[0][0].analysis.compute_rate.value == 700e12
    session.settings.convention = "mac"
    assert compare_session(session, [h100], cache=cache).rows[0][0].analysis.flop == 4096**3
    session.operations[1].declaration = "add(n=2**20, dtype=fp32)"
    assert compare_session(session, [h100], cache=cache).rows[1][0].analysis.bytes == 3 * 4 * 2**20


def test_a_real_numpy_run_is_measured_on_this_machine_and_not_on_a_gpu() -> None:
    from workbench.measure import measure

    declaration = "add(n=2**16, dtype=fp32)"
    record = measure(declaration, backend="numpy", iterations=30)
    session = Session(operations=[OperationEntry("vector add", declaration)], runs=[record.to_dict()])
    comparison = compare_session(session, resolve_devices("host-cpu,h100-sxm"))
    here, gpu = comparison.rows[0]
    assert here.measured_runs == 1 and here.measured_time_s == pytest.approx(record.median_s)
    assert gpu.measured_time_s is None and gpu.measured_runs == 0


ALLREDUCE = "allreduce(n=2**28, dtype=fp32, ranks=8)"


def test_a_collective_reads_as_link_limited_not_memory(capsys: pytest.CaptureFixture[str]) -> None:
    # allreduce of 2**28 fp32 over 8 ranks on an H100 SXM: 2 × 7/8 × 1,073,741,824 B = 1,879,048,192 B per rank
    # over NVLink 4 at 450 GB/s per direction = 4.176 ms; HBM 2,147,483,648 B / 3.35 TB/s = 641 µs; so the link limits.
    session = Session(operations=[OperationEntry("ar", ALLREDUCE)])
    comparison = compare_session(session, [find_device("h100-sxm")])
    markdown = comparison_markdown(comparison)
    assert "4.176 ms, link (NVLink 4 (H100/H200 SXM))" in markdown and "memory (HBM)" not in markdown
    assert main(["compare", ALLREDUCE, "--devices", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    assert "link (NVLink 4 (H100/H200 SXM))" in out and "memory" not in out.splitlines()[2]
    # Data resident on the host: 3 × 2**28 × 4 B = 3,221,225,472 B over the host link (PCIe 5.0 x16,
    # 63 GB/s per direction) = 51.13 ms; the host link limits, and reads as a link too.
    assert main(["compare", "add(n=2**28, dtype=fp32, resident=host)", "--devices", "h100-sxm"]) == 0
    assert "link (host ↔ device (PCIe 5.0))" in capsys.readouterr().out
    # A GEMM still reads compute, an add memory, through the same function.
    session = Session(operations=[OperationEntry("g", GEMM), OperationEntry("a", "add(n=2**24, dtype=fp32)")])
    markdown = comparison_markdown(compare_session(session, [find_device("h100-sxm")]))
    assert "139 µs, compute (fp16_tc)" in markdown and "memory (HBM)" in markdown
