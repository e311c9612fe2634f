"""The chapter's lab demo: a naive and a shared-memory tiled GEMM as CuPy RawKernels, beside cuBLAS.

Three implementations of the same product, selected by the declaration's
`impl=`: `compulsory` (the default) measures the library (cuBLAS through
`backend.matmul`), `naive` and `tiled` measure the two kernels here. All three
do the same logical work, 2·M·N·K FLOP, and very different physical traffic;
`workbench.model.implementations` predicts that traffic per interface, and the run
records the prediction beside the measured time.

Choices, stated once:
- Operands are fp32 and products accumulate in fp32 on the CUDA cores (no
  tensor cores, no TF32), so cuBLAS at `dtype=fp32` (CUBLAS_COMPUTE_32F)
  runs the same arithmetic and the three times compare like with like.
- Both kernels use 16 × 16 thread blocks laid out as the models assume:
  blockIdx.x walks along N, so the blocks of one row of C run together.
- naive: one thread per element of C, reading its row of A and its column of
  B straight from global memory (threadIdx.x along N: B's loads coalesce,
  A's are broadcast within a half-warp).
- tiled: one CTA per tile_m × tile_n tile of C; each k step stages a
  tile_m × tile_k slice of A and a tile_k × tile_n slice of B in shared
  memory (zero-filled past the edges); each thread accumulates a
  (tile_m/16) × (tile_n/16) micro-tile in registers, reading that many values
  of A and of B from shared memory per k step.

On the CPU there is no naive or tiled kernel to time — NumPy would call the
same BLAS routine for every `impl=` — so the measurement is refused in one
line and the window shows the model only.
"""

from __future__ import annotations

from abc import abstractmethod
from functools import cached_property
from typing import Any

from workbench.model.declare import Declaration
from workbench.model.devices.interfaces import HBM
from workbench.measure.check import Precision, precision_for
from workbench.measure.errors import UnsupportedMeasurement
from workbench.measure.kernels.base import BufferSpec
from workbench.measure.kernels.matrix import GemmKernel

THREADS = 16  # threads per block side (16 × 16 = 256 threads per block)
MAX_GRID_YZ = 65_535  # CUDA's limit on gridDim.y and gridDim.z
MAX_INT32 = 2**31 - 1
SHARED_LIMIT = 48 * 1024  # static shared memory per block without opting in
MAX_MICRO_TILE = 8  # tile_m and tile_n up to 8 × 16 = 128: at most 64 accumulators per thread
MAX_TILE_K = 64

NAIVE_SOURCE = r"""
extern "C" __global__ void naive_gemm(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K, float beta)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    const long long entry = blockIdx.z;
    const float* a = A + entry * (long long)M * K + (long long)row * K;
    const float* b = B + entry * (long long)K * N + col;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += a[k] * b[(long long)k * N];
    }
    float* c = C + entry * (long long)M * N + (long long)row * N + col;
    *c = (beta == 0.0f) ? acc : acc + beta * *c;
}
"""

