"""Device records: a device's datasheet rates per instruction path, measured and entered rates beside them,
latencies, and the catalogue file's tables read as data.

A `Device` keeps its datasheet (or derived) figures and, beside them, any
overrides — measured by calibration or entered by the user. `rate(path)`
answers with the override when there is one, so bounds use measured rates by
default once calibration has run, and every rate says where it came from.
The catalogue's lookups (by key, by name, by what a driver reports) are in
devices/catalogue.py, above this module, devices/links.py and devices/host.py.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

from workbench.errors import DeviceError, UnitError
from workbench.records import record
DATASHEET = "datasheet"
DERIVED = "derived"
MEASURED = "measured"
ENTERED = "entered"
NOMINAL = "nominal"  # a stand-in guess (a CPU's DRAM bandwidth the OS does not report): shown, never a floor
SOURCES = (DATASHEET, DERIVED, MEASURED, ENTERED, NOMINAL)

BANDWIDTH = "hbm"  # the key of the memory-bandwidth rate among a device's rates

# Interfaces other than HBM whose rates a device may hold, keyed as devices/interfaces.py registers them
# (kept as literals here: interfaces.py sits beside this module and must not be imported in a cycle).
INTERFACE_RATE_KEYS = ("host", "l2", "smem")

# Shared memory → registers per SM and clock: 32 banks × 4 B = 128 B, NVIDIA Volta to Hopper (Ampere and
# Ada included). Blackwell and AMD parts are left without a derived figure until one is checked.
SMEM_BYTES_PER_CLOCK = 128
SMEM_ARCHITECTURES = ("Volta", "Turing", "Ampere", "Ada Lovelace", "Ada", "Hopper")

PATHS = ("fp64", "fp64_tc", "fp32", "tf32_tc", "fp16_tc", "fp16_tc_fp16acc", "bf16_tc", "fp8_tc", "fp4_tc", "int8_tc", "int4_tc")

PATH_TITLES = {
    "fp64": "FP64 (CUDA cores)",
    "fp64_tc": "FP64 tensor cores",
    "fp32": "FP32 (CUDA cores)",
    "tf32_tc": "TF32 tensor cores",
    "fp16_tc": "FP16 tensor cores, FP32 accumulate",
    "fp16_tc_fp16acc": "FP16 tensor cores, FP16 accumulate",
    "bf16_tc": "BF16 tensor cores",
    "fp8_tc": "FP8 tensor cores",
    "fp4_tc": "FP4 tensor cores",
    "int8_tc": "INT8 tensor cores",
    "int4_tc": "INT4 tensor cores",
    BANDWIDTH: "memory bandwidth",
}

# Where a device has no figure for a path, the path a library really falls back to.
_GPU_FALLBACK = {"fp16_tc_fp16acc": "fp16_tc", "fp64_tc": "fp64"}


# Every rate a bound divides by, whoever gives it (a datasheet, an entry, a file, a command line), lies in
# this range of base units per second: below it a bound overflows to infinity (5e-324 B/s) or is absurd,
# above it a million times any chip's.
MIN_RATE = 1e-3
MAX_RATE = 1e24


def rate_problem(value: object) -> str | None:
    """Why `value` cannot be a rate (FLOP/s or B/s), or None where it can: a finite number in the range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"a rate must be a number; got {value!r}"
    number = float(value)
    if not (number > 0) or number != number or number == float("inf"):
        return f"a rate must be positive and finite; got {number:.6g}"
    if not MIN_RATE <= number <= MAX_RATE:
        return f"a rate of {number:.6g} per second is outside {MIN_RATE:g} to {MAX_RATE:g}: its bounds would overflow or mean nothing"
    return None


@dataclass(frozen=True)
class Rate:
    """A sustained or peak rate in base units (FLOP/s or B/s) and where it came from."""

    value: float
    source: str
    citation: str = ""

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"unknown rate source {self.source!r}")


