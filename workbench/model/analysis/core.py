"""analyze(): one declaration's work, traffic per interface, time terms and bounds on a device, and
analyze_partial(), the same as far as the device's rates go. The package's __init__ re-exports them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable

from workbench.model.analysis.link_term import LinkTerm, link_term_for
from workbench.model.analysis.mlp import mlp_term
from workbench.model.analysis.model import Analysis, Basis, TensorTraffic, interface_for
from workbench.model.analysis.rates import Setting, compute_rate, interface_rate, resolve_setting
from workbench.model.analysis.terms import HIERARCHY, Term, combine, compute_term, link_term, transfer_term
from workbench.model.declare import PARSED_LINES_KEPT, Declaration, parse
from workbench.model.devices.catalogue import Device, Rate, find_device
from workbench.model.devices.interfaces import HBM, HOST
from workbench.errors import DeclarationError, DeviceError, UnitError
from workbench.model.implementations import physical_work  # (at the top: an import in a function runs on every analysis)
from workbench.model.ops.base import Workload
from workbench.model.units import format_bytes


@lru_cache(maxsize=512)
def _parsed(text: str) -> Declaration:
    """A declaration line parsed once per distinct text (Declarations are immutable; errors are not cached)."""
    return parse(text)


@dataclass(frozen=True)
class _Work:
    """What a declaration alone decides (no device, no rates): built once per declaration and convention."""

    workload: Workload
    flop: int
    flop_terms: tuple[tuple[str, int], ...]
    tensors: tuple[TensorTraffic, ...]
    bytes: int
    footprint: int
    compulsory: Any  # the compulsory model's PhysicalWork (it needs no device), None for other models


@lru_cache(maxsize=PARSED_LINES_KEPT)  # as many as the parse keeps: a model's session re-analysed (another device) hits
def _work(decl: Declaration, convention: str) -> _Work:
    """The work and compulsory traffic of `decl` (Declarations and Workloads are immutable; errors are not cached)."""
    workload: Workload = decl.workload()
    compulsory = physical_work_of(decl, workload, None, convention) if decl.implementation == "compulsory" else None
    return _Work(
        workload,
        int(workload.flop(convention)),
        tuple((term.name, int(term.flop(convention))) for term in workload.terms),
        tuple(
            TensorTraffic(t.name, t.role, tuple(int(x) for x in t.shape), t.shape_symbols, t.dtype.name, int(t.bytes), t.note)
            for t in workload.tensors
        ),
        int(workload.bytes),
        int(workload.footprint_bytes),
        compulsory,
    )


def _check_footprint(footprint: int, dev: Device | None, binary: bool) -> None:
    if dev is not None and dev.memory_bytes and footprint > dev.memory_bytes:
        raise DeclarationError(
            f"the tensors need {format_bytes(footprint, binary)}, more than the "
            f"{format_bytes(dev.memory_bytes, binary)} of {dev.name} memory"
        )


def physical_work_of(
    decl: Declaration, workload: Workload, device: Device | None, convention: str, swept: Any = None
) -> Any:
    """The declaration's physical work under its implementation model (implementations.py); `swept`: a sweep's arrays."""
    return physical_work(decl, workload, device, convention, params=swept)


def resident_on_host(decl: Declaration) -> bool:
    """Whether the declaration says its tensors live in host memory (`resident=host`)."""
    return decl.params.get("resident") == "host"


def host_link_name(setting: Setting) -> str:
    """The name of the link host ↔ device copies cross on the setting's device ('PCIe 5.0'), '' when it names none."""
    dev = setting.device
    if dev is None or not dev.host_link:
        return ""
    from workbench.model.devices.links import find_link

    return find_link(dev.host_link).name


def host_term(amount: Any, setting: Setting, memory: str) -> Term:
    """The host ↔ device term (resident=host): the bytes once over the device's host link (no rate without one)."""
    if setting.device is not None and setting.device.kind == "cpu":
        raise DeviceError(f"resident=host on {setting.device.name}: the host's own memory is the device memory; leave resident out")
    name = host_link_name(setting)
    term = transfer_term(HOST, amount, interface_rate(HOST, setting), memory)
    return replace(term, title=f"host ↔ device ({name})" if name else "host ↔ device")


