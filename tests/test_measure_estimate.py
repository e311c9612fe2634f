"""The run-time estimate: the bound as a floor, a probe at a small size scaled up, and quicker offers."""

from __future__ import annotations

import time

import pytest

from workbench.model.declare import parse
from workbench.measure import estimate as estimate_module
from workbench.measure.estimate import (
    LONG_RUN_S,
    alternatives,
    estimate_run,
    format_duration,
    probe_ladder,
    warmup_calls,
)

WORKED_EXAMPLE = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"  # the worked example's operation


def test_the_estimate_appears_for_the_worked_example_on_the_cpu_and_says_it_is_long() -> None:
    started = time.perf_counter()
    estimate = estimate_run(WORKED_EXAMPLE, backend="numpy", iterations=50)
    assert time.perf_counter() - started < 3.0  # a probe, not a run
    assert estimate.basis == "probe" and estimate.probe is not None
    assert estimate.probe.declaration.startswith("gemm(") and "dtype=fp16" in estimate.probe.declaration
    assert estimate.probe.scale > 1
    # 137 GFLOP per call on NumPy's fp16 loop (no BLAS): minutes a call on any CPU, far over the threshold
    assert estimate.per_call_s is not None and estimate.per_call_s > 10
    assert estimate.long and estimate.total_s is not None and estimate.total_s > LONG_RUN_S
    assert estimate.calls == 1 + 2 + 50  # first call, the minimum warm-up (calls this long), the iterations
    assert estimate.bound_call_s is not None and estimate.per_call_s >= estimate.bound_call_s
    text = estimate.text()
    assert text.startswith("about ") and "53 calls" in text and "probe: gemm(" in text and "This machine" in text


def test_a_small_run_is_not_long() -> None:
    estimate = estimate_run("add(n=2**16, dtype=fp32)", backend="numpy", iterations=30)
    assert estimate.total_s is not None and estimate.total_s < 1 and not estimate.long


def test_without_a_probe_the_bound_is_the_estimate_and_said_to_be_a_floor() -> None:
    estimate = estimate_run(WORKED_EXAMPLE, backend="numpy", iterations=50, probe=False)
    assert estimate.probe is None and estimate.per_call_s == estimate.bound_call_s
    assert estimate.text().startswith("at least ") and "from the bound on This machine" in estimate.text()


def test_the_probe_ladder_halves_every_size_field_and_ends_at_the_declaration() -> None:
    ladder = probe_ladder(parse(WORKED_EXAMPLE))
    assert str(ladder[-1]) == str(parse(WORKED_EXAMPLE))
    sizes = [d.params["M"] for d in ladder]
    assert sizes == sorted(sizes) and all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
    assert all(d.params["M"] == d.params["N"] == d.params["K"] for d in ladder)
    smallest = ladder[0].workload()
    assert smallest.flop() <= estimate_module.PROBE_SMALL_FLOP and smallest.bytes <= estimate_module.PROBE_SMALL_BYTES


def _model_cpu(monkeypatch, fp16_rate: float, fp32_rate: float) -> list[str]:
    """Probes timed by a model (FLOP over a rate per dtype) instead of the clock: the arithmetic, exactly."""
    probed: list[str] = []

    def model(declaration, backend, warm, budget_s):  # type: ignore[no-untyped-def]
        probed.append(str(declaration))
        rate = fp16_rate if declaration.params["dtype"] == "fp16" else fp32_rate
        return float(declaration.workload().flop()) / rate

    monkeypatch.setattr(estimate_module, "_time_one_call", model)
    return probed


def test_the_probe_scales_by_the_work_and_the_total_counts_every_call(monkeypatch) -> None:
    _model_cpu(monkeypatch, fp16_rate=1e9, fp32_rate=50e9)
    estimate = estimate_run(WORKED_EXAMPLE, backend="numpy", iterations=50)
    full_flop = 2 * 4096**3
    assert estimate.per_call_s == pytest.approx(full_flop / 1e9)  # the probe ran ≥ 10 ms, so no overhead floor
    assert estimate.total_s == pytest.approx(full_flop / 1e9 * (1 + 2 + 50))
    assert warmup_calls(1e-4) == 50 and warmup_calls(0.01) == 10 and warmup_calls(5.0) == 2 and warmup_calls(5.0, 7) == 7


