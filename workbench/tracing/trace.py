"""A PyTorch model traced on the meta device into a step: one line per ATen op that does work.

PyTorch's dispatch mode (`TorchDispatchMode`) sees every ATen op the model's
forward — and with `backward=True` the backward, with `optimizer=` the
optimizer step — calls, with its tensors' shapes, dtypes and storages; on
the meta device no tensor holds memory and nothing is computed. PyTorch's
module tracker (`ModTracker`) says which module each op ran in, forward or
backward. workbench/tracing/aten.py turns each op into declarations.

Dependencies come from the data: each storage remembers the operations
that last wrote it, and an op comes after the writers of every tensor it
reads. Views, reshapes and allocations share or create storage without
work: they are not lines, and the data flows through them. An op without a
mapping is not a line either (it has no bound): it is listed in the step's
header with its count and shapes, and the data flows through it as through
a view.

`scaled_dot_product_attention` is run as the fused kernel a GPU runs (the
flash kernel, or the memory-efficient one where a mask is given): on the
meta device PyTorch would otherwise choose its unfused fallback, which a
GPU does not run.

With `data_parallel=RANKS` the gradients are all-reduced in buckets as
PyTorch's DistributedDataParallel does: parameters in reverse order, each
bucket up to `bucket_mib` MiB, its all-reduce on the `comm` stream after the
backward op that writes its last gradient; as DDP's backward returns only
once every bucket is reduced, the optimizer's first op waits for them all,
and each optimizer op reads the reduced gradients. Batch sizes are per rank.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from dataclasses import dataclass, replace
from typing import Any, Iterator, Mapping, Sequence

from workbench.model.declare import Declaration, build_declaration
from workbench.errors import WorkbenchError
from workbench.tracing.aten import FREE, Mapped, Unmapped, map_call, shape_text, tensor_dtype

COMM_STREAM = "comm"
DEFAULT_BUCKET_MIB = 25
OPTIMIZERS = ("adamw", "sgd")
MAX_NAME = 128
MAX_SHAPES_LISTED = 3
TORCH_EXTRA = "PyTorch is not installed: pip install 'perf-workbench[torch]' (the CPU build is enough: tracing runs on the meta device)"


class TracingError(WorkbenchError):
    """A model that cannot be traced, or tracing without PyTorch: one line saying why."""


def require_torch() -> Any:
    """The torch module, or TracingError naming the extra to install."""
    try:
        import torch
    except ImportError:
        raise TracingError(TORCH_EXTRA) from None
    return torch


@dataclass(frozen=True)
class TracedLine:
    """One operation of the traced step."""

    name: str
    declaration: Declaration
    op: str  # the ATen op: 'aten::addmm' (c10d::allreduce_ for a gradient bucket)
    module: str  # the module path it ran in ('' for none)
    phase: str  # forward, loss, backward, communication, optimizer
    after: tuple[str, ...] = ()
    note: str = ""
    stream: str = "compute"

    @property
    def comment(self) -> str:
        return f"{self.op} {self.note}".rstrip()

    def text(self) -> str:
        parts = [f"{self.name} = {self.declaration}"]
        if self.stream != "compute":
            parts.append(f"on {self.stream}")
        if self.after:
            parts.append("after " + ", ".join(self.after))
        return " ".join(parts) + f"   # {self.comment}"


@dataclass(frozen=True)
class UnmappedOp:
    """An ATen op with no declaration: how often it ran, some of its input shapes, and why."""

    op: str
    count: int
    shapes: tuple[str, ...]
    reason: str

    def text(self) -> str:
        shapes = "; ".join(self.shapes)
        return f"{self.op} ×{self.count} ({shapes}): {self.reason}" if shapes else f"{self.op} ×{self.count}: {self.reason}"


@dataclass(frozen=True)
class TracedStep:
    """The step a traced model makes, with what was left out of it and why."""

    lines: tuple[TracedLine, ...]
    unmapped: tuple[UnmappedOp, ...]
    calls: int  # ATen calls seen
    free: int  # of them views, reshapes and allocations (no work, not lines)
    description: str = ""
    data_parallel: int = 1
    assumed: int = 0  # the model's yes/no checks of a tensor's value, answered True (no data on the meta device)

    def text(self) -> str:
        """The step in the step language, its header comments saying what was traced and what has no bound."""
        mapped = sum(1 for line in self.lines if line.phase != "communication")
        unmapped = sum(op.count for op in self.unmapped)
        header = [f"# {self.description}" if self.description else "# Traced on PyTorch's meta device",
                  f"# {self.calls:,} ATen calls: {mapped:,} operations, {self.free:,} views and allocations (no work), "
                  f"{unmapped:,} without a declaration (below: no bound, not in the step)"]
        header += [f"# unmapped: {op.text()}" for op in self.unmapped]
        if self.assumed:
            header.append(f"# {self.assumed} yes/no check(s) of a tensor's value answered True (the meta device holds no values)")
        return "\n".join(header + [line.text() for line in self.lines]) + "\n"

    def plan(self) -> Any:
        from workbench.steps import parse_step

        return parse_step(self.text())

    def counts(self) -> dict[str, int]:
        """Operations per declared kind (gemm, attention, elementwise, allreduce …)."""
        found: dict[str, int] = {}
        for line in self.lines:
            found[line.declaration.op] = found.get(line.declaration.op, 0) + 1
        return found


# -- names --------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")


def _clean(path: str) -> str:
    text = _UNSAFE.sub("_", path).strip(".")
    text = re.sub(r"\.{2,}", ".", text)
    if text and not (text[0].isalpha() or text[0] == "_"):
        text = "m" + text
    return text


class _Names:
    """Unique operation names from module paths: `layers.3.mlp.down_proj.addmm`, then `…addmm_2` for repeats."""

    def __init__(self) -> None:
        self.used: dict[str, int] = {}

    def take(self, module: str, op: str) -> str:
        base = _clean(f"{module}.{op}" if module else op) or "op"
        if len(base) > MAX_NAME - 8:
            base = _clean(base[-(MAX_NAME - 8):])
        count = self.used.get(base, 0) + 1
        self.used[base] = count
        return base if count == 1 else f"{base}_{count}"


# -- the recorder ---------------------------------------------------------------


class _Recorder:
    """What the dispatch mode saw: the lines, the writers of each storage, the unmapped ops."""

    def __init__(self, torch: Any, tracker: Any) -> None:
        self.torch = torch
        self.tracker = tracker
        self.lines: list[TracedLine] = []
        self.writers: dict[int, tuple[str, ...]] = {}
        self.alive: dict[int, Any] = {}  # storages kept alive so that their keys are never reused mid-trace
        self.unmapped: dict[tuple[str, str], list[Any]] = {}
        self.names = _Names()
        self.calls = 0
        self.free = 0
        self.phase = "forward"
        self.index: dict[str, int] = {}
        self.assumed = 0  # yes/no checks of a tensor's value answered True (value_check)
        self.barrier: tuple[str, ...] = ()  # the all-reduces the first optimizer op waits for (all_reduce)

    def key(self, tensor: Any) -> int:
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):
            self.alive[id(tensor)] = tensor
            return id(tensor)
        key = storage._cdata
        if key not in self.alive:
            self.alive[key] = storage
        return key

    def module(self) -> str:
        if self.phase in ("optimizer", "loss"):
            return self.phase
        parents = [name for name in self.tracker.parents if name != "Global"]
        if not parents:
            return ""
        # The deepest; between two as deep (a backward op under k_proj and v_proj at once: the tracker's parents are
        # a set, iterated in hash order) the greater name, so the same model gives the same step in every run.
        inner = max(parents, key=lambda name: (name.count("."), len(name), name))
        return inner.partition(".")[2]  # without the root module's class name

    def record(self, func: Any, args: Sequence[Any], kwargs: Mapping[str, Any], out: Any) -> None:
        torch = self.torch
        self.calls += 1
        if func.namespace != "aten":
            if func.namespace == "profiler":
                self.free += 1  # record_function markers the optimizer places
                return
        is_tensor = lambda value: isinstance(value, torch.Tensor)  # noqa: E731
        outputs = list(out) if isinstance(out, (tuple, list)) else [out]
        outputs = [o for o in outputs if is_tensor(o)]
        if func.namespace == "aten":
            result = map_call(func, args, dict(kwargs), outputs, is_tensor)
        else:
            result = Unmapped("not an ATen op")
        inputs = [t for t in _tensors(list(args) + list(kwargs.values()), is_tensor)]
        read = {self.key(t) for t in inputs}
        written = [self.key(t) for t in outputs] or [self.key(t) for t in _mutated(func, args, kwargs, is_tensor)]
        deps: set[str] = set()
        for key in read:
            deps.update(self.writers.get(key, ()))
        if result == FREE:
            self.free += 1
            for key in written:
                if key not in read:
                    self.writers[key] = tuple(deps)
            return
        if isinstance(result, Unmapped):
            op = f"{func.namespace}::{func.overloadpacket.__name__}"
            seen = self.unmapped.setdefault((op, result.reason), [0, []])
            seen[0] += 1
            shapes = ", ".join(shape_text(t) for t in inputs[:3]) or "no tensor inputs"
            if shapes not in seen[1] and len(seen[1]) < MAX_SHAPES_LISTED:
                seen[1].append(shapes)
            for key in written:
                self.writers[key] = tuple(deps)
            return
        if self.barrier and self.phase == "optimizer":
            deps.update(self.barrier)  # DDP's backward returns once every bucket is reduced: the optimizer waits
            self.barrier = ()
        module = self.module()
        packet = func.overloadpacket.__name__
        op = f"aten::{packet}"
        suffix = "_bwd" if self.phase == "backward" and "backward" not in packet else ""
        after = self._ordered(deps)
        names: list[str] = []
        for mapped in result:
            assert isinstance(mapped, Mapped)
            name = self.names.take(module, packet + mapped.suffix + suffix)
            self.add(TracedLine(name, mapped.declaration, op, module, self.phase, after, mapped.note))
            names.append(name)
        for key in written:
            self.writers[key] = tuple(names)

    def value_check(self, tensor: Any) -> bool:
        """A meta tensor's value read by the model (`if mask.all():`): unknowable without data. A yes/no check is
        answered True, the case models' guards expect (no padding, no packed sequences), and counted; a number
        cannot be guessed, so the trace stops."""
        if tensor.dtype != self.torch.bool:
            raise TracingError(
                "the model reads a tensor's value (.item() of a number), which the meta device does not have: "
                "data-dependent control flow cannot be traced without data"
            )
        self.assumed += 1
        return True

    def _ordered(self, deps: set[str]) -> tuple[str, ...]:
        return tuple(sorted(deps, key=self.index.__getitem__))

    def add(self, line: TracedLine) -> None:
        self.index[line.name] = len(self.lines)
        self.lines.append(line)

    def all_reduce(self, parameters: Sequence[Any], ranks: int, bucket_bytes: int) -> None:
        """The gradients' all-reduce in buckets (reverse parameter order, as DDP fills them), each after the op
        that writes its last gradient; the optimizer then reads the reduced gradients."""
        grads = [p.grad for p in reversed(list(parameters)) if p.grad is not None]
        buckets: list[list[Any]] = []
        size = bucket_bytes
        for grad in grads:
            nbytes = grad.numel() * grad.element_size()
            if size + nbytes > bucket_bytes and size > 0:
                buckets.append([])
                size = 0
            buckets[-1].append(grad)
            size += nbytes
        placed: list[tuple[int, int, TracedLine, list[int]]] = []
        for number, bucket in enumerate(buckets):
            keys = [self.key(grad) for grad in bucket]
            deps: set[str] = set()
            for key in keys:
                deps.update(self.writers.get(key, ()))
            ready = max((self.index[name] for name in deps), default=len(self.lines) - 1)
            dtype = tensor_dtype(bucket[0]) or "fp32"
            element = bucket[0].element_size()
            total = sum(grad.numel() * grad.element_size() for grad in bucket)
            decl = build_declaration("allreduce", {"n": -(-total // element), "dtype": dtype, "ranks": ranks})
            note = f"bucket {number + 1} of {len(buckets)}: {len(bucket)} gradients, {total / 2**20:.1f} MiB"
            after = (self.lines[ready].name,) if 0 <= ready < len(self.lines) else ()
            line = TracedLine("", decl, "c10d::allreduce_", "ddp", "communication", after, note, COMM_STREAM)
            placed.append((ready, number, line, keys))
        # Each bucket's line goes right after the op it waits for; the comm stream runs them in that order.
        placed.sort(key=lambda item: (item[0], item[1]))
        placed = [(ready, number, replace(line, name=self.names.take("ddp", "allreduce")), keys)
                  for ready, number, line, keys in placed]
        merged: list[TracedLine] = []
        pending = iter(placed)
        upcoming = next(pending, None)
        for index, line in enumerate(self.lines):
            merged.append(line)
            while upcoming is not None and upcoming[0] <= index:
                merged.append(upcoming[2])
                upcoming = next(pending, None)
        while upcoming is not None:
            merged.append(upcoming[2])
            upcoming = next(pending, None)
        self.lines = []
        self.index = {}
        for line in merged:
            self.add(line)
        for _, _, line, keys in placed:
            for key in keys:
                self.writers[key] = (line.name,)
        self.barrier = tuple(line.name for _, _, line, _ in placed)

    def result(self, description: str, ranks: int) -> TracedStep:
        unmapped = tuple(
            UnmappedOp(op, count, tuple(shapes), reason)
            for (op, reason), (count, shapes) in sorted(self.unmapped.items(), key=lambda item: (-item[1][0], item[0]))
        )
        return TracedStep(tuple(self.lines), unmapped, self.calls, self.free, description, ranks, self.assumed)


def _tensors(values: Sequence[Any], is_tensor: Any) -> Iterator[Any]:
    for value in values:
        if is_tensor(value):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if is_tensor(item))


def _mutated(func: Any, args: Sequence[Any], kwargs: Mapping[str, Any], is_tensor: Any) -> list[Any]:
    found: list[Any] = []
    for index, argument in enumerate(func._schema.arguments):
        alias = argument.alias_info
        if alias is not None and alias.is_write:
            value = kwargs.get(argument.name, args[index] if index < len(args) else None)
            found.extend(_tensors([value], is_tensor))
    return found


def _dispatch_mode(torch: Any, recorder: _Recorder) -> Any:
    from torch.utils._python_dispatch import TorchDispatchMode

    scalar = torch.ops.aten._local_scalar_dense.default

    class Recording(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func is scalar and args and args[0].device.type == "meta":
                return recorder.value_check(args[0])
            out = func(*args, **kwargs)
            recorder.record(func, args, kwargs, out)
            return out

    return Recording()


def _fused_attention_mode(torch: Any) -> Any:
    """A function mode that runs scaled_dot_product_attention as the fused kernel a GPU runs (see the docstring)."""
    from torch.overrides import TorchFunctionMode

    sdpa = torch.nn.functional.scaled_dot_product_attention
    aten = torch.ops.aten

    class FusedAttention(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func is not sdpa:
                return func(*args, **kwargs)
            return _fused(func, args, kwargs)

    def _fused(func: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
        bound = dict(zip(names, args))
        bound.update(kwargs)
        q, k, v = bound["query"], bound["key"], bound["value"]
        mask = bound.get("attn_mask")
        dropout = float(bound.get("dropout_p", 0.0) or 0.0)
        causal = bool(bound.get("is_causal", False))
        scale = bound.get("scale")
        if q.dim() != 4 or k.dim() != 4:
            return func(*args, **kwargs)
        try:
            if mask is None:
                return aten._scaled_dot_product_flash_attention(q, k, v, dropout, causal, False, scale=scale)[0]
            if mask.dtype == torch.bool:
                mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float("-inf"))
            need_grad = q.requires_grad or k.requires_grad or v.requires_grad
            return aten._scaled_dot_product_efficient_attention(q, k, v, mask.expand(q.shape[0], q.shape[1], q.shape[2], k.shape[2]),
                                                                need_grad, dropout, causal, scale=scale)[0]
        except (RuntimeError, NotImplementedError, TypeError):
            return func(*args, **kwargs)  # a shape the fused kernels refuse: PyTorch's own choice

    return FusedAttention()


def _module_tracker(torch: Any) -> Any:
    try:
        from torch.distributed._tools.mod_tracker import ModTracker
    except ImportError:  # a build without torch.distributed
        from torch.utils.module_tracker import ModuleTracker

        return ModuleTracker()
    return ModTracker()


@contextlib.contextmanager
def _quiet_tracker() -> Iterator[None]:
    """The module tracker warns (and replaces warnings.formatwarning) where a module runs inside itself; its
    names are still right for the ops, so the warning is kept out of the user's output and the formatter restored."""
    formatter = warnings.formatwarning
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        warnings.formatwarning = formatter


