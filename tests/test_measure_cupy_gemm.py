"""CupyBackend.matmul's cuBLAS calls, checked on the CPU against a stand-in cuBLAS.

The stand-in implements gemmEx and gemmStridedBatchedEx with cuBLAS's
column-major contract, reading and writing host memory at the pointers it is
given. If CupyBackend passed operands in the wrong order, a wrong leading
dimension, stride, α/β or compute type, the products here would be wrong.
What this cannot check — the real library, streams, timing — waits for the
gpu-marked tests on a GPU.
"""

from __future__ import annotations

import ctypes
import sys
import types
from typing import Any

import numpy as np
import pytest

from workbench.measure.backends import CupyBackend

CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF = 0, 1, 2, 14
COMPUTE_32F, COMPUTE_64F, COMPUTE_32F_FAST_TF32 = 68, 70, 77
GEMM_DEFAULT = -1
try:
    import ml_dtypes

    BFLOAT16: Any = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # the bf16 cases skip
    BFLOAT16 = None
DTYPES = {CUDA_R_32F: np.float32, CUDA_R_64F: np.float64, CUDA_R_16F: np.float16, CUDA_R_16BF: BFLOAT16}
SIZES = {CUDA_R_32F: 4, CUDA_R_64F: 8, CUDA_R_16F: 2, CUDA_R_16BF: 2}


class DeviceLike(np.ndarray):
    """A host array that answers `.data.ptr` like a CuPy array."""

    @property
    def data(self) -> Any:  # type: ignore[override]
        return types.SimpleNamespace(ptr=self.ctypes.data)


def _memory(pointer: int, count: int, dtype: Any) -> np.ndarray:
    itemsize = np.dtype(dtype).itemsize
    raw = (ctypes.c_char * (count * itemsize)).from_address(pointer)
    return np.frombuffer(raw, dtype=dtype, count=count)


def _operand(pointer: int, dtype: Any, op: int, rows: int, cols: int, ld: int) -> np.ndarray:
    """op(X) (rows × cols) of a column-major X at `pointer`."""
    stored_rows, stored_cols = (rows, cols) if op == 0 else (cols, rows)
    flat = _memory(pointer, (stored_cols - 1) * ld + stored_rows, dtype).astype(np.float64)
    stored = np.array([[flat[r + c * ld] for c in range(stored_cols)] for r in range(stored_rows)])
    return stored if op == 0 else stored.T


class StandInCublas:
    """gemmEx / gemmStridedBatchedEx on host memory, recording each call's types."""

    CUBLAS_COMPUTE_32F = COMPUTE_32F
    CUBLAS_COMPUTE_64F = COMPUTE_64F
    CUBLAS_COMPUTE_32F_FAST_TF32 = COMPUTE_32F_FAST_TF32
    CUBLAS_GEMM_DEFAULT = -1

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int, int]] = []
        self.algos: list[int] = []
        self.ops: list[tuple[int, int]] = []

    def _gemm(self, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, compute):  # type: ignore[no-untyped-def]
        # cuBLAS reads α and β as the compute type's scalar: double for COMPUTE_64F, float for the 32F types.
        scalar = ctypes.c_double if compute == COMPUTE_64F else ctypes.c_float
        a_value, b_value = scalar.from_address(alpha).value, scalar.from_address(beta).value
        dtype = DTYPES[Ctype]
        left = _operand(A, DTYPES[Atype], transa, m, k, lda)
        right = _operand(B, DTYPES[Btype], transb, k, n, ldb)
        target = _memory(C, (n - 1) * ldc + m, dtype)
        current = np.array([[float(target[r + c * ldc]) for c in range(n)] for r in range(m)])
        result = a_value * (left @ right) + (b_value * current if b_value else 0.0)
        for r in range(m):
            for c in range(n):
                target[r + c * ldc] = result[r, c]

    def gemmEx(self, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, compute, algo):  # type: ignore[no-untyped-def]
        self.calls.append(("gemmEx", Ctype, compute, 1))
        self.algos.append(algo)
        self.ops.append((transa, transb))
        self._gemm(transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, compute)

    def gemmStridedBatchedEx(self, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,  # type: ignore[no-untyped-def]
                             beta, C, Ctype, ldc, strideC, count, compute, algo):
        self.calls.append(("gemmStridedBatchedEx", Ctype, compute, count))
        self.algos.append(algo)
        self.ops.append((transa, transb))
        size = SIZES
        for i in range(count):
            self._gemm(transa, transb, m, n, k, alpha, A + i * strideA * size[Atype], Atype, lda,
                       B + i * strideB * size[Btype], Btype, ldb, beta, C + i * strideC * size[Ctype], Ctype, ldc, compute)


