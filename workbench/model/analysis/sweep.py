"""Bounds over many shapes at once: `[analyze(each)]` as numpy arrays, every term included.

A vectorised fast path computes work, traffic and every term's time for all
points on float64 arrays, with the same rates (rates.py) and the same rule
for combining terms (terms.py) as analyze(); any point the arrays cannot vouch
for — a size below its minimum, beyond 2^53, near a limit, an operation with
checks of its own, a tile keyword swept, a collective's link — is taken the
exact way, through analyze() itself, so a sweep refuses and figures exactly
what analyze() would.

A point whose tensors are clearly beyond the device's memory is one analyze()
refuses whatever else it checks first, so the arrays refuse it without
analysing it (a 10,000-size sweep up to 2^30 leaves some 6,600 sizes out:
4.4 s when each went through analyze()); the error listed for it is
analyze()'s own at that point, taken when first read (PointErrors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from workbench.model.analysis.core import analyze, physical_work_of, resident_on_host, time_terms
from workbench.model.analysis.rates import Setting, resolve_setting
from workbench.model.analysis.terms import Term, limiters, side_times
from workbench.model.declare import LAUNCH_FIELDS, Declaration, parse
from workbench.model.devices.interfaces import HBM
from workbench.errors import DeclarationError, UnitError, WorkbenchError
from workbench.model.ops.base import Param


NO_BOUND = "no bound at this point: a term has no rate (resident=host on a device that names no host link)"


@dataclass(frozen=True)
class SweepTerm:
    """One term over every point of a sweep: its amount and its time (NaN where a point is refused)."""

    name: str
    kind: str  # "compute" | "transfer"
    resource: str
    title: str
    unit: str  # "FLOP" | "B"
    amount: Any  # float64 array
    time_s: Any  # float64 array




class PointErrors(Sequence):
    """Each point's refusal: None for a point with figures, else the exception analyze() raises there.

    A point the arrays refuse outright (its tensors clearly beyond the
    device's memory) is not analysed while sweeping: the error is taken from
    analyze() at that point when it is first read, so a sweep of 10,000 sizes
    does not build 6,000 declarations to say why they are left out, and the
    error is still the very one analyze() raises (the sweep's tests hold the
    two to that). `refused` is the mask of points without figures.
    """

    def __init__(self, known: dict[int, WorkbenchError], deferred: Any, analyse_point: Any) -> None:
        """`known`: the refusals met while sweeping, by index; `deferred`: the points refused from the arrays."""
        self._known = known
        self._deferred = deferred  # bool array: refused by the arrays, error read from analyze() on demand
        self._analyse_point = analyse_point  # index -> analyze()'s result at that point (raises its refusal)
        self.refused = deferred.copy()
        self.refused[list(known)] = True

    def __len__(self) -> int:
        return len(self._deferred)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        index = range(len(self))[index]  # negative indices, and IndexError beyond the end
        if index not in self._known and self._deferred[index]:
            self._known[index] = self._refusal_at(index)
        return self._known.get(index)

    def _refusal_at(self, index: int) -> WorkbenchError:
        try:
            self._analyse_point(index)
        except WorkbenchError as exc:
            return exc
        raise AssertionError(f"sweep refused point {index} as beyond memory, but analyze() accepts it")

    def first(self) -> WorkbenchError | None:
        """The first point's refusal, or None when every point has figures."""
        import numpy as np

        found = np.flatnonzero(self.refused)
        return self[int(found[0])] if found.size else None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, list, PointErrors)):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PointErrors({tuple(self)!r})"


