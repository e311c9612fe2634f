"""The session's measurement runs as the views read them, and the undo commands that add or remove one.

`Session.runs` holds plain dicts: run records written by `RunRecord.to_dict()`
and, in older or hand-written sessions, looser dicts with a declaration and
raw samples. `read_run` turns either into a `MeasuredRun` whose figures are
recomputed from the raw samples and the declaration (under the session's
FLOP convention), so the table, the roofline and the bound-vs-size plot agree
with each other and with the report. Only a run whose reference check passed
counts as valid; anything else is drawn apart and says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from PySide6.QtGui import QUndoCommand

from workbench.declare import Declaration, parse
from workbench.errors import WorkbenchError
from workbench.measure.errors import MeasurementError
from workbench.measure.record import CANCELLED, INVALID, OK, RunRecord
from workbench.measure.stats import TimingStats, summarize

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.gui.document import Document

UNCHECKED = "unchecked"  # a loose run dict that does not say whether a reference check passed
OPERATION_NAME_KEY = "operation_name"  # the session operation a run was started from (the tab adds it)
BoundLookup = Callable[[Declaration], "float | None"]


@dataclass(frozen=True)
class MeasuredRun:
    """One stored run, read for display: identity, status, raw samples and the counts of its declaration."""

    index: int  # position in Session.runs
    id: str
    declaration_text: str
    declaration: Declaration | None  # None when the stored text no longer parses
    operation_name: str
    backend: str
    device: str
    mode: str
    status: str  # ok, invalid, cancelled or unchecked
    check: str  # the check's message, or why there is none
    samples_s: tuple[float, ...]
    stats: TimingStats | None
    flop: int | None  # logical FLOP under the session's convention
    bytes: int | None  # compulsory bytes
    bound_time_s: float | None
    bound_device: str
    message: str

    @property
    def valid(self) -> bool:
        """Finished, and its reference check passed: the only runs drawn as good."""
        return self.status == OK

    @property
    def median_s(self) -> float | None:
        return self.stats.median_s if self.stats else None

    def _rate(self, amount: int | None, seconds: float | None) -> float | None:
        if not amount or not seconds or seconds <= 0:
            return None
        return amount / seconds

    @property
    def achieved_bytes_per_s(self) -> float | None:
        return self._rate(self.bytes, self.median_s)

    @property
    def achieved_flop_per_s(self) -> float | None:
        return self._rate(self.flop, self.median_s)

    @property
    def flop_per_s_spread(self) -> tuple[float, float] | None:
        """Achieved FLOP/s at the slow (p90) and the fast (p10) times."""
        if not self.stats or not self.flop:
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
        """Bound time over median time (1 = at the bound)."""
        if self.bound_time_s is None or not self.median_s:
            return None
        return self.bound_time_s / self.median_s

    @property
    def status_text(self) -> str:
        """How the table names the status: never 'passed' for a run that is not valid."""
        return {OK: "passed", INVALID: "INVALID", CANCELLED: "cancelled", UNCHECKED: "not checked"}.get(self.status, self.status)


def _counts(declaration: Declaration | None, convention: str) -> tuple[int | None, int | None]:
    if declaration is None:
        return None, None
    try:
        workload = declaration.workload()
        return int(workload.flop(convention)), int(workload.bytes)
    except WorkbenchError:
        return None, None


def _samples(value: Any) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    samples = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            return ()
        number = float(item)
        if not math.isfinite(number) or number < 0:
            return ()
        samples.append(number)
    return tuple(samples)


def read_run(data: Mapping[str, Any], index: int, convention: str, bound_for: BoundLookup | None = None) -> MeasuredRun:
    """One run dict of `Session.runs` as a MeasuredRun (a run record, or a looser dict from an older session)."""
    text = str(data.get("declaration", "") or "")
    try:
        declaration: Declaration | None = parse(text)
    except WorkbenchError:
        declaration = None
    flop, compulsory = _counts(declaration, convention)
    name = data.get(OPERATION_NAME_KEY)
    operation_name = str(name) if isinstance(name, str) and name else (declaration.op if declaration else "?")
    record: RunRecord | None = None
    if data.get("format") == "perf-workbench-run":
        try:
            record = RunRecord.from_dict(data)
        except MeasurementError as exc:
            return _unreadable(data, index, text, declaration, operation_name, flop, compulsory, str(exc))
    if record is not None:
        samples = record.samples_s
        status = record.status
        check = record.check.message if record.check else (record.message or "no check")
        bound = record.bound.bound_time_s if record.bound else None
        bound_device = record.bound.device if record.bound else ""
        backend, device, mode, message, run_id = record.backend, record.device, record.mode, record.message, record.id
    else:
        samples = _samples(data.get("samples_s"))
        valid = data.get("valid")
        status = OK if valid is True else INVALID if valid is False else UNCHECKED
        check = "passed (as recorded)" if valid is True else "failed (as recorded)" if valid is False else "no check recorded"
        bound, bound_device = None, ""
        backend, device, mode = str(data.get("backend", "")), str(data.get("device", "")), str(data.get("mode", ""))
        message = str(data.get("message", ""))
        run_id = str(data.get("id", f"run {index + 1}"))
    if bound is None and bound_for is not None and declaration is not None:
        bound = bound_for(declaration)
        bound_device = "the session's device" if bound is not None else ""
    return MeasuredRun(
        index=index,
        id=run_id,
        declaration_text=text,
        declaration=declaration,
        operation_name=operation_name,
        backend=backend,
        device=device,
        mode=mode,
        status=status,
        check=check,
        samples_s=samples,
        stats=summarize(samples) if samples else None,
        flop=flop,
        bytes=compulsory,
        bound_time_s=bound,
        bound_device=bound_device,
        message=message,
    )


def _unreadable(
    data: Mapping[str, Any], index: int, text: str, declaration: Declaration | None, name: str,
    flop: int | None, compulsory: int | None, why: str,
) -> MeasuredRun:
    """A run record that does not read back: listed (so nothing is silently dropped), never plotted as good."""
    return MeasuredRun(
        index=index, id=str(data.get("id", f"run {index + 1}")), declaration_text=text, declaration=declaration,
        operation_name=name, backend=str(data.get("backend", "")), device=str(data.get("device", "")),
        mode=str(data.get("mode", "")), status=INVALID, check=f"unreadable record: {why}", samples_s=(), stats=None,
        flop=flop, bytes=compulsory, bound_time_s=None, bound_device="", message=why,
    )


def read_runs(runs: Iterable[Mapping[str, Any]], convention: str, bound_for: BoundLookup | None = None) -> list[MeasuredRun]:
    """Every run of a session, in order (anything that is not a mapping is skipped)."""
    return [read_run(run, i, convention, bound_for) for i, run in enumerate(runs) if isinstance(run, Mapping)]


def session_bound_lookup(document: "Document") -> BoundLookup:
    """The combined bound of a declaration on the session's device (for runs that did not record one)."""
    from workbench.analysis import analyze

    settings = document.session.settings
    device = document.device

    def bound_for(declaration: Declaration) -> float | None:
        if device is None:
            return None
        try:
            return analyze(declaration, device=device, convention=settings.convention, overlap=settings.overlap).bound_time
        except WorkbenchError:
            return None

    return bound_for


