"""Which CuPy to install here: the project extra (cuda12, cuda13) that matches the wheel or the driver."""

from __future__ import annotations

# The distribution that provides the `cupy` module, and the project extra that installs it with its CUDA libraries.
CUPY_EXTRAS = {"cupy-cuda13x": "cuda13", "cupy-cuda12x": "cuda12"}


def cupy_extra() -> str:
    """The extra (cuda12 / cuda13) that matches the installed CuPy wheel, else the driver's CUDA major version."""
    from importlib import metadata

    for distribution, extra in CUPY_EXTRAS.items():
        try:
            metadata.version(distribution)
            return extra
        except metadata.PackageNotFoundError:
            continue
    from workbench.model.devices.nvml import detect

    detection = detect()
    major = detection.gpus[0].cuda_driver_version.split(".")[0] if detection.gpus else ""
    return "cuda12" if major == "12" else "cuda13" if major.isdigit() and int(major) >= 13 else ""


def install_hint() -> str:
    extra = cupy_extra()
    if extra:
        return f'pip install "perf-workbench[{extra}]"'
    return 'pip install "perf-workbench[cuda12]" (or [cuda13] for a CUDA 13 driver)'
