"""Rates per interface in the catalogue: derived shared memory, the host link, NVML's PCIe link, no invented L2."""

from __future__ import annotations

import pytest

from workbench.model.analysis import analyze
from workbench.model.devices import find_device
from workbench.model.devices.catalogue import DATASHEET, DERIVED, MEASURED, catalogue, device_from_table
from workbench.model.devices.nvml import detect, device_for
from workbench.errors import DeviceError

from tests.test_devices import FakeNVML

WORKED = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def test_shared_memory_is_derived_with_its_arithmetic() -> None:
    h100 = find_device("h100-sxm")
    smem = h100.interface_rate("smem")
    # 132 SMs × 128 B per clock × 1.98 GHz = 33,454,080,000,000 B/s ≈ 33.45 TB/s
    assert smem is not None and smem.value == 132 * 128 * 1.98e9
    assert smem.source == DERIVED
    assert "132 SMs × 128 B per clock × 1.98 GHz = 33.45 TB/s" in smem.citation
    # A100: 108 × 128 B × 1.41 GHz = 19.49 TB/s
    a100 = find_device("a100-sxm-80gb").interface_rate("smem")
    assert a100 is not None and a100.value == pytest.approx(19.49e12, rel=1e-3)


def test_no_l2_rate_is_invented() -> None:
    # No sheet publishes an L2 → SM bandwidth: every catalogue entry leaves it to calibration or the user.
    for device in catalogue().values():
        assert device.interface_rate("l2") is None, device.key
    # Blackwell, AMD and CPUs get no derived shared-memory figure (the 128 B per clock rule is Volta to Hopper).
    for key in ("b200", "mi300x", "mi250x", "cpu-generic"):
        assert find_device(key).interface_rate("smem") is None


def test_host_rate_is_the_host_link() -> None:
    h100 = find_device("h100-sxm").interface_rate("host")
    assert h100 is not None and h100.value == 63e9 and h100.source == DATASHEET  # PCIe 5.0 x16 per direction
    assert "pcie5" in h100.citation
    gh200 = find_device("gh200").interface_rate("host")
    assert gh200 is not None and gh200.value == 450e9  # NVLink-C2C, 900 GB/s both directions
    assert find_device("cpu-generic").interface_rate("host") is None


def test_a_measured_l2_rate_overrides_and_joins_the_terms() -> None:
    device = find_device("h100-sxm").with_rate("l2", 7e12, MEASURED, "calibration: 32 MiB working set")
    assert device.interface_rate("l2").source == MEASURED
    a = analyze(WORKED, device=device)
    assert [term.name for term in a.terms] == ["compute", "hbm", "l2", "smem"]
    l2 = a.term("l2")
    # compulsory: the 100,663,296 B cross L2 → SM once, at 7 TB/s = 14.38 µs
    assert l2 is not None and l2.amount == 100_663_296 and l2.time_s == pytest.approx(100_663_296 / 7e12)
    assert a.bound_time == a.compute_time and a.limiter_term == "compute"  # figures unchanged


def test_a_catalogue_interface_rate_needs_its_source() -> None:
    table = {"name": "X", "bandwidth": "1 TB/s", "interfaces": {"l2": "5 TB/s"}}
    with pytest.raises(DeviceError, match="needs its source"):
        device_from_table("x", table)
    table["citations"] = {"l2": "vendor tuning guide"}
    rate = device_from_table("x", table).interface_rate("l2")
    assert rate is not None and rate.value == 5e12 and rate.citation == "vendor tuning guide"
    with pytest.raises(DeviceError, match="unknown interface"):
        device_from_table("x", {"interfaces": {"l3": "1 TB/s"}, "citations": {"l3": "?"}})


class PCIeNVML(FakeNVML):
    """An NVML stand-in that also reports the PCIe link (Gen 4 × 8 here, a card in a narrower slot)."""

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: str) -> int:
        return 4

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: str) -> int:
        return 8


def test_nvml_pcie_generation_and_width_give_the_host_rate() -> None:
    gpu = detect(PCIeNVML(name="NVIDIA H100 PCIe")).gpus[0]
    assert (gpu.pcie_generation, gpu.pcie_width, gpu.host_link_key()) == (4, 8, "pcie4x8")
    device = device_for(gpu)
    host = device.interface_rate("host")
    # PCIe 4.0 x16 = 31.5 GB/s per direction; x8 is half: 15.75 GB/s
    assert host is not None and host.value == pytest.approx(15.75e9) and host.source == DERIVED
    assert "Gen 4 × 8 lanes" in host.citation
    # 114 SMs × 128 B × 1980 MHz (NVML's max SM clock) = 28.9 TB/s
    smem = device.interface_rate("smem")
    assert smem is not None and smem.value == pytest.approx(114 * 128 * 1980e6) and smem.source == DERIVED


def test_nvml_without_pcie_calls_keeps_the_catalogue_host_link() -> None:
    gpu = detect(FakeNVML()).gpus[0]  # an H200 stand-in whose NVML has no PCIe calls
    assert gpu.pcie_generation is None and gpu.host_link_key() is None
    host = device_for(gpu).interface_rate("host")
    assert host is not None and host.value == 63e9 and host.source == DATASHEET


def test_the_detected_pcie_link_becomes_the_host_link() -> None:
    device = device_for(detect(PCIeNVML(name="NVIDIA H100 PCIe")).gpus[0])
    assert device.host_link == "pcie4x8"
    a = analyze("add(n=2**24, dtype=fp32, resident=host)", device=device)
    # 201,326,592 B over PCIe 4.0 x8 at 15.75 GB/s per direction = 12.78 ms
    assert a.term("host").time_s == pytest.approx(201_326_592 / 15.75e9)
    assert "over PCIe 4.0 x8" in a.limiter_sentence()
    unknown = device_for(detect(PCIeNVML(name="NVIDIA Mystery X1")).gpus[0])
    assert unknown.host_link == "pcie4x8" and unknown.interface_rate("host").value == pytest.approx(15.75e9)