@pytest.fixture
def cublas(monkeypatch: pytest.MonkeyPatch) -> StandInCublas:
    stand_in = StandInCublas()
    package = types.ModuleType("cupy_backends")
    cuda = types.ModuleType("cupy_backends.cuda")
    libs = types.ModuleType("cupy_backends.cuda.libs")
    libs.cublas = stand_in  # type: ignore[attr-defined]
    cuda.libs = libs  # type: ignore[attr-defined]
    package.cuda = cuda  # type: ignore[attr-defined]
    for name, module in (("cupy_backends", package), ("cupy_backends.cuda", cuda), ("cupy_backends.cuda.libs", libs)):
        monkeypatch.setitem(sys.modules, name, module)
    return stand_in


@pytest.fixture
def backend() -> CupyBackend:
    """A CupyBackend with no GPU behind it: only its GEMM dispatch is exercised."""
    instance = object.__new__(CupyBackend)
    runtime = types.SimpleNamespace(CUDA_R_32F=CUDA_R_32F, CUDA_R_64F=CUDA_R_64F, CUDA_R_16F=CUDA_R_16F, CUDA_R_16BF=14)
    device = types.SimpleNamespace(get_cublas_handle=lambda: 1)
    instance._cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime, device=device))  # type: ignore[attr-defined]
    instance._bf16, instance._bf16_checked = BFLOAT16, True  # type: ignore[attr-defined]
    return instance


def _device(shape: tuple[int, ...], dtype: Any = np.float64, seed: int = 0) -> DeviceLike:
    values = np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(dtype)
    return values.view(DeviceLike)


def test_plain_product_is_one_gemm_ex_call(backend: CupyBackend, cublas: StandInCublas) -> None:
    a, b, out = _device((5, 3), seed=1), _device((3, 4), seed=2), _device((5, 4), seed=3)
    backend.matmul(a, b, out)
    np.testing.assert_allclose(np.asarray(out), np.asarray(a) @ np.asarray(b), rtol=1e-12)
    assert cublas.calls == [("gemmEx", CUDA_R_64F, COMPUTE_64F, 1)]


def test_batched_product_with_beta_accumulates_into_c(backend: CupyBackend, cublas: StandInCublas) -> None:
    a, b, c = _device((3, 4, 5), seed=1), _device((3, 5, 2), seed=2), _device((3, 4, 2), seed=3)
    initial = np.asarray(c).copy()
    backend.matmul(a, b, c, beta=0.5)
    np.testing.assert_allclose(np.asarray(c), np.asarray(a) @ np.asarray(b) + 0.5 * initial, rtol=1e-12)
    assert cublas.calls == [("gemmStridedBatchedEx", CUDA_R_64F, COMPUTE_64F, 3)]


def test_attention_scores_against_a_transposed_key_view(backend: CupyBackend, cublas: StandInCublas) -> None:
    q, k, s = _device((2, 2, 3, 4), seed=1), _device((2, 2, 5, 4), seed=2), _device((2, 2, 3, 5), seed=3)
    backend.matmul(q, k.swapaxes(-1, -2), s)
    np.testing.assert_allclose(np.asarray(s), np.asarray(q) @ np.asarray(k).swapaxes(-1, -2), rtol=1e-12)
    assert cublas.calls[0][3] == 4


