"""What a profiler export holds, as plain frozen values: metrics, kernel launches, time summaries.

The data layer of `workbench.profilers`: it imports only the layers below it
(errors, numbers, metric units). Every metric keeps the text the tool printed
beside its value in base units; each record serialises to plain JSON
(`to_dict` / `from_dict`, validated with one clear message on a bad record).
`Profile`, one imported file with its kernels, is built on these in
`profilers.profile`.

An nsys summary can hold a million kernels: `KernelTimesTable` keeps them as
columns, and `EncodedItems` lets a JSON writer take their JSON a batch at a
time instead of an object per kernel.
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, overload

from workbench.profilers.errors import ProfileError
from workbench.profilers.float_texts import float_texts
from workbench.profilers.metric_units import is_auto_scaled
from workbench.profilers.numbers import MARK_NAMES, NumberFormat
from workbench.records import from_plain

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
        return cls(expect_text(name, "metric name"), value, expect_text(unit, "unit"), expect_text(raw_value, "raw value"),
                   expect_text(raw_unit, "raw unit"), expect_text(section, "section"))


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

    # by hand, with from_dict: a profile holds up to a million launches, each read with its own checks (records.py)
    def to_dict(self, keep: "Callable[[str], bool] | None" = None) -> dict[str, Any]:
        """Plain JSON; with `keep`, only the metrics whose names it accepts (None: every metric)."""
        kept = [m for m in self.metrics.values() if keep is None or keep(m.name)]
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
        record = expect_mapping(data, "a launch")
        metrics = [Metric.from_list(item) for item in expect_list(record.get("metrics", []), "metrics")]
        return cls(
            launch_id=_int(record.get("id"), "launch id"),
            kernel_name=expect_text(record.get("kernel"), "kernel name", required=True),
            metrics={metric.name: metric for metric in metrics},
            device=expect_text(record.get("device", ""), "device"),
            compute_capability=expect_text(record.get("cc", ""), "cc"),
            grid_size=_triple(record.get("grid"), "grid"),
            block_size=_triple(record.get("block"), "block"),
            process_name=expect_text(record.get("process", ""), "process"),
            process_id=None if record.get("process_id") is None else _int(record.get("process_id"), "process id"),
            host=expect_text(record.get("host", ""), "host"),
            context=expect_text(record.get("context", ""), "context"),
            stream=expect_text(record.get("stream", ""), "stream"),
            rules=tuple(expect_text(rule, "rule") for rule in expect_list(record.get("rules", []), "rules")),
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

    # by hand, with from_dict: a summary holds up to a million rows; the converter writes one in 410 ns against 245
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
        record = expect_mapping(data, "a kernel summary")
        return cls(
            kernel_name=expect_text(record.get("kernel"), "kernel name", required=True),
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


# JSON text the way json.JSONEncoder(ensure_ascii=False).encode writes each kind of value.
encode_text: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
_NULL = "null"
JSON_ROWS = 4096  # rows written as one block of JSON text


def encode_floats(values: Iterable[float]) -> list[str]:
    """Floats as JSON writes them ('1e-06', '0.5'), NaN (this module's 'no value') as null."""
    held = values if isinstance(values, array) else None
    if held is not None and len(held) > 1 and held.tobytes() == held[:1].tobytes() * len(held):
        texts = [float.__repr__(held[0])] * len(held)  # one value throughout (a percentage of 0.0, say)
    else:
        texts = float_texts(values)
    if "nan" in texts:
        texts = [_NULL if text == "nan" else text for text in texts]
    return texts


def encode_optional_floats(values: Iterable[float | None]) -> list[str]:
    """Floats or None as JSON writes them."""
    held = list(values)
    if None not in held:
        return float_texts(held)  # type: ignore[arg-type]
    return [_NULL if value is None else float.__repr__(value) for value in held]


def json_rows(parts: Sequence[str], columns: Sequence[list[str]], between: str = "\n") -> str:
    """Rows of JSON text with `between` between them: row i is parts[0] + columns[0][i] + parts[1] + …
    + parts[-1] (len(parts) == len(columns) + 1), laid out in one list and joined once rather than row by
    row. Compact JSON holds no newline, so with the default the lines are the rows."""
    count = len(columns[0])
    if not count:
        return ""
    width = len(parts) + len(columns)
    laid: list[str] = [""] * (count * width)
    for index, part in enumerate(parts):
        laid[2 * index::width] = [part + between if index == len(parts) - 1 else part] * count
    for index, column in enumerate(columns):
        laid[2 * index + 1::width] = column
    laid[-1] = parts[-1]
    return "".join(laid)


class SharedTexts:
    """Float columns' JSON texts made once for two lists that write them (a summary's medians and its
    kernels' durations, written one after the other in one document): the first to ask keeps the texts
    of the columns in `kept` until the second takes them."""

    def __init__(self, kept: Iterable[str] = ("median",)) -> None:
        self._kept = frozenset(kept)
        self._held: dict[tuple[int, str, int, int], list[str]] = {}

    def floats(self, table: "KernelTimesTable", name: str, start: int, stop: int) -> list[str]:
        """encode_floats(table.figure(name)[start:stop]) (a list the caller does not change)."""
        key = (id(table), name, start, stop)
        held = self._held.pop(key, None)
        if held is not None:
            return held
        texts = encode_floats(table.figure(name)[start:stop])
        self.offer(table, name, start, stop, texts)
        return texts

    def offer(self, table: "KernelTimesTable", name: str, start: int, stop: int, texts: list[str]) -> None:
        """Texts made elsewhere for floats(table, name, start, stop), kept if that column is."""
        if name in self._kept:
            self._held[(id(table), name, start, stop)] = texts


class EncodedItems:
    """A long JSON list to be written as it is made, without an object per item.

    `encoded_blocks(between)` gives the items' compact JSON texts (as
    `json.JSONEncoder(ensure_ascii=False).encode` writes each) a block at a
    time, `between` between items, for a writer that knows it (the CLI's
    --json); `encoded_batches()` the same as lists of texts; iterated, it
    gives the items as plain values, like any lazy list.
    """

    def __init__(self, blocks: Callable[[str], Iterator[str]], items: Callable[[], Iterator[Any]]) -> None:
        self._blocks = blocks
        self._items = items

    def encoded_blocks(self, between: str = "\n") -> Iterator[str]:
        return (block for block in self._blocks(between) if block)

    def encoded_batches(self) -> Iterator[list[str]]:
        return (block.split("\n") for block in self.encoded_blocks())

    def __iter__(self) -> Iterator[Any]:
        return self._items()


class KernelTimesTable(Sequence[KernelTimes]):
    """Many KernelTimes held as columns (names, and arrays of numbers), made into KernelTimes when read.

    An nsys summary can hold a million kernels; as objects they take about
    400 bytes each, as columns about half, and whole columns can be read
    (`figure()`, `instances`, `names`) or written as JSON (`json_batches()`)
    without making a KernelTimes per row. Equal to the tuple of its items.
    """

    # The float columns, named as KernelTimes names them; NaN stands for None.
    FIGURES = ("total_time", "average", "median", "minimum", "maximum", "stddev", "time_percent")

    def __init__(self, rows: Iterable[KernelTimes] = ()) -> None:
        self._names: list[str] = []
        self._instances = array("q")
        self._lines = array("q")
        self._figures = {name: array("d") for name in self.FIGURES}
        for row in rows:
            self.append(row)

    def append(self, row: KernelTimes) -> None:
        if not 0 <= row.instances < 2**63 or not 0 <= row.line < 2**63:
            raise ProfileError(f"{row.instances:.3g} launches of one kernel is out of range", "profile", row.line)
        self._names.append(row.kernel_name)
        self._instances.append(row.instances)
        self._lines.append(row.line)
        nan = math.nan
        for name in self.FIGURES:
            value = getattr(row, name)
            if name == "total_time":
                value = float(value or 0.0)  # as _row() gives it back (-0.0 is 0.0)
            self._figures[name].append(nan if value is None else value)

    def extend_columns(
        self, names: Sequence[str], instances: Sequence[int], lines: Sequence[int], figures: Mapping[str, Sequence[float]]
    ) -> None:
        """Many rows at once, given as columns: `figures` maps each of FIGURES (total_time required)
        to its values, NaN for none; a figure left out is none for every row."""
        count = len(names)
        if len(instances) != count or len(lines) != count or any(len(column) != count for column in figures.values()):
            raise ValueError("columns of different lengths")
        if "total_time" not in figures or not set(figures) <= set(self.FIGURES):
            raise ValueError(f"figures must be among {self.FIGURES}, total_time included")
        if count and not (_in_range(instances) and _in_range(lines)):
            for row in zip(instances, lines):  # the first row out of range, as append() says it
                if not 0 <= row[0] < 2**63 or not 0 <= row[1] < 2**63:
                    raise ProfileError(f"{row[0]:.3g} launches of one kernel is out of range", "profile", row[1])
        self._names.extend(names)
        _extend(self._instances, instances)
        _extend(self._lines, lines)
        for name in self.FIGURES:
            column = figures.get(name)
            _extend(self._figures[name], column if column is not None else [math.nan] * count)

    @property
    def names(self) -> Sequence[str]:
        """The kernel names, in order (do not change the list)."""
        return self._names

    @property
    def instances(self) -> "array[int]":
        return self._instances

    @property
    def lines(self) -> "array[int]":
        return self._lines

    def figure(self, name: str) -> "array[float]":
        """One float column (one of FIGURES), NaN where the file gave no value."""
        return self._figures[name]

    def __len__(self) -> int:
        return len(self._names)

    def _row(self, index: int) -> KernelTimes:
        total, average, median, minimum, maximum, stddev, percent = (
            None if value != value else value for value in (self._figures[name][index] for name in self.FIGURES)
        )
        return KernelTimes(
            self._names[index], self._instances[index], float(total or 0.0), average, median, minimum, maximum,
            stddev, percent, self._lines[index],
        )

    def json_blocks(
        self, size: int = JSON_ROWS, shared: "SharedTexts | None" = None, between: str = "\n"
    ) -> Iterator[str]:
        """Each row's `KernelTimes.to_dict()` as compact JSON text, `between` between them, `size` rows
        a block; float texts through `shared` where another list writes them too."""
        keys = tuple(KernelTimes("k", 0, 0.0).to_dict())
        if keys != _TIMES_KEYS:  # to_dict changed: write what it writes, one row at a time
            encode = json.JSONEncoder(ensure_ascii=False).encode
            for start in range(0, len(self), size):
                yield between.join(encode(self._row(index).to_dict()) for index in range(start, min(start + size, len(self))))
            return
        shared = shared or SharedTexts(())
        for start in range(0, len(self), size):
            stop = min(start + size, len(self))
            columns = [
                list(map(encode_text, self._names[start:stop])),
                list(map(int.__repr__, self._instances[start:stop])),
                *self._figure_texts(start, stop, shared),
                list(map(int.__repr__, self._lines[start:stop])),
            ]
            yield json_rows(_TIMES_PARTS, columns, between)

    def _figure_texts(self, start: int, stop: int, shared: "SharedTexts") -> list[list[str]]:
        """encode_floats() of each of FIGURES for the rows start:stop. A row's figures are often equal (a
        kernel launched once or twice has its mean for median, and once, for minimum and maximum too):
        a column mostly equal, bit for bit, to one before it takes that one's texts where they agree."""
        done: list[tuple[Any, list[str]]] = []
        columns = []
        for name in self.FIGURES:
            values = self._figures[name][start:stop]
            texts = None
            for earlier, earlier_texts in done:
                texts = _texts_where_equal(values, earlier, earlier_texts)
                if texts is not None:
                    break
            if texts is None:
                texts = shared.floats(self, name, start, stop)
            else:
                shared.offer(self, name, start, stop, texts)
            done.append((values, texts))
            columns.append(texts)
        return columns

    def json_batches(self, size: int = JSON_ROWS) -> Iterator[list[str]]:
        """json_blocks() as lists of texts, one a row."""
        return (block.split("\n") for block in self.json_blocks(size) if block)

    def encoded(self, shared: "SharedTexts | None" = None) -> EncodedItems:
        """The rows for a JSON writer: `to_dict()` of each, or their JSON a block at a time."""
        return EncodedItems(lambda between: self.json_blocks(shared=shared, between=between), lambda: (row.to_dict() for row in self))

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


def _texts_where_equal(values: "array[float]", earlier: "array[float]", texts: list[str]) -> list[str] | None:
    """encode_floats(values) from `texts` (encode_floats(earlier)) where the two hold the same bits, made
    afresh elsewhere; None when fewer than half agree (then encoding the column whole is as quick)."""
    import numpy as np

    same = np.frombuffer(values, np.uint64) == np.frombuffer(earlier, np.uint64)  # bits: -0.0 is not 0.0
    agree = int(np.count_nonzero(same))
    if agree == len(values):
        return texts
    if 2 * agree < len(values):
        return None
    differ = np.flatnonzero(~same).tolist()
    made = list(texts)
    for index, text in zip(differ, encode_floats([values[index] for index in differ])):
        made[index] = text
    return made


def _in_range(values: "Sequence[int]") -> bool:
    """Every value from 0 to below 2**63 (a NumPy int64 column's bounds read whole)."""
    if getattr(values, "dtype", None) is not None:
        return bool(values.min() >= 0)  # type: ignore[attr-defined]  # int64: below 2**63 already
    return min(values) >= 0 and max(values) < 2**63


def _extend(held: "array[Any]", values: "Sequence[Any]") -> None:
    """held.extend(values), a NumPy array's (a reader's whole column) as its bytes rather than item by item."""
    tobytes = getattr(values, "tobytes", None)
    if tobytes is not None and getattr(values, "dtype", None) is not None:
        held.frombytes(values.astype(held.typecode, copy=False).tobytes())
    else:
        held.extend(values)


# KernelTimes.to_dict()'s keys in order, and its JSON with each value a %s (keys need no escaping).
_TIMES_KEYS = ("kernel", "instances", "total_s", "average_s", "median_s", "min_s", "max_s", "stddev_s", "time_percent", "line")
_TIMES_PARTS = ("{" + '"kernel": ', *(f', "{key}": ' for key in _TIMES_KEYS[1:]), "}")


# ---------------------------------------------------------------- validation helpers


def _bad(what: str, expected: str, value: Any) -> ProfileError:
    return ProfileError(f"{what} must be {expected}; got {value!r}", "profile record")


def expect_mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(what, "an object", value)
    return value


def expect_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(what, "a list", value)
    return value


def expect_text(value: Any, what: str, required: bool = False) -> str:
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


def number_format_from(value: Any) -> NumberFormat | None:
    if value is None:
        return None
    record = expect_mapping(value, "number format")
    decimal, how = record.get("decimal_mark"), record.get("how")
    if decimal not in MARK_NAMES or how not in ("decided", "assumed", "chosen"):
        raise _bad("number format", "a decimal mark ('.' or ',') and how it was decided", value)
    expect_text(record.get("evidence", ""), "evidence")
    _int(record.get("ambiguous", 0), "ambiguous")
    return from_plain(record, NumberFormat)


def _triple(value: Any, what: str) -> tuple[int, int, int] | None:
    if value is None:
        return None
    items = expect_list(value, what)
    if len(items) != 3:
        raise _bad(what, "three integers", value)
    x, y, z = (_int(item, what) for item in items)
    return (x, y, z)
