"""What only a GPU can show, marked `gpu` (skipped here with the probe's reason), and the NVML ↔ CUDA match.

The gpu tests run each claim of the measurement work on CuPy: the probe,
cold mode and its flush, calibration (bf16 included), bf16 kernels, fp8
refused, the NVML device of each CUDA device, and benchmarks/bench_measure.py
as a smoke test. The NVML match by PCI bus id is also checked on the CPU
against a stand-in NVML.
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from workbench.model.devices.nvml import index_for_pci_bus_id, normalise_pci_bus_id
from workbench.measure import OK, UnsupportedMeasurement, backend_status, measure
from workbench.measure.calibrate import calibrate
from workbench.measure.backends import CupyBackend

FAST = {"iterations": 30, "warmup": 1}


# ------------------------------------------------------------------ NVML ↔ CUDA, on the CPU


@pytest.mark.parametrize(
    "nvml_spelling, cuda_spelling",
    [("00000000:3B:00.0", "0000:3b:00.0"), ("00000001:3B:00.0", "0001:3b:00.0"), ("0000:C1:00.0", "0000:c1:00.0")],
)
def test_nvml_and_cuda_spellings_of_one_bus_id_agree(nvml_spelling: str, cuda_spelling: str) -> None:
    assert normalise_pci_bus_id(nvml_spelling) == normalise_pci_bus_id(cuda_spelling)
    assert normalise_pci_bus_id(nvml_spelling.encode()) == normalise_pci_bus_id(cuda_spelling)


def test_the_pci_domain_is_part_of_the_address() -> None:
    assert normalise_pci_bus_id("00000001:3B:00.0") != normalise_pci_bus_id("0000:3b:00.0")
    assert normalise_pci_bus_id("3b:00.0") == "0000:3b:00.0"  # no domain: domain 0


def stand_in_nvml(bus_ids: list[str]) -> Any:
    """NVML with one GPU per bus id, in this order."""
    return types.SimpleNamespace(
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: len(bus_ids),
        nvmlDeviceGetHandleByIndex=lambda index: index,
        nvmlDeviceGetPciInfo=lambda handle: types.SimpleNamespace(busId=bus_ids[handle].encode()),
    )


def test_gpus_that_differ_only_in_pci_domain_are_told_apart() -> None:
    nvml = stand_in_nvml(["00000001:3B:00.0", "00000000:3B:00.0"])
    assert index_for_pci_bus_id("0000:3b:00.0", nvml) == 1
    assert index_for_pci_bus_id("0001:3b:00.0", nvml) == 0
    assert index_for_pci_bus_id("0002:3b:00.0", nvml) is None
    assert index_for_pci_bus_id("", nvml) is None


def test_fp8_is_refused_with_the_reason_on_cupy() -> None:
    backend = object.__new__(CupyBackend)  # storage_dtype needs no GPU for fp8
    with pytest.raises(UnsupportedMeasurement, match="CuPy has no fp8 arrays and cublasGemmEx has no fp8 path") as caught:
        backend.storage_dtype("fp8_e4m3")
    assert "\n" not in str(caught.value)


# ------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
def test_the_probe_finds_cupy_usable() -> None:
    status = next(s for s in backend_status(refresh=True) if s.name == "cupy")
    assert status.available, status.message
    assert "CUDA device" in status.message and "CuPy" in status.message


@pytest.mark.gpu
def test_each_cuda_device_is_matched_with_the_nvml_device_on_its_bus() -> None:
    import cupy
    import pynvml

    pynvml.nvmlInit()
    try:
        for index in range(cupy.cuda.runtime.getDeviceCount()):
            backend = CupyBackend(index)
            nvml_index = backend.nvml_index()
            assert nvml_index is not None, f"CUDA device {index} ({backend.pci_bus_id}) has no NVML match"
            handle = pynvml.nvmlDeviceGetHandleByIndex(nvml_index)
            nvml_bus = pynvml.nvmlDeviceGetPciInfo(handle).busId
            assert normalise_pci_bus_id(nvml_bus) == normalise_pci_bus_id(backend.pci_bus_id)
            name = pynvml.nvmlDeviceGetName(handle)
            assert (name.decode() if isinstance(name, bytes) else name) == backend.device_name
            environment = backend.environment()
            assert environment["nvml_index"] == nvml_index
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            assert environment.get("uuid") == (uuid.decode() if isinstance(uuid, bytes) else uuid)  # the run's provenance
    finally:
        pynvml.nvmlShutdown()
    cupy.cuda.Device(0).use()


class FlushCountingCupy(CupyBackend):
    """CuPy with the cold-mode flush counted and its buffer kept for inspection."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0
        self.flush_sizes: list[int] = []

    def make_flush(self, nbytes: int) -> Any:
        inner = super().make_flush(nbytes)
        self.flush_sizes.append(nbytes)

        def counted() -> None:
            self.flushes += 1
            inner()

        return counted


