"""STREAM-style vector kernels and the general elementwise kernel, as ufunc calls with out=.

Every call reads its array operands once and writes its output once, so a
kernel made of several calls moves more bytes than the one-pass compulsory
traffic; `implied_traffic` counts those passes.
"""

from __future__ import annotations

from typing import Any

from workbench.measure.check import SAFETY, SampledOutputs, Precision, precision_for, sample_indices
from workbench.measure.kernels.base import INOUT, INPUT, OUTPUT, PRISTINE, SCRATCH, BufferSpec, MeasuredKernel, flat_labels, named, require_float
from workbench.model.ops.paths import vector_path
from workbench.model.dtypes import dtype as lookup_dtype

STREAM_SCALAR = 3.0  # STREAM's q in scale and triad
AXPY_ALPHA = 0.5


class VectorKernel(MeasuredKernel):
    """Shared plumbing of the n-element vector kernels."""

    family = "stream"
    passes = 0  # array passes (reads + writes of n elements) per call

    @classmethod
    def for_declaration(cls, declaration: Any) -> Any:
        """impl=vectorized: the lab's 16-byte-load RawKernel (stream_raw.py); compulsory and library: the library's."""
        if declaration.implementation == "vectorized":
            return named("workbench.measure.kernels.stream_raw:VECTORIZED")[declaration.op]
        if declaration.implementation == "library" and cls is CopyKernel:
            return LibraryCopyKernel
        return cls

    @property
    def n(self) -> int:
        return int(self.params["n"])

    def check_supported(self) -> None:
        require_float(self.dtype_name, self.declaration.op)

    def vector(self, name: str, role: str) -> BufferSpec:
        return BufferSpec(name, (self.n,), self.dtype_name, role)

    def executed_path(self) -> str:
        return vector_path(lookup_dtype(self.dtype_name))

    def precision(self) -> Precision:
        return precision_for(self.dtype_name)

    def itemsize(self) -> int:
        return self.buffers()[0].itemsize

    def pass_count(self) -> int:
        """Array passes (reads plus writes of n elements) per call."""
        return self.passes

    def implied_traffic(self) -> tuple[int, str]:
        passes, calls = self.pass_count(), self.call_count()
        return passes * self.n * self.itemsize(), f"{passes} passes of n elements ({calls} ufunc call{'s' if calls > 1 else ''})"

    def call_count(self) -> int:
        return 1

    def sample(self, rng: Any) -> Any:
        return sample_indices(self.n, rng)

    def comparison(self, output: str, indices: Any, expected: Any, rounded_terms: Any) -> SampledOutputs:
        import numpy as np

        u = self.precision().u_out
        measured = self.take64(output, indices)
        allowed = SAFETY * u * (np.abs(expected) + rounded_terms)
        return SampledOutputs(measured, expected, allowed, flat_labels(indices, (self.n,), output))


class CopyKernel(VectorKernel):
    passes = 2

    def buffers(self) -> list[BufferSpec]:
        return [self.vector("a", INPUT), self.vector("c", OUTPUT)]

    def algorithm(self) -> str:
        return f"{self.library()}.copyto(c, a)"

    def __call__(self) -> None:
        self.xp.copyto(self.arrays["c"], self.arrays["a"])

    def output_names(self) -> list[str]:
        return ["c"]

    def compare(self, rng: Any) -> SampledOutputs:
        indices = self.sample(rng)
        return self.comparison("c", indices, self.take64("a", indices), 0.0)


class LibraryCopyKernel(CopyKernel):
    """copy under impl=library: CuPy's generated elementwise loop (the one cupy.add runs), 4-byte loads and stores.

    cupy.copyto of a contiguous array is a cudaMemcpy (what impl=compulsory measures); the model's
    library launch (implementations.library_stream) is the elementwise loop, so that is what runs here.
    NumPy has one copy: np.copyto.
    """

    def algorithm(self) -> str:
        if self.backend.kind != "gpu":
            return super().algorithm()
        return "cupy.ElementwiseKernel('T a', 'T c', 'c = a') (CuPy's generated elementwise loop, 4-byte accesses)"

    def prepare(self) -> None:
        self._copy = self.xp.ElementwiseKernel("T a", "T c", "c = a", "workbench_library_copy") if self.backend.kind == "gpu" else None

    def __call__(self) -> None:
        if self._copy is None:
            super().__call__()
        else:
            self._copy(self.arrays["a"], self.arrays["c"])


