"""How a GEMM maps onto one cuBLAS call: operand order, transposes, leading dimensions and batch strides.

Pure arithmetic on shapes and strides (no CuPy needed), so the plan is tested on any machine;
`CupyBackend.gemm` carries it out with `cublasGemmStridedBatchedEx`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

# cuBLAS and CUDA enumerations (values from cublas_api.h / library_types.h), used when the
# bindings do not export a name.
CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF = 0, 1, 2, 14
CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 70, 77
CUBLAS_GEMM_DEFAULT = -1
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class _Operand:
    """One matrix of a cuBLAS call: operation (N/T) and leading dimension."""

    op: int
    ld: int


@dataclass(frozen=True)
class GemmPlan:
    """How a row-major batched product maps onto one column-major cuBLAS call per outer index.

    cuBLAS sees C^T = B^T · A^T: its first operand is our B, its second our A.
    """

    m: int
    n: int
    k: int
    a: _Operand
    b: _Operand
    ldc: int
    inner_count: int
    inner_strides: tuple[int, int, int]  # elements between batch entries of a, b, out
    outer_offsets: tuple[tuple[int, int, int], ...]  # element offsets of each outer batch index


def _as_cublas_operand(rows: int, cols: int, row_stride: int, col_stride: int) -> _Operand | None:
    """Row-major X[rows, cols] as a column-major cuBLAS operand (cols × rows), or its transpose; None if neither."""
    if col_stride == 1 or cols == 1:  # rows are contiguous: X is column-major Xᵀ as it stands
        operand = _Operand(CUBLAS_OP_N, row_stride if rows > 1 else cols)
        return operand if operand.ld >= cols else None
    if row_stride == 1 or rows == 1:  # columns are contiguous: cuBLAS transposes it
        operand = _Operand(CUBLAS_OP_T, col_stride if cols > 1 else rows)
        return operand if operand.ld >= rows else None
    return None


def plan_gemm(
    a_shape: Sequence[int],
    a_strides: Sequence[int],
    b_shape: Sequence[int],
    b_strides: Sequence[int],
    out_shape: Sequence[int],
    out_strides: Sequence[int],
) -> GemmPlan | None:
    """Map a @ b → out (strides in elements) onto strided-batched cuBLAS, or None if it cannot be.

    Batch dimensions broadcast as in numpy.matmul; adjacent batch dimensions
    merge when every operand steps through them uniformly, and any that do
    not merge become an outer loop of calls.
    """
    m, k = int(a_shape[-2]), int(a_shape[-1])
    n = int(b_shape[-1])
    if int(b_shape[-2]) != k or tuple(out_shape[-2:]) != (m, n) or min(m, n, k) < 1:
        return None
    if any(s < 0 for s in (*a_strides, *b_strides, *out_strides)):
        return None
    # out[m, n] row-major: column-major C^T (n × m) with leading dimension = row stride.
    if n > 1 and out_strides[-1] != 1:
        return None
    ldc = int(out_strides[-2]) if m > 1 else n
    if ldc < n:
        return None
    # b[k, n] is cuBLAS's first operand (n × k), a[m, k] its second (k × m).
    first = _as_cublas_operand(k, n, int(b_strides[-2]), int(b_strides[-1]))
    second = _as_cublas_operand(m, k, int(a_strides[-2]), int(a_strides[-1]))
    if first is None or second is None:
        return None

    batch_shape = tuple(int(x) for x in out_shape[:-2])
    rank = len(batch_shape)

    def batch_strides(shape: Sequence[int], strides: Sequence[int]) -> list[int]:
        lead = len(shape) - 2
        if lead > rank:
            return []
        padded_shape = (1,) * (rank - lead) + tuple(int(x) for x in shape[:-2])
        padded_strides = (0,) * (rank - lead) + tuple(int(x) for x in strides[:-2])
        result = []
        for size, stride, full in zip(padded_shape, padded_strides, batch_shape):
            if size not in (1, full):
                raise ValueError("shapes do not broadcast")
            result.append(0 if size == 1 else stride)
        return result

    try:
        sa = batch_strides(a_shape, a_strides)
        sb = batch_strides(b_shape, b_strides)
    except ValueError:
        return None
    if len(sa) != rank or len(sb) != rank:
        return None
    sc = [int(x) for x in out_strides[:-2]]
    dims = [(size, sa[i], sb[i], sc[i]) for i, size in enumerate(batch_shape) if size != 1]
    if any(dc == 0 for _size, _da, _db, dc in dims):
        return None  # batch entries would write the same output
    merged: list[tuple[int, int, int, int]] = []
    for size, da, db, dc in dims:
        if merged:
            p_size, pa, pb, pc = merged[-1]
            if pa == da * size and pb == db * size and pc == dc * size:
                merged[-1] = (p_size * size, da, db, dc)
                continue
        merged.append((size, da, db, dc))
    if merged:
        inner_count, ia, ib, ic = merged[-1]
        outer = merged[:-1]
    else:
        inner_count, ia, ib, ic = 1, 0, 0, 0
        outer = []
    offsets = [(0, 0, 0)]
    for size, da, db, dc in outer:
        offsets = [(oa + i * da, ob + i * db, oc + i * dc) for oa, ob, oc in offsets for i in range(size)]
    if max(m, n, k, first.ld, second.ld, ldc, inner_count) > _INT32_MAX:
        return None
    return GemmPlan(m, n, k, second, first, ldc, inner_count, (ia, ib, ic), tuple(offsets))