@dataclass(frozen=True)
class Sweep:
    """Bounds over many shapes at once: numpy float64 arrays, one entry per point.

    A point analyze() would refuse (a swept size below its minimum, a filter
    larger than its padded image, tensors beyond the device's memory) holds
    NaN, and its error — the very exception analyze() raises — is in `errors`.
    """

    flop: Any
    bytes: Any
    intensity: Any
    compute_time: Any
    memory_time: Any
    bound_time: Any
    errors: Sequence[WorkbenchError | None] = ()  # a PointErrors from sweep()
    footprint: Any = None  # bytes resident at once (each distinct tensor stored once)
    terms: tuple[SweepTerm, ...] = ()  # every term analyze() gives at these points, in analyze()'s order
    limiter: Any = None  # object array: analyze()'s limiter at each point ("compute" | "memory" | "link"), None where refused

    def term(self, name: str) -> SweepTerm | None:
        """The term called `name` ("compute", "hbm", "smem", ...), or None."""
        return next((term for term in self.terms if term.name == name), None)

    @property
    def valid(self) -> Any:
        """Boolean mask of the points with figures."""
        import numpy as np

        if isinstance(self.errors, PointErrors):
            return ~self.errors.refused
        return np.array([error is None for error in self.errors], dtype=bool)

    @property
    def first_error(self) -> WorkbenchError | None:
        if isinstance(self.errors, PointErrors):
            return self.errors.first()
        return next((error for error in self.errors if error is not None), None)

    def limiter_changes(self) -> list[int]:
        """Indices i where the limiter (analyze()'s, point by point) differs from entry i − 1's, both points having one."""
        import numpy as np

        if self.limiter is None:
            return []
        limiter = np.asarray(self.limiter, dtype=object)
        differ = np.flatnonzero(limiter[1:] != limiter[:-1]) + 1  # one pass over the points; few differ
        return [int(i) for i in differ if limiter[i] is not None and limiter[i - 1] is not None]

    def first_beyond(self, capacity: float | None) -> int | None:
        """The first index whose footprint exceeds `capacity` bytes (a device's memory), or None."""
        import numpy as np

        if capacity is None or self.footprint is None:
            return None
        over = np.nonzero(np.asarray(self.footprint) > capacity)[0]
        return int(over[0]) if over.size else None


# Swept values above this are taken the exact (integer) way: float64 holds every integer up to 2^53.
_EXACT_IN_FLOAT = 2**53


def _plain(value: Any) -> Any:
    """A swept value as a declaration field takes it: numpy scalars as Python values, 64.0 as 64."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _swept_values(decl: Declaration, fields: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """Each swept field's values as a 1-D numpy array, all of one length."""
    import numpy as np

    params = decl.params
    columns: dict[str, Any] = {}
    length = None
    for name, values in fields.items():
        if name not in params:
            raise DeclarationError(f"{decl.op} has no field '{name}' to sweep", field=name)
        array = np.array(values)  # a copy: refusals read later (PointErrors) see the values swept, whatever the caller does
        if array.ndim != 1 or (length is not None and array.shape[0] != length):
            raise DeclarationError("swept fields must be 1-D arrays of one length", field=name)
        length = array.shape[0]
        columns[name] = array
    return columns, length or 0


def _as_float_sizes(array: Any, minimum: int) -> tuple[Any, Any] | None:
    """float64 sizes and the points the arrays cannot vouch for (below `minimum`, not whole, beyond 2^53).

    None when the values are not numbers at all (the exact way then says why).
    """
    import numpy as np

    if array.dtype.kind in "iu":
        floats = array.astype(np.float64)
        doubtful = (array < minimum) | (array > _EXACT_IN_FLOAT)
        return (np.where(doubtful, float(minimum), floats) if doubtful.any() else floats), doubtful
    if array.dtype.kind == "f":
        floats = array.astype(np.float64)
    elif array.dtype.kind == "O" and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in array):
        floats = np.array([float(v) if abs(v) <= _EXACT_IN_FLOAT else math.nan for v in array], dtype=np.float64)
    else:
        return None
    with np.errstate(invalid="ignore"):
        doubtful = ~np.isfinite(floats) | (floats < minimum) | (floats > _EXACT_IN_FLOAT) | (floats != np.floor(floats))
    return np.where(doubtful, float(minimum), floats), doubtful


