"""The lab demo's kernels: naive and tiled RawKernel GEMMs beside cuBLAS, selected by `impl=`.

On the CPU: which class each impl selects, the one-line refusal on NumPy, and
the planning a GPU run relies on (checked against a stand-in GPU backend that
never launches anything). On a GPU (`gpu`-marked, skipped here with the
probe's reason): each kernel passes the reference check, and the tiled one is
faster than the naive one.
"""

from __future__ import annotations

import pytest

from workbench.model.declare import parse
from workbench.model.devices.interfaces import HBM, L2
from workbench.measure import OK, UnsupportedMeasurement, measure
from workbench.measure.backends import NumpyBackend
from workbench.measure.kernels import kernel_for
from workbench.measure.kernels.gemm_raw import NaiveGemmKernel, RawGemmKernel, TiledGemmKernel, tile_problem
from workbench.measure.kernels.matrix import GemmKernel

FAST = {"iterations": 30, "warmup": 1}


class StandInGpu(NumpyBackend):
    """A backend that says it is a GPU (an H100's L2 and SM count), for planning only: nothing is launched."""

    kind = "gpu"
    device_name = "NVIDIA H100 80GB HBM3 (stand-in)"
    _props = {"l2CacheSize": 50 * 2**20, "multiProcessorCount": 132}


@pytest.mark.parametrize(
    ("text", "cls"),
    [
        ("gemm(M=64, N=64, K=64, dtype=fp32)", GemmKernel),
        ("gemm(M=64, N=64, K=64, dtype=fp32, impl=naive)", NaiveGemmKernel),
        ("gemm(M=64, N=64, K=64, dtype=fp32, impl=tiled, tile_m=32, tile_n=64, tile_k=16)", TiledGemmKernel),
    ],
)
def test_impl_selects_the_kernel(text: str, cls: type) -> None:
    assert GemmKernel.for_declaration(parse(text)) is cls
    assert type(kernel_for(parse(text), StandInGpu())) is cls


@pytest.mark.parametrize("impl", ["naive", "tiled"])
def test_numpy_refuses_the_raw_kernels_in_one_line(impl: str) -> None:
    with pytest.raises(UnsupportedMeasurement) as caught:
        measure(f"gemm(M=64, N=64, K=64, dtype=fp32, impl={impl})", backend="numpy", **FAST)
    message = str(caught.value)
    assert "\n" not in message
    assert f"impl={impl} is a CUDA RawKernel" in message and "only the model is shown" in message


def test_numpy_still_measures_the_library_gemm() -> None:
    record = measure("gemm(M=48, N=40, K=64, dtype=fp32, impl=compulsory)", backend="numpy", **FAST)
    assert record.status == OK, record.message


@pytest.mark.parametrize(
    ("tiles", "fragment"),
    [
        ((128, 128, 32), ""),
        ((16, 16, 1), ""),
        ((64, 32, 64), ""),
        ((8, 64, 16), "tile_m=8: the tiled kernel takes multiples of 16 from 16 to 128"),
        ((64, 100, 16), "tile_n=100"),
        ((256, 64, 16), "tile_m=256"),
        ((64, 64, 65), "tile_k=65: the tiled kernel takes 1 to 64"),
        # (129·64 + 64·128) · 4 B = 65,792 B > 49,152 B
        ((128, 128, 64), "need 65,792 B of shared memory"),
    ],
)
def test_tile_sizes_the_tiled_kernel_can_run(tiles: tuple[int, int, int], fragment: str) -> None:
    problem = tile_problem(*tiles)
    assert (fragment in problem) if fragment else problem == ""


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("gemm(M=64, N=64, K=64, dtype=fp16, impl=naive)", "declare dtype=fp32"),
        ("gemm(M=64, N=64, K=64, dtype=fp64, impl=tiled)", "declare dtype=fp32"),
        ("gemm(M=64, N=64, K=64, dtype=fp32, impl=tiled, tile_m=48, tile_n=24)", "tile_n=24"),
        ("gemm(M=2**21, N=16, K=16, dtype=fp32, impl=naive)", "grid limit"),
        ("gemm(M=16, N=16, K=16, batch=70000, dtype=fp32, impl=tiled, tile_m=16, tile_n=16)", "grid limit"),
    ],
)
def test_a_gpu_refuses_what_the_raw_kernels_cannot_run(text: str, fragment: str) -> None:
    with pytest.raises(UnsupportedMeasurement) as caught:
        kernel_for(parse(text), StandInGpu())
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_the_run_records_the_models_prediction() -> None:
    kernel = kernel_for(parse("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=naive)"), StandInGpu())
    assert isinstance(kernel, RawGemmKernel)
    implied, note = kernel.implied_traffic()
    # fp32 B (64 MiB) does not fit in 50 MiB of L2: A once, B 256 times, C once (see test_implementations)
    assert implied == 67_108_864 * (1 + 256 + 1) == kernel.predicted.bytes_by_interface[HBM]
    assert f"{kernel.predicted.bytes_by_interface[L2]:,} B L2 → SM" in note
    assert kernel.executed_path() == "fp32"
    assert all(spec.name != "product" for spec in kernel.buffers())  # β is applied in the kernel
    assert any(note.startswith("model: naive GEMM") for note in kernel.notes())

    tiled = kernel_for(parse("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=tiled, tile_m=64, tile_n=64, tile_k=16)"), StandInGpu())
    assert "64×64 tiles, k steps of 16" in tiled.algorithm() and "4×4 register micro-tiles" in tiled.algorithm()
    assert tiled.predicted.quantization is not None and tiled.predicted.quantization.sm_count == 132