TILED_SOURCE = r"""
#define RM (TILE_M / 16)
#define RN (TILE_N / 16)
extern "C" __global__ void __launch_bounds__(256) tiled_gemm(
    const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
    int M, int N, int K, float beta)
{
    // A's slice is stored transposed, one column of padding against bank conflicts on the store.
    __shared__ float As[TILE_K][TILE_M + 1];
    __shared__ float Bs[TILE_K][TILE_N];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const long long entry = blockIdx.z;
    A += entry * (long long)M * K;
    B += entry * (long long)K * N;
    C += entry * (long long)M * N;
    const int row0 = blockIdx.y * TILE_M, col0 = blockIdx.x * TILE_N;
    float acc[RM][RN];
    #pragma unroll
    for (int i = 0; i < RM; ++i)
        #pragma unroll
        for (int j = 0; j < RN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        for (int e = tid; e < TILE_M * TILE_K; e += 256) {
            const int r = e / TILE_K, kk = e % TILE_K;
            const int gr = row0 + r, gk = k0 + kk;
            As[kk][r] = (gr < M && gk < K) ? A[(long long)gr * K + gk] : 0.0f;
        }
        for (int e = tid; e < TILE_K * TILE_N; e += 256) {
            const int kk = e / TILE_N, c = e % TILE_N;
            const int gk = k0 + kk, gc = col0 + c;
            Bs[kk][c] = (gk < K && gc < N) ? B[(long long)gk * N + gc] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < TILE_K; ++kk) {
            float a[RM], b[RN];
            #pragma unroll
            for (int i = 0; i < RM; ++i) a[i] = As[kk][ty + 16 * i];
            #pragma unroll
            for (int j = 0; j < RN; ++j) b[j] = Bs[kk][tx + 16 * j];
            #pragma unroll
            for (int i = 0; i < RM; ++i)
                #pragma unroll
                for (int j = 0; j < RN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < RM; ++i) {
        const int r = row0 + ty + 16 * i;
        #pragma unroll
        for (int j = 0; j < RN; ++j) {
            const int c = col0 + tx + 16 * j;
            if (r < M && c < N) {
                float* out = C + (long long)r * N + c;
                *out = (beta == 0.0f) ? acc[i][j] : acc[i][j] + beta * *out;
            }
        }
    }
}
"""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def tile_problem(tile_m: int, tile_n: int, tile_k: int) -> str:
    """Why the tiled RawKernel cannot run these tile sizes, or '' when it can."""
    for name, size in (("tile_m", tile_m), ("tile_n", tile_n)):
        if size % THREADS or not THREADS <= size <= THREADS * MAX_MICRO_TILE:
            return f"{name}={size}: the tiled kernel takes multiples of 16 from 16 to {THREADS * MAX_MICRO_TILE}"
    if not 1 <= tile_k <= MAX_TILE_K:
        return f"tile_k={tile_k}: the tiled kernel takes 1 to {MAX_TILE_K}"
    shared = ((tile_m + 1) * tile_k + tile_k * tile_n) * 4
    if shared > SHARED_LIMIT:
        return f"tiles {tile_m}×{tile_n}×{tile_k} need {shared:,} B of shared memory; the kernel has {SHARED_LIMIT:,} B"
    return ""


class RawGemmKernel(GemmKernel):
    """GEMM through one of the lab's RawKernels; buffers, β handling and the reference check are GemmKernel's."""

    implementation = ""  # "naive" or "tiled"

    def check_supported(self) -> None:
        impl = self.implementation
        if self.backend.kind != "gpu":
            raise UnsupportedMeasurement(
                f"impl={impl} is a CUDA RawKernel: on the CPU NumPy runs the same matmul for every impl, "
                f"so only the model is shown; measure impl=compulsory here or impl={impl} on a GPU"
            )
        super().check_supported()
        p = self.params
        if p["a"] != "fp32":
            raise UnsupportedMeasurement(
                f"impl={impl} measures fp32 operands (fp32 accumulate on the CUDA cores); declare dtype=fp32"
            )
        m, n, k, batch = int(p["M"]), int(p["N"]), int(p["K"]), int(p["batch"])
        if max(m, n, k) > MAX_INT32:
            raise UnsupportedMeasurement(f"impl={impl}: M, N and K must each fit in 32 bits")
        rows = _ceil_div(m, self.block_rows())
        if rows > MAX_GRID_YZ or batch > MAX_GRID_YZ:
            raise UnsupportedMeasurement(
                f"impl={impl}: {rows:,} block rows × {batch:,} batch entries exceed CUDA's grid limit of {MAX_GRID_YZ:,}"
            )

    def block_rows(self) -> int:
        return THREADS

    def buffers(self) -> list[BufferSpec]:
        # β is applied inside the kernel: no scratch product.
        return [spec for spec in super().buffers() if spec.name != "product"]

    def executed_path(self) -> str:
        return "fp32"  # CUDA cores, fp32 multiply-add: no tensor cores, no TF32

    def precision(self) -> Precision:
        return precision_for("fp32", "fp32", tf32_inputs=False)

    @cached_property
    def predicted(self) -> Any:
        """The implementation model's physical work on this GPU (its L2 size and SM count, from CUDA)."""
        from workbench.model.devices.catalogue import Device
        from workbench.model.implementations import physical_work

        props = getattr(self.backend, "_props", {})  # cudaDeviceProp of the GPU the run uses
        device = Device(
            key="measured-gpu",
            name=str(getattr(self.backend, "device_name", "") or self.backend.describe()),
            kind="gpu",
            peak={},
            l2_bytes=int(props.get("l2CacheSize", 0)) or None,
            sm_count=int(props.get("multiProcessorCount", 0)) or None,
        )
        return physical_work(self.declaration, self.declaration.workload(), device)

    def implied_traffic(self) -> tuple[int, str]:
        physical = self.predicted
        hbm = int(physical.bytes_by_interface[HBM])
        loads = int(physical.bytes_by_interface["l2"])
        return hbm, (
            f"impl={self.implementation} model on this GPU: {hbm:,} B HBM → L2 and {loads:,} B L2 → SM "
            "(see the derivation's assumptions)"
        )

    def notes(self) -> list[str]:
        return [*super().notes(), *(f"model: {sentence}" for sentence in self.predicted.assumptions)]

    @abstractmethod
    def launch(self) -> tuple[Any, tuple[int, int, int], tuple[int, int, int]]:
        """The compiled kernel, its grid and its block."""

    def prepare(self) -> None:
        import numpy as np

        p = self.params
        self._kernel, self._grid, self._block = self.launch()
        self._scalars = (np.int32(p["M"]), np.int32(p["N"]), np.int32(p["K"]), np.float32(self.beta))

    def __call__(self) -> None:
        a = self.arrays
        self._kernel(self._grid, self._block, (a["A"], a["B"], a["C"], *self._scalars))


