"""RMSNorm and LayerNorm through the array module's reductions and ufuncs with out=.

Row statistics accumulate in fp32 for 16-bit storage (as PyTorch's kernels
do); every elementwise pass writes the output buffer in place, so the only
scratch is one value per row. ε = 1e-5, PyTorch's default.
"""

from __future__ import annotations

import math
from typing import Any

from workbench.model.dtypes import dtype as lookup_dtype
from workbench.measure.check import SAFETY, SampledOutputs, Precision, precision_for
from workbench.measure.kernels.base import INPUT, OUTPUT, SCRATCH, BufferSpec, MeasuredKernel, require_float
from workbench.measure.kernels.reduction import _checked_rows
from workbench.model.ops.paths import vector_path

EPSILON = 1e-5
_MAX_CHECKED_COLUMNS = 4096


class RowNormKernel(MeasuredKernel):
    """What RMSNorm and LayerNorm share: the rows × cols matrix, the weights, the check's sampling."""

    family = "reduction"
    weight_names: tuple[str, ...] = ()
    passes_without_weights = 0  # full passes over the matrix (reads + writes) without the affine step

    @property
    def rows(self) -> int:
        return int(self.params["rows"])

    @property
    def cols(self) -> int:
        return int(self.params["cols"])

    @property
    def affine(self) -> bool:
        return bool(self.params["affine"])

    def check_supported(self) -> None:
        require_float(self.dtype_name, self.declaration.op)

    def weight_buffers(self) -> list[BufferSpec]:
        if not self.affine:
            return []
        ranges = {"w": (0.5, 1.5), "b": (-1.0, 1.0)}
        return [BufferSpec(name, (self.cols,), self.dtype_name, INPUT, *ranges[name]) for name in self.weight_names]

    def buffers(self) -> list[BufferSpec]:
        return [
            BufferSpec("x", (self.rows, self.cols), self.dtype_name, INPUT),
            *self.weight_buffers(),
            BufferSpec("y", (self.rows, self.cols), self.dtype_name, OUTPUT),
            BufferSpec("row_stat", (self.rows, 1), self.accumulator_dtype(), SCRATCH),
        ]

    @property
    def passes(self) -> int:
        return self.passes_without_weights + (2 * len(self.weight_names) if self.affine else 0)

    def implied_traffic(self) -> tuple[int, str]:
        matrix = self.buffers()[0].bytes
        weights = sum(spec.bytes for spec in self.weight_buffers())
        return (
            self.passes * matrix + weights,
            f"{self.passes} passes over the rows × cols matrix (unfused calls; compulsory traffic counts 2)",
        )

    def executed_path(self) -> str:
        return vector_path(lookup_dtype(self.dtype_name))

    def precision(self) -> Precision:
        return precision_for(self.dtype_name, self.accumulator_dtype())

    def notes(self) -> list[str]:
        return [
            f"unfused: each of the {self.passes} passes streams the whole matrix unless it stays in cache",
            f"row statistics accumulate in {self.accumulator_dtype()}; ε = {EPSILON:g}",
        ]

    def prepare(self) -> None:
        self._accumulate = self.array_dtype(self.accumulator_dtype())

    def _reciprocal_root(self, stat: Any) -> None:
        """stat ← 1/√(stat/cols + ε), in place on the per-row statistic."""
        xp = self.xp
        xp.divide(stat, self.cols, out=stat)
        xp.add(stat, EPSILON, out=stat)
        xp.sqrt(stat, out=stat)
        xp.reciprocal(stat, out=stat)

    def _apply_weights(self) -> None:
        xp, a = self.xp, self.arrays
        if self.affine:
            xp.multiply(a["y"], a["w"], out=a["y"])
            if "b" in self.weight_names:
                xp.add(a["y"], a["b"], out=a["y"])

    def output_names(self) -> list[str]:
        return ["y"]

    def _host_weights(self) -> tuple[Any, Any]:
        import numpy as np

        w = self.host64(self.arrays["w"]) if self.affine else np.ones(self.cols)
        b = self.host64(self.arrays["b"]) if self.affine and "b" in self.weight_names else np.zeros(self.cols)
        return w, b

    def _columns(self, rng: Any) -> Any:
        import numpy as np

        if self.cols <= _MAX_CHECKED_COLUMNS:
            return np.arange(self.cols)
        return np.unique(rng.integers(0, self.cols, _MAX_CHECKED_COLUMNS))

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        p = self.precision()
        w, b = self._host_weights()
        # Each output is rounded a few times on its way (centre, scale, weight, bias): u_out on
        # the reference and twice on the scaled input |x|·(1/σ)·|w| (which also covers a
        # subtracted mean where x is close to it); the row statistic sums `cols` values in the
        # accumulator, a random walk of √cols roundings.
        root_cols = math.sqrt(self.cols)
        measured, expected, allowed, labels = [], [], [], []
        columns = self._columns(rng)
        for row in _checked_rows(self.rows, rng):
            self.stop_point()
            x = self.host64(self.arrays["x"][int(row)])
            reciprocal = self.reciprocal_reference(x)
            normalised = self.centred_reference(x)[columns] * reciprocal
            reference = normalised * w[columns] + b[columns]
            scaled = np.abs(x[columns]) * reciprocal * np.abs(w[columns])
            measured.append(self.host64(self.arrays["y"][int(row)])[columns])
            expected.append(reference)
            allowed.append(SAFETY * (p.u_out * (np.abs(reference) + 2.0 * scaled + np.abs(b[columns])) + p.u_acc * root_cols * scaled))
            labels += [f"y[{int(row)}, {int(c)}]" for c in columns]
        return SampledOutputs(np.concatenate(measured), np.concatenate(expected), np.concatenate(allowed), labels)

    def centred_reference(self, x: Any) -> Any:
        """The row as the statistic sees it, in float64 (x itself, or x − mean)."""
        return x

    def reciprocal_reference(self, x: Any) -> float:
        """1/√(mean(centred²) + ε) of one row, in float64."""
        import numpy as np

        centred = self.centred_reference(x)
        return float(1.0 / np.sqrt(np.mean(centred * centred) + EPSILON))


