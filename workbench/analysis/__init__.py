"""Work, traffic, intensity, time terms, bounds, overlap, limiter and the derivation.

`analyze()` is the core call: the CLI's JSON, the GUI's calculator panel and
the session file all read the one `Analysis` it returns. Counts are exact
Python ints; rates and times are floats in base units (FLOP/s, B/s, s); units
are attached when figures are formatted, so every displayed figure has one.

The package is split along its jobs:
- rates.py       which rate each term is divided by (entered, measured, datasheet), the overlap setting;
- terms.py       a time term per resource and the rule that combines them into a bound and a limiter;
- link.py        a collective's term over a link between chips;
- derivation.py  the derivation steps and notes, built lazily from the figures;
- model.py       the `Analysis` result;
- sweep.py       the same figures over many shapes at once.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from workbench.analysis.derivation import Step, substitute
from workbench.analysis.link import LinkTerm, link_term_for
from workbench.analysis.model import INTERFACE, Analysis, Basis, TensorTraffic, interface_for
from workbench.analysis.rates import Overlap, Setting, as_rate, compute_rate, interface_rate, parse_overlap, resolve_setting
from workbench.analysis.rates import _rate_text_value  # noqa: F401  (tests clear its cache)
from workbench.analysis.terms import (
    COMPUTE,
    HIERARCHY,
    LINK,
    MEMORY,
    Term,
    combine,
    compute_term,
    link_term,
    transfer_term,
)
from workbench.declare import Declaration, parse
from workbench.devices.catalogue import BANDWIDTH, Device
from workbench.devices.interfaces import HBM, HOST
from workbench.errors import DeclarationError, DeviceError
from workbench.ops.base import Workload
from workbench.units import format_bytes


@lru_cache(maxsize=512)
def _parsed(text: str) -> Declaration:
    """A declaration line parsed once per distinct text (Declarations are immutable; errors are not cached)."""
    return parse(text)


def _check_footprint(workload: Workload, dev: Device | None, binary: bool) -> None:
    if dev is not None and dev.memory_bytes and workload.footprint_bytes > dev.memory_bytes:
        raise DeclarationError(
            f"the tensors need {format_bytes(workload.footprint_bytes, binary)}, more than the "
            f"{format_bytes(dev.memory_bytes, binary)} of {dev.name} memory"
        )


def physical_work_of(decl: Declaration, workload: Workload, device: Device | None, convention: str) -> Any:
    """The declaration's physical work under its implementation model (implementations.py)."""
    from workbench.implementations import physical_work

    return physical_work(decl, workload, device, convention)


def resident_on_host(decl: Declaration) -> bool:
    """Whether the declaration says its tensors live in host memory (`resident=host`)."""
    return decl.params.get("resident") == "host"


def _host_term(amount: int, setting: Setting, memory: str) -> tuple[Term, str]:
    """The host ↔ device term (resident=host): the bytes once over the device's host link."""
    rate = interface_rate(HOST, setting)
    dev = setting.device
    name = ""
    if dev is not None and dev.host_link:
        from workbench.devices.links import find_link

        name = find_link(dev.host_link).name
    term = transfer_term(HOST, amount, rate, memory)
    title = f"host ↔ device ({name})" if name else "host ↔ device"
    from dataclasses import replace

    return replace(term, title=title), name


def analysis_terms(
    decl: Declaration, workload: Workload, setting: Setting, physical: Any, memory: str
) -> tuple[list[Term], str, LinkTerm | None, str]:
    """Every time term of one declaration, the path whose rate the compute term uses, the link term, the host link's name.

    Raises every error analyze() can raise about rates and links (a device
    without a rate for the path, an unknown link), so nothing later can fail.
    """
    rate, used_path = compute_rate(workload.path, setting)
    terms = [compute_term(used_path, int(physical.physical_flop), rate)]
    moved = physical.bytes_by_interface
    for key in HIERARCHY:
        interface_rate_here = interface_rate(key, setting)
        if key == HBM:
            terms.append(transfer_term(key, int(moved.get(key, workload.bytes)), interface_rate_here, memory))
        elif interface_rate_here is not None and key in moved:
            terms.append(transfer_term(key, int(moved[key]), interface_rate_here, memory))
    host_name = ""
    if resident_on_host(decl):
        if setting.device is not None and setting.device.kind == "cpu":
            raise DeviceError(f"resident=host on {setting.device.name}: the host's own memory is the device memory; leave resident out")
        host, host_name = _host_term(int(physical.logical_bytes), setting, memory)
        terms.append(host)
    link = None
    if workload.link_traffic is not None:
        link = link_term_for(workload.link_traffic, setting.device)
        if link is not None:
            terms.append(link_term(link.link.key, link.link.name, link.bytes_per_rank, _link_rate(link), link.time))
    return terms, used_path, link, host_name


