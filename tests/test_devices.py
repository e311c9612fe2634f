"""The device catalogue and NVML detection (with a stand-in NVML module)."""

from __future__ import annotations

import types

import pytest

from workbench.model.devices import BANDWIDTH, catalogue, find_device
from workbench.model.devices.nvml import NO_DRIVER, NO_MODULE, OK, detect, device_for, read_conditions
from workbench.errors import DeviceError


def test_catalogue_has_the_checked_devices_with_sources() -> None:
    devices = catalogue()
    expected = {
        "h100-sxm", "h100-pcie", "h200-sxm", "gh200", "a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-80gb", "a100-pcie-40gb",
        "l40s", "rtx-4090", "rtx-3090", "v100-sxm2", "v100-pcie", "b200", "mi300x", "mi250x", "cpu-generic",
    }
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


# L2 sizes: the hardware sizes are binary. The sheets' "50 MB" is 50 MiB (52,428,800 B, what
# cudaDeviceProp.l2CacheSize reports on an H100); reading it as 50,000,000 B is 4.6 % low.
@pytest.mark.parametrize(
    ("key", "l2_bytes"),
    [
        ("h100-sxm", 52_428_800),  # 50 × 2**20
        ("h100-pcie", 52_428_800),
        ("h200-sxm", 52_428_800),
        ("gh200", 52_428_800),
        ("a100-sxm-80gb", 41_943_040),  # 40 × 2**20
        ("a100-sxm-40gb", 41_943_040),
        ("a100-pcie-80gb", 41_943_040),
        ("a100-pcie-40gb", 41_943_040),
        ("rtx-4090", 75_497_472),  # 72 × 2**20
        ("rtx-3090", 6_291_456),  # 6 × 2**20
        ("v100-sxm2", 6_291_456),
        ("v100-pcie", 6_291_456),
        ("l40s", 100_663_296),  # 96 × 2**20
        ("b200", 132_644_864),  # 126.5 × 2**20
    ],
)
def test_l2_sizes_are_binary_and_sourced(key: str, l2_bytes: int) -> None:
    device = find_device(key)
    assert device.l2_bytes == l2_bytes
    assert device.l2_source, f"{key} has no source for its L2 size"


def test_every_catalogue_l2_names_its_source() -> None:
    for device in catalogue().values():
        assert device.l2_bytes and device.l2_source, device.key


@pytest.mark.parametrize(
    ("key", "path", "rate"),
    [
        ("h100-sxm", "int8_tc", 1979e12),
        ("h100-pcie", "int8_tc", 1513e12),
        ("a100-sxm-80gb", "int8_tc", 624e12),
        ("l40s", "int8_tc", 733e12),
        ("rtx-4090", "int8_tc", 660e12),
        ("b200", "fp4_tc", 9000e12),
        ("b200", "fp8_tc", 4500e12),
        ("mi300x", "fp16_tc", 1307.4e12),
        ("mi300x", "fp8_tc", 2614.9e12),
        ("mi300x", "fp64_tc", 163.4e12),
        ("mi250x", "fp16_tc", 383e12),
        ("mi250x", "fp64_tc", 95.7e12),
        ("v100-pcie", "fp32", 14e12),
        ("a100-pcie-80gb", "fp16_tc", 312e12),
    ],
)
def test_tensor_paths_and_new_entries(key: str, path: str, rate: float) -> None:
    assert find_device(key).rate(path).value == pytest.approx(rate)


@pytest.mark.parametrize(
    ("key", "bandwidth", "memory"),
    [("mi300x", 5.3e12, 192e9), ("mi250x", 3.2e12, 128e9), ("a100-pcie-80gb", 1935e9, 80e9), ("v100-pcie", 900e9, 16e9), ("gh200", 4e12, 96e9)],
)
def test_new_entries_bandwidth_and_memory(key: str, bandwidth: float, memory: float) -> None:
    device = find_device(key)
    assert device.bandwidth.value == pytest.approx(bandwidth) and device.memory_bytes == memory


def test_int8_gemm_on_h100_has_a_bound() -> None:
    from workbench.model.analysis import analyze

    analysis = analyze("gemm(M=4096, N=4096, K=4096, dtype=int8)", device="h100-sxm")
    assert analysis.path == "int8_tc"
    # 2 × 4096³ = 137,438,953,472 operations / 1979e12 per s = 69.45 µs
    assert analysis.compute_time == pytest.approx(137_438_953_472 / 1979e12)