# ------------------------------------------------------------------ on a GPU

SHAPES = [
    "gemm(M=256, N=256, K=256, dtype=fp32, impl={impl})",
    "gemm(M=100, N=75, K=130, dtype=fp32, impl={impl})",  # no dimension a multiple of any tile
    "gemm(M=33, N=47, K=19, batch=3, dtype=fp32, beta=1, impl={impl})",
]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "impl", ["naive", "tiled", "tiled, tile_m=128, tile_n=128, tile_k=8", "tiled, tile_m=16, tile_n=64, tile_k=64"]
)
def test_raw_kernels_pass_the_reference_check(shape: str, impl: str) -> None:
    record = measure(shape.format(impl=impl), backend="cupy", **FAST)
    assert record.status == OK, record.message
    assert record.check is not None and record.check.passed
    assert record.kernel.executed_path == "fp32" and "RawKernel" in record.kernel.algorithm


@pytest.mark.gpu
def test_tiling_beats_the_naive_kernel_and_cublas_beats_both() -> None:
    times = {}
    for impl in ("naive", "tiled", "compulsory"):
        record = measure(f"gemm(M=2048, N=2048, K=2048, dtype=fp32, impl={impl})", backend="cupy", **FAST)
        assert record.status == OK, record.message
        times[impl] = record.median_s
    assert None not in times.values()
    assert times["tiled"] < times["naive"]
    assert times["compulsory"] < times["naive"]


def test_the_benchmark_puts_each_measured_time_beside_its_prediction(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench_measure's lab rows, on the CPU with stand-in records: the median, the bound, the ratio, the model's bytes."""
    import importlib.util
    import sys
    import types
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_measure.py"
    spec = importlib.util.spec_from_file_location("bench_measure_for_lab", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    from workbench.measure import measure as real_measure

    medians = {"naive": 0.08, "tiled": 0.01, "compulsory": 0.004}
    asked = []
    # the rows also read each record as the window does (its dict through the run figures): a real record's
    template = real_measure("gemm(M=64, N=64, K=64, dtype=fp32)", backend="numpy", iterations=30, warmup=1).to_dict()

    def stand_in_measure(declaration: str, **options: object) -> object:
        asked.append((declaration, options["mode"], options["iterations"]))
        impl = parse(declaration).implementation
        bound = types.SimpleNamespace(bound_time_s=0.002, limiter="compute")
        data = {**template, "declaration": declaration, "samples_s": [medians[impl]] * 30}
        return types.SimpleNamespace(valid=True, median_s=medians[impl], bound=bound, flop=2 * 512**3, message="",
                                     to_dict=lambda: data)

    monkeypatch.setattr("workbench.measure.measure", stand_in_measure)
    rows = list(bench.lab_rows(StandInGpu(), 512))
    assert [row.check for row in rows] == [
        "lab demo 512³ fp32, cold: naive", "lab demo 512³ fp32, cold: tiled 64×64×16",
        "lab demo 512³ fp32, cold: tiled 128×128×8", "lab demo 512³ fp32, cold: cuBLAS",
    ]
    assert all(mode == "cold" and iterations == bench.LAB_ITERATIONS for _, mode, iterations in asked)
    assert rows[0].ratio == pytest.approx(0.002 / 0.08) and "= 2.5% of measured" in rows[0].measured
    # naive 512³ fp32: 2 · 512³ · 4 B of loads + C (1 MiB) cross L2 → SM
    assert f"model L2 → SM {2 * 512**3 * 4 + 512 * 512 * 4:,} B" in rows[0].measured
    assert "model" not in rows[3].measured  # cuBLAS: the library, no model of its own


def test_the_estimate_before_a_run_says_why_there_is_none() -> None:
    from workbench.measure.estimate import estimate_run

    estimate = estimate_run("gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=tiled)", backend="numpy", device=None)
    assert estimate.per_call_s is None and estimate.total_s is None
    assert estimate.text().startswith("no estimate: impl=tiled is a CUDA RawKernel")
    library = estimate_run("gemm(M=64, N=64, K=64, dtype=fp32)", backend="numpy", device=None, probe=False)
    assert library.note == "" or "RawKernel" not in library.note
