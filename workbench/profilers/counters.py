"""The hardware counters the workbench reads from an ncu launch: DRAM and L2 bytes, duration, FLOP.

Each reader tries the metric names ncu uses across releases and says which
one it used (`Reading.source`), so the derivation can cite it. Achieved FLOP
comes from the SASS instruction counters the way ncu's own roofline charts
count them — per precision fadd + fmul + 2·ffma (a fused multiply-add is two
operations under the fma2 convention, one under mac) — plus the tensor-pipe
`sm__ops_path_tensor_*` counters where they were collected, which already
count two operations per multiply-add.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

from workbench.profilers.records import Metric

SECTOR_BYTES = 32  # DRAM and L2 move data in 32-byte sectors

DRAM_READ_METRICS = ("dram__bytes_read.sum", "dram__bytes_op_read.sum")
DRAM_WRITE_METRICS = ("dram__bytes_write.sum", "dram__bytes_op_write.sum")
DRAM_TOTAL_METRICS = ("dram__bytes.sum",)
DRAM_READ_SECTOR_METRICS = ("dram__sectors_read.sum", "dram__sectors_op_read.sum")
DRAM_WRITE_SECTOR_METRICS = ("dram__sectors_write.sum", "dram__sectors_op_write.sum")
L2_METRICS = ("lts__t_bytes.sum",)
L2_SECTOR_METRICS = ("lts__t_sectors.sum",)
# L1/shared → registers (the hierarchical roofline's innermost level): global and local bytes through
# the L1TEX tag stage, plus shared-memory wavefronts, which bypass the tags. A shared-memory wavefront
# is one pass through the 32 banks × 4 B data stage: at most 128 B, so wavefronts × 128 B is an upper bound.
L1_METRICS = ("l1tex__t_bytes.sum",)
L1_SECTOR_METRICS = ("l1tex__t_sectors.sum",)
SHARED_WAVEFRONT_METRICS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",)
SHARED_WAVEFRONT_PARTS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
SHARED_WAVEFRONT_BYTES = 128
# Nsight Compute's own hierarchical-roofline sections (SpeedOfLight_Hierarchical*RooflineChart): the
# 'L2 Achieved Value' and 'L1 Achieved Value (Global/Local)' traffic. Current sections count the L2 → crossbar
# cycles (32 B each) and the L1TEX writeback cycles of local/global (CC 7.5–8.9) or local/global/shared
# (CC ≥ 9.0) data (128 B each); older sections take the L2 → L1 read bytes, and CC ≤ 7.2 all writeback cycles.
NCU_L2_CYCLES = "lts__lts2xbar_cycles_active.sum"
NCU_L2_CYCLE_BYTES = 32
NCU_L2_OLDER = "l1tex__m_xbar2l1tex_read_bytes.sum"
NCU_L1_LGDS = "l1tex__lsu_writeback_active_mem_lgds.sum"
NCU_L1_LG = "l1tex__lsu_writeback_active_mem_lg.sum"
NCU_L1_ALL = "l1tex__lsu_writeback_active.sum"
NCU_L1_CYCLE_BYTES = 128
NCU_CYCLE_METRICS = (NCU_L2_CYCLES, NCU_L1_LGDS, NCU_L1_LG, NCU_L1_ALL)
DURATION_METRICS = ("gpu__time_duration.sum", "gpu__time_duration.avg", "gpu__time_duration.max", "Duration")

_EXPECTED_SYMBOLS: dict[str, str] = {
    **{name: "B" for name in DRAM_READ_METRICS + DRAM_WRITE_METRICS + DRAM_TOTAL_METRICS + L2_METRICS + L1_METRICS},
    **{name: "sector" for name in DRAM_READ_SECTOR_METRICS + DRAM_WRITE_SECTOR_METRICS + L2_SECTOR_METRICS + L1_SECTOR_METRICS},
    **{name: "s" for name in DURATION_METRICS},
    NCU_L2_OLDER: "B",
    **{name: "cycle" for name in NCU_CYCLE_METRICS},
}


def expected_symbol(name: str) -> str | None:
    """The base unit a counter the workbench reads must be in ('B', 's', 'sector'); None for other metrics."""
    return _EXPECTED_SYMBOLS.get(name)


# The metrics to ask ncu for, for everything the comparison uses (the CLI's hint).
SUGGESTED_METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_bytes.sum",
    "l1tex__t_bytes.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "lts__lts2xbar_cycles_active.sum",
    "l1tex__lsu_writeback_active_mem_lg.sum",
    "l1tex__lsu_writeback_active_mem_lgds.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
)

# Everything the counters below read (and the identity the views show): what a session keeps.
_USED = re.compile(
    r"^(?:dram__(?:bytes|sectors)[a-z_]*\.sum|lts__t_(?:bytes|sectors)\.sum|l1tex__t_(?:bytes|sectors)\.sum|l1tex__data_pipe_lsu_wavefronts_mem_shared(?:_op_ld|_op_st)?\.sum"
    r"|lts__lts2xbar_cycles_active\.sum|l1tex__m_xbar2l1tex_read_bytes\.sum|l1tex__lsu_writeback_active(?:_mem_lgds?)?\.sum"
    r"|gpu__time_duration\.(?:sum|avg|max)"
    r"|Duration|(?:sm|smsp)__sass_thread_inst_executed_op_[dfh](?:add|mul|fma)_pred_on\.sum"
    r"|(?:sm|smsp)__ops_path_tensor_.+\.sum|sm__pipe_tensor.*|device__attribute_display_name"
    r"|launch__(?:grid|block)_size)$"
)


def is_used_metric(name: str) -> bool:
    """True for the metrics the comparison, the kernel table and the roofline read."""
    return _USED.match(name) is not None


_SASS = re.compile(r"^(sm|smsp)__sass_thread_inst_executed_op_([dfh])(add|mul|fma)_pred_on\.sum$")
_TENSOR_OPS = re.compile(r"^(sm|smsp)__ops_path_tensor_(.+)\.sum$")
_SPARSITY = re.compile(r"_sparsity_(on|off)$")
_PRECISION = {"d": "fp64", "f": "fp32", "h": "fp16"}
_LETTER = {"fp64": "d", "fp32": "f", "fp16": "h"}


@dataclass(frozen=True)
class Reading:
    """A counter value in base units, the metric it came from, and whether ncu had rounded it."""

    value: int | float
    source: str
    scaled: bool = False


def _numeric(metrics: Mapping[str, Metric], name: str, unit: str) -> Metric | None:
    metric = metrics.get(name)
    if metric is None or metric.value is None or metric.unit != unit:
        return None
    return metric


def read_counter(metrics: Mapping[str, Metric], names: Sequence[str], unit: str) -> Reading | None:
    """The first of `names` present with a value in `unit` (e.g. "B"), or None."""
    for name in names:
        metric = _numeric(metrics, name, unit)
        if metric is not None and metric.value is not None:
            return Reading(metric.value, name, metric.scaled)
    return None


def read_sectors(metrics: Mapping[str, Metric], names: Sequence[str]) -> Reading | None:
    """A sector count turned into bytes (32 B a sector), for files without the byte metrics."""
    for name in names:
        metric = metrics.get(name)
        if metric is not None and metric.value is not None and metric.unit in ("sector", ""):
            return Reading(metric.value * SECTOR_BYTES, f"{name} × {SECTOR_BYTES} B", metric.scaled)
    return None


@dataclass(frozen=True)
class DramTraffic:
    """Bytes that crossed the DRAM (HBM) interface in one launch: read, written, and their sum."""

    read: Reading | None
    write: Reading | None
    total: Reading | None


def dram_traffic(metrics: Mapping[str, Metric]) -> DramTraffic:
    """DRAM bytes from dram__bytes_read/write.sum (or dram__bytes.sum, or sector counts)."""
    read = read_counter(metrics, DRAM_READ_METRICS, "B") or read_sectors(metrics, DRAM_READ_SECTOR_METRICS)
    write = read_counter(metrics, DRAM_WRITE_METRICS, "B") or read_sectors(metrics, DRAM_WRITE_SECTOR_METRICS)
    total: Reading | None
    if read is not None and write is not None:
        total = Reading(read.value + write.value, f"{read.source} + {write.source}", read.scaled or write.scaled)
    else:
        total = read_counter(metrics, DRAM_TOTAL_METRICS, "B")
    return DramTraffic(read, write, total)


def l2_traffic(metrics: Mapping[str, Metric]) -> Reading | None:
    """Bytes through the L2 slices (lts__t_bytes.sum): every request L1 sends down, hit or miss."""
    return read_counter(metrics, L2_METRICS, "B") or read_sectors(metrics, L2_SECTOR_METRICS)


def shared_wavefronts(metrics: Mapping[str, Metric]) -> Reading | None:
    """Shared-memory wavefronts as bytes (× 128 B, an upper bound): the .sum, or its load and store parts."""
    counted = [metrics.get(name) for name in SHARED_WAVEFRONT_METRICS]
    if counted[0] is None or counted[0].value is None:
        counted = [metrics.get(name) for name in SHARED_WAVEFRONT_PARTS]
    present = [m for m in counted if m is not None and m.value is not None and m.unit in ("", "wavefront", "wavefronts")]
    if not present:
        return None
    source = " + ".join(m.name for m in present)
    return Reading(
        sum(m.value for m in present if m.value is not None) * SHARED_WAVEFRONT_BYTES,
        f"({source}) × {SHARED_WAVEFRONT_BYTES} B" if len(present) > 1 else f"{source} × {SHARED_WAVEFRONT_BYTES} B",
        any(m.scaled for m in present),
    )


def l1_traffic(metrics: Mapping[str, Metric]) -> Reading | None:
    """Bytes from L1 / shared memory into the SM: l1tex__t_bytes.sum (global, local) + shared wavefronts × 128 B."""
    tags = read_counter(metrics, L1_METRICS, "B") or read_sectors(metrics, L1_SECTOR_METRICS)
    shared = shared_wavefronts(metrics)
    if tags is None or shared is None:
        return tags or shared
    return Reading(tags.value + shared.value, f"{tags.source} + {shared.source}", tags.scaled or shared.scaled)


NCU_LEVELS = "ncu"
NERSC_LEVELS = "nersc"
LEVEL_METHODS = (NCU_LEVELS, NERSC_LEVELS)
LEVEL_METHOD_TITLES = {
    NCU_LEVELS: "Nsight Compute's hierarchical-roofline sections",
    NERSC_LEVELS: "the NERSC method (Yang et al., arXiv 2009.02449)",
}


def _cycles(metrics: Mapping[str, Metric], name: str) -> Metric | None:
    """A cycle counter with a value (a raw page without a unit row leaves its unit empty)."""
    metric = metrics.get(name)
    if metric is None or metric.value is None or metric.unit not in ("cycle", ""):
        return None
    return metric


def ncu_l2_traffic(metrics: Mapping[str, Metric]) -> Reading | None:
    """L2 bytes as ncu's hierarchical roofline counts them: lts__lts2xbar_cycles_active.sum × 32 B (current
    sections), else l1tex__m_xbar2l1tex_read_bytes.sum (older sections); None without either."""
    cycles = _cycles(metrics, NCU_L2_CYCLES)
    if cycles is not None and cycles.value is not None:
        return Reading(cycles.value * NCU_L2_CYCLE_BYTES, f"{NCU_L2_CYCLES} × {NCU_L2_CYCLE_BYTES} B", cycles.scaled)
    older = read_counter(metrics, (NCU_L2_OLDER,), "B")
    return None if older is None else Reading(older.value, f"{NCU_L2_OLDER} (ncu's older sections)", older.scaled)


def _capability(text: str) -> tuple[int, int] | None:
    """'12.0' → (12, 0); None where the file does not say."""
    major, _, minor = text.strip().partition(".")
    if not (major.isdecimal() and (minor.isdecimal() or not minor)) or len(major) > 3 or len(minor) > 3:
        return None
    return int(major), int(minor or 0)


def ncu_l1_traffic(metrics: Mapping[str, Metric], compute_capability: str = "") -> Reading | None:
    """L1 bytes as ncu's hierarchical roofline counts them: writeback cycles × 128 B, of the counter its
    section reads on this compute capability (≥ 9.0: _mem_lgds; 7.5–8.9: _mem_lg; ≤ 7.2: all). Where the
    capability is not given, or its counter is missing, the first the file holds of the three; the source
    then says which the section would have read."""
    capability = _capability(compute_capability)
    order = [NCU_L1_LGDS, NCU_L1_LG, NCU_L1_ALL]
    wanted = None
    if capability is not None:
        wanted = NCU_L1_LGDS if capability >= (9, 0) else NCU_L1_LG if capability >= (7, 5) else NCU_L1_ALL
        order.remove(wanted)
        order.insert(0, wanted)
    for name in order:
        cycles = _cycles(metrics, name)
        if cycles is None or cycles.value is None:
            continue
        source = f"{name} × {NCU_L1_CYCLE_BYTES} B"
        if wanted is not None and name != wanted:
            source += f" (ncu's section reads {wanted} on CC {compute_capability.strip()}; the file lacks it)"
        return Reading(cycles.value * NCU_L1_CYCLE_BYTES, source, cycles.scaled)
    return None


def level_traffic(
    metrics: Mapping[str, Metric], method: str = NCU_LEVELS, compute_capability: str = ""
) -> tuple[Reading | None, Reading | None]:
    """(L2, L1) bytes of one launch by `method`: 'ncu' (its own sections) or 'nersc' (lts__t_bytes, l1tex__t_bytes
    + shared wavefronts × 128 B)."""
    if method == NERSC_LEVELS:
        return l2_traffic(metrics), l1_traffic(metrics)
    if method != NCU_LEVELS:
        raise ValueError(f"no level method '{method}'; choose one of {', '.join(LEVEL_METHODS)}")
    return ncu_l2_traffic(metrics), ncu_l1_traffic(metrics, compute_capability)


def duration(metrics: Mapping[str, Metric]) -> Reading | None:
    """The launch's GPU duration in seconds (gpu__time_duration.sum, or the SOL section's Duration)."""
    return read_counter(metrics, DURATION_METRICS, "s")


@dataclass(frozen=True)
class SassCount:
    """Thread-level floating-point instructions of one precision: adds, multiplies, fused multiply-adds."""

    precision: str  # "fp64", "fp32" or "fp16"
    add: int | float
    mul: int | float
    fma: int | float

    def flop(self, convention: str = "fma2") -> int | float:
        """add + mul + 2·fma (fma2) or add + mul + fma (mac)."""
        return self.add + self.mul + (2 if convention == "fma2" else 1) * self.fma

    def expression(self, convention: str = "fma2") -> str:
        letter = _LETTER[self.precision]
        weight = "2 × " if convention == "fma2" else ""
        return (
            f"{letter}add {_count(self.add)} + {letter}mul {_count(self.mul)} + "
            f"{weight}{letter}fma {_count(self.fma)}"
        )


@dataclass(frozen=True)
class TensorOps:
    """A tensor-pipe operation counter (two operations per multiply-add, as ncu counts them)."""

    metric: str
    ops: int | float

    def flop(self, convention: str = "fma2") -> int | float:
        return self.ops if convention == "fma2" else self.ops / 2


@dataclass(frozen=True)
class FlopCount:
    """Achieved floating-point work of one launch, by source counter."""

    sass: tuple[SassCount, ...]
    tensor: tuple[TensorOps, ...]
    tensor_pipe_percent: float | None = None  # sm__pipe_tensor_*cycles_active, % of peak, where collected

    @property
    def has_tensor_counters(self) -> bool:
        return bool(self.tensor)

    def tensor_flop(self, convention: str = "fma2") -> int | float:
        return sum(op.flop(convention) for op in self.tensor)

    def sass_flop(self, convention: str = "fma2") -> int | float:
        return sum(count.flop(convention) for count in self.sass)

    def total(self, convention: str = "fma2") -> int | float:
        return self.sass_flop(convention) + self.tensor_flop(convention)

    def expression(self, convention: str = "fma2") -> str:
        """'fadd 0 + fmul 0 + 2 × ffma 16,777,216 + ops_path_tensor_src_fp16_dst_fp32 137,438,953,472'.

        Precisions and tensor paths whose counters are all zero are left out
        (unless nothing else is left), so the line shows where the work ran.
        """
        sass = [count for count in self.sass if count.add or count.mul or count.fma]
        tensor = [op for op in self.tensor if op.ops]
        if not sass and not tensor:
            sass, tensor = list(self.sass[:1]), ([] if self.sass else list(self.tensor[:1]))
        parts = [count.expression(convention) for count in sass]
        for op in tensor:
            scale = "" if convention == "fma2" else " / 2"
            parts.append(f"{op.metric.split('__', 1)[-1].removesuffix('.sum')} {_count(op.ops)}{scale}")
        return " + ".join(parts) if parts else "no FLOP counters"


def _count(value: int | float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"


@dataclass(frozen=True)
class _FlopRole:
    """What one metric name is to flop_count: a SASS counter (precision, operation), a tensor path, or the pipe %."""

    kind: str  # "sass", "tensor" or "pipe"
    precision: str = ""  # sass: "fp64", "fp32", "fp16"
    operation: str = ""  # sass: "add", "mul", "fma"
    path: str = ""  # tensor: "src_fp16_dst_fp32", …


@lru_cache(maxsize=16_384)
def _flop_role(name: str) -> _FlopRole | None:
    """The name's role, decided once per name (a file repeats its names in every launch); None for the rest."""
    match = _SASS.match(name)
    if match is not None:
        return _FlopRole("sass", precision=_PRECISION[match.group(2)], operation=match.group(3))
    match = _TENSOR_OPS.match(name)
    if match is not None:
        return _FlopRole("tensor", path=match.group(2))
    if name.startswith("sm__pipe_tensor"):
        return _FlopRole("pipe")
    return None


