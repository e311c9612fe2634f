"""Measured links and interfaces: the CPU stand-in for real, what calibration stores, and the CuPy paths on a GPU.

On the CPU: the host-link stand-in copy gives a positive, finite rate from at
least 30 samples; the last-level cache and the stand-in are stored as `l2`
and `host`; measured `host`, `l2` and link rates replace the catalogue's
figures in `Device.rate` and in a collective's bound; the session keeps them.
The CuPy paths (host ↔ device copies, the L2 kernel, peer copies, NCCL) are
`gpu`-marked; the two-GPU ones also skip with fewer than two GPUs.
"""

from __future__ import annotations

import importlib
import json
import math

import pytest

from workbench.model.analysis import analyze
from workbench.model.devices import BANDWIDTH, MEASURED, find_device
from workbench.model.devices.links import is_byte_rate, known_rate_key, link_in_use, find_link
from workbench.model.devices.rate_titles import rate_title, reference_rate
from workbench.measure.caches import l2_working_set
from workbench.measure.calibrate import CalibrationResult, calibrate, transfer_rates, _hierarchy_notes
from workbench.measure.errors import MeasurementError
from workbench.measure.transfers import (
    COLLECTIVE,
    CPU_STAND_IN_LABEL,
    HOST_DEVICE,
    Cancelled,
    TransferMeasurement,
    gpu_count,
    measure_cpu_host_copy,
)
from workbench.documents.session import Session, SessionError, dumps, loads

TODAY = "2026-11-30"


def _transfer(key: str, kind: str, nbytes: int, median_s: float, **extra: object) -> TransferMeasurement:
    samples = tuple([median_s * 0.99] * 14 + [median_s] * 2 + [median_s * 1.01] * 14)  # median: median_s
    return TransferMeasurement(
        key=key, kind=kind, label=key, bytes_per_call=nbytes, samples_s=samples, timer="t", method="m", device="d", **extra
    )


# ------------------------------------------------------------------ the CPU stand-in, for real


def test_the_cpu_stand_in_copy_gives_a_positive_finite_rate_from_its_samples() -> None:
    measurement = measure_cpu_host_copy(4 * 2**20, iterations=30)
    assert len(measurement.samples_s) == 30 and all(s > 0 for s in measurement.samples_s)
    assert math.isfinite(measurement.rate) and measurement.rate > 0
    # Bytes counted once: the rate is the buffer over the median, nothing doubled.
    assert measurement.rate == pytest.approx(4 * 2**20 / measurement.median_s)
    assert measurement.label == CPU_STAND_IN_LABEL and "CPU stand-in" in measurement.description()
    again = TransferMeasurement.from_dict(json.loads(json.dumps(measurement.to_dict())))
    assert again == measurement


def test_the_stand_in_refuses_too_few_iterations_and_stops_when_cancelled() -> None:
    with pytest.raises(MeasurementError, match="at least 30"):
        measure_cpu_host_copy(2**20, iterations=29)
    calls = []

    def stop_after_the_warm_up() -> bool:
        calls.append(1)
        return len(calls) > 5

    with pytest.raises(Cancelled):
        measure_cpu_host_copy(2**20, iterations=30, should_stop=stop_after_the_warm_up)


@pytest.mark.parametrize(
    "broken",
    [
        {"samples_s": [0.001, -0.002]},
        {"samples_s": []},
        {"samples_s": [float("inf")]},
        {"bytes_per_call": "many"},
        {"key": None, "kind": None, "label": None, "bytes_per_call": None},
    ],
)
def test_a_malformed_transfer_in_a_calibration_file_is_refused(broken: dict[str, object]) -> None:
    data = _transfer("h2d-pinned", HOST_DEVICE, 2**20, 1e-4).to_dict()
    data.update(broken)
    if broken.get("key", 1) is None:
        del data["key"]
    with pytest.raises(MeasurementError, match="transfer measurement"):
        TransferMeasurement.from_dict(data)


# ------------------------------------------------------------------ calibration on the CPU stores them


