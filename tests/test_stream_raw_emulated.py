"""The vectorized stream kernels (impl=vectorized), checked without a GPU against NumPy.

Each kernel source is compiled as C++20 with one std::thread per CUDA thread (tests/cuda_emulation.py,
as the lab GEMMs are checked), launched as the measurement launches it (256 threads a block,
stream_raw.grid_for blocks), and its output compared element by element with NumPy's, for lengths that
are and are not a multiple of the vector width — including lengths shorter than one vector.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from cuda_emulation import COMPILER, EMULATION
from workbench.measure.kernels.stream import STREAM_SCALAR
from workbench.measure.kernels.stream_raw import (
    EXPRESSIONS,
    THREADS_PER_BLOCK,
    VECTOR_TYPES,
    grid_for,
    kernel_name,
    vectorized_source,
)

pytestmark = pytest.mark.skipif(COMPILER is None, reason="no g++ to compile the emulated kernels")

OPS = tuple(EXPRESSIONS)
DTYPES = tuple(VECTOR_TYPES)
LENGTHS = (1, 3, 4, 1003, 1024, 2050)  # 1003 = 250 float4 + 3; 2050 = 512 float4 + 2 (1025 double2)

HARNESS = r"""
#include <fstream>
int main(int argc, char** argv) {
    const int variant = atoi(argv[1]);
    const long long n = atoll(argv[2]);
    const char* folder = argv[3];
    switch (variant) {
CASES
    default: return 2;
    }
    return 0;
}
"""


def _case(number: int, op: str, dtype: str) -> str:
    scalar, _vector, _width = VECTOR_TYPES[dtype]
    inputs, output, _expression = EXPRESSIONS[op]
    reads = "\n".join(
        f'        std::vector<{scalar}> {name}(n); {{ std::ifstream f(std::string(folder) + "/{name}.bin", std::ios::binary); '
        f"f.read(reinterpret_cast<char*>({name}.data()), n * sizeof({scalar})); }}"
        for name in inputs
    )
    arguments = ", ".join([*(f"{name}.data()" for name in inputs), f"{output}.data()", f"({scalar}){STREAM_SCALAR}", "n"])
    blocks = f"(int)((n / {VECTOR_TYPES[dtype][2]} + 1 + {THREADS_PER_BLOCK - 1}) / {THREADS_PER_BLOCK})"
    return f"""    case {number}: {{
{reads}
        std::vector<{scalar}> {output}(n, ({scalar})-7);
        launch({{{blocks}, 1, 1}}, {{{THREADS_PER_BLOCK}, 1, 1}}, [&] {{ k{number}::{kernel_name(op)}({arguments}); }});
        std::ofstream f(std::string(folder) + "/out.bin", std::ios::binary);
        f.write(reinterpret_cast<const char*>({output}.data()), n * sizeof({scalar}));
        break;
    }}"""


VARIANTS = [(op, dtype) for op in OPS for dtype in DTYPES]


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parts = ["#include <string>", EMULATION]
    cases = []
    for number, (op, dtype) in enumerate(VARIANTS):
        parts += [f"namespace k{number} {{", vectorized_source(op, dtype).replace('extern "C"', ""), "}"]
        cases.append(_case(number, op, dtype))
    tmp = tmp_path_factory.mktemp("stream_raw")
    program = tmp / "kernels.cpp"
    program.write_text("\n".join(parts) + HARNESS.replace("CASES", "\n".join(cases)))
    binary = tmp / "kernels"
    subprocess.run([COMPILER, "-std=c++20", "-O1", "-pthread", "-o", str(binary), str(program)],
                   check=True, capture_output=True, timeout=300)
    return binary


def run(binary: Path, folder: Path, op: str, dtype: str, n: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    kind = np.float32 if dtype == "fp32" else np.float64
    rng = np.random.default_rng(n)
    inputs = {name: rng.uniform(-1, 1, n).astype(kind) for name in EXPRESSIONS[op][0]}
    for name, values in inputs.items():
        values.tofile(folder / f"{name}.bin")
    variant = VARIANTS.index((op, dtype))
    subprocess.run([str(binary), str(variant), str(n), str(folder)], check=True, capture_output=True, timeout=120)
    return np.fromfile(folder / "out.bin", dtype=kind), inputs


def expected(op: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    q = inputs[next(iter(inputs))].dtype.type(STREAM_SCALAR)
    if op == "copy":
        return inputs["a"].copy()
    if op == "scale":
        return q * inputs["c"]
    if op == "add":
        return inputs["a"] + inputs["b"]
    return inputs["b"] + q * inputs["c"]


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize(("op", "dtype"), VARIANTS, ids=[f"{op}-{dtype}" for op, dtype in VARIANTS])
def test_the_vectorized_kernel_matches_numpy(emulated: Path, tmp_path: Path, op: str, dtype: str, n: int) -> None:
    out, inputs = run(emulated, tmp_path, op, dtype, n)
    # every element written, the tail included (the output starts at −7, which no result here can be)
    assert out.shape == (n,)
    np.testing.assert_allclose(out, expected(op, inputs), rtol=2 * np.finfo(out.dtype).eps, atol=0)


def test_the_launch_covers_the_tail() -> None:
    # 1,003 fp32: 250 whole float4 and a tail of 3: 251 threads, one block of 256
    assert grid_for(1003, "fp32") == 1
    # 2^24 fp32: 4,194,304 float4 + 1 (idle) tail thread = 16,385 blocks of 256
    assert grid_for(2**24, "fp32") == 16_385


def test_a_broken_tail_is_caught(tmp_path: Path) -> None:
    # the emulation must see a kernel that leaves the tail unwritten
    source = vectorized_source("add", "fp32").replace("} else if (i == vectors) {", "} else if (false) {")
    program = tmp_path / "broken.cpp"
    body = _case(0, "add", "fp32").replace("k0::", "kb::")
    program.write_text("\n".join(["#include <string>", EMULATION, "namespace kb {", source.replace('extern "C"', ""), "}"])
                       + HARNESS.replace("CASES", body))
    binary = tmp_path / "broken"
    subprocess.run([COMPILER, "-std=c++20", "-O1", "-pthread", "-o", str(binary), str(program)], check=True, capture_output=True, timeout=300)
    rng = np.random.default_rng(0)
    for name in ("a", "b"):
        rng.uniform(-1, 1, 1003).astype(np.float32).tofile(tmp_path / f"{name}.bin")
    subprocess.run([str(binary), "0", "1003", str(tmp_path)], check=True, capture_output=True, timeout=120)
    out = np.fromfile(tmp_path / "out.bin", dtype=np.float32)
    assert (out[-3:] == -7).all() and (out[:-3] != -7).all()
