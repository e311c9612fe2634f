"""The session's records (operations, steps, settings, the device chosen, the session itself), the file format's
constants and `SessionError`; copying and comparing sessions, and a detected GPU's facts as a device."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from workbench import __version__
from workbench.model.analysis import Analysis, analyze_partial
from workbench.model.conventions import CONVENTIONS
from workbench.model.devices import Device, Rate, find_device
from workbench.model.devices.catalogue import Latency
from workbench.errors import WorkbenchError
from workbench.records import record
# (at the top, not in the functions that read each operation: an import inside a function runs on every call, and
# under Qt's import hook costs tens of microseconds: three per operation when a session of thousands opens)
from workbench.model.declare import parse
from workbench.model.naming import automatic_name

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.measure.runs import FigureContext, RunFigures

DEFAULT_DEVICE = "h100-sxm"

FORMAT = "perf-workbench-session"
VERSION = 1  # the format version this code writes, and the newest it reads
MAX_FILE_BYTES = 64 * 2**20  # a session file over 64 MiB is refused unread, and never written
# A session whose compact JSON is larger than this is written compact: indentation would grow it by a fifth (a
# session the app opened could then not be saved under MAX_FILE_BYTES), and the indenting formatter, in Python,
# takes minutes where the compact one, in C, takes a second.
COMPACT_FROM_BYTES = 4 * 2**20
MAX_NESTING = 64  # arrays and objects inside each other; real files need under ten
STALE_TEMPORARY_S = 60.0  # a save's temporary file untouched this long was left by a killed save
NVML_KEY_PREFIX = "nvml-"
GENERATOR = f"Performance Workbench {__version__}"
DERIVED_NOTE = (
    "Figures under 'derived' and 'rates_in_use' are written for readers without the app; "
    "the app recomputes them from the declarations and the raw samples and ignores these copies."
)

CONVENTION_CHOICES = CONVENTIONS  # the keys a session file may hold (workbench.model.ops.base)
_TOP_LEVEL_KEYS = (
    "format",
    "version",
    "generator",
    "about_derived",
    "title",
    "description",
    "device",
    "settings",
    "operations",
    "runs",
    "profiles",
    "steps",
)


class SessionError(WorkbenchError):
    """A session file that cannot be read or written, with one line saying what and where.

    `where` is the JSON path at fault (e.g. `operations[2].declaration`) when
    the fault is inside the file's data, otherwise None.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where


@dataclass
class OperationEntry:
    """One declared operation: its name, its declaration line, free-text notes (Markdown).

    With `name_automatic` the name is made from the declaration
    (`workbench.model.naming.automatic_name`) and follows every edit of it, until
    the user renames the operation.
    """

    name: str
    declaration: str
    notes: str = ""
    name_automatic: bool = False

    @classmethod
    def automatic(cls, declaration: str, notes: str = "") -> "OperationEntry":
        """An operation named after its declaration."""
        entry = cls("", declaration, notes, name_automatic=True)
        entry.follow_declaration()
        return entry

    def follow_declaration(self) -> bool:
        """With an automatic name, make the name from the declaration again; True when it changed.

        A declaration that does not parse keeps the last name (the one its valid form had).
        """
        if not self.name_automatic:
            return False
        name = automatic_name(self.declaration)
        if name is None or name == self.name:
            return False
        self.name = name
        return True


@dataclass
class StepEntry:
    """A named step: operations on streams with dependencies, in the step text form (workbench/steps.py)."""

    name: str
    text: str


@dataclass
class Settings:
    """How figures are counted and shown."""

    convention: str = "fma2"  # "fma2" or "mac"
    overlap: float = 1.0  # fraction f of the shorter bound hidden: 1 full, 0 none
    binary: bool = False  # bytes in MiB/GiB instead of MB/GB


# Written through the converter (read by reading.py, which checks each value and names where a fault is).
record(StepEntry)
record(Settings, dump={"overlap": float, "binary": bool})


@dataclass
class DeviceChoice:
    """The device the bounds use: a catalogue key (or nvml-N) and rate overrides on top of it.

    `overrides` maps a path (or "hbm") to a Rate whose source is measured or entered.
    `latencies` holds measured or entered latencies by interface ("hbm") and load ("idle", "loaded"), which
    the memory-level-parallelism term uses in place of the catalogue's.
    `detected` keeps what NVML reported about the GPU the session was made on
    (`DetectedGPU.to_dict()`), so an nvml-N device that is not in the catalogue
    still resolves on a machine without that GPU.
    """

    key: str = DEFAULT_DEVICE
    overrides: dict[str, Rate] = field(default_factory=dict)
    detected: dict[str, Any] | None = None
    # Latencies measured (calibration) or entered, by interface and load: {"hbm": {"idle": Latency, ...}}.
    latencies: dict[str, dict[str, Latency]] = field(default_factory=dict)

    def resolve(self, detected: Device | None = None) -> Device:
        """The Device with overrides applied; `detected` stands in for an nvml-N key."""
        if detected is not None and detected.key == self.key:
            base = detected
        elif self.key.startswith(NVML_KEY_PREFIX) and self.detected is not None:
            base = device_from_detected_facts(self.detected)
        else:
            base = find_device(self.key)
        device = base
        for path, rate in self.overrides.items():
            device = device.with_rate(path, rate.value, rate.source, rate.citation)
        for interface, loads in self.latencies.items():
            for load, latency in loads.items():
                device = device.with_latency(interface, load, latency.seconds, latency.origin, latency.citation)
        return device