def flop_count(metrics: Mapping[str, Metric]) -> FlopCount | None:
    """FLOP counters of one launch, or None when the file has neither SASS nor tensor-pipe counters."""
    found: dict[tuple[str, str], int | float] = {}
    tensor_counters: list[tuple[str, str, Metric]] = []  # name, path, metric
    pipe_counters: list[Metric] = []
    # Only the counters' own metrics are looked at (a raw page builds a Metric when it is read).
    for name in metrics:
        role = _flop_role(name)
        if role is None:
            continue
        metric = metrics[name]
        if role.kind == "tensor":
            tensor_counters.append((name, role.path, metric))
        elif role.kind == "pipe":
            pipe_counters.append(metric)
        elif metric.value is not None:
            # sm__ and smsp__ count the same instructions: keep the first seen.
            found.setdefault((role.precision, role.operation), metric.value)
    sass = []
    for precision in ("fp64", "fp32", "fp16"):
        if any((precision, kind) in found for kind in ("add", "mul", "fma")):
            sass.append(
                SassCount(
                    precision,
                    found.get((precision, "add"), 0),
                    found.get((precision, "mul"), 0),
                    found.get((precision, "fma"), 0),
                )
            )

    # Tensor counters: one per src/dst path; where ncu also split a path by sparsity, count it once.
    plain: dict[str, TensorOps] = {}
    by_sparsity: dict[str, list[TensorOps]] = {}
    for name, path, metric in tensor_counters:
        if metric.value is None:
            continue
        core = _SPARSITY.sub("", path)
        if core == path:
            plain.setdefault(path, TensorOps(name, metric.value))
        else:
            by_sparsity.setdefault(core, []).append(TensorOps(name, metric.value))
    tensor = list(plain.values())
    for core, parts in by_sparsity.items():
        if core not in plain:
            tensor.extend(parts)

    pipe = [float(metric.value) for metric in pipe_counters if metric.unit == "%" and metric.value is not None]
    if not sass and not tensor:
        return None
    return FlopCount(tuple(sass), tuple(tensor), max(pipe) if pipe else None)