def time_terms(
    decl: Declaration, workload: Workload, setting: Setting, physical: Any, memory: str, flop: Any = None,
    traffic: Any = None, whole: Callable[[Any], Any] = lambda amount: amount,
) -> tuple[list[Term], str]:
    """The time terms of one point, or of an array of points (a sweep), and the path whose rate the compute term
    uses: compute, each interface with a rate, the loads in flight, the host link if asked. A collective's link
    term is analysis_terms' alone.

    `physical` is the implementation model's work; None stands for the compulsory model, where the compute
    term is charged `flop` and every interface with a rate `traffic` (a sweep's arrays). The HBM term falls
    back to `traffic` where the model names no HBM bytes. `whole` makes each amount an exact int for one point.
    """
    rate, used_path = compute_rate(workload.path, setting)
    moved = physical.bytes_by_interface if physical is not None else {}
    quantization = physical.quantization if physical is not None else None
    terms = [compute_term(used_path, whole(physical.physical_flop if physical is not None else flop), rate, quantization)]
    for key in HIERARCHY:
        found = interface_rate(key, setting)
        if key == HBM or (found is not None and (physical is None or key in moved)):
            terms.append(transfer_term(key, whole(moved.get(key, traffic)), found, memory))
    mlp = mlp_term(physical, setting.device, terms[1], memory)
    if mlp is not None:
        terms.append(replace(mlp, amount=whole(mlp.amount)))
    if resident_on_host(decl):
        terms.append(host_term(whole(physical.logical_bytes if physical is not None else traffic), setting, memory))
    return terms, used_path


def analysis_terms(
    decl: Declaration, workload: Workload, setting: Setting, physical: Any, memory: str
) -> tuple[list[Term], str, LinkTerm | None, str]:
    """Every time term of one declaration, the path whose rate the compute term uses, the link term, the host link's name.

    Raises every error analyze() can raise about rates and links (a device
    without a rate for the path, an unknown link), so nothing later can fail.
    """
    terms, used_path = time_terms(decl, workload, setting, physical, memory, traffic=workload.bytes, whole=int)
    host_name = host_link_name(setting) if resident_on_host(decl) else ""
    link = None
    if workload.link_traffic is not None:
        link = link_term_for(workload.link_traffic, setting.device)
        if link is not None:
            terms.append(link_term(link.link.key, link.link.name, link.bytes_per_rank, _link_rate(link), link.time))
    return terms, used_path, link, host_name


def _link_rate(link: LinkTerm) -> Rate:
    """The link's rate per direction as the link term's Rate, labelled as the link's figure is."""
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
    work = _work(decl, convention)
    workload, dev = work.workload, setting.device
    _check_footprint(work.footprint, dev, binary)
    memory = dev.memory_name if dev is not None else "HBM"
    physical = work.compulsory or physical_work_of(decl, workload, dev, convention)
    terms, used_path, link, host_name = analysis_terms(decl, workload, setting, physical, memory)
    bounds = combine(terms, setting.overlap)
    for term in terms:  # rates are range-checked where they are entered; this holds whatever the work
        if term.time_s is not None and not (0.0 <= term.time_s < float("inf")):
            raise UnitError(f"the {term.name} time of {decl.op} is {term.time_s:g} s: the rate or the work is out of range")
    if link is not None and bounds.bound is not None:
        link = link.at_bound(bounds.bound)
    compute, hbm = terms[0], terms[1]
    ridge = None
    if compute.rate is not None and hbm.rate is not None and compute.time_s is not None and hbm.time_s is not None:
        ridge = compute.rate.value / hbm.rate.value
    return Analysis(
        declaration=decl,
        convention=convention,
        flop=work.flop,
        flop_terms=work.flop_terms,
        tensors=work.tensors,
        bytes=work.bytes,
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


def analyze_partial(
    declaration: str | Declaration,
    device: str | Device,
    convention: str = "fma2",
    overlap: Any = "full",
    binary: bool = False,
) -> Analysis:
    """analyze() on `device`, or as far as its rates go: the one rule the window, the CLI, reports and saved
    sessions share.

    Where the device has no rate for the operation's instruction path (fp8 on a V100), the work and the
    compulsory bytes still stand: they are analysed with the device's memory bandwidth alone, the compute
    and combined bounds are left out, and `missing_rate` says why. Any other fault raises as analyze() does.
    """
    try:
        return analyze(declaration, device=device, convention=convention, overlap=overlap, binary=binary)
    except DeviceError as exc:
        if exc.missing_path is None:
            raise
        reason = str(exc)
    dev = find_device(device) if isinstance(device, str) else device
    try:
        bandwidth = dev.bandwidth
    except DeviceError:
        bandwidth = None
    partial = analyze(declaration, bandwidth=bandwidth, convention=convention, overlap=overlap, binary=binary)
    return replace(partial, missing_rate=reason)
