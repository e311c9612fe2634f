"""What a profiler export holds, as plain frozen values: metrics, kernel launches, time summaries.

A `Profile` is one imported file: the tool and page it came from, every
kernel launch (ncu) or every kernel's time summary (nsys), and the match
rules the user set. It serialises to plain JSON for `Session.profiles`
(`to_dict` / `from_dict`, validated with one clear message on a bad record).
Every metric keeps the text the tool printed beside its value in base units.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence, overload

from workbench.profilers.matching import MatchRule
from workbench.profilers.numbers import MARK_NAMES, NumberFormat
from workbench.profilers.table import ProfileError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.profilers.kernels import Kernel

RECORD_FORMAT = "perf-workbench-profile"
RECORD_VERSION = 1

NCU = "ncu"
NSYS = "nsys"
TOOL_TITLES = {NCU: "Nsight Compute", NSYS: "Nsight Systems"}

# The note every view of ncu figures carries (the issue asks for it in so many words).
NCU_CONDITIONS_NOTE = (
    "ncu locks the GPU clocks to base (--clock-control base) and flushes the caches before each "
    "replay pass (--cache-control all) by default, so its durations run longer than event-timed "
    "runs at boost clocks with warm caches; compare with a cold-mode run, or profile with "
    "--clock-control none --cache-control none"
)
NSYS_CONDITIONS_NOTE = (
    "nsys times each kernel at the clocks and cache state the application ran with (no clock "
    "lock, no flush): closer to a warm event-timed run than ncu's figures"
)


@dataclass(frozen=True, slots=True)
class Metric:
    """One value as the tool printed it, and the same value in base units.

    value: the number in `unit` (bytes, seconds, B/s, Hz, a count, or %),
    None when the tool printed n/a or text; raw_value/raw_unit: the cells
    as printed ('134.22', 'Mbyte'); section: the ncu section it came from.
    """

    name: str
    value: int | float | None
    unit: str
    raw_value: str
    raw_unit: str = ""
    section: str = ""

    @property
    def scaled(self) -> bool:
        """True when the tool scaled the unit (Mbyte, usecond): the figure carries ~4 significant digits."""
        from workbench.profilers.metric_units import is_auto_scaled

        return is_auto_scaled(self.raw_unit)

    def to_list(self) -> list[Any]:
        return [self.name, self.value, self.unit, self.raw_value, self.raw_unit, self.section]

    @classmethod
    def from_list(cls, data: Any) -> "Metric":
        if not isinstance(data, list) or len(data) != 6:
            raise ProfileError("a metric must be [name, value, unit, raw value, raw unit, section]", "profile record")
        name, value, unit, raw_value, raw_unit, section = data
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ProfileError(f"metric {name!r} has a value that is not a number", "profile record")
        return cls(_text(name, "metric name"), value, _text(unit, "unit"), _text(raw_value, "raw value"),
                   _text(raw_unit, "raw unit"), _text(section, "section"))


@dataclass(frozen=True)
class KernelLaunch:
    """One profiled launch from Nsight Compute: identity, launch shape and its metrics by name."""

    launch_id: int
    kernel_name: str
    metrics: Mapping[str, Metric] = field(default_factory=dict, hash=False)
    device: str = ""
    compute_capability: str = ""
    grid_size: tuple[int, int, int] | None = None
    block_size: tuple[int, int, int] | None = None
    process_name: str = ""
    process_id: int | None = None
    host: str = ""
    context: str = ""
    stream: str = ""
    rules: tuple[str, ...] = ()  # ncu rule results printed on the details page, "Name: description"
    line: int = 0  # the line of the file the launch starts on

    def metric(self, name: str) -> Metric | None:
        return self.metrics.get(name)

    def value(self, name: str) -> int | float | None:
        """A metric's value in base units, None when absent or n/a."""
        metric = self.metrics.get(name)
        return None if metric is None else metric.value

    @property
    def device_name(self) -> str:
        """The GPU's name where the file says it (raw page attribute, or a Device column that is a name)."""
        named = self.metrics.get("device__attribute_display_name")
        if named is not None and named.raw_value.strip():
            return named.raw_value.strip()
        return self.device if self.device and not self.device.isdigit() else ""

    def to_dict(self, all_metrics: bool = True) -> dict[str, Any]:
        """Plain JSON; with all_metrics False only the metrics the workbench reads are kept."""
        from workbench.profilers.counters import is_used_metric

        kept = [m for m in self.metrics.values() if all_metrics or is_used_metric(m.name)]
        return {
            "id": self.launch_id,
            "kernel": self.kernel_name,
            "device": self.device,
            "cc": self.compute_capability,
            "grid": list(self.grid_size) if self.grid_size else None,
            "block": list(self.block_size) if self.block_size else None,
            "process": self.process_name,
            "process_id": self.process_id,
            "host": self.host,
            "context": self.context,
            "stream": self.stream,
            "rules": list(self.rules),
            "line": self.line,
            "metrics": [metric.to_list() for metric in kept],
        }

    @classmethod
    def from_dict(cls, data: Any) -> "KernelLaunch":
        record = _mapping(data, "a launch")
        metrics = [Metric.from_list(item) for item in _list(record.get("metrics", []), "metrics")]
        return cls(
            launch_id=_int(record.get("id"), "launch id"),
            kernel_name=_text(record.get("kernel"), "kernel name", required=True),
            metrics={metric.name: metric for metric in metrics},
            device=_text(record.get("device", ""), "device"),
            compute_capability=_text(record.get("cc", ""), "cc"),
            grid_size=_triple(record.get("grid"), "grid"),
            block_size=_triple(record.get("block"), "block"),
            process_name=_text(record.get("process", ""), "process"),
            process_id=None if record.get("process_id") is None else _int(record.get("process_id"), "process id"),
            host=_text(record.get("host", ""), "host"),
            context=_text(record.get("context", ""), "context"),
            stream=_text(record.get("stream", ""), "stream"),
            rules=tuple(_text(rule, "rule") for rule in _list(record.get("rules", []), "rules")),
            line=_int(record.get("line", 0), "line"),
        )


