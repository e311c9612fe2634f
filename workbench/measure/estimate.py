"""How long a measurement will take, before it starts: from the bound and from a short probe.

A run makes one untimed first call, a warm-up (at least 2 calls and 0.1 s,
at most 50) and the timed iterations. The time of one call is estimated two
ways:

- the **bound**: the analysed lower bound on the device model the run is
  compared with. A real call cannot beat it, so it is a floor, and on the
  CPU it can be far too optimistic: NumPy's fp16 matrix product has no BLAS
  path and runs ~100× below the generic CPU's rates.
- a **probe**: the same kernel at a smaller size (every size field halved
  until the work is small), allocated, called once untimed and timed once;
  sizes grow while the probe stays short and the time budget allows. The
  times of every size are fitted as a + b·work (`fit_fixed_and_per_work`):
  the fixed part a (a busy machine's BLAS threads waking up) is paid once a
  call, only b·work is scaled by the ratio of work (the larger of the FLOP
  and the bytes ratios) to the declared size.

The probe is preferred where there is one; the estimate never goes below
the bound. Above `LONG_RUN_S` the window asks before running, offering a
smaller size and, on the CPU, a faster dtype (`alternatives`). Qt-free.

    estimate = estimate_run("gemm(M=N=K=4096, dtype=fp16)", backend="numpy")
    estimate.total_s, estimate.long, estimate.text()
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

from workbench.model.declare import Declaration, parse
from workbench.errors import WorkbenchError
from workbench.measure.run import (
    AUTO_WARMUP_MAX_CALLS,
    AUTO_WARMUP_MIN_CALLS,
    AUTO_WARMUP_S,
    DEFAULT_ITERATIONS,
)
from workbench.model.units import format_time

LONG_RUN_S = 30.0  # above this the window asks before a run starts
PROBE_BUDGET_S = 0.5  # wall time the probes of one estimate may take
PROBE_LONG_ENOUGH_S = 0.01  # a probe call this long is timed well enough to scale from
PROBE_SMALL_FLOP = 2e6  # the smallest probe: at most this much work …
PROBE_SMALL_BYTES = 256 * 1024  # … and this many compulsory bytes
PROBE_REPEATS = 3  # a probe size is timed up to this many times (the fastest counts): a loaded machine is noisy
PROBE_MIN_DIM = 8  # size fields are not halved below this
SUPERLINEAR = 4.0  # a size that times this many times more than its work grew is timed again (a load spike)
FASTER_DTYPES = {"fp16": "fp32", "bf16": "fp32"}  # on the CPU: 16-bit products have no BLAS path, fp32 has


@dataclass(frozen=True)
class Probe:
    """The kernel timed at a smaller size, and what that predicts for the declared size."""

    declaration: str
    call_s: float
    scale: float  # work of the declared size over the work of the probe
    fixed_s: float = 0.0  # the part of a call that does not grow with the work (library start-up, thread wake-ups)
    variable_s: float | None = None  # the part of the probe's call that grows with the work (None: call_s − fixed_s)

    @property
    def predicted_call_s(self) -> float:
        """One call at the declared size: the fixed part, plus the growing part scaled by the work."""
        growing = self.call_s - self.fixed_s if self.variable_s is None else self.variable_s
        return self.fixed_s + growing * self.scale


@dataclass(frozen=True)
class RunEstimate:
    """How long one run of a declaration should take, and how that was worked out."""

    declaration: str
    backend: str
    iterations: int
    warmup_calls: int
    per_call_s: float | None  # the expected time of one call (None: no bound and no probe)
    bound_call_s: float | None  # the bound of one call on the device model (a floor)
    bound_device: str  # the device model the bound is on ("" without one)
    probe: Probe | None
    note: str = ""  # why there is no probe, or what limits the estimate
    refused: str = ""  # why this run cannot happen here at all (dtype, memory): nothing to offer or run


    @property
    def calls(self) -> int:
        """Every call the run makes: the untimed first call, the warm-up and the timed iterations."""
        return 1 + self.warmup_calls + self.iterations

    @property
    def total_s(self) -> float | None:
        return None if self.per_call_s is None else self.per_call_s * self.calls

    @property
    def long(self) -> bool:
        """True when the run is expected to take longer than LONG_RUN_S."""
        return self.total_s is not None and self.total_s > LONG_RUN_S

    @property
    def basis(self) -> str:
        return "probe" if self.probe is not None else "bound" if self.bound_call_s is not None else ""

    def text(self) -> str:
        """'about 3.1 h: 53 calls of about 3.5 min each (probe: gemm(…) took 51 ms, ×4096 the work)'."""
        if self.per_call_s is None:
            return f"no estimate: {self.note}" if self.note else "no estimate"
        total = format_duration(self.total_s or 0.0)
        head = f"{'about' if self.probe is not None else 'at least'} {total}: {self.calls} calls of " \
               f"{'about' if self.probe is not None else 'at least'} {format_duration(self.per_call_s)} each"
        if self.probe is not None:
            how = f"probe: {self.probe.declaration} took {format_duration(self.probe.call_s)}"
            if self.probe.scale != 1:
                how += f", ×{format_scale(self.probe.scale)} the work"
                if self.probe.fixed_s >= 0.05 * self.probe.call_s:
                    how += f" beyond a fixed {format_duration(self.probe.fixed_s)} a call"
            if self.bound_call_s is not None:
                how += f"; bound {format_duration(self.bound_call_s)} a call on {self.bound_device}"
        elif self.bound_call_s is not None:
            how = f"from the bound on {self.bound_device}" + (f"; {self.note}" if self.note else "")
        else:
            how = self.note
        return f"{head} ({how})"


@dataclass(frozen=True)
class Alternative:
    """A quicker run the window offers instead of a long one."""

    kind: str  # "smaller" or "dtype"
    declaration: Declaration
    estimate: RunEstimate
    label: str  # 'Smaller size: gemm(M=1024, …), about 12 s'


def format_duration(seconds: float) -> str:
    """A duration for people: '51 ms', '4.2 s', '3.5 min', '3.1 h', '2.4 days'."""
    if not math.isfinite(seconds):
        return "forever"
    if seconds < 60:
        return format_time(seconds, digits=2)
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def format_scale(scale: float) -> str:
    return f"{scale:,.0f}" if scale >= 10 else f"{scale:.2g}"


def warmup_calls(per_call_s: float | None, warmup: int | None = None) -> int:
    """The warm-up calls the protocol makes: the fixed count, or ≥ 2 calls and ≥ 0.1 s, at most 50."""
    if warmup is not None:
        return warmup
    if per_call_s is None or per_call_s <= 0:
        return AUTO_WARMUP_MIN_CALLS
    return int(min(AUTO_WARMUP_MAX_CALLS, max(AUTO_WARMUP_MIN_CALLS, math.ceil(AUTO_WARMUP_S / per_call_s))))


def _work(declaration: Declaration, convention: str) -> tuple[float, float]:
    workload = declaration.workload()
    return float(workload.flop(convention)), float(workload.bytes)


def probe_ladder(declaration: Declaration, convention: str = "fma2") -> list[Declaration]:
    """Smaller versions of `declaration`, smallest first, each size field halved per step (≥ 8), ending with
    the declaration itself; the smallest has at most PROBE_SMALL_FLOP and PROBE_SMALL_BYTES of work if it can."""
    dims = [p.name for p in declaration.spec.params if p.kind == "dim"]
    ladder = [declaration]
    current = declaration
    while True:
        flop, nbytes = _work(current, convention)
        if flop <= PROBE_SMALL_FLOP and nbytes <= PROBE_SMALL_BYTES:
            break
        changes = {}
        for name in dims:
            value = current.params.get(name)
            if isinstance(value, int) and value > PROBE_MIN_DIM:
                changes[name] = max(PROBE_MIN_DIM, value // 2)
        if not changes:
            break
        try:
            current = current.replace(**changes)
        except WorkbenchError:
            break
        ladder.append(current)
    return ladder[::-1]


def _halved(declaration: Declaration) -> Declaration | None:
    """The declaration with every size field above 1 halved (None when none can be, or it is refused)."""
    changes = {p.name: max(1, declaration.params[p.name] // 2) for p in declaration.spec.params
               if p.kind == "dim" and isinstance(declaration.params.get(p.name), int) and declaration.params[p.name] > 1}
    if not changes:
        return None
    try:
        return declaration.replace(**changes)
    except WorkbenchError:
        return None


def _time_one_call(declaration: Declaration, backend: Any, warm: bool, budget_s: float) -> float:
    """Allocate the kernel at this size, call it (once untimed when `warm`), and time it: the fastest of
    up to PROBE_REPEATS calls that fit `budget_s` (one call is always timed)."""
    from workbench.measure.kernels import kernel_for
    from workbench.measure.run import refuse_if_too_large

    kernel = kernel_for(declaration, backend)
    refuse_if_too_large(declaration, backend, kernel)
    try:
        kernel.allocate(0, lambda: False)
        if warm:
            backend.wall_time(kernel)
        times = [backend.wall_time(kernel)]
        while len(times) < PROBE_REPEATS and sum(times) + min(times) <= budget_s:
            times.append(backend.wall_time(kernel))
        return min(times)
    finally:
        kernel.release()


def fit_fixed_and_per_work(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(a, b) of the least-squares line seconds = a + b·work through (work, seconds) points, both ≥ 0.

    Times that do not grow with the work are all fixed (b = 0); one point, or one work, cannot tell the parts
    apart, so all of it grows (a = 0). A line that would start below zero is fitted through the origin.
    """
    if not points:
        return 0.0, 0.0
    n = len(points)
    mean_w = sum(w for w, _ in points) / n
    mean_t = sum(t for _, t in points) / n
    spread = sum((w - mean_w) ** 2 for w, _ in points)
    if n < 2 or spread <= 0:
        return 0.0, (mean_t / mean_w if mean_w > 0 else 0.0)
    per_work = sum((w - mean_w) * (t - mean_t) for w, t in points) / spread
    if per_work <= 0:
        return mean_t, 0.0
    fixed = mean_t - per_work * mean_w
    if fixed < 0:
        return 0.0, sum(w * t for w, t in points) / sum(w * w for w, _ in points)
    return fixed, per_work


