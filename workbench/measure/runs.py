"""One run record for the whole app, and the one function that derives every figure of a run.

`Session.runs` stores plain dicts: run records written by `RunRecord.to_dict()`
(version 2 carries the device the run ran on), older version-1 records
(their device is read back from the environment they kept), and looser dicts
from early sessions and hand-written files. `parse_run` reads any of them,
once per dict object, into a typed `Run` that holds only what was measured:
raw samples, the declaration, the status of the reference check, conditions
and provenance. Stored figures (a median, an achieved rate) are never read.

`run_figures(run, context)` derives the figures — median and spread,
achieved bytes/s and FLOP/s, intensity, the bound and the % of it reached,
and the impossible-result flag — from the raw samples, the declaration, the
run's own device and the session's FLOP convention. The Measurement table,
the plots, the reports and the CLI all call it, so they cannot disagree.
The session's device is only a view: a run measured elsewhere keeps its own
device's bound and says so (`device_note`).
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from workbench.model.analysis import Analysis, analyze
from workbench.model.analysis.shortfall import missed_assumption
from workbench.model.declare import Declaration, parse
from workbench.model.devices import Device
from workbench.model.devices.provenance import (
    CPU,
    GPU,
    INFERRED,
    DeviceProvenance,
    catalogue_device,
    provenance_from_environment,
)
from workbench.errors import WorkbenchError
from workbench.identity import ByIdentity
from workbench.measure.errors import MeasurementError
from workbench.measure.record import CANCELLED, INVALID, MAX_SAMPLE_S, OK, RECORD_FORMAT, RECORD_VERSION, WARM, RunRecord
from workbench.measure.stats import TimingStats, per_second, summarize
from workbench.model.plausibility import Evidence, ImpossibleResult, impossible_result, uses_nominal_rate
from workbench.records import to_plain

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.measure.run import RunStarted

UNCHECKED = "unchecked"  # a loose run dict that does not say whether a reference check passed
NEWER = "newer"  # a run record of a version this workbench does not read yet: shown, not judged
OPERATION_NAME_KEY = "operation_name"  # the session operation a run was started from (the window adds it)
DERIVED_KEY = "derived"  # figures written beside a stored run for readers without the app; never read back
STATUS_TEXT = {OK: "passed", INVALID: "INVALID", CANCELLED: "cancelled", UNCHECKED: "not checked",
               NEWER: "written by a newer version"}
_BACKEND_KINDS = {"numpy": CPU, "cupy": GPU}


# ---------------------------------------------------------------- the typed run


@dataclass(frozen=True)
class Run:
    """One stored run as measured: identity, status, raw samples, conditions and the device it ran on."""

    index: int  # position in Session.runs (-1 for a run not stored yet)
    id: str
    declaration_text: str
    declaration: Declaration | None  # None when the stored text no longer parses
    operation_name: str
    backend: str
    where: str  # the backend's description of the device: "CPU: AMD EPYC 9654 (2 logical cores)"
    mode: str
    status: str  # ok, invalid, cancelled or unchecked
    check: str  # the reference check's message, or why there is none
    message: str
    samples_s: tuple[float, ...]
    provenance: DeviceProvenance
    implied_bytes: int | None = None  # bytes this implementation really moves per call, when the record says
    conditions: Mapping[str, Any] | None = None  # what the run ran under, flat, for reports

    @property
    def valid(self) -> bool:
        """Finished, and its reference check passed: the only runs drawn as good."""
        return self.status == OK

    @property
    def status_text(self) -> str:
        """How the window names the status: never 'passed' for a run that is not valid."""
        return STATUS_TEXT.get(self.status, self.status)

    def with_status(self, status: str, check: str) -> "Run":
        """The same run in another state (the live row of a run in progress)."""
        return replace(self, status=status, check=check)


def _samples(value: Any) -> tuple[float, ...]:
    """Raw samples in seconds: a list of finite, non-negative numbers; anything else reads as none."""
    if not isinstance(value, (list, tuple)):
        return ()
    samples = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            continue
        number = float(item)
        if math.isfinite(number) and 0 < number <= MAX_SAMPLE_S:
            samples.append(number)
    return tuple(samples)


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _declaration(text: str) -> Declaration | None:
    try:
        return parse(text)
    except WorkbenchError:
        return None


def record_provenance(record: RunRecord) -> DeviceProvenance:
    """A record's device: as stored (version 2), or read back from the environment a version-1 record kept."""
    if record.provenance is not None:
        return record.provenance
    kind = _BACKEND_KINDS.get(record.backend, "")
    if not kind:
        return DeviceProvenance(kind="", name="", stated_by=INFERRED)
    from workbench.model.devices.provenance import match_catalogue

    stated = provenance_from_environment(kind, record.environment, "", "")
    device, how = match_catalogue(kind, stated.name, stated.compute_capability)
    return replace(stated, catalogue_key=device.key if device else "", matched_by=how)


