"""One run record: every figure of a run from its samples, on the device it ran on, the same in every view.

The figures a report, `workbench runs` and the window's table show all come
from `workbench.measure.runs.run_figures`; these tests hold them to one another and
to hand calculations, whichever device the session shows and whichever
FLOP convention it counts in.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from workbench.cli import main
from workbench.model.devices import Rate, find_device
from workbench.model.devices.catalogue import HOST_CPU_KEY
from workbench.model.devices.host import host_device
from workbench.model.devices.provenance import (
    CPU_DEVICE_KEY,
    INFERRED,
    DeviceProvenance,
    match_catalogue,
    provenance_from_environment,
)
from workbench.measure import RunRecord, measure
from workbench.model.plausibility import REASON_CHECKS, Evidence, Reason, impossible_result, is_beyond_bound, register_reason
from workbench.documents.report import build_report, render_markdown
from workbench.measure.runs import FigureContext, parse_run, read_runs, record_run, run_device, run_figures, stored_run
from workbench.documents.session import DeviceChoice, OperationEntry, Session, Settings, load, save

DATA = Path(__file__).parent / "data"
ADD = "add(n=2**16, dtype=fp32)"
GEMM = "gemm(M=64, N=64, K=64, dtype=fp32)"
FAST = {"iterations": 30, "warmup": 2}


@pytest.fixture(scope="module")
def cpu_add() -> RunRecord:
    return measure(ADD, backend="numpy", **FAST)


@pytest.fixture(scope="module")
def cpu_gemm() -> RunRecord:
    return measure(GEMM, backend="numpy", convention="fma2", **FAST)


def session_with(records: list[RunRecord], device: str, convention: str = "fma2") -> Session:
    operations = [OperationEntry(record.operation, record.declaration) for record in records]
    return Session(
        operations=operations,
        device=DeviceChoice(device),
        settings=Settings(convention=convention),
        runs=[record.to_dict() for record in records],
    )


def cli_runs(session: Session, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    path = tmp_path / "lab.json"
    save(session, path)
    assert main(["runs", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- provenance


def test_a_numpy_run_records_the_cpu_it_ran_on(cpu_add: RunRecord) -> None:
    p = cpu_add.provenance
    assert p is not None and p.kind == "cpu" and p.stated
    # compared with this machine's CPU as detected (cores, SIMD, caches), not the generic stand-in
    assert p.name == cpu_add.environment["cpu"] and p.catalogue_key == HOST_CPU_KEY
    assert DeviceProvenance.from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_a_cupy_environment_becomes_a_gpu_provenance_matched_by_name() -> None:
    environment = {
        "device_name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1234", "pci_bus_id": "0000:17:00.0",
        "driver": "550.54.15", "cuda_runtime": "12.4", "compute_capability": "9.0",
        "memory_total_bytes": 85_899_345_920, "l2_bytes": 52_428_800,
    }
    device, how = match_catalogue("gpu", environment["device_name"])
    assert device is not None and device.key == "h100-sxm" and how == "name"
    p = provenance_from_environment("gpu", environment, device.key, how)
    assert (p.uuid, p.pci_bus_id, p.driver_version, p.cuda_version) == ("GPU-1234", "0000:17:00.0", "550.54.15", "12.4")
    assert p.cache_bytes == 52_428_800 and p.memory_bytes == 85_899_345_920


def test_a_version_1_record_migrates_and_keeps_one_copy_of_each_figure(cpu_add: RunRecord) -> None:
    old = cpu_add.to_dict()
    old["version"] = 1
    del old["provenance"]
    # version 1 stored each figure twice, under two spellings
    old["derived"] = {"achieved_byte_per_s": 1.0}
    old.update(achieved_bytes_per_s=2.0, median_s=3.0, valid=True, conditions={"device": "x"})
    migrated = stored_run(old)
    assert migrated["version"] == 2
    assert not {"derived", "achieved_bytes_per_s", "median_s", "valid", "conditions"} & set(migrated)
    assert migrated["provenance"]["kind"] == "cpu" and migrated["provenance"]["catalogue_key"] == HOST_CPU_KEY
    assert RunRecord.from_dict(migrated).samples_s == cpu_add.samples_s


@pytest.mark.parametrize("name", ["session_v1.json", "session_v1_minimal.json"])
def test_old_session_files_still_open_and_read_their_runs(name: str) -> None:
    session = load(DATA / name)
    for figures in session.run_figures():
        assert figures.stats is None or figures.median_s == figures.stats.median_s


def test_the_fixture_cpu_run_is_compared_with_the_cpu_and_its_measured_rate() -> None:
    session = load(DATA / "session_v1.json")
    (figures,) = session.run_figures()
    # a loose run from NumPy: the CPU entry, which the session shows with its measured 20 GB/s
    assert figures.device is not None and figures.device.key == CPU_DEVICE_KEY and figures.on_session_device
    assert figures.bound_time_s == pytest.approx(session.analyze(session.operations[0]).bound_time)
    assert figures.device.bandwidth.value == 20e9 and figures.device.bandwidth.source == "measured"
    assert figures.run.provenance.stated_by == INFERRED


# ---------------------------------------------------------------- one figure, every view


@pytest.mark.parametrize("shown", [HOST_CPU_KEY, "h100-sxm"])
def test_a_cpu_run_has_one_percent_of_bound_whichever_device_the_session_shows(
    cpu_add: RunRecord, shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = session_with([cpu_add], shown)
    (figures,) = session.run_figures()
    # bound on this machine's CPU: 3 × 2^16 × 4 B = 786,432 B / 51.2 GB/s (nominal) = 15.36 µs, over the median
    assert figures.device is not None and figures.device.key == HOST_CPU_KEY
    assert figures.bound_time_s == pytest.approx(786_432 / 51.2e9)
    assert figures.percent_of_bound == pytest.approx(100 * 786_432 / 51.2e9 / figures.median_s)
    (reported,) = build_report(session).operations[0].runs
    assert reported.percent_of_bound == figures.percent_of_bound
    (listed,) = cli_runs(session, tmp_path, capsys)
    assert listed["percent_of_bound"] == pytest.approx(figures.percent_of_bound, rel=1e-12)
    assert listed["device"] == HOST_CPU_KEY
    markdown = render_markdown(session)
    short = host_device().name.split(" (")[0]
    if shown == "h100-sxm":  # said beside the figure, in the report and in the CLI
        assert "not the session's NVIDIA H100 SXM" in figures.device_note and reported.other_device
        assert f"% (on {short}" in markdown and "not the session's NVIDIA H100 SXM" in listed["device_note"]
    else:
        assert figures.device_note == "" and not reported.other_device and f"(on {short}" not in markdown


def test_a_gemm_measured_under_fma2_reads_in_the_session_s_mac_convention_everywhere(
    cpu_gemm: RunRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cpu_gemm.convention == "fma2"
    session = session_with([cpu_gemm], "cpu-generic", convention="mac")
    (figures,) = session.run_figures()
    # mac counts a multiply-add once: 64 × 64 × 64 = 262,144 FLOP over the median
    assert figures.flop == 64**3
    assert figures.achieved_flop_per_s == pytest.approx(64**3 / figures.median_s)
    (reported,) = build_report(session).operations[0].runs
    assert reported.achieved_flop_per_s == figures.achieved_flop_per_s
    (listed,) = cli_runs(session, tmp_path, capsys)
    assert listed["achieved_flop_per_s"] == pytest.approx(figures.achieved_flop_per_s, rel=1e-12)
    assert listed["convention"] == "mac"
    session.settings.convention = "fma2"  # and back: twice as many FLOP, everywhere
    (again,) = session.run_figures()
    assert again.achieved_flop_per_s == pytest.approx(2 * figures.achieved_flop_per_s)
    assert build_report(session).operations[0].runs[0].achieved_flop_per_s == again.achieved_flop_per_s


def test_the_cli_prints_the_figures_the_session_would_show(cpu_add: RunRecord, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", ADD, "--backend", "numpy", "--iterations", "30", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    record = RunRecord.from_dict(data)
    figures = run_figures(record_run(record), FigureContext())
    assert data["derived"] == json.loads(json.dumps(figures.to_dict()))
    assert "achieved_bytes_per_s" not in data and "median_s" not in data  # one name per figure, in one place


# ---------------------------------------------------------------- impossible results


def impossible_run(record: RunRecord, seconds: float = 1e-7) -> dict[str, Any]:
    """The record with every sample far below its device's bound (15.36 µs for the add on the generic CPU)."""
    return replace(record, samples_s=tuple(seconds * (1 + i / 100) for i in range(30))).to_dict()