def probe_call_time(declaration: Declaration, backend: Any, convention: str = "fma2",
                    budget_s: float = PROBE_BUDGET_S) -> Probe:
    """Time the kernel at growing sizes (probe_ladder) and predict one call at the declared size.

    Every size's time is fitted as a fixed part plus a part per unit of work (`fit_fixed_and_per_work`): a
    busy machine's BLAS threads waking up cost ~40 ms a call whatever the size, and jitter more than a small
    size's work, so a size may time faster than the one below it. The ladder goes on while the growing part
    is shorter than 10 ms or than half the fixed part, until the next size would not fit the budget, or at
    the declared size; only the growing part is scaled up. A size that times far more than its work grew
    (another process took the cores for that call) is timed again, the faster time kept.
    """
    ladder = probe_ladder(declaration, convention)
    full_flop, full_bytes = _work(declaration, convention)

    def share(candidate: Declaration) -> float:
        """The candidate's work as a share of the declared size's: the smaller of the FLOP and byte shares
        (the declared size has ×1/share the work — the larger ratio, as the time of either side may rule)."""
        flop, nbytes = _work(candidate, convention)
        shares = [amount / full for amount, full in ((flop, full_flop), (nbytes, full_bytes)) if full > 0]
        return min(shares) if shares and min(shares) > 0 else 1.0

    started = time.perf_counter()
    timed: list[tuple[Declaration, float, float]] = []  # (size, call seconds, share of the work)
    regime = 0  # the first entry of `timed` in the current regime: the sizes the fit is taken over
    fixed = per_work = 0.0
    for step, candidate in enumerate(ladder):
        remaining = budget_s - (time.perf_counter() - started)
        call_s = _time_one_call(candidate, backend, step == 0, remaining / 4)
        if step == 0 and call_s >= PROBE_LONG_ENOUGH_S:
            # Already slow at the smallest size: likely a fixed cost. A size smaller still tells it apart.
            smaller = _halved(candidate)
            if smaller is not None:
                timed.append((smaller, _time_one_call(smaller, backend, False, remaining / 4), share(smaller)))
        if timed and call_s > SUPERLINEAR * timed[-1][1] * share(candidate) / timed[-1][2]:
            # far more than the work grew: another process took the cores for that call; time it again
            left = budget_s - (time.perf_counter() - started)
            if left > 2 * call_s:
                call_s = min(call_s, _time_one_call(candidate, backend, False, left / 4))
            if call_s > SUPERLINEAR * timed[-1][1] * share(candidate) / timed[-1][2]:
                # still: the library changed regime at this size (BLAS going multi-threaded on a busy machine
                # pays a wake-up the smaller sizes never did). The sizes below say nothing about this regime's
                # fixed cost, so the fit starts here, with the time to time two more sizes.
                regime = len(timed)
                budget_s = max(budget_s, time.perf_counter() - started + 6 * call_s)
        timed.append((candidate, call_s, share(candidate)))
        points = timed[regime:]
        fixed, per_work = fit_fixed_and_per_work([(work, seconds) for _, seconds, work in points])
        if step + 1 == len(ladder):
            break
        growing = per_work * timed[-1][2]
        if len(points) >= 2 and growing >= max(PROBE_LONG_ENOUGH_S, 0.5 * fixed):
            break
        # the next size by the fit; while nothing grows yet (or one size alone), at least this call again
        next_call = call_s if len(points) < 2 else max(fixed + per_work * share(ladder[step + 1]), call_s)
        if time.perf_counter() - started + 2 * next_call > budget_s:  # allocation and a call or two, next size
            break
    candidate, call_s, work = timed[-1]
    return Probe(str(candidate), call_s, 1.0 / work, fixed, per_work * work)


