"""Optional parts are reported from package metadata, without importing them."""

from __future__ import annotations

from importlib import metadata

import pytest

from workbench.documents import about
def test_cupy_part_names_the_cuda_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_version(name: str) -> str:
        if name == "cupy-cuda12x":
            return "13.4.1"
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(about.metadata, "version", fake_version)
    part = about.cupy_part()
    assert part.available and part.detail == "13.4.1 (cupy-cuda12x, CUDA 12)"
    assert not about.torch_part().available


def test_missing_parts_say_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    def nothing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(about.metadata, "version", nothing)
    assert "pip install .[cuda12]" in about.cupy_part().detail
    assert "nvidia-ml-py not installed" in about.nvml_part().detail


def test_version_text_lists_every_part() -> None:
    lines = about.version_text().splitlines()
    assert lines[0].startswith("workbench ")
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["CuPy", "NVML", "PyTorch"]
