"""What the host CPU and its memory look like: model, cores, SIMD width, caches, free RAM, clock.

`host_device()` turns it into a Device (key "host-cpu") whose rates are
derived from those facts and labelled derived; calibration replaces them.

Read from /proc and /sys where Linux offers them, with portable fallbacks;
nothing here changes any setting.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from functools import lru_cache
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


# -- this machine's CPU as a device --------------------------------------------------

FMA_PIPES_ASSUMED = 2  # vector FMA pipes per core: two on current x86 server and desktop cores, and on Neoverse
NOMINAL_BANDWIDTH = 51.2e9  # 2 channels × DDR4-3200 × 8 B: a stand-in until calibration measures it


@dataclass(frozen=True)
class CacheLevel:
    """One cache level as sysfs reports it: size of one instance and how many instances there are."""

    level: int
    kind: str  # "Data", "Instruction", "Unified"
    instance_bytes: int
    instances: int

    @property
    def name(self) -> str:
        suffix = {"Data": "d", "Instruction": "i"}.get(self.kind, "")
        return f"L{self.level}{suffix}"

    @property
    def total_bytes(self) -> int:
        return self.instance_bytes * self.instances


@dataclass(frozen=True)
class HostCPU:
    """What the OS reports about this machine's CPU, and the peak rates derived from it."""

    model: str
    architecture: str  # platform.machine(): x86_64, aarch64
    physical_cores: int
    logical_cores: int
    clock_mhz: float | None
    clock_source: str
    simd_bits: int
    simd_name: str  # "AVX-512", "AVX2", "SSE2", "NEON"
    has_fma: bool
    caches: tuple[CacheLevel, ...]
    memory_bytes: int | None

    def fp32_lanes(self) -> int:
        return self.simd_bits // 32

    def peak_flop_per_s(self, bits: int) -> float | None:
        """cores × clock × SIMD lanes × FMA pipes × 2 FLOP per FMA, for elements of `bits` bits."""
        if not self.clock_mhz:
            return None
        return self.physical_cores * self.clock_mhz * 1e6 * (self.simd_bits // bits) * FMA_PIPES_ASSUMED * 2

    def derivation(self, bits: int) -> str:
        lanes = self.simd_bits // bits
        clock = f"{self.clock_mhz / 1000:.3g} GHz" if self.clock_mhz else "unknown clock"
        return (
            f"derived: {self.physical_cores} cores × {clock} ({self.clock_source}) × {lanes} fp{bits} lanes "
            f"({self.simd_name}) × {FMA_PIPES_ASSUMED} FMA pipes (assumed) × 2 FLOP; an upper bound, calibrate to measure"
        )

    def cache(self, level: int) -> CacheLevel | None:
        for cache in self.caches:
            if cache.level == level and cache.kind != "Instruction":
                return cache
        return None



def _cpuinfo(root: Path) -> list[dict[str, str]]:
    """/proc/cpuinfo as one dict per processor block."""
    try:
        text = (root / "proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    blocks: list[dict[str, str]] = []
    for chunk in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in chunk.splitlines():
            name, sep, value = line.partition(":")
            if sep:
                fields[name.strip().lower()] = value.strip()
        if fields:
            blocks.append(fields)
    return blocks


def _simd(flags: set[str], machine: str) -> tuple[int, str]:
    """The widest vector unit the flags announce: (bits, name)."""
    if "avx512f" in flags:
        return 512, "AVX-512"
    if "avx2" in flags:
        return 256, "AVX2"
    if "avx" in flags:
        return 256, "AVX"
    if "asimd" in flags or machine in ("aarch64", "arm64"):
        return 128, "NEON"
    return 128, "SSE2"


def _caches(root: Path) -> tuple[CacheLevel, ...]:
    """Each cache level's instance size and count, from every CPU's sysfs cache directory."""
    shared: dict[tuple[int, str], tuple[int, set[str]]] = {}
    for index in sorted((root / "sys/devices/system/cpu").glob("cpu[0-9]*/cache/index[0-9]*")):
        try:
            level = int((index / "level").read_text().strip())
            kind = (index / "type").read_text().strip()
            size_match = _SIZE.match((index / "size").read_text())
            sharing = (index / "shared_cpu_list").read_text().strip()
        except (OSError, ValueError):
            continue
        if not size_match:
            continue
        size = int(size_match.group(1)) * _UNIT[size_match.group(2).upper()]
        known = shared.setdefault((level, kind), (size, set()))
        known[1].add(sharing)
    levels = [CacheLevel(level, kind, size, max(1, len(groups))) for (level, kind), (size, groups) in shared.items()]
    order = {"Data": 0, "Instruction": 1, "Unified": 2}
    return tuple(sorted(levels, key=lambda c: (c.level, order.get(c.kind, 3))))


def _clock(root: Path, blocks: list[dict[str, str]]) -> tuple[float | None, str]:
    """The maximum core clock in MHz: cpufreq's cpuinfo_max_freq, else the highest 'cpu MHz' now."""
    try:
        khz = int((root / "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").read_text().strip())
        if khz > 0:
            return khz / 1000, "cpufreq maximum"
    except (OSError, ValueError):
        pass
    clocks = []
    for block in blocks:
        try:
            clocks.append(float(block.get("cpu mhz", "")))
        except ValueError:
            continue
    if clocks:
        return max(clocks), "clock now, /proc/cpuinfo"
    return None, "not reported"


def read_host_cpu(root: Path | str = "/") -> HostCPU:
    """This machine's CPU from /proc and /sys (under `root`, so tests can give a fake tree)."""
    base = Path(root)
    blocks = _cpuinfo(base)
    first = blocks[0] if blocks else {}
    model = first.get("model name") or first.get("hardware") or first.get("cpu model") or ""
    if not model and base == Path("/"):
        model = platform.processor() or ""
    machine = platform.machine() if base == Path("/") else ("aarch64" if "features" in first else "x86_64")
    flags = set((first.get("flags") or first.get("features") or "").split())
    logical = len(blocks) or (logical_cores() if base == Path("/") else 1)
    cores = {(b.get("physical id", "0"), b.get("core id")) for b in blocks if b.get("core id") is not None}
    physical = len(cores) or logical
    clock, clock_source = _clock(base, blocks)
    bits, simd_name = _simd(flags, machine)
    memory = None
    try:
        for line in (base / "proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        pass
    return HostCPU(
        model=model or "unknown CPU",
        architecture=machine,
        physical_cores=physical,
        logical_cores=logical,
        clock_mhz=clock,
        clock_source=clock_source,
        simd_bits=bits,
        simd_name=simd_name,
        has_fma="fma" in flags or "asimd" in flags,
        caches=_caches(base),
        memory_bytes=memory,
    )


def device_from_host(cpu: HostCPU) -> Any:
    """The Device for a host CPU: derived vector rates, caches, and a nominal bandwidth marked as such."""
    from workbench.model.devices.device import BANDWIDTH, DERIVED, HOST_CPU_KEY, NOMINAL, Device, Rate

    peak: dict[str, Rate] = {}
    for path, bits in (("fp32", 32), ("fp64", 64)):
        value = cpu.peak_flop_per_s(bits)
        if value:
            peak[path] = Rate(value, DERIVED, cpu.derivation(bits))
    peak[BANDWIDTH] = Rate(
        NOMINAL_BANDWIDTH,
        NOMINAL,
        "not reported by the OS: a nominal 2 channels × DDR4-3200 × 8 B = 51.2 GB/s stands in; calibrate to measure",
    )
    l2 = cpu.cache(2)
    caches = ", ".join(f"{c.name} {_size_text(c.instance_bytes)} × {c.instances}" for c in cpu.caches)
    return Device(
        key=HOST_CPU_KEY,
        name=f"This machine: {cpu.model} ({cpu.physical_cores} cores, {cpu.simd_name})",
        kind="cpu",
        peak=peak,
        memory_bytes=cpu.memory_bytes,
        memory_type="",
        l2_bytes=l2.total_bytes if l2 else None,
        l2_source="sysfs cache sizes (all L2 instances together)" if l2 else "",
        sm_count=cpu.physical_cores,
        architecture=cpu.architecture,
        source="/proc/cpuinfo and /sys: compute rates derived from cores, clock and SIMD width; DRAM bandwidth nominal",
        notes=f"Caches: {caches or 'not reported'}. Rates are derived upper bounds; Calibrate… replaces them with measured ones.",
        vendor="",
    )


def _size_text(size: int) -> str:
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


@lru_cache(maxsize=1)
def host_cpu_names() -> frozenset[str]:
    """The names this machine's CPU goes by: the model a run records (`cpu_model`) and the detected one."""
    return frozenset(name for name in (cpu_model(), host_cpu().model) if name)


@lru_cache(maxsize=1)
def host_cpu() -> HostCPU:
    """This machine's CPU (read once per process)."""
    return read_host_cpu()


@lru_cache(maxsize=1)
def host_device() -> Any:
    """This machine's CPU as a Device (read once per process)."""
    return device_from_host(host_cpu())