def run_in_progress(started: "RunStarted", samples_s: Sequence[float], operation_name: str, status: str, check: str) -> Run:
    """The run being measured, as far as it has got (the table's live last row): stored nowhere.

    Its device is the backend's kind only, as for a loose run: the record that
    names the GPU or CPU exactly comes when the run finishes.
    """
    declaration = _declaration(started.declaration)
    return Run(
        index=-1,
        id="in progress",
        declaration_text=started.declaration,
        declaration=declaration,
        operation_name=operation_name or (declaration.op if declaration else "?"),
        backend=started.backend,
        where=started.device,
        mode=started.mode,
        status=status,
        check=check,
        message="",
        samples_s=_samples(list(samples_s)),
        provenance=DeviceProvenance(kind=_BACKEND_KINDS.get(started.backend, ""), name="", stated_by=INFERRED),
    )


def parse_run(data: Mapping[str, Any], index: int) -> Run:
    """One run dict of `Session.runs` as a typed Run (a run record, or a looser dict from an older session)."""
    text = _text(data.get("declaration"))
    declaration = _declaration(text)
    name = data.get(OPERATION_NAME_KEY)
    operation_name = name if isinstance(name, str) and name else (declaration.op if declaration else "?")
    fallback_id = f"run {index + 1}"
    version = data.get("version")
    if data.get("format") == RECORD_FORMAT and type(version) is int and version > RECORD_VERSION:
        newer = f"written by a newer version of the workbench (run record version {version}; this one reads up to {RECORD_VERSION})"
        return Run(
            index=index, id=_id(data.get("id"), fallback_id), declaration_text=text, declaration=declaration,
            operation_name=operation_name, backend=_text(data.get("backend")), where=_text(data.get("device")),
            mode=_text(data.get("mode")), status=NEWER, check=newer, message=newer,
            samples_s=(), provenance=DeviceProvenance(kind="", name="", stated_by=INFERRED),
        )
    if data.get("format") == RECORD_FORMAT:
        try:
            record = RunRecord.from_dict(data)
        except MeasurementError as exc:
            return Run(
                index=index, id=_id(data.get("id"), fallback_id), declaration_text=text, declaration=declaration,
                operation_name=operation_name, backend=_text(data.get("backend")), where=_text(data.get("device")),
                mode=_text(data.get("mode")), status=INVALID, check=f"unreadable record: {exc}", message=str(exc),
                samples_s=(), provenance=DeviceProvenance(kind="", name="", stated_by=INFERRED),
            )
        return Run(
            index=index,
            id=record.id,
            declaration_text=text,
            declaration=declaration,
            operation_name=operation_name,
            backend=record.backend,
            where=record.device,
            mode=record.mode,
            status=record.status,
            check=record.check.message if record.check else (record.message or "no check"),
            message=record.message,
            samples_s=record.samples_s,
            provenance=record_provenance(record),
            implied_bytes=record.kernel.implied_bytes,
            conditions=record.conditions_summary(),
        )
    valid = data.get("valid")
    backend = _text(data.get("backend"))
    conditions = data.get("conditions")
    kind = _BACKEND_KINDS.get(backend, "")
    return Run(
        index=index,
        id=_id(data.get("id"), fallback_id),
        declaration_text=text,
        declaration=declaration,
        operation_name=operation_name,
        backend=backend,
        where=_text(data.get("device")),
        mode=_text(data.get("mode")),
        status=OK if valid is True else INVALID if valid is False else UNCHECKED,
        check="passed (as recorded)" if valid is True else "failed (as recorded)" if valid is False else "no check recorded",
        message=_text(data.get("message")),
        samples_s=_samples(data.get("samples_s")),
        provenance=DeviceProvenance(kind=kind, name="", stated_by=INFERRED),
        conditions=dict(conditions) if isinstance(conditions, Mapping) else None,
    )


