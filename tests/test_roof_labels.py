"""A compute roof's name: the paths that share its rate, the operation's own path first on the highlighted roof."""

from __future__ import annotations

from workbench.model.devices import find_device
from workbench.scenes.roofline import path_label, roof_names


def test_the_highlighted_roof_names_the_path_the_operation_uses() -> None:
    # H100 SXM: FP64 tensor cores and FP32 share 67 TFLOP/s; an fp32 GEMM sits on that roof
    device = find_device("h100-sxm")
    assert device.rate("fp64_tc").value == device.rate("fp32").value
    shared = ("fp64_tc", "fp32")
    assert roof_names(shared, "fp32") == ("FP32 / FP64 TC", "FP32")
    assert roof_names(shared, "fp64_tc") == ("FP64 TC / FP32", "FP64 TC")


def test_a_roof_the_operation_is_not_on_keeps_the_device_s_order() -> None:
    assert roof_names(("fp64_tc", "fp32"), "fp16_tc") == ("FP64 TC / FP32", "FP64 TC")
    assert roof_names(("fp16_tc_fp16acc",), None) == ("FP16 TC (FP16 acc)", "FP16 TC (FP16 acc)")
    assert path_label("bf16_tc") == "BF16 TC"