def test_a_run_beyond_its_own_device_s_bound_is_flagged_with_reasons(
    cpu_add: RunRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = session_with([cpu_add], HOST_CPU_KEY)
    session.device = DeviceChoice(HOST_CPU_KEY, overrides={"hbm": Rate(20e9, "measured")})  # calibrated: a floor
    session.runs = [impossible_run(cpu_add)]
    (figures,) = session.run_figures()
    flag = figures.impossible
    assert flag is not None and flag.percent_of_bound > 105
    names = [reason.name for reason in flag.likely_reasons]
    # warm mode, 786 kB working set in the CPU's cache
    assert "data served from cache" in names
    assert {reason.name for reason in flag.reasons} >= {"wrong device", "declaration does not describe the kernel"}
    markdown = render_markdown(session)
    assert "⚠ impossible" in markdown and "faster than the device allows" in markdown
    (listed,) = cli_runs(session, tmp_path, capsys)
    assert listed["impossible"]["percent_of_bound"] == pytest.approx(flag.percent_of_bound)
    path = tmp_path / "lab.json"
    assert main(["runs", str(path)]) == 0
    assert "IMPOSSIBLE" in capsys.readouterr().out


def test_a_run_beyond_a_bound_that_rests_on_a_nominal_figure_gets_no_verdict(
    cpu_add: RunRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # this machine's DRAM bandwidth is a nominal 51.2 GB/s until calibrated: a guess, not a floor
    for shown in (HOST_CPU_KEY, CPU_DEVICE_KEY):
        session = session_with([cpu_add], shown)
        session.runs = [impossible_run(cpu_add)]
        (figures,) = session.run_figures()
        assert figures.percent_of_bound is not None and figures.percent_of_bound > 105
        assert figures.impossible is None
        assert "impossible" not in render_markdown(session)
        (listed,) = cli_runs(session, tmp_path, capsys)
        assert listed["impossible"] is None
    # a profile or a run on the generic stand-in: its figures are nominal too
    assert find_device(CPU_DEVICE_KEY).bandwidth.source == "nominal"


def test_a_run_within_its_spread_of_the_bound_is_not_flagged() -> None:
    assert not is_beyond_bound(1.04)  # within 5 %
    assert not is_beyond_bound(1.2, slow_fraction=0.95)  # the slow end of its spread is behind the bound
    assert is_beyond_bound(1.2, slow_fraction=1.01)
    assert is_beyond_bound(1.2)  # a profile: one duration, no spread


def test_another_part_of_the_app_can_add_a_reason() -> None:
    def misread_unit(e: Evidence) -> Reason | None:
        if e.measured_time_s is not None and e.declared_bytes and e.declared_bytes / e.measured_time_s > 1e14:
            return Reason("number read in the wrong unit", "implied bandwidth beyond any device", likely=True)
        return None

    register_reason(misread_unit)
    try:
        evidence = Evidence(
            fraction_of_bound=50.0, slow_fraction=None, device_name="GPU", device_stated=True, device_note="",
            rate_sources=("datasheet",), nominal_rates=False, limiter="memory", warm=None, working_set_bytes=None,
            cache_bytes=None, declared_bytes=10**9, moved_bytes=None, measured_time_s=1e-6,
        )
        flag = impossible_result(evidence)
        assert flag is not None and flag.reasons[0].name == "number read in the wrong unit"
    finally:
        REASON_CHECKS.remove(misread_unit)


# ---------------------------------------------------------------- devices a run can be compared with


def test_a_run_that_states_no_device_is_compared_with_the_session_s_and_says_so() -> None:
    run = parse_run({"declaration": ADD, "samples_s": [1e-3] * 3}, 0)
    device, note, same = run_device(run.provenance, find_device("h200-sxm"))
    assert device is not None and device.key == "h200-sxm" and same and "does not state its device" in note


def test_an_early_gpu_run_that_names_no_gpu_is_compared_with_a_gpu_the_session_shows() -> None:
    run = parse_run({"declaration": ADD, "backend": "cupy", "samples_s": [1e-3] * 3, "valid": True}, 0)
    device, note, same = run_device(run.provenance, find_device("h100-sxm"))
    assert device is not None and device.key == "h100-sxm" and same and "does not say which GPU" in note
    device, note, same = run_device(run.provenance, find_device(CPU_DEVICE_KEY))
    assert device is None and not same and "no bound" in note  # never the CPU


def test_a_gpu_the_catalogue_does_not_know_gets_no_bound() -> None:
    provenance = DeviceProvenance(kind="gpu", name="Imaginary GPU 9000", stated_by="NVML")
    device, note, _ = run_device(provenance, find_device("h100-sxm"))
    assert device is None and "which the catalogue does not know" in note


def test_the_session_s_measured_rate_applies_to_runs_on_its_own_device(cpu_add: RunRecord) -> None:
    session = session_with([cpu_add], HOST_CPU_KEY)
    session.device = DeviceChoice(HOST_CPU_KEY, overrides={"hbm": Rate(25e9, "measured")})
    (figures,) = session.run_figures()
    assert figures.bound_time_s == pytest.approx(786_432 / 25e9)  # measured > datasheet, on that device
    session.device = DeviceChoice("h100-sxm")
    (elsewhere,) = session.run_figures()
    assert elsewhere.bound_time_s == pytest.approx(786_432 / 51.2e9)  # the session shows another device


def test_runs_are_parsed_once_per_stored_dict(cpu_add: RunRecord) -> None:
    runs = [cpu_add.to_dict()]
    first, = read_runs(runs)
    again, = read_runs(runs)
    assert again is first
    runs[0] = cpu_add.to_dict()  # replaced (as the window's undo commands do): read anew
    assert read_runs(runs)[0] is not first


# ---------------------------------------------------------------- the headless lab flow


def test_measure_save_to_creates_and_appends_atomically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lab.json"
    assert main(["measure", ADD, "--backend", "numpy", "--iterations", "30", "--save-to", str(path)]) == 0
    out = capsys.readouterr().out
    assert "saved as run 1 of" in out and "ran on" in out
    first = load(path)
    assert first.device.key == HOST_CPU_KEY  # a new session shows the device it measured: this machine's CPU
    assert [entry.declaration for entry in first.operations] == [ADD]
    assert main(["measure", GEMM, "--backend", "numpy", "--iterations", "30", "--save-to", str(path)]) == 0
    second = load(path)
    assert len(second.runs) == 2 and second.runs[0] == first.runs[0]
    assert second.runs[1]["provenance"]["kind"] == "cpu"
    # no temporary file left behind; the lock file beside the session is its writers' (workbench/documents/session_sync.py)
    assert sorted(os.listdir(tmp_path)) == ["lab.json", "lab.json.lock"]
    (add_run, gemm_run) = second.run_figures()
    assert add_run.operation_name == "add" and gemm_run.operation_name == "gemm"


def test_save_to_a_file_that_is_not_a_session_is_one_line_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.json"
    path.write_text("[1, 2, 3]", encoding="utf-8")
    assert main(["measure", ADD, "--backend", "numpy", "--save-to", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "notes.json" in err
    assert path.read_text(encoding="utf-8") == "[1, 2, 3]"  # left as it was


# ---------------------------------------------------------------- on a GPU


@pytest.mark.gpu
def test_a_cupy_run_records_the_gpu_nvml_and_cuda_state() -> None:
    record = measure("add(n=2**20, dtype=fp32)", backend="cupy", **FAST)
    p = record.provenance
    assert p is not None and p.kind == "gpu" and p.stated
    assert p.name == record.environment["device_name"] and p.compute_capability
    assert p.pci_bus_id and p.cuda_version and p.memory_bytes and p.cache_bytes
    assert p.uuid.startswith("GPU-") and p.driver_version  # NVML is there wherever CuPy runs on an NVIDIA driver
    device, how = match_catalogue("gpu", p.name, p.compute_capability)
    assert p.catalogue_key == (device.key if device is not None and how == "name" else "")
    figures = run_figures(record_run(record), FigureContext(session_device=find_device(CPU_DEVICE_KEY)))
    assert figures.device is None or figures.device.kind == "gpu"  # never the CPU the session shows


def test_a_profiled_kernel_beyond_its_own_gpu_s_bound_is_flagged_in_the_cli_and_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.profilers import MatchRule, compare_profile, read_profile

    # the vector add of ncu_details.csv matched with a declaration four times its size:
    # 805,306,368 B / 4.8 TB/s = 167.8 µs bound, against 48.35 µs profiled
    too_big = "add(n=2**26, dtype=fp32)"
    profile = read_profile(DATA / "ncu_details.csv").with_matches([MatchRule("cupy_add", too_big)])
    (comparison,) = compare_profile(profile)
    flag = comparison.impossible
    assert flag is not None and flag.percent_of_bound == pytest.approx(100 * 805_306_368 / 4.8e12 / 48.35e-6, rel=1e-3)
    likely = {reason.name for reason in flag.likely_reasons}
    # the kernel moved 0.25× the declared bytes; the file named only a compute capability, not the GPU
    assert likely == {"declaration does not describe the kernel", "wrong device"}
    session = Session(operations=[OperationEntry("add", too_big)], device=DeviceChoice("cpu-generic"),
                      profiles=[profile.to_dict()])
    assert "⚠ impossible" in render_markdown(session)
    assert main(["import-ncu", str(DATA / "ncu_details.csv"), "--match", f"cupy_add={too_big}"]) == 0
    assert "IMPOSSIBLE" in capsys.readouterr().out


def test_the_run_in_progress_is_typed_without_a_stored_dict() -> None:
    """The live row: what has been timed so far, its device the backend's kind, stored nowhere."""
    from workbench.measure.run import RunStarted
    from workbench.measure.runs import run_in_progress

    started = RunStarted("add(n=1024, dtype=fp32)", "numpy", "CPU: test", "warm", 30, 12288)
    run = run_in_progress(started, [2e-6, 1e-6, float("nan")], "my add", "running", "running")
    assert (run.index, run.id, run.operation_name, run.status) == (-1, "in progress", "my add", "running")
    assert run.declaration is not None and run.declaration.op == "add"
    assert run.samples_s == (2e-6, 1e-6)  # only finite samples count
    assert run.provenance.kind == "cpu" and run.where == "CPU: test"
    figures = run_figures(run, FigureContext())
    assert figures.stats is not None and figures.stats.median_s == pytest.approx(1.5e-6)


def test_a_session_of_thousands_of_runs_is_parsed_once_not_on_every_refresh(cpu_add: RunRecord, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every refresh of the plots and the run table reads all of a session's runs; with more runs than a fixed
    cache held, each refresh parsed them all again (5,000 runs: seconds a keystroke)."""
    from workbench.measure import runs as runs_module
    data = cpu_add.to_dict()
    session_runs = [dict(data, id=f"run{index:05d}") for index in range(3000)]
    parses: list[int] = []
    real = runs_module.parse_run
    monkeypatch.setattr(runs_module, "parse_run", lambda run, index: parses.append(index) or real(run, index))
    first = runs_module.read_runs(session_runs)
    assert len(parses) == 3000
    again = runs_module.read_runs(session_runs)
    assert len(parses) == 3000 and [a is b for a, b in zip(first, again)] == [True] * 3000


def test_a_bound_on_a_results_own_device_is_analysed_once_per_device_object() -> None:
    from workbench.measure.runs import bound_analysis
    from workbench.model.declare import parse

    gemm = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    h100 = find_device("h100-sxm")
    first = bound_analysis(gemm, h100, "fma2", "full")
    assert bound_analysis(parse(str(gemm)), h100, "fma2", "full") is first  # an equal declaration: the same analysis
    # 2 × 4096³ FLOP / 989 TFLOP/s = 139 µs
    assert first.bound_time == pytest.approx(2 * 4096**3 / 989e12)
    # another device object with a measured rate is another device: its own bound, not the one kept
    measured = replace(h100, overrides={"fp16_tc": Rate(494.5e12, "measured")})
    assert bound_analysis(gemm, measured, "fma2", "full").bound_time == pytest.approx(2 * 4096**3 / 494.5e12)
    no_device = bound_analysis(gemm, None, "fma2", "full")
    assert no_device.bound_time is None and no_device.flop == 2 * 4096**3
    v100 = find_device("v100-sxm2")
    assert bound_analysis(parse("gemm(M=64, N=64, K=64, dtype=int8)"), v100, "fma2", "full").startswith("no bound on NVIDIA Tesla V100")