def _check_meta(torch: Any, model: Any, inputs: Sequence[Any]) -> None:
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        if tensor.device.type != "meta":
            raise TracingError(
                f"parameter {name} is on {tensor.device.type}, not the meta device: build the model under "
                "`with torch.device('meta'):` (no weights are needed to trace it)"
            )
    for tensor in inputs:
        if isinstance(tensor, torch.Tensor) and tensor.device.type != "meta":
            raise TracingError(f"an input is on {tensor.device.type}, not the meta device: create it with device='meta'")


def _loss(torch: Any, out: Any) -> Any:
    """What the backward starts from: the output's `.loss` (Hugging Face models given labels), else its sum."""
    loss = getattr(out, "loss", None)
    if isinstance(loss, torch.Tensor):
        return loss
    for value in _outputs(torch, out):
        if value.requires_grad:
            return value.float().sum() if value.dim() else value
    raise TracingError("backward needs an output that requires a gradient; the model's outputs require none")


def _outputs(torch: Any, out: Any) -> Iterator[Any]:
    if isinstance(out, torch.Tensor):
        yield out
    elif isinstance(out, Mapping):
        for value in out.values():
            yield from _outputs(torch, value)
    elif isinstance(out, (list, tuple)):
        for value in out:
            yield from _outputs(torch, value)
    elif hasattr(out, "logits"):
        yield from _outputs(torch, out.logits)


