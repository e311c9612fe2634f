"""One imported profiler file: the records it holds, its kernels, and the rules the user set.

A `Profile` is the tool and page a file came from, every kernel launch (ncu)
or every kernel's time summary (nsys), and the match rules. It groups its
records into `Kernel`s (`kernels()`) and serialises to plain JSON for
`Session.profiles` (`to_dict` / `from_dict`, validated with one clear message
on a bad record), keeping by default only the metrics the workbench reads.
It sits above the records, the counters and the kernels it is made into, and
below the readers that make it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from workbench.profilers.counters import is_used_metric
from workbench.profilers.errors import ProfileError
from workbench.profilers.kernels import Kernel, group_kernels
from workbench.profilers.names import MatchRule
from workbench.records import to_plain
from workbench.profilers.numbers import NumberFormat
from workbench.profilers.records import (
    NCU,
    NCU_CONDITIONS_NOTE,
    NSYS,
    NSYS_CONDITIONS_NOTE,
    RECORD_FORMAT,
    RECORD_VERSION,
    TOOL_TITLES,
    KernelLaunch,
    KernelTimes,
    KernelTimesTable,
    SharedTexts,
    expect_list,
    expect_mapping,
    number_format_from,
    expect_text,
)


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
        return group_kernels(self.tool, self.launches, self.summaries)

    def kernel_names(self) -> "Iterable[str]":
        """The names of kernels() in order, without building Kernels where the summary holds them as a column."""
        if self.tool == NSYS and isinstance(self.summaries, KernelTimesTable):
            return self.summaries.names
        return (kernel.name for kernel in self.iter_kernels())

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

    # by hand, with from_dict: metrics kept by choice, shared texts, the summaries' JSON written a batch at a time
    def to_dict(self, all_metrics: bool = False, lazy: bool = False, shared: "SharedTexts | None" = None) -> dict[str, Any]:
        """Plain JSON for Session.profiles: each launch's metrics with their printed text.

        By default only the metrics the workbench reads (DRAM, L2, duration,
        FLOP counters, launch shape, device name) are kept: a `--set full`
        raw page has over a thousand per launch, which would swell a session
        file to tens of megabytes. `all_metrics=True` keeps every one.
        `lazy=True` gives launches and summaries as iterators (a large nsys
        table as `EncodedItems`), for writing a large record out as it is
        made (the CLI's --json), its float texts through `shared` where the document writes them twice.
        """
        keep = None if all_metrics else is_used_metric
        launches: Any = (launch.to_dict(keep) for launch in self.launches)
        summaries: Any = (summary.to_dict() for summary in self.summaries)
        if lazy and isinstance(self.summaries, KernelTimesTable):
            summaries = self.summaries.encoded(shared)
        if not lazy:
            launches, summaries = list(launches), list(summaries)
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "tool": self.tool,
            "layout": self.layout,
            "source": self.source,
            "notes": list(self.notes),
            "number_format": to_plain(self.number_format),
            "matches": [rule.to_dict() for rule in self.matches],
            "launches": launches,
            "summaries": summaries,
        }

    @classmethod
    def from_dict(cls, data: Any) -> "Profile":
        """Rebuild a profile saved by to_dict(); a bad record raises ProfileError naming the fault."""
        record = expect_mapping(data, "a profile record")
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
            layout=expect_text(record.get("layout"), "layout", required=True),
            source=expect_text(record.get("source", ""), "source"),
            launches=tuple(KernelLaunch.from_dict(item) for item in expect_list(record.get("launches", []), "launches")),
            summaries=tuple(KernelTimes.from_dict(item) for item in expect_list(record.get("summaries", []), "summaries")),
            notes=tuple(expect_text(note, "note") for note in expect_list(record.get("notes", []), "notes")),
            matches=tuple(MatchRule.from_dict(item) for item in _bounded_rules(expect_list(record.get("matches", []), "matches"))),
            number_format=number_format_from(record.get("number_format")),
        )


MAX_PROFILE_RULES = 1_000  # each kernel is tried against each rule: a file's count of them is bounded


def _bounded_rules(items: list[Any]) -> list[Any]:
    """A profile record's match rules, refused past MAX_PROFILE_RULES (rules × kernels is the matching's work)."""
    if len(items) > MAX_PROFILE_RULES:
        raise ProfileError(f"a profile record holds {len(items):,} match rules; at most {MAX_PROFILE_RULES:,} are read",
                           "profile record")
    return items
