"""The RawKernel sources, checked without a GPU: compiled as C++20 with one std::thread per CUDA thread.

A small header turns the CUDA dialect into C++ (threadIdx thread-local,
__syncthreads a barrier over the block's threads, __shared__ one static per
block run); each block of the grid runs in turn. The kernels' indexing,
edge predicates, tiles, micro-tiles and β epilogue then compute real
results, compared with a float64 product. Skipped where no C++20 compiler is
installed; the `gpu` tests in test_measure_raw_gemm.py run the same sources
through NVRTC.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cuda_emulation import COMPILER, EMULATION
from workbench.measure.kernels.gemm_raw import NAIVE_SOURCE, TILED_SOURCE

pytestmark = pytest.mark.skipif(COMPILER is None, reason="no g++ to compile the emulated kernels")

HARNESS = r"""
int main(int argc, char** argv) {
    const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]), batch = atoi(argv[4]);
    const float beta = atof(argv[5]);
    const int variant = atoi(argv[6]);
    std::vector<float> A(batch * M * K), B(batch * K * N), C(batch * M * N);
    srand(7);
    for (auto& v : A) v = rand() / float(RAND_MAX) - 0.5f;
    for (auto& v : B) v = rand() / float(RAND_MAX) - 0.5f;
    for (auto& v : C) v = rand() / float(RAND_MAX) - 0.5f;
    const std::vector<float> initial = C;
    switch (variant) {
LAUNCHES
    default: return 2;
    }
    double worst = 0;
    for (int e = 0; e < batch; ++e) for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) {
        double sum = beta * initial[e * M * N + i * N + j];
        for (int k = 0; k < K; ++k) sum += double(A[e * M * K + i * K + k]) * B[e * K * N + k * N + j];
        worst = std::fmax(worst, std::fabs(sum - C[e * M * N + i * N + j]));
    }
    printf("%g\n", worst);
    return 0;
}
"""

SHAPES = [(100, 75, 130, 1, 0.0), (33, 47, 19, 3, 1.0), (64, 64, 64, 1, 0.0)]
TILES = [(32, 64, 16), (16, 32, 5), (128, 128, 8), (16, 64, 64)]
# A micro-tile read at the wrong row (a blocked instead of a strided layout): the emulation must catch it.
BROKEN = TILED_SOURCE.replace("a[i] = As[kk][ty + 16 * i];", "a[i] = As[kk][ty * RM + i];")
BROKEN_TILES = (32, 32, 8)


def _program() -> str:
    """One translation unit: the naive kernel (variant 0), each tiling (1…), the broken kernel (last)."""
    parts = [EMULATION, "namespace v0 {", NAIVE_SOURCE.replace('extern "C"', ""), "}"]
    launches = [
        "    case 0: launch({(N + 15) / 16, (M + 15) / 16, batch}, {16, 16, 1}, "
        "[&] { v0::naive_gemm(A.data(), B.data(), C.data(), M, N, K, beta); }); break;"
    ]
    for number, (source, (tm, tn, tk)) in enumerate([(TILED_SOURCE, t) for t in TILES] + [(BROKEN, BROKEN_TILES)], 1):
        parts += [f"#define TILE_M {tm}\n#define TILE_N {tn}\n#define TILE_K {tk}", f"namespace v{number} {{",
                  source.replace('extern "C"', ""), "}", "#undef TILE_M\n#undef TILE_N\n#undef TILE_K\n#undef RM\n#undef RN"]
        launches.append(
            f"    case {number}: launch({{(N + {tn} - 1) / {tn}, (M + {tm} - 1) / {tm}, batch}}, {{16, 16, 1}}, "
            f"[&] {{ v{number}::tiled_gemm(A.data(), B.data(), C.data(), M, N, K, beta); }}); break;"
        )
    return "\n".join(parts) + HARNESS.replace("LAUNCHES", "\n".join(launches))


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("raw_gemm")
    program = tmp / "kernels.cpp"
    program.write_text(_program())
    binary = tmp / "kernels"
    subprocess.run(
        [COMPILER, "-std=c++20", "-O1", "-pthread", "-Wno-unknown-pragmas", "-o", str(binary), str(program)],
        check=True, capture_output=True, timeout=300,
    )
    return binary


def worst_error(binary: Path, shape: tuple[int, int, int, int, float], variant: int) -> float:
    result = subprocess.run([str(binary), *map(str, shape), str(variant)], check=True, capture_output=True,
                            text=True, timeout=120)
    return float(result.stdout)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_naive_kernel_computes_the_product(emulated: Path, shape: tuple[int, int, int, int, float]) -> None:
    assert worst_error(emulated, shape, 0) < 1e-4  # fp32 sums of ≤ 130 products of values in [-0.5, 0.5)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("variant", range(1, len(TILES) + 1), ids=[f"{m}x{n}x{k}" for m, n, k in TILES])
def test_the_tiled_kernel_computes_the_product(emulated: Path, variant: int, shape: tuple[int, int, int, int, float]) -> None:
    assert worst_error(emulated, shape, variant) < 1e-4


def test_the_emulation_catches_a_wrong_index(emulated: Path) -> None:
    assert BROKEN != TILED_SOURCE
    assert worst_error(emulated, SHAPES[0], len(TILES) + 1) > 1e-2
