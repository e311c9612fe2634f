"""HBM latency: Little's law run backwards on the CPU (hand figures), the pointer chase and loaded latency on a GPU."""

from __future__ import annotations

import pytest

from workbench.model.declare import parse
from workbench.model.devices.catalogue import catalogue
from workbench.model.implementations import physical_work
from workbench.measure.latency import LOADED_COPY, LatencyReading, loaded_latency


def launches(text: str, device: str = "h200-sxm"):  # type: ignore[no-untyped-def]
    decl = parse(text)
    return physical_work(decl, decl.workload(), catalogue()[device]).launches


def test_loaded_latency_inverts_littles_law() -> None:
    # the first H200 run: CuPy's copy of 2^24 fp32 at 1.602 TB/s (reads + writes): 134,217,728 B in 83.78 µs.
    # Reads 67,108,864 B ÷ 83.78 µs = 0.801 TB/s; in flight 132 SMs × 2,048 threads × 4 B = 1,081,344 B;
    # latency = 1,081,344 B ÷ 0.801 TB/s = 1.35 µs
    time = 2**27 / 1.602e12
    assert loaded_latency(time, launches("copy(n=2**24, dtype=fp32, impl=library)"), catalogue()["h200-sxm"]) == pytest.approx(1.35e-6, rel=1e-3)
    # the add measured at 84.13 µs (2.393 TB/s): reads 134,217,728 B ÷ 84.13 µs = 1.595 TB/s, in flight
    # 132 × 2,048 × 2 × 4 B = 2,162,688 B: 1.356 µs, the copy's figure within half a per cent
    add = loaded_latency(84.13e-6, launches("add(n=2**24, dtype=fp32, impl=library)"), catalogue()["h200-sxm"])
    assert add == pytest.approx(2_162_688 / (2**27 / 84.13e-6))
    assert add == pytest.approx(1.356e-6, rel=1e-3)


def test_the_reading_replaces_the_catalogues_latency() -> None:
    device = LatencyReading("loaded", 1.2e-6, "measured in a test").apply(catalogue()["h200-sxm"])
    found = device.latency_of("hbm", "loaded")
    assert found.seconds == 1.2e-6 and found.origin == "measured"
    assert catalogue()["h200-sxm"].latency_of("hbm", "loaded").origin == "nominal"  # the catalogue is untouched


def test_a_device_without_occupancy_limits_is_refused() -> None:
    with pytest.raises(ValueError, match="occupancy"):
        loaded_latency(1e-3, launches("copy(n=2**24, dtype=fp32, impl=library)"), catalogue()["cpu-generic"])


@pytest.mark.gpu
def test_pointer_chase_and_loaded_latency_on_the_gpu() -> None:
    from workbench.measure.backends import select_backend
    from workbench.measure.latency import measure_idle_latency, measure_loaded_latency

    backend = select_backend("cupy")
    idle = measure_idle_latency(backend, working_set=1 << 28, steps=20_000)
    # published pointer chases put HBM idle latency at a few hundred ns to about a µs on recent parts
    assert 100e-9 < idle.seconds < 3e-6, idle
    from workbench.model.devices.catalogue import match_reported_name

    device = match_reported_name(backend.device_name) or catalogue()["h200-sxm"]
    loaded = measure_loaded_latency(backend, device, iterations=30, warmup=2)
    assert loaded.seconds > idle.seconds * 0.8, (idle, loaded)  # under load a load waits at least as long
    assert LOADED_COPY in loaded.how