def test_cpu_calibration_stores_the_stand_in_as_host_and_reports_the_cache_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    calibration = importlib.import_module("workbench.measure.calibrate")
    monkeypatch.setattr(calibration, "_last_level_cache", lambda: 8 * 2**20)  # a 2 MiB cache copy, whatever this CPU says
    result = calibrate("numpy", copy_bytes=8 * 2**20, link_bytes=4 * 2**20, matrix_size=64, dtypes=("fp32",))
    assert set(result.rates) == {BANDWIDTH, "fp32", "host"}  # no l2: the cache copy is not a CPU device rate
    assert all(rate.source == MEASURED and rate.value > 0 for rate in result.rates.values())
    cache, stand_in = result.transfers
    assert result.rates["host"].value == stand_in.rate
    assert result.rates["host"].citation.startswith("measured, CPU stand-in: numpy.copyto")
    cache_run = result.runs[1]  # planned right after the DRAM copy
    assert cache.key == "llc-copy" and "reported, not stored" in cache.label
    assert cache_run.params["n"] == 2**18 and cache.samples_s == cache_run.samples_s  # 8 MiB / 4 / 8 B
    assert cache.rate == pytest.approx(cache_run.bytes / cache_run.median_s)  # bytes read + written, like DRAM
    assert any("the DRAM rate" in note or "no faster than DRAM" in note for note in result.notes)
    device = result.apply(find_device("cpu-generic"))
    assert device.rate("host").source == MEASURED and device.rate("host").value == stand_in.rate
    again = CalibrationResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.transfers == result.transfers and again.rates == result.rates and again.notes == result.notes


def test_the_dram_copy_is_planned_far_larger_than_the_cache_and_the_cache_copy_inside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.measure.backends import NumpyBackend

    calibration = importlib.import_module("workbench.measure.calibrate")  # the module: `calibrate` is also a function

    monkeypatch.setattr(calibration, "_last_level_cache", lambda: 32 * 2**20)
    backend = NumpyBackend()
    run = calibration.CalibrationRun(backend, quick=True)
    steps = dict(run.plan(backend))
    # DRAM: at least 8 × 32 MiB = 256 MiB read + written → 2**25 fp32 elements each way (2 × 128 MiB).
    assert steps["memory bandwidth (copy, bytes read + written)"] == "copy(n=2**25, dtype=fp32)"
    # Cache: a quarter of 32 MiB = 8 MiB for source and destination → 2**20 fp32 elements.
    assert steps[calibration.LLC_LABEL] == "copy(n=2**20, dtype=fp32)"
    assert [label for label, _, _ in run.transfer_plan(backend)] == ["host link, CPU stand-in (NumPy buffer to NumPy buffer)"]
    assert calibration.LLC_LABEL not in dict(calibration.CalibrationRun(backend, interfaces=False).plan(backend))
    assert calibration.CalibrationRun(backend, links=False).transfer_plan(backend) == []
    monkeypatch.setattr(calibration, "_last_level_cache", lambda: None)  # not reported: no cache step, said nowhere wrong
    assert calibration.LLC_LABEL not in dict(calibration.CalibrationRun(backend).plan(backend))


def test_the_cache_is_held_against_the_memory_beyond_it() -> None:
    from workbench.model.devices import Rate

    dram = {BANDWIDTH: Rate(4e9, MEASURED)}
    (slow,) = _hierarchy_notes(dram, [_transfer("llc-copy", "cache", 2**20, 2**20 / 3e9)], gpu=False)
    assert "last-level cache copy" in slow and "no faster than DRAM" in slow
    (fast,) = _hierarchy_notes(dram, [_transfer("llc-copy", "cache", 2**20, 2**20 / 40e9)], gpu=False)
    assert "10.0× the DRAM rate" in fast
    (gpu,) = _hierarchy_notes({BANDWIDTH: Rate(3.35e12, MEASURED), "l2": Rate(8e12, MEASURED)}, [], gpu=True)
    assert gpu.startswith("L2 ran at 2.4× the HBM rate")


# ------------------------------------------------------------------ what is stored from the transfers