def test_amd_parts_are_catalogue_only() -> None:
    from workbench.model.devices.catalogue import match_device

    assert find_device("mi300x").vendor == "AMD" and "NVML" in find_device("mi300x").notes
    assert match_device("AMD Instinct MI250X").device.key == "mi250x"  # type: ignore[union-attr]


def test_find_device_by_key_name_or_nvml_name() -> None:
    assert find_device("H100 SXM").key == "h100-sxm"
    assert find_device("NVIDIA H100 80GB HBM3").key == "h100-sxm"
    assert find_device("NVIDIA H100 PCIe").key == "h100-pcie"
    assert find_device("NVIDIA A100-SXM4-80GB").key == "a100-sxm-80gb"
    assert find_device("NVIDIA A100-SXM4-40GB").key == "a100-sxm-40gb"
    assert find_device("Tesla V100-SXM2-16GB").key == "v100-sxm2-16gb"
    with pytest.raises(DeviceError, match="known: "):
        find_device("Radeon 9700")


# The names NVML reports on real parts, and the entry each must get.
NAME_TABLE = [
    ("NVIDIA H100 80GB HBM3", None, "h100-sxm"),
    ("NVIDIA H100 PCIe", None, "h100-pcie"),
    ("NVIDIA H200", None, "h200-sxm"),
    ("NVIDIA A100-SXM4-80GB", None, "a100-sxm-80gb"),
    ("NVIDIA A100-SXM4-40GB", None, "a100-sxm-40gb"),
    ("NVIDIA A100 80GB PCIe", None, "a100-pcie-80gb"),
    ("NVIDIA A100-PCIE-40GB", None, "a100-pcie-40gb"),
    ("Tesla V100-SXM2-32GB", None, "v100-sxm2"),
    ("Tesla V100-SXM2-16GB", None, "v100-sxm2-16gb"),  # the 16 GB variant, not the 32 GB part
    ("Tesla V100-SXM2-16GB", 16_160 * 2**20, "v100-sxm2-16gb"),
    ("NVIDIA H100 NVL", None, "h100-nvl"),  # a 94 GB PCIe card, not the SXM part
    ("NVIDIA H100 NVL", 95_830 * 2**20, "h100-nvl"),
    ("Tesla V100-PCIE-16GB", None, "v100-pcie"),
    ("NVIDIA GH200 480GB", None, "gh200"),  # 480 GB is the Grace CPU's memory: not used to choose
    ("NVIDIA GH200 480GB", 97_871 * 2**20, "gh200"),  # NVML: about 96 GB of HBM3
    ("NVIDIA GH200 144G HBM3e", None, "gh200-144gb"),
    ("NVIDIA L40S", None, "l40s"),
    ("NVIDIA GeForce RTX 4090", None, "rtx-4090"),
    ("NVIDIA B200", None, "b200"),
    ("AMD Instinct MI300X", None, "mi300x"),
]


@pytest.mark.parametrize(("reported", "memory", "key"), NAME_TABLE)
def test_name_matching_table(reported: str, memory: int | None, key: str) -> None:
    from workbench.model.devices.catalogue import match_device, match_reported_name

    found = match_device(reported, memory)
    assert found is not None and found.device.key == key, (reported, found and found.reasons)
    assert found.reasons  # it always says why
    assert match_reported_name(reported, memory).key == key  # type: ignore[union-attr]


def test_pcie_cards_get_pcie_figures() -> None:
    from workbench.model.devices.catalogue import match_reported_name

    assert match_reported_name("NVIDIA A100 80GB PCIe").bandwidth.value == 1935e9  # type: ignore[union-attr]
    v100 = match_reported_name("Tesla V100-PCIE-16GB")
    assert v100 is not None and v100.rate("fp32").value == 14e12 and v100.memory_bytes == 16e9


def test_memory_size_picks_the_variant_when_the_name_does_not() -> None:
    from workbench.model.devices.catalogue import match_device

    plain = match_device("NVIDIA A100")
    assert plain is not None and plain.closest and "--memory-gib" in plain.reasons[-1]
    sized = match_device("NVIDIA A100", memory_bytes=40 * 2**30)
    assert sized is not None and sized.device.key == "a100-sxm-40gb" and not sized.closest
    assert match_device("NVIDIA A100 PCIe", memory_bytes=80 * 2**30).device.key == "a100-pcie-80gb"  # type: ignore[union-attr]
    assert match_device("Radeon 9700") is None