@dataclass(frozen=True, slots=True)
class KernelTimes:
    """One kernel's row of `nsys stats --report cuda_gpu_kern_sum`: instances and times in seconds."""

    kernel_name: str
    instances: int
    total_time: float
    average: float | None = None
    median: float | None = None
    minimum: float | None = None
    maximum: float | None = None
    stddev: float | None = None
    time_percent: float | None = None
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel_name,
            "instances": self.instances,
            "total_s": self.total_time,
            "average_s": self.average,
            "median_s": self.median,
            "min_s": self.minimum,
            "max_s": self.maximum,
            "stddev_s": self.stddev,
            "time_percent": self.time_percent,
            "line": self.line,
        }

    @classmethod
    def from_dict(cls, data: Any) -> "KernelTimes":
        record = _mapping(data, "a kernel summary")
        return cls(
            kernel_name=_text(record.get("kernel"), "kernel name", required=True),
            instances=_int(record.get("instances"), "instances"),
            total_time=_float(record.get("total_s"), "total time"),
            average=_optional_float(record.get("average_s"), "average"),
            median=_optional_float(record.get("median_s"), "median"),
            minimum=_optional_float(record.get("min_s"), "min"),
            maximum=_optional_float(record.get("max_s"), "max"),
            stddev=_optional_float(record.get("stddev_s"), "stddev"),
            time_percent=_optional_float(record.get("time_percent"), "time percent"),
            line=_int(record.get("line", 0), "line"),
        )


