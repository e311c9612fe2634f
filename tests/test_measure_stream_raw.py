"""impl=vectorized stream kernels: selected by impl=, refused on the CPU in one line; on a GPU checked and timed."""

from __future__ import annotations

import pytest

from workbench.model.declare import parse
from workbench.measure import OK, UnsupportedMeasurement, measure
from workbench.measure.backends import NumpyBackend
from workbench.measure.kernels import kernel_for
from workbench.measure.kernels.stream import AddKernel, CopyKernel, LibraryCopyKernel, ScaleKernel, TriadKernel
from workbench.measure.kernels.stream_raw import VECTORIZED, VectorizedAddKernel

FAST = {"iterations": 30, "warmup": 1}


@pytest.mark.parametrize(("op", "library"), [("copy", CopyKernel), ("scale", ScaleKernel), ("add", AddKernel), ("triad", TriadKernel)])
def test_impl_selects_the_kernel(op: str, library: type) -> None:
    assert library.for_declaration(parse(f"{op}(n=1000, dtype=fp32, impl=vectorized)")) is VECTORIZED[op]
    # the default for measuring stays the library kernel a user's code runs
    assert library.for_declaration(parse(f"{op}(n=1000, dtype=fp32)")) is library
    chosen = library.for_declaration(parse(f"{op}(n=1000, dtype=fp32, impl=library)"))
    # copy under impl=library: CuPy's elementwise loop (cupy.copyto is a cudaMemcpy, measured by default)
    assert chosen is (LibraryCopyKernel if op == "copy" else library)


def test_numpy_refuses_the_vectorized_kernel_in_one_line() -> None:
    with pytest.raises(UnsupportedMeasurement) as caught:
        measure("add(n=1003, dtype=fp32, impl=vectorized)", backend="numpy", **FAST)
    message = str(caught.value)
    assert "\n" not in message and "impl=vectorized is a CUDA RawKernel" in message and "only the model is shown" in message


@pytest.mark.parametrize("op", ["add", "copy"])
def test_numpy_measures_the_library_kernel(op: str) -> None:
    record = measure(f"{op}(n=1003, dtype=fp32, impl=library)", backend="numpy", **FAST)
    assert record.status == OK, record.message
    assert record.check is not None and record.check.passed


class StandInGpu(NumpyBackend):
    """A backend that says it is a GPU, for planning only: nothing is launched."""

    kind = "gpu"


def test_one_fused_kernel_counts_three_passes_for_triad() -> None:
    # the library triad is two ufunc calls: 5 passes of 1,000 × 4 B; the vectorized one reads b and c and writes a: 3
    library = kernel_for(parse("triad(n=1000, dtype=fp32)"), StandInGpu())
    vectorized = kernel_for(parse("triad(n=1000, dtype=fp32, impl=vectorized)"), StandInGpu())
    assert library.implied_traffic()[0] == 5 * 4_000 and vectorized.implied_traffic()[0] == 3 * 4_000
    assert type(kernel_for(parse("add(n=8, dtype=fp32, impl=vectorized)"), StandInGpu())) is VectorizedAddKernel
    with pytest.raises(UnsupportedMeasurement, match="fp32 .float4. and fp64 .double2."):
        kernel_for(parse("add(n=8, dtype=fp16, impl=vectorized)"), StandInGpu())


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["copy", "scale", "add", "triad"])
@pytest.mark.parametrize(("n", "dtype"), [(2**20 + 3, "fp32"), (1003, "fp32"), (2**20 + 1, "fp64"), (3, "fp32")])
def test_vectorized_kernels_pass_the_reference_check(op: str, n: int, dtype: str) -> None:
    record = measure(f"{op}(n={n}, dtype={dtype}, impl=vectorized)", backend="cupy", **FAST)
    assert record.status == OK, record.message
    assert record.check is not None and record.check.passed
    assert "RawKernel" in record.kernel.algorithm


@pytest.mark.gpu
def test_the_library_copy_is_the_elementwise_loop() -> None:
    record = measure("copy(n=2**20 + 3, dtype=fp32, impl=library)", backend="cupy", **FAST)
    assert record.status == OK, record.message
    assert record.check is not None and record.check.passed and "ElementwiseKernel" in record.kernel.algorithm


@pytest.mark.gpu
def test_the_vectorized_add_beats_the_library_add() -> None:
    times = {}
    for impl in ("library", "vectorized"):
        record = measure(f"add(n=2**26, dtype=fp32, impl={impl})", backend="cupy", **FAST)
        assert record.status == OK, record.message
        times[impl] = record.median_s
    assert times["vectorized"] < times["library"]