def _vectorised(decl: Declaration, columns: Mapping[str, Any], setting: Setting, length: int) -> tuple[Any, Any]:
    """Work and traffic of every point at once on float64 arrays, and the points to take the exact way.

    A fast path only: a point is marked for the exact way (analyze() itself)
    whenever the arrays cannot vouch that analyze would accept it — a value
    below its minimum, not whole, beyond 2^53, a tensor or footprint near a
    limit, an operation with checks of its own — and every point when the
    operation's shape depends on the swept field (the count of elementwise
    inputs), when the swept field is an implementation keyword (tile_m), or
    when the implementation model cannot take arrays. An implementation
    model other than compulsory gives its physical FLOP and bytes per
    interface as arrays (implementations.physical_work with `params`).
    """
    import numpy as np

    spec = decl.spec
    every_point = np.ones(length, dtype=bool)
    swept_params = [spec.param(name) or Param(name, "dim") for name in columns]
    if spec.check is not None or any(param.kind != "dim" for param in swept_params):
        return None, every_point
    if any(spec.param(name) is None and not spec.extra_dims for name in columns):
        return None, every_point  # an implementation keyword: its own limits are checked the exact way
    params: dict[str, Any] = dict(decl.params)
    doubtful_size = np.zeros(length, dtype=bool)  # below its minimum, not whole, beyond 2^53: figured at the minimum
    for param in swept_params:
        sizes = _as_float_sizes(columns[param.name], param.minimum)
        if sizes is None:
            return None, every_point
        params[param.name], doubtful = sizes
        doubtful_size |= doubtful
    exact = doubtful_size.copy()
    try:
        workload = spec.build(params)
        flop = _column(workload.flop(setting.convention), length)
        traffic = _column(workload.bytes, length)
        for tensor in workload.tensors:
            exact |= np.asarray(tensor.bytes_each, dtype=np.float64) > 2**60 * (1 - 1e-9)
        footprint = _column(workload.footprint_bytes, length)
        dev = setting.device
        refused = np.zeros(length, dtype=bool)
        if dev is not None and dev.memory_bytes:
            # Clearly beyond the memory (float rounding cannot bring it back): analyze() refuses such a point,
            # for its footprint or for an earlier check of the declaration; which one, the error says when read.
            refused = (footprint > dev.memory_bytes * (1 + 1e-9)) & ~doubtful_size
            exact |= footprint > dev.memory_bytes * (1 - 1e-9)
            exact &= ~refused
        physical = None
        if decl.implementation != "compulsory" or any(name in decl.params for name in LAUNCH_FIELDS):
            swept = {name: params[name] for name in columns}
            physical = physical_work_of(decl, workload, dev, setting.convention, swept)
    except (TypeError, ValueError):
        # The builder needs a plain int for this field (a count of tensors, a branch on a value).
        return None, every_point
    return (workload, flop, traffic, footprint, physical, refused), exact


def _column(values: Any, length: int) -> Any:
    """`values` as a writeable float64 array of `length` entries (a scalar repeated, an array as it is)."""
    import numpy as np

    array = np.asarray(values, dtype=np.float64)
    if array.shape == (length,):
        return array if array.flags.writeable else array.copy()
    return np.full(length, array, dtype=np.float64) if array.ndim == 0 else np.broadcast_to(array, (length,)).copy()


def _fast_terms(decl: Declaration, workload: Any, setting: Setting, flop: Any, traffic: Any, physical: Any) -> list[Term]:
    """analyze()'s terms with array amounts and times (`time_terms`, the rule analyze() uses too); a sweep of
    resident=host needs the host link's rate at every point."""
    memory = setting.device.memory_name if setting.device is not None else "HBM"
    terms, _path = time_terms(decl, workload, setting, physical, memory, flop, traffic)
    if resident_on_host(decl) and terms[-1].rate is None:
        raise UnitError(NO_BOUND)
    return terms