def test_host_is_the_faster_pinned_direction_and_the_link_rate_is_the_all_reduce_busbw() -> None:
    gib = 2**30
    transfers = [
        _transfer("h2d-pinned", HOST_DEVICE, gib, gib / 25e9),  # 25 GB/s
        _transfer("d2h-pinned", HOST_DEVICE, gib, gib / 26e9),  # 26 GB/s
        _transfer("h2d-pageable", HOST_DEVICE, gib, gib / 9e9),
        # 8 ranks, S = 2**28 B in 1 ms: algbw = 268.4 GB/s, busbw = algbw × 2·7/8 = 469.8 GB/s.
        _transfer("nccl-allreduce", COLLECTIVE, 2**28, 1e-3, bus_factor=1.75, ranks=8),
    ]
    rates, reasons = transfer_rates(transfers, find_device("h100-sxm"), TODAY)
    assert reasons == []
    assert rates["host"].value == pytest.approx(26e9) and rates["host"].source == MEASURED
    assert "device → host, pinned" in rates["host"].citation or "d2h-pinned" in rates["host"].citation
    assert "h2d-pageable" in rates["host"].citation  # the pageable figure is reported beside it
    assert set(rates) == {"host", "link:nvlink4"}
    assert rates["link:nvlink4"].value == pytest.approx(2**28 / 1e-3 * 1.75)
    assert transfers[3].algbw == pytest.approx(268.435456e9) and transfers[3].rate == pytest.approx(469.762048e9)
    _, reasons = transfer_rates(transfers, None, TODAY)
    assert len(reasons) == 1 and "not stored as a link rate" in reasons[0]


def test_a_measured_link_rate_replaces_the_catalogue_figure_in_a_collectives_bound() -> None:
    # 2 × 7/8 × 2**28 × 4 B = 1,879,048,192 B per rank; at a measured 300 GB/s busbw: 6.2635 ms (datasheet: 4.176 ms).
    device = find_device("h100-sxm")
    datasheet = analyze("allreduce(n=2**28, dtype=fp32, ranks=8)", device)
    measured = device.with_rate("link:nvlink4", 300e9, MEASURED, "measured: NCCL all-reduce busbw")
    a = analyze("allreduce(n=2**28, dtype=fp32, ranks=8)", measured)
    assert datasheet.bound_time == pytest.approx(1_879_048_192 / 450e9)
    assert a.bound_time == pytest.approx(1_879_048_192 / 300e9)
    assert a.link is not None and a.link.link.origin == MEASURED and a.link.busbw == pytest.approx(300e9)
    assert "measured" in a.derivation_text()
    # A link named in the declaration that was not measured keeps its catalogue figure.
    named = analyze("allreduce(n=2**28, dtype=fp32, ranks=8, link=ib_ndr)", measured)
    assert named.bound_time == pytest.approx(1_879_048_192 / 50e9)
    assert link_in_use(find_link("nvlink4"), None).per_direction == 450e9


def test_measured_host_and_l2_rates_are_the_rates_in_use() -> None:
    device = find_device("h100-sxm").with_rate("l2", 7.5e12, MEASURED, "measured: L2").with_rate("host", 53e9, MEASURED, "measured: pinned")
    assert device.rate("l2").value == 7.5e12 and device.rate("l2").source == MEASURED
    assert device.rate("host").value == 53e9
    assert device.rate(BANDWIDTH).value == 3.35e12  # the HBM figure is untouched
    assert device.without_override("l2").overrides.keys() == {"host"}
    # The analysis uses them as it uses a measured HBM bandwidth. add(n=2**24, fp32) moves 3 × 2**24 × 4 B =
    # 201,326,592 B across each interface under the compulsory model: over a measured L2 of 1 TB/s that is
    # 201.3 µs; resident=host sends the same bytes once over the host link: at a measured 20 GB/s, 10.07 ms.
    slow = find_device("h100-sxm").with_rate("l2", 1e12, MEASURED, "measured: L2").with_rate("host", 20e9, MEASURED, "m")
    terms = {t.name: t for t in analyze("add(n=2**24, dtype=fp32, resident=host)", slow).terms}
    assert terms["l2"].rate.source == MEASURED and terms["l2"].time_s == pytest.approx(201_326_592 / 1e12)
    assert terms["host"].rate.source == MEASURED and terms["host"].time_s == pytest.approx(201_326_592 / 20e9)