def _bound_call(declaration: Declaration, backend_kind: str, device: Any, convention: str,
                overlap: Any) -> tuple[float | None, str, str]:
    """The bound of one call on the device the run is compared with: (seconds, device name, note)."""
    from workbench.model.analysis import analyze

    try:
        if device in (None, "auto"):
            if backend_kind != "cpu":
                return None, "", "the bound is taken on the GPU the run finds"
            from workbench.model.devices.provenance import cpu_catalogue_device

            device = cpu_catalogue_device()
        analysis = analyze(declaration, device=device, convention=convention, overlap=overlap)
    except (WorkbenchError, ImportError) as exc:
        return None, "", f"no bound: {exc}"
    bound = analysis.bound_time
    name = getattr(analysis.device, "name", "") if getattr(analysis, "device", None) is not None else ""
    name = name or str(getattr(device, "name", device))
    return (float(bound) if bound is not None else None), name.split(" (")[0], ""


def estimate_run(
    declaration: str | Declaration,
    *,
    backend: str | Any = "numpy",
    iterations: int = DEFAULT_ITERATIONS,
    warmup: int | None = None,
    device: Any = "auto",
    convention: str = "fma2",
    overlap: Any = "full",
    probe: bool = True,
    budget_s: float = PROBE_BUDGET_S,
) -> RunEstimate:
    """How long a run of `declaration` should take. `probe`: time the kernel at a small size (CPU backends;
    a GPU run is estimated from its bound alone, since a probe there would pay compilation and start-up)."""
    from workbench.measure.backends import select_backend

    decl = parse(declaration) if isinstance(declaration, str) else declaration
    chosen = select_backend(backend) if isinstance(backend, str) else backend
    refused = _refusal(decl, chosen)
    if refused:  # a dtype the backend lacks, sizes beyond its memory, a RawKernel on NumPy: said before Run
        return RunEstimate(declaration=str(decl), backend=chosen.name, iterations=iterations,
                           warmup_calls=warmup_calls(None, warmup), per_call_s=None, bound_call_s=None,
                           bound_device="", probe=None, note=refused, refused=refused)
    bound_call, device_name, note = _bound_call(decl, chosen.kind, device, convention, overlap)
    measured: Probe | None = None
    if probe and chosen.kind == "cpu":
        try:
            measured = probe_call_time(decl, chosen, convention, budget_s)
        except WorkbenchError as exc:  # unsupported here, or too large: the run would say so itself
            note = f"no probe: {exc}"
    per_call = measured.predicted_call_s if measured is not None else bound_call
    if per_call is not None and bound_call is not None:
        per_call = max(per_call, bound_call)
    return RunEstimate(
        declaration=str(decl),
        backend=chosen.name,
        iterations=iterations,
        warmup_calls=warmup_calls(per_call, warmup),
        per_call_s=per_call,
        bound_call_s=bound_call,
        bound_device=device_name,
        probe=measured,
        note=note,
    )


