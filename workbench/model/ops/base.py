"""What every operation family provides: its parameters, tensors and FLOP terms.

An operation family is a small module with one `OpSpec` (the parameters the
declaration language accepts) and one pure function of those parameters that
returns a `Workload`: the tensors that cross the HBM boundary and the named
FLOP terms. The function is written with plain arithmetic so that it works on
Python ints (exact counts) and on numpy arrays (vectorised sweeps) alike.

Each FLOP term carries its formula as text ("batch·M·N·K"); the derivation
substitutes the numbers into it, so the text a user reads and the count the
code computes come from one place (a test checks they agree).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping

from workbench.model.conventions import CONVENTIONS  # noqa: F401 - re-exported: analysis and measure.run import it from here
from workbench.model.dtypes import DType, storage_bytes

REQUIRED = object()

FMA = "fma"  # a fused multiply-add: 2 FLOP under fma=2, 1 under mac
OP = "op"  # any other arithmetic operation (add, mul, max, exp): 1 FLOP


@dataclass(frozen=True)
class Param:
    """One field of a declaration.

    kind: "dim" (integer ≥ minimum, and ≤ maximum when one is set), "dtype",
    "bool", "number" (int or float), "spec" (the positional einsum string).
    `maximum` bounds a count that the workload turns into objects (one tensor
    per input array), so a shared file cannot ask for 2**40 of them.
    """

    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""
    minimum: int = 1
    maximum: int | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Tensor:
    """A tensor that crosses the named interface, with how often it must cross.

    Compulsory traffic counts each input read once and each output written
    once; a tensor that is both (GEMM's C with beta ≠ 0, an unfused
    intermediate) has reads and writes both set.
    """

    name: str
    shape: tuple[Any, ...]
    shape_symbols: tuple[str, ...]
    dtype: DType
    reads: int = 0
    writes: int = 0
    note: str = ""

    @cached_property
    def elements(self) -> Any:
        count: Any = 1
        for extent in self.shape:
            count = count * extent
        return count

    @cached_property
    def bytes_each(self) -> Any:  # cached: a sweep asks for it on arrays of 10^5 shapes several times
        """Bytes of one full pass over the tensor (packed, rounded up to whole bytes)."""
        return storage_bytes(self.elements, self.dtype)

    @property
    def crossings(self) -> int:
        return self.reads + self.writes

    @property
    def bytes(self) -> Any:
        """Compulsory bytes this tensor contributes: one pass per read and per write."""
        return self.bytes_each * self.crossings

    @property
    def role(self) -> str:
        parts = []
        if self.reads:
            parts.append("read" if self.reads == 1 else f"read ×{self.reads}")
        if self.writes:
            parts.append("write" if self.writes == 1 else f"write ×{self.writes}")
        return "+".join(parts)


@dataclass(frozen=True)
class FlopTerm:
    """A named part of the logical work, e.g. a GEMM's product or its beta epilogue.

    `count` is the number of fused multiply-adds (kind FMA) or of single
    operations (kind OP); `formula` is the same count written with the
    declaration's symbols, '·' for ×, so the derivation can show both.
    """

    name: str
    kind: str
    count: Any
    formula: str
    note: str = ""

    def flop(self, convention: str = "fma2") -> Any:
        if self.kind == FMA and convention == "fma2":
            return 2 * self.count
        return self.count

    def formula_for(self, convention: str = "fma2") -> str:
        if self.kind == FMA and convention == "fma2":
            return f"2·{self.formula}" if _is_product(self.formula) else f"2·({self.formula})"
        return self.formula


def _is_product(formula: str) -> bool:
    return not any(sign in formula for sign in ("+", "−", "-", "/"))


@dataclass(frozen=True)
class LinkTraffic:
    """Bytes one rank sends over a link between chips: a time term over a named resource, like HBM's.

    `link` is a link key ('nvlink4', 'ib_ndr') or empty for the device's own
    link; analyze() resolves it and divides `bytes` by its per-direction rate.
    `formula` is the per-rank count in the declaration's symbols (S the
    message size in bytes). `bus_factor` is nccl-tests' busbw / algbw factor
    (2(n−1)/n for all-reduce), `latency_steps` the algorithm's sequential
    steps, each costing `latency_per_step_s` (0: the latency term is off).
    """

    link: str
    bytes: Any
    formula: str
    message_bytes: Any
    ranks: Any
    bus_factor: Any
    bus_factor_text: str
    algorithm: str
    latency_steps: Any
    latency_per_step_s: float = 0.0


@dataclass(frozen=True)
class Workload:
    """What an operation needs: tensors crossing HBM, FLOP terms, the instruction path."""

    tensors: tuple[Tensor, ...]
    terms: tuple[FlopTerm, ...]
    path: str
    values: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    link_traffic: LinkTraffic | None = None  # collectives: bytes over a link between chips

    def flop(self, convention: str = "fma2") -> Any:
        total: Any = 0
        for term in self.terms:
            total = total + term.flop(convention)
        return total

    @property
    def bytes(self) -> Any:
        total: Any = 0
        for tensor in self.tensors:
            total = total + tensor.bytes
        return total

    @property
    def footprint_bytes(self) -> Any:
        """Bytes resident at once: each distinct tensor stored once."""
        total: Any = 0
        for tensor in self.tensors:
            total = total + tensor.bytes_each
        return total


Builder = Callable[[Mapping[str, Any]], Workload]
Checker = Callable[[Mapping[str, Any]], None]
Formatter = Callable[[Mapping[str, Any]], list[tuple[str, Any]]]
Canonicaliser = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class KernelNames:
    """Words in a profiled kernel's name that point at this operation (the import dialog's first guess).

    `rank` orders the check: an operation whose kernels also carry another
    operation's words (attention kernels that say "softmax", convolutions that
    say "gemm") ranks lower so it is tried first; operations tied on rank are
    candidates together (einsum entries share GEMM's words).
    """

    words: tuple[str, ...]
    rank: int = 50


@dataclass(frozen=True)
class OpSpec:
    """Everything about one operation, registered once (`workbench.model.ops.register`).

    Besides the declaration language's face (parameters, builder, checks), the
    spec names what other layers need without importing them: the measured
    kernel as "module:Class" (resolved by `workbench.measure.kernels`), small
    example declarations (the first is the operation's default; tests measure
    and analyse every one), the fields a sweep ties together by default,
    the words that identify its kernels in a profile, and its automatic name.
    """

    name: str
    summary: str
    params: tuple[Param, ...]
    build: Builder
    check: Checker | None = None
    canonical: Canonicaliser | None = None
    format_fields: Formatter | None = None
    extra_dims: bool = False  # einsum: any one-letter keyword is an index extent
    position: int = 100  # place in menus and listings (ties keep registration order)
    kernel: str = ""  # "workbench.measure.kernels.stream:AddKernel"; empty: not measurable
    examples: tuple[str, ...] = ()
    tied_fields: tuple[str, ...] = ()
    kernel_names: KernelNames | None = None
    implementations: tuple[str, ...] = ("compulsory",)  # models `impl=` may name (workbench/model/implementations/)
    namer: Callable[[Mapping[str, Any]], str] | None = None  # automatic name from the fields; None: the declaration
    # Its kernels compute in tiles, padding each dimension up to a tile size: when achieved work exceeds
    # the logical work, padding is the likely cause (the profile comparison's causes).
    pads_to_tiles: bool = False

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


def is_one(x: Any) -> bool:
    """True for the plain int 1; a swept numpy array is never 'one' (it takes the general form)."""
    return isinstance(x, int) and x == 1


def elementwise_min(a: Any, b: Any) -> Any:
    """min() that also works when either side is a numpy array (sweeps)."""
    if isinstance(a, int) and isinstance(b, int):
        return a if a <= b else b
    import numpy as np

    return np.minimum(a, b)


def elementwise_max(a: Any, b: Any) -> Any:
    """max() that also works when either side is a numpy array (sweeps)."""
    if isinstance(a, int) and isinstance(b, int):
        return a if a >= b else b
    import numpy as np

    return np.maximum(a, b)
