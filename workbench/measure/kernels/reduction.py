"""Row sums and row softmax through the array module's reductions and ufuncs with out=."""

from __future__ import annotations

import math
from typing import Any

from workbench.model.dtypes import dtype as lookup_dtype
from workbench.measure.check import MAX_SAMPLES, SAFETY, SampledOutputs, Precision, precision_for
from workbench.measure.kernels.base import INPUT, OUTPUT, SCRATCH, BufferSpec, MeasuredKernel, require_float
from workbench.model.ops.paths import vector_path

_HOST_CHUNK = 1 << 22  # elements copied to the host at a time for the float64 reference
_MAX_CHECKED_ROWS = 8
_MAX_CHECKED_COLUMNS = 4096


class ReduceKernel(MeasuredKernel):
    """s[r] = Σ_i x[r, i], accumulating 16-bit inputs in fp32."""

    family = "reduction"

    @property
    def rows(self) -> int:
        return int(self.params["rows"])

    @property
    def n(self) -> int:
        return int(self.params["n"])

    def check_supported(self) -> None:
        require_float(self.dtype_name, "reduce")

    @property
    def widens(self) -> bool:
        """16-bit sums go through an fp32 buffer: a reduction into a 16-bit `out` would round every partial sum."""
        return self.accumulator_dtype() != self.dtype_name

    def buffers(self) -> list[BufferSpec]:
        specs = [BufferSpec("x", (self.rows, self.n), self.dtype_name, INPUT), BufferSpec("sum", (self.rows,), self.dtype_name, OUTPUT)]
        if self.widens:
            specs.append(BufferSpec("sum_wide", (self.rows,), self.accumulator_dtype(), SCRATCH))
        return specs

    def algorithm(self) -> str:
        lib = self.library()
        if self.widens:
            return f"{lib}.sum(x, axis=1, dtype={lib}.float32, out=sum_wide); {lib}.copyto(sum, sum_wide)"
        return f"{lib}.sum(x, axis=1, out=sum)"

    def executed_path(self) -> str:
        return vector_path(lookup_dtype(self.dtype_name))

    def implied_traffic(self) -> tuple[int, str]:
        specs = self.buffers()
        return specs[0].bytes + specs[1].bytes, "one pass over x, one write of the sums"

    def precision(self) -> Precision:
        return precision_for(self.dtype_name, self.accumulator_dtype())

    def notes(self) -> list[str]:
        return [f"sums accumulate in {self.accumulator_dtype()} and are stored as {self.dtype_name}"]

    def __call__(self) -> None:
        a = self.arrays
        if self.widens:
            self.xp.sum(a["x"], axis=1, dtype=a["sum_wide"].dtype, out=a["sum_wide"])
            self.xp.copyto(a["sum"], a["sum_wide"])
        else:
            self.xp.sum(a["x"], axis=1, out=a["sum"])

    def output_names(self) -> list[str]:
        return ["sum"]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        rows = _checked_rows(self.rows, rng)
        x = self.arrays["x"]
        expected, squares = [], []
        for row in rows:
            total, square = 0.0, 0.0
            for start in range(0, self.n, _HOST_CHUNK):
                self.stop_point()
                chunk = self.host64(x[int(row), start : start + _HOST_CHUNK])
                total += float(np.sum(chunk))
                square += float(np.dot(chunk, chunk))
            expected.append(total)
            squares.append(square)
        expected_array = np.array(expected)
        measured = self.host64(self.arrays["sum"])[rows]
        p = self.precision()
        # Rounding errors of a long sum wander like a random walk: √n · ‖x‖₂ bounds them comfortably.
        accumulated = math.sqrt(self.n) * np.sqrt(np.array(squares))
        allowed = SAFETY * (p.u_out * np.abs(expected_array) + p.u_acc * accumulated)
        return SampledOutputs(measured, expected_array, allowed, [f"sum[{int(r)}]" for r in rows])


