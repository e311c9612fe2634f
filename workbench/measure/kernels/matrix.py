"""Matrix kernels: GEMM and batched GEMM, einsum, unfused attention, and conv2d by im2col.

Every matrix product goes through `backend.matmul` (numpy.matmul on the CPU,
cuBLAS GemmEx / GemmStridedBatchedEx with an explicit compute type on the
GPU), so the instruction path a run used is known and recorded.
"""

from __future__ import annotations

import math
from typing import Any

from workbench.model.dtypes import dtype as lookup_dtype
from workbench.measure.check import SAFETY, SampledOutputs, Precision, precision_for, sample_indices
from workbench.measure.errors import UnsupportedMeasurement
from workbench.measure.kernels.base import (
    INOUT,
    INPUT,
    OUTPUT,
    PRISTINE,
    SCRATCH,
    ZEROED,
    BufferSpec,
    MeasuredKernel,
    float_info,
    named,
    flat_labels,
    require_float,
)
from workbench.model.ops.conv2d import output_extent
from workbench.model.ops.einsum import indices_in_order, parse_spec
from workbench.model.ops.gemm import default_acc
from workbench.model.ops.paths import vector_path

_HOST_VALUES_PER_CHECK = 1 << 24  # bound on float64 values the check pulls to the host


def _samples_for(depth: int) -> int:
    """How many outputs to recompute when each needs `depth` products: fewer for deep sums."""
    return max(8, min(256, _HOST_VALUES_PER_CHECK // max(depth, 1)))


class MatrixKernel(MeasuredKernel):
    """Shared plumbing: the executed path, TF32, and the precision of matrix products."""

    family = "matrix"

    def check_supported(self) -> None:
        require_float(self.dtype_name, self.declaration.op)

    def executed_path(self) -> str:
        return self.backend.executed_matrix_path(self.dtype_name)

    @property
    def uses_tf32(self) -> bool:
        return self.dtype_name == "tf32"

    def precision(self) -> Precision:
        return precision_for(
            self.dtype_name,
            self.accumulator_dtype(),
            tf32_inputs=self.executed_path() == "tf32_tc",
        )

    def notes(self) -> list[str]:
        notes = []
        if self.dtype_name == "tf32" and self.executed_path() != "tf32_tc":
            notes.append(f"declared tf32, but {self.backend.name} has no TF32 path here: the products ran as fp32")
        return notes


class GemmKernel(MatrixKernel):
    """C = A·B (+ β·C), batched when batch > 1, through the library (cuBLAS, BLAS): `impl=compulsory`.

    `impl=naive` and `impl=tiled` select the lab's RawKernels (`gemm_raw`),
    which share these buffers and this reference check.
    """

    @classmethod
    def for_declaration(cls, declaration: Any) -> Any:
        if cls is GemmKernel and declaration.implementation != "compulsory":
            return named("workbench.measure.kernels.gemm_raw:raw_gemm_class")(declaration)
        return cls

    def storage_dtype_name(self) -> str:
        return str(self.params["a"])

    def check_supported(self) -> None:
        p = self.params
        if not p["a"] == p["b"] == p["c"]:
            raise UnsupportedMeasurement(
                f"mixed operand types (a={p['a']}, b={p['b']}, c={p['c']}) are not measured yet; declare one dtype"
            )
        super().check_supported()
        if p["acc"] != default_acc(p["a"]):
            raise UnsupportedMeasurement(
                f"acc={p['acc']}: the measured GEMM accumulates {p['a']} products in {default_acc(p['a'])}; "
                "declare the default accumulator to measure it"
            )
        self.in_place = self.beta != 0

    @property
    def beta(self) -> float:
        return float(self.params["beta"])

    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        p = self.params
        lead = (int(p["batch"]),) if int(p["batch"]) > 1 else ()
        return lead + (int(p["M"]), int(p["K"])), lead + (int(p["K"]), int(p["N"])), lead + (int(p["M"]), int(p["N"]))

    def buffers(self) -> list[BufferSpec]:
        a, b, c = self.shapes()
        dt = self.dtype_name
        specs = [BufferSpec("A", a, dt, INPUT), BufferSpec("B", b, dt, INPUT)]
        if self.beta == 0:
            specs.append(BufferSpec("C", c, dt, OUTPUT))
        else:
            specs += [BufferSpec("C", c, dt, INOUT), BufferSpec("C_initial", c, dt, PRISTINE)]
            if self.backend.matmul_scratch_needed(self.beta):
                specs.append(BufferSpec("product", c, dt, SCRATCH))
        return specs

    def algorithm(self) -> str:
        return self.backend.matmul_algorithm(self.dtype_name, self.beta)

    def implied_traffic(self) -> tuple[int, str]:
        specs = {spec.name: spec for spec in self.buffers()}
        total = specs["A"].bytes + specs["B"].bytes + specs["C"].bytes * (2 if self.beta else 1)
        note = "A and B read once, C written once (β ≠ 0: C read too); cache reuse inside the GEMM assumed"
        if "product" in specs:
            total += 4 * specs["C"].bytes
            note += "; β·C + product in two more ufunc calls adds 4 passes over C"
        return total, note

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.beta != 0:
            notes.append("C is updated in place on every iteration; the check restores C and runs once more")
        return notes

    def __call__(self) -> None:
        a = self.arrays
        self.backend.matmul(a["A"], a["B"], a["C"], beta=self.beta, scratch=a.get("product"), tf32=self.uses_tf32)

    def output_names(self) -> list[str]:
        return ["C"]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        _, _, c_shape = self.shapes()
        k = int(self.params["K"])
        indices = sample_indices(math.prod(c_shape), rng, _samples_for(k))
        p = self.precision()
        measured = self.take64("C", indices)
        initial = self.take64("C_initial", indices) if self.beta != 0 else np.zeros(indices.size)
        expected, allowed = np.empty(indices.size), np.empty(indices.size)
        A, B = self.arrays["A"], self.arrays["B"]
        for slot, flat in enumerate(indices):
            self.stop_point()
            position = np.unravel_index(int(flat), c_shape)
            lead, (i, j) = tuple(int(x) for x in position[:-2]), (int(position[-2]), int(position[-1]))
            row = self.host64(A[lead + (i,)])
            column = self.host64(B[lead + (slice(None), j)])
            terms = row * column
            product = float(np.sum(terms))
            scaled = self.beta * initial[slot]
            expected[slot] = product + scaled
            # Output rounding, the β epilogue's roundings, and the accumulation's random walk.
            rounded = abs(expected[slot]) + (abs(product) + abs(scaled) if self.beta != 0 else 0.0)
            allowed[slot] = SAFETY * (p.u_out * rounded + p.u_acc * math.sqrt(k) * float(np.sqrt(np.dot(terms, terms))))
        return SampledOutputs(measured, expected, allowed, flat_labels(indices, c_shape, "C"))


class EinsumKernel(MatrixKernel):
    """Any contraction through the array module's einsum."""

    def __init__(self, declaration: Any, backend: Any) -> None:
        operands, output = parse_spec(declaration.params["spec"])
        self.operand_specs = operands
        self.output_spec = output
        self.extents = {index: int(declaration.params[index]) for index in indices_in_order(declaration.params["spec"])}
        super().__init__(declaration, backend)

    @property
    def names(self) -> list[str]:
        return [chr(ord("A") + i) for i in range(len(self.operand_specs) + 1)]

    def shape_of(self, indices: str) -> tuple[int, ...]:
        return tuple(self.extents[index] for index in indices)

    @property
    def contracted(self) -> list[str]:
        return [index for index in self.extents if index not in self.output_spec]

    def depth(self) -> int:
        return math.prod(self.extents[index] for index in self.contracted) if self.contracted else 1

    def buffers(self) -> list[BufferSpec]:
        specs = [BufferSpec(name, self.shape_of(op), self.dtype_name, INPUT) for name, op in zip(self.names, self.operand_specs)]
        specs.append(BufferSpec(self.names[-1], self.shape_of(self.output_spec), self.dtype_name, OUTPUT))
        return specs

    def temporary_bytes(self) -> int:
        # The library may transpose operands and hold intermediates; CuPy's einsum has no out=, so its
        # result is a fresh array copied into the output buffer.
        return sum(spec.bytes for spec in self.buffers())

    @property
    def spec_text(self) -> str:
        return ",".join(self.operand_specs) + "->" + self.output_spec

    def algorithm(self) -> str:
        if self.backend.name == "numpy":
            return f'numpy.einsum("{self.spec_text}", ..., out={self.names[-1]}, optimize=<path from numpy.einsum_path>)'
        return f'cupy.einsum("{self.spec_text}", ...) then cupy.copyto({self.names[-1]}, result) (CuPy einsum has no out=)'

    def executed_path(self) -> str:
        if len(self.operand_specs) != 2 or not self.contracted:
            return vector_path(lookup_dtype(self.dtype_name))
        if self.backend.name == "cupy" and self.dtype_name in ("fp32", "tf32"):
            import os

            return "tf32_tc" if os.environ.get("CUPY_TF32", "0") not in ("", "0") else "fp32"
        return self.backend.executed_matrix_path(self.dtype_name)

    def implied_traffic(self) -> tuple[int, str]:
        specs = self.buffers()
        total = sum(spec.bytes for spec in specs)
        note = "each operand read once and the result written once; the library's contraction order and intermediates are not counted"
        if self.backend.name == "cupy":
            total += 2 * specs[-1].bytes
            note += "; the copy into the output buffer reads and writes the result once more"
        return total, note

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.backend.name == "cupy" and self.dtype_name == "tf32" and self.executed_path() == "fp32":
            notes.append("CuPy's einsum uses TF32 only when CUPY_TF32=1 is set before CuPy starts")
        return notes

    def prepare(self) -> None:
        self._operands = [self.arrays[name] for name in self.names[:-1]]
        self._path: Any = None
        if self.backend.name == "numpy":
            import numpy as np

            order = str(self.params.get("order", "fused"))
            if order != "fused" and len(self.operand_specs) >= 3:  # the declared pairwise order, the model's own path
                from workbench.model.ops.einsum import contraction_path

                self._path = ["einsum_path", *contraction_path(self.operand_specs, self.output_spec, self.extents, order)]
            else:
                self._path = np.einsum_path(self.spec_text, *self._operands, optimize="greedy")[0]

    def __call__(self) -> None:
        out = self.arrays[self.names[-1]]
        if self._path is not None:
            self.xp.einsum(self.spec_text, *self._operands, out=out, optimize=self._path)
        else:
            self.xp.copyto(out, self.xp.einsum(self.spec_text, *self._operands))

    def output_names(self) -> list[str]:
        return [self.names[-1]]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        out_shape = self.shape_of(self.output_spec)
        indices = sample_indices(math.prod(out_shape), rng, _samples_for(self.depth()))
        p = self.precision()
        measured = self.take64(self.names[-1], indices)
        expected, allowed = np.empty(indices.size), np.empty(indices.size)
        extra_rounding = max(len(self.operand_specs) - 2, 0)
        for slot, flat in enumerate(indices):
            position = np.unravel_index(int(flat), out_shape) if out_shape else ()
            fixed = {index: int(value) for index, value in zip(self.output_spec, position)}
            pieces, subscripts = [], []
            for name, operand in zip(self.names, self.operand_specs):
                selector = tuple(fixed.get(index, slice(None)) for index in operand)
                pieces.append(self.host64(self.arrays[name][selector]))
                subscripts.append("".join(index for index in operand if index not in fixed))
            contraction = ",".join(subscripts) + "->"
            value = float(np.einsum(contraction, *pieces))
            sum_abs = float(np.einsum(contraction, *[np.abs(x) for x in pieces]))
            norm2 = math.sqrt(float(np.einsum(contraction, *[x * x for x in pieces])))
            expected[slot] = value
            allowed[slot] = SAFETY * (
                p.u_out * (abs(value) + extra_rounding * sum_abs) + p.u_acc * math.sqrt(self.depth()) * norm2
            )
        return SampledOutputs(measured, expected, allowed, flat_labels(indices, out_shape, self.names[-1]))


class AttentionKernel(MatrixKernel):
    """Unfused attention: S = Q·Kᵀ, a row softmax of S/√D in place, O = P·V."""

    def check_supported(self) -> None:
        if self.params.get("backward"):
            raise UnsupportedMeasurement("the attention backward (backward=true) is bounded, not measured yet")
        super().check_supported()

    def dims(self) -> tuple[int, int, int, int, int, int]:
        p = self.params
        return int(p["B"]), int(p["H"]), int(p["Sq"]), int(p["Skv"]), int(p["D"]), int(p["Dv"])

    @property
    def causal(self) -> bool:
        return bool(self.params["causal"])

    @property
    def causal_offset(self) -> int:
        """Query i sees keys j ≤ i + offset (ops.attention.causal_offset: Skv − Sq bottom-right, 0 top-left)."""
        from workbench.model.ops.attention import causal_offset

        _, _, sq, skv, _, _ = self.dims()
        return int(causal_offset(sq, skv, str(self.params.get("align", "bottom_right"))))

    @property
    def has_empty_rows(self) -> bool:
        """A bottom-right causal mask leaves the first Sq − Skv query rows with no key at all."""
        return self.causal and self.causal_offset < 0

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.dims()[4])

    def buffers(self) -> list[BufferSpec]:
        b, h, sq, skv, d, dv = self.dims()
        dt = self.dtype_name
        # Q spans [-3, 3) so the scaled scores have unit spread and the softmax is not flat.
        return [
            BufferSpec("Q", (b, h, sq, d), dt, INPUT, -3.0, 3.0),
            BufferSpec("K", (b, h, skv, d), dt, INPUT),
            BufferSpec("V", (b, h, skv, dv), dt, INPUT),
            BufferSpec("O", (b, h, sq, dv), dt, OUTPUT),
            BufferSpec("S", (b, h, sq, skv), dt, SCRATCH),
            BufferSpec("row_max", (b, h, sq, 1), dt, SCRATCH),
            BufferSpec("row_sum", (b, h, sq, 1), self.accumulator_dtype(), SCRATCH),
        ]

    def temporary_bytes(self) -> int:
        _, _, sq, skv, _, _ = self.dims()
        return 9 * sq * skv if self.causal else 0  # the boolean mask and the index arrays that build it

    def score_passes(self) -> int:
        # Q·Kᵀ writes S; max reads; subtract, scale, exp read and write; sum reads; divide reads and
        # writes; P·V reads.  The causal mask writes S once more.
        return 12 + (1 if self.causal else 0)

    def algorithm(self) -> str:
        lib = self.library()
        mask = f"{lib}.copyto(S, -inf, where=mask); " if self.causal else ""
        return (
            f"S = Q·Kᵀ [{self.backend.matmul_algorithm(self.dtype_name)}]; {mask}softmax of S/√D in place "
            f"(max, subtract, multiply, exp, sum, divide); O = P·V"
        )

    def implied_traffic(self) -> tuple[int, str]:
        specs = {spec.name: spec for spec in self.buffers()}
        compulsory = sum(specs[name].bytes for name in ("Q", "K", "V", "O"))
        passes = self.score_passes()
        total = compulsory + passes * specs["S"].bytes
        note = (
            f"Q, K, V read and O written once, plus {passes} passes over the B·H·Sq·Skv score matrix "
            "(the unfused traffic model counts 4: S written and read, P written and read)"
        )
        return total, note

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.params["fused"]:
            notes.append(
                "declared fused, measured unfused: S and P make round trips through memory, so the "
                "achieved bandwidth against the fused compulsory bytes understates the traffic"
            )
        if self.causal:
            notes.append(f"causal mask aligned {str(self.params.get('align', 'bottom_right')).replace('_', '-')}; "
                         "masked scores set to −inf before the softmax")
        if self.declaration.implementation == "naive":
            notes.append("impl=naive: this is the kernel the naive attention model describes (S and P through "
                         "memory, every score computed, masked ones discarded)")
        if self.has_empty_rows:
            notes.append("query rows that see no key produce zeros (two small extra calls guard the softmax)")
        return notes

    def prepare(self) -> None:
        xp = self.xp
        _, _, sq, skv, _, _ = self.dims()
        a = self.arrays
        self._key_t = a["K"].swapaxes(-1, -2)
        self._accumulate = self.array_dtype(self.accumulator_dtype())
        self._mask = None
        if self.causal:
            rows = xp.arange(sq).reshape(sq, 1)
            cols = xp.arange(skv).reshape(1, skv)
            self._mask = cols > rows + self.causal_offset
        storage = self.array_dtype(self.dtype_name)
        self._lowest = float(float_info(storage).min) if self.has_empty_rows else 0.0
        self._tiny = float(float_info(self._accumulate).tiny)

    def __call__(self) -> None:
        xp, a, backend = self.xp, self.arrays, self.backend
        s = a["S"]
        backend.matmul(a["Q"], self._key_t, s, tf32=self.uses_tf32)
        if self._mask is not None:
            xp.copyto(s, -xp.inf, where=self._mask)
        xp.max(s, axis=-1, keepdims=True, out=a["row_max"])
        if self._lowest:
            xp.maximum(a["row_max"], self._lowest, out=a["row_max"])
        xp.subtract(s, a["row_max"], out=s)
        xp.multiply(s, self.scale, out=s)
        xp.exp(s, out=s)
        xp.sum(s, axis=-1, keepdims=True, dtype=self._accumulate, out=a["row_sum"])
        if self._lowest:
            xp.maximum(a["row_sum"], self._tiny, out=a["row_sum"])
        xp.divide(s, a["row_sum"], out=s)
        backend.matmul(s, a["V"], a["O"], tf32=self.uses_tf32)

    def output_names(self) -> list[str]:
        return ["O"]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        b, h, sq, skv, d, dv = self.dims()
        rows = sample_indices(b * h * sq, rng, max(4, min(32, _HOST_VALUES_PER_CHECK // max(skv * (d + dv), 1))))
        p = self.precision()
        a = self.arrays
        heads: dict[tuple[int, int], tuple[Any, Any]] = {}
        measured, expected, allowed, labels = [], [], [], []
        for flat in rows:
            self.stop_point()
            bi, hi, qi = (int(x) for x in np.unravel_index(int(flat), (b, h, sq)))
            if (bi, hi) not in heads:
                heads[(bi, hi)] = (self.host64(a["K"][bi, hi]), self.host64(a["V"][bi, hi]))
            keys, values = heads[(bi, hi)]
            query = self.host64(a["Q"][bi, hi, qi])
            got = self.host64(a["O"][bi, hi, qi])
            visible = skv if not self.causal else max(0, min(skv, qi + self.causal_offset + 1))
            labels += [f"O[{bi}, {hi}, {qi}, {c}]" for c in range(dv)]
            measured.append(got)
            if visible == 0:
                expected.append(np.zeros(dv))
                allowed.append(np.zeros(dv))
                continue
            products = keys[:visible] * query  # (visible, D)
            scores = products.sum(axis=1)
            z = scores * self.scale
            shifted = z - z.max()
            weights = np.exp(shifted)
            probabilities = weights / weights.sum()
            v = values[:visible]
            output = probabilities @ v
            # Relative error of each probability: rounding of S, of the shifted and scaled scores, of exp and
            # of the division; errors over independent keys add like a random walk.
            score_error = self.scale * (
                p.u_out * np.abs(scores) + p.u_acc * math.sqrt(d) * np.sqrt((products * products).sum(axis=1))
            )
            relative = p.u_out * (4.0 + 2.0 * np.abs(shifted)) + score_error
            weighted = probabilities[:, None] * v  # (visible, Dv)
            walk = 3.0 * np.sqrt(((weighted * relative[:, None]) ** 2).sum(axis=0))
            accumulation = p.u_acc * math.sqrt(visible) * np.sqrt((weighted * weighted).sum(axis=0))
            expected.append(output)
            allowed.append(SAFETY * (4.0 * p.u_out * np.abs(output) + walk + accumulation))
        return SampledOutputs(np.concatenate(measured), np.concatenate(expected), np.concatenate(allowed), labels)


class Conv2dKernel(MatrixKernel):
    """2-D convolution by im2col: gather input windows into a column matrix, then one GEMM per group."""

    def dims(self) -> dict[str, int]:
        p = self.params
        dims = {name: int(p[name]) for name in ("N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "groups")}
        dims["P"] = output_extent(dims["H"], dims["R"], dims["stride"], dims["pad"], dims["dilation"])
        dims["Q"] = output_extent(dims["W"], dims["S"], dims["stride"], dims["pad"], dims["dilation"])
        dims["Cg"] = dims["C"] // dims["groups"]
        dims["Kg"] = dims["K"] // dims["groups"]
        return dims

    def buffers(self) -> list[BufferSpec]:
        d = self.dims()
        dt = self.dtype_name
        specs = [
            BufferSpec("x", (d["N"], d["C"], d["H"], d["W"]), dt, INPUT),
            BufferSpec("w", (d["K"], d["Cg"], d["R"], d["S"]), dt, INPUT),
            BufferSpec("y", (d["N"], d["K"], d["P"], d["Q"]), dt, OUTPUT),
        ]
        if d["pad"]:
            specs.append(BufferSpec("x_padded", (d["N"], d["C"], d["H"] + 2 * d["pad"], d["W"] + 2 * d["pad"]), dt, ZEROED))
        specs.append(BufferSpec("columns", (d["N"], d["groups"], d["Cg"], d["R"], d["S"], d["P"], d["Q"]), dt, SCRATCH))
        return specs

    def algorithm(self) -> str:
        d = self.dims()
        lib = self.library()
        pad = f"{lib}.copyto(x_padded interior, x); " if d["pad"] else ""
        return (
            f"im2col: {pad}{lib}.copyto(columns, strided window view); then per group columns·w "
            f"[{self.backend.matmul_algorithm(self.dtype_name)}]"
        )

    def implied_traffic(self) -> tuple[int, str]:
        specs = {spec.name: spec for spec in self.buffers()}
        x, w, y, columns = specs["x"].bytes, specs["w"].bytes, specs["y"].bytes, specs["columns"].bytes
        total = w + y + 2 * columns
        note = "column matrix written once and read by the GEMM (C/groups·R·S values per output pixel), w read, y written"
        if "x_padded" in specs:
            total += 3 * x  # read x, write the padded copy, read it again in the gather
            note = "x copied into the padded buffer (read + write), windows read from it; " + note
        else:
            total += x
            note = "x read by the window gather; " + note
        return total, note

    def notes(self) -> list[str]:
        d = self.dims()
        expansion = d["R"] * d["S"] * d["P"] * d["Q"] / (d["H"] * d["W"])
        return super().notes() + [
            f"im2col expands the input {expansion:.3g}× (R·S·P·Q / (H·W)) into the column matrix",
        ]

    def prepare(self) -> None:
        d = self.dims()
        a = self.arrays
        source = a["x"]
        self._interior = None
        if d["pad"]:
            pad = d["pad"]
            self._interior = a["x_padded"][:, :, pad : pad + d["H"], pad : pad + d["W"]]
            source = a["x_padded"]
        s_n, s_c, s_h, s_w = source.strides
        self._windows = self.backend.as_strided(
            source,
            (d["N"], d["groups"], d["Cg"], d["R"], d["S"], d["P"], d["Q"]),
            (s_n, s_c * d["Cg"], s_c, s_h * d["dilation"], s_w * d["dilation"], s_h * d["stride"], s_w * d["stride"]),
        )
        crs = d["Cg"] * d["R"] * d["S"]
        self._columns = a["columns"].reshape(d["N"], d["groups"], crs, d["P"] * d["Q"])
        self._filters = a["w"].reshape(d["groups"], d["Kg"], crs)
        self._outputs = a["y"].reshape(d["N"], d["groups"], d["Kg"], d["P"] * d["Q"])

    def __call__(self) -> None:
        xp, a = self.xp, self.arrays
        if self._interior is not None:
            xp.copyto(self._interior, a["x"])
        xp.copyto(a["columns"], self._windows)
        for group in range(self._filters.shape[0]):
            self.backend.matmul(
                self._filters[group], self._columns[:, group], self._outputs[:, group], tf32=self.uses_tf32
            )

    def output_names(self) -> list[str]:
        return ["y"]

    def compare(self, rng: Any) -> SampledOutputs:
        import numpy as np

        d = self.dims()
        y_shape = (d["N"], d["K"], d["P"], d["Q"])
        depth = d["Cg"] * d["R"] * d["S"]
        indices = sample_indices(math.prod(y_shape), rng, min(128, _samples_for(depth)))
        p = self.precision()
        measured = self.take64("y", indices)
        expected, allowed = np.empty(indices.size), np.empty(indices.size)
        images: dict[int, Any] = {}
        pad, stride, dilation = d["pad"], d["stride"], d["dilation"]
        taps_r = np.arange(d["R"]) * dilation
        taps_s = np.arange(d["S"]) * dilation
        for slot, flat in enumerate(indices):
            n, k, row, col = (int(x) for x in np.unravel_index(int(flat), y_shape))
            if n not in images:
                images[n] = np.pad(self.host64(self.arrays["x"][n]), ((0, 0), (pad, pad), (pad, pad)))
            group = k // d["Kg"]
            channels = images[n][group * d["Cg"] : (group + 1) * d["Cg"]]
            window = channels[:, row * stride + taps_r][:, :, col * stride + taps_s]  # (Cg, R, S)
            terms = window * self.host64(self.arrays["w"][k])
            expected[slot] = float(terms.sum())
            allowed[slot] = SAFETY * (
                p.u_out * abs(expected[slot]) + p.u_acc * math.sqrt(depth) * math.sqrt(float((terms * terms).sum()))
            )
        return SampledOutputs(measured, expected, allowed, flat_labels(indices, y_shape, "y"))