def test_a_long_cpu_fp16_gemm_is_offered_a_smaller_size_and_fp32(monkeypatch) -> None:
    _model_cpu(monkeypatch, fp16_rate=1e9, fp32_rate=50e9)
    estimate = estimate_run(WORKED_EXAMPLE, backend="numpy", iterations=50)
    offers = {offer.kind: offer for offer in alternatives(estimate)}
    smaller = offers["smaller"]
    # 53 calls of 2·n³ / 1 GFLOP/s within 30 s: n = 512 (14.2 s) fits, 1024 (114 s) does not
    assert str(smaller.declaration) == "gemm(M=512, N=512, K=512, dtype=fp16)"
    assert smaller.estimate.total_s is not None and smaller.estimate.total_s <= LONG_RUN_S
    faster = offers["dtype"]
    assert str(faster.declaration) == "gemm(M=4096, N=4096, K=4096, dtype=fp32)"  # every operand, not just dtype
    assert faster.estimate.total_s == pytest.approx(estimate.total_s / 50, rel=0.2)
    assert "without BLAS" in faster.label and faster.label.startswith("Faster dtype: fp32")


def test_no_faster_dtype_is_offered_for_fp32_or_a_gpu_estimate(monkeypatch) -> None:
    _model_cpu(monkeypatch, fp16_rate=1e9, fp32_rate=1e9)
    estimate = estimate_run("gemm(M=4096, N=4096, K=4096, dtype=fp32)", backend="numpy")
    assert [offer.kind for offer in alternatives(estimate)] == ["smaller"]


def test_durations_read_as_people_say_them() -> None:
    assert format_duration(0.051) == "51 ms"
    assert format_duration(42) == "42 s"
    assert format_duration(210) == "3.5 min"
    assert format_duration(3.1 * 3600) == "3.1 h"
    assert format_duration(5 * 86400) == "5.0 days"


def test_a_fixed_cost_per_call_is_not_scaled_with_the_work(monkeypatch) -> None:
    """A busy machine's BLAS call costs ~40 ms whatever its size: only the part that grows is scaled."""

    def model(declaration, backend, warm, budget_s):  # type: ignore[no-untyped-def]
        return 0.040 + float(declaration.workload().flop()) / 20e9

    monkeypatch.setattr(estimate_module, "_time_one_call", model)
    estimate = estimate_run("gemm(M=4096, N=4096, K=4096, dtype=fp32)", backend="numpy", iterations=50)
    assert estimate.probe is not None and estimate.probe.fixed_s == pytest.approx(0.040, rel=1e-6)
    assert estimate.per_call_s == pytest.approx(0.040 + 2 * 4096**3 / 20e9, rel=1e-6)  # 6.9 s, not hours
    assert "beyond a fixed 40 ms a call" in estimate.text()


class _Clock:
    """A synthetic clock: the probe's budget is spent by the modelled calls, not by the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


FP32_4096 = "gemm(M=4096, N=4096, K=4096, dtype=fp32)"


def _estimate_with_synthetic_calls(monkeypatch, seconds_of) -> tuple[object, _Clock]:  # type: ignore[no-untyped-def]
    """The 4096³ fp32 GEMM estimated with each probe call taking `seconds_of(declaration)` on a synthetic clock
    (the untimed first call and the repeats spend the budget too)."""
    clock = _Clock()

    def model(declaration, backend, warm, budget_s):  # type: ignore[no-untyped-def]
        seconds = seconds_of(declaration)
        clock.now += seconds * (3 if warm else 2)
        return seconds

    monkeypatch.setattr(estimate_module, "_time_one_call", model)
    monkeypatch.setattr(estimate_module, "time", clock)
    return estimate_run(FP32_4096, backend="numpy", iterations=50), clock


def _work_s(declaration) -> float:  # type: ignore[no-untyped-def]
    return float(declaration.workload().flop()) / 20e9  # the call itself at 20 GFLOP/s


def test_a_fixed_cost_that_jitters_more_than_small_sizes_grow_is_still_told_apart(monkeypatch) -> None:
    """A loaded machine: ~40 ms a call whatever the size, jittering by ±3 ms, so a small probe size can time
    faster than the one below it. The 4096³ fp32 GEMM takes 6.9 s a call, not the hours that scaling a 64³
    probe's fixed cost by 4096× its work predicts."""
    calls = [0]

    def seconds_of(declaration):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return 0.040 + (0.003 if calls[0] % 2 else -0.003) + _work_s(declaration)

    estimate, clock = _estimate_with_synthetic_calls(monkeypatch, seconds_of)
    truth = 0.040 + _work_s(parse(FP32_4096))
    assert estimate.per_call_s is not None and truth / 2 < estimate.per_call_s < 2 * truth
    assert clock.now <= 2 * estimate_module.PROBE_BUDGET_S  # the probe kept to its budget (a call may overrun it)