def test_a_session_keeps_measured_interface_and_link_rates_and_refuses_unknown_ones() -> None:
    from workbench.model.devices import Rate

    session = Session()
    session.device.key = "h100-sxm"
    session.device.overrides = {
        "l2": Rate(7.5e12, MEASURED, "measured: L2"),
        "host": Rate(53e9, MEASURED, "measured: pinned"),
        "link:nvlink4": Rate(380e9, MEASURED, "measured: busbw"),
    }
    again = loads(dumps(session))
    assert again.device.overrides == session.device.overrides
    data = json.loads(dumps(session))
    data["device"]["overrides"]["link:warp9"] = {"value": 1e9, "source": "measured"}
    with pytest.raises(SessionError, match="'link:warp9' is not a rate this app knows"):
        loads(json.dumps(data))
    assert known_rate_key("link:pcie5x8") and known_rate_key("smem") and not known_rate_key("link:")


def test_every_rate_key_has_one_title_and_one_reference() -> None:
    assert rate_title("link:nvlink4", gpu=True) == "NVLink 4 (H100/H200 SXM), per direction"
    assert rate_title("l2", gpu=True) == "L2 → SM (L1 / shared memory)"
    assert rate_title("l2", gpu=False).startswith("last-level cache")
    assert rate_title("host", gpu=False) == "host memory copy (CPU stand-in for the host link)"
    assert rate_title(BANDWIDTH, gpu=False) == "memory bandwidth (DRAM)"
    nvlink = reference_rate("link:nvlink4", None)
    assert nvlink is not None and nvlink.value == 450e9 and nvlink.source == "datasheet"
    assert reference_rate("link:pcie5x8", None).source == "derived"  # type: ignore[union-attr]
    assert all(is_byte_rate(key) for key in (BANDWIDTH, "l2", "host", "smem", "link:ib_ndr")) and not is_byte_rate("fp32")


def test_the_l2_working_set_is_a_quarter_of_the_l2() -> None:
    assert l2_working_set(50 * 2**20) == 12 * 2**20  # H100: 50 MiB / 4 = 12.5 MiB → 12 MiB
    assert l2_working_set(40 * 2**20) == 10 * 2**20  # A100
    assert l2_working_set(1 * 2**20) == 256 * 1024
    with pytest.raises(MeasurementError, match="too small"):
        l2_working_set(1024)


# ------------------------------------------------------------------ the CuPy paths (a GPU; two for some)


def _default_gpu_device():  # type: ignore[no-untyped-def]
    from workbench.measure.backends import select_backend
    from workbench.measure.run import default_device

    return default_device(select_backend("cupy"))


@pytest.mark.gpu
def test_host_device_copies_pinned_and_pageable_each_way() -> None:
    from workbench.model.devices.links import find_link
    from workbench.measure.transfers import measure_host_device

    results = measure_host_device(64 * 2**20, iterations=30)
    assert [t.key for t in results] == ["h2d-pinned", "d2h-pinned", "h2d-pageable", "d2h-pageable"]
    for transfer in results:
        assert len(transfer.samples_s) == 30 and transfer.rate > 1e9, transfer
    device = _default_gpu_device()
    if device is not None and device.host_link:
        link = find_link(device.host_link)
        for transfer in results:  # no copy beats the link it crosses
            assert transfer.rate <= 1.05 * link.per_direction, f"{transfer.label}: {transfer.rate:.3g} above {link.name}"


@pytest.mark.gpu
def test_the_l2_read_beats_the_hbm_datasheet_and_counts_what_it_reads() -> None:
    from workbench.measure.caches import measure_l2_read

    measurement = measure_l2_read(iterations=30)
    assert len(measurement.samples_s) == 30 and measurement.rate > 0
    device = _default_gpu_device()
    if device is not None and BANDWIDTH in device.peak:
        # A working set inside L2 is served faster than HBM can deliver (H100: L2 several TB/s, HBM 3.35 TB/s).
        assert measurement.rate > device.peak[BANDWIDTH].value, f"L2 {measurement.rate:.3g} B/s"


