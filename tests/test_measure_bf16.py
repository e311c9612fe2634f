"""bf16 through ml_dtypes, end to end, on a CPU stand-in for a GPU that holds bfloat16 arrays.

CuPy holds bfloat16 only through ml_dtypes; NumPy with ml_dtypes can hold the
same arrays. `Bf16Backend` is the NumPy backend with that one dtype added and
products accumulated in fp32 (as cuBLAS does with CUBLAS_COMPUTE_32F), so
every kernel family, the bf16 reference check and calibration run here
exactly as they would on a GPU. The gpu-marked twins run the same on CuPy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

from workbench.measure import OK, measure  # noqa: E402
from workbench.measure.calibrate import calibrate  # noqa: E402
from workbench.measure.backends import NumpyBackend  # noqa: E402
from workbench.measure.check import UNIT_ROUNDOFF  # noqa: E402
from workbench.measure.kernels.base import float_info  # noqa: E402

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FAST = {"iterations": 30, "warmup": 1}

BF16_FAMILIES = [
    "copy(n=4096, dtype=bf16)",
    "add(n=4096, dtype=bf16)",
    "triad(n=4096, dtype=bf16)",
    "reduce(n=4096, rows=4, dtype=bf16)",
    "softmax(rows=16, cols=100, dtype=bf16)",
    "gemm(M=48, N=40, K=64, dtype=bf16)",
    "gemm(M=16, N=16, K=32, batch=3, dtype=bf16, beta=1)",
    "attention(B=1, H=2, Sq=16, Skv=24, D=8, dtype=bf16)",
    "attention(B=1, H=1, Sq=24, Skv=16, D=8, causal=true, dtype=bf16)",  # Sq > Skv: rows that see no key
    "conv2d(N=2, C=4, H=9, W=9, K=6, R=3, S=3, pad=1, dtype=bf16)",
]


class Bf16Backend(NumpyBackend):
    """NumPy plus ml_dtypes' bfloat16, products accumulated in fp32: a CPU model of a bf16-capable GPU."""

    def storage_dtype(self, name: str) -> Any:
        return BFLOAT16 if name == "bf16" else super().storage_dtype(name)

    def matmul(self, a: Any, b: Any, out: Any, *, beta: float = 0.0, scratch: Any = None, tf32: bool = False) -> None:
        if out.dtype != BFLOAT16:
            super().matmul(a, b, out, beta=beta, scratch=scratch, tf32=tf32)
            return
        product = np.matmul(a.astype(np.float32), b.astype(np.float32))
        if beta:
            product += beta * out.astype(np.float32)
        out[...] = product.astype(BFLOAT16)

    def executed_matrix_path(self, dtype_name: str) -> str:
        return "bf16_tc" if dtype_name == "bf16" else super().executed_matrix_path(dtype_name)


def test_float_info_answers_for_bfloat16() -> None:
    # Whether numpy.finfo itself knows bfloat16 depends on the ml_dtypes release installed
    # beside it; float_info must answer either way.
    info = float_info(BFLOAT16)
    assert float(info.eps) == 2.0**-7 and float(info.tiny) == 2.0**-126
    assert float(info.min) == -float(ml_dtypes.finfo(BFLOAT16).max)
    assert float(float_info(np.float32).tiny) == float(np.finfo(np.float32).tiny)
    assert UNIT_ROUNDOFF["bf16"] == float(info.eps) / 2  # the check's tolerance unit is half an ulp at 1


@pytest.mark.parametrize("declaration", BF16_FAMILIES)
def test_every_bf16_family_runs_and_passes_its_reference_check(declaration: str) -> None:
    record = measure(declaration, backend=Bf16Backend(), **FAST)
    assert record.status == OK, record.message
    assert record.check is not None and record.check.passed and record.check.sampled > 0
    assert record.check.checksum is not None and math.isfinite(record.check.checksum)
    assert "2^-8 (bf16)" in record.check.tolerance


def test_the_bf16_check_catches_an_error_of_a_few_bf16_ulps() -> None:
    from workbench.measure.kernels.stream import AddKernel

    class OffByTwoUlps(AddKernel):
        def __call__(self) -> None:
            a, b, c = self.arrays["a"], self.arrays["b"], self.arrays["c"]
            c[...] = ((a.astype(np.float32) + b.astype(np.float32)) * (1 + 2.0**-4)).astype(BFLOAT16)

    record = measure("add(n=4096, dtype=bf16)", backend=Bf16Backend(), kernel_class=OffByTwoUlps, **FAST)
    assert record.status == "invalid" and record.check is not None and record.check.failures > 0


def test_calibration_measures_a_bf16_matrix_rate() -> None:
    result = calibrate(
        Bf16Backend(), copy_bytes=4 * 2**20, matrix_size=64, dtypes=("bf16", "fp32"), device=None, links=False, interfaces=False
    )
    assert not result.skipped, result.skipped
    assert set(result.rates) == {"hbm", "bf16_tc", "fp32"}
    run = next(r for r in result.runs if r.params.get("dtype") == "bf16")
    assert result.rates["bf16_tc"].value == pytest.approx(run.flop / run.median_s)
