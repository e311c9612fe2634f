"""Links between chips in the device catalogue: per direction, both directions, bits against bytes."""

from __future__ import annotations

import pytest

from workbench.model.devices.catalogue import catalogue, find_device
from workbench.model.devices.links import device_link, find_link, link_catalogue, link_from_table
from workbench.errors import DeviceError


def test_nvlink_generations_per_direction_and_both() -> None:
    # DATASHEETS: V100 300 GB/s (2), A100 600 (3), H100/H200 900 (4: 18 × 25 GB/s = 450 each way), B200 1.8 TB/s (5).
    expected = {"nvlink2": 150e9, "nvlink3": 300e9, "nvlink4": 450e9, "nvlink5": 900e9}
    for key, per_direction in expected.items():
        link = find_link(key)
        assert link.per_direction == pytest.approx(per_direction)
        assert link.both_directions == pytest.approx(2 * per_direction)
        assert link.source


def test_each_nvlink_gpu_names_its_generation() -> None:
    devices = catalogue()
    assert devices["h100-sxm"].nvlink == "nvlink4"
    assert devices["h200-sxm"].nvlink == "nvlink4"
    assert devices["a100-sxm-80gb"].nvlink == "nvlink3"
    assert devices["v100-sxm2"].nvlink == "nvlink2"
    assert devices["b200"].nvlink == "nvlink5"
    assert devices["gh200"].host_link == "nvlink_c2c"
    assert devices["h100-pcie"].nvlink == ""
    # Every named link exists (catalogue() checks it on load).
    for device in devices.values():
        for key in (device.nvlink, device.host_link):
            if key:
                find_link(key)


def test_network_links_bits_shown_as_bytes() -> None:
    # 400 Gb/s ÷ 8 = 50 GB/s: the byte figure is what bounds time.
    ndr = find_link("ib_ndr")
    assert ndr.per_direction == pytest.approx(50e9)
    assert ndr.line_rate_bit_per_s == pytest.approx(400e9)
    assert ndr.rate_words.startswith("400 Gb/s = 50 GB/s per direction")
    for key, gb_per_s in {"ib_hdr": 25, "ib_xdr": 100, "eth100g": 12.5, "eth200g": 25, "eth400g": 50, "eth800g": 100}.items():
        assert find_link(key).per_direction == pytest.approx(gb_per_s * 1e9)


def test_pcie_generations_and_widths() -> None:
    for gen, x16 in {3: 15.75e9, 4: 31.5e9, 5: 63e9, 6: 121e9}.items():
        assert find_link(f"pcie{gen}").per_direction == pytest.approx(x16)
        assert find_link(f"pcie{gen}x16").per_direction == pytest.approx(x16)
        assert find_link(f"pcie{gen}x4").per_direction == pytest.approx(x16 / 4)
        assert find_link(f"pcie{gen}x4").origin == "derived"
    assert find_link("PCIe5X8").key == "pcie5x8"


def test_device_link_prefers_nvlink_then_host_link() -> None:
    assert device_link(find_device("h100-sxm")).key == "nvlink4"
    assert device_link(find_device("h100-pcie")).key == "pcie5"
    with pytest.raises(DeviceError, match="names no link"):
        device_link(find_device("cpu-generic"))


def test_unknown_link_is_one_clear_error() -> None:
    with pytest.raises(DeviceError, match=r"unknown link 'nvlink9'; did you mean"):
        find_link("nvlink9")


def test_bits_and_bytes_that_disagree_are_refused() -> None:
    # The factor-of-eight trap: 400 Gb/s written as 400 GB/s per direction.
    with pytest.raises(DeviceError, match=r"line_rate 400 Gb/s is 50 GB/s, not the per_direction 400 GB/s"):
        link_from_table("bad", {"kind": "infiniband", "line_rate": "400 Gb/s", "per_direction": "400 GB/s"})
    with pytest.raises(DeviceError, match="needs its line_rate"):
        link_from_table("bad", {"kind": "ethernet", "per_direction": "50 GB/s"})
    with pytest.raises(DeviceError, match="both_directions must be twice"):
        link_from_table("bad", {"kind": "nvlink", "per_direction": "450 GB/s", "both_directions": "450 GB/s"})
    with pytest.raises(DeviceError, match="kind must be one of"):
        link_from_table("bad", {"kind": "carrier-pigeon", "per_direction": "1 B/s"})
    with pytest.raises(DeviceError, match="links.bad.per_direction"):
        link_from_table("bad", {"kind": "pcie", "per_direction": "31.5 GFLOP/s"})


def test_link_catalogue_is_not_a_device() -> None:
    assert "links" not in catalogue()
    assert len(link_catalogue()) >= 16
