"""ncu counters at L2 and L1 / shared memory: the bytes an imported kernel moved across each interface."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from workbench.profilers import read_profile
from workbench.profilers.counters import is_used_metric, l1_traffic, shared_wavefronts
from workbench.profilers.records import Metric

DATA = Path(__file__).resolve().parent / "data"
FIXTURE = DATA / "ncu_raw_hierarchy.csv"  # hand-written: one 4096³ fp16 GEMM kernel, two launches


def _metric(name: str, value: float, unit: str) -> Metric:
    return Metric(name, value, unit, str(value), unit, "")


def test_the_fixture_gives_dram_l2_and_l1_shared_bytes() -> None:
    (kernel,) = read_profile(FIXTURE).kernels()
    across = kernel.bytes_across("nersc")
    # DRAM: 67,108,864 B read (A and B once) + 33,554,432 B written (C) = 100,663,296 B, the compulsory bytes
    assert across["hbm"] == 100_663_296
    # L2 → SM: lts__t_bytes.sum = 2,147,483,648 B of 128×128 tile loads + 33,554,432 B of C = 2,181,038,080 B
    assert across["l2"] == 2_181_038_080
    # L1 / shared → registers: l1tex__t_bytes.sum 2,181,038,080 B + 67,108,864 shared wavefronts × 128 B
    # (8,589,934,592 B) = 10,770,972,672 B
    assert across["smem"] == 10_770_972_672
    assert kernel.l1_bytes is not None
    assert kernel.l1_bytes.source == "l1tex__t_bytes.sum + l1tex__data_pipe_lsu_wavefronts_mem_shared.sum × 128 B"
    # intensities: 137,438,953,472 FLOP over each: 1,365.3, 63.01 and 12.76 FLOP/B
    point = kernel.roofline_point()
    assert point is not None and math.isclose(point.intensity, 137_438_953_472 / 100_663_296)
    assert math.isclose(137_438_953_472 / across["l2"], 63.0153, rel_tol=1e-5)
    assert math.isclose(137_438_953_472 / across["smem"], 12.7601, rel_tol=1e-5)


def test_shared_wavefronts_from_the_load_and_store_parts_when_the_sum_is_missing() -> None:
    metrics = {
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": _metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 1000, ""),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": _metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 24, ""),
    }
    reading = shared_wavefronts(metrics)
    assert reading is not None and reading.value == 1024 * 128  # (1,000 + 24) wavefronts × 128 B
    # without the L1TEX tag bytes, the L1 / shared figure is the shared part alone
    total = l1_traffic(metrics)
    assert total is not None and total.value == 131_072


def test_a_kernel_without_l1_counters_has_no_l1_figure_and_the_counters_are_kept() -> None:
    assert l1_traffic({}) is None
    for name in ("l1tex__t_bytes.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "lts__t_bytes.sum"):
        assert is_used_metric(name)


# ---------------------------------------------------------------- ncu's own sections and the NERSC method

# hand-written, ncu's hierarchical-roofline metrics of both generations: an older release's run on an A100, a current one's on an H100
OLDER = DATA / "ncu_raw_levels_older_a100.csv"
CURRENT = DATA / "ncu_raw_levels_h100.csv"


def test_level_bytes_of_both_generations_by_ncus_sections_and_by_nersc() -> None:
    (scale,) = read_profile(OLDER).kernels()
    (gemm,) = read_profile(CURRENT).kernels()
    # scale_kernel on CC 8.0, collected by an older ncu: its sections' L2 is the L2 → L1 read bytes,
    # l1tex__m_xbar2l1tex_read_bytes.sum = 268,435,456 B; its L1 the local/global writeback cycles (CC 7.5–8.9)
    # 2,097,152 × 128 B = 268,435,456 B.
    ncu = scale.levels("ncu")
    assert ncu.l2 is not None and ncu.l2.value == 268_435_456
    assert ncu.l2.source == "l1tex__m_xbar2l1tex_read_bytes.sum (ncu's older sections)"
    assert ncu.l1 is not None and ncu.l1.value == 268_435_456
    assert ncu.l1.source == "l1tex__lsu_writeback_active_mem_lg.sum × 128 B"
    # NERSC: lts__t_bytes.sum 536,870,912 B (reads and writes); l1tex__t_bytes.sum 536,870,912 + 0 wavefronts
    # × 128 B: twice ncu's point at both levels for a copy-like kernel.
    nersc = scale.levels("nersc")
    assert nersc.l2 is not None and nersc.l2.value == 536_870_912 and nersc.l2.source == "lts__t_bytes.sum"
    assert nersc.l1 is not None and nersc.l1.value == 536_870_912
    # tiled GEMM on CC 9.0, current sections: L2 = lts__lts2xbar_cycles_active.sum 67,108,864 × 32 B
    # = 2,147,483,648 B; L1 = l1tex__lsu_writeback_active_mem_lgds.sum (CC ≥ 9.0) 50,331,648 × 128 B
    # = 6,442,450,944 B — not _mem_lg's 16,777,216 × 128 B, which the file also holds.
    ncu = gemm.levels("ncu")
    assert ncu.l2 is not None and ncu.l2.value == 2_147_483_648
    assert ncu.l2.source == "lts__lts2xbar_cycles_active.sum × 32 B"
    assert ncu.l1 is not None and ncu.l1.value == 6_442_450_944
    assert ncu.l1.source == "l1tex__lsu_writeback_active_mem_lgds.sum × 128 B"
    # NERSC: lts__t_bytes.sum 2,181,038,080 B; l1tex__t_bytes.sum 2,181,038,080 + 67,108,864 × 128 B
    # (8,589,934,592) = 10,770,972,672 B
    nersc = gemm.levels("nersc")
    assert nersc.l2 is not None and nersc.l2.value == 2_181_038_080
    assert nersc.l1 is not None and nersc.l1.value == 10_770_972_672
    # the interfaces' bytes follow the method; the intensities: 137,438,953,472 FLOP over each
    assert gemm.bytes_across("ncu") == {"hbm": 100_663_296, "l2": 2_147_483_648, "smem": 6_442_450_944}
    assert gemm.bytes_across("nersc") == {"hbm": 100_663_296, "l2": 2_181_038_080, "smem": 10_770_972_672}
    data = gemm.levels("ncu").to_dict(137_438_953_472)
    assert data["method"] == "ncu" and data["l2"]["metrics"] == "lts__lts2xbar_cycles_active.sum × 32 B"
    assert math.isclose(data["l1"]["intensity_flop_per_byte"], 137_438_953_472 / 6_442_450_944)  # 21.33 FLOP/B


def test_l1_by_compute_capability_and_a_counter_the_section_would_not_read() -> None:
    from workbench.profilers.counters import ncu_l1_traffic

    lg = {"l1tex__lsu_writeback_active_mem_lg.sum": Metric("l1tex__lsu_writeback_active_mem_lg.sum", 10, "cycle", "10", "cycle", "")}
    reading = ncu_l1_traffic(lg, "8.6")
    assert reading is not None and reading.value == 1280 and reading.source == "l1tex__lsu_writeback_active_mem_lg.sum × 128 B"
    # on CC 9.0 ncu's section reads _mem_lgds: the file lacks it, so _mem_lg is used and the source says so
    reading = ncu_l1_traffic(lg, "9.0")
    assert reading is not None and reading.value == 1280
    assert "ncu's section reads l1tex__lsu_writeback_active_mem_lgds.sum on CC 9.0" in reading.source


def test_a_file_with_only_the_nersc_counters_has_no_ncu_levels() -> None:
    (kernel,) = read_profile(FIXTURE).kernels()
    assert kernel.levels("ncu").l2 is None and kernel.levels("ncu").l1 is None
    assert set(kernel.bytes_across("ncu")) == {"hbm"}
    assert kernel.levels("ncu").describe() == "no level counters in the file (Nsight Compute's hierarchical-roofline sections)"


def test_import_ncu_levels_option_and_json(capsys) -> None:  # type: ignore[no-untyped-def]
    from workbench.cli import main

    assert main(["import-ncu", str(CURRENT)]) == 0
    out = capsys.readouterr().out
    assert "levels (Nsight Compute's hierarchical-roofline sections):" in out
    assert "tiled_gemm_128x128x32_kernel: L2 2.147 GB = lts__lts2xbar_cycles_active.sum × 32 B, 64 FLOP/B" in out
    assert main(["import-ncu", str(CURRENT), "--levels", "nersc"]) == 0
    out = capsys.readouterr().out
    assert "levels (the NERSC method (Yang et al., arXiv 2009.02449)):" in out
    assert "tiled_gemm_128x128x32_kernel: L2 2.181 GB = lts__t_bytes.sum, 63.02 FLOP/B" in out
    assert main(["import-ncu", str(CURRENT), "--levels", "nersc", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["levels_method"] == "nersc"
    (gemm,) = data["kernels"]
    assert gemm["levels"]["nersc"]["l2"]["bytes"] == 2_181_038_080
    assert gemm["levels"]["ncu"]["l2"]["bytes"] == 2_147_483_648
    with pytest.raises(SystemExit) as exit_code:  # argparse refuses an unknown method in one line, exit 2
        main(["import-ncu", str(CURRENT), "--levels", "roofs"])
    assert exit_code.value.code == 2
    assert "invalid choice: 'roofs' (choose from 'ncu', 'nersc')" in capsys.readouterr().err
