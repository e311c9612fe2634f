"""Reductions: the physical work of the array library's row sums."""

from __future__ import annotations

from typing import Any

from workbench.model.implementations.base import (
    LIBRARY,
    LIBRARY_THREADS_PER_BLOCK,
    Case,
    KernelLaunch,
    PhysicalWork,
    ceil_div,
    count_text,
    whole,
)
from workbench.model.implementations.stream import stream_work, tensor_itemsize

# What `cupy.sum(x, axis=1)` runs (CuPy's default accelerator on CUDA is CUB), as measure/kernels/reduction.py
# calls it: a row of x is one segment, one thread block a row.
# - Same-type sums (fp32, fp64): CUB's DeviceSegmentedReduce, tuning Policy600 (cub/device/dispatch/dispatch_reduce.cuh):
#   256 threads a block, 16 four-byte items a thread (8 eight-byte ones), read in vector loads of 4 items: 64 B a
#   thread in flight, as 4 loads of 16 B (16 loads of 4 B when a row does not start on a 16-byte boundary: the same 64 B).
# - 16-bit inputs summed in fp32 (`dtype=float32`, which CUB's device reduction refuses): CuPy's CUB block reduction
#   (cupy/_core/_cub_reduction.pyx): min(512, max(32, ⌈n/4⌉ rounded up to a power of two)) threads a block, 4 items
#   a thread loaded directly (4 loads of 2 B), then an elementwise copy of the fp32 sums into the 16-bit result.
SEGMENTED_THREADS = 256
SEGMENTED_BYTES_A_THREAD = 64  # 16 items × 4 B (Policy600's nominal 4-byte items)
SEGMENTED_LOAD = 16  # a vector load of 4 four-byte items
BLOCK_REDUCE_ITEMS = 4
BLOCK_REDUCE_MAX_THREADS = 512
WARP = 32


def _block_reduce_threads(n: Any) -> Any:
    """CuPy's CUB block size for a segment of n items: ⌈n/4⌉ up to a power of two, within 32 … 512."""
    per_thread = ceil_div(n, BLOCK_REDUCE_ITEMS)
    if isinstance(per_thread, int):
        size = 1 << max(per_thread - 1, 0).bit_length()
        return min(BLOCK_REDUCE_MAX_THREADS, max(WARP, size))
    import numpy as np

    size = np.exp2(np.ceil(np.log2(np.maximum(per_thread, 1))))
    return np.clip(size, WARP, BLOCK_REDUCE_MAX_THREADS)


def library_reduce(case: Case) -> PhysicalWork:
    """cupy.sum(x, axis=1): CUB's segmented reduction for same-type sums, CuPy's CUB block reduction for 16-bit ones."""
    workload = case.workload
    rows, n = workload.values["rows"], workload.values["n"]
    itemsize = tensor_itemsize(workload)
    x_bytes = rows * n * itemsize
    if itemsize >= 4:
        launches: tuple[KernelLaunch, ...] = (
            KernelLaunch("CUB segmented reduction", rows * SEGMENTED_THREADS, SEGMENTED_THREADS, SEGMENTED_LOAD,
                         SEGMENTED_BYTES_A_THREAD // SEGMENTED_LOAD, x_bytes, rows * itemsize),
        )
        sentences = [
            f"the array library's row sum (cupy.sum(x, axis=1), CUB's DeviceSegmentedReduce, tuning Policy600): one block "
            f"of {SEGMENTED_THREADS} threads a row, each thread loading {SEGMENTED_BYTES_A_THREAD} B of its row as "
            f"{SEGMENTED_BYTES_A_THREAD // SEGMENTED_LOAD} vector loads of {SEGMENTED_LOAD} B before it adds them "
            f"(16 loads of 4 B when a row does not start on a 16-byte boundary: the same {SEGMENTED_BYTES_A_THREAD} B in flight)",
        ]
    else:
        block = whole(_block_reduce_threads(n))
        wide = rows * 4  # the fp32 sums: written by the reduction, read by the copy
        launches = (
            KernelLaunch("CuPy CUB block reduction", rows * block, block, itemsize, BLOCK_REDUCE_ITEMS, x_bytes, wide),
            KernelLaunch("CuPy elementwise copy of the fp32 sums", rows, LIBRARY_THREADS_PER_BLOCK, 4, 1, wide, rows * itemsize),
        )
        sentences = [
            f"the array library's row sum of {itemsize * 8}-bit values accumulating in fp32 (cupy.sum(x, axis=1, "
            f"dtype=float32), which CUB's device reduction does not take): CuPy's CUB block reduction, one block a row of "
            f"⌈n/4⌉ threads rounded up to a power of two within {WARP} … {BLOCK_REDUCE_MAX_THREADS} ({count_text(block)} here), "
            f"each thread loading {BLOCK_REDUCE_ITEMS} items of {itemsize} B directly before it adds them; then an "
            "elementwise copy of the fp32 sums into the result",
        ]
    moved = sum((launch.bytes for launch in launches), 0)
    return stream_work(case, LIBRARY, launches, moved, sentences, closing=(
        "every byte crosses HBM → L2 → SM once (each value of x is added once); a block's threads beyond the row's "
        "items hold nothing in flight, which the model does not subtract (the bound stays a floor)"))
