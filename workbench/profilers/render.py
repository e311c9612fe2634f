"""Plain-text views of an imported profile: the per-kernel table the CLI prints."""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from workbench.profilers.counters import LEVEL_METHOD_TITLES, LEVEL_METHODS, NCU_LEVELS
from workbench.profilers.kernels import Kernel, kernels_json, typical_times, with_none
from workbench.profilers.names import kernel_base_names
from workbench.profilers.profile import Profile
from workbench.profilers.records import NCU, NSYS, KernelTimesTable, SharedTexts
from workbench.model.units import format_bytes, format_flop, format_time, format_times

_DASH = "–"
NAME_WIDTH = 60  # longer kernel names are cut in the table (JSON keeps them whole)


def _shorten(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…"


def _cell_bytes(kernel: Kernel, which: str, binary: bool) -> str:
    reading = getattr(kernel.dram, which) if which != "l2" else kernel.l2_bytes
    return _DASH if reading is None else format_bytes(float(reading.value), binary)


def kernel_header(kernels: Sequence[Kernel], convention: str = "fma2") -> tuple[str, ...]:
    """The column titles of a per-kernel table (ncu columns when any kernel is from ncu)."""
    ncu = any(kernel.tool == NCU for kernel in kernels)
    statistic = "mean" if any(kernel.statistic == "mean" for kernel in kernels) else "median"
    header: tuple[str, ...] = ("kernel", "launches", f"duration ({statistic})")
    if ncu:
        header += ("DRAM read", "DRAM write", "L2 traffic", f"achieved FLOP ({convention})", "grid × block")
    else:
        header += ("min", "max", "total")
    return header


def kernel_row(kernel: Kernel, ncu: bool, convention: str = "fma2", binary: bool = False) -> tuple[str, ...]:
    """One kernel's cells of the per-kernel table."""
    duration = _DASH if kernel.duration is None else format_time(float(kernel.duration.value))
    row: tuple[str, ...] = (_shorten(kernel.base_name), str(kernel.instances), duration)
    if ncu:
        achieved = kernel.achieved_flop(convention)
        return row + (
            _cell_bytes(kernel, "read", binary),
            _cell_bytes(kernel, "write", binary),
            _cell_bytes(kernel, "l2", binary),
            _DASH if achieved is None else format_flop(float(achieved)),
            kernel.grid_block or _DASH,
        )
    total = _DASH if kernel.total_time is None else format_time(kernel.total_time)
    return row + (
        _DASH if kernel.duration_min is None else format_time(kernel.duration_min),
        _DASH if kernel.duration_max is None else format_time(kernel.duration_max),
        total,
    )


def kernel_rows(kernels: Sequence[Kernel], convention: str = "fma2", binary: bool = False) -> list[tuple[str, ...]]:
    """One row of text cells per kernel (header first), for a table of the tool's own figures."""
    header = kernel_header(kernels, convention)
    ncu = any(kernel.tool == NCU for kernel in kernels)
    return [header] + [kernel_row(kernel, ncu, convention, binary) for kernel in kernels]


def format_rows(rows: Sequence[tuple[str, ...]]) -> str:
    """Rows of cells as aligned columns, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


# Tables longer than this are written row by row in two passes (widths, then rows) instead of held whole.
_HELD_ROWS = 10_000
_BATCH = 4096  # rows of a long nsys table formatted at once
_CELLS_APART = "\n"  # between the held cells of one column (a name holding it is formatted again)


def _times_cells(table: KernelTimesTable, start: int, stop: int) -> list[list[str]]:
    """The cells of kernel_row() for the nsys rows start:stop, column by column, read from the table's columns."""

    names = table.names[start:stop]
    return [
        list(map(_shorten, kernel_base_names(names))),
        list(map(str, table.instances[start:stop])),
        format_times(typical_times(table, start, stop), _DASH),
        format_times(with_none(table.figure("minimum")[start:stop]), _DASH),
        format_times(with_none(table.figure("maximum")[start:stop]), _DASH),
        format_times(table.figure("total_time")[start:stop].tolist(), _DASH),
    ]


def _long_times_table(table: KernelTimesTable, convention: str) -> Iterator[str]:
    """The per-kernel table of a long nsys summary, from its columns, as _table_lines writes it.

    A first pass finds the widths and keeps each batch's cells as one text
    per column (a few bytes a cell, not an object); the second pads them.
    """
    statistic = "mean" if any(value != value for value in table.figure("median")) else "median"
    header = kernel_header([], convention)[:2] + (f"duration ({statistic})",) + kernel_header([], convention)[3:]
    widths = [len(cell) for cell in header]
    held: deque[list[str]] = deque()
    for start in range(0, len(table), _BATCH):
        columns = _times_cells(table, start, min(start + _BATCH, len(table)))
        for index, column in enumerate(columns):
            widths[index] = max(widths[index], max(map(len, column)))
        held.append([_CELLS_APART.join(column) for column in columns])
    yield "  ".join(cell.ljust(width) for cell, width in zip(header, widths)).rstrip()
    last = len(widths) - 1
    for start in range(0, len(table), _BATCH):
        stop = min(start + _BATCH, len(table))
        columns = [text.split(_CELLS_APART) for text in held.popleft()]
        if any(len(column) != stop - start for column in columns):  # a cell held the separator: format again
            columns = _times_cells(table, start, stop)
        padded = [[cell.ljust(widths[index]) for cell in column] if index < last else column for index, column in enumerate(columns)]
        for cells in zip(*padded):
            yield "  ".join(cells).rstrip()


def _table_lines(profile: Profile, convention: str, binary: bool) -> Iterator[str]:
    """The per-kernel table's lines; a profile of very many kernels is formatted twice rather than held."""
    if profile.kernel_count <= _HELD_ROWS:
        yield from format_rows(kernel_rows(profile.kernels(), convention, binary)).splitlines()
        return
    if profile.tool == NSYS and isinstance(profile.summaries, KernelTimesTable):
        yield from _long_times_table(profile.summaries, convention)
        return
    ncu = profile.tool == NCU
    statistic = "median"
    if not ncu and any(times.median is None for times in profile.summaries):
        statistic = "mean"
    header = kernel_header([], convention)[:2] + (f"duration ({statistic})",) + kernel_header(
        list(itertools.islice(profile.iter_kernels(), 1)), convention
    )[3:]
    widths = [len(cell) for cell in header]
    for kernel in profile.iter_kernels():
        for index, cell in enumerate(kernel_row(kernel, ncu, convention, binary)):
            if len(cell) > widths[index]:
                widths[index] = len(cell)
    yield "  ".join(cell.ljust(width) for cell, width in zip(header, widths)).rstrip()
    for kernel in profile.iter_kernels():
        row = kernel_row(kernel, ncu, convention, binary)
        yield "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()


def summary_lines(profile: Profile, convention: str = "fma2", binary: bool = False) -> Iterator[str]:
    """The heading, a warning where the number format was assumed, the per-kernel table, and the notes."""
    kernel_count = profile.kernel_count
    if profile.launches:
        launches = len(profile.launches)
    elif isinstance(profile.summaries, KernelTimesTable):
        launches = sum(profile.summaries.instances)
    else:
        launches = sum(times.instances for times in profile.summaries)
    where = ""
    if profile.device_name:
        where = f", device {profile.device_name}"
        if profile.compute_capability:
            where += f" (CC {profile.compute_capability})"
    yield (
        f"{profile.source}: {profile.title}, {kernel_count} kernel{'s' if kernel_count != 1 else ''}, "
        f"{launches} launch{'es' if launches != 1 else ''}{where}"
    )
    number_format = profile.number_format
    warned = number_format is not None and number_format.assumed
    if warned and number_format is not None:
        yield f"warning: {number_format.note()}"
    yield ""
    yield from _table_lines(profile, convention, binary)
    yield ""
    notes = [profile.conditions_note, *(note for note in profile.notes if not (warned and number_format and note == number_format.note()))]
    for note in notes:
        yield f"note: {note}"
    if profile.tool == NCU:  # nsys kernels carry no notes of their own (kernels.kernel_from_times)
        for kernel in profile.iter_kernels():
            for note in kernel.notes:
                yield f"note: {kernel.base_name}: {note}"


def profile_summary(profile: Profile, convention: str = "fma2", binary: bool = False) -> str:
    """The heading, the per-kernel table, and the file's notes."""
    return "\n".join(summary_lines(profile, convention, binary))


@dataclass(frozen=True)
class ImportReport:
    """What `workbench import-ncu|import-nsys` prints, made as it is written: text lines, or JSON data."""

    profile: Profile
    device: Any
    comparisons: tuple[Any, ...]
    unmatched: tuple[str, ...]
    convention: str
    binary: bool
    rules: tuple[Any, ...]
    levels: str = "ncu"  # how L2 and L1 bytes are counted: "ncu" (its own sections) or "nersc"
    selected: int = 0  # kernels the rules select: more than `comparisons` where too many to compare each

    def symptoms(self) -> Iterator[Any]:
        """Kernels whose bytes and duration imply more than the device's bandwidth (see profilers.symptoms)."""
        from workbench.profilers.symptoms import bandwidth_symptom

        if self.device is None or self.profile.tool != NCU:
            return
        for kernel in self.profile.iter_kernels():
            symptom = bandwidth_symptom(kernel, self.device, self.profile.number_format, self.binary)
            if symptom is not None:
                yield symptom

    def level_lines(self) -> Iterator[str]:
        """Each ncu kernel's L2 and L1 bytes by the chosen method, with the metrics they came from and the
        intensities; nothing where no kernel has counters for either method."""
        if self.profile.tool != NCU:
            return
        kernels = list(itertools.islice(self.profile.iter_kernels(), _LEVEL_KERNELS + 1))
        if not any(kernel.levels(method).points(None) for kernel in kernels for method in LEVEL_METHODS):
            return
        yield ""
        yield f"levels ({LEVEL_METHOD_TITLES[self.levels]}):"
        for kernel in kernels[:_LEVEL_KERNELS]:
            yield f"  {_shorten(kernel.base_name)}: {kernel.levels(self.levels).text(kernel.achieved_flop(self.convention), self.binary)}"
        if len(kernels) > _LEVEL_KERNELS:
            yield f"  … and more kernels (--json lists every one)"
        other = next(method for method in LEVEL_METHODS if method != self.levels)
        yield f"  (--levels {other}: {LEVEL_METHOD_TITLES[other]})"

    def lines(self) -> Iterator[str]:
        yield from summary_lines(self.profile, self.convention, self.binary)
        yield from self.level_lines()
        for symptom in self.symptoms():
            yield f"warning: {symptom.warning()}"
        for comparison in self.comparisons:
            yield ""
            yield from comparison.derivation_text().splitlines()
        if self.selected > len(self.comparisons):
            yield ""
            yield self.too_many_note()
        if self.rules and self.device is None:
            yield ""
            yield "note: no device given and the file names none the catalogue knows: time bounds left out (use --device)"
        for pattern in self.unmatched:
            names = [kernel.base_name for kernel in itertools.islice(self.profile.iter_kernels(), _NAMES_SHOWN + 1)]
            shown = ", ".join(names[:_NAMES_SHOWN]) + (", …" if len(names) > _NAMES_SHOWN else "")
            yield ""
            yield f"note: --match pattern '{pattern}' selects no kernel (kernels: {shown})"

    def too_many_note(self) -> str:
        return (f"note: the --match rules select {self.selected:,} kernels; the first {len(self.comparisons):,} "
                "are compared (a narrower pattern picks the kernels that implement the operation)")

    def text(self) -> str:
        return "\n".join(self.lines())

    def data(self) -> dict[str, object]:
        """The JSON document (docs/import-json.md); its long lists are iterators, written out as they are
        made. An nsys summary's rows are written once, in the profile record: each of its kernels refers
        to its row (kernels.times_kernel_dict), the medians' texts made once for both."""
        shared = SharedTexts()
        return {
            "profile": self.profile.to_dict(lazy=True, shared=shared),
            "levels_method": self.levels,
            "device": None if self.device is None else self.device.key,
            "kernels": kernels_json(self.profile.tool, self.profile.launches, self.profile.summaries, self.convention, shared),
            "comparisons": [comparison.to_dict() for comparison in self.comparisons],
            "kernels_selected": max(self.selected, len(self.comparisons)),
            **({"comparisons_note": self.too_many_note()} if self.selected > len(self.comparisons) else {}),
            "unmatched_patterns": list(self.unmatched),
            "warnings": [symptom.warning() for symptom in self.symptoms()],
        }


_NAMES_SHOWN = 20
_LEVEL_KERNELS = 50  # kernels whose levels the text lists


def import_report(
    path: str,
    tool: str,
    matches: Sequence[str] = (),
    device: str | None = None,
    convention: str = "fma2",
    binary: bool = False,
    decimal_mark: str | None = None,
    levels: str = NCU_LEVELS,
) -> ImportReport:
    """What `workbench import-ncu|import-nsys FILE [--match P=D …]` prints.

    The file must come from `tool` ("ncu" or "nsys"); each --match pairs a
    kernel-name pattern with a declaration, and every kernel it selects is
    compared with that operation on `device` (default: the GPU the file names).
    `decimal_mark` ('.' or ',') overrides the number format the file's values decide.
    `levels` counts L2 and L1 bytes by ncu's own hierarchical-roofline sections ('ncu') or by NERSC's method.
    """
    from workbench.model.devices.catalogue import find_device
    from workbench.profilers.kernel_compare import compare_profile, profile_device
    from workbench.profilers.matching import parse_match
    from workbench.profilers.reader import read_profile
    from workbench.profilers.records import TOOL_TITLES
    from workbench.profilers.table import ProfileError

    rules = [parse_match(text) for text in matches]
    profile = read_profile(path, decimal_mark=decimal_mark)
    if profile.tool != tool:
        other = "import-nsys" if profile.tool != NCU else "import-ncu"
        raise ProfileError(
            f"this is {TOOL_TITLES[profile.tool]} output, not {TOOL_TITLES[tool]}; use `workbench {other}`",
            profile.source,
        )
    profile = profile.with_matches(rules)
    chosen = find_device(device) if device else profile_device(profile)
    comparisons = compare_profile(profile, rules, chosen, convention=convention, binary=binary)
    selected = set()
    if rules:
        for name in profile.kernel_names():
            if len(selected) == len(rules):
                break
            for index, rule in enumerate(rules):
                if index not in selected and rule.matches(name):
                    selected.add(index)
    unmatched = tuple(rule.pattern for index, rule in enumerate(rules) if index not in selected)
    return ImportReport(profile, chosen, tuple(comparisons), unmatched, convention, binary, tuple(rules), levels,
                        comparisons.selected)