def test_the_fit_splits_fixed_and_growing_parts_from_every_probe_size() -> None:
    # three sizes on a line a + b·work (shares of the declared work: a = 40 ms, b = 4 s), with ±2 ms of noise
    points = [(1 / 512, 0.040 + 4 / 512 + 0.001), (1 / 64, 0.040 + 4 / 64 - 0.002), (1 / 8, 0.040 + 4 / 8 + 0.001)]
    fixed, per_work = estimate_module.fit_fixed_and_per_work(points)
    assert fixed == pytest.approx(0.040, abs=0.003) and per_work == pytest.approx(4.0, rel=0.02)
    # times that do not grow: all fixed, nothing to scale
    assert estimate_module.fit_fixed_and_per_work([(1 / 512, 0.043), (1 / 64, 0.037)]) == (pytest.approx(0.040), 0.0)
    # one size: nothing tells the parts apart, so all of it grows with the work (the bound is the floor)
    assert estimate_module.fit_fixed_and_per_work([(1 / 8, 0.5)]) == (0.0, pytest.approx(4.0))


def test_a_load_spike_on_one_probe_call_is_timed_again_not_scaled(monkeypatch) -> None:
    """Another process takes the cores for one call (+120 ms): far more than the work grew, so that size is
    timed again, and the estimate stays near the truth instead of scaling the spike by the work."""
    spiked: list[str] = []

    def seconds_of(declaration):  # type: ignore[no-untyped-def]
        if declaration.params["M"] == 128 and not spiked:
            spiked.append(str(declaration))
            return _work_s(declaration) + 0.120
        return _work_s(declaration)

    estimate, _ = _estimate_with_synthetic_calls(monkeypatch, seconds_of)
    truth = _work_s(parse(FP32_4096))
    assert spiked and estimate.per_call_s is not None and truth / 2 < estimate.per_call_s < 2 * truth


def test_a_fixed_cost_that_starts_at_one_size_is_fitted_from_there(monkeypatch) -> None:
    """BLAS goes multi-threaded from 128³ on, and on a busy machine each such call pays ~140 ms of thread
    wake-ups that the single-threaded smaller sizes never did: the jump is a fixed cost, not work to scale."""
    estimate, _ = _estimate_with_synthetic_calls(
        monkeypatch, lambda declaration: _work_s(declaration) + (0.140 if declaration.params["M"] >= 128 else 0.0)
    )
    truth = 0.140 + _work_s(parse(FP32_4096))
    assert estimate.per_call_s is not None and truth / 2 < estimate.per_call_s < 2 * truth
    assert estimate.probe is not None and estimate.probe.fixed_s == pytest.approx(0.140, rel=0.05)


def test_an_estimate_of_a_run_that_cannot_happen_says_why_and_offers_only_runs_that_can(monkeypatch) -> None:
    from workbench.measure.backends import NumpyBackend
    from workbench.measure.estimate import alternatives, estimate_run

    monkeypatch.setattr(NumpyBackend, "free_memory", lambda self: (2**30, "set by the test"))
    for declaration, reason in (
        ("gemm(M=1024, N=1024, K=1024, dtype=bf16)", "NumPy has no bf16"),
        ("gemm(M=16384, N=16384, K=16384, dtype=fp32)", "reduce the sizes"),  # 3 GiB of operands in 1 GiB
    ):
        estimate = estimate_run(declaration, backend="numpy", probe=False)
        assert reason in estimate.refused and estimate.total_s is None and not estimate.long
        for offer in alternatives(estimate, budget_s=0.05):
            assert not offer.estimate.refused and offer.estimate.total_s is not None
