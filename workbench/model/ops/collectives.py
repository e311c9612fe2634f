"""Collective communication as operations: all-reduce, all-gather, reduce-scatter, and the rest.

A collective's bytes cross a link between chips, not HBM: the time bound is
the bytes each rank sends over the link divided by the link's rate per
direction. Bytes per rank follow the ring algorithm NCCL uses for large
messages, with S the message size as nccl-tests counts it (n elements of the
dtype; for all-gather and reduce-scatter the full, gathered buffer):

    all-reduce                            2(ranks−1)/ranks · S
    all-gather, reduce-scatter, all-to-all  (ranks−1)/ranks · S
    broadcast, rootreduce, send/recv          S

nccl-tests reports algbw = S / t and busbw = algbw × the same factor, so
busbw at the bound equals the link's per-direction rate: the figure a
measured nccl-tests line is held against. Where S·factor is not a whole
number of bytes it is rounded up (a message is whole bytes).

A latency term, one α per sequential step of the algorithm (2(ranks−1) for
the ring all-reduce, ranks−1 for the others, 1 for send/recv), is stated in
the derivation and off by default (latency_us=0); set latency_us to turn it on.

NCCL's reduce is declared `rootreduce`: `reduce` is already the single-device
sum reduction (ops/reduce.py), and one name cannot mean both.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping

from workbench.model.dtypes import dtype, storage_bytes
from workbench.errors import DeclarationError, DeviceError
from workbench.model.ops import register
from workbench.model.ops.base import OP, REQUIRED, FlopTerm, KernelNames, LinkTraffic, OpSpec, Param, Tensor, Workload
from workbench.model.ops.names import count_text
from workbench.model.ops.paths import vector_path


def _ceil(numerator: Any, denominator: int) -> Any:
    """⌈numerator / denominator⌉ for ints (exact) and numpy arrays (sweeps)."""
    return -(-numerator // denominator)


def _bus(name: str, ranks: Any) -> tuple[Any, str]:
    """nccl-tests' busbw factor for a collective on `ranks` ranks, as an exact fraction and as text."""
    if name == "allreduce":
        return Fraction(2 * (ranks - 1), ranks) if isinstance(ranks, int) else 2 * (ranks - 1) / ranks, "2·(ranks−1)/ranks"
    if name in ("allgather", "reducescatter", "alltoall"):
        return Fraction(ranks - 1, ranks) if isinstance(ranks, int) else (ranks - 1) / ranks, "(ranks−1)/ranks"
    return Fraction(1), "1"


def busbw_factor(name: str, ranks: int) -> Fraction:
    """busbw / algbw as nccl-tests defines it for collective `name` on `ranks` ranks (measured links use it too)."""
    return Fraction(_bus(name, ranks)[0])


def _latency_steps(name: str, ranks: Any) -> tuple[Any, str]:
    if name == "allreduce":
        return 2 * (ranks - 1), "2·(ranks−1)"
    if name == "sendrecv":
        return 1, "1"
    return ranks - 1, "ranks−1"