class SoftmaxKernel(MeasuredKernel):
    """y = exp(x − rowmax) / rowsum, five passes of ufuncs and reductions with out=."""

    family = "reduction"
    passes = 8  # max: read x; subtract: read x, write y; exp: read+write y; sum: read y; divide: read+write y

    @property
    def rows(self) -> int:
        return int(self.params["rows"])

    @property
    def cols(self) -> int:
        return int(self.params["cols"])

    def check_supported(self) -> None:
        require_float(self.dtype_name, "softmax")

    def buffers(self) -> list[BufferSpec]:
        return [
            BufferSpec("x", (self.rows, self.cols), self.dtype_name, INPUT, -4.0, 4.0),
            BufferSpec("y", (self.rows, self.cols), self.dtype_name, OUTPUT),
            BufferSpec("row_max", (self.rows, 1), self.dtype_name, SCRATCH),
            BufferSpec("row_sum", (self.rows, 1), self.accumulator_dtype(), SCRATCH),
        ]

    def algorithm(self) -> str:
        lib = self.library()
        return (
            f"{lib}.max(x, axis=1, out=row_max); {lib}.subtract(x, row_max, out=y); {lib}.exp(y, out=y); "
            f"{lib}.sum(y, axis=1, dtype=row_sum.dtype, out=row_sum); {lib}.divide(y, row_sum, out=y)"
        )

    def executed_path(self) -> str:
        return vector_path(lookup_dtype(self.dtype_name))

    def implied_traffic(self) -> tuple[int, str]:
        matrix = self.buffers()[0].bytes
        return self.passes * matrix, f"{self.passes} passes over the rows × cols matrix (5 calls; compulsory traffic counts 2)"

    def precision(self) -> Precision:
        return precision_for(self.dtype_name, self.accumulator_dtype())

    def notes(self) -> list[str]:
        return [
            "unfused: each of the 5 calls streams the whole matrix unless it stays in cache",
            f"row sums accumulate in {self.accumulator_dtype()}",
        ]

    def prepare(self) -> None:
        self._accumulate = self.array_dtype(self.accumulator_dtype())

    def __call__(self) -> None:
        xp, a = self.xp, self.arrays
        xp.max(a["x"], axis=1, keepdims=True, out=a["row_max"])
        xp.subtract(a["x"], a["row_max"], out=a["y"])
        xp.exp(a["y"], out=a["y"])
        xp.sum(a["y"], axis=1, keepdims=True, dtype=self._accumulate, out=a["row_sum"])
        xp.divide(a["y"], a["row_sum"], out=a["y"])

    def output_names(self) -> list[str]:
        return ["y"]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        p = self.precision()
        measured, expected, allowed, labels = [], [], [], []
        for row in _checked_rows(self.rows, rng):
            self.stop_point()
            x = self.host64(self.arrays["x"][int(row)])
            shifted = x - x.max()
            exps = np.exp(shifted)
            reference = exps / exps.sum()
            columns = np.arange(self.cols)
            if self.cols > _MAX_CHECKED_COLUMNS:
                columns = np.unique(np.concatenate(([int(np.argmax(x))], rng.integers(0, self.cols, _MAX_CHECKED_COLUMNS))))
            got = self.host64(self.arrays["y"][int(row)])[columns]
            # Rounding the shifted value feeds exp's argument: relative error grows with |x − max|.
            spread = 4.0 + 2.0 * np.abs(shifted[columns])
            measured.append(got)
            expected.append(reference[columns])
            allowed.append(SAFETY * p.u_out * np.abs(reference[columns]) * spread)
            labels += [f"y[{int(row)}, {int(c)}]" for c in columns]
        return SampledOutputs(np.concatenate(measured), np.concatenate(expected), np.concatenate(allowed), labels)


def _checked_rows(rows: int, rng: Any) -> Any:
    """The rows the reference check recomputes: a few, always the first and the last."""
    import numpy as np

    if rows <= _MAX_CHECKED_ROWS:
        return np.arange(rows)
    chosen = rng.integers(1, rows - 1, size=min(_MAX_CHECKED_ROWS, MAX_SAMPLES) - 2)
    return np.unique(np.concatenate(([0, rows - 1], chosen)))