def document_runs(document: "Document") -> list[MeasuredRun]:
    """The document's runs as the views show them."""
    return read_runs(document.session.runs, document.session.settings.convention, session_bound_lookup(document))


# ---------------------------------------------------------------- which runs lie on a sweep


def on_sweep(run: MeasuredRun, declaration: Declaration, fields: Sequence[str]) -> int | None:
    """The swept size of a run that differs from `declaration` only in `fields` (all equal), else None."""
    other = run.declaration
    if other is None or other.op != declaration.op or not fields:
        return None
    sizes = {other.params.get(name) for name in fields}
    if len(sizes) != 1:
        return None
    size = sizes.pop()
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return None
    held = {name: value for name, value in declaration.params.items() if name not in fields}
    if {name: value for name, value in other.params.items() if name not in fields} != held:
        return None
    return size


# ---------------------------------------------------------------- undo commands


class AddRun(QUndoCommand):
    """Store one finished run in Session.runs; undo takes it out again."""

    def __init__(self, document: "Document", run: dict[str, Any], text: str) -> None:
        super().__init__(text)
        self.document = document
        self.run = run

    def redo(self) -> None:
        self.document.session.runs.append(self.run)
        self.document.runs_changed.emit()

    def undo(self) -> None:
        runs = self.document.session.runs
        for position in range(len(runs) - 1, -1, -1):
            if runs[position] is self.run:
                del runs[position]
                break
        self.document.runs_changed.emit()


class RemoveRun(QUndoCommand):
    """Take one run out of Session.runs; undo puts the same dict back where it was."""

    def __init__(self, document: "Document", index: int) -> None:
        run = document.session.runs[index]
        described = run.get("declaration", f"run {index + 1}") if isinstance(run, Mapping) else f"run {index + 1}"
        super().__init__(f"Remove run of {described}")
        self.document = document
        self.index = index
        self.run = run

    def redo(self) -> None:
        del self.document.session.runs[self.index]
        self.document.runs_changed.emit()

    def undo(self) -> None:
        self.document.session.runs.insert(self.index, self.run)
        self.document.runs_changed.emit()


def add_run(document: "Document", record: RunRecord, operation_name: str) -> None:
    """Push the undoable command that stores a finished run (with the operation it was started from)."""
    data = record.to_dict()
    data[OPERATION_NAME_KEY] = operation_name
    document.undo_stack.push(AddRun(document, data, f"Measure {record.declaration}"))


def remove_run(document: "Document", index: int) -> None:
    if 0 <= index < len(document.session.runs):
        document.undo_stack.push(RemoveRun(document, index))
