"""The measurement engine on the NumPy backend, and the same runs marked `gpu` for CuPy.

Sizes are small so the file runs in seconds; each test asserts something a
user of the measurement tab or `workbench measure` would notice if it broke.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time

import numpy as np
import pytest

from workbench.model.analysis import analyze
from workbench.model.declare import parse
from workbench.model.devices.catalogue import BANDWIDTH, MEASURED, find_device
from workbench.measure.runs import FigureContext, record_run, run_figures
from workbench.measure import (
    CANCELLED,
    INVALID,
    OK,
    MeasurementError,
    MeasurementRun,
    MemoryRefused,
    PhaseChanged,
    RunFinished,
    RunRecord,
    RunStarted,
    SampleBatch,
    UnsupportedMeasurement,
    backend_status,
    measure,
    sweep_declarations,
)
from workbench.measure.calibrate import calibrate
from workbench.measure.backends import NumpyBackend
from workbench.measure.kernels import MeasuredKernel, kernel_class, kernel_for
from workbench.model.ops import REGISTRY
from workbench.model.ops.collectives import COLLECTIVES
from workbench.measure.kernels.stream import AddKernel, CopyKernel
from workbench.measure.run import prepared_kernel

BACKENDS = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]

# Every example declaration each operation registered (small; variants cover in-place, β, causal, groups, padding).
FAMILIES = [example for spec in REGISTRY.values() if spec.name not in COLLECTIVES for example in spec.examples]
FAST = {"iterations": 30, "warmup": 1}


# Collectives are the one exception, for now: they need several GPUs and NCCL (measured links are a later part
# of issue 13), and `measure` refuses them in one line (tests/test_collectives.py).
@pytest.mark.parametrize("op", [op for op in REGISTRY if op not in COLLECTIVES])
def test_every_operation_of_the_core_registers_a_kernel_and_its_own_examples(op: str) -> None:
    # A family added to the core without a kernel (or without an example to measure) would be unmeasurable.
    spec = REGISTRY[op]
    cls = kernel_class(op)
    assert cls is not None and issubclass(cls, MeasuredKernel), spec.kernel
    assert spec.examples and all(parse(text).op == op for text in spec.examples)


def test_a_kernel_reference_that_is_not_a_kernel_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = REGISTRY["copy"]
    monkeypatch.setitem(REGISTRY, "copy", dataclasses.replace(spec, kernel="workbench.measure.kernels.base:BufferSpec"))
    with pytest.raises(TypeError, match="not a MeasuredKernel class"):
        kernel_class("copy")
    monkeypatch.setitem(REGISTRY, "copy", dataclasses.replace(spec, kernel=""))
    with pytest.raises(UnsupportedMeasurement, match="no measured kernel for 'copy'"):
        measure_plan_of("copy(n=16, dtype=fp32)")


def measure_plan_of(text: str) -> MeasuredKernel:
    return kernel_for(parse(text), NumpyBackend())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("declaration", FAMILIES)
def test_every_kernel_family_runs_and_passes_its_reference_check(declaration: str, backend: str) -> None:
    record = measure(declaration, backend=backend, **FAST)
    assert record.status == OK, record.message
    assert record.check is not None and record.check.passed and record.check.sampled > 0
    assert record.check.checksum is not None and math.isfinite(record.check.checksum)
    assert len(record.samples_s) == 30 and all(s > 0 for s in record.samples_s)
    assert record.kernel.executed_path and record.kernel.algorithm
    # Achieved figures use the core's counts for the declared operation.
    workload = parse(declaration).workload()
    assert record.bytes == workload.bytes and record.flop == workload.flop("fma2")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wrong_kernel_is_caught_and_the_run_marked_invalid(backend: str) -> None:
    class SubtractingAdd(AddKernel):
        def __call__(self) -> None:
            self.xp.subtract(self.arrays["a"], self.arrays["b"], out=self.arrays["c"])

    record = measure("add(n=8192, dtype=fp32)", backend=backend, kernel_class=SubtractingAdd, **FAST)
    assert record.status == INVALID and not record.valid
    assert record.check is not None and not record.check.passed
    assert record.check.failures > 0 and "outside tolerance" in record.check.message
    assert record.message.startswith("invalid")


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_output_the_kernel_never_writes_fails_the_check(backend: str) -> None:
    class HalfCopy(CopyKernel):
        def __call__(self) -> None:
            half = self.n // 2
            self.xp.copyto(self.arrays["c"][:half], self.arrays["a"][:half])

    record = measure("copy(n=8192, dtype=fp32)", backend=backend, kernel_class=HalfCopy, **FAST)
    assert record.status == INVALID  # the unwritten half still holds the NaN the output was filled with


@pytest.mark.parametrize("backend", BACKENDS)
def test_samples_are_raw_and_median_and_bandwidth_follow_from_them(backend: str) -> None:
    record = measure("add(n=2**16, dtype=fp32)", backend=backend)  # default iterations
    samples = np.array(record.samples_s)
    assert samples.size == 50 >= 30
    stats = record.stats
    assert stats is not None
    assert stats.median_s == pytest.approx(float(np.median(samples)), rel=1e-12)
    assert stats.p10_s == pytest.approx(float(np.percentile(samples, 10)), rel=1e-12)
    assert stats.p90_s == pytest.approx(float(np.percentile(samples, 90)), rel=1e-12)
    assert stats.min_s == samples.min()
    compulsory = 3 * 2**16 * 4  # a and b read, c written, 4 B each
    assert record.bytes == compulsory
    figures = run_figures(record_run(record), FigureContext())
    assert figures.achieved_byte_per_s == pytest.approx(compulsory / np.median(samples), rel=1e-12)
    assert figures.achieved_flop_per_s == pytest.approx(2**16 / np.median(samples), rel=1e-12)
    stored = record.to_dict()  # the record keeps the samples, not figures derived from them
    assert "derived" not in stored and "median_s" not in stored and "achieved_bytes_per_s" not in stored


def test_fewer_than_thirty_iterations_are_refused() -> None:
    with pytest.raises(MeasurementError, match="at least 30"):
        MeasurementRun("add(n=1024)", backend="numpy", iterations=29)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_from_another_thread_lands_within_half_a_second(backend: str) -> None:
    run = MeasurementRun("add(n=2**18, dtype=fp32)", backend=backend, iterations=1_000_000)
    seen: dict[str, object] = {}

    def work() -> None:
        seen["record"] = run.run()
        seen["ended"] = time.perf_counter()

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.3)
    asked = time.perf_counter()
    run.cancel()
    worker.join(timeout=5)
    assert not worker.is_alive()
    record = seen["record"]
    assert isinstance(record, RunRecord)
    assert float(seen["ended"]) - asked < 2.0  # type: ignore[arg-type]  # target 0.5 s; 2 s tells it from running on under load
    assert record.status == CANCELLED and not record.valid
    assert 0 < len(record.samples_s) < 1_000_000  # the samples taken so far are kept
    assert record.check is not None and not record.check.passed
    json.dumps(record.to_dict())


def test_should_stop_callback_cancels_during_warm_up() -> None:
    calls = {"count": 0}

    def stop_after_a_few() -> bool:
        calls["count"] += 1
        return calls["count"] > 3

    record = measure("add(n=4096)", backend="numpy", should_stop=stop_after_a_few)
    assert record.status == CANCELLED and record.samples_s == ()


class _SpyBackend(NumpyBackend):
    """NumPy with a small, fixed amount of free memory, counting allocations."""

    def __init__(self, free: int) -> None:
        super().__init__()
        self.free = free
        self.allocations = 0

    def free_memory(self) -> tuple[int, str]:
        return self.free, "test figure"

    def empty(self, shape, dtype_name):  # type: ignore[no-untyped-def]
        self.allocations += 1
        return super().empty(shape, dtype_name)


def test_sizes_that_do_not_fit_are_refused_before_any_allocation() -> None:
    spy = _SpyBackend(free=10_000_000)
    # 3 × 2^22 × 4 B = 50 MB of vectors against 10 MB free.
    with pytest.raises(MemoryRefused, match="reduce the sizes") as caught:
        measure("add(n=2**22, dtype=fp32)", backend=spy)
    assert spy.allocations == 0
    assert "50.33 MB" in str(caught.value) and "10 MB free" in str(caught.value)


def test_sizes_larger_than_this_machine_are_refused_quickly() -> None:
    started = time.perf_counter()
    with pytest.raises(MemoryRefused):
        measure("gemm(M=2**20, N=2**20, K=2**20, dtype=fp32)", backend="numpy")
    assert time.perf_counter() - started < 1.0


def test_cold_mode_writes_the_flush_buffer_before_every_timed_iteration() -> None:
    class FlushCounting(NumpyBackend):
        flushes = 0

        def flush_bytes(self) -> int:
            return 1 << 20

        def make_flush(self, nbytes):  # type: ignore[no-untyped-def]
            inner = super().make_flush(nbytes)

            def counted() -> None:
                FlushCounting.flushes += 1
                inner()

            return counted

    record = measure("add(n=4096)", backend=FlushCounting(), mode="cold", iterations=30, warmup=2)
    assert record.status == OK and record.mode == "cold"
    assert FlushCounting.flushes == 30 + 1  # one per timed iteration, one to time the flush itself


def test_events_arrive_in_order_with_typed_sample_batches() -> None:
    events = list(MeasurementRun("add(n=4096)", backend="numpy", iterations=40, warmup=1).events())
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    phases = [e.phase for e in events if isinstance(e, PhaseChanged)]
    assert phases == ["allocate", "first call", "warm-up", "timing", "check"]
    batches = [e for e in events if isinstance(e, SampleBatch)]
    assert sum(len(b.samples_s) for b in batches) == 40 and batches[-1].progress == 1.0
    gathered = [s for b in batches for s in b.samples_s]
    assert tuple(gathered) == events[-1].record.samples_s


def test_a_run_object_runs_once() -> None:
    run = MeasurementRun("add(n=1024)", backend="numpy", iterations=30)
    run.run()
    with pytest.raises(MeasurementError, match="runs once"):
        run.run()


def test_record_round_trips_through_json_exactly() -> None:
    record = measure("gemm(M=16, N=16, K=16, dtype=fp32)", backend="numpy", **FAST)
    data = json.loads(json.dumps(record.to_dict()))
    again = RunRecord.from_dict(data)
    assert again == record
    assert again.provenance is not None and again.provenance.kind == "cpu" and again.provenance.catalogue_key == "host-cpu"  # this machine's CPU
    figures = run_figures(record_run(record), FigureContext())
    assert run_figures(record_run(again), FigureContext()) == figures


@pytest.mark.parametrize(
    "mangle, message",
    [
        (lambda d: {"format": "something-else"}, "not a measurement run record"),
        (lambda d: {k: v for k, v in d.items() if k != "samples_s"}, "missing 'samples_s'"),
        (lambda d: {**d, "status": "great"}, "status 'great'"),
        (lambda d: {**d, "samples_s": [0.1, "fast"]}, "malformed"),
        (lambda d: {**d, "version": 99}, "newer"),
    ],
)
def test_a_bad_run_record_is_refused_with_one_clear_message(mangle, message) -> None:  # type: ignore[no-untyped-def]
    data = measure("add(n=1024)", backend="numpy", **FAST).to_dict()
    with pytest.raises(MeasurementError, match=message):
        RunRecord.from_dict(mangle(data))


def test_the_record_keeps_conditions_sizes_and_versions() -> None:
    record = measure("add(n=4096, dtype=fp32)", backend="numpy", **FAST)
    assert record.params == {"n": 4096, "dtype": "fp32"}
    assert record.environment["numpy"] == np.__version__ and record.environment["backend"] == "numpy"
    assert "load_average_1m" in record.conditions_before and "load_average_1m" in record.conditions_after
    assert [b["name"] for b in record.kernel.buffers] == ["a", "b", "c"]
    assert record.timer.startswith("time.perf_counter_ns")


def test_fraction_of_the_bound_uses_the_device_analysis() -> None:
    device = find_device("cpu-generic")
    record = measure("add(n=2**16, dtype=fp32)", backend="numpy", device=device, **FAST)
    bound = analyze("add(n=2**16, dtype=fp32)", device=device).bound_time
    assert record.bound is not None and record.bound.bound_time_s == pytest.approx(bound)
    assert record.provenance is not None and record.provenance.matched_by == "--device"
    figures = run_figures(record_run(record), FigureContext())
    assert figures.fraction_of_bound == pytest.approx(bound / record.median_s)


def test_a_device_of_the_wrong_kind_is_refused_before_anything_runs() -> None:
    with pytest.raises(MeasurementError, match="is a GPU, but numpy runs on the CPU"):
        measure("add(n=1024, dtype=fp32)", backend="numpy", device=find_device("h100-sxm"), **FAST)


def test_implied_traffic_states_the_extra_passes_of_multi_call_kernels() -> None:
    triad = measure("triad(n=4096, dtype=fp32)", backend="numpy", **FAST)
    assert triad.bytes == 3 * 4096 * 4 and triad.kernel.implied_bytes == 5 * 4096 * 4
    attention = measure("attention(B=1, H=1, Sq=16, Skv=16, D=8, dtype=fp32)", backend="numpy", **FAST)
    assert any("declared fused, measured unfused" in note for note in attention.kernel.notes)
    assert attention.kernel.implied_bytes > attention.bytes
    conv = measure("conv2d(N=1, C=2, H=6, W=6, K=2, R=3, S=3, dtype=fp32)", backend="numpy", **FAST)
    assert conv.kernel.algorithm.startswith("im2col")


@pytest.mark.parametrize(
    "declaration, fragment",
    [
        ("add(n=1024, dtype=bf16)", "NumPy has no bf16"),
        ("copy(n=1024, dtype=fp8)", "fp8_e4m3"),
        ("add(n=1024, dtype=int8)", "integer kernels"),
        ("gemm(M=8, N=8, K=8, a=fp16, b=fp16, c=fp32)", "mixed operand types"),
        ("gemm(M=8, N=8, K=8, dtype=fp16, acc=fp16)", "acc=fp16"),
    ],
)
def test_what_numpy_cannot_run_is_refused_in_one_line(declaration: str, fragment: str) -> None:
    with pytest.raises(UnsupportedMeasurement, match=fragment) as caught:
        measure(declaration, backend="numpy")
    assert "\n" not in str(caught.value)


def test_cupy_absence_is_a_normal_state() -> None:
    statuses = {status.name: status for status in backend_status()}
    assert statuses["numpy"].available
    if not statuses["cupy"].available:
        with pytest.raises(MeasurementError, match="--backend numpy"):
            measure("add(n=1024)", backend="cupy")
        assert measure("add(n=1024)", backend="auto", **FAST).backend == "numpy"


def test_size_sweep_declarations() -> None:
    declarations = sweep_declarations("add(n=1024, dtype=fp16)", "n", [2**k for k in range(10, 13)])
    assert [str(d) for d in declarations] == ["add(n=1024, dtype=fp16)", "add(n=2048, dtype=fp16)", "add(n=4096, dtype=fp16)"]


def test_calibration_gives_measured_rates_that_the_bounds_then_use() -> None:
    # The interfaces and the host-link stand-in have their own tests (test_measured_links.py).
    result = calibrate("numpy", copy_bytes=8 * 2**20, matrix_size=128, links=False, interfaces=False)
    assert set(result.rates) == {BANDWIDTH, "fp64", "fp32"}
    assert all(rate.source == MEASURED and rate.value > 0 for rate in result.rates.values())
    copy_run = next(run for run in result.runs if run.operation == "copy")
    # Bandwidth counts bytes read plus bytes written by the copy.
    assert result.rates[BANDWIDTH].value == pytest.approx(copy_run.bytes / copy_run.median_s)
    assert copy_run.bytes == 2 * copy_run.params["n"] * 4
    device = result.apply(find_device("cpu-generic"))
    analysis = analyze("add(n=2**20, dtype=fp32)", device=device)
    assert analysis.bandwidth is not None and analysis.bandwidth.source == MEASURED
    assert analysis.bandwidth.value == result.rates[BANDWIDTH].value
    again = type(result).from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.rates == result.rates and len(again.runs) == len(result.runs)


@pytest.mark.gpu
def test_cupy_runs_record_gpu_conditions_and_event_timing() -> None:
    from workbench.measure.backends import select_backend

    backend = select_backend("cupy")
    record = measure("gemm(M=512, N=512, K=512, dtype=fp16)", backend=backend, mode="warm", **FAST)
    assert record.status == OK, record.message
    assert record.kernel.executed_path == "fp16_tc"
    assert record.environment["backend"] == "cupy" and record.environment["device_name"] == backend.device_name
    assert record.conditions_before.get("sm_clock_mhz") and record.conditions_after.get("temperature_c") is not None
    # Event times are in seconds and cover the kernel alone: never more than a synchronised wall-clock call of the
    # same kernel in the same (warm) mode, which also pays the launch and the wait. Without the launch cover an
    # idle stream stamps the start event before the host has queued the GEMM, and the events exceeded the wall
    # clock on an H200 (38.3 µs against 34.8 µs).
    with prepared_kernel("gemm(M=512, N=512, K=512, dtype=fp16)", backend) as kernel:
        walls = sorted(backend.wall_time(kernel) for _ in range(30))
    assert 0 < record.median_s <= walls[15] * 1.05, (record.median_s, walls[15], record.notes)


@pytest.mark.gpu
def test_cupy_tf32_and_batched_fp16_gemms_run_on_their_tensor_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    from cupy_backends.cuda.libs import cublas

    calls: list[tuple[str, int]] = []
    for routine in ("gemmEx", "gemmStridedBatchedEx"):
        real = getattr(cublas, routine)

        def counted(*args, _routine=routine, _real=real):  # type: ignore[no-untyped-def]
            calls.append((_routine, args[-2]))  # the compute type, just before algo
            return _real(*args)

        monkeypatch.setattr(cublas, routine, counted)
    tf32 = measure("gemm(M=256, N=256, K=256, dtype=tf32)", backend="cupy", **FAST)
    assert tf32.status == OK and tf32.kernel.executed_path == "tf32_tc"
    assert set(calls) == {("gemmEx", cublas.CUBLAS_COMPUTE_32F_FAST_TF32)}
    calls.clear()
    batched = measure("gemm(M=128, N=128, K=256, batch=4, dtype=fp16, beta=1)", backend="cupy", **FAST)
    assert batched.status == OK and batched.kernel.executed_path == "fp16_tc"
    assert set(calls) == {("gemmStridedBatchedEx", cublas.CUBLAS_COMPUTE_32F)}


def test_a_given_analysis_supplies_the_bound_and_the_convention() -> None:
    analysis = analyze("add(n=2**16, dtype=fp32)", rate="1 TFLOP/s", bandwidth="10 GB/s", convention="mac")
    record = measure("add(n=2**16, dtype=fp32)", backend="numpy", analysis=analysis, **FAST)
    assert record.bound is not None and record.bound.bandwidth_source == "entered"
    assert record.bound.bound_time_s == pytest.approx(3 * 2**16 * 4 / 10e9)
    assert record.convention == "mac"
    with pytest.raises(MeasurementError, match="not of the measured"):
        MeasurementRun("add(n=1024)", backend="numpy", analysis=analysis)


def test_calibration_sizes_shrink_to_fit_free_memory_and_it_can_be_cancelled() -> None:
    from workbench.measure import CalibrationRun

    small = _SpyBackend(free=40_000_000)  # 80 % usable: 32 MB
    steps = dict(CalibrationRun(small).plan(small))
    # Two fp32 vectors of 2^21 elements (16.8 MB) fit, 2^22 would not; three 1024² fp64 matrices (25.2 MB) fit.
    assert steps["memory bandwidth (copy, bytes read + written)"] == "copy(n=2**21, dtype=fp32)"
    assert steps["matrix rate, fp64"] == "gemm(M=1024, N=1024, K=1024, dtype=fp64)"
    tiny = _SpyBackend(free=4_000_000)
    assert dict(CalibrationRun(tiny).plan(tiny))["matrix rate, fp64"] == "gemm(M=256, N=256, K=256, dtype=fp64)"

    calibration = CalibrationRun("numpy", copy_bytes=4 * 2**20, matrix_size=64)
    seen = []

    def stop_after_the_copy(event: object) -> None:
        seen.append(event)
        if isinstance(event, RunFinished):
            calibration.cancel()

    result = calibration.run(stop_after_the_copy)
    assert result.cancelled and set(result.rates) == {BANDWIDTH} and len(result.runs) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_normalisation_that_forgets_its_weights_or_is_off_by_one_percent_fails_its_check(backend: str) -> None:
    from workbench.measure.kernels.normalization import LayerNormKernel, RmsNormKernel

    class Unweighted(RmsNormKernel):
        def _apply_weights(self) -> None:
            pass

    class OnePercentHigh(LayerNormKernel):
        def __call__(self) -> None:
            super().__call__()
            self.xp.multiply(self.arrays["y"], 1.01, out=self.arrays["y"])

    for text, wrong in (("rmsnorm(rows=16, cols=256, dtype=fp32)", Unweighted), ("layernorm(rows=16, cols=4096, dtype=fp16)", OnePercentHigh)):
        record = measure(text, backend=backend, kernel_class=wrong, **FAST)
        assert record.status == INVALID, text
        right = measure(text, backend=backend, **FAST)
        assert right.status == OK, right.message