def test_conv_group_product_on_strided_views(backend: CupyBackend, cublas: StandInCublas) -> None:
    w3, columns, outputs = _device((2, 3, 6), seed=1), _device((4, 2, 6, 5), seed=2), _device((4, 2, 3, 5), seed=3)
    for group in range(2):
        backend.matmul(w3[group], columns[:, group], outputs[:, group])
    expected = np.stack([np.asarray(w3)[g] @ np.asarray(columns)[:, g] for g in range(2)], axis=1)
    np.testing.assert_allclose(np.asarray(outputs), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "dtype, tf32, data_type, compute",
    [
        (np.float32, False, CUDA_R_32F, COMPUTE_32F),
        (np.float32, True, CUDA_R_32F, COMPUTE_32F_FAST_TF32),
        (np.float16, False, CUDA_R_16F, COMPUTE_32F),
    ],
)
def test_compute_type_follows_the_declared_path(
    backend: CupyBackend, cublas: StandInCublas, dtype: Any, tf32: bool, data_type: int, compute: int
) -> None:
    a, b, out = _device((4, 8), dtype, 1), _device((8, 3), dtype, 2), _device((4, 3), dtype, 3)
    backend.matmul(a, b, out, tf32=tf32)
    assert cublas.calls == [("gemmEx", data_type, compute, 1)]
    expected = np.asarray(a).astype(np.float64) @ np.asarray(b).astype(np.float64)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=2e-3, atol=2e-3)


def test_a_transposed_operand_without_batch_is_one_gemm_ex_with_op_t(backend: CupyBackend, cublas: StandInCublas) -> None:
    stored = _device((6, 4), seed=1)  # A is stored k × m and used as Aᵀ: m × k with unit row stride
    b, out = _device((6, 5), seed=2), _device((4, 5), seed=3)
    backend.matmul(stored.T, b, out)
    np.testing.assert_allclose(np.asarray(out), np.asarray(stored).T @ np.asarray(b), rtol=1e-12)
    assert cublas.calls == [("gemmEx", CUDA_R_64F, COMPUTE_64F, 1)]
    assert cublas.ops == [(0, 1)]  # cuBLAS's first operand is our B (as stored), its second our A (transposed)


def _bf16_param(tf32: bool = False) -> Any:
    return pytest.param(
        "bf16", tf32, CUDA_R_16BF, COMPUTE_32F, marks=pytest.mark.skipif(BFLOAT16 is None, reason="ml_dtypes not installed")
    )


@pytest.mark.parametrize(
    "dtype, tf32, data_type, compute",
    [
        (np.float64, False, CUDA_R_64F, COMPUTE_64F),
        (np.float32, False, CUDA_R_32F, COMPUTE_32F),
        (np.float32, True, CUDA_R_32F, COMPUTE_32F_FAST_TF32),
        (np.float16, False, CUDA_R_16F, COMPUTE_32F),
        _bf16_param(),
    ],
)
@pytest.mark.parametrize("batch", [1, 3])
def test_beta_reaches_cublas_as_the_compute_types_scalar(
    backend: CupyBackend, cublas: StandInCublas, dtype: Any, tf32: bool, data_type: int, compute: int, batch: int
) -> None:
    # β = 0.75 read with the wrong width (a double where cuBLAS reads a float, or the reverse) is garbage.
    dtype = BFLOAT16 if dtype == "bf16" else dtype
    batch_shape = (batch,) if batch > 1 else ()
    a, b = _device((*batch_shape, 4, 8), dtype, 1), _device((*batch_shape, 8, 3), dtype, 2)
    c = _device((*batch_shape, 4, 3), dtype, 3)
    initial = np.asarray(c).astype(np.float64)
    backend.matmul(a, b, c, beta=0.75, tf32=tf32)
    routine = "gemmEx" if batch == 1 else "gemmStridedBatchedEx"
    assert cublas.calls == [(routine, data_type, compute, batch)]
    expected = np.asarray(a).astype(np.float64) @ np.asarray(b).astype(np.float64) + 0.75 * initial
    tolerance = 5e-2 if dtype is BFLOAT16 else 2e-3
    np.testing.assert_allclose(np.asarray(c).astype(np.float64), expected, rtol=tolerance, atol=tolerance)


