"""Measured links: host ↔ device copies, peer copies and NCCL collectives between GPUs, and a CPU stand-in.

The chapter's bound applies to "bytes transferred over a named network link"
too, and a bound is only as good as the rate it divides by. This module
measures the rates the catalogue can only quote:

- **host ↔ device** (one GPU): CuPy copies from host memory to the GPU and
  back, from pinned (page-locked, `cupy.cuda.alloc_pinned_memory`) and from
  pageable (plain NumPy) buffers, on a non-blocking stream, each call between
  two CUDA events. Pinned copies are DMA transfers over the link (PCIe or
  NVLink-C2C); pageable ones are staged by the driver through a pinned bounce
  buffer, so they run slower, and the gap is worth seeing.
- **peer copies** (two or more GPUs): `cudaMemcpyPeerAsync` from GPU 0 to GPU 1
  and back, with peer access enabled where `cudaDeviceCanAccessPeer` allows
  (NVLink or PCIe peer-to-peer); without it CUDA stages the copy through the
  host, and the label says so.
- **NCCL collectives** (two or more GPUs): all-reduce and all-gather through
  `cupy.cuda.nccl` in one process, one communicator per GPU
  (`NcclCommunicator.initAll`), each call grouped (`groupStart`/`groupEnd`)
  and timed by events on every GPU's stream (the call's time is the slowest
  GPU's). algbw and busbw as nccl-tests defines them: algbw = S / t with S the
  message size, busbw = algbw × the bus factor of ops/collectives.py
  (2(n−1)/n for all-reduce, (n−1)/n for all-gather), the figure a link's
  per-direction rate bounds.
- **CPU stand-in**: with no GPU, a copy between two NumPy buffers far larger
  than the last-level cache stands in for the host memory link. It is a
  different thing (DRAM to DRAM through the cores, not a link between chips),
  and every label that shows it says "CPU stand-in".

Every copy counts the bytes that cross once (a copy of N bytes moves N bytes
over the link), unlike the memory-bandwidth calibration, which counts a device
copy's bytes read plus bytes written. Each measurement is at least 30 timed
calls after warm-up; the figure is the median. A copy whose destination does
not hold the source's bytes afterwards fails (nothing is stored from it).

What is stored (calibrate.py): the faster pinned direction as the device's
`host` interface rate (a bound uses the rate the link sustains, as the
catalogue's per-direction figure does for both directions; both directions and
the pageable figures are in the citation and the report), the CPU stand-in as
the CPU device's `host` rate (labelled), and the all-reduce busbw as the rate
of the device's link between GPUs under `link:<key>` (devices/links.py).
Peer copies and all-gather are reported, not stored.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from workbench.measure.errors import MeasurementError, UnsupportedMeasurement
from workbench.records import from_plain, record, to_plain

MIN_TRANSFER_ITERATIONS = 30
_WARMUP_CALLS = 3

# Kinds of measurement, as the reports group them.
HOST_DEVICE = "host-device"
PEER = "peer"
COLLECTIVE = "collective"
STAND_IN = "cpu-stand-in"
CACHE = "cache"

CPU_STAND_IN_LABEL = "host memory copy (CPU stand-in for the host link: NumPy buffer to NumPy buffer)"

StopCheck = Callable[[], bool]


class Cancelled(Exception):
    """The user cancelled while a transfer was being timed."""


@dataclass(frozen=True)
class TransferMeasurement:
    """One measured transfer: what crossed where, how it was timed, the samples and the median rate.

    For a copy, `bytes_per_call` are the bytes that cross once per call and the
    rate is bytes_per_call / median. For a collective, `bytes_per_call` is the
    message size S as nccl-tests counts it; `rate` is busbw (algbw × bus
    factor), the figure a link's per-direction rate bounds, and `algbw` is S / median.
    """

    key: str  # "h2d-pinned", "d2h-pageable", "peer-0-1", "nccl-allreduce", "cpu-host-copy", "l2-read"
    kind: str  # HOST_DEVICE, PEER, COLLECTIVE, STAND_IN, CACHE
    label: str  # what the dialog, the panel and the CLI call it
    bytes_per_call: int
    samples_s: tuple[float, ...]
    timer: str
    method: str  # one sentence: how the bytes were moved and counted
    device: str  # where it ran ("GPU 0: NVIDIA H200", "CPU: …")
    bus_factor: float | None = None  # collectives: busbw / algbw
    ranks: int | None = None  # collectives: GPUs taking part

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)

    @property
    def algbw(self) -> float:
        """Bytes per call over the median time (for a copy, its rate; for a collective, nccl-tests' algbw)."""
        return self.bytes_per_call / self.median_s

    @property
    def rate(self) -> float:
        """The rate the bounds would use: bytes / median for a copy, busbw for a collective."""
        return self.algbw * (self.bus_factor if self.bus_factor is not None else 1.0)

    def description(self) -> str:
        """'how measured' in one line, for the citation of a stored rate and for the dialog."""
        prefix = "CPU stand-in: " if self.kind == STAND_IN else ""
        text = f"{prefix}{self.method}; median of {len(self.samples_s)} calls, {self.timer}, {self.device}"
        if self.bus_factor is not None:
            text += f"; busbw = algbw × {self.bus_factor:g} (nccl-tests)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> "TransferMeasurement":
        if not isinstance(data, Mapping):
            raise MeasurementError("a transfer measurement must be an object")
        try:
            return from_plain(data, cls)
        except (KeyError, TypeError, ValueError) as exc:
            raise MeasurementError(f"transfer measurement has a malformed field: {exc}") from None


def _transfer_samples(value: Any) -> tuple[float, ...]:
    samples = tuple(float(s) for s in value)
    if not samples or not all(s > 0 and s < float("inf") for s in samples):
        raise ValueError("samples_s must be positive, finite times")
    return samples


def _median_and_rate(transfer: TransferMeasurement) -> dict[str, float]:
    return {"median_s": transfer.median_s, "rate_byte_per_s": transfer.rate}


def _collective_rates(transfer: TransferMeasurement) -> dict[str, float]:
    if transfer.bus_factor is None:
        return {}
    return {"algbw_byte_per_s": transfer.algbw, "busbw_byte_per_s": transfer.rate}


# the median and the rates are written for a reader of the file (and read back from the samples, never from them);
# bus factor and ranks only for a collective
record(
    TransferMeasurement,
    omit_default=("bus_factor", "ranks"),
    missing={"timer": "", "method": "", "device": ""},
    load={"samples_s": _transfer_samples},
    after={"samples_s": _median_and_rate, "device": _collective_rates},
)


def _check_iterations(iterations: int) -> int:
    if iterations < MIN_TRANSFER_ITERATIONS:
        raise MeasurementError(f"a transfer needs at least {MIN_TRANSFER_ITERATIONS} timed calls; got {iterations}")
    return iterations


def _stop(should_stop: StopCheck | None) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled()


# ---------------------------------------------------------------- the CPU stand-in


def measure_cpu_host_copy(nbytes: int, iterations: int = MIN_TRANSFER_ITERATIONS, should_stop: StopCheck | None = None) -> TransferMeasurement:
    """Time numpy.copyto between two `nbytes` buffers: the CPU stand-in for the host memory link."""
    import numpy

    from workbench.model.devices import host

    _check_iterations(iterations)
    if nbytes < 4096:
        raise MeasurementError(f"the stand-in copy needs at least 4096 bytes; got {nbytes}")
    source = _pattern(numpy, nbytes)
    destination = numpy.zeros_like(source)
    for _ in range(_WARMUP_CALLS):
        _stop(should_stop)
        numpy.copyto(destination, source)
    if not numpy.array_equal(destination, source):
        raise MeasurementError("the stand-in copy did not copy (destination differs from source)")
    clock = time.perf_counter_ns
    samples = []
    for _ in range(iterations):
        _stop(should_stop)
        start = clock()
        numpy.copyto(destination, source)
        samples.append((clock() - start) * 1e-9)
    cache = host.last_level_cache_bytes()
    size = _size_words(nbytes)
    if cache and nbytes >= 2 * cache:
        versus = f" ({nbytes / cache:.0f}× the {_size_words(cache)} last-level cache, so from DRAM)"
    elif cache:
        versus = f" (not larger than twice the {_size_words(cache)} last-level cache: partly a cache figure)"
    else:
        versus = ""
    return TransferMeasurement(
        key="cpu-host-copy",
        kind=STAND_IN,
        label=CPU_STAND_IN_LABEL,
        bytes_per_call=nbytes,
        samples_s=tuple(samples),
        timer="time.perf_counter_ns() around each call",
        method=f"numpy.copyto of a {size} buffer into another{versus}, bytes counted once (as a link copy counts them), one thread",
        device=f"CPU: {host.cpu_model()}",
    )


def _pattern(numpy: Any, nbytes: int) -> Any:
    """`nbytes` bytes cycling through 0…250: a copy that moved nothing, or moved the wrong bytes, shows."""
    return numpy.resize(numpy.arange(251, dtype=numpy.uint8), nbytes)


def _size_words(nbytes: int) -> str:
    from workbench.model.units import format_bytes

    return format_bytes(nbytes, True)


# ---------------------------------------------------------------- CuPy helpers


def _cupy() -> Any:
    try:
        import cupy
    except Exception as exc:  # no CuPy, or it cannot load its CUDA libraries
        raise UnsupportedMeasurement(f"CuPy is not usable here ({type(exc).__name__}: {exc})") from None
    return cupy


def gpu_count() -> int:
    """How many CUDA devices CuPy sees (0 without CuPy or a driver)."""
    try:
        cupy = _cupy()
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def _gpu_name(cupy: Any, index: int) -> str:
    name = cupy.cuda.runtime.getDeviceProperties(index).get("name", b"")
    return f"GPU {index}: {name.decode() if isinstance(name, bytes) else name}"


_EVENT_TIMER = "CUDA events on a non-blocking stream around each call (cupy.cuda.get_elapsed_time, ms → s)"


def time_on_stream(
    cupy: Any,
    stream: Any,
    call: Callable[[], None],
    iterations: int,
    should_stop: StopCheck | None,
    *,
    warmup: int = _WARMUP_CALLS,
    one_at_a_time: bool = True,
) -> list[float]:
    """Warm up with `warmup` calls, then time each call between two events recorded on `stream`; seconds per call.

    `one_at_a_time` waits for each call before queueing the next: copies need it (queued copies would overlap
    their host-side staging); kernels that only read device memory may be queued back to back."""
    for _ in range(warmup):
        _stop(should_stop)
        call()
    stream.synchronize()
    starts = [cupy.cuda.Event() for _ in range(iterations)]
    ends = [cupy.cuda.Event() for _ in range(iterations)]
    for start, end in zip(starts, ends):
        _stop(should_stop)
        start.record(stream)
        call()
        end.record(stream)
        if one_at_a_time:
            end.synchronize()
    ends[-1].synchronize()
    return [cupy.cuda.get_elapsed_time(start, end) * 1e-3 for start, end in zip(starts, ends)]


def _same_bytes(numpy: Any, left: Any, right: Any) -> bool:
    """Spot check of two host buffers: every 4093rd byte and the last one."""
    return bool(numpy.array_equal(left[::4093], right[::4093])) and int(left[-1]) == int(right[-1])


# ---------------------------------------------------------------- host ↔ device


def measure_host_device(
    nbytes: int,
    iterations: int = MIN_TRANSFER_ITERATIONS,
    device_index: int = 0,
    should_stop: StopCheck | None = None,
) -> list[TransferMeasurement]:
    """Host → device and device → host copies of `nbytes`, from pinned and from pageable host memory."""
    import numpy

    cupy = _cupy()
    _check_iterations(iterations)
    where = _gpu_name(cupy, device_index)
    results: list[TransferMeasurement] = []
    with cupy.cuda.Device(device_index):
        stream = cupy.cuda.Stream(non_blocking=True)
        on_device = cupy.empty(nbytes, dtype=cupy.uint8)
        pinned_memory = [cupy.cuda.alloc_pinned_memory(nbytes) for _ in range(2)]
        pinned = [numpy.frombuffer(memory, dtype=numpy.uint8, count=nbytes) for memory in pinned_memory]
        pageable = [numpy.empty(nbytes, dtype=numpy.uint8) for _ in range(2)]
        pattern = _pattern(numpy, nbytes)
        size = _size_words(nbytes)
        for memory_kind, (source, back) in (("pinned", pinned), ("pageable", pageable)):
            source[:] = pattern
            back[:] = 0

            def upload(source: Any = source) -> None:
                on_device.set(source, stream=stream)

            def download(back: Any = back) -> None:
                on_device.get(stream=stream, out=back)

            up = time_on_stream(cupy, stream, upload, iterations, should_stop)
            down = time_on_stream(cupy, stream, download, iterations, should_stop)
            stream.synchronize()
            if not _same_bytes(numpy, back, pattern):
                raise MeasurementError(f"the {memory_kind} copies did not round-trip the bytes on {where}")
            how = (
                "page-locked buffer (cupy.cuda.alloc_pinned_memory): a DMA transfer over the link"
                if memory_kind == "pinned"
                else "pageable NumPy buffer: the driver stages it through a pinned bounce buffer"
            )
            for key, label, direction, samples, call in (
                (f"h2d-{memory_kind}", f"host → device, {memory_kind}", "ndarray.set", up, "host → device"),
                (f"d2h-{memory_kind}", f"device → host, {memory_kind}", "ndarray.get(out=…)", down, "device → host"),
            ):
                results.append(
                    TransferMeasurement(
                        key=key,
                        kind=HOST_DEVICE,
                        label=label,
                        bytes_per_call=nbytes,
                        samples_s=tuple(samples),
                        timer=_EVENT_TIMER,
                        method=f"{call} copy of {size} with {direction}(stream=…) from a {how}, bytes counted once",
                        device=where,
                    )
                )
        del on_device
        cupy.get_default_memory_pool().free_all_blocks()
    return results


# ---------------------------------------------------------------- between GPUs


def measure_peer_copies(
    nbytes: int,
    iterations: int = MIN_TRANSFER_ITERATIONS,
    devices: tuple[int, int] = (0, 1),
    should_stop: StopCheck | None = None,
) -> list[TransferMeasurement]:
    """cudaMemcpyPeerAsync of `nbytes` from the first GPU to the second and back, peer access on where allowed."""
    cupy = _cupy()
    _check_iterations(iterations)
    if gpu_count() < 2:
        raise UnsupportedMeasurement("peer copies need two GPUs; CuPy sees fewer")
    runtime = cupy.cuda.runtime
    first, second = devices
    buffers: dict[int, Any] = {}
    streams: dict[int, Any] = {}
    peer_access: dict[int, bool] = {}
    for index, other in ((first, second), (second, first)):
        with cupy.cuda.Device(index):
            buffers[index] = cupy.full(nbytes, index + 7, dtype=cupy.uint8)
            streams[index] = cupy.cuda.Stream(non_blocking=True)
            peer_access[index] = bool(runtime.deviceCanAccessPeer(index, other))
            if peer_access[index]:
                try:
                    runtime.deviceEnablePeerAccess(other)
                except runtime.CUDARuntimeError as exc:  # already enabled by an earlier calibration
                    if "PeerAccessAlreadyEnabled" not in str(exc) and "already" not in str(exc).lower():
                        raise
    results = []
    size = _size_words(nbytes)
    for source, destination in ((first, second), (second, first)):
        with cupy.cuda.Device(source):
            stream = streams[source]

            def copy(source: int = source, destination: int = destination, stream: Any = stream) -> None:
                runtime.memcpyPeerAsync(
                    buffers[destination].data.ptr, destination, buffers[source].data.ptr, source, nbytes, stream.ptr
                )

            samples = time_on_stream(cupy, stream, copy, iterations, should_stop)
        with cupy.cuda.Device(destination):
            if int(buffers[destination][-1]) != source + 7:
                raise MeasurementError(f"the peer copy GPU {source} → GPU {destination} did not arrive")
            buffers[destination].fill(destination + 7)
        route = "peer access on (direct, NVLink or PCIe peer-to-peer)" if peer_access[source] else "no peer access: CUDA stages the copy through host memory"
        results.append(
            TransferMeasurement(
                key=f"peer-{source}-{destination}",
                kind=PEER,
                label=f"GPU {source} → GPU {destination}, peer copy",
                bytes_per_call=nbytes,
                samples_s=tuple(samples),
                timer=_EVENT_TIMER + f" of GPU {source}",
                method=f"cudaMemcpyPeerAsync of {size}, {route}, bytes counted once",
                device=f"{_gpu_name(cupy, source)} → {_gpu_name(cupy, destination)}",
            )
        )
    return results


_NCCL_FLOAT32, _NCCL_SUM = 7, 0  # ncclFloat32, ncclSum in nccl.h, for CuPy builds that do not export them


def _nccl() -> Any:
    cupy = _cupy()
    try:
        from cupy.cuda import nccl
    except Exception as exc:
        raise UnsupportedMeasurement(f"NCCL is not usable through CuPy here ({type(exc).__name__}: {exc})") from None
    if not getattr(nccl, "available", True):
        raise UnsupportedMeasurement("CuPy was built without NCCL (cupy.cuda.nccl.available is False)")
    return cupy, nccl


def measure_collectives(
    nbytes: int,
    iterations: int = MIN_TRANSFER_ITERATIONS,
    devices: Sequence[int] | None = None,
    collectives: Sequence[str] = ("allreduce", "allgather"),
    should_stop: StopCheck | None = None,
) -> list[TransferMeasurement]:
    """NCCL all-reduce / all-gather of an `nbytes` fp32 message over every GPU, with algbw and busbw.

    One process, one communicator per GPU (`NcclCommunicator.initAll`); each
    timed call issues every rank's collective between `groupStart()` and
    `groupEnd()`, with a start and an end event on each rank's stream; the
    call's time is the slowest rank's.
    """
    from workbench.model.ops.collectives import busbw_factor

    cupy, nccl = _nccl()
    _check_iterations(iterations)
    ranks = list(devices) if devices is not None else list(range(gpu_count()))
    if len(ranks) < 2:
        raise UnsupportedMeasurement("NCCL collectives need two GPUs; CuPy sees fewer")
    count = max(nbytes // 4 // len(ranks), 1) * len(ranks)  # fp32 elements, a whole shard per rank
    message = count * 4
    communicators = nccl.NcclCommunicator.initAll(ranks)
    sends: list[Any] = []
    receives: list[Any] = []
    streams: list[Any] = []
    results = []
    try:
        for index in ranks:
            with cupy.cuda.Device(index):
                sends.append(cupy.ones(count, dtype=cupy.float32))
                receives.append(cupy.zeros(count, dtype=cupy.float32))
                streams.append(cupy.cuda.Stream(non_blocking=True))
        shard = count // len(ranks)
        for name in collectives:
            call = _collective_call(nccl, name, communicators, sends, receives, streams, count, shard)
            samples = _time_grouped(cupy, ranks, streams, call, iterations, should_stop)
            _check_collective(cupy, name, ranks, receives)
            results.append(_collective_measurement(cupy, name, ranks, message, samples, float(busbw_factor(name, len(ranks)))))
    finally:
        for communicator in communicators:
            communicator.destroy()
    return results


def _collective_call(nccl: Any, name: str, communicators: Sequence[Any], sends: Sequence[Any], receives: Sequence[Any],
                     streams: Sequence[Any], count: int, shard: int) -> Callable[[], None]:
    """One timed call: every rank's collective `name` issued between groupStart() and groupEnd()."""
    float32 = getattr(nccl, "NCCL_FLOAT32", _NCCL_FLOAT32)
    add = getattr(nccl, "NCCL_SUM", _NCCL_SUM)

    def call() -> None:
        nccl.groupStart()
        for rank, communicator in enumerate(communicators):
            if name == "allreduce":
                communicator.allReduce(sends[rank].data.ptr, receives[rank].data.ptr, count, float32, add, streams[rank].ptr)
            elif name == "allgather":  # each rank contributes a shard; S is the gathered buffer
                communicator.allGather(sends[rank].data.ptr, receives[rank].data.ptr, shard, float32, streams[rank].ptr)
            else:
                raise MeasurementError(f"internal: no NCCL timing for '{name}'")
        nccl.groupEnd()

    return call


def _check_collective(cupy: Any, name: str, ranks: Sequence[int], receives: Sequence[Any]) -> None:
    """What arrived on the first GPU is the collective's result (ranks × 1 summed, or the ones gathered); every
    receive buffer is then cleared for the next collective."""
    with cupy.cuda.Device(ranks[0]):
        expected = float(len(ranks)) if name == "allreduce" else 1.0
        if not bool(cupy.all(receives[0] == expected)):
            raise MeasurementError(f"NCCL {name} gave the wrong values on GPU {ranks[0]}")
    for index, receive in zip(ranks, receives):
        with cupy.cuda.Device(index):
            receive.fill(0)


def _collective_measurement(cupy: Any, name: str, ranks: Sequence[int], message: int, samples: Sequence[float],
                            factor: float) -> TransferMeasurement:
    return TransferMeasurement(
        key=f"nccl-{name}",
        kind=COLLECTIVE,
        label=f"NCCL {'all-reduce' if name == 'allreduce' else 'all-gather'}, {len(ranks)} GPUs",
        bytes_per_call=message,
        samples_s=tuple(samples),
        timer="CUDA events on each GPU's stream; a call takes as long as its slowest GPU",
        method=(
            f"NCCL {name} of S = {_size_words(message)} fp32 in one process, one communicator per GPU "
            f"(NcclCommunicator.initAll), grouped calls; algbw = S / t"
        ),
        device=", ".join(_gpu_name(cupy, index) for index in ranks),
        bus_factor=factor,
        ranks=len(ranks),
    )


def _time_grouped(
    cupy: Any, ranks: Sequence[int], streams: Sequence[Any], call: Callable[[], None], iterations: int, should_stop: StopCheck | None
) -> list[float]:
    """Each call's time: the largest elapsed time between a start and an end event on any rank's stream."""

    def synchronize() -> None:
        for index, stream in zip(ranks, streams):
            with cupy.cuda.Device(index):
                stream.synchronize()

    for _ in range(_WARMUP_CALLS + 2):  # NCCL connects its channels on the first calls
        _stop(should_stop)
        call()
    synchronize()
    samples = []
    for _ in range(iterations):
        _stop(should_stop)
        events = []
        for index, stream in zip(ranks, streams):
            with cupy.cuda.Device(index):
                start = cupy.cuda.Event()
                start.record(stream)
                events.append((index, start))
        call()
        spans = []
        for (index, start), stream in zip(events, streams):
            with cupy.cuda.Device(index):
                end = cupy.cuda.Event()
                end.record(stream)
                end.synchronize()
                spans.append(cupy.cuda.get_elapsed_time(start, end) * 1e-3)
        samples.append(max(spans))
    return samples


__all__ = [
    "CACHE",
    "COLLECTIVE",
    "CPU_STAND_IN_LABEL",
    "Cancelled",
    "HOST_DEVICE",
    "MIN_TRANSFER_ITERATIONS",
    "PEER",
    "STAND_IN",
    "TransferMeasurement",
    "gpu_count",
    "measure_collectives",
    "measure_cpu_host_copy",
    "measure_host_device",
    "measure_peer_copies",
]