@pytest.mark.gpu
def test_cold_mode_flushes_more_than_the_l2_before_every_iteration_and_costs_time() -> None:
    backend = FlushCountingCupy()
    l2 = int(backend._props.get("l2CacheSize", 0))
    assert l2 > 0
    n = 1 << max((l2 // 4 // 12).bit_length() - 1, 10)  # add's three fp32 vectors fit in a quarter of the L2
    declaration = f"add(n={n}, dtype=fp32)"
    cold = measure(declaration, backend=backend, mode="cold", iterations=60, warmup=5)
    assert cold.status == OK and cold.mode == "cold", cold.message
    assert backend.flushes == 60 + 1  # one per timed iteration, one to time the flush itself
    assert backend.flush_sizes == [backend.flush_bytes()] and backend.flush_bytes() >= max(2 * l2, 256_000_000)
    warm = measure(declaration, backend=CupyBackend(), mode="warm", iterations=60, warmup=5)
    # Warm, the inputs sit in L2; cold, they come from HBM after the flush: a cold median is not faster.
    # (Both time the kernel alone: warm events wait behind the launch cover as cold ones wait behind the flush.)
    assert cold.median_s >= warm.median_s, (cold.median_s, warm.median_s, warm.notes)


@pytest.mark.gpu
def test_the_launch_cover_spins_on_the_gpu_and_takes_the_launch_out_of_warm_events() -> None:
    backend = CupyBackend()
    backend.prepare_timing()  # compiles the cover kernel (an empty launch), so no compilation falls between the events
    backend.synchronize()
    cuda = backend._cupy.cuda
    start, end = cuda.Event(), cuda.Event()
    start.record()
    backend._queue_cover(200e-6)
    end.record()
    end.synchronize()
    spun = cuda.get_elapsed_time(start, end) * 1e-3
    assert 0.95 * 200e-6 <= spun < 2e-3, spun  # the global timer runs; the cycle cap does not end it early
    # add(n=2**16): a kernel of a few µs whose Python launch takes about as long. Uncovered (cupyx's protocol)
    # the events include that launch; covered, they do not.
    declaration = "add(n=2**16, dtype=fp32)"
    covered = measure(declaration, backend=CupyBackend(), mode="warm", iterations=60, warmup=5)
    bare = measure(declaration, backend=CupyBackend(cover_launch=False), mode="warm", iterations=60, warmup=5)
    assert covered.status == OK and bare.status == OK
    assert covered.median_s < bare.median_s, (covered.median_s, bare.median_s, covered.notes)
    assert any(note.startswith("launch cover: ") for note in covered.notes), covered.notes
    assert not any(note.startswith("launch cover: ") for note in bare.notes)
    assert "device-side delay" in covered.timer and "no launch cover" in bare.timer


@pytest.mark.gpu
def test_gpu_calibration_measures_bandwidth_and_every_tensor_path() -> None:
    result = calibrate("cupy", quick=True)
    assert not result.cancelled and not result.skipped, result.skipped
    idle, loaded = sorted(result.latencies, key=lambda reading: reading.load)  # "idle" < "loaded"
    assert (idle.load, loaded.load) == ("idle", "loaded")
    assert 100e-9 < idle.seconds < 3e-6 and loaded.seconds > 0.8 * idle.seconds, result.latencies
    assert {"hbm", "fp16_tc", "bf16_tc", "tf32_tc", "fp32"} <= set(result.rates)
    assert "fp64" in result.rates or "fp64_tc" in result.rates
    from workbench.measure.run import default_device
    from workbench.measure.backends import select_backend

    device = default_device(select_backend("cupy"))
    for path, rate in result.rates.items():
        assert rate.value > 0
        if device is not None and path in device.peak:
            assert rate.value <= 1.05 * device.peak[path].value, f"{path}: measured {rate.value:.3g} above the datasheet"


BF16_ON_GPU = [
    "add(n=2**20, dtype=bf16)",
    "reduce(n=4096, rows=64, dtype=bf16)",
    "softmax(rows=256, cols=1000, dtype=bf16)",
    "gemm(M=512, N=384, K=256, dtype=bf16)",
    "gemm(M=128, N=128, K=256, batch=4, dtype=bf16, beta=1)",
    "attention(B=1, H=2, Sq=128, Skv=96, D=64, causal=true, dtype=bf16)",
    "conv2d(N=2, C=16, H=17, W=17, K=32, R=3, S=3, pad=1, dtype=bf16)",
]


@pytest.mark.gpu
@pytest.mark.parametrize("declaration", BF16_ON_GPU)
def test_bf16_kernels_run_on_cupy_and_pass_the_bf16_check(declaration: str) -> None:
    record = measure(declaration, backend="cupy", **FAST)
    assert record.status == OK, record.message
    assert record.check is not None and record.check.passed and "(bf16)" in record.check.tolerance
    if declaration.startswith("gemm"):
        assert record.kernel.executed_path == "bf16_tc"


@pytest.mark.gpu
def test_fp8_is_refused_on_the_gpu_in_one_line() -> None:
    with pytest.raises(UnsupportedMeasurement, match="cuBLASLt"):
        measure("gemm(M=64, N=64, K=64, dtype=fp8_e4m3)", backend="cupy")


@pytest.mark.gpu
def test_bench_measure_runs_as_a_smoke_test(tmp_path: Path) -> None:
    import importlib.util
    import sys

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_measure.py"
    spec = importlib.util.spec_from_file_location("bench_measure_smoke", script)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_measure_smoke"] = bench
    spec.loader.exec_module(bench)
    path = tmp_path / "bench.json"
    assert bench.main(["--gpu-only", "--quick", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["complete"] is True
    verdicts = {row["check"]: row["verdict"] for row in data["rows"]}
    assert "ERROR" not in verdicts.values(), data["rows"]
    add = next(row for row in data["rows"] if row["check"] == "vector add 2^22 fp32, cold, vs device copy (cudaMemcpy)")
    assert add["ratio"] is not None and 0.2 < add["ratio"] < 1.5
    same_kind = next(row for row in data["rows"] if row["check"].startswith("vector add 2^22 fp32, cold, vs CuPy elementwise copy"))
    assert same_kind["ratio"] is not None and same_kind["ratio"] > 0.2
    # The diagnostic kernels ran and passed the harness's reference check (an invalid run is an ERROR row).
    assert {f"diagnostic 2^22 fp32, {mode}: {label}" for mode in ("cold", "warm")
            for label in ("elementwise copy", "float4 copy", "float4 add")} <= set(verdicts)
    assert any(check.startswith("warm median vs cupyx") for check in verdicts)


def test_only_gpu_marked_tests_skip_and_they_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    # By path: tests/gui has a conftest module of its own.
    spec = importlib.util.spec_from_file_location("tests_root_conftest", Path(__file__).resolve().parent / "conftest.py")
    assert spec is not None and spec.loader is not None
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    class Item:
        def __init__(self, marked: bool) -> None:
            self.keywords = {"gpu": 1, "tests": 1}  # keywords hold folder names too: a checkout under .../gpu/
            self.marked = marked
            self.added: list[Any] = []

        def get_closest_marker(self, name: str) -> Any:
            return object() if self.marked and name == "gpu" else None

        def add_marker(self, marker: Any) -> None:
            self.added.append(marker)

    monkeypatch.setattr(conftest, "gpu_unavailable_reason", lambda: "CuPy is installed but NVRTC (libnvrtc.so.12 not found) is missing")
    plain, gpu = Item(marked=False), Item(marked=True)
    conftest.pytest_collection_modifyitems(None, [plain, gpu])  # type: ignore[arg-type]
    assert plain.added == []
    assert [m.kwargs["reason"] for m in gpu.added] == ["CuPy is installed but NVRTC (libnvrtc.so.12 not found) is missing"]