@pytest.mark.gpu
def test_gpu_calibration_stores_measured_l2_and_host_rates() -> None:
    result = calibrate("cupy", quick=True, dtypes=("fp32",))
    assert {"l2", "host", BANDWIDTH} <= set(result.rates), result.skipped
    keys = {t.key for t in result.transfers}
    assert {"l2-read", "h2d-pinned", "d2h-pinned", "h2d-pageable", "d2h-pageable"} <= keys
    assert result.rates["l2"].value > result.rates[BANDWIDTH].value  # L2 faster than HBM, both measured
    assert "faster pinned direction" in result.rates["host"].citation


needs_two_gpus = pytest.mark.skipif(gpu_count() < 2, reason="needs two or more GPUs (CuPy sees fewer)")


@pytest.mark.gpu
@needs_two_gpus
def test_peer_copies_each_way() -> None:
    from workbench.measure.transfers import measure_peer_copies

    results = measure_peer_copies(64 * 2**20, iterations=30)
    assert [t.key for t in results] == ["peer-0-1", "peer-1-0"]
    assert all(t.rate > 1e9 and len(t.samples_s) == 30 for t in results)


@pytest.mark.gpu
@needs_two_gpus
def test_nccl_all_reduce_busbw_stays_under_the_link_and_is_stored() -> None:
    from workbench.model.devices.links import device_link
    from workbench.measure.transfers import measure_collectives

    results = measure_collectives(64 * 2**20, iterations=30)
    ranks = gpu_count()
    allreduce = next(t for t in results if t.key == "nccl-allreduce")
    assert allreduce.ranks == ranks and allreduce.bus_factor == pytest.approx(2 * (ranks - 1) / ranks)
    assert allreduce.rate == pytest.approx(allreduce.algbw * allreduce.bus_factor)
    device = _default_gpu_device()
    if device is not None:
        link = device_link(device)
        assert allreduce.rate <= 1.05 * link.per_direction, f"busbw {allreduce.rate:.3g} above {link.name}"
        rates, _ = transfer_rates(results, device, TODAY)
        assert rates[f"link:{link.key}"].value == allreduce.rate