def make_optimizer(torch: Any, name: str, parameters: Sequence[Any]) -> Any:
    """The optimizer, its state made (a first step outside the trace), so that the traced step is a steady one."""
    if name not in OPTIMIZERS:
        raise TracingError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {name!r}")
    if not parameters:
        raise TracingError("the model has no parameters that require a gradient: there is nothing to optimize")
    if name == "adamw":
        optimizer = torch.optim.AdamW(parameters, lr=1e-4, foreach=True)
    else:
        optimizer = torch.optim.SGD(parameters, lr=1e-2, momentum=0.9, foreach=True)
    for parameter in parameters:
        parameter.grad = torch.zeros_like(parameter)
    optimizer.step()
    for parameter in parameters:
        parameter.grad = None
    return optimizer


def trace_model(
    model: Any,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    backward: bool = False,
    optimizer: str | None = None,
    data_parallel: int = 1,
    bucket_mib: float = DEFAULT_BUCKET_MIB,
    description: str = "",
) -> TracedStep:
    """Trace `model(*args, **kwargs)` (parameters and inputs on the meta device) into a TracedStep."""
    torch = require_torch()
    kwargs = dict(kwargs or {})
    if optimizer is not None and not backward:
        raise TracingError("an optimizer step needs the gradients: add backward")
    if data_parallel < 1 or data_parallel > 2**20:
        raise TracingError(f"data-parallel ranks must be 1 to {2**20:,}; got {data_parallel}")
    if data_parallel > 1 and not backward:
        raise TracingError("data-parallel all-reduces the gradients: add backward")
    if not (0 < bucket_mib <= 2**20):
        raise TracingError(f"the bucket size must be above 0 and at most 1 TiB (in MiB); got {bucket_mib}")
    _check_meta(torch, model, list(args) + list(kwargs.values()))
    parameters = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(torch, optimizer, parameters) if optimizer else None
    tracker = _module_tracker(torch)
    recorder = _Recorder(torch, tracker)
    try:
        # Tensors the model makes as it runs (torch.arange(n), a mask) land on the meta device too.
        with _quiet_tracker(), torch.device("meta"), tracker, _fused_attention_mode(torch), _dispatch_mode(torch, recorder):
            out = model(*args, **kwargs)
            if backward:
                recorder.phase = "loss"
                loss = _loss(torch, out)
                recorder.phase = "backward"
                loss.backward()
                if data_parallel > 1:
                    recorder.all_reduce(parameters, data_parallel, int(bucket_mib * 2**20))
            if opt is not None:
                recorder.phase = "optimizer"
                opt.step()
    except WorkbenchError:
        raise
    except Exception as exc:  # the user's model, run by PyTorch: any failure is reported as one line
        raise TracingError(f"the model failed on the meta device: {type(exc).__name__}: {_first_line(exc)}") from None
    if not recorder.lines:
        raise TracingError("the model ran no operation that does work (only views and allocations)")
    return recorder.result(description, data_parallel)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else ""
    return line if len(line) <= 300 else line[:297] + "..."


__all__ = [
    "COMM_STREAM",
    "DEFAULT_BUCKET_MIB",
    "OPTIMIZERS",
    "TracedLine",
    "TracedStep",
    "TracingError",
    "UnmappedOp",
    "require_torch",
    "trace_model",
]