def _link_rate(link: LinkTerm) -> Any:
    from workbench.devices.catalogue import Rate

    return Rate(link.link.per_direction, link.link.origin, f"{link.link.name}, per direction: {link.link.source}")


def analyze(
    declaration: str | Declaration,
    device: str | Device | None = None,
    rate: Any = None,
    bandwidth: Any = None,
    convention: str = "fma2",
    overlap: Any = "full",
    binary: bool = False,
) -> Analysis:
    """Analyse one operation: work, traffic per interface, time terms, bounds on a device; the derivation on demand.

    `rate` and `bandwidth` override the device's compute rate and HBM
    bandwidth (labelled entered); without a device or rates the work and bytes
    are still computed and the time bounds are None. Every error is raised
    here, before the result exists; the derivation (`steps`, `notes`) is built
    when first read.
    """
    decl = _parsed(declaration) if isinstance(declaration, str) else declaration
    setting = resolve_setting(device, rate, bandwidth, convention, overlap)
    workload: Workload = decl.workload()
    dev = setting.device
    _check_footprint(workload, dev, binary)
    memory = dev.memory_name if dev is not None else "HBM"
    physical = physical_work_of(decl, workload, dev, convention)
    terms, used_path, link, host_name = analysis_terms(decl, workload, setting, physical, memory)
    bounds = combine(terms, setting.overlap)
    if link is not None and bounds.bound is not None:
        link = link.at_bound(bounds.bound)
    compute, hbm = terms[0], terms[1]
    ridge = None
    if compute.rate is not None and hbm.rate is not None and compute.time_s is not None and hbm.time_s is not None:
        ridge = compute.rate.value / hbm.rate.value
    return Analysis(
        declaration=decl,
        convention=convention,
        flop=int(workload.flop(convention)),
        flop_terms=tuple((term.name, int(term.flop(convention))) for term in workload.terms),
        tensors=tuple(
            TensorTraffic(t.name, t.role, tuple(int(x) for x in t.shape), t.shape_symbols, t.dtype.name, int(t.bytes), t.note)
            for t in workload.tensors
        ),
        bytes=int(workload.bytes),
        path=used_path,
        device_name=dev.name if dev is not None else None,
        compute_rate=compute.rate,
        bandwidth=hbm.rate,
        compute_time=compute.time_s,
        memory_time=hbm.time_s,
        overlap=setting.overlap,
        bound_full_overlap=bounds.full,
        bound_no_overlap=bounds.none,
        bound_time=bounds.bound,
        limiter=bounds.limiter,
        ridge=ridge,
        interface=interface_for(memory),
        memory_name=memory,
        link=link,
        terms=tuple(terms),
        limiter_term=bounds.limiter_term,
        physical=physical,
        basis=Basis(workload, dev, binary, setting.entered_rate is not None, host_name),
    )


from workbench.analysis.sweep import Sweep, sweep  # noqa: E402  (sweep.py calls analyze for collectives)

__all__ = [
    "Analysis",
    "BANDWIDTH",
    "COMPUTE",
    "INTERFACE",
    "LINK",
    "LinkTerm",
    "MEMORY",
    "Overlap",
    "Step",
    "Sweep",
    "TensorTraffic",
    "Term",
    "analyze",
    "as_rate",
    "parse_overlap",
    "substitute",
    "sweep",
]