# Latency figures: where each comes from. A published microbenchmark (a paper, with its table), a nominal
# figure (an order of magnitude, labelled so), one this machine's calibration measured, or one entered.
LATENCY_ORIGINS = ("published", "nominal", MEASURED, ENTERED)
LATENCY_LOADS = ("idle", "loaded")  # nothing else in flight / the memory busy
MIN_LATENCY_S, MAX_LATENCY_S = 1e-9, 1e-3  # a memory access takes between a nanosecond and a millisecond

# Resident threads an SM (a CPU core: one NumPy thread) can hold, and resident blocks, by compute capability
# (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability").
_THREADS_PER_SM = {"7.0": 2048, "7.5": 1024, "8.0": 2048, "8.6": 1536, "8.7": 2048, "8.9": 1536, "9.0": 2048, "10.0": 2048}
_BLOCKS_PER_SM = {"7.0": 32, "7.5": 16, "8.0": 32, "8.6": 16, "8.7": 16, "8.9": 24, "9.0": 32, "10.0": 32}


@dataclass(frozen=True)
class Latency:
    """The time one load takes across an interface, idle (nothing else in flight) or loaded (the memory busy)."""

    seconds: float
    origin: str  # one of LATENCY_ORIGINS
    citation: str

    def __post_init__(self) -> None:
        if self.origin not in LATENCY_ORIGINS:
            raise ValueError(f"unknown latency origin {self.origin!r}")
        if not (self.seconds > 0):
            raise ValueError(f"a latency must be positive; got {self.seconds}")


# A figure is written as a float whatever number it was made from (a file's 400 reads back as 400.0).
record(Rate, dump={"value": float})
record(Latency, dump={"seconds": float})


