"""Stream and elementwise kernels: the array library's launch and the lab's vectorized one, each byte moved once."""

from __future__ import annotations

from typing import Any

from workbench.model.implementations.base import (
    LIBRARY,
    LIBRARY_THREADS_PER_BLOCK,
    MODEL_INTERFACES,
    VECTORIZED,
    Case,
    KernelLaunch,
    PhysicalWork,
    ceil_div,
    count_text,
    whole,
)
from workbench.model.ops import Workload

# The lab's vectorized stream kernels: 256 threads a block, one 16-byte load (float4, double2) per array a thread.
VECTOR_THREADS_PER_BLOCK = 256
VECTOR_BYTES = 16


def _stream_kernels(case: Case) -> list[tuple[str, int, int]]:
    """The library's kernels for a stream operation: (what it computes, arrays read, arrays written) each.

    copy, scale, add and elementwise are one CuPy elementwise kernel; triad is two ufunc calls
    (multiply into a, then add b), as measure/kernels/stream.py runs it.
    """
    op = case.decl.op
    if op == "triad":
        return [("multiply a = q·c", 1, 1), ("add a = a + b", 2, 1)]
    inputs = {"copy": 1, "scale": 1, "add": 2}.get(op)
    if inputs is not None:
        return [(op, inputs, 1)]
    return [(op, whole(case.params["inputs"]), whole(case.params["outputs"]))]


def library_stream(case: Case) -> PhysicalWork:
    """The array library's kernels (CuPy elementwise): 128 threads a block, one element and one load per array a thread."""
    workload, n = case.workload, case.workload.values["n"]
    itemsize = tensor_itemsize(workload)
    kernels = _stream_kernels(case)
    launches = tuple(
        KernelLaunch(f"CuPy elementwise {what}", n, LIBRARY_THREADS_PER_BLOCK, itemsize, reads, n * itemsize * reads, n * itemsize * writes)
        for what, reads, writes in kernels
    )
    moved = sum((launch.bytes for launch in launches), 0)
    sentences = [
        f"the array library's own kernel{'s' if len(kernels) > 1 else ''} (CuPy elementwise, "
        f"{LIBRARY_THREADS_PER_BLOCK} threads a block), one element a thread: each thread issues one "
        f"{itemsize}-byte load per array it reads and waits for them before its store",
    ]
    if case.decl.op == "copy":
        sentences.append("for copy that is CuPy's generated elementwise loop (c = a); cupy.copyto of a contiguous array "
                         "is a cudaMemcpy instead, which impl=compulsory measures")
    if len(kernels) > 1:
        sentences.append(
            f"{len(kernels)} kernels ({'; '.join(what for what, _r, _w in kernels)}): the intermediate goes through HBM, "
            f"{count_text(moved)} B where the fused kernel's compulsory bytes are {count_text(workload.bytes)} B")
    return stream_work(case, LIBRARY, launches, moved, sentences)


def vectorized_stream(case: Case) -> PhysicalWork:
    """The lab's RawKernel: 16-byte loads and stores (4 fp32, 2 fp64, 8 fp16 a thread); the tail done element by element."""
    workload, n = case.workload, case.workload.values["n"]
    itemsize = tensor_itemsize(workload)
    per_thread = VECTOR_BYTES // itemsize
    what, reads, writes = case.decl.op, _VECTOR_READS[case.decl.op], 1
    threads = ceil_div(n, per_thread)
    launch = KernelLaunch(f"{VECTOR_BYTES}-byte-load RawKernel {what}", threads, VECTOR_THREADS_PER_BLOCK, VECTOR_BYTES, reads,
                          n * itemsize * reads, n * itemsize * writes)
    sentences = [
        f"one fused RawKernel, {VECTOR_THREADS_PER_BLOCK} threads a block; each thread loads "
        f"{per_thread} elements of each array it reads with one {VECTOR_BYTES}-byte load and stores {per_thread} "
        f"with one {VECTOR_BYTES}-byte store, so it holds {reads} × {VECTOR_BYTES} B in flight; when n is not a "
        f"multiple of {per_thread} the last thread does the tail element by element",
    ]
    return stream_work(case, VECTORIZED, (launch,), launch.bytes, sentences)


_VECTOR_READS = {"copy": 1, "scale": 1, "add": 2, "triad": 2}  # arrays each fused kernel reads (it writes one)


def tensor_itemsize(workload: Workload) -> int:
    return workload.tensors[0].dtype.bits // 8


_STREAMED_ONCE = (
    "every byte a kernel loads or stores crosses HBM → L2 → SM once (a stream has no reuse); "
    "the arithmetic is the logical arithmetic"
)


def stream_work(case: Case, name: str, launches: tuple[KernelLaunch, ...], moved: Any, sentences: list[str],
                 closing: str = _STREAMED_ONCE) -> PhysicalWork:
    """The physical work of library kernels that move each byte once: `moved` bytes across every interface."""
    workload = case.workload
    flop = workload.flop(case.convention)
    return PhysicalWork(
        implementation=name,
        logical_flop=flop,
        physical_flop=flop,
        logical_bytes=workload.bytes,
        bytes_by_interface={key: moved for key in MODEL_INTERFACES},
        assumptions=(*sentences, closing),
        launches=launches,
    )
