"""Facts about the GPU a run used, from the CUDA runtime and NVML: versions, UUID, driver, NVML index.

Each answers "" or None when the library or the call is missing: a run records what it can.
"""

from __future__ import annotations

from typing import Any, Callable


def optional_figure(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception:  # an older runtime lacks the call: the figure is simply unknown
        return None


def cuda_version_text(value: Any) -> str:
    """12040 → '12.4' (CUDA encodes versions as 1000·major + 10·minor)."""
    if not isinstance(value, int) or value <= 0:
        return ""
    return f"{value // 1000}.{value % 1000 // 10}"


def nvml_index_for_pci(pci_bus_id: str) -> int | None:
    """The NVML index of the GPU on a PCI bus id (domain included), or None without NVML or a match."""
    from workbench.model.devices.nvml import index_for_pci_bus_id

    return index_for_pci_bus_id(pci_bus_id)


def nvml_uuid(index: int | None) -> str:
    """The UUID NVML reports for the GPU at an NVML index ('GPU-…'), or '' without NVML or an index."""
    if index is None:
        return ""
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return ""
    try:
        pynvml.nvmlInit()
    except Exception:
        return ""
    try:
        uuid = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(index))
        return uuid.decode() if isinstance(uuid, bytes) else str(uuid)
    except Exception:
        return ""
    finally:
        optional_figure(pynvml.nvmlShutdown)


def nvml_driver_version() -> str:
    from workbench.model.devices.nvml import detect

    detection = detect()
    return detection.gpus[0].driver_version if detection.gpus else ""
