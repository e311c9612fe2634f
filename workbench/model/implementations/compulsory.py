"""The compulsory model (the default): ideal reuse, and the launch a declaration states for it."""

from __future__ import annotations

from typing import Any

from workbench.model.implementations.base import (
    COMPULSORY,
    LAUNCH_DEFAULTS,
    MODEL_INTERFACES,
    Case,
    KernelLaunch,
    PhysicalWork,
    ceil_div,
    whole,
)
from workbench.model.ops import Workload


def compulsory(case: Case) -> PhysicalWork:
    """Ideal reuse: physical equals logical, and every interface carries the compulsory bytes once."""
    workload = case.workload
    flop = workload.flop(case.convention)
    moved = workload.bytes
    return PhysicalWork(
        launches=declared_launch(case),
        implementation=COMPULSORY,
        logical_flop=flop,
        physical_flop=flop,
        logical_bytes=moved,
        bytes_by_interface={key: moved for key in MODEL_INTERFACES},
        assumptions=(
            "compulsory traffic: ideal on-chip reuse, so each input crosses each interface once "
            "and each output crosses it once on the way back; physical work equals logical work",
        ),
    )


def declared_launch(case: Case) -> tuple[KernelLaunch, ...]:
    """The launch a user declares (threads_per_block, bytes_per_load, loads_in_flight), else none.

    One kernel reading every input once and writing every output once; each thread's loads cover its share
    of the reads: threads = ⌈read bytes / (bytes_per_load × loads_in_flight)⌉.
    """
    params = case.params
    if not any(name in params for name in LAUNCH_DEFAULTS):
        return ()
    threads_per_block, bytes_per_load, loads = (
        whole(params.get(name, default)) for name, default in LAUNCH_DEFAULTS.items())
    reads, writes = _reads_writes(case.workload)
    threads = ceil_div(reads, bytes_per_load * loads) if not (isinstance(reads, int) and reads == 0) else 1
    return (KernelLaunch("the declared launch", threads, threads_per_block, bytes_per_load, loads, reads, writes),)


def _reads_writes(workload: Workload) -> tuple[Any, Any]:
    reads = sum((tensor.bytes_each * tensor.reads for tensor in workload.tensors), 0)
    writes = sum((tensor.bytes_each * tensor.writes for tensor in workload.tensors), 0)
    return reads, writes
