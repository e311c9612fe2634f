"""Instruction-path selection: which datasheet rate bounds an operation's arithmetic."""

from __future__ import annotations

from workbench.model.dtypes import DType

# Matrix products on tensor cores, by input dtype.
_MATRIX_PATH = {
    "fp64": "fp64_tc",
    "fp32": "fp32",  # CuPy/cuBLAS use plain FP32 unless TF32 is enabled (CUPY_TF32=1)
    "tf32": "tf32_tc",
    "fp16": "fp16_tc",
    "bf16": "bf16_tc",
    "fp8_e4m3": "fp8_tc",
    "fp8_e5m2": "fp8_tc",
    "fp4": "fp4_tc",
    "int8": "int8_tc",
    "int4": "int4_tc",
}


def matrix_path(inputs: DType, acc: DType | None = None) -> str:
    """The tensor path a matrix product of `inputs` runs on.

    fp16 products that accumulate in fp16 get their own path, because GeForce
    cards run them at twice the fp32-accumulate rate.
    """
    path = _MATRIX_PATH.get(inputs.name, "fp32")
    if path == "fp16_tc" and acc is not None and acc.name == "fp16":
        return "fp16_tc_fp16acc"
    return path


def vector_path(dt: DType) -> str:
    """The CUDA-core path for elementwise work: fp64 on the fp64 units, everything else fp32.

    Half-precision elementwise kernels usually compute in fp32 registers, so the
    fp32 rate bounds them.
    """
    return "fp64" if dt.name == "fp64" else "fp32"