class RmsNormKernel(RowNormKernel):
    """y = x / √(mean(x²) + ε) · w: square into y, row sum, 1/RMS, scale, weight."""

    weight_names = ("w",)
    passes_without_weights = 5  # square: read x, write y; sum: read y; scale: read x, write y

    def algorithm(self) -> str:
        lib = self.library()
        text = (
            f"{lib}.multiply(x, x, out=y); {lib}.sum(y, axis=1, dtype=row_stat.dtype, out=row_stat); "
            f"row_stat = 1/√(row_stat/cols + ε) (in place); {lib}.multiply(x, row_stat, out=y)"
        )
        return text + (f"; {lib}.multiply(y, w, out=y)" if self.affine else "")

    def __call__(self) -> None:
        xp, a = self.xp, self.arrays
        xp.multiply(a["x"], a["x"], out=a["y"])
        xp.sum(a["y"], axis=1, keepdims=True, dtype=self._accumulate, out=a["row_stat"])
        self._reciprocal_root(a["row_stat"])
        xp.multiply(a["x"], a["row_stat"], out=a["y"])
        self._apply_weights()



class LayerNormKernel(RowNormKernel):
    """y = (x − mean) / √(var + ε) · w + b: mean, centre, square, variance, centre again, scale, affine."""

    weight_names = ("w", "b")
    passes_without_weights = 10  # sum: x; centre: x, y; square: y, y; sum: y; centre: x, y; scale: y, y

    def algorithm(self) -> str:
        lib = self.library()
        text = (
            f"{lib}.sum(x, axis=1, dtype=row_mean.dtype, out=row_mean); row_mean /= cols; "
            f"{lib}.subtract(x, row_mean, out=y); {lib}.multiply(y, y, out=y); "
            f"{lib}.sum(y, axis=1, dtype=row_stat.dtype, out=row_stat); row_stat = 1/√(row_stat/cols + ε); "
            f"{lib}.subtract(x, row_mean, out=y); {lib}.multiply(y, row_stat, out=y)"
        )
        return text + (f"; {lib}.multiply(y, w, out=y); {lib}.add(y, b, out=y)" if self.affine else "")

    def buffers(self) -> list[BufferSpec]:
        return [*super().buffers(), BufferSpec("row_mean", (self.rows, 1), self.accumulator_dtype(), SCRATCH)]

    def __call__(self) -> None:
        xp, a = self.xp, self.arrays
        mean, stat = a["row_mean"], a["row_stat"]
        xp.sum(a["x"], axis=1, keepdims=True, dtype=self._accumulate, out=mean)
        xp.divide(mean, self.cols, out=mean)
        xp.subtract(a["x"], mean, out=a["y"])
        xp.multiply(a["y"], a["y"], out=a["y"])
        xp.sum(a["y"], axis=1, keepdims=True, dtype=self._accumulate, out=stat)
        self._reciprocal_root(stat)
        xp.subtract(a["x"], mean, out=a["y"])
        xp.multiply(a["y"], stat, out=a["y"])
        self._apply_weights()

    def centred_reference(self, x: Any) -> Any:
        import numpy as np

        return x - np.mean(x)
