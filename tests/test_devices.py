"""The device catalogue and NVML detection (with a stand-in NVML module)."""

from __future__ import annotations

import types

import pytest

from workbench.devices import BANDWIDTH, catalogue, find_device
from workbench.devices.nvml import NO_DRIVER, NO_MODULE, OK, detect, device_for, read_conditions
from workbench.errors import DeviceError


def test_catalogue_has_the_checked_devices_with_sources() -> None:
    devices = catalogue()
    expected = {"h100-sxm", "h100-pcie", "h200-sxm", "a100-sxm-40gb", "a100-sxm-80gb", "l40s", "rtx-4090", "rtx-3090", "v100-sxm2", "b200", "cpu-generic"}
    assert expected <= set(devices)
    for device in devices.values():
        assert device.source, device.key
        assert BANDWIDTH in device.peak, device.key
        assert device.paths(), device.key
    assert sum(1 for d in devices.values() if d.kind == "gpu") >= 10


@pytest.mark.parametrize(
    ("key", "bandwidth", "path", "rate"),
    [
        ("h100-sxm", 3.35e12, "fp16_tc", 989e12),
        ("h200-sxm", 4.8e12, "fp8_tc", 1979e12),
        ("a100-sxm-40gb", 1555e9, "tf32_tc", 156e12),
        ("a100-sxm-80gb", 2039e9, "fp64_tc", 19.5e12),
        ("l40s", 864e9, "fp32", 91.6e12),
        ("rtx-3090", 936e9, "fp16_tc_fp16acc", 142e12),
        ("v100-sxm2", 900e9, "fp16_tc", 125e12),
        ("b200", 8e12, "bf16_tc", 2250e12),
    ],
)
def test_datasheet_figures(key: str, bandwidth: float, path: str, rate: float) -> None:
    device = find_device(key)
    assert device.bandwidth.value == pytest.approx(bandwidth)
    assert device.rate(path).value == pytest.approx(rate)


def test_l2_in_binary_units_is_exact() -> None:
    assert find_device("l40s").l2_bytes == 96 * 2**20


def test_find_device_by_key_name_or_nvml_name() -> None:
    assert find_device("H100 SXM").key == "h100-sxm"
    assert find_device("NVIDIA H100 80GB HBM3").key == "h100-sxm"
    assert find_device("NVIDIA H100 PCIe").key == "h100-pcie"
    assert find_device("NVIDIA A100-SXM4-80GB").key == "a100-sxm-80gb"
    assert find_device("NVIDIA A100-SXM4-40GB").key == "a100-sxm-40gb"
    assert find_device("Tesla V100-SXM2-16GB").key == "v100-sxm2"
    with pytest.raises(DeviceError, match="known: "):
        find_device("Radeon 9700")


def test_cpu_uses_fp32_for_every_non_fp64_path() -> None:
    cpu = find_device("cpu-generic")
    assert cpu.rate("fp16_tc").value == cpu.rate("fp32").value == 768e9
    assert cpu.rate("fp64_tc").value == 384e9


def test_overrides_and_reset() -> None:
    device = find_device("h100-sxm").with_rate(BANDWIDTH, 2.9e12, "measured")
    assert device.bandwidth.value == 2.9e12 and device.bandwidth.source == "measured"
    assert device.without_override(BANDWIDTH).bandwidth.source == "datasheet"
    with pytest.raises(DeviceError):
        device.with_rate("fp32", 0.0, "entered")


class FakeNVML(types.SimpleNamespace):
    """A stand-in for pynvml reporting one H200 (or an unknown GPU)."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, name: str = "NVIDIA H200", fail_init: bool = False) -> None:
        super().__init__()
        self.name = name
        self.fail_init = fail_init
        self.shutdowns = 0

    def nvmlInit(self) -> None:
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"570.86.15"

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return 12080

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:
        return f"gpu{index}"

    def nvmlDeviceGetName(self, handle: str) -> bytes:
        return self.name.encode()

    def nvmlDeviceGetMemoryInfo(self, handle: str) -> types.SimpleNamespace:
        return types.SimpleNamespace(total=150_754_820_096, free=150_000_000_000)

    def nvmlDeviceGetMaxClockInfo(self, handle: str, kind: int) -> int:
        return 1980 if kind == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetClockInfo(self, handle: str, kind: int) -> int:
        return 1755 if kind == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetMemoryBusWidth(self, handle: str) -> int:
        return 6144

    def nvmlDeviceGetCudaComputeCapability(self, handle: str) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetTemperature(self, handle: str, kind: int) -> int:
        return 41

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:
        return 123_456


def test_detect_a_known_gpu() -> None:
    fake = FakeNVML()
    found = detect(fake)
    assert found.status == OK and fake.shutdowns == 1
    gpu = found.gpus[0]
    assert gpu.name == "NVIDIA H200" and gpu.compute_capability == "9.0"
    assert gpu.driver_version == "570.86.15" and gpu.cuda_driver_version == "12.8"
    # 3201 MHz × 2 × 6144 bit / 8 = 4.917 TB/s (2.4 % above the 4.8 TB/s sheet)
    assert gpu.derived_bandwidth() == pytest.approx(4.917e12, rel=1e-3)
    device = device_for(gpu)
    assert device.key == "h200-sxm"
    assert device.bandwidth.value == 4.8e12 and device.bandwidth.source == "datasheet"
    assert device.memory_bytes == 150_754_820_096


def test_unknown_gpu_gets_a_derived_bandwidth_and_no_compute_rates() -> None:
    gpu = detect(FakeNVML(name="NVIDIA Mystery X1")).gpus[0]
    device = device_for(gpu)
    assert device.bandwidth.source == "derived"
    assert device.bandwidth.value == pytest.approx(3201e6 * 2 * 6144 / 8)
    with pytest.raises(DeviceError, match="enter one"):
        device.rate("fp16_tc")


def test_no_driver_is_a_state_not_an_error() -> None:
    found = detect(FakeNVML(fail_init=True))
    assert found.status == NO_DRIVER and "no NVIDIA driver found" in found.message and not found.gpus
    assert read_conditions(0, FakeNVML(fail_init=True)) == {}


def test_no_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def refuse(name: str, *args: object, **kwargs: object) -> object:
        if name == "pynvml":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    assert detect().status == NO_MODULE


def test_this_machine_without_a_driver_reports_a_state() -> None:
    found = detect()
    assert found.message
    assert (found.status == OK) == bool(found.gpus)


def test_read_conditions() -> None:
    conditions = read_conditions(0, FakeNVML())
    assert conditions == {"sm_clock_mhz": 1755, "memory_clock_mhz": 3201, "temperature_c": 41, "power_w": 123.456}


def test_path_titles_follow_the_kind_of_device() -> None:
    assert find_device("h100-sxm").path_title("fp32") == "FP32 (CUDA cores)"
    assert find_device("h100-sxm").path_title(BANDWIDTH) == "Memory bandwidth (HBM)"
    assert find_device("cpu-generic").path_title("fp32") == "FP32 (vector units)"
    assert find_device("rtx-4090").path_title(BANDWIDTH) == "Memory bandwidth (DRAM)"
