"""Stream kernels that reach the roof: copy, scale, add and triad as CuPy RawKernels with 16-byte loads (`impl=vectorized`).

The library kernel (`impl=library`, and the default a user's code runs) gives each thread one element and
one 4-byte load per input array, so an SM holds 2,048 × 4 B = 8 KiB per array in flight; at a loaded
latency of about a microsecond that cannot keep HBM busy (Little's law; analysis/mlp.py). These kernels
give each thread one 16-byte vector per array instead — a float4 of fp32, a double2 of fp64 — so four
times the bytes are in flight with the same threads, and one fused kernel does triad (two library calls).

Choices, stated once:
- 256 threads a block; thread i loads vector i of each input and stores vector i of the output.
- n not a multiple of the vector width: the thread after the last whole vector does the remaining
  elements one by one (so every length works, including n < the width).
- Buffers come from the backend's allocator (CuPy aligns them to 256 B), so vector i is 16-byte aligned.
- fp32 and fp64 only (the 16-byte vector types of the two float types CuPy's stream kernels measure).

On the CPU there is no RawKernel to time: the measurement is refused in one line and the model is shown.
The sources are checked without a GPU by tests/test_stream_raw_emulated.py (compiled as C++ with one
thread per CUDA thread) and on a GPU by the `gpu` tests in tests/test_measure_stream_raw.py.
"""

from __future__ import annotations

from typing import Any

from workbench.measure.errors import UnsupportedMeasurement
from workbench.measure.kernels.stream import STREAM_SCALAR, AddKernel, CopyKernel, ScaleKernel, TriadKernel, VectorKernel

THREADS_PER_BLOCK = 256
VECTOR_BYTES = 16
# dtype -> (C type, 16-byte vector type, elements a vector)
VECTOR_TYPES = {"fp32": ("float", "float4", 4), "fp64": ("double", "double2", 2)}
COMPONENTS = "xyzw"

# op -> (input arrays, output array, the element expression over the inputs' names)
EXPRESSIONS = {
    "copy": (("a",), "c", "{a}"),
    "scale": (("c",), "b", "q * {c}"),
    "add": (("a", "b"), "c", "{a} + {b}"),
    "triad": (("b", "c"), "a", "{b} + q * {c}"),
}


def kernel_name(op: str) -> str:
    return f"vectorized_{op}"


def vectorized_source(op: str, dtype: str) -> str:
    """The CUDA source of one vectorized stream kernel: whole vectors, then the tail element by element."""
    scalar, vector, width = VECTOR_TYPES[dtype]
    inputs, output, expression = EXPRESSIONS[op]
    parameters = ", ".join([*(f"const {scalar}* __restrict__ {name}" for name in inputs),
                            f"{scalar}* __restrict__ {output}", f"{scalar} q", "long long n"])
    loads = "\n".join(f"        const {vector} v{name} = reinterpret_cast<const {vector}*>({name})[i];" for name in inputs)
    parts = "\n".join(
        f"        r.{c} = {expression.format(**{name: f'v{name}.{c}' for name in inputs})};" for c in COMPONENTS[:width]
    )
    tail = expression.format(**{name: f"{name}[j]" for name in inputs})
    return f"""
extern "C" __global__ void {kernel_name(op)}({parameters})
{{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long vectors = n / {width};
    if (i < vectors) {{
{loads}
        {vector} r;
{parts}
        reinterpret_cast<{vector}*>({output})[i] = r;
    }} else if (i == vectors) {{
        for (long long j = vectors * {width}; j < n; ++j) {output}[j] = {tail};
    }}
}}
"""


def threads_for(n: int, dtype: str) -> int:
    """Threads the launch needs: one per whole vector, and one for the tail (it does nothing when there is none)."""
    return n // VECTOR_TYPES[dtype][2] + 1


def grid_for(n: int, dtype: str) -> int:
    return -(-threads_for(n, dtype) // THREADS_PER_BLOCK)


class VectorizedMixin:
    """The RawKernel launch shared by the four vectorized stream kernels (buffers and checks are the library's)."""

    op = ""

    def check_supported(self: Any) -> None:
        super().check_supported()  # type: ignore[misc]
        if self.backend.kind != "gpu":
            raise UnsupportedMeasurement(
                "impl=vectorized is a CUDA RawKernel (16-byte loads): on the CPU only the model is shown; "
                "measure impl=library here or impl=vectorized on a GPU"
            )
        if self.dtype_name not in VECTOR_TYPES:
            raise UnsupportedMeasurement(
                f"impl=vectorized measures fp32 (float4) and fp64 (double2) arrays; declare one of them, not {self.dtype_name}"
            )

    def algorithm(self: Any) -> str:
        _scalar, vector, width = VECTOR_TYPES[self.dtype_name]
        return (f"CuPy RawKernel {kernel_name(self.op)}: {THREADS_PER_BLOCK} threads a block, one {vector} "
                f"({VECTOR_BYTES} B, {width} elements) per array a thread, the tail element by element")

    def call_count(self: Any) -> int:
        return 1

    def pass_count(self: Any) -> int:
        inputs, _output, _expression = EXPRESSIONS[self.op]
        return len(inputs) + 1  # one fused kernel: each input read once, the output written once

    def notes(self: Any) -> list[str]:
        return []

    def prepare(self: Any) -> None:
        import cupy
        import numpy as np

        scalar = np.float32 if self.dtype_name == "fp32" else np.float64
        self._kernel = cupy.RawKernel(vectorized_source(self.op, self.dtype_name), kernel_name(self.op))
        inputs, output, _expression = EXPRESSIONS[self.op]
        self._arguments = (*(self.arrays[name] for name in inputs), self.arrays[output], scalar(STREAM_SCALAR), np.int64(self.n))
        self._grid = (grid_for(self.n, self.dtype_name),)

    def __call__(self: Any) -> None:
        self._kernel(self._grid, (THREADS_PER_BLOCK,), self._arguments)


class VectorizedCopyKernel(VectorizedMixin, CopyKernel):
    op = "copy"


class VectorizedScaleKernel(VectorizedMixin, ScaleKernel):
    op = "scale"


class VectorizedAddKernel(VectorizedMixin, AddKernel):
    op = "add"


class VectorizedTriadKernel(VectorizedMixin, TriadKernel):
    op = "triad"


VECTORIZED: dict[str, type[VectorKernel]] = {
    "copy": VectorizedCopyKernel,
    "scale": VectorizedScaleKernel,
    "add": VectorizedAddKernel,
    "triad": VectorizedTriadKernel,
}