def _refusal(decl: Declaration, backend: Any) -> str:
    """Why `backend` cannot measure `decl` at all (the kernel's or the memory check's one-line refusal), or ''."""
    from workbench.measure.errors import MemoryRefused, UnsupportedMeasurement
    from workbench.measure.kernels import kernel_for
    from workbench.measure.run import refuse_if_too_large

    try:
        refuse_if_too_large(decl, backend, kernel_for(decl, backend))
    except (UnsupportedMeasurement, MemoryRefused) as exc:
        return str(exc)
    return ""


def rescaled(estimate: RunEstimate, declaration: Declaration, convention: str = "fma2",
             device: Any = "auto", overlap: Any = "full") -> RunEstimate:
    """The estimate of another size of the same kernel, scaled from `estimate`'s probe (no new probe)."""
    from workbench.measure.backends import select_backend

    backend = select_backend(estimate.backend)
    refused = _refusal(declaration, backend)
    if refused:
        return RunEstimate(str(declaration), estimate.backend, estimate.iterations, warmup_calls(None, None), None,
                           None, "", None, note=refused, refused=refused)
    bound_call, device_name, note = _bound_call(declaration, backend.kind, device, convention, overlap)
    measured = None
    per_call = bound_call
    if estimate.probe is not None:
        probe_flop, probe_bytes = _work(parse(estimate.probe.declaration), convention)
        flop, nbytes = _work(declaration, convention)
        scale = max(flop / probe_flop if probe_flop else 1.0, nbytes / probe_bytes if probe_bytes else 1.0)
        measured = Probe(estimate.probe.declaration, estimate.probe.call_s, scale, estimate.probe.fixed_s,
                         estimate.probe.variable_s)
        predicted = measured.predicted_call_s
        per_call = predicted if bound_call is None else max(predicted, bound_call)
    return RunEstimate(str(declaration), estimate.backend, estimate.iterations,
                       warmup_calls(per_call, None), per_call, bound_call, device_name, measured, note)