def test_bench_links_measures_the_cpu_rows_and_keeps_them_as_json(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_links.py"
    spec = importlib.util.spec_from_file_location("bench_links", script)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_links", bench)  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    from workbench.model.devices import host

    monkeypatch.setattr(host, "last_level_cache_bytes", lambda: 2 * 2**20)  # small copies: a quick test
    out = tmp_path / "links.json"
    assert bench.main(["--cpu-only", "--quick", "--json", str(out)]) == 0, out.read_text(encoding="utf-8")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["format"] == "perf-workbench-bench-links"
    stand_in = data["rows"][0]
    assert stand_in["check"].startswith("host-link stand-in copy") and stand_in["rate_byte_per_s"] > 0
    assert stand_in["samples"] >= 30 and "GB/s" in stand_in["measured"] and "GiB/s" in stand_in["measured"]
    cache = data["rows"][1]
    assert cache["check"].startswith("LLC copy (512 KiB) vs DRAM copy (32 MiB)") and cache["ratio"] > 0


# ------------------------------------------------------------------ the CuPy paths' logic, on a NumPy stand-in for CuPy
#
# No GPU here: a small fake of the CuPy calls the link code makes (arrays on the host, events on the host clock,
# NCCL's group semantics) runs each path's control flow and its checks. The figures it gives mean nothing;
# what it proves is that every call is made with the arguments CuPy takes and that a copy or a collective
# that moves the wrong bytes is refused. The real thing runs in the gpu-marked tests above.


class _FakeCupy:
    def __init__(self, gpus: int = 2, *, drop_uploads: bool = False, wrong_sum: bool = False, short_kernel: bool = False) -> None:
        import time
        import types

        import numpy

        fake = self
        self.by_pointer: dict[int, object] = {}
        self.group: list[tuple[str, int, int, int]] = []

        class Array(numpy.ndarray):
            def set(self, arr, stream=None):  # type: ignore[no-untyped-def]
                if not drop_uploads:
                    self[...] = arr

            def get(self, stream=None, out=None):  # type: ignore[no-untyped-def]
                out[...] = self
                return out

            @property
            def data(self):  # type: ignore[no-untyped-def]
                pointer = self.__array_interface__["data"][0]
                fake.by_pointer[pointer] = self
                return types.SimpleNamespace(ptr=pointer)

        def make(values):  # type: ignore[no-untyped-def]
            array = numpy.asarray(values).view(Array)
            array.data  # noqa: B018 - registers the pointer
            return array

        self.uint8, self.float32, self.float64, self.uint64, self.int32 = (
            numpy.uint8, numpy.float32, numpy.float64, numpy.uint64, numpy.int32,
        )
        self.empty = lambda n, dtype: make(numpy.zeros(n, dtype))
        self.zeros = lambda n, dtype: make(numpy.zeros(n, dtype))
        self.ones = lambda n, dtype: make(numpy.ones(n, dtype))
        self.full = lambda n, value, dtype: make(numpy.full(n, value, dtype))
        self.all = numpy.all
        self.asnumpy = numpy.asarray
        self.get_default_memory_pool = lambda: types.SimpleNamespace(free_all_blocks=lambda: None)

        class Event:
            def record(self, stream=None):  # type: ignore[no-untyped-def]
                self.at = time.perf_counter()
                time.sleep(1e-5)

            def synchronize(self) -> None:
                pass

        class Stream:
            ptr = 0

            def __init__(self, non_blocking: bool = False) -> None:
                pass

            def synchronize(self) -> None:
                pass

        class Device:
            def __init__(self, index: int = 0) -> None:
                self.id = index

            def __enter__(self):  # type: ignore[no-untyped-def]
                return self

            def __exit__(self, *exc: object) -> None:
                pass

        class CUDARuntimeError(RuntimeError):
            pass

        def memcpy_peer_async(dst, dst_device, src, src_device, size, stream):  # type: ignore[no-untyped-def]
            fake.by_pointer[dst][...] = fake.by_pointer[src]

        runtime = types.SimpleNamespace(
            getDeviceCount=lambda: gpus,
            getDevice=lambda: 0,
            getDeviceProperties=lambda index: {"name": b"Fake GPU", "l2CacheSize": 2**20, "multiProcessorCount": 4},
            deviceCanAccessPeer=lambda a, b: 1,
            deviceEnablePeerAccess=lambda other: None,
            memcpyPeerAsync=memcpy_peer_async,
            CUDARuntimeError=CUDARuntimeError,
        )

        class Communicator:
            def __init__(self, rank: int) -> None:
                self.rank = rank

            @staticmethod
            def initAll(devices):  # type: ignore[no-untyped-def]
                assert isinstance(devices, list)
                return [Communicator(rank) for rank in range(len(devices))]

            def allReduce(self, send, recv, count, datatype, op, stream):  # type: ignore[no-untyped-def]
                assert (datatype, op) == (7, 0)  # ncclFloat32, ncclSum
                fake.group.append(("allreduce", send, recv, count))

            def allGather(self, send, recv, count, datatype, stream):  # type: ignore[no-untyped-def]
                fake.group.append(("allgather", send, recv, count))

            def destroy(self) -> None:
                pass

        def group_end() -> None:
            calls, fake.group = fake.group, []
            for name, _send, recv, count in calls:
                if name == "allreduce":
                    total = sum(fake.by_pointer[s][:count] for _, s, _, _ in calls)
                    fake.by_pointer[recv][:count] = total + (1 if wrong_sum else 0)
                else:
                    fake.by_pointer[recv][:] = numpy.concatenate([fake.by_pointer[s][:count] for _, s, _, _ in calls])

        nccl = types.SimpleNamespace(NcclCommunicator=Communicator, groupStart=lambda: None, groupEnd=group_end, available=True)

        class RawKernel:
            def __init__(self, source: str, name: str) -> None:
                assert "__ldcg" in source and name == "l2_read"

            def __call__(self, grid, block, args, stream=None):  # type: ignore[no-untyped-def]
                data, n4, passes, sink = args
                sink[...] = 0
                sink[0] = int(n4) * 4 * int(passes) // (2 if short_kernel else 1)

        self.RawKernel = RawKernel
        self.cuda = types.ModuleType("cupy.cuda")
        self.cuda.Device, self.cuda.Stream, self.cuda.Event, self.cuda.runtime, self.cuda.nccl = Device, Stream, Event, runtime, nccl
        self.cuda.get_elapsed_time = lambda start, end: (end.at - start.at) * 1e3
        self.cuda.alloc_pinned_memory = lambda n: bytearray(n)


@pytest.fixture
def fake_cupy(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def install(**options: bool) -> _FakeCupy:
        import sys

        fake = _FakeCupy(**options)
        monkeypatch.setitem(sys.modules, "cupy", fake)
        monkeypatch.setitem(sys.modules, "cupy.cuda", fake.cuda)
        return fake

    return install


def test_host_device_copies_run_both_memories_both_ways_and_refuse_a_copy_that_moves_nothing(fake_cupy) -> None:  # type: ignore[no-untyped-def]
    from workbench.measure.transfers import measure_host_device

    fake_cupy()
    results = measure_host_device(1 << 20, iterations=30)
    assert [t.key for t in results] == ["h2d-pinned", "d2h-pinned", "h2d-pageable", "d2h-pageable"]
    assert all(len(t.samples_s) == 30 and t.rate > 0 and t.bytes_per_call == 1 << 20 for t in results)
    assert "alloc_pinned_memory" in results[0].method and "bounce buffer" in results[2].method
    fake_cupy(drop_uploads=True)
    with pytest.raises(MeasurementError, match="did not round-trip"):
        measure_host_device(1 << 20, iterations=30)


def test_peer_copies_and_nccl_run_their_calls_and_check_what_arrived(fake_cupy) -> None:  # type: ignore[no-untyped-def]
    from workbench.measure.transfers import measure_collectives, measure_peer_copies

    fake_cupy()
    peers = measure_peer_copies(1 << 20, iterations=30)
    assert [t.label for t in peers] == ["GPU 0 → GPU 1, peer copy", "GPU 1 → GPU 0, peer copy"]
    allreduce, allgather = measure_collectives(1 << 20, iterations=30)
    # 2 ranks: all-reduce busbw = algbw × 2·1/2; all-gather busbw = algbw × 1/2.
    assert (allreduce.key, allreduce.bus_factor, allreduce.ranks) == ("nccl-allreduce", 1.0, 2)
    assert (allgather.key, allgather.bus_factor) == ("nccl-allgather", 0.5)
    assert allgather.rate == pytest.approx(allgather.algbw / 2) and allreduce.bytes_per_call == 1 << 20
    fake_cupy(wrong_sum=True)
    with pytest.raises(MeasurementError, match="NCCL allreduce gave the wrong values"):
        measure_collectives(1 << 20, iterations=30)
    fake_cupy(gpus=1)
    from workbench.measure.errors import UnsupportedMeasurement

    with pytest.raises(UnsupportedMeasurement, match="two GPUs"):
        measure_peer_copies(1 << 20, iterations=30)


def test_the_l2_kernel_counts_working_set_times_passes_and_refuses_one_that_read_less(fake_cupy) -> None:  # type: ignore[no-untyped-def]
    from workbench.measure.caches import measure_l2_read

    fake_cupy()
    measurement = measure_l2_read(iterations=30, passes=8)
    assert measurement.bytes_per_call == 256 * 1024 * 8  # a quarter of the fake's 1 MiB L2, 8 passes
    assert measurement.key == "l2-read" and len(measurement.samples_s) == 30
    fake_cupy(short_kernel=True)
    with pytest.raises(MeasurementError, match="the L2 kernel read"):
        measure_l2_read(iterations=30, passes=8)
