"""The STREAM / BabelStream kernels: copy, scale, add, triad, and BLAS axpy.

Traffic weights follow STREAM: copy and scale read one array and write one;
add and triad read two and write one; axpy reads x and y and writes y.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from workbench.model.dtypes import dtype
from workbench.model.ops import register
from workbench.model.ops.base import FMA, OP, FlopTerm, KernelNames, OpSpec, Param, Tensor, Workload
from workbench.model.ops.names import count_text
from workbench.model.ops.paths import vector_path


def _params() -> tuple[Param, ...]:
    return (
        Param("n", "dim", doc="elements per array"),
        Param("dtype", "dtype", "fp32", doc="element type of every array"),
    )


def _vector(name: str, p: Mapping[str, Any], *, reads: int = 0, writes: int = 0) -> Tensor:
    return Tensor(name, (p["n"],), ("n",), dtype(p["dtype"]), reads=reads, writes=writes)


def _workload(p: Mapping[str, Any], tensors: list[Tensor], terms: list[FlopTerm], note: str) -> Workload:
    return Workload(
        tensors=tuple(tensors),
        terms=tuple(terms),
        path=vector_path(dtype(p["dtype"])),
        values={"n": p["n"]},
        notes=(note,),
    )


def copy(p: Mapping[str, Any]) -> Workload:
    """c = a: no arithmetic, one read and one write per element."""
    return _workload(p, [_vector("a", p, reads=1), _vector("c", p, writes=1)], [], "c[i] = a[i]")


def scale(p: Mapping[str, Any]) -> Workload:
    """b = q·c: one multiply per element."""
    return _workload(
        p,
        [_vector("c", p, reads=1), _vector("b", p, writes=1)],
        [FlopTerm("multiply", OP, p["n"], "n")],
        "b[i] = q·c[i], q a scalar",
    )


def add(p: Mapping[str, Any]) -> Workload:
    """c = a + b: one addition per element."""
    return _workload(
        p,
        [_vector("a", p, reads=1), _vector("b", p, reads=1), _vector("c", p, writes=1)],
        [FlopTerm("add", OP, p["n"], "n")],
        "c[i] = a[i] + b[i]",
    )


def triad(p: Mapping[str, Any]) -> Workload:
    """a = b + q·c: one fused multiply-add per element."""
    return _workload(
        p,
        [_vector("b", p, reads=1), _vector("c", p, reads=1), _vector("a", p, writes=1)],
        [FlopTerm("multiply-add", FMA, p["n"], "n")],
        "a[i] = b[i] + q·c[i], q a scalar",
    )


def axpy(p: Mapping[str, Any]) -> Workload:
    """y = α·x + y: one fused multiply-add per element; y is read and written."""
    return _workload(
        p,
        [_vector("x", p, reads=1), _vector("y", p, reads=1, writes=1)],
        [FlopTerm("multiply-add", FMA, p["n"], "n")],
        "y[i] = α·x[i] + y[i], α a scalar",
    )


def _namer(title: str) -> Callable[[Mapping[str, Any]], str]:
    def name(p: Mapping[str, Any]) -> str:
        return f"{title}, {count_text(p['n'])} {p['dtype']}"

    return name


# The automatic names' titles: "Vector add, 2^24 fp32".
_TITLES = {"copy": "Copy", "scale": "Scale", "add": "Vector add", "triad": "Triad", "axpy": "AXPY"}

# name, builder, summary, menu position, kernel class, words in profiled kernel names and their rank.
_STREAM_OPERATIONS = (
    ("copy", copy, "stream copy c = a (reads 1, writes 1)", 20, "CopyKernel", ("copy", "memcpy"), 80, "fp32"),
    ("scale", scale, "stream scale b = q·c (reads 1, writes 1)", 21, "ScaleKernel", ("scale", "mul_kernel", "mul_scalar"), 70, "fp64"),
    ("add", add, "vector add c = a + b (reads 2, writes 1)", 22, "AddKernel", ("vector_add", "vectoradd", "add_kernel", "add"), 90, "fp16"),
    ("triad", triad, "stream triad a = b + q·c (reads 2, writes 1)", 23, "TriadKernel", ("triad",), 60, "fp32"),
    ("axpy", axpy, "BLAS axpy y = α·x + y (reads 2, writes 1)", 24, "AxpyKernel", ("axpy",), 61, "fp32"),
)

for _name, _build, _summary, _position, _kernel, _words, _rank, _example_dtype in _STREAM_OPERATIONS:
    register(
        OpSpec(
            name=_name,
            namer=_namer(_TITLES[_name]),
            position=_position,
            kernel=f"workbench.measure.kernels.stream:{_kernel}",
            examples=(f"{_name}(n=4096, dtype={_example_dtype})",),
            kernel_names=KernelNames(_words, rank=_rank),
            summary=_summary,
            params=_params(),
            build=_build,
            # the measured kernel: CuPy's (impl=library, what compulsory measures too) or the lab's 16-byte RawKernel
            implementations=("compulsory", "library", "vectorized") if _name != "axpy" else ("compulsory",),
        )
    )