@dataclass(frozen=True)
class Device:
    """One device: identity, memory, datasheet rates, and overrides on top of them."""

    key: str
    name: str
    kind: str  # "gpu" or "cpu"
    peak: Mapping[str, Rate]  # path -> datasheet/derived compute rate, plus BANDWIDTH
    memory_bytes: int | None = None
    memory_type: str = ""  # "HBM3", "GDDR6X", "DDR4"; empty when unknown
    l2_bytes: int | None = None
    sm_count: int | None = None
    architecture: str = ""
    compute_capability: str = ""
    source: str = ""
    notes: str = ""
    match: tuple[str, ...] = ()
    overrides: Mapping[str, Rate] = field(default_factory=dict)
    bus: str = ""  # form factor: "sxm", "pcie", "superchip", "oam"; empty when unknown
    vendor: str = ""
    l2_source: str = ""  # where l2_bytes comes from (a sheet, a deviceQuery log, CUDA on this GPU)
    nvlink: str = ""  # key of the NVLink generation between GPUs (devices/links.py); empty when none
    host_link: str = ""  # key of the link to the host: a PCIe generation (x16) or NVLink-C2C
    boost_clock_hz: float | None = None  # the SM boost clock the derived shared-memory rate uses
    boost_clock_source: str = ""
    # Latency per interface and load: {"hbm": {"idle": Latency, "loaded": Latency}}; calibration's measured
    # figures replace the catalogue's (with_latency).
    latency: Mapping[str, Mapping[str, Latency]] = field(default_factory=dict)

    def latency_of(self, key: str, load: str = "loaded") -> Latency | None:
        """The latency across interface `key` ("hbm") idle or loaded; None when the device has none."""
        return self.latency.get(key, {}).get(load)

    def with_latency(self, key: str, load: str, seconds: float, origin: str, citation: str) -> "Device":
        """A copy with one latency replaced (calibration's measured figure, or one entered)."""
        table = {name: dict(loads) for name, loads in self.latency.items()}
        table.setdefault(key, {})[load] = Latency(float(seconds), origin, citation)
        return replace(self, latency=table)

    @property
    def max_threads_per_sm(self) -> int | None:
        """Resident threads one SM holds (by compute capability); None when it is not known."""
        return _THREADS_PER_SM.get(self.compute_capability)

    @property
    def max_blocks_per_sm(self) -> int | None:
        """Resident thread blocks one SM holds (by compute capability); None when it is not known."""
        return _BLOCKS_PER_SM.get(self.compute_capability)

    @property
    def memory_name(self) -> str:
        """What the memory roof is called: HBM for HBM parts and unknown GPUs, DRAM otherwise."""
        if not self.memory_type:
            return "HBM" if self.kind == "gpu" else "DRAM"
        return "HBM" if self.memory_type.upper().startswith("HBM") else "DRAM"

    def path_title(self, path: str) -> str:
        """A readable name for a path on this device: 'FP32 (CUDA cores)', 'FP32 (vector units)' on a CPU."""
        if path == BANDWIDTH:
            return f"Memory bandwidth ({self.memory_name})"
        title = PATH_TITLES.get(path, path)
        return title.replace("CUDA cores", "vector units") if self.kind == "cpu" else title

    # -- rates -------------------------------------------------------------
    def resolve_path(self, path: str) -> str | None:
        """The path whose rate bounds `path` on this device, or None if it has none."""
        known = set(self.peak) | set(self.overrides)
        if path in known:
            return path
        if self.kind == "cpu":
            cpu_path = "fp64" if path.startswith("fp64") else "fp32"
            return cpu_path if cpu_path in known else None
        fallback = _GPU_FALLBACK.get(path)
        if fallback is not None and fallback in known:
            return fallback
        return None

    def rate(self, path: str) -> Rate:
        """The rate in use for a path (override first), after fallbacks; DeviceError if none."""
        resolved = self.resolve_path(path)
        if resolved is None:
            have = ", ".join(p for p in PATHS if p in self.peak or p in self.overrides) or "none"
            raise DeviceError.missing_rate(
                f"{self.name} has no rate for the {path} path (it has: {have}); "
                "enter one with --rate or in the device panel",
                path,
            )
        return self.overrides.get(resolved) or self.peak[resolved]

    @property
    def bandwidth(self) -> Rate:
        """Memory bandwidth in use (measured or entered before datasheet)."""
        try:
            return self.overrides.get(BANDWIDTH) or self.peak[BANDWIDTH]
        except KeyError:
            raise DeviceError(f"{self.name} has no memory bandwidth; enter one with --bandwidth") from None

    def interface_rate(self, key: str) -> Rate | None:
        """The rate in use across interface `key` ("hbm", "l2", "smem", "host"): override first; None if unknown."""
        if key == BANDWIDTH:
            return self.overrides.get(BANDWIDTH) or self.peak.get(BANDWIDTH)
        return self.overrides.get(key) or self.peak.get(key)

    def interface_rates(self) -> dict[str, Rate]:
        """Every interface rate in use, HBM first then the others in INTERFACE_RATE_KEYS order."""
        found = {key: self.interface_rate(key) for key in (BANDWIDTH, *INTERFACE_RATE_KEYS)}
        return {key: rate for key, rate in found.items() if rate is not None}

    def paths(self) -> list[str]:
        """Every path this device has a rate for, in catalogue order."""
        have = set(self.peak) | set(self.overrides)
        return [p for p in PATHS if p in have]

    def with_rate(self, path: str, value: float, source: str, citation: str = "") -> "Device":
        """A copy with one rate overridden (measured or entered)."""
        problem = rate_problem(value)
        if problem is not None:
            raise DeviceError(f"{path}: {problem}")
        overrides = dict(self.overrides)
        overrides[path] = Rate(float(value), source, citation)
        return replace(self, overrides=overrides)

    def without_override(self, path: str | None = None) -> "Device":
        """A copy with one override (or all of them) removed: back to the datasheet."""
        if path is None:
            return replace(self, overrides={})
        overrides = {k: v for k, v in self.overrides.items() if k != path}
        return replace(self, overrides=overrides)

    def ridge(self, path: str) -> float:
        """Intensity (FLOP/B) where the compute roof of `path` meets the memory roof."""
        return self.rate(path).value / self.bandwidth.value

    # by hand: the rates in use, per interface and per latency, are derived from peak, overrides and latency
    def to_dict(self) -> dict[str, Any]:
        """Plain data: identity, memory, and every rate with its source."""
        return {
            "key": self.key,
            "name": self.name,
            "kind": self.kind,
            "architecture": self.architecture,
            "compute_capability": self.compute_capability,
            "memory_bytes": self.memory_bytes,
            "memory_type": self.memory_type,
            "l2_bytes": self.l2_bytes,
            "l2_source": self.l2_source,
            "sm_count": self.sm_count,
            "bus": self.bus,
            "vendor": self.vendor,
            "source": self.source,
            "notes": self.notes,
            "nvlink": self.nvlink,
            "host_link": self.host_link,
            "bandwidth_byte_per_s": self.peak[BANDWIDTH].value if BANDWIDTH in self.peak else None,
            "peak_flop_per_s": {p: self.peak[p].value for p in PATHS if p in self.peak},
            "rates_in_use": {
                key: {"value": rate.value, "source": rate.source, "citation": rate.citation}
                for key in [*self.paths(), BANDWIDTH]
                if (rate := (self.overrides.get(key) or self.peak.get(key))) is not None
            },
            "boost_clock_hz": self.boost_clock_hz,
            "interface_rates_byte_per_s": {
                key: {"value": rate.value, "source": rate.source, "citation": rate.citation}
                for key, rate in self.interface_rates().items()
            },
            "latency_s": {
                key: {load: {"value": found.seconds, "origin": found.origin, "citation": found.citation} for load, found in loads.items()}
                for key, loads in self.latency.items()
            },
        }