class ScaleKernel(VectorKernel):
    passes = 2

    def buffers(self) -> list[BufferSpec]:
        return [self.vector("c", INPUT), self.vector("b", OUTPUT)]

    def algorithm(self) -> str:
        return f"{self.library()}.multiply(c, {STREAM_SCALAR:g}, out=b)"

    def __call__(self) -> None:
        self.xp.multiply(self.arrays["c"], STREAM_SCALAR, out=self.arrays["b"])

    def output_names(self) -> list[str]:
        return ["b"]

    def compare(self, rng: Any) -> SampledOutputs:
        indices = self.sample(rng)
        return self.comparison("b", indices, STREAM_SCALAR * self.take64("c", indices), 0.0)


class AddKernel(VectorKernel):
    passes = 3

    def buffers(self) -> list[BufferSpec]:
        return [self.vector("a", INPUT), self.vector("b", INPUT), self.vector("c", OUTPUT)]

    def algorithm(self) -> str:
        return f"{self.library()}.add(a, b, out=c)"

    def __call__(self) -> None:
        self.xp.add(self.arrays["a"], self.arrays["b"], out=self.arrays["c"])

    def output_names(self) -> list[str]:
        return ["c"]

    def compare(self, rng: Any) -> SampledOutputs:
        indices = self.sample(rng)
        return self.comparison("c", indices, self.take64("a", indices) + self.take64("b", indices), 0.0)


class TriadKernel(VectorKernel):
    passes = 5  # multiply: read c, write a; add: read a and b, write a

    def buffers(self) -> list[BufferSpec]:
        return [self.vector("b", INPUT), self.vector("c", INPUT), self.vector("a", OUTPUT)]

    def algorithm(self) -> str:
        lib = self.library()
        return f"{lib}.multiply(c, {STREAM_SCALAR:g}, out=a); {lib}.add(a, b, out=a)"

    def call_count(self) -> int:
        return 2

    def notes(self) -> list[str]:
        return ["two ufunc calls: 5 array passes where the fused kernel needs 3"]

    def __call__(self) -> None:
        xp, arrays = self.xp, self.arrays
        xp.multiply(arrays["c"], STREAM_SCALAR, out=arrays["a"])
        xp.add(arrays["a"], arrays["b"], out=arrays["a"])

    def output_names(self) -> list[str]:
        return ["a"]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        indices = self.sample(rng)
        product = STREAM_SCALAR * self.take64("c", indices)
        return self.comparison("a", indices, self.take64("b", indices) + product, np.abs(product))


class AxpyKernel(VectorKernel):
    passes = 5  # multiply: read x, write t; add: read y and t, write y
    in_place = True

    def buffers(self) -> list[BufferSpec]:
        return [
            self.vector("x", INPUT),
            self.vector("y", INOUT),
            self.vector("t", SCRATCH),
            self.vector("y_initial", PRISTINE),
        ]

    def algorithm(self) -> str:
        lib = self.library()
        return f"{lib}.multiply(x, {AXPY_ALPHA:g}, out=t); {lib}.add(y, t, out=y)"

    def call_count(self) -> int:
        return 2

    def notes(self) -> list[str]:
        return [
            "two ufunc calls through a scratch vector t: 5 array passes where the fused kernel needs 3",
            "y is updated in place on every iteration; the check restores y and runs once more",
        ]

    def __call__(self) -> None:
        xp, arrays = self.xp, self.arrays
        xp.multiply(arrays["x"], AXPY_ALPHA, out=arrays["t"])
        xp.add(arrays["y"], arrays["t"], out=arrays["y"])

    def output_names(self) -> list[str]:
        return ["y"]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        indices = self.sample(rng)
        product = AXPY_ALPHA * self.take64("x", indices)
        return self.comparison("y", indices, product + self.take64("y_initial", indices), np.abs(product))