@dataclass
class Session:
    """Everything a user saves and shares."""

    operations: list[OperationEntry] = field(default_factory=list)
    device: DeviceChoice = field(default_factory=DeviceChoice)
    settings: Settings = field(default_factory=Settings)
    runs: list[dict[str, Any]] = field(default_factory=list)  # measurement run records
    profiles: list[dict[str, Any]] = field(default_factory=list)  # imported profiler kernels
    steps: list[StepEntry] = field(default_factory=list)  # steps: timelines of several operations
    title: str = ""
    description: str = ""  # what the session is for (examples explain themselves here)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown top-level keys, kept verbatim

    def analyze(self, entry: OperationEntry, device: Device | None = None) -> Analysis:
        """The analysis of one entry under this session's device and settings (as far as the device's rates go:
        `analyze_partial`)."""
        return analyze_partial(
            entry.declaration,
            device if device is not None else self.device.resolve(),
            convention=self.settings.convention,
            overlap=self.settings.overlap,
            binary=self.settings.binary,
        )

    def analyze_all(self, device: Device | None = None) -> list[Analysis | WorkbenchError]:
        """Each entry's analysis, or the error that stops it (one bad entry does not hide the rest)."""
        if device is None:
            try:
                device = self.device.resolve()
            except WorkbenchError as exc:
                return [exc for _ in self.operations]
        results: list[Analysis | WorkbenchError] = []
        for entry in self.operations:
            try:
                results.append(self.analyze(entry, device))
            except WorkbenchError as exc:
                results.append(exc)
        return results

    def figure_context(self, device: Device | None = None) -> "FigureContext":
        """What run figures depend on in this session: its convention, overlap, and the device it shows."""
        from workbench.measure.runs import FigureContext

        if device is None:
            try:
                device = self.device.resolve()
            except WorkbenchError:
                device = None
        return FigureContext(self.settings.convention, self.settings.overlap, device, self.settings.binary)

    def run_figures(self, device: Device | None = None) -> "list[RunFigures]":
        """Every run's figures (`workbench.measure.runs.run_figures`), each on the device it ran on."""
        from workbench.measure.runs import all_run_figures

        return all_run_figures(self.runs, self.figure_context(device))

    def runs_for(self, entry: OperationEntry) -> list[dict[str, Any]]:
        """The measurement runs whose declaration is this entry's (compared in canonical form)."""
        wanted = canonical_declaration(entry.declaration)
        if wanted is None:
            return []
        return [run for run in self.runs if canonical_declaration(run.get("declaration")) == wanted]


def snapshot(session: Session) -> Session:
    """A copy of `session` that later edits of it do not reach, cheap enough to take on every save.

    What the window edits in place (operation entries, settings, the device
    choice, steps) is copied; run and profile dicts are shared, since they are
    replaced and never edited in place (`workbench.measure.runs.read_runs`), so a
    session of thousands of runs costs a copy of two lists of references.
    """
    return Session(
        operations=[dataclasses.replace(entry) for entry in session.operations],
        device=copy.deepcopy(session.device),
        settings=dataclasses.replace(session.settings),
        runs=list(session.runs),
        profiles=list(session.profiles),
        steps=[dataclasses.replace(step) for step in session.steps],
        title=session.title,
        description=session.description,
        extra=dict(session.extra),  # unknown keys, kept verbatim and never edited
    )


def same_session(a: Session, b: Session) -> bool:
    """Whether two sessions hold the same data (a document against what a save wrote of it): parts compared by
    value, runs and profiles by identity (their dicts are replaced, never edited in place), so a session of
    thousands of runs is compared in a blink."""
    return (
        a.operations == b.operations
        and a.device == b.device
        and a.settings == b.settings
        and a.steps == b.steps
        and a.title == b.title
        and a.description == b.description
        and a.extra == b.extra
        and len(a.runs) == len(b.runs)
        and all(x is y for x, y in zip(a.runs, b.runs))
        and len(a.profiles) == len(b.profiles)
        and all(x is y for x, y in zip(a.profiles, b.profiles))
    )


def canonical_declaration(text: Any) -> str | None:
    """The canonical form of a declaration line, or None when it is not one."""
    if not isinstance(text, str):
        return None
    try:
        return str(parse(text))
    except WorkbenchError:
        return None


# read by hand, not through the converter: a malformed fact is unknown rather than a fault, and the PCIe link
# NVML reported is not read back (the device keeps its catalogue host link)
def device_from_detected_facts(facts: Mapping[str, Any]) -> Device:
    """Rebuild the Device for a GPU from the NVML facts a session kept (`DetectedGPU.to_dict()`)."""
    from workbench.model.devices.nvml import DetectedGPU, device_for

    def optional_int(key: str) -> int | None:
        value = facts.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    name = facts.get("name")
    memory = optional_int("memory_total_bytes")
    if not isinstance(name, str) or not name or memory is None:
        raise SessionError("the detected GPU needs at least a name and memory_total_bytes", "device.detected")
    gpu = DetectedGPU(
        index=optional_int("index") or 0,
        name=name,
        memory_total=memory,
        memory_free=optional_int("memory_free_bytes") or memory,
        sm_clock_max_mhz=optional_int("sm_clock_max_mhz"),
        memory_clock_max_mhz=optional_int("memory_clock_max_mhz"),
        bus_width_bits=optional_int("bus_width_bits"),
        compute_capability=str(facts.get("compute_capability") or ""),
        driver_version=str(facts.get("driver_version") or ""),
        cuda_driver_version=str(facts.get("cuda_driver_version") or ""),
        l2_bytes=optional_int("l2_bytes"),
    )
    return device_for(gpu)
