"""One ATen operation, as PyTorch's dispatcher calls it, to the declarations that bound it.

`map_call(func, args, kwargs, outputs)` answers one of:

- FREE: a view, a reshape, an allocation without a write (`empty`), a
  `detach`: no work and no traffic; the data flows through it unchanged.
- a list of `Mapped` (usually one): the declaration, the suffix its line's
  name takes when one op gives several lines (a convolution's backward), and
  a note for the line's comment.
- an `Unmapped` reason: the op is listed with its count and shapes and has no bound.

Conventions (stated in each line's comment where they matter):

- matrix family (mm, addmm, bmm, baddbmm, mv, dot): a GEMM of the operands'
  extents. A bias that is broadcast (addmm's one row of N values) is added
  in the epilogue and not counted; a full M×N input is β·C (beta=1).
- pointwise ops: `elementwise` over the output's n elements. Inputs of the
  output's size are arrays read once; a broadcast input (a bias, a scalar)
  is read once for the whole op and not counted. Where an input's element
  is wider than the output's (an fp32 input to a bf16 result), it is
  counted as that many arrays of the output's type, so the bytes are
  exact. FLOP per element follow POINTWISE_FLOP (1 where it has no entry,
  said in the comment).
- reductions: `reduce` of rows × n (n the elements summed into each result).
- copies, casts, concatenations, gathers: `copy` of the output's elements.
- attention: the fused kernel (the tracer runs scaled_dot_product_attention
  as the flash or memory-efficient kernel a GPU would, see trace.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from workbench.model.declare import Declaration, build_declaration
from workbench.errors import WorkbenchError

FREE = "free"

# PyTorch dtype names (str(torch.float32) without 'torch.') → the workbench's; bool and uint8 are stored in a byte.
DTYPES = {
    "float32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "int64": "int64",
    "int32": "int32",
    "int8": "int8",
    "uint8": "int8",
    "bool": "int8",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e5m2": "fp8_e5m2",
}
_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "int64": 8, "int32": 4, "int8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}

# Operations per element of the pointwise ops that are not one operation (exp, tanh, √ and the like count 1,
# as the softmax's exp does: workbench/model/ops/softmax.py). Names are the ops' base names (no '_' suffix, no
# '_foreach_' prefix).
POINTWISE_FLOP: dict[str, int] = {
    "_to_copy": 0, "copy": 0, "clone": 0, "fill": 0, "zero": 0, "masked_fill": 1, "where": 1,
    "addcmul": 2, "addcdiv": 2, "lerp": 2, "clamp": 2, "clamp_min": 1, "clamp_max": 1,
    "sigmoid": 3, "silu": 4, "gelu": 8, "softplus": 3, "hardtanh": 2, "hardswish": 4,
    "sigmoid_backward": 2, "tanh_backward": 2, "silu_backward": 6, "gelu_backward": 12, "threshold_backward": 1,
    "native_dropout": 2, "native_dropout_backward": 1, "cumsum": 1,
}
POINTWISE_FLOP.update(dict.fromkeys((
    "add", "sub", "rsub", "mul", "div", "neg", "abs", "reciprocal", "sqrt", "rsqrt", "exp", "exp2", "log", "log2",
    "log1p", "expm1", "tanh", "erf", "sin", "cos", "pow", "relu", "maximum", "minimum", "sign", "eq", "ne", "lt", "le",
    "gt", "ge", "logical_not", "logical_and", "logical_or", "bitwise_not", "bitwise_and", "bitwise_or", "floor", "ceil",
    "round", "trunc", "frac", "square", "isnan", "isinf",
), 1))

# Ops that cost nothing: allocations without a write, metadata, and views PyTorch does not tag as views.
_FREE_NAMES = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "_unsafe_view", "detach", "alias",
    "lift_fresh", "lift_fresh_copy", "_local_scalar_dense", "sym_size", "sym_stride", "sym_numel", "set_",
    "resize_", "_reshape_alias", "record_stream", "is_same_size", "_has_compatible_shallow_copy_type",
})
_FILLS = frozenset({"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "fill", "zero", "arange",
                    "scalar_tensor", "randn", "rand", "randint", "normal", "uniform", "bernoulli", "randn_like",
                    "rand_like", "linspace"})
_COPIES = frozenset({"clone", "copy", "_to_copy", "cat", "index_select", "gather", "index", "repeat",
                     "repeat_interleave", "constant_pad_nd", "tril", "triu", "flip", "roll", "_unsafe_index",
                     "slice_scatter", "select_scatter", "masked_select", "_to_dense", "embedding",
                     "slice_backward", "select_backward", "index_select_backward", "expand_backward"})
_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std", "norm",
                         "linalg_vector_norm", "any", "all", "argmax", "argmin", "logsumexp", "var_mean", "nansum",
                         "count_nonzero"})


@dataclass(frozen=True)
class Mapped:
    """One declaration an ATen op becomes; `suffix` extends the line's name where one op gives several."""

    declaration: Declaration
    note: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class Unmapped:
    """Why an op has no declaration (listed with its count and shapes, no bound)."""

    reason: str


