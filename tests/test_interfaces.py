"""The interface registry: one key per named interface, shared with the device rates."""

import pytest

from workbench.model.devices import interfaces
from workbench.model.devices.catalogue import BANDWIDTH
from workbench.errors import DeviceError


def test_the_memory_bandwidth_is_the_hbm_interface():
    # Device rates are keyed by interface key; the memory bandwidth has always been "hbm".
    assert interfaces.HBM == BANDWIDTH


def test_order_runs_from_the_host_inwards():
    assert interfaces.interface_keys() == ("host", "hbm", "l2", "smem")


def test_names_say_both_ends():
    assert interfaces.interface("hbm").name == "HBM → L2"
    assert interfaces.interface("hbm").name_on("DRAM") == "DRAM → L2"
    assert interfaces.interface("l2").name == "L2 → SM (L1 / shared memory)"
    assert interfaces.interface("smem").name_on("DRAM") == "shared memory → registers"


def test_unknown_interface_is_the_projects_error():
    with pytest.raises(DeviceError, match="unknown interface 'l3'.*host, hbm, l2, smem"):
        interfaces.interface("l3")