def _collective(name: str, p: Mapping[str, Any]) -> Workload:
    dt = dtype(p["dtype"])
    n, ranks = p["n"], p["ranks"]
    message = storage_bytes(n, dt)  # S, bytes
    factor, factor_text = _bus(name, ranks)
    if isinstance(factor, Fraction):
        per_rank = _ceil(message * factor.numerator, factor.denominator)
    else:  # a swept ranks array: float arithmetic is fine for plots
        per_rank = message * factor
    formula = "S" if factor_text == "1" else f"{factor_text}·S"
    steps, _ = _latency_steps(name, ranks)

    # The user's buffers in HBM: read once, written once (the ring's staging chunks are not counted).
    shard = _ceil(n, ranks)
    inputs = {"allgather": (shard, ("n/ranks",))}.get(name, (n, ("n",)))
    outputs = {"reducescatter": (shard, ("n/ranks",))}.get(name, (n, ("n",)))
    tensors = (
        Tensor("send", (inputs[0],), inputs[1], dt, reads=1),
        Tensor("recv", (outputs[0],), outputs[1], dt, writes=1),
    )
    terms: list[FlopTerm] = []
    if name in ("allreduce", "reducescatter"):
        # The ring cuts the n elements into `ranks` chunks (sizes ⌊n/ranks⌋ or ⌈n/ranks⌉, empty ones where ranks > n)
        # and each rank adds in every chunk but its own: the busiest rank, whose own chunk is the smallest,
        # n − ⌊n/ranks⌋ adds, never less than zero nor more than n.
        terms.append(FlopTerm("reduction adds per rank (busiest)", OP, n - n // ranks, "n − ⌊n/ranks⌋"))
    elif name == "rootreduce":
        terms.append(FlopTerm("reduction adds per rank", OP, n, "n"))
    latency_s = float(p["latency_us"]) * 1e-6
    return Workload(
        tensors=tensors,
        terms=tuple(terms),
        path=vector_path(dt),
        values={"n": n, "ranks": ranks, "S": message},
        notes=(
            f"ring algorithm: each rank sends {formula} over the link (S = n × {dt.name} size = message size as nccl-tests counts it)",
            "time over the link uses its rate per direction: a rank sends and receives at once",
        ),
        link_traffic=LinkTraffic(
            link=p["link"],
            bytes=per_rank,
            formula=formula,
            message_bytes=message,
            ranks=ranks,
            bus_factor=factor,
            bus_factor_text=factor_text,
            algorithm="ring",
            latency_steps=steps,
            latency_per_step_s=latency_s,
        ),
    )


def _check(p: Mapping[str, Any]) -> None:
    latency = p["latency_us"]
    if not latency >= 0 or latency > 1e6:
        raise DeclarationError(f"latency_us must be between 0 and 1e6 microseconds per step; got {latency}", field="latency_us")
    if p["link"]:
        from workbench.model.devices.links import find_link

        try:
            find_link(p["link"])
        except DeviceError as exc:
            raise DeclarationError(str(exc), field="link") from None


MAX_RANKS = 2**20  # GPUs in one collective: past a million it is not a machine that exists


def _params(with_ranks: bool) -> tuple[Param, ...]:
    """A collective's fields; send/recv has no `ranks` (it is always one rank to one other)."""
    ranks = (Param("ranks", "dim", REQUIRED, minimum=2, maximum=MAX_RANKS, doc="GPUs taking part"),) if with_ranks else ()
    return (
        Param("n", "dim", doc="elements in the message S (the full buffer, as nccl-tests counts it)"),
        Param("dtype", "dtype", "fp32", doc="element type"),
        *ranks,
        Param("link", "name", "", doc="link the bytes cross (nvlink4, pcie5, ib_ndr, eth400g…); default: the device's"),
        Param("latency_us", "number", 0, minimum=0, doc="latency per algorithm step in µs; 0 turns the term off"),
    )


COLLECTIVES: dict[str, str] = {
    "allreduce": "all-reduce: every rank ends with the sum (ring: 2(ranks−1)/ranks·S per rank)",
    "allgather": "all-gather: every rank ends with every shard ((ranks−1)/ranks·S per rank)",
    "reducescatter": "reduce-scatter: each rank ends with one summed shard ((ranks−1)/ranks·S per rank)",
    "broadcast": "broadcast: one rank's buffer to all (S per rank, pipelined ring)",
    "rootreduce": "reduce to one root rank (NCCL's ncclReduce; S per rank, pipelined ring)",
    "alltoall": "all-to-all: each rank sends a shard to every other ((ranks−1)/ranks·S per rank)",
    "sendrecv": "send/recv: one rank sends S to another (S per rank)",
}

# Words NCCL puts in its kernels' names (ncclDevKernel_AllReduce_Sum_f32_RING_LL, …); they carry "reduce" too,
# so the collectives rank before the single-device reduction.
_KERNEL_WORDS: dict[str, tuple[str, ...]] = {
    "allreduce": ("allreduce",),
    "allgather": ("allgather",),
    "reducescatter": ("reducescatter",),
    "broadcast": ("broadcast",),
    "rootreduce": ("nccldevkernel_reduce", "ncclkernel_reduce"),
    "alltoall": ("alltoall",),
    "sendrecv": ("sendrecv",),
}

# The automatic names' titles: "All-reduce, 2^20 fp32 on 8 ranks over nvlink4".
_TITLES = {
    "allreduce": "All-reduce",
    "allgather": "All-gather",
    "reducescatter": "Reduce-scatter",
    "broadcast": "Broadcast",
    "rootreduce": "Reduce to root",
    "alltoall": "All-to-all",
    "sendrecv": "Send/recv",
}


SENDRECV_RANKS = 2  # send/recv: one rank sends, one receives


def _namer(title: str) -> Callable[[Mapping[str, Any]], str]:
    def name(p: Mapping[str, Any]) -> str:
        link = f" over {p['link']}" if p["link"] else ""
        return f"{title}, {count_text(p['n'])} {p['dtype']} on {p.get('ranks', SENDRECV_RANKS)} ranks{link}"

    return name


for _position, (_name, _summary) in enumerate(COLLECTIVES.items(), start=90):
    register(
        OpSpec(
            name=_name,
            namer=_namer(_TITLES[_name]),
            summary=_summary,
            params=_params(_name != "sendrecv"),
            build=lambda p, _name=_name: _collective(_name, p if "ranks" in p else {**p, "ranks": SENDRECV_RANKS}),
            check=_check,
            position=_position,
            kernel="",  # not measured yet: NCCL runs need several GPUs (issue 13's measured links)
            examples=(
                f"{_name}(n=2**20, dtype=fp32)" if _name == "sendrecv" else f"{_name}(n=2**20, dtype=fp32, ranks=8)",
            ),
            kernel_names=KernelNames(_KERNEL_WORDS[_name], rank=30),
        )
    )