def test_a_typo_gets_a_suggestion() -> None:
    with pytest.raises(DeviceError, match="did you mean h100-sxm"):
        find_device("h10-sxm")
    assert find_device("H100").key == "h100-sxm"  # a family name is a match, not a typo


def test_detected_gpu_gets_memory_matched_variant_and_cuda_l2() -> None:
    fake = FakeNVML(name="NVIDIA A100 80GB PCIe")

    class Runtime:
        def getDeviceCount(self) -> int:
            return 1

        def getDeviceProperties(self, index: int) -> dict[str, object]:
            return {"name": b"NVIDIA A100 80GB PCIe", "l2CacheSize": 41_943_040}

    gpu = detect(fake, cuda_runtime=Runtime()).gpus[0]
    assert gpu.l2_bytes == 41_943_040
    device = device_for(gpu)
    assert device.key == "a100-pcie-80gb" and device.bandwidth.value == 1935e9
    assert device.l2_bytes == 41_943_040 and "CUDA" in device.l2_source


def test_cuda_l2_size_replaces_the_catalogue_one() -> None:
    from workbench.model.devices.cuda import reported_l2_sizes

    class Runtime:
        def getDeviceCount(self) -> int:
            return 2

        def getDeviceProperties(self, index: int) -> dict[str, object]:
            return {"name": b"NVIDIA H200", "l2CacheSize": 62_914_560}  # 60 MiB, as PyTorch has reported

    sizes = reported_l2_sizes(Runtime())
    assert sizes == {"NVIDIA H200": 62_914_560}
    gpu = detect(FakeNVML(), cuda_runtime=Runtime()).gpus[0]
    device = device_for(gpu)
    assert device.key == "h200-sxm" and device.l2_bytes == 62_914_560 and "CUDA" in device.l2_source

    class Broken:
        def getDeviceCount(self) -> int:
            raise RuntimeError("cudaErrorInsufficientDriver")

    assert reported_l2_sizes(Broken()) == {}
    assert device_for(detect(FakeNVML(), cuda_runtime=Broken()).gpus[0]).l2_bytes == 52_428_800


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


def test_variants_and_the_h100_nvl_have_their_own_memory_and_the_chip_s_rates() -> None:
    v100_16, v100_32 = find_device("v100-sxm2-16gb"), find_device("v100-sxm2")
    assert v100_16.memory_bytes == 16e9 and v100_32.memory_bytes == 32e9
    assert {k: r.value for k, r in v100_16.peak.items()} == {k: r.value for k, r in v100_32.peak.items()}
    assert v100_16.bus == "sxm" and v100_16.nvlink == v100_32.nvlink
    nvl = find_device("h100-nvl")
    assert nvl.memory_bytes == 94e9 and nvl.bus == "pcie" and nvl.bandwidth.value == 3.9e12
    assert nvl.rate("fp32").value == 60e12 and nvl.rate("bf16_tc").value == 835.5e12
    assert "NVL column" in nvl.bandwidth.citation
    # the project's datasheet table has no NVL row: the entry says its figures are unverified, where it is cited
    assert "unverified" in nvl.bandwidth.citation and "unverified" in nvl.rate("fp32").citation


def test_cli_devices_match_says_which_entry_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    assert main(["devices", "--match", "NVIDIA H100 NVL"]) == 0
    assert capsys.readouterr().out.startswith("NVIDIA H100 NVL → h100-nvl: NVIDIA H100 NVL")
    assert main(["devices", "--match", "Tesla V100-SXM2-16GB"]) == 0
    assert "→ v100-sxm2-16gb" in capsys.readouterr().out

    assert main(["devices", "--match", "NVIDIA A100 80GB PCIe"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NVIDIA A100 80GB PCIe → a100-pcie-80gb: NVIDIA A100 PCIe 80 GB")
    assert "bus PCIe (in the name)" in out and "1.935 TB/s" in out and "L2 40 MiB" in out
    assert main(["devices", "--match", "NVIDIA GH200 480GB", "--memory-gib", "144", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["key"] == "gh200-144gb" and data["device"]["bandwidth_byte_per_s"] == 4.9e12
    assert main(["devices", "--match", "Radeon 9700"]) == 2
    assert main(["devices", "--memory-gib", "80"]) == 2
    assert main(["devices", "--match", "NVIDIA A100", "--memory-gib", "-3"]) == 2
    assert capsys.readouterr().err.count("\n") == 3


def test_cli_devices_lists_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "This machine's CPU (host-cpu)" in out and "mi300x" in out and "int8_tc" in out
