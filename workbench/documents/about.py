"""Which optional parts are present: CuPy (and its CUDA), NVML (and the driver), PyTorch.

Answers come from installed-package metadata and one cheap NVML query, never
from importing CuPy or PyTorch, so `workbench --version` stays fast and the
About dialog can show the same lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from workbench import __version__

# CuPy ships one wheel per CUDA major version; the distribution name says which.
_CUPY_DISTRIBUTIONS = (
    ("cupy-cuda13x", "CUDA 13"),
    ("cupy-cuda12x", "CUDA 12"),
    ("cupy-cuda11x", "CUDA 11"),
    ("cupy", "built from source"),
)


@dataclass(frozen=True)
class Part:
    """One optional part: its name, whether it is usable, and a short detail line."""

    name: str
    available: bool
    detail: str

    def line(self) -> str:
        return f"{self.name}: {self.detail}"


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def cupy_part() -> Part:
    for distribution, cuda in _CUPY_DISTRIBUTIONS:
        version = _version(distribution)
        if version:
            return Part("CuPy", True, f"{version} ({distribution}, {cuda})")
    return Part("CuPy", False, "not installed (GPU measurement off; pip install .[cuda12] or .[cuda13])")


def nvml_part() -> Part:
    version = _version("nvidia-ml-py")
    if version is None:
        return Part("NVML", False, "nvidia-ml-py not installed (no GPU detection)")
    from workbench.model.devices.nvml import OK, detect

    found = detect()
    if found.status == OK:
        gpu = found.gpus[0]
        return Part("NVML", True, f"nvidia-ml-py {version}, driver {gpu.driver_version} (CUDA {gpu.cuda_driver_version})")
    return Part("NVML", False, f"nvidia-ml-py {version}; {found.message}")


def torch_part() -> Part:
    version = _version("torch")
    if version is None:
        return Part("PyTorch", False, "not installed (import-torch and cross-checks against torch.matmul off; "
                                      "pip install 'perf-workbench[torch]')")
    return Part("PyTorch", True, f"{version} (import-torch: models traced into steps; cross-checks)")


def optional_parts() -> list[Part]:
    """The optional parts in the order the About dialog lists them."""
    return [cupy_part(), nvml_part(), torch_part()]


def version_text() -> str:
    """What `workbench --version` prints: the version, then one line per optional part."""
    lines = [f"workbench {__version__}"]
    lines += [f"  {part.line()}" for part in optional_parts()]
    return "\n".join(lines)