class KernelTimesTable(Sequence[KernelTimes]):
    """Many KernelTimes held as columns (names, and arrays of numbers), made into KernelTimes when read.

    An nsys summary can hold a million kernels; as objects they take about
    400 bytes each, as columns about half. Equal to the tuple of its items.
    """

    _FLOATS = 7  # total, average, median, minimum, maximum, stddev, percent (NaN for None)

    def __init__(self, rows: Iterable[KernelTimes] = ()) -> None:
        self._names: list[str] = []
        self._counts = array("q")  # instances, line
        self._figures = array("d")
        for row in rows:
            self.append(row)

    def append(self, row: KernelTimes) -> None:
        if not 0 <= row.instances < 2**63 or not 0 <= row.line < 2**63:
            raise ProfileError(f"{row.instances:.3g} launches of one kernel is out of range", "profile", row.line)
        self._names.append(row.kernel_name)
        self._counts.extend((row.instances, row.line))
        nan = math.nan
        self._figures.extend(
            (
                row.total_time,
                nan if row.average is None else row.average,
                nan if row.median is None else row.median,
                nan if row.minimum is None else row.minimum,
                nan if row.maximum is None else row.maximum,
                nan if row.stddev is None else row.stddev,
                nan if row.time_percent is None else row.time_percent,
            )
        )

    def __len__(self) -> int:
        return len(self._names)

    def _row(self, index: int) -> KernelTimes:
        at = index * self._FLOATS
        total, average, median, minimum, maximum, stddev, percent = (
            None if value != value else value for value in self._figures[at : at + self._FLOATS]
        )
        return KernelTimes(
            self._names[index], self._counts[2 * index], float(total or 0.0), average, median, minimum, maximum,
            stddev, percent, self._counts[2 * index + 1],
        )

    @overload
    def __getitem__(self, index: int) -> KernelTimes: ...

    @overload
    def __getitem__(self, index: slice) -> "tuple[KernelTimes, ...]": ...

    def __getitem__(self, index: "int | slice") -> "KernelTimes | tuple[KernelTimes, ...]":
        if isinstance(index, slice):
            return tuple(self._row(i) for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._row(index)

    def __iter__(self) -> Iterator[KernelTimes]:
        return (self._row(index) for index in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (KernelTimesTable, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"KernelTimesTable({len(self)} kernels)"


@dataclass(frozen=True)
class Profile:
    """One imported profiler file: where it came from, what it holds, and the user's match rules.

    tool: "ncu" or "nsys"; layout: "details" or "raw" (ncu pages),
    "cuda_gpu_kern_sum" or "gpukernsum" (nsys report names);
    number_format: the decimal mark the file was read with and how it was
    decided (None for records saved before the workbench recorded it).
    """

    tool: str
    layout: str
    source: str
    launches: tuple[KernelLaunch, ...] = ()
    summaries: Sequence[KernelTimes] = ()  # a tuple, or a KernelTimesTable for a large file
    notes: tuple[str, ...] = ()
    matches: tuple[MatchRule, ...] = ()
    number_format: NumberFormat | None = None

    @property
    def title(self) -> str:
        page = f"{self.layout} page" if self.tool == NCU else f"{self.layout} report"
        return f"{TOOL_TITLES.get(self.tool, self.tool)} CSV ({page})"

    @property
    def conditions_note(self) -> str:
        """How the tool's timing conditions differ from an event-timed run."""
        return NCU_CONDITIONS_NOTE if self.tool == NCU else NSYS_CONDITIONS_NOTE

    @property
    def device_name(self) -> str:
        """The GPU named in the file, or '' (nsys summaries and older ncu column sets do not say)."""
        for launch in self.launches:
            if launch.device_name:
                return launch.device_name
        return ""

    @property
    def compute_capability(self) -> str:
        return next((launch.compute_capability for launch in self.launches if launch.compute_capability), "")

    def kernels(self) -> "tuple[Kernel, ...]":
        """Launches grouped by kernel name, in order of first appearance, with medians across launches."""
        return tuple(self.iter_kernels())

    def iter_kernels(self) -> "Iterator[Kernel]":
        """kernels() one at a time: an nsys summary of a million kernels is never held as Kernels at once."""
        from workbench.profilers.kernels import group_kernels

        return group_kernels(self)

    @property
    def kernel_count(self) -> int:
        """How many kernels kernels() gives, without building them."""
        if self.tool == NSYS:
            return len(self.summaries)
        return len({launch.kernel_name for launch in self.launches})

    def with_matches(self, matches: tuple[MatchRule, ...] | list[MatchRule]) -> "Profile":
        """A copy holding these match rules (what the session saves beside the counters)."""
        return Profile(
            self.tool, self.layout, self.source, self.launches, self.summaries, self.notes, tuple(matches), self.number_format
        )

    def to_dict(self, all_metrics: bool = False, lazy: bool = False) -> dict[str, Any]:
        """Plain JSON for Session.profiles: each launch's metrics with their printed text.

        By default only the metrics the workbench reads (DRAM, L2, duration,
        FLOP counters, launch shape, device name) are kept: a `--set full`
        raw page has over a thousand per launch, which would swell a session
        file to tens of megabytes. `all_metrics=True` keeps every one.
        `lazy=True` gives launches and summaries as iterators, for writing a
        large record out as it is made (the CLI's --json).
        """
        launches: Any = (launch.to_dict(all_metrics) for launch in self.launches)
        summaries: Any = (summary.to_dict() for summary in self.summaries)
        if not lazy:
            launches, summaries = list(launches), list(summaries)
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "tool": self.tool,
            "layout": self.layout,
            "source": self.source,
            "notes": list(self.notes),
            "number_format": None if self.number_format is None else self.number_format.to_dict(),
            "matches": [rule.to_dict() for rule in self.matches],
            "launches": launches,
            "summaries": summaries,
        }

    @classmethod
    def from_dict(cls, data: Any) -> "Profile":
        """Rebuild a profile saved by to_dict(); a bad record raises ProfileError naming the fault."""
        record = _mapping(data, "a profile record")
        if record.get("format") != RECORD_FORMAT:
            raise ProfileError(f"not a profile record (format is {record.get('format')!r})", "profile record")
        version = record.get("version")
        if not isinstance(version, int) or version > RECORD_VERSION:
            raise ProfileError(
                f"profile record version {version!r} is newer than this workbench reads ({RECORD_VERSION})",
                "profile record",
            )
        tool = record.get("tool")
        if tool not in (NCU, NSYS):
            raise ProfileError(f"unknown tool {tool!r}; expected ncu or nsys", "profile record")
        return cls(
            tool=str(tool),
            layout=_text(record.get("layout"), "layout", required=True),
            source=_text(record.get("source", ""), "source"),
            launches=tuple(KernelLaunch.from_dict(item) for item in _list(record.get("launches", []), "launches")),
            summaries=tuple(KernelTimes.from_dict(item) for item in _list(record.get("summaries", []), "summaries")),
            notes=tuple(_text(note, "note") for note in _list(record.get("notes", []), "notes")),
            matches=tuple(MatchRule.from_dict(item) for item in _list(record.get("matches", []), "matches")),
            number_format=_number_format(record.get("number_format")),
        )


# ---------------------------------------------------------------- validation helpers


def _bad(what: str, expected: str, value: Any) -> ProfileError:
    return ProfileError(f"{what} must be {expected}; got {value!r}", "profile record")


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(what, "an object", value)
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(what, "a list", value)
    return value


def _text(value: Any, what: str, required: bool = False) -> str:
    if not isinstance(value, str) or (required and not value):
        raise _bad(what, "non-empty text" if required else "text", value)
    return value


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(what, "an integer", value)
    return value


def _float(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(what, "a number", value)
    return float(value)


def _optional_float(value: Any, what: str) -> float | None:
    return None if value is None else _float(value, what)


def _number_format(value: Any) -> NumberFormat | None:
    if value is None:
        return None
    record = _mapping(value, "number format")
    decimal, how = record.get("decimal_mark"), record.get("how")
    if decimal not in MARK_NAMES or how not in ("decided", "assumed", "chosen"):
        raise _bad("number format", "a decimal mark ('.' or ',') and how it was decided", value)
    return NumberFormat(str(decimal), str(how), _text(record.get("evidence", ""), "evidence"), _int(record.get("ambiguous", 0), "ambiguous"))


def _triple(value: Any, what: str) -> tuple[int, int, int] | None:
    if value is None:
        return None
    items = _list(value, what)
    if len(items) != 3:
        raise _bad(what, "three integers", value)
    x, y, z = (_int(item, what) for item in items)
    return (x, y, z)
