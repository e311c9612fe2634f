"""GPU detection through NVML (the `nvidia-ml-py` distribution, module `pynvml`).

No driver is a normal state, not an error: `detect()` always returns a
`Detection` whose `status` says what was found. Nothing here changes clocks or
any other setting; NVML is only read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from workbench.records import record
from workbench.model.devices.catalogue import BANDWIDTH, DERIVED, Device, Rate, SMEM_ARCHITECTURES, match_reported_name, shared_memory_rate

OK = "ok"
NO_MODULE = "no-module"
NO_DRIVER = "no-driver"
NO_GPU = "no-gpu"
FAILED = "error"


@dataclass(frozen=True)
class DetectedGPU:
    """What NVML reports about one GPU (sizes in bytes, clocks in MHz)."""

    index: int
    name: str
    memory_total: int
    memory_free: int
    sm_clock_max_mhz: int | None
    memory_clock_max_mhz: int | None
    bus_width_bits: int | None
    compute_capability: str
    driver_version: str
    cuda_driver_version: str
    l2_bytes: int | None = None  # from CUDA (devices/cuda.py); NVML does not report it
    pcie_generation: int | None = None  # the highest PCIe generation the GPU and its slot both support
    pcie_width: int | None = None  # lanes, likewise (the link may train lower at idle to save power)

    def host_link_key(self) -> str | None:
        """The links-catalogue key of the PCIe link NVML reports ('pcie5x16'), or None when it reports none."""
        if not self.pcie_generation or not self.pcie_width:
            return None
        return f"pcie{self.pcie_generation}x{self.pcie_width}"

    def derived_bandwidth(self) -> float | None:
        """Peak DRAM bandwidth from clocks: max memory clock × 10⁶ × 2 (DDR) × bus width / 8, in B/s."""
        if not self.memory_clock_max_mhz or not self.bus_width_bits:
            return None
        return self.memory_clock_max_mhz * 1e6 * 2 * self.bus_width_bits / 8

    # by hand: written when GPU detection ends, as the window starts, before anything else needs the converter
    # (importing cattrs and making it would take some 28 ms of the GUI thread then)
    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "memory_total_bytes": self.memory_total,
            "memory_free_bytes": self.memory_free,
            "sm_clock_max_mhz": self.sm_clock_max_mhz,
            "memory_clock_max_mhz": self.memory_clock_max_mhz,
            "bus_width_bits": self.bus_width_bits,
            "compute_capability": self.compute_capability,
            "driver_version": self.driver_version,
            "cuda_driver_version": self.cuda_driver_version,
            "derived_bandwidth_byte_per_s": self.derived_bandwidth(),
            "l2_bytes": self.l2_bytes,
            "pcie_generation": self.pcie_generation,
            "pcie_width": self.pcie_width,
        }


@dataclass(frozen=True)
class Detection:
    """The outcome of asking NVML: the GPUs found, or why none were."""

    status: str
    message: str
    gpus: tuple[DetectedGPU, ...] = ()


def _gpu_dicts(gpus: tuple[DetectedGPU, ...]) -> list[dict[str, Any]]:
    return [gpu.to_dict() for gpu in gpus]


record(Detection, dump={"gpus": _gpu_dicts})


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _optional(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except Exception:  # an older driver lacks the call: the figure is simply unknown
        return None


def detect(nvml: Any = None, cuda_runtime: Any = None) -> Detection:
    """Ask NVML for every GPU, and CUDA for their L2 sizes. `nvml` and `cuda_runtime` may be stand-ins (tests)."""
    nvml_is_real = nvml is None
    if nvml is None:
        try:
            import pynvml as nvml  # type: ignore[import-not-found,no-redef]
        except ImportError:
            return Detection(NO_MODULE, "NVML bindings not installed (pip install nvidia-ml-py)")
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, NVMLError_DriverNotLoaded, ...
        return Detection(NO_DRIVER, f"no NVIDIA driver found ({_text(exc) or type(exc).__name__})")
    try:
        driver = _text(_optional(nvml.nvmlSystemGetDriverVersion) or "")
        cuda = _optional(nvml.nvmlSystemGetCudaDriverVersion)
        cuda_text = f"{cuda // 1000}.{cuda % 1000 // 10}" if isinstance(cuda, int) else ""
        count = nvml.nvmlDeviceGetCount()
        gpus = []
        for index in range(count):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            capability = _optional(nvml.nvmlDeviceGetCudaComputeCapability, handle)
            gpus.append(
                DetectedGPU(
                    index=index,
                    name=_text(nvml.nvmlDeviceGetName(handle)),
                    memory_total=int(memory.total),
                    memory_free=int(memory.free),
                    sm_clock_max_mhz=_optional(nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_SM),
                    memory_clock_max_mhz=_optional(nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_MEM),
                    bus_width_bits=_optional(getattr(nvml, "nvmlDeviceGetMemoryBusWidth", None) or (lambda h: None), handle),
                    # The "Max" calls report what the GPU and its slot both support; "Curr" drops at idle.
                    pcie_generation=_optional(getattr(nvml, "nvmlDeviceGetMaxPcieLinkGeneration", None) or (lambda h: None), handle),
                    pcie_width=_optional(getattr(nvml, "nvmlDeviceGetMaxPcieLinkWidth", None) or (lambda h: None), handle),
                    compute_capability=f"{capability[0]}.{capability[1]}" if capability else "",
                    driver_version=driver,
                    cuda_driver_version=cuda_text,
                )
            )
    except Exception as exc:
        return Detection(FAILED, f"NVML failed while reading devices: {_text(exc)}")
    finally:
        _optional(nvml.nvmlShutdown)
    if not gpus:
        return Detection(NO_GPU, "the NVIDIA driver is loaded but reports no GPU")
    if cuda_runtime is not None or nvml_is_real:
        from workbench.model.devices.cuda import reported_l2_sizes

        l2_sizes = reported_l2_sizes(cuda_runtime)
        gpus = [replace(g, l2_bytes=l2_sizes.get(g.name)) for g in gpus]
    names = ", ".join(g.name for g in gpus)
    return Detection(OK, f"{len(gpus)} GPU{'s' if len(gpus) > 1 else ''}: {names}", tuple(gpus))


def detected_interface_rates(gpu: DetectedGPU, known: Device | None) -> dict[str, Rate]:
    """Interface rates from what NVML reports: host ↔ device from the PCIe generation × width, shared memory
    from the max SM clock × the catalogue's SM count (both labelled derived, with the arithmetic).

    A part whose host link is not PCIe (NVLink-C2C on a GH200) keeps the catalogue's host rate.
    """
    from workbench.model.devices.links import link_catalogue

    rates: dict[str, Rate] = {}
    link_key = gpu.host_link_key()
    links = link_catalogue()
    pcie_host = known is None or not known.host_link or known.host_link.startswith("pcie")
    if link_key is not None and link_key in links and pcie_host:
        link = links[link_key]
        rates["host"] = Rate(
            link.per_direction,
            DERIVED,
            f"derived: NVML reports PCIe Gen {gpu.pcie_generation} × {gpu.pcie_width} lanes = {link.name}, "
            f"{link.per_direction / 1e9:g} GB/s per direction ({link.source})",
        )
    if known is not None and known.architecture in SMEM_ARCHITECTURES and known.sm_count and gpu.sm_clock_max_mhz:
        rates["smem"] = shared_memory_rate(known.sm_count, gpu.sm_clock_max_mhz * 1e6, "max SM clock as NVML reports it")
    return rates


def device_for(gpu: DetectedGPU) -> Device:
    """The catalogue entry for a detected GPU (with its real memory and CUDA's L2 size), or a derived entry.

    The entry is chosen from the name and the memory NVML reports, so a PCIe
    card gets PCIe figures (devices/catalogue.py: match_device).

    An unknown GPU gets the bandwidth derived from its clocks, marked derived,
    and no compute rates: the user enters them or runs calibration.
    """
    known = match_reported_name(gpu.name, gpu.memory_total)
    if known is not None:
        found = replace(known, memory_bytes=gpu.memory_total, compute_capability=gpu.compute_capability or known.compute_capability)
        if gpu.l2_bytes:
            from workbench.model.devices.cuda import CUDA_L2_SOURCE

            found = replace(found, l2_bytes=gpu.l2_bytes, l2_source=CUDA_L2_SOURCE)
        rates = detected_interface_rates(gpu, found)
        if "host" in rates:  # the PCIe link NVML reports replaces the catalogue's x16 assumption
            found = replace(found, host_link=gpu.host_link_key() or found.host_link)
        return replace(found, peak={**found.peak, **rates})
    from workbench.model.devices.cuda import CUDA_L2_SOURCE

    peak: dict[str, Rate] = dict(detected_interface_rates(gpu, None))
    bandwidth = gpu.derived_bandwidth()
    if bandwidth is not None:
        peak[BANDWIDTH] = Rate(
            bandwidth,
            DERIVED,
            f"NVML: {gpu.memory_clock_max_mhz} MHz × 2 × {gpu.bus_width_bits} bit / 8",
        )
    return Device(
        key=f"nvml-{gpu.index}",
        name=gpu.name,
        kind="gpu",
        peak=peak,
        memory_bytes=gpu.memory_total,
        host_link=(gpu.host_link_key() or "") if "host" in peak else "",
        l2_bytes=gpu.l2_bytes,
        l2_source=CUDA_L2_SOURCE if gpu.l2_bytes else "",
        compute_capability=gpu.compute_capability,
        source="detected through NVML; not in the catalogue",
        notes="Compute rates unknown: enter them or calibrate.",
    )


def read_conditions(index: int = 0, nvml: Any = None) -> dict[str, Any]:
    """Clocks (MHz), temperature (°C) and power (W) of one GPU now; {} when NVML is absent."""
    if nvml is None:
        try:
            import pynvml as nvml  # type: ignore[import-not-found,no-redef]
        except ImportError:
            return {}
    try:
        nvml.nvmlInit()
    except Exception:
        return {}
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        power = _optional(nvml.nvmlDeviceGetPowerUsage, handle)
        return {
            "sm_clock_mhz": _optional(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM),
            "memory_clock_mhz": _optional(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_MEM),
            "temperature_c": _optional(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU),
            "power_w": power / 1000 if isinstance(power, (int, float)) else None,
        }
    except Exception:
        return {}
    finally:
        _optional(nvml.nvmlShutdown)


def normalise_pci_bus_id(text: Any) -> str:
    """A PCI bus id in one spelling, domain kept: '00000000:3B:00.0' (NVML) and '0000:3b:00.0' (CUDA) → '0000:3b:00.0'.

    The domain is part of the address: two GPUs in different PCI domains can
    share bus, device and function numbers, so a match without it could pair
    a CUDA device with the wrong NVML device. An id without a domain is in
    domain 0; text that is not a bus id comes back lower-cased.
    """
    value = _text(text).strip().lower()
    parts = value.split(":")
    if len(parts) == 2:
        parts = ["0", *parts]
    try:
        domain, bus, slot = parts
        device, function = slot.split(".")
        return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{int(function, 16):x}"
    except ValueError:
        return value


def index_for_pci_bus_id(pci_bus_id: str, nvml: Any = None) -> int | None:
    """The NVML index of the GPU at a PCI bus id (CUDA and NVML can number GPUs differently); None without a match."""
    if not pci_bus_id:
        return None
    if nvml is None:
        try:
            import pynvml as nvml  # type: ignore[import-not-found,no-redef]
        except ImportError:
            return None
    try:
        nvml.nvmlInit()
    except Exception:
        return None
    try:
        wanted = normalise_pci_bus_id(pci_bus_id)
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            if normalise_pci_bus_id(nvml.nvmlDeviceGetPciInfo(handle).busId) == wanted:
                return index
        return None
    except Exception:
        return None
    finally:
        _optional(nvml.nvmlShutdown)
