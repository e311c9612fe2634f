"""What the host CPU and its memory look like: model, free RAM, last-level cache, clock.

Read from /proc and /sys where Linux offers them, with portable fallbacks;
nothing here changes any setting.
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)\s*$", re.IGNORECASE)
_UNIT = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def cpu_model() -> str:
    """The CPU's marketing name ('AMD EPYC 9654'), or the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def logical_cores() -> int:
    """CPUs this process may run on (its affinity set where the OS reports one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def available_memory() -> tuple[int, str]:
    """Bytes of RAM a new allocation can take without swapping, and where the figure came from."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024, "MemAvailable in /proc/meminfo"
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages = os.sysconf("SC_AVPHYS_PAGES")
        page = os.sysconf("SC_PAGE_SIZE")
        return int(pages) * int(page), "free physical pages (sysconf)"
    except (AttributeError, ValueError, OSError):
        return 0, "unknown (no /proc/meminfo and no sysconf)"


def last_level_cache_bytes() -> int | None:
    """Size of the largest CPU cache (usually L3) from sysfs, or None where it is not reported."""
    largest = None
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            match = _SIZE.match(entry.read_text(encoding="utf-8"))
        except OSError:
            continue
        if match:
            size = int(match.group(1)) * _UNIT[match.group(2).upper()]
            largest = size if largest is None else max(largest, size)
    return largest


def cpu_conditions() -> dict[str, Any]:
    """Mean core clock (MHz) and the 1-minute load average now; missing figures are left out."""
    conditions: dict[str, Any] = {}
    try:
        clocks = [
            float(line.split(":", 1)[1])
            for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
            if line.lower().startswith("cpu mhz")
        ]
        if clocks:
            conditions["cpu_clock_mhz_mean"] = round(sum(clocks) / len(clocks), 1)
    except (OSError, ValueError):
        pass
    try:
        conditions["load_average_1m"] = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        pass
    return conditions