class _Points:
    """The arrays of a sweep being filled: the fast path's figures first, then each point taken the exact way."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.flop: Any = None  # each NaN-filled when first needed: a sweep the fast path covers allocates none
        self.traffic: Any = None
        self.footprint: Any = None
        self.bound: Any = None
        self.limiter: Any = None
        self.amounts: dict[str, Any] = {}
        self.times: dict[str, Any] = {}
        self.shapes: dict[str, Term] = {}  # each term's name, kind, resource and title, in analyze()'s order

    def take_fast(self, terms: list[Term], exact: Any, refused: Any, figures: tuple[Any, Any, Any], overlap: Any) -> None:
        """Every point but the `exact` ones from the vectorised terms (those hold NaN until filled).

        `refused` points (clearly beyond the device's memory) hold NaN for good,
        but their footprint, so the view can shade them.
        """
        import numpy as np

        without = exact | refused
        some_without = bool(without.any())

        def fast_only(values: Any, missing: Any = without) -> Any:
            if some_without:
                return np.where(missing, math.nan, values)
            return _column(values, self.length)

        flop, traffic, footprint = figures
        self.flop, self.traffic, self.footprint = fast_only(flop), fast_only(traffic), fast_only(footprint, exact)
        for term in terms:
            self.shapes[term.name] = term
            self.amounts[term.name] = fast_only(term.amount)
            self.times[term.name] = fast_only(term.time_s)
        filled = [replace(t, amount=self.amounts[t.name], time_s=self.times[t.name]) for t in terms]
        sides = side_times(filled)
        self.bound = overlap.combine_all([time for _side, time, _term in sides])
        self.limiter = limiters(sides)
        if some_without:
            self.limiter[without] = None

    def filled(self) -> "_Points":
        """These points with every figure array allocated (NaN where nothing is known yet)."""
        import numpy as np

        for name in ("flop", "traffic", "footprint", "bound"):
            if getattr(self, name) is None:
                setattr(self, name, np.full(self.length, math.nan))
        if self.limiter is None:
            self.limiter = np.full(self.length, None, dtype=object)
        return self

    def take_exact(self, index: int, result: Any) -> None:
        """Point `index` from analyze()'s own result."""
        import numpy as np

        self.filled()
        self.flop[index], self.traffic[index] = result.flop, result.bytes
        self.bound[index] = result.bound_time
        self.limiter[index] = result.limiter
        self.footprint[index] = result.basis.workload.footprint_bytes if result.basis is not None else math.nan
        for term in result.terms:
            if term.name not in self.shapes:
                self.shapes[term.name] = term
                self.amounts[term.name] = np.full(self.length, math.nan)
                self.times[term.name] = np.full(self.length, math.nan)
            self.amounts[term.name][index] = term.amount
            self.times[term.name][index] = math.nan if term.time_s is None else term.time_s

    def sweep(self, errors: PointErrors) -> Sweep:
        import numpy as np

        self.filled()
        flop, traffic = self.flop, self.traffic
        with np.errstate(divide="ignore", invalid="ignore"):
            intensity = flop / traffic  # NaN where either is NaN
        no_traffic = traffic == 0
        if no_traffic.any():
            intensity[no_traffic] = np.inf  # an operation with no traffic: infinite intensity, as analyze() has it
        terms = tuple(
            SweepTerm(term.name, term.kind, term.resource, term.title, term.unit, self.amounts[term.name], self.times[term.name])
            for term in self.shapes.values()
        )
        compute_time = self.times["compute"] if "compute" in self.times else np.full(self.length, math.nan)
        memory_time = self.times[HBM] if HBM in self.times else np.full(self.length, math.nan)
        return Sweep(flop, traffic, intensity, compute_time, memory_time,
                     self.bound, errors, self.footprint, terms, self.limiter)


def sweep(
    declaration: str | Declaration,
    fields: Mapping[str, Any],
    device: Any = None,
    rate: Any = None,
    bandwidth: Any = None,
    convention: str = "fma2",
    overlap: Any = "full",
) -> Sweep:
    """Bounds for many values of some fields (e.g. M=N=K over 2^10..2^14): `[analyze(each)]` as arrays.

    Every point is the declaration with the swept fields replaced, validated
    and refused exactly as analyze() would, with the same rate resolution and
    the same rule combining the terms. Points analyze() accepts get float64
    figures (counts above 2^53 are rounded: sweeps are for plots; analyze()
    gives exact integers), every term included; refused points get NaN and
    their error. Without a device or entered rates there are no bounds to
    sweep (UnitError).
    """
    import numpy as np

    decl = parse(declaration) if isinstance(declaration, str) else declaration
    columns, length = _swept_values(decl, fields)
    setting = resolve_setting(device, rate, bandwidth, convention, overlap)
    if setting.device is None and (setting.entered_rate is None or setting.entered_bandwidth is None):
        raise UnitError("a sweep needs a compute rate and a bandwidth: choose a device or enter them")
    if resident_on_host(decl) and setting.device is None:
        raise UnitError("a sweep of resident=host needs a device with a host link: choose one")
    errors: dict[int, WorkbenchError] = {}  # the refusals met here, by index (PointErrors reads the rest from analyze())
    fast, exact = _vectorised(decl, columns, setting, length)
    refused = np.zeros(length, dtype=bool)  # beyond the device's memory, known from the arrays alone
    if decl.workload().link_traffic is not None:
        exact = np.ones(length, dtype=bool)  # the link term and nccl-tests' figures: analyze() per point
    points = _Points(length)
    if fast is not None and not exact.all():
        workload, fast_flop, fast_traffic, fast_footprint, physical, refused = fast
        try:
            terms = _fast_terms(decl, workload, setting, fast_flop, fast_traffic, physical)
        except WorkbenchError as exc:  # the device has no rate for this path: every point says so
            for index in np.flatnonzero(~exact & ~refused):
                errors[int(index)] = exc
            points.filled().footprint[~exact] = fast_footprint[~exact]  # still shaded where beyond memory
        else:
            points.take_fast(terms, exact, refused, (fast_flop, fast_traffic, fast_footprint), setting.overlap)

    def analyse_point(index: int) -> Any:
        """analyze() of point `index`, refusing as analyze() does (and a point it leaves without a bound)."""
        point = decl.replace(**{name: _plain(values[index]) for name, values in columns.items()})
        result = analyze(point, setting.device, setting.entered_rate, setting.entered_bandwidth, convention, setting.overlap)
        if result.bound_time is None:
            raise UnitError(NO_BOUND)
        return result

    for index in np.flatnonzero(exact):
        try:
            result = analyse_point(int(index))
        except WorkbenchError as exc:
            errors[int(index)] = exc
            _footprint_of_refused(decl, columns, index, points)
            continue
        points.take_exact(index, result)
    return points.sweep(PointErrors(errors, refused, analyse_point))


def limiter_crossover(
    declaration: str | Declaration,
    fields: Sequence[str],
    below: int,
    above: int,
    device: Any = None,
    convention: str = "fma2",
    overlap: Any = "full",
) -> int | None:
    """The first size where analyze()'s limiter changes, exactly: the smallest integer in (below, above] whose
    limiter differs from the one at `below` (every swept field set to that size), by bisection between two
    points of a sweep whose limiters differ. None where a size between them is refused or has no limiter.
    """
    decl = parse(declaration) if isinstance(declaration, str) else declaration
    setting = resolve_setting(device, None, None, convention, overlap)

    def limiter(size: int) -> str | None:
        try:
            return analyze(decl.replace(**{name: size for name in fields}), setting.device, None, None, convention,
                           setting.overlap).limiter
        except WorkbenchError:
            return None

    low, high = int(below), int(above)
    first = limiter(low)
    if first is None or low >= high or limiter(high) in (None, first):
        return None
    while high - low > 1:  # limiter(low) == first, limiter(high) != first
        middle = (low + high) // 2
        found = limiter(middle)
        if found is None:
            return None
        if found == first:
            low = middle
        else:
            high = middle
    return high


def _footprint_of_refused(decl: Declaration, columns: Mapping[str, Any], index: int, points: _Points) -> None:
    """A point refused for its size still has a footprint, so the view can mark "beyond memory"."""
    try:
        points.filled().footprint[index] = decl.replace(**{name: _plain(values[index]) for name, values in columns.items()}).workload().footprint_bytes
    except WorkbenchError:
        pass


__all__ = ["PointErrors", "Sweep", "SweepTerm", "sweep"]