def _quantity_value(text: Any, unit: str, where: str) -> float:
    """A catalogue figure such as "989 TFLOP/s" in base units, checked by the registry."""
    from workbench.model.units import plain_figure

    if isinstance(text, str) and (value := plain_figure(text, unit)) is not None:
        return value  # a plain "<number> <prefix><unit>": no need to load the unit registry before the first paint
    from workbench.model.scratchpad import parse_quantity
    from workbench.model.units import require_dimension

    try:
        return require_dimension(parse_quantity(str(text)), unit, where)
    except UnitError as exc:
        raise DeviceError(f"device catalogue, {where}: {exc}") from None


def device_from_table(key: str, table: Mapping[str, Any], citation_source: str = DATASHEET) -> Device:
    """Build a Device from one catalogue table (figures carry their units as text)."""
    source = str(table.get("source", ""))
    if table.get("nominal") is True:  # an entry of stand-in figures (the generic CPU), not a sheet's
        citation_source = NOMINAL
    citations = {str(path): str(text) for path, text in dict(table.get("citations", {})).items()}
    peak: dict[str, Rate] = {}
    for path, text in dict(table.get("peak", {})).items():
        if path not in PATHS:
            raise DeviceError(f"device catalogue, {key}: unknown path '{path}'")
        peak[path] = Rate(_quantity_value(text, "FLOP/s", f"{key}.peak.{path}"), citation_source, citations.get(path, source))
    if "bandwidth" in table:
        peak[BANDWIDTH] = Rate(_quantity_value(table["bandwidth"], "B/s", f"{key}.bandwidth"), citation_source, source)
    for interface_key, text in dict(table.get("interfaces", {})).items():
        if interface_key not in INTERFACE_RATE_KEYS:
            raise DeviceError(f"device catalogue, {key}.interfaces: unknown interface '{interface_key}' (known: {', '.join(INTERFACE_RATE_KEYS)})")
        if interface_key not in citations:
            raise DeviceError(f"device catalogue, {key}.interfaces.{interface_key}: a rate needs its source in {key}.citations")
        peak[interface_key] = Rate(_quantity_value(text, "B/s", f"{key}.interfaces.{interface_key}"), citation_source, citations[interface_key])
    clock = _quantity_value(table["boost_clock"], "Hz", f"{key}.boost_clock") if "boost_clock" in table else None
    clock_source = str(table.get("boost_clock_source", ""))
    if clock is not None and not clock_source:
        raise DeviceError(f"device catalogue, {key}.boost_clock: needs boost_clock_source")
    sms = int(table["sms"]) if "sms" in table else None
    latency = _latency_table(key, table.get("latency", {}))
    if "smem" not in peak and sms and clock and str(table.get("architecture", "")) in SMEM_ARCHITECTURES:
        peak["smem"] = shared_memory_rate(sms, clock, f"boost clock: {clock_source}")

    def size(name: str) -> int | None:
        return int(round(_quantity_value(table[name], "B", f"{key}.{name}"))) if name in table else None

    return Device(
        key=key,
        name=str(table.get("name", key)),
        kind=str(table.get("kind", "gpu")),
        peak=peak,
        memory_bytes=size("memory"),
        memory_type=str(table.get("memory_type", "")),
        l2_bytes=size("l2"),
        sm_count=sms,
        architecture=str(table.get("architecture", "")),
        compute_capability=str(table.get("compute_capability", "")),
        source=source,
        notes=str(table.get("notes", "")),
        match=tuple(str(m) for m in table.get("match", ())),
        bus=str(table.get("bus", "")),
        vendor=str(table.get("vendor", "")),
        l2_source=str(table.get("l2_source", "")),
        nvlink=str(table.get("nvlink", "")),
        host_link=str(table.get("host_link", "")),
        boost_clock_hz=clock,
        boost_clock_source=clock_source,
        latency=latency,
    )


