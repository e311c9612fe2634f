"""Rates at the ends of the range the core accepts (devices/catalogue.py: MIN_RATE, MAX_RATE) draw a roofline;
past them the entry is refused before the plot sees it (a 5e-324 B/s override once crashed the roofline,
1.7e308 beside 5e-324 raised a math domain error)."""

from __future__ import annotations

import math

import pytest

from workbench.model.devices.catalogue import MAX_RATE, MIN_RATE
from workbench.errors import UnitError


def test_extreme_rates_draw_and_out_of_range_ones_are_refused(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.roofline)
    document = window.document
    for path, text in (("hbm", "5e-324 B/s"), ("hbm", "1e-300 B/s"), ("fp32", "1.7e308 FLOP/s")):
        with pytest.raises(UnitError, match="overflow"):
            document.set_rate(path, text)
    assert not document.session.device.overrides  # nothing half-entered
    document.set_rate("hbm", f"{MIN_RATE} B/s")
    document.set_rate("fp32", f"{MAX_RATE:g} FLOP/s")
    window.roofline.refresh()
    (x_low, x_high), (y_low, y_high) = window.roofline.plot.getViewBox().viewRange()
    assert all(math.isfinite(v) for v in (x_low, x_high, y_low, y_high))
    document.set_rate("hbm", f"{MAX_RATE:g} B/s")
    document.set_rate("fp32", f"{MIN_RATE} FLOP/s")
    window.roofline.refresh()
    assert all(math.isfinite(v) for pair in window.roofline.plot.getViewBox().viewRange() for v in pair)
