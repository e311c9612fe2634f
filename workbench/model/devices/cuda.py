"""Facts only the CUDA runtime reports (NVML does not): the L2 size of each GPU.

Read through CuPy when it is installed (`cupy.cuda.runtime.getDeviceProperties`,
field `l2CacheSize`, bytes). CUDA numbers GPUs in its own order, which need not
be NVML's, so sizes are keyed by the device name: every GPU of one model has
the same L2. No CuPy, no driver or no GPU simply gives no sizes.
"""

from __future__ import annotations

from typing import Any

CUDA_L2_SOURCE = "reported by CUDA on this GPU (cudaDeviceProp.l2CacheSize)"


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def reported_l2_sizes(runtime: Any = None) -> dict[str, int]:
    """{device name: L2 bytes} for every GPU CUDA sees; names whose GPUs disagree are left out.

    `runtime` stands in for `cupy.cuda.runtime` in tests.
    """
    if runtime is None:
        try:
            from cupy.cuda import runtime  # type: ignore[import-not-found,no-redef]
        except Exception:  # CuPy absent, or present without a usable CUDA: no sizes
            return {}
    sizes: dict[str, set[int]] = {}
    try:
        count = int(runtime.getDeviceCount())
        for index in range(count):
            properties = runtime.getDeviceProperties(index)
            size = properties.get("l2CacheSize")
            if isinstance(size, int) and size > 0:
                sizes.setdefault(_text(properties.get("name", "")), set()).add(size)
    except Exception:  # CUDARuntimeError: no driver (35) or no device (100)
        return {}
    return {name: next(iter(found)) for name, found in sizes.items() if name and len(found) == 1}