# Figures early files stored beside the samples, under the names they had then ("achieved_bytes_per_s"; the
# figure is `achieved_byte_per_s` now, as in every JSON key): read and dropped, since the samples give them.
_LOOSE_FIGURES = ("median_s", "p10_s", "p90_s", "achieved_bytes_per_s", "achieved_flop_per_s")
_V1_FLAT_COPIES = ("valid", "median_s", "p10_s", "p90_s", "achieved_bytes_per_s", "achieved_flop_per_s", "conditions")


def stored_run(data: Mapping[str, Any]) -> dict[str, Any]:
    """A run dict as a loaded session keeps it: figures written for other readers dropped, old records migrated.

    A version-1 run record becomes version 2: its device is read back from the
    environment it kept, and the figures it stored (twice, under two spellings)
    are dropped. A looser dict from an early session keeps its facts (samples,
    check, backend, conditions) but not the figures it stored beside usable
    samples. Keys the record does not know are kept, as is any dict that is
    not a readable record (it is listed, never plotted as good).
    """
    kept = {key: value for key, value in data.items() if key != DERIVED_KEY}
    if kept.get("format") != RECORD_FORMAT:
        if _samples(kept.get("samples_s")):  # figures an early session stored beside its samples: derived, dropped
            kept = {key: value for key, value in kept.items() if key not in _LOOSE_FIGURES}
        return kept
    if kept.get("version") != 1:
        return kept
    try:
        record = RunRecord.from_dict(kept)
    except MeasurementError:
        return kept
    migrated = replace(record, provenance=record_provenance(record)).to_dict()
    extras = {key: value for key, value in kept.items() if key not in migrated and key not in _V1_FLAT_COPIES}
    return {**migrated, **extras}


