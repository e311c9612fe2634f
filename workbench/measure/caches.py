"""L2 bandwidth on a GPU: a working set well inside L2, read over and over by a CuPy kernel.

The `l2` interface (L2 → the SMs) has no datasheet figure on most GPUs, so the
calibration measures it. The working set is a quarter of the L2 CUDA reports
(`cudaDevAttrL2CacheSize`), so it stays resident after the first pass (well
inside: A100 and H100 split L2 into two partitions that can each hold a copy
of a line, which halves the capacity an all-SM read can count on); a kernel
with a grid of a few blocks per SM reads it `passes` times per call with
`__ldcg` (cache-global loads: cached in L2, not in L1, so the SMs' L1 cannot
answer instead of L2), 16 bytes per load, and writes one float per thread so
the loads cannot be optimised away. Bytes counted: working set × passes (the
bytes that cross from L2 into the SMs). The sum of what the threads wrote is
checked against the bytes read (every element is 1.0), so a kernel that read
less than it claims fails.

The CPU counterpart — a copy inside the last-level cache against one far
larger than it — runs through the ordinary measurement protocol
(calibrate.py plans it as a `copy` declaration).
"""

from __future__ import annotations

from typing import Any

from workbench.measure.errors import MeasurementError
from workbench.measure.transfers import CACHE, MIN_TRANSFER_ITERATIONS, StopCheck, TransferMeasurement, _cupy, _gpu_name, _size_words, _stop, time_on_stream

_L2_READ_SOURCE = r"""
extern "C" __global__ void l2_read(const float4* __restrict__ data, unsigned long long n4, int passes,
                                   float* __restrict__ sink) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float total = 0.0f;
    for (int pass = 0; pass < passes; ++pass) {
        for (unsigned long long i = first; i < n4; i += stride) {
            const float4 v = __ldcg(data + i);
            total += (v.x + v.y) + (v.z + v.w);
        }
    }
    sink[first] = total;
}
"""

_THREADS = 256
_BLOCKS_PER_SM = 4
_TARGET_BYTES_PER_CALL = 32  # × the working set: about 0.1 ms per call on an H100


L2_FRACTION = 4  # the working set is this fraction of the L2


def l2_working_set(l2_bytes: int) -> int:
    """A quarter of the L2, rounded down to a 1 MiB multiple (16 bytes on small caches)."""
    if l2_bytes < 64 * 1024:
        raise MeasurementError(f"an L2 of {l2_bytes} B is too small to measure")
    share = l2_bytes // L2_FRACTION
    unit = 1024 * 1024 if share >= 4 * 1024 * 1024 else 16
    return share // unit * unit


def measure_l2_read(
    iterations: int = MIN_TRANSFER_ITERATIONS,
    device_index: int = 0,
    passes: int = _TARGET_BYTES_PER_CALL,
    should_stop: StopCheck | None = None,
) -> TransferMeasurement:
    """The L2 → SM read bandwidth of one GPU (a CuPy RawKernel; see the module text)."""
    cupy = _cupy()
    if iterations < MIN_TRANSFER_ITERATIONS:
        raise MeasurementError(f"the L2 measurement needs at least {MIN_TRANSFER_ITERATIONS} timed calls; got {iterations}")
    if passes < 2:
        raise MeasurementError("the L2 kernel must read its working set at least twice per call")
    with cupy.cuda.Device(device_index):
        props = cupy.cuda.runtime.getDeviceProperties(device_index)
        l2_bytes = int(props.get("l2CacheSize", 0))
        sms = int(props.get("multiProcessorCount", 0)) or 1
        working_set = l2_working_set(l2_bytes)
        n4 = working_set // 16
        data = cupy.ones(n4 * 4, dtype=cupy.float32)
        blocks = sms * _BLOCKS_PER_SM
        sink = cupy.zeros(blocks * _THREADS, dtype=cupy.float32)
        kernel = cupy.RawKernel(_L2_READ_SOURCE, "l2_read")
        stream = cupy.cuda.Stream(non_blocking=True)
        arguments: tuple[Any, ...] = (data, cupy.uint64(n4), cupy.int32(passes), sink)

        def call() -> None:
            kernel((blocks,), (_THREADS,), arguments, stream=stream)

        for _ in range(3):
            _stop(should_stop)
            call()
        stream.synchronize()
        read = float(cupy.asnumpy(sink.astype(cupy.float64).sum()))
        expected = float(n4 * 4 * passes)
        if read != expected:
            raise MeasurementError(f"the L2 kernel read {read:.0f} elements, not the {expected:.0f} it counts")
        # warmed up and checked above; kernels that only read may be queued back to back
        samples = tuple(time_on_stream(cupy, stream, call, iterations, should_stop, warmup=0, one_at_a_time=False))
        where = _gpu_name(cupy, device_index)
        del data, sink
        cupy.get_default_memory_pool().free_all_blocks()
    return TransferMeasurement(
        key="l2-read",
        kind=CACHE,
        label="L2 → SM read (working set inside L2)",
        bytes_per_call=working_set * passes,
        samples_s=samples,
        timer="CUDA events on a non-blocking stream around each call (cupy.cuda.get_elapsed_time, ms → s)",
        method=(
            f"a CuPy kernel reads a {_size_words(working_set)} working set (a quarter of the {_size_words(l2_bytes)} L2 CUDA reports) "
            f"{passes}× per call with __ldcg 16-byte loads (L2, not L1), {blocks} blocks × {_THREADS} threads; "
            f"bytes counted = working set × passes"
        ),
        device=where,
    )


__all__ = ["L2_FRACTION", "l2_working_set", "measure_l2_read"]
