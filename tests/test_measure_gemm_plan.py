"""The row-major → cuBLAS mapping of `plan_gemm`, checked on the CPU by emulating cuBLAS.

CuPy GEMMs call cublasGemmEx / cublasGemmStridedBatchedEx directly; a wrong
operation flag, leading dimension or batch stride there would give wrong
results only on a GPU. Here a small NumPy model of the column-major cuBLAS
contract executes each plan on flat buffers and must reproduce numpy.matmul.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from workbench.measure.backends import GemmPlan, plan_gemm

OP_N, OP_T = 0, 1


def _column_major(buffer: np.ndarray, start: int, rows: int, cols: int, ld: int, op: int) -> np.ndarray:
    """op(X) as cuBLAS reads it: X stored column-major at `start` with leading dimension `ld`."""
    if op == OP_N:
        return np.array([[buffer[start + r + c * ld] for c in range(cols)] for r in range(rows)])
    return np.array([[buffer[start + c + r * ld] for c in range(cols)] for r in range(rows)])


def emulate(plan: GemmPlan, a_buf: np.ndarray, a_at: int, b_buf: np.ndarray, b_at: int, c_buf: np.ndarray, c_at: int) -> None:
    """Run the plan as cuBLAS would: C_c = op(B-side) · op(A-side), column-major, per batch entry."""
    ia, ib, ic = plan.inner_strides
    for oa, ob, oc in plan.outer_offsets:
        for batch in range(plan.inner_count):
            first = _column_major(b_buf, b_at + ob + batch * ib, plan.n, plan.k, plan.b.ld, plan.b.op)
            second = _column_major(a_buf, a_at + oa + batch * ia, plan.k, plan.m, plan.a.ld, plan.a.op)
            product = first @ second  # (n × m), column-major C^T
            base = c_at + oc + batch * ic
            for r in range(plan.n):
                for c in range(plan.m):
                    c_buf[base + r + c * plan.ldc] = product[r, c]


def _elements(x: np.ndarray) -> tuple[int, ...]:
    return tuple(s // x.itemsize for s in x.strides)


def _offset(view: np.ndarray, buffer: np.ndarray) -> int:
    return (view.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]) // buffer.itemsize


def _check(a: np.ndarray, b: np.ndarray, out: np.ndarray, a_buf: np.ndarray, b_buf: np.ndarray, c_buf: np.ndarray) -> GemmPlan:
    plan = plan_gemm(a.shape, _elements(a), b.shape, _elements(b), out.shape, _elements(out))
    assert plan is not None
    expected = np.matmul(a, b)
    emulate(plan, a_buf, _offset(a, a_buf), b_buf, _offset(b, b_buf), c_buf, _offset(out, c_buf))
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    return plan


def _buffers(*sizes: int) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.standard_normal(size) for size in sizes]


def test_plain_row_major_product() -> None:
    m, n, k = 5, 7, 3
    a_buf, b_buf, c_buf = _buffers(m * k, k * n, m * n)
    plan = _check(a_buf.reshape(m, k), b_buf.reshape(k, n), c_buf.reshape(m, n), a_buf, b_buf, c_buf)
    assert plan.inner_count == 1 and (plan.a.op, plan.b.op) == (OP_N, OP_N)


def test_batched_product_is_one_strided_batched_call() -> None:
    batch, m, n, k = 4, 3, 5, 6
    a_buf, b_buf, c_buf = _buffers(batch * m * k, batch * k * n, batch * m * n)
    plan = _check(
        a_buf.reshape(batch, m, k), b_buf.reshape(batch, k, n), c_buf.reshape(batch, m, n), a_buf, b_buf, c_buf
    )
    assert plan.inner_count == batch and len(plan.outer_offsets) == 1
    assert plan.inner_strides == (m * k, k * n, m * n)


def test_attention_scores_with_a_transposed_key_view() -> None:
    # S[b, h] = Q[b, h] · K[b, h]ᵀ with K stored (B, H, Skv, D): batch dims merge, B-side transposed.
    B, H, sq, skv, d = 2, 3, 4, 5, 6
    q_buf, k_buf, s_buf = _buffers(B * H * sq * d, B * H * skv * d, B * H * sq * skv)
    keys = k_buf.reshape(B, H, skv, d)
    plan = _check(q_buf.reshape(B, H, sq, d), keys.swapaxes(-1, -2), s_buf.reshape(B, H, sq, skv), q_buf, k_buf, s_buf)
    assert plan.inner_count == B * H and plan.b.op == OP_T


def test_conv_group_product_broadcasts_the_filters_over_the_batch() -> None:
    # y4[:, g] = w3[g] · columns4[:, g]: filters broadcast (stride 0), columns and outputs strided views.
    N, G, kg, crs, pq = 3, 2, 4, 5, 6
    w_buf, col_buf, y_buf = _buffers(G * kg * crs, N * G * crs * pq, N * G * kg * pq)
    w3 = w_buf.reshape(G, kg, crs)
    columns = col_buf.reshape(N, G, crs, pq)
    outputs = y_buf.reshape(N, G, kg, pq)
    for group in range(G):
        plan = _check(w3[group], columns[:, group], outputs[:, group], w_buf, col_buf, y_buf)
        assert plan.inner_count == N and plan.inner_strides[0] == 0


def test_batch_dimensions_that_do_not_merge_become_an_outer_loop() -> None:
    m, n, k = 3, 4, 2
    a_buf, b_buf, c_buf = _buffers(2 * 3 * m * k, 2 * 3 * k * n, 2 * 3 * m * n)
    a = a_buf.reshape(3, 2, m, k).transpose(1, 0, 2, 3)  # batch axes permuted: strides do not nest
    plan = _check(a, b_buf.reshape(2, 3, k, n), c_buf.reshape(2, 3, m, n), a_buf, b_buf, c_buf)
    assert len(plan.outer_offsets) == 2 and plan.inner_count == 3


def test_a_transposed_left_operand() -> None:
    m, n, k = 4, 3, 5
    a_buf, b_buf, c_buf = _buffers(k * m, k * n, m * n)
    plan = _check(a_buf.reshape(k, m).T, b_buf.reshape(k, n), c_buf.reshape(m, n), a_buf, b_buf, c_buf)
    assert plan.a.op == OP_T


@pytest.mark.parametrize("m, n, k", [(1, 4, 3), (4, 1, 3), (4, 3, 1), (1, 1, 5)])
def test_degenerate_extents(m: int, n: int, k: int) -> None:
    a_buf, b_buf, c_buf = _buffers(m * k, k * n, m * n)
    _check(a_buf.reshape(m, k), b_buf.reshape(k, n), c_buf.reshape(m, n), a_buf, b_buf, c_buf)


def test_layouts_cublas_cannot_express_fall_back() -> None:
    a = np.zeros((4, 6))[:, ::2]  # neither rows nor columns unit-strided
    assert plan_gemm(a.shape, _elements(a), (3, 2), (2, 1), (4, 2), (2, 1)) is None
    out = as_strided(np.zeros(16), shape=(4, 2), strides=(8, 16))  # output columns not unit-strided
    assert plan_gemm((4, 3), (3, 1), (3, 2), (2, 1), out.shape, _elements(out)) is None
