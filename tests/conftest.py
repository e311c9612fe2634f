"""Test set-up: Qt offscreen, gpu tests skipped cleanly without a usable GPU, with the reason."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ["QT_QPA_PLATFORM"] == "offscreen":
    # The offscreen screen is 800 × 800 unless told: the tests' windows are 1600 × 1000 (the screenshots' size),
    # and a window fits its screen, so the primary screen is that size too; beside it a 1280 × 720 projector and a
    # 1366 × 768 laptop, for the tests that put a window on a small screen (tests/gui/test_screens.py).
    screen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offscreen-screen.json")
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screen}"

import pytest


def gpu_unavailable_reason() -> str | None:
    """Why the gpu tests cannot run here (the measurement engine's own probe of CuPy), or None when they can."""
    from workbench.measure.backends import backend_status

    cupy = next(status for status in backend_status() if status.name == "cupy")
    return None if cupy.available else cupy.message


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The marker, not item.keywords: keywords also hold directory names, and a checkout under a folder
    # named "gpu" would otherwise skip every test.
    marked = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not marked:
        return
    reason = gpu_unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in marked:
        item.add_marker(skip)
