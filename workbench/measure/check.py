"""The reference check: sampled outputs against float64 on the CPU, with a tolerance per dtype.

Each kernel recomputes a sample of its outputs in float64 from host copies of
its inputs and says how large an error correct rounding could produce there:

    allowed = SAFETY · (u_out·(|reference| + rounded terms) + u_acc·(accumulated terms))

where u_out is the unit roundoff of the storage type (the result and every
stored intermediate are rounded to it) and u_acc that of the accumulator
(fp32 for 16-bit matrix products; 2⁻¹¹ for TF32, whose inputs keep a 10-bit
mantissa). Sums accumulate rounding errors like a random walk, so kernels
weigh them with the root-sum-square of their terms times √(length). An
output outside its allowance — or not a number — fails the check, and a run
whose check fails is marked invalid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from workbench.model.units import format_percent
from workbench.records import from_plain, record, to_plain

SAFETY = 8.0

# Unit roundoff (half an ulp at 1.0) of each storage type.
UNIT_ROUNDOFF = {
    "fp64": 2.0**-53,
    "fp32": 2.0**-24,
    "tf32": 2.0**-24,  # stored as fp32; the matrix inputs are rounded further inside the GEMM
    "fp16": 2.0**-11,
    "bf16": 2.0**-8,
}
TF32_INPUT_ROUNDOFF = 2.0**-11  # 10 explicit mantissa bits

# Smallest positive normal numbers: an absolute floor for outputs that are (almost) zero.
SMALLEST_NORMAL = {"fp64": 2.0**-1022, "fp32": 2.0**-126, "tf32": 2.0**-126, "fp16": 2.0**-14, "bf16": 2.0**-126}

MAX_SAMPLES = 256


@dataclass(frozen=True)
class Precision:
    """Rounding units of one measured kernel: storage (u_out) and accumulation (u_acc)."""

    storage: str
    accumulator: str
    u_out: float
    u_acc: float

    def floor(self) -> float:
        return SAFETY * SMALLEST_NORMAL.get(self.storage, 2.0**-126)

    def describe(self) -> str:
        return (
            f"|error| ≤ {SAFETY:g}·(u_out·(|reference| + rounded terms) + u_acc·accumulated terms), "
            f"u_out = {_power(self.u_out)} ({self.storage}), u_acc = {_power(self.u_acc)} ({self.accumulator})"
        )


def _power(value: float) -> str:
    exponent = math.log2(value)
    return f"2^{int(exponent)}" if exponent.is_integer() else f"{value:.3g}"


def precision_for(storage: str, accumulate: str | None = None, tf32_inputs: bool = False) -> Precision:
    """The rounding units of a kernel storing `storage` and accumulating in `accumulate`."""
    acc = accumulate or storage
    u_acc = UNIT_ROUNDOFF.get(acc, UNIT_ROUNDOFF["fp32"])
    if tf32_inputs:
        acc, u_acc = "tf32 inputs", TF32_INPUT_ROUNDOFF
    return Precision(storage, acc, UNIT_ROUNDOFF.get(storage, UNIT_ROUNDOFF["fp32"]), u_acc)


@dataclass(frozen=True)
class SampledOutputs:
    """Sampled outputs as measured, their float64 references and the error each may have (NumPy arrays)."""

    measured: Any
    expected: Any
    allowed: Any
    labels: Any = None  # optional description per sample (its index), for the failure message


@dataclass(frozen=True)
class CheckResult:
    """Outcome of the reference check and the output checksum of one run."""

    passed: bool
    sampled: int
    failures: int
    max_abs_error: float
    worst_ratio: float  # largest error / allowed over the sample; ≤ 1 passes
    checksum: float | None  # float64 sum of every output element
    tolerance: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CheckResult":
        return from_plain(data, cls)


def _json_float(value: Any) -> Any:
    """Floats as JSON can carry them: NaN and infinities become strings (float() reads them back)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


record(
    CheckResult,
    dump={"max_abs_error": _json_float, "worst_ratio": _json_float, "checksum": _json_float},
    missing={"checksum": None},
)


def judge(comparison: SampledOutputs, precision: Precision, checksum: float | None) -> CheckResult:
    """Compare measured outputs with their references; fail on any excess error, NaN or non-finite checksum."""
    import numpy as np

    measured = np.asarray(comparison.measured, dtype=np.float64).reshape(-1)
    expected = np.asarray(comparison.expected, dtype=np.float64).reshape(-1)
    allowed = np.asarray(comparison.allowed, dtype=np.float64).reshape(-1) + precision.floor()
    count = int(measured.size)
    if count == 0:
        return CheckResult(False, 0, 0, math.nan, math.nan, checksum, precision.describe(), "failed: no outputs were sampled")
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(measured - expected)
        ratio = error / allowed
    bad = ~(error <= allowed)  # NaN compares false, so a NaN output fails
    failures = int(np.count_nonzero(bad))
    ratio = np.where(np.isfinite(ratio), ratio, np.inf)
    worst = float(ratio.max())
    max_error = float(np.where(np.isfinite(error), error, np.inf).max())

    if failures:
        index = int(np.argmax(np.where(bad, ratio, -1.0)))
        where = f" at {comparison.labels[index]}" if comparison.labels is not None else ""
        message = (
            f"failed: {failures} of {count} sampled outputs outside tolerance; worst{where}: "
            f"got {measured[index]:.6g}, expected {expected[index]:.6g} (allowed ±{allowed[index]:.3g})"
        )
        passed = False
    elif checksum is not None and not math.isfinite(checksum):
        message = "failed: the output contains NaN or infinity (its checksum is not finite)"
        passed = False
    else:
        message = (f"passed: {count} sampled outputs within tolerance "
                   f"(worst error {format_percent(100 * worst) if worst else 'none'} of the allowance)")
        passed = True
    return CheckResult(passed, count, failures, max_error, worst, checksum, precision.describe(), message)


def not_run(reason: str) -> CheckResult:
    """A check that did not happen (cancelled run): never counts as passed."""
    return CheckResult(False, 0, 0, math.nan, math.nan, None, "", f"not run: {reason}")


def sample_indices(total: int, rng: Any, count: int = MAX_SAMPLES) -> Any:
    """Up to `count` distinct flat indices into `total` outputs, always including the first and the last."""
    import numpy as np

    if total <= count:
        return np.arange(total, dtype=np.int64)
    chosen = rng.integers(1, total - 1, size=count - 2, dtype=np.int64)
    return np.unique(np.concatenate((np.array([0, total - 1], dtype=np.int64), chosen)))
