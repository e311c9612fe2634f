"""ncu counters at L2 and L1 / shared memory: the bytes an imported kernel moved across each interface."""

from __future__ import annotations

import math
from pathlib import Path

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
