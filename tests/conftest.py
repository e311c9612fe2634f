"""Test set-up: Qt offscreen, gpu tests skipped cleanly without a GPU."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest


def gpu_available() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    try:
        import cupy  # type: ignore[import-not-found]

        return bool(cupy.cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no NVIDIA GPU with CuPy on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
