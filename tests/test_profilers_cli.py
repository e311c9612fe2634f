"""`workbench import-ncu` and `workbench import-nsys`: the per-kernel table, comparisons, JSON, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.profilers import Profile

DATA = Path(__file__).parent / "data"
ADD_MATCH = "cupy_add=add(n=2**24, dtype=fp32)"
GEMM_MATCH = "regex:xmma_gemm=gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def test_import_ncu_prints_a_table_of_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-ncu", str(DATA / "ncu_raw.csv")]) == 0
    out = capsys.readouterr().out
    assert "ncu_raw.csv: Nsight Compute CSV (raw page), 2 kernels, 4 launches, device NVIDIA H200 (CC 9.0)" in out
    add_row = next(line for line in out.splitlines() if line.startswith("cupy_add__float32_float32_float32"))
    # 2 launches, median duration 48.27 µs, reads 134.2 MB, writes 67.11 MB, 16.78 MFLOP
    for cell in ("48.27 µs", "134.2 MB", "67.11 MB", "201.5 MB", "16.78 MFLOP", "(131072, 1, 1) × (128, 1, 1)"):
        assert cell in add_row
    assert "locks the GPU clocks to base" in out


def test_import_ncu_with_matches_prints_the_comparisons(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["import-ncu", str(DATA / "ncu_details.csv"), "--match", ADD_MATCH, "--match", GEMM_MATCH, "--device", "h200-sxm"])
    out = capsys.readouterr().out
    assert code == 0
    assert "cupy_add__float32_float32_float32  ⟷  add(n=2**24, dtype=fp32)" in out
    assert "Traffic ratio, actual / compulsory          201.3 MB / 201.3 MB = 1.000×" in out
    # the GEMM: (118.76 + 33.55) MB / 100.7 MB = 1.513×
    assert "152.3 MB / 100.7 MB = 1.513×" in out
    assert "likely: re-reads" in out and "likely: working set larger than L2" in out
    assert "likely: work on a pipe these counters miss" in out


def test_import_ncu_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-ncu", str(DATA / "ncu_raw.csv"), "--json", "--match", ADD_MATCH, "--binary"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"] == "h200-sxm"  # named by the file
    assert [kernel["launches"] for kernel in data["kernels"]] == [2, 2]
    assert data["kernels"][0]["dram_read_bytes"] == 134_223_360
    (comparison,) = data["comparisons"]
    # 201,332,864 / 201,326,592
    assert comparison["traffic_ratio"] == pytest.approx(201_332_864 / 201_326_592)
    assert comparison["compulsory_bytes"] == 201_326_592
    restored = Profile.from_dict(data["profile"])
    assert restored.matches[0].declaration == "add(n=2**24, dtype=fp32)"
    assert len(restored.launches) == 4


def test_import_nsys(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["import-nsys", str(DATA / "nsys_cuda_gpu_kern_sum.csv"), "--match", ADD_MATCH, "--device", "h200-sxm"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Nsight Systems CSV (cuda_gpu_kern_sum report), 2 kernels, 60 launches" in out
    assert "48.06 µs / 41.94 µs = 1.146×" in out
    assert main(["import-nsys", str(DATA / "nsys_gpukernsum_legacy.csv"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kernels"][1]["base_name"] == "at::native::vectorized_elementwise_kernel"
    # An nsys kernel refers to its row of the profile record (written once) and adds what is derived from it.
    assert data["kernels"][1] == {"summary": 1, "base_name": "at::native::vectorized_elementwise_kernel", "duration_s": 0.0001494864}
    assert data["profile"]["summaries"][1]["kernel"].startswith("void at::native::vectorized_elementwise_kernel<4,")
    assert data["profile"]["summaries"][1]["median_s"] is None  # the older report has no median: the mean is the duration


def test_a_pattern_that_selects_nothing_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-ncu", str(DATA / "ncu_raw.csv"), "--match", "vector_add=add(n=2**24)"]) == 0
    out = capsys.readouterr().out
    assert "--match pattern 'vector_add' selects no kernel (kernels: cupy_add__float32_float32_float32" in out


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["import-nsys", str(DATA / "ncu_raw.csv")], "this is Nsight Compute output, not Nsight Systems; use `workbench import-ncu`"),
        (["import-ncu", str(DATA / "nsys_cuda_gpu_kern_sum.csv")], "use `workbench import-nsys`"),
        (["import-ncu", str(DATA / "missing.csv")], "no such file"),
        (["import-ncu", str(DATA / "ncu_raw.csv"), "--match", "cupy_add"], "PATTERN=DECLARATION"),
        (["import-ncu", str(DATA / "ncu_raw.csv"), "--match", "cupy_add=add(n=0)"], "n must be a positive integer"),
        (["import-ncu", str(DATA / "ncu_raw.csv"), "--device", "abacus"], "unknown device 'abacus'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], fragment: str) -> None:
    result = _run(*args)
    assert result.returncode == 2
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_malformed_file_names_its_line(tmp_path: Path) -> None:
    lines = (DATA / "ncu_details.csv").read_text().splitlines()
    lines[14] = lines[14][: len(lines[14]) // 2]  # cut one record in half
    path = tmp_path / "cut.csv"
    path.write_text("\n".join(lines) + "\n")
    result = _run("import-ncu", str(path))
    assert result.returncode == 2
    assert result.stderr.startswith("workbench: error: cut.csv, line 15: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_import_help_imports_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from workbench.cli import main\n"
        "for args in (['import-ncu', '--help'], ['import-nsys', '--help']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('PySide6', 'pyqtgraph', 'numpy', 'pint') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in result.stderr
    assert "PATTERN=DECL" in result.stdout and "--page raw" in result.stdout