def base_name(packet: str) -> str:
    """'_foreach_addcmul_' → 'addcmul'; 'add_' → 'add'."""
    name = packet[len("_foreach_"):] if packet.startswith("_foreach_") else packet
    return name[:-1] if name.endswith("_") and not name.endswith("__") else name


def tensor_dtype(tensor: Any) -> str | None:
    """The workbench dtype of a tensor, None for a type it has no bound for (complex, uint16…)."""
    return DTYPES.get(str(tensor.dtype).removeprefix("torch."))


def _numel(tensor: Any) -> int:
    return int(tensor.numel())


def shape_text(tensor: Any) -> str:
    return "[" + ", ".join(str(int(size)) for size in tensor.shape) + "]"


def _flat_tensors(values: Iterable[Any], is_tensor: Any) -> list[Any]:
    found: list[Any] = []
    for value in values:
        if is_tensor(value):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if is_tensor(item))
    return found


_DECLARATIONS: dict[Any, Declaration] = {}  # a model repeats its layers: the same op and fields thousands of times
_MAX_DECLARATIONS = 20_000


def _decl(op: str, **values: Any) -> Declaration:
    """`build_declaration`, made once per distinct op and fields (a Declaration is frozen: sharing is safe). The
    key holds each value's type: 2 and 2.0 and True are equal in Python, not in a declaration's text."""
    try:
        key = (op, tuple(sorted((name, type(value), tuple(value) if isinstance(value, list) else value)
                                for name, value in values.items())))
        found = _DECLARATIONS.get(key)
    except TypeError:  # a value that cannot be a key: made afresh
        return build_declaration(op, values)
    if found is None:
        if len(_DECLARATIONS) >= _MAX_DECLARATIONS:
            _DECLARATIONS.clear()
        found = _DECLARATIONS[key] = build_declaration(op, values)
    return found


class _Call:
    """The pieces of one dispatcher call that the mapping reads."""

    def __init__(self, func: Any, args: Sequence[Any], kwargs: dict[str, Any], outputs: Sequence[Any], is_tensor: Any) -> None:
        self.func = func
        self.packet = func.overloadpacket.__name__
        self.base = base_name(self.packet)
        self.args = list(args)
        self.kwargs = kwargs
        self.is_tensor = is_tensor
        self.inputs = _flat_tensors(list(args) + list(kwargs.values()), is_tensor)
        self.outputs = [out for out in outputs if is_tensor(out)]

    def arg(self, index: int, name: str, default: Any = None) -> Any:
        if name in self.kwargs:
            return self.kwargs[name]
        return self.args[index] if index < len(self.args) else default