class NaiveGemmKernel(RawGemmKernel):
    """One thread per output element, loading its row of A and column of B from global memory."""

    implementation = "naive"

    def algorithm(self) -> str:
        return "CuPy RawKernel naive_gemm: one thread per C element, 16×16 blocks, fp32 FMA on CUDA cores"

    def launch(self) -> tuple[Any, tuple[int, int, int], tuple[int, int, int]]:
        import cupy

        p = self.params
        kernel = cupy.RawKernel(NAIVE_SOURCE, "naive_gemm")
        grid = (_ceil_div(int(p["N"]), THREADS), _ceil_div(int(p["M"]), THREADS), int(p["batch"]))
        return kernel, grid, (THREADS, THREADS, 1)


class TiledGemmKernel(RawGemmKernel):
    """Shared-memory tiles of tile_m × tile_n, k steps of tile_k, register micro-tiles per thread."""

    implementation = "tiled"

    @property
    def tiles(self) -> tuple[int, int, int]:
        p = self.params
        return int(p["tile_m"]), int(p["tile_n"]), int(p["tile_k"])

    def check_supported(self) -> None:
        super().check_supported()
        problem = tile_problem(*self.tiles)
        if problem:
            raise UnsupportedMeasurement(problem)

    def block_rows(self) -> int:
        return self.tiles[0]

    def algorithm(self) -> str:
        tm, tn, tk = self.tiles
        return (
            f"CuPy RawKernel tiled_gemm: {tm}×{tn} tiles, k steps of {tk} through shared memory, "
            f"16×16 threads with {tm // THREADS}×{tn // THREADS} register micro-tiles, fp32 FMA on CUDA cores"
        )

    def notes(self) -> list[str]:
        notes = super().notes()
        if int(self.params.get("ctas_per_sm") or 1) != 1:
            notes.append("ctas_per_sm is the model's assumption; the hardware decides how many tiles are resident")
        return notes

    def launch(self) -> tuple[Any, tuple[int, int, int], tuple[int, int, int]]:
        import cupy

        p = self.params
        tm, tn, tk = self.tiles
        kernel = cupy.RawKernel(
            TILED_SOURCE, "tiled_gemm", options=(f"-DTILE_M={tm}", f"-DTILE_N={tn}", f"-DTILE_K={tk}")
        )
        grid = (_ceil_div(int(p["N"]), tn), _ceil_div(int(p["M"]), tm), int(p["batch"]))
        return kernel, grid, (THREADS, THREADS, 1)


RAW_GEMMS: dict[str, type[RawGemmKernel]] = {
    NaiveGemmKernel.implementation: NaiveGemmKernel,
    TiledGemmKernel.implementation: TiledGemmKernel,
}


def raw_gemm_class(declaration: Declaration) -> type[RawGemmKernel]:
    """The RawKernel class a GEMM declaration's impl= selects."""
    return RAW_GEMMS[declaration.implementation]
