"""Automatic operation names: "Vector add, 2^24 fp32", "GEMM 4096³ fp16", from the declaration.

An operation the user has not named carries a name made from its operation
family and its shape, so the list, the Analysis heading, the plot label and
the reports say what it is. One naming function per operation (registered
here, keyed by the operation's name in `workbench.ops.REGISTRY`); an
operation without one is named from its canonical declaration. Pure
functions of a parsed `Declaration`: no Qt, no device, no settings.

A name is a caption, not an identifier: two operations may share one (the
declaration tells them apart).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from workbench.errors import WorkbenchError

Namer = Callable[[Mapping[str, Any]], str]

_NAMERS: dict[str, Namer] = {}

# Names the app gave before names followed declarations (docs/session-format.md, "Operation names").
LEGACY_DEFAULT_NAMES = ("new operation", "gemm 4096³ fp16")


def register_namer(op: str, namer: Namer) -> Namer:
    """Name the operation `op` (a key of the op registry) with `namer`; one namer per operation."""
    if op in _NAMERS:
        raise ValueError(f"a namer for {op!r} is registered twice")
    _NAMERS[op] = namer
    return namer


def automatic_name(declaration: Any) -> str | None:
    """The automatic name of a declaration (a line or a parsed Declaration), or None when it does not parse."""
    from workbench.declare import Declaration, parse

    if isinstance(declaration, Declaration):
        decl = declaration
    else:
        try:
            decl = parse(declaration)
        except WorkbenchError:
            return None
    namer = _NAMERS.get(decl.op)
    if namer is None:
        return str(decl)
    return namer(decl.params)


def is_legacy_default(name: str) -> bool:
    """True for a name the app itself gave an operation before automatic names: "new operation", "new operation 3"."""
    base = name.strip()
    for legacy in LEGACY_DEFAULT_NAMES:
        if base == legacy:
            return True
        if base.startswith(legacy + " ") and base[len(legacy) + 1 :].isdigit():
            return True
        if base == f"{legacy} (copy)":
            return True
    return False


# ---------------------------------------------------------------- formatting pieces


def count_text(value: int) -> str:
    """An element count as a reader says it: 2^24 for a large power of two, 10^6 for a power of ten, else digits."""
    if value >= 1024 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    if value >= 10**4:
        exponent = len(str(value)) - 1
        if value == 10**exponent:
            return f"10^{exponent}"
        return f"{value:,}".replace(",", " ")
    return str(value)


def extents_text(*extents: int) -> str:
    """Extents joined by ×, a cube written n³ and a square n²: 4096³, 4096×1024×512, 56²."""
    if len(extents) == 3 and extents[0] == extents[1] == extents[2]:
        return f"{extents[0]}³"
    if len(extents) == 2 and extents[0] == extents[1]:
        return f"{extents[0]}²"
    return "×".join(str(e) for e in extents)


def _batched(batch: int, text: str) -> str:
    return text if batch == 1 else f"{batch} × {text}"


# ---------------------------------------------------------------- one namer per operation


def _gemm(p: Mapping[str, Any]) -> str:
    shape = _batched(p["batch"], extents_text(p["M"], p["N"], p["K"]))
    return f"GEMM {shape} {p['dtype']}"


def _vector(title: str) -> Namer:
    def name(p: Mapping[str, Any]) -> str:
        return f"{title}, {count_text(p['n'])} {p['dtype']}"

    return name


def _elementwise(p: Mapping[str, Any]) -> str:
    shape = f"{p['inputs']} in → {p['outputs']} out"
    return f"Elementwise {shape}, {count_text(p['n'])} {p['dtype']}"


def _reduce(p: Mapping[str, Any]) -> str:
    size = count_text(p["n"]) if p["rows"] == 1 else f"{p['rows']} × {count_text(p['n'])}"
    return f"Sum reduction, {size} {p['dtype']}"


def _softmax(p: Mapping[str, Any]) -> str:
    return f"Softmax {p['rows']}×{p['cols']} {p['dtype']}"


def _conv2d(p: Mapping[str, Any]) -> str:
    kernel = extents_text(p["R"], p["S"])
    image = extents_text(p["H"], p["W"])
    return f"Conv2d {kernel}, {p['C']}→{p['K']} ch, {image}, N={p['N']} {p['dtype']}"


def _attention(p: Mapping[str, Any]) -> str:
    length = f"S={p['Sq']}" if p["Sq"] == p["Skv"] else f"Sq={p['Sq']} Skv={p['Skv']}"
    head = f"D={p['D']}" if p["Dv"] == p["D"] else f"D={p['D']}/{p['Dv']}"
    kind = "Attention" if p["fused"] else "Unfused attention"
    causal = " causal" if p["causal"] else ""
    return f"{kind}{causal} {p['B']}×{p['H']} heads, {length} {head} {p['dtype']}"


def _einsum(p: Mapping[str, Any]) -> str:
    return f"Einsum {p['spec']} {p['dtype']}"


def _norm(title: str) -> Namer:
    def name(p: Mapping[str, Any]) -> str:
        weights = "" if p["affine"] else ", no weights"
        return f"{title} {p['rows']}×{p['cols']} {p['dtype']}{weights}"

    return name


def _collective(title: str) -> Namer:
    def name(p: Mapping[str, Any]) -> str:
        link = f" over {p['link']}" if p["link"] else ""
        return f"{title}, {count_text(p['n'])} {p['dtype']} on {p['ranks']} ranks{link}"

    return name


for _op, _namer in (
    ("gemm", _gemm),
    ("copy", _vector("Copy")),
    ("scale", _vector("Scale")),
    ("add", _vector("Vector add")),
    ("triad", _vector("Triad")),
    ("axpy", _vector("AXPY")),
    ("elementwise", _elementwise),
    ("reduce", _reduce),
    ("softmax", _softmax),
    ("conv2d", _conv2d),
    ("attention", _attention),
    ("einsum", _einsum),
    ("rmsnorm", _norm("RMSNorm")),
    ("layernorm", _norm("LayerNorm")),
    ("allreduce", _collective("All-reduce")),
    ("allgather", _collective("All-gather")),
    ("reducescatter", _collective("Reduce-scatter")),
    ("broadcast", _collective("Broadcast")),
    ("rootreduce", _collective("Reduce to root")),
    ("alltoall", _collective("All-to-all")),
    ("sendrecv", _collective("Send/recv")),
):
    register_namer(_op, _namer)