def map_call(func: Any, args: Sequence[Any], kwargs: dict[str, Any], outputs: Sequence[Any], is_tensor: Any) -> Any:
    """FREE, a list of Mapped, or Unmapped (see the module's docstring). `is_tensor` tells a tensor argument."""
    call = _Call(func, args, kwargs or {}, outputs, is_tensor)
    if getattr(func, "is_view", False) or call.packet in _FREE_NAMES:
        return FREE
    try:
        return _map(call)
    except WorkbenchError as exc:  # a shape the declarations refuse (a zero extent, a dtype without a bound)
        return Unmapped(f"no declaration fits: {exc}")
    except (IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
        return Unmapped(f"arguments not understood ({type(exc).__name__})")


def _map(call: _Call) -> Any:
    packet, base = call.packet, call.base
    handler = _HANDLERS.get(packet) or _HANDLERS.get(base)
    if handler is not None:
        return handler(call)
    if packet.startswith("_foreach_"):
        return _foreach(call)
    if base in _FILLS:
        return Unmapped("writes without reading: no declaration writes only")
    if base in _COPIES:
        return _copy(call)
    if base in _REDUCTIONS or _has_tag(call, "reduction"):
        return _reduction(call)
    if _has_tag(call, "pointwise") or base in POINTWISE_FLOP:
        return _pointwise(call)
    return Unmapped("no mapping for this op")


_TAGS: dict[Any, frozenset[str]] = {}  # per ATen overload: its tags never change


def _has_tag(call: _Call, tag: str) -> bool:
    tags = _TAGS.get(call.func)
    if tags is None:
        tags = _TAGS[call.func] = frozenset(getattr(found, "name", "") for found in getattr(call.func, "tags", ()))
    return tag in tags


def _dtype_of(tensor: Any) -> str:
    name = tensor_dtype(tensor)
    if name is None:
        raise WorkbenchError(f"dtype {tensor.dtype} has no bound")
    return name


# -- the matrix family ---------------------------------------------------------


def _gemm(m: int, n: int, k: int, a: Any, b: Any, out: Any, batch: int = 1, beta: int = 0) -> Declaration:
    ta, tb, tc = _dtype_of(a), _dtype_of(b), _dtype_of(out)
    if ta == tb == tc:
        return _decl("gemm", M=m, N=n, K=k, batch=batch, dtype=ta, beta=beta)
    return _decl("gemm", M=m, N=n, K=k, batch=batch, a=ta, b=tb, c=tc, beta=beta)


def _mm(call: _Call) -> list[Mapped]:
    a, b = call.args[0], call.args[1]
    m, k = (int(s) for s in a.shape)
    n = int(b.shape[1])
    return [Mapped(_gemm(m, n, k, a, b, call.outputs[0]))]


def _addmm(call: _Call) -> list[Mapped]:
    bias, a, b = call.args[0], call.args[1], call.args[2]
    m, k = (int(s) for s in a.shape)
    n = int(b.shape[1])
    beta = call.arg(3, "beta", 1)
    full = _numel(bias) == m * n and beta != 0
    note = "" if full else f"bias {shape_text(bias)} added in the epilogue, not counted"
    return [Mapped(_gemm(m, n, k, a, b, call.outputs[0], beta=1 if full else 0), note)]


def _bmm(call: _Call) -> list[Mapped]:
    a, b = call.args[0], call.args[1]
    batch, m, k = (int(s) for s in a.shape)
    n = int(b.shape[2])
    return [Mapped(_gemm(m, n, k, a, b, call.outputs[0], batch=batch))]


def _baddbmm(call: _Call) -> list[Mapped]:
    c, a, b = call.args[0], call.args[1], call.args[2]
    batch, m, k = (int(s) for s in a.shape)
    n = int(b.shape[2])
    beta = call.arg(3, "beta", 1)
    full = _numel(c) == batch * m * n and beta != 0
    note = "" if full else f"input {shape_text(c)} broadcast in the epilogue, not counted"
    return [Mapped(_gemm(m, n, k, a, b, call.outputs[0], batch=batch, beta=1 if full else 0), note)]


def _mv(call: _Call) -> list[Mapped]:
    a, x = call.args[0], call.args[1]
    m, k = (int(s) for s in a.shape)
    return [Mapped(_gemm(m, 1, k, a, x, call.outputs[0]), "matrix-vector product as a GEMM with N = 1")]


def _dot(call: _Call) -> list[Mapped]:
    a, b = call.args[0], call.args[1]
    return [Mapped(_gemm(1, 1, _numel(a), a, b, call.outputs[0]), "dot product as a GEMM with M = N = 1")]


# -- convolution -----------------------------------------------------------------


def _pair(value: Any, name: str) -> int:
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    if len(set(values)) != 1:
        raise WorkbenchError(f"{name} {tuple(values)} differs between height and width; conv2d takes one")
    return values[0]


def _conv2d(x: Any, w: Any, stride: Any, padding: Any, dilation: Any, groups: int, dt: str) -> Declaration:
    n, c, h, width = (int(s) for s in x.shape)
    k, _, r, s = (int(v) for v in w.shape)
    return _decl(
        "conv2d", N=n, C=c, H=h, W=width, K=k, R=r, S=s, stride=_pair(stride, "stride"),
        pad=_pair(padding, "padding"), dilation=_pair(dilation, "dilation"), groups=int(groups), dtype=dt,
    )


def _convolution(call: _Call) -> Any:
    x, w = call.args[0], call.args[1]
    stride, padding, dilation, transposed = call.args[3], call.args[4], call.args[5], call.args[6]
    groups = call.args[8]
    if transposed or x.dim() != 4:
        return Unmapped("only 2-D, non-transposed convolutions have a declaration (conv2d)")
    bias = call.args[2]
    note = f"bias {shape_text(bias)} added in the epilogue, not counted" if bias is not None else ""
    return [Mapped(_conv2d(x, w, stride, padding, dilation, groups, _dtype_of(x)), note)]


def _convolution_backward(call: _Call) -> Any:
    grad, x, w = call.args[0], call.args[1], call.args[2]
    stride, padding, dilation, transposed = call.args[4], call.args[5], call.args[6], call.args[7]
    groups, mask = call.args[9], call.args[10]
    if transposed or x.dim() != 4:
        return Unmapped("only 2-D, non-transposed convolutions have a declaration (conv2d)")
    dt = _dtype_of(x)
    conv = _conv2d(x, w, stride, padding, dilation, groups, dt)
    found: list[Mapped] = []
    if mask[0]:
        found.append(Mapped(conv, "input gradient: the forward's FLOP and tensors (dy and w read, dx written)", "_input"))
    if mask[1]:
        found.append(Mapped(conv, "weight gradient: the forward's FLOP and tensors (x and dy read, dw written)", "_weight"))
    if len(mask) > 2 and mask[2]:
        n, k = int(grad.shape[0]), int(grad.shape[1])
        per_channel = _numel(grad) // max(n * k, 1)
        found.append(Mapped(_decl("reduce", n=n * per_channel, rows=k, dtype=dt), "bias gradient: dy summed per channel", "_bias"))
    return found or FREE


# -- attention -------------------------------------------------------------------


def _attention(q: Any, k: Any, v: Any, causal: bool, backward: bool) -> Declaration:
    b, h, sq, d = (int(s) for s in q.shape)
    skv, dv = int(k.shape[2]), int(v.shape[3])
    fields: dict[str, Any] = {"B": b, "H": h, "Sq": sq, "Skv": skv, "D": d, "Dv": dv, "causal": causal,
                              "dtype": _dtype_of(q), "backward": backward}
    if causal and sq != skv:
        fields["align"] = "top_left"  # PyTorch's is_causal: query i sees keys 0..i
    return build_declaration("attention", fields)


def _kv_note(q: Any, k: Any) -> str:
    hq, hkv = int(q.shape[1]), int(k.shape[1])
    return f"grouped-query: {hkv} K/V heads for {hq} query heads (K and V counted at {hq} heads)" if hkv != hq else ""


def _sdpa(first: int, causal_at: int, mask_at: int | None, backward: bool) -> Any:
    """A fused attention op's handler: Q, K, V from argument `first` on, is_causal at `causal_at`, the additive
    mask (memory-efficient kernel) at `mask_at`."""

    def handler(call: _Call) -> list[Mapped]:
        q, k, v = call.args[first], call.args[first + 1], call.args[first + 2]
        causal = bool(call.arg(causal_at, "is_causal", False))
        mask = call.arg(mask_at, "attn_bias") if mask_at is not None else None
        notes = [_kv_note(q, k)]
        if mask is not None:
            notes.append(f"mask {shape_text(mask)} added to the scores, not counted")
        return [Mapped(_attention(q, k, v, causal, backward), "; ".join(n for n in notes if n))]

    return handler


# -- normalisation, softmax -----------------------------------------------------


def _layer_norm(call: _Call) -> list[Mapped]:
    x, shape, weight = call.args[0], call.args[1], call.args[2]
    cols = math.prod(int(s) for s in shape)
    rows = _numel(x) // cols
    return [Mapped(_decl("layernorm", rows=rows, cols=cols, affine=weight is not None, dtype=_dtype_of(x)))]


def _rms_norm(call: _Call) -> list[Mapped]:
    x, shape, weight = call.args[0], call.args[1], call.arg(2, "weight")
    cols = math.prod(int(s) for s in shape)
    rows = _numel(x) // cols
    return [Mapped(_decl("rmsnorm", rows=rows, cols=cols, affine=weight is not None, dtype=_dtype_of(x)))]


def _norm_backward(flop: int, text: str) -> Any:
    def handler(call: _Call) -> list[Mapped]:
        grad = call.args[0]
        return [Mapped(_decl("elementwise", n=_numel(grad), inputs=2, outputs=1, flop_per_element=flop, dtype=_dtype_of(grad)),
                       f"{text}; dy and x read, dx written; the weight's gradient (a sum over rows) not counted")]

    return handler


def _batch_norm(call: _Call) -> list[Mapped]:
    x = call.args[0]
    return [Mapped(_decl("elementwise", n=_numel(x), inputs=1, outputs=1, flop_per_element=2, dtype=_dtype_of(x)),
                   "per-channel scale and shift (statistics one value a channel, not counted)")]


def _softmax(call: _Call) -> list[Mapped]:
    x, dim = call.args[0], int(call.args[1])
    cols = int(x.shape[dim]) if x.dim() else 1
    rows = _numel(x) // max(cols, 1)
    out = call.outputs[0]
    note = "log-softmax counted as softmax (its log and subtract in place of the divide)" if "log" in call.packet else ""
    if x.dtype != out.dtype:
        note = "; ".join(filter(None, [note, f"{_dtype_of(x)} in, {_dtype_of(out)} out: counted at {_dtype_of(out)}"]))
    return [Mapped(_decl("softmax", rows=rows, cols=cols, dtype=_dtype_of(out)), note)]


def _softmax_backward(call: _Call) -> list[Mapped]:
    grad = call.args[0]
    flop = 3 if "log" in call.packet else 4
    return [Mapped(_decl("elementwise", n=_numel(grad), inputs=2, outputs=1, flop_per_element=flop, dtype=_dtype_of(grad)),
                   "dx from dy and the saved output (a row sum per row, counted with the elements)")]


# -- losses, embeddings, pooling ------------------------------------------------


def _embedding(call: _Call) -> list[Mapped]:
    weight, out = call.args[0], call.outputs[0]
    return [Mapped(_decl("copy", n=_numel(out), dtype=_dtype_of(weight)), "rows of the table gathered (the indices not counted)")]


def _nll(call: _Call) -> list[Mapped]:
    x = call.args[0] if call.packet == "nll_loss_forward" else call.args[1]
    rows = int(x.shape[0]) if x.dim() > 1 else 1
    return [Mapped(_decl("copy", n=rows, dtype=_dtype_of(x)), "one log-probability picked per row")]


def _embedding_backward(call: _Call) -> list[Mapped]:
    grad = call.args[0]
    return [Mapped(_decl("elementwise", n=_numel(grad), inputs=1, outputs=1, flop_per_element=1, dtype=_dtype_of(grad)),
                   "rows of dy added into the table's gradient (zeroing the whole table not counted)")]


def _pool(call: _Call) -> list[Mapped]:
    x, out = call.args[0], call.outputs[0]
    window = max(_numel(x) // max(_numel(out), 1), 1)
    if call.base == "adaptive_avg_pool2d" or call.base == "_adaptive_avg_pool2d":
        return [Mapped(_decl("reduce", n=window, rows=_numel(out), dtype=_dtype_of(x)), "average over each output's window")]
    kernel = call.arg(1, "kernel_size")
    taps = math.prod(int(s) for s in kernel) if isinstance(kernel, (list, tuple)) else int(kernel) ** 2
    return [Mapped(_decl("reduce", n=max(taps, 2), rows=_numel(out), dtype=_dtype_of(x)),
                   f"{taps} taps per output; overlapping windows counted once each")]


def _pool_backward(call: _Call) -> list[Mapped]:
    grad, x = call.args[0], call.args[1]
    return [Mapped(_decl("copy", n=max(_numel(x), _numel(grad)), dtype=_dtype_of(x)), "dy spread back over the windows")]


# -- pointwise, copies, reductions ------------------------------------------------


def _arrays(tensors: Sequence[Any], n: int, element_bytes: int) -> tuple[int, list[str]]:
    """Arrays of n elements of `element_bytes` the full-size tensors make (wider types count as several), and
    notes on the tensors read once for the whole op (broadcast)."""
    total, notes = 0, []
    for tensor in tensors:
        size = _numel(tensor)
        if size == n:
            total += _BYTES[_dtype_of(tensor)]
        elif size > 1:
            notes.append(f"{shape_text(tensor)} broadcast, not counted")
    return max(1, -(-total // element_bytes)), notes


def _distinct(tensors: Sequence[Any]) -> list[Any]:
    seen: set[int] = set()
    found = []
    for tensor in tensors:
        if id(tensor) not in seen:
            seen.add(id(tensor))
            found.append(tensor)
    return found


def _pointwise(call: _Call) -> Any:
    written = _written(call)
    if not written:
        return FREE
    out = max(written, key=_numel)
    n = _numel(out)
    if n == 0:
        return FREE
    dt = _dtype_of(out)
    size = _BYTES[dt]
    inputs, notes = _arrays(_distinct(call.inputs), n, size)
    outputs, _ = _arrays(_distinct(written), n, size)
    flop = POINTWISE_FLOP.get(call.base)
    if flop is None:
        flop = 1
        notes.insert(0, "1 FLOP an element assumed")
    wide = [t for t in call.inputs if _numel(t) == n and _BYTES[_dtype_of(t)] > size]
    if wide:
        notes.append(f"{_dtype_of(wide[0])} input counted as {_BYTES[_dtype_of(wide[0])] // size} {dt} arrays")
    return [Mapped(_decl("elementwise", n=n, inputs=min(inputs, 64), outputs=min(outputs, 64), flop_per_element=flop, dtype=dt),
                   "; ".join(notes))]


def _written(call: _Call) -> list[Any]:
    """The tensors an op writes: its outputs, or for an in-place op (foreach or not) the arguments it mutates."""
    if call.outputs:
        return call.outputs
    schema = call.func._schema
    found: list[Any] = []
    for index, argument in enumerate(schema.arguments):
        alias = argument.alias_info
        if alias is not None and alias.is_write:
            value = call.arg(index, argument.name)
            found.extend(_flat_tensors([value], call.is_tensor))
    return found


def _copy(call: _Call) -> Any:
    written = _written(call)
    if not written:
        return FREE
    out = written[0]
    n = _numel(out)
    if n == 0:
        return FREE
    dt = _dtype_of(out)
    sources = [t for t in call.inputs if t is not out and _numel(t) > 1]
    if sources and all(_dtype_of(t) == dt for t in sources) or not sources:
        note = "gathered rows (the indices not counted)" if call.base in ("embedding", "index_select", "index", "gather") else ""
        return [Mapped(_decl("copy", n=n, dtype=dt), note)]
    return _pointwise(call)  # a cast: the wider side's bytes counted as arrays of the narrower


def _reduction(call: _Call) -> Any:
    x = call.inputs[0] if call.inputs else None
    written = _written(call)
    if x is None or not written:
        return Unmapped("a reduction without a tensor input")
    rows = max(_numel(written[0]), 1)
    total = _numel(x)
    if total == 0:
        return FREE
    n = max(total // rows, 1)
    if n == 1:
        return [Mapped(_decl("copy", n=total, dtype=_dtype_of(x)), "reduces over an extent of 1: a copy")]
    note = "" if call.base in ("sum", "mean", "nansum") else f"{call.base} counted as a sum (n − 1 operations a row)"
    return [Mapped(_decl("reduce", n=n, rows=rows, dtype=_dtype_of(x)), note)]


def _foreach(call: _Call) -> Any:
    lists = [value for value in call.args if isinstance(value, (list, tuple)) and value and call.is_tensor(value[0])]
    if not lists:
        return Unmapped("a foreach op without tensor lists")
    first = lists[0]
    n = sum(_numel(t) for t in first)
    if n == 0:
        return FREE
    dt = _dtype_of(first[0])
    full = [values for values in lists if sum(_numel(t) for t in values) == n]
    flop = POINTWISE_FLOP.get(call.base, 1)
    note = f"{len(first)} tensors, {n:,} elements in all"
    if call.base not in POINTWISE_FLOP:
        note = "1 FLOP an element assumed; " + note
    return [Mapped(_decl("elementwise", n=n, inputs=min(len(full), 64), outputs=1, flop_per_element=flop, dtype=dt), note)]


_HANDLERS: dict[str, Any] = {
    "mm": _mm,
    "addmm": _addmm,
    "_addmm_activation": _addmm,
    "bmm": _bmm,
    "baddbmm": _baddbmm,
    "mv": _mv,
    "dot": _dot,
    "convolution": _convolution,
    "convolution_backward": _convolution_backward,
    # the argument positions of PyTorch 2.x's native_functions.yaml
    "_scaled_dot_product_flash_attention": _sdpa(0, 4, None, False),
    "_scaled_dot_product_flash_attention_backward": _sdpa(1, 11, None, True),
    "_scaled_dot_product_efficient_attention": _sdpa(0, 6, 3, False),
    "_scaled_dot_product_efficient_attention_backward": _sdpa(1, 11, 4, True),
    "native_layer_norm": _layer_norm,
    "native_layer_norm_backward": _norm_backward(8, "dx = (w·dy − mean(w·dy) − x̂·mean(w·dy·x̂))/σ, about 8 FLOP an element"),
    "_fused_rms_norm": _rms_norm,
    "_fused_rms_norm_backward": _norm_backward(6, "dx = (w·dy − x̂·mean(w·dy·x̂))/rms, about 6 FLOP an element"),
    "_native_batch_norm_legit_no_training": _batch_norm,
    "_native_batch_norm_legit": _batch_norm,
    "_native_batch_norm_legit_functional": _batch_norm,
    "native_batch_norm": _batch_norm,
    "native_batch_norm_backward": _norm_backward(6, "batch-norm backward, about 6 FLOP an element"),
    "_softmax": _softmax,
    "_safe_softmax": _softmax,
    "_log_softmax": _softmax,
    "_softmax_backward_data": _softmax_backward,
    "_log_softmax_backward_data": _softmax_backward,
    "nll_loss_forward": _nll,
    "nll_loss_backward": _nll,
    "embedding": _embedding,
    "embedding_dense_backward": _embedding_backward,
    "max_pool2d_with_indices": _pool,
    "avg_pool2d": _pool,
    "_adaptive_avg_pool2d": _pool,
    "adaptive_avg_pool2d": _pool,
    "max_pool2d_with_indices_backward": _pool_backward,
    "avg_pool2d_backward": _pool_backward,
    "_adaptive_avg_pool2d_backward": _pool_backward,
}