def _latency_table(key: str, table: Any) -> dict[str, dict[str, Latency]]:
    """`[KEY.latency.hbm]`: idle_ns / loaded_ns with `<load>_origin` and `<load>_source` beside each figure."""
    found: dict[str, dict[str, Latency]] = {}
    for interface_key, entry in dict(table).items():
        for load in ("idle", "loaded"):
            if f"{load}_ns" not in entry:
                continue
            where = f"device catalogue, {key}.latency.{interface_key}.{load}"
            origin, source = str(entry.get(f"{load}_origin", "")), str(entry.get(f"{load}_source", ""))
            if origin not in LATENCY_ORIGINS or not source:
                raise DeviceError(f"{where}: needs {load}_origin (one of {', '.join(LATENCY_ORIGINS)}) and {load}_source")
            try:
                found.setdefault(str(interface_key), {})[load] = Latency(float(entry[f"{load}_ns"]) * 1e-9, origin, source)
            except (TypeError, ValueError) as exc:
                raise DeviceError(f"{where}: {exc}") from None
    return found


def shared_memory_rate(sm_count: int, clock_hz: float, clock_words: str) -> Rate:
    """Shared memory → registers, derived: SMs × 128 B per clock × clock, with the arithmetic as its citation."""
    value = sm_count * SMEM_BYTES_PER_CLOCK * clock_hz
    return Rate(
        value,
        DERIVED,
        f"derived: {sm_count} SMs × {SMEM_BYTES_PER_CLOCK} B per clock × {clock_hz / 1e9:g} GHz = {value / 1e12:.4g} TB/s "
        f"(32 banks × 4 B per clock per SM; {clock_words})",
    )


def host_link_rate(link: Any, words: str = "") -> Rate:
    """The host ↔ device rate of a device's host link (a devices.links.Link): its rate per direction."""
    citation = f"{words or 'host_link'} {link.key}: {link.name}, {link.per_direction / 1e9:g} GB/s per direction ({link.source})"
    return Rate(link.per_direction, link.origin, citation)


LINKS_TABLE = "links"  # the top-level table of devices.toml that holds links, not a device


@lru_cache(maxsize=1)
def catalogue_data() -> dict[str, Any]:
    """resources/devices.toml as plain TOML data (devices and the [links] tables)."""
    text = resources.files("workbench.resources").joinpath("devices.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


HOST_CPU_KEY = "host-cpu"  # this machine's CPU, detected from what the OS reports (devices/host.py)