class ElementwiseKernel(VectorKernel):
    """k inputs, m outputs, f operations per element, as a chain of ufunc calls.

    out0 = in0 + in1 + … (k − 1 adds), then the remaining operations alternate
    out0 = 0.75·out0 and out0 = out0 + 0.25 (values stay near 1), then
    out_j = (1 + j/4)·out0 for each further output.
    """

    @property
    def inputs(self) -> int:
        return int(self.params["inputs"])

    @property
    def outputs(self) -> int:
        return int(self.params["outputs"])

    @property
    def declared_ops(self) -> int:
        return int(self.params["flop_per_element"])

    def minimum_ops(self) -> int:
        combine = self.inputs - 1 if self.inputs >= 2 else 0
        return combine + self.outputs - 1

    def steps(self) -> list[tuple[str, Any, Any]]:
        """The ufunc chain: (operation, first operand, second operand) writing out0 unless noted."""
        steps: list[tuple[str, Any, Any]] = []
        extra = max(self.declared_ops - self.minimum_ops(), 0)
        if self.inputs >= 2:
            steps.append(("add", "in0", "in1"))
            steps += [("add", "out0", f"in{i}") for i in range(2, self.inputs)]
        elif extra > 0:
            steps.append(("multiply", "in0", 1.5))
            extra -= 1
        else:
            steps.append(("copy", "in0", None))
        for i in range(extra):
            steps.append(("multiply", "out0", 0.75) if i % 2 == 0 else ("add", "out0", 0.25))
        steps += [("output", j, 1 + j / 4) for j in range(1, self.outputs)]
        return steps

    def physical_ops(self) -> int:
        return sum(1 for op, _, _ in self.steps() if op != "copy")

    def buffers(self) -> list[BufferSpec]:
        return [self.vector(f"in{i}", INPUT) for i in range(self.inputs)] + [
            self.vector(f"out{j}", OUTPUT) for j in range(self.outputs)
        ]

    def algorithm(self) -> str:
        lib = self.library()
        parts = []
        for op, first, second in self.steps():
            if op == "copy":
                parts.append(f"{lib}.copyto(out0, {first})")
            elif op == "output":
                parts.append(f"{lib}.multiply(out0, {second:g}, out=out{first})")
            else:
                operand = second if isinstance(second, str) else f"{second:g}"
                parts.append(f"{lib}.{op}({first}, {operand}, out=out0)")
        if len(parts) > 6:
            parts = parts[:4] + [f"… ({len(parts)} calls)"]
        return "; ".join(parts)

    def call_count(self) -> int:
        return len(self.steps())

    def pass_count(self) -> int:
        # An array-array add reads two arrays and writes one; every other step reads one and writes one.
        return sum(3 if op == "add" and isinstance(second, str) else 2 for op, _first, second in self.steps())

    def notes(self) -> list[str]:
        notes = [f"{self.call_count()} ufunc calls, each a full pass over its arrays"]
        if self.physical_ops() > self.declared_ops:
            notes.append(
                f"flop_per_element={self.declared_ops} is below the {self.minimum_ops()} operations needed to "
                f"combine {self.inputs} inputs into {self.outputs} outputs: {self.physical_ops()} ran"
            )
        return notes

    def __call__(self) -> None:
        xp, arrays = self.xp, self.arrays
        out0 = arrays["out0"]
        for op, first, second in self.steps():
            if op == "copy":
                xp.copyto(out0, arrays[first])
            elif op == "output":
                xp.multiply(out0, second, out=arrays[f"out{first}"])
            else:
                operand = arrays[second] if isinstance(second, str) else second
                getattr(xp, op)(arrays[first], operand, out=out0)

    def output_names(self) -> list[str]:
        return [f"out{j}" for j in range(self.outputs)]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        indices = self.sample(rng)
        values = {f"in{i}": self.take64(f"in{i}", indices) for i in range(self.inputs)}
        rounded = np.zeros(indices.size)
        results: dict[str, Any] = {}
        for op, first, second in self.steps():
            if op == "copy":
                values["out0"] = values[first].copy()
                continue
            if op == "output":
                results[f"out{first}"] = values["out0"] * second
                rounded = rounded + np.abs(results[f"out{first}"])
                continue
            operand = values[second] if isinstance(second, str) else second
            values["out0"] = values[first] * operand if op == "multiply" else values[first] + operand
            rounded = rounded + np.abs(values["out0"])
        results["out0"] = values["out0"]
        u = self.precision().u_out
        measured, expected, allowed, labels = [], [], [], []
        for name in self.output_names():
            measured.append(self.take64(name, indices))
            expected.append(results[name])
            allowed.append(SAFETY * u * (np.abs(results[name]) + rounded))
            labels += flat_labels(indices, (self.n,), name)
        return SampledOutputs(np.concatenate(measured), np.concatenate(expected), np.concatenate(allowed), labels)