def _id(value: Any, fallback: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return fallback
    return str(value)


# The caches below are read by the window and by the thread that writes its session file (figures saved beside
# the runs): each look-up and each update holds this lock, the parsing and figuring between them does not.
_caches_lock = threading.Lock()
_parsed: "OrderedDict[int, tuple[Any, int, Run]]" = OrderedDict()
_PARSE_CACHE_SIZE = 512  # at least; a session with more runs keeps twice its own count (every refresh reads them all)


def read_runs(runs: Iterable[Any]) -> list[Run]:
    """Every run of a session, in order, each dict parsed once (dicts are replaced, never edited in place).

    Anything that is not a mapping is skipped.
    """
    result = []
    runs = runs if isinstance(runs, (list, tuple)) else list(runs)
    limit = max(_PARSE_CACHE_SIZE, 2 * len(runs))
    for index, data in enumerate(runs):
        if not isinstance(data, Mapping):
            continue
        key = id(data)
        with _caches_lock:
            cached = _parsed.get(key)
        if cached is None or cached[0] is not data or cached[1] != index:
            cached = (data, index, parse_run(data, index))
        with _caches_lock:
            _parsed[key] = cached
            _parsed.move_to_end(key)
            while len(_parsed) > limit:
                _parsed.popitem(last=False)
        result.append(cached[2])
    return result


def record_run(record: RunRecord, operation_name: str = "") -> Run:
    """A fresh record (the CLI's, a benchmark's) as a Run, without storing it anywhere."""
    data = record.to_dict()
    if operation_name:
        data[OPERATION_NAME_KEY] = operation_name
    return parse_run(data, -1)


# ---------------------------------------------------------------- the device a run is compared with


@dataclass(frozen=True)
class FigureContext:
    """What figures depend on besides the run: the session's convention, overlap and the device it shows."""

    convention: str = "fma2"
    overlap: float | str = 1.0
    session_device: Device | None = None  # the device the session shows, with its measured/entered rates
    binary: bool = False


def _same_device(device: Device, session_device: Device, provenance: DeviceProvenance) -> bool:
    if device.key == session_device.key:
        return True
    return bool(provenance.name) and provenance.name == session_device.name


def run_device(
    provenance: DeviceProvenance, session_device: Device | None, what: str = "the run"
) -> tuple[Device | None, str, bool]:
    """The device a run's (or a profile's) bound uses, the note said beside its figures, and whether it is
    the session's.

    The result's own device, with the session's measured or entered rates when
    the session shows that same device (measured > entered > datasheet, on that
    device). A result that states no device at all is compared with the
    session's, and the note says so.
    """
    if not provenance.kind and not provenance.catalogue_key:
        if session_device is None:
            return None, f"{what} does not state its device, and the session shows none", False
        return session_device, f"{what} does not state its device; compared with the session's {session_device.name}", True
    if provenance.kind == GPU and not (provenance.catalogue_key or provenance.name or provenance.compute_capability):
        # an early session's GPU run: nothing says which GPU, so a GPU the session shows stands in for it
        if session_device is not None and session_device.kind == GPU:
            return session_device, f"{what} does not say which GPU it ran on; compared with the session's {session_device.name}", True
        return None, f"{what} does not say which GPU it ran on, and the session shows none: no bound", False
    own = catalogue_device(provenance)
    if own is None:
        if session_device is not None and provenance.name and provenance.name == session_device.name:
            return session_device, "", True  # a detected GPU the catalogue does not know, shown by the session
        return None, f"ran on {provenance.label}, which the catalogue does not know: no bound", False
    if session_device is None:
        return own, "", False
    if _same_device(own, session_device, provenance):
        return session_device, "", True
    how = f" ({provenance.matched_by})" if provenance.matched_by.startswith("compute") else ""
    return own, f"ran on {own.name}{how}, not the session's {session_device.name}: compared with its own device", False


# ---------------------------------------------------------------- the figures


@dataclass(frozen=True)
class RunFigures:
    """A run with every figure derived from it: what the table, plots, reports and CLI show."""

    run: Run
    convention: str
    stats: TimingStats | None
    flop: int | None  # logical FLOP under the session's convention
    bytes: int | None  # compulsory bytes of the declaration
    device: Device | None  # the run's own device (with the session's rates when it is the session's)
    on_session_device: bool
    device_note: str  # said beside the figures when the run is compared with another device than the session's
    bound_time_s: float | None
    limiter: str | None
    path: str | None
    bound_note: str  # why there is no bound, when there is none
    impossible: ImpossibleResult | None
    missed: str = ""  # the assumption of the bound the run misses, as far as the model can tell (analysis/shortfall.py)

    # -- what ran --------------------------------------------------------------
    @property
    def index(self) -> int:
        return self.run.index

    @property
    def id(self) -> str:
        return self.run.id

    @property
    def declaration_text(self) -> str:
        return self.run.declaration_text

    @property
    def declaration(self) -> Declaration | None:
        return self.run.declaration

    @property
    def operation_name(self) -> str:
        return self.run.operation_name

    @property
    def backend(self) -> str:
        return self.run.backend

    @property
    def mode(self) -> str:
        return self.run.mode

    @property
    def status(self) -> str:
        return self.run.status

    @property
    def status_text(self) -> str:
        return self.run.status_text

    @property
    def check(self) -> str:
        return self.run.check

    @property
    def message(self) -> str:
        return self.run.message

    @property
    def samples_s(self) -> tuple[float, ...]:
        return self.run.samples_s

    @property
    def valid(self) -> bool:
        return self.run.valid

    @property
    def device_name(self) -> str:
        """The device the figures are against, in words."""
        return self.device.name if self.device is not None else self.run.provenance.label

    # -- derived from the samples ------------------------------------------------
    @property
    def median_s(self) -> float | None:
        return self.stats.median_s if self.stats else None

    @property
    def p10_s(self) -> float | None:
        return self.stats.p10_s if self.stats else None

    @property
    def p90_s(self) -> float | None:
        return self.stats.p90_s if self.stats else None

    @property
    def achieved_byte_per_s(self) -> float | None:
        """Compulsory bytes over the median time."""
        return per_second(self.bytes, self.median_s)

    @property
    def achieved_flop_per_s(self) -> float | None:
        """Logical FLOP (session convention) over the median time."""
        return per_second(self.flop, self.median_s)

    @property
    def implied_byte_per_s(self) -> float | None:
        """The bytes this implementation really moves over the median time (when the record says)."""
        return per_second(self.run.implied_bytes, self.median_s)

    @property
    def flop_per_s_spread(self) -> tuple[float, float] | None:
        """Achieved FLOP/s at the slow (p90) and the fast (p10) times: the spread bar on a roofline."""
        if not self.stats or not self.flop or self.stats.p10_s <= 0:
            return None
        return self.flop / self.stats.p90_s, self.flop / self.stats.p10_s

    @property
    def intensity(self) -> float | None:
        """Logical FLOP per compulsory byte: where the run sits on the roofline's x axis."""
        if not self.flop or not self.bytes:
            return None
        return self.flop / self.bytes

    @property
    def fraction_of_bound(self) -> float | None:
        """Bound time over median time on the run's own device (1 = at the bound)."""
        if self.bound_time_s is None or not self.median_s:
            return None
        return self.bound_time_s / self.median_s

    @property
    def percent_of_bound(self) -> float | None:
        fraction = self.fraction_of_bound
        return None if fraction is None else 100.0 * fraction

    # by hand: most keys are figures derived from the run (properties), in the order the session's copy keeps
    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON (one name per figure): the CLI's output and the session's derived copy."""
        return {
            "convention": self.convention,
            "device": self.device.key if self.device is not None else None,
            "device_name": self.device_name,
            "on_session_device": self.on_session_device,
            "device_note": self.device_note,
            "stats": self.stats.to_dict() if self.stats else None,
            "flop": self.flop,
            "bytes": self.bytes,
            "intensity_flop_per_byte": self.intensity,
            "achieved_byte_per_s": self.achieved_byte_per_s,
            "achieved_flop_per_s": self.achieved_flop_per_s,
            "implied_byte_per_s": self.implied_byte_per_s,
            "bound_time_s": self.bound_time_s,
            "limiter": self.limiter,
            "percent_of_bound": self.percent_of_bound,
            "impossible": to_plain(self.impossible),
            "missed_assumption": self.missed,
        }


_ANALYSIS_CACHE_SIZE = 256


def bound_analysis(declaration: Declaration, device: Device | None, convention: str, overlap: float | str) -> Analysis | str:
    """The analysis of a declaration on a result's own device (cached per device object), or why there is none.

    With no device the work and bytes are still analysed and the bound is None.
    """
    return _bound_analysis(declaration, ByIdentity(device), convention, overlap)


@functools.lru_cache(maxsize=_ANALYSIS_CACHE_SIZE)
def _bound_analysis(declaration: Declaration, held: ByIdentity, convention: str, overlap: float | str) -> Analysis | str:
    """Kept per device object (a Device is unhashable, its overrides a dict; a device with other rates is another
    object) and per declaration value."""
    device: Device | None = held.obj
    try:
        return analyze(declaration, device=device, convention=convention, overlap=overlap)
    except WorkbenchError as exc:
        return f"no bound on {device.name if device is not None else 'no device'}: {exc}"


def _counts(declaration: Declaration | None, convention: str) -> tuple[int | None, int | None, int | None]:
    if declaration is None:
        return None, None, None
    try:
        workload = declaration.workload()
        return int(workload.flop(convention)), int(workload.bytes), int(workload.footprint_bytes)
    except WorkbenchError:
        return None, None, None


def _cache_bytes(run: Run, device: Device | None) -> int | None:
    """The cache a warm working set can sit in: as the hardware reported it, else the catalogue's."""
    if run.provenance.cache_bytes:
        return run.provenance.cache_bytes
    return device.l2_bytes if device is not None else None


def _rate_sources(analysis: Analysis) -> tuple[str, ...]:
    return tuple(rate.source for rate in (analysis.compute_rate, analysis.bandwidth) if rate is not None)


def run_figures(run: Run, context: FigureContext) -> RunFigures:
    """Every derived figure of one run: the one function the window, the reports and the CLI call."""
    stats = summarize(run.samples_s) if run.samples_s else None
    flop, compulsory, footprint = _counts(run.declaration, context.convention)
    device, note, on_session = run_device(run.provenance, context.session_device)
    bound_time = limiter = path = None
    bound_note = ""
    impossible = None
    missed = ""
    if device is None:
        bound_note = note
    elif run.declaration is None:
        bound_note = "the declaration does not parse: no bound"
    else:
        analysis = bound_analysis(run.declaration, device, context.convention, context.overlap)
        if isinstance(analysis, str):
            bound_note = analysis
        else:
            bound_time, limiter, path = analysis.bound_time, analysis.limiter, analysis.path
            if bound_time is None:
                bound_note = f"{device.name} has no rate for this operation: no bound"
            elif stats is not None and stats.median_s > 0 and run.status != CANCELLED:
                missed = missed_assumption(analysis, stats.median_s, context.binary)
                impossible = impossible_result(
                    Evidence(
                        fraction_of_bound=bound_time / stats.median_s,
                        slow_fraction=bound_time / stats.p90_s if stats.p90_s > 0 else None,
                        device_name=device.name,
                        device_stated=run.provenance.stated,
                        device_note=run.provenance.matched_by if run.provenance.matched_by.startswith("compute") else "",
                        rate_sources=_rate_sources(analysis),
                        nominal_rates=uses_nominal_rate(_rate_sources(analysis)),
                        limiter=limiter,
                        warm=(run.mode == WARM) if run.mode else None,
                        working_set_bytes=footprint,
                        cache_bytes=_cache_bytes(run, device),
                        declared_bytes=compulsory,
                        moved_bytes=float(run.implied_bytes) if run.implied_bytes is not None else None,
                        measured_time_s=stats.median_s,
                        binary=context.binary,
                        bandwidth_byte_per_s=analysis.bandwidth.value if analysis.bandwidth else None,
                        compute_rate_flop_per_s=analysis.compute_rate.value if analysis.compute_rate else None,
                    )
                )
    return RunFigures(
        run=run,
        convention=context.convention,
        stats=stats,
        flop=flop,
        bytes=compulsory,
        device=device,
        on_session_device=on_session,
        device_note=note,
        bound_time_s=bound_time,
        limiter=limiter,
        path=path,
        bound_note=bound_note,
        impossible=impossible,
        missed=missed,
    )


_figured: "OrderedDict[tuple[Any, ...], tuple[Run, Device | None, RunFigures]]" = OrderedDict()
_FIGURES_CACHE_SIZE = 1024  # at least; a session with more runs keeps twice its own count


def all_run_figures(runs: Iterable[Any], context: FigureContext) -> list[RunFigures]:
    """The figures of every run of a session (`Session.runs`), in order.

    A parsed Run is immutable and its figures depend only on the context, so
    they are kept per (run, convention, overlap, session device, units): the
    table and both plots ask on every refresh.
    """
    result = []
    device = context.session_device
    parsed = read_runs(runs)
    limit = max(_FIGURES_CACHE_SIZE, 2 * len(parsed))
    for run in parsed:
        key = (id(run), context.convention, context.overlap, id(device), context.binary)
        with _caches_lock:
            cached = _figured.get(key)
        if cached is None or cached[0] is not run or cached[1] is not device:
            cached = (run, device, run_figures(run, context))
        with _caches_lock:
            _figured[key] = cached
            _figured.move_to_end(key)
            while len(_figured) > limit:
                _figured.popitem(last=False)
        result.append(cached[2])
    return result

