"""Plain-text views of an imported profile: the per-kernel table the CLI prints."""

from __future__ import annotations

from typing import Sequence

from workbench.profilers.kernels import Kernel
from workbench.profilers.records import NCU, Profile
from workbench.units import format_bytes, format_flop, format_time

_DASH = "–"
NAME_WIDTH = 60  # longer kernel names are cut in the table (JSON keeps them whole)


def _shorten(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…"


def _cell_bytes(kernel: Kernel, which: str, binary: bool) -> str:
    reading = getattr(kernel.dram, which) if which != "l2" else kernel.l2_bytes
    return _DASH if reading is None else format_bytes(float(reading.value), binary)


def kernel_rows(kernels: Sequence[Kernel], convention: str = "fma2", binary: bool = False) -> list[tuple[str, ...]]:
    """One row of text cells per kernel (header first), for a table of the tool's own figures."""
    ncu = any(kernel.tool == NCU for kernel in kernels)
    statistic = "mean" if any(kernel.statistic == "mean" for kernel in kernels) else "median"
    header: tuple[str, ...] = ("kernel", "launches", f"duration ({statistic})")
    if ncu:
        header += ("DRAM read", "DRAM write", "L2 traffic", f"achieved FLOP ({convention})", "grid × block")
    else:
        header += ("min", "max", "total")
    rows = [header]
    for kernel in kernels:
        duration = _DASH if kernel.duration is None else format_time(float(kernel.duration.value))
        row: tuple[str, ...] = (_shorten(kernel.base_name), str(kernel.instances), duration)
        if ncu:
            achieved = kernel.achieved_flop(convention)
            row += (
                _cell_bytes(kernel, "read", binary),
                _cell_bytes(kernel, "write", binary),
                _cell_bytes(kernel, "l2", binary),
                _DASH if achieved is None else format_flop(float(achieved)),
                kernel.grid_block or _DASH,
            )
        else:
            total = _DASH if kernel.total_time is None else format_time(kernel.total_time)
            row += (
                _DASH if kernel.duration_min is None else format_time(kernel.duration_min),
                _DASH if kernel.duration_max is None else format_time(kernel.duration_max),
                total,
            )
        rows.append(row)
    return rows


def format_rows(rows: Sequence[tuple[str, ...]]) -> str:
    """Rows of cells as aligned columns, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def profile_summary(profile: Profile, convention: str = "fma2", binary: bool = False) -> str:
    """The heading, the per-kernel table, and the file's notes."""
    kernels = profile.kernels()
    launches = len(profile.launches) if profile.launches else sum(kernel.instances for kernel in kernels)
    where = ""
    if profile.device_name:
        where = f", device {profile.device_name}"
        if profile.compute_capability:
            where += f" (CC {profile.compute_capability})"
    heading = (
        f"{profile.source}: {profile.title}, {len(kernels)} kernel{'s' if len(kernels) != 1 else ''}, "
        f"{launches} launch{'es' if launches != 1 else ''}{where}"
    )
    lines = [heading, "", format_rows(kernel_rows(kernels, convention, binary))]
    notes = [profile.conditions_note, *profile.notes]
    for kernel in kernels:
        notes += [f"{kernel.base_name}: {note}" for note in kernel.notes]
    lines.append("")
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)


def import_report(
    path: str,
    tool: str,
    matches: Sequence[str] = (),
    device: str | None = None,
    convention: str = "fma2",
    binary: bool = False,
) -> tuple[str, dict[str, object]]:
    """What `workbench import-ncu|import-nsys FILE [--match P=D …]` prints: (text, JSON data).

    The file must come from `tool` ("ncu" or "nsys"); each --match pairs a
    kernel-name pattern with a declaration, and every kernel it selects is
    compared with that operation on `device` (default: the GPU the file names).
    """
    from workbench.devices.catalogue import find_device
    from workbench.profilers.compare import compare_profile, profile_device
    from workbench.profilers.matching import match_kernels, parse_match
    from workbench.profilers.reader import read_profile
    from workbench.profilers.records import TOOL_TITLES
    from workbench.profilers.table import ProfileError

    rules = [parse_match(text) for text in matches]
    profile = read_profile(path)
    if profile.tool != tool:
        other = "import-nsys" if profile.tool != NCU else "import-ncu"
        raise ProfileError(
            f"this is {TOOL_TITLES[profile.tool]} output, not {TOOL_TITLES[tool]}; use `workbench {other}`",
            profile.source,
        )
    profile = profile.with_matches(rules)
    chosen = find_device(device) if device else profile_device(profile)
    comparisons = compare_profile(profile, rules, chosen, convention=convention, binary=binary)
    kernels = profile.kernels()
    lines = [profile_summary(profile, convention, binary)]
    unmatched = [rule.pattern for rule in rules if not match_kernels(kernels, [rule])]
    for comparison in comparisons:
        lines += ["", comparison.derivation_text()]
    if rules and chosen is None:
        lines += ["", "note: no device given and the file names none the catalogue knows: time bounds left out (use --device)"]
    for pattern in unmatched:
        names = ", ".join(kernel.base_name for kernel in kernels)
        lines += ["", f"note: --match pattern '{pattern}' selects no kernel (kernels: {names})"]
    data: dict[str, object] = {
        "profile": profile.to_dict(),
        "device": None if chosen is None else chosen.key,
        "kernels": [kernel.to_dict(convention) for kernel in kernels],
        "comparisons": [comparison.to_dict() for comparison in comparisons],
        "unmatched_patterns": unmatched,
    }
    return "\n".join(lines), data