def _without_blas(declaration: Declaration, backend_name: str) -> bool:
    """True when the kernel of `declaration` runs without BLAS on this backend (NumPy's 16-bit products):
    the case where a wider dtype is much faster, whatever a probe on a busy machine says."""
    from workbench.measure.backends import select_backend
    from workbench.measure.kernels import kernel_for

    try:
        backend = select_backend(backend_name)
        return backend.kind == "cpu" and "no BLAS" in kernel_for(declaration, backend).algorithm()
    except WorkbenchError:
        return False


def estimate_total(estimates: Sequence[RunEstimate]) -> float | None:
    """The time of a job of several runs (a sweep); None when one has no estimate."""
    totals = [e.total_s for e in estimates]
    return None if any(t is None for t in totals) else float(sum(t for t in totals if t is not None))


def alternatives(estimate: RunEstimate, *, convention: str = "fma2", device: Any = "auto", overlap: Any = "full",
                 limit_s: float = LONG_RUN_S, budget_s: float = PROBE_BUDGET_S) -> list[Alternative]:
    """Quicker runs to offer instead of a long one: the largest smaller size (every size field halved
    together) expected within `limit_s`, and, where the kernel has no BLAS path (NumPy's fp16 and bf16
    matrix products), the same size in fp32, with its own probed estimate."""
    declaration = parse(estimate.declaration)
    offers: list[Alternative] = []
    for smaller in reversed(probe_ladder(declaration, convention)[:-1]):
        guess = rescaled(estimate, smaller, convention, device, overlap)
        if guess.total_s is not None and guess.total_s <= limit_s:
            offers.append(Alternative("smaller", smaller, guess,
                                      f"Smaller size: {smaller}, {guess.text().split(':')[0]}"))
            break
    dtype = declaration.params.get("dtype")
    faster = FASTER_DTYPES.get(dtype) if isinstance(dtype, str) else None
    if faster is not None and _without_blas(declaration, estimate.backend):
        dtype_fields = {p.name for p in declaration.spec.params if p.kind == "dtype"}
        try:
            other = declaration.replace(**{name: faster for name, value in declaration.params.items()
                                           if name in dtype_fields and value == dtype})
            guess = estimate_run(other, backend=estimate.backend, iterations=estimate.iterations, device=device,
                                 convention=convention, overlap=overlap, budget_s=budget_s)
        except WorkbenchError:
            guess = None
        if guess is not None and guess.total_s is not None:
            quicker = estimate.total_s is None or guess.total_s < estimate.total_s
            head = f"Faster dtype: {faster}" if quicker else f"{faster} instead"  # a busy machine can mislead a probe
            offers.append(Alternative("dtype", other, guess,
                                      f"{head} (NumPy runs {dtype} matrix products without BLAS), "
                                      f"{guess.text().split(':')[0]}"))
    return offers