def test_every_call_asks_for_cublas_default_algorithm_choice(backend: CupyBackend, cublas: StandInCublas) -> None:
    backend.matmul(_device((4, 8), seed=1), _device((8, 3), seed=2), _device((4, 3), seed=3))
    backend.matmul(_device((2, 4, 8), seed=1), _device((2, 8, 3), seed=2), _device((2, 4, 3), seed=3))
    assert cublas.algos == [GEMM_DEFAULT, GEMM_DEFAULT]  # CUBLAS_GEMM_DEFAULT: cuBLAS's heuristics, no forced algorithm


@pytest.mark.skipif(BFLOAT16 is None, reason="ml_dtypes not installed")
def test_bf16_operands_go_to_cublas_as_cuda_r_16bf(backend: CupyBackend, cublas: StandInCublas) -> None:
    a, b, out = _device((4, 8), BFLOAT16, 1), _device((8, 3), BFLOAT16, 2), _device((4, 3), BFLOAT16, 3)
    backend.matmul(a, b, out)
    assert cublas.calls == [("gemmEx", CUDA_R_16BF, COMPUTE_32F, 1)]
    expected = np.asarray(a).astype(np.float64) @ np.asarray(b).astype(np.float64)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=5e-2, atol=5e-2)


class StandInLinalg(types.ModuleType):
    """cupy._core._routines_linalg's compute-type state, as CuPy keeps it (process-wide, per dtype)."""

    COMPUTE_TYPE_DEFAULT, COMPUTE_TYPE_PEDANTIC, COMPUTE_TYPE_TF32 = 1, 2, 7

    def __init__(self, initial: int) -> None:
        super().__init__("cupy._core._routines_linalg")
        self.state = initial

    def get_compute_type(self, dtype: Any) -> int:
        return self.state

    def set_compute_type(self, dtype: Any, compute_type: int) -> None:
        assert np.dtype(dtype) == np.float32
        self.state = compute_type


@pytest.mark.parametrize("environment_tf32", [False, True])  # True: as CuPy starts with CUPY_TF32=1
@pytest.mark.parametrize("tf32", [False, True])
def test_the_cupy_matmul_fallback_runs_fp32_products_on_the_declared_path(
    backend: CupyBackend, monkeypatch: pytest.MonkeyPatch, tf32: bool, environment_tf32: bool
) -> None:
    linalg = StandInLinalg(StandInLinalg.COMPUTE_TYPE_TF32 if environment_tf32 else StandInLinalg.COMPUTE_TYPE_DEFAULT)
    package = types.ModuleType("cupy")
    core = types.ModuleType("cupy._core")
    core._routines_linalg = linalg  # type: ignore[attr-defined]
    package._core = core  # type: ignore[attr-defined]
    for name, module in (("cupy", package), ("cupy._core", core), ("cupy._core._routines_linalg", linalg)):
        monkeypatch.setitem(sys.modules, name, module)
    seen = []

    def matmul(a: Any, b: Any, out: Any) -> None:
        seen.append(linalg.state)
        np.matmul(np.asarray(a), np.asarray(b), out=out)

    backend._cupy.matmul = matmul  # type: ignore[attr-defined]
    backend._cupy.float32 = np.float32  # type: ignore[attr-defined]
    a = np.zeros((4, 6), dtype=np.float32)[:, ::2].view(DeviceLike)  # neither rows nor columns unit-strided: no plan
    b, out = _device((3, 2), np.float32, 2), _device((4, 2), np.float32, 3)
    backend.matmul(a, b, out, tf32=tf32)
    assert seen == [StandInLinalg.COMPUTE_TYPE_TF32 if tf32 else StandInLinalg.COMPUTE_TYPE_DEFAULT]
    assert linalg.state == (StandInLinalg.COMPUTE_TYPE_TF32 if environment_tf32 else StandInLinalg.COMPUTE_TYPE_DEFAULT)