def median_reading(readings: Sequence[Reading | None]) -> Reading | None:
    """The median over launches of one counter (None when no launch has it)."""
    present = [reading for reading in readings if reading is not None]
    if not present:
        return None
    return Reading(
        _median([reading.value for reading in present]),
        present[0].source,
        any(reading.scaled for reading in present),
    )


def median_flop(counts: Sequence[FlopCount | None]) -> FlopCount | None:
    """Term by term median of the launches' FLOP counters."""
    present = [count for count in counts if count is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    sass = []
    for precision in ("fp64", "fp32", "fp16"):
        rows = [next((s for s in count.sass if s.precision == precision), None) for count in present]
        rows_present = [row for row in rows if row is not None]
        if rows_present:
            sass.append(
                SassCount(
                    precision,
                    _median([row.add for row in rows_present]),
                    _median([row.mul for row in rows_present]),
                    _median([row.fma for row in rows_present]),
                )
            )
    tensor = []
    for op in present[0].tensor:
        values = [next((t.ops for t in count.tensor if t.metric == op.metric), None) for count in present]
        tensor.append(TensorOps(op.metric, _median([value for value in values if value is not None])))
    pipes = [count.tensor_pipe_percent for count in present if count.tensor_pipe_percent is not None]
    return FlopCount(tuple(sass), tuple(tensor), _median(pipes) if pipes else None)


def _median(values: Sequence[int | float]) -> int | float:
    """statistics.median, keeping an int when the middle value is one (odd counts, or equal middles)."""
    middle = statistics.median(values)
    if isinstance(middle, float) and middle.is_integer() and all(isinstance(v, int) for v in values):
        return int(middle)
    return middle
