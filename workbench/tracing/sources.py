"""Where a traced model comes from: a Hugging Face architecture config, or a Python file's function.

A config (JSON, architecture only, no weights) becomes a causal language
model built by `transformers` on the meta device, fed `batch` sequences of
`sequence` token ids (and, with backward, the same ids as labels, so the
model computes its own loss). Configs shipped in resources/models/ are
named by key (gpt2-small, llama-1b, llama-8b).

A Python file's function takes no arguments and returns `(model, inputs)`:
`inputs` one tensor, a tuple of positional inputs, or a dict of keyword
inputs. It runs under `torch.device("meta")`, so the model it builds holds no
weights; anything left on another device is refused by the tracer. The file
is the user's own code and runs as such.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterator

from workbench.errors import WorkbenchError
from workbench.tracing.trace import DEFAULT_BUCKET_MIB, TracedStep, TracingError, require_torch, trace_model

MODELS_PACKAGE = "workbench.resources"
MODELS_FOLDER = "models"
MAX_CONFIG_BYTES = 1 << 20
MAX_BATCH = 1 << 20
MAX_SEQUENCE = 1 << 22
MODELS_EXTRA = "Hugging Face transformers is not installed: pip install 'perf-workbench[models]' (needed for model configs)"
_TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def shipped_configs() -> list[tuple[str, str]]:
    """(key, description) of each config in resources/models/, sorted by key."""
    folder = resources.files(MODELS_PACKAGE).joinpath(MODELS_FOLDER)
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".json"):
            key = entry.name[: -len(".json")]
            try:
                data = json.loads(entry.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            found.append((key, _describe(data)))
    return sorted(found)


def _describe(data: dict[str, Any]) -> str:
    arch = (data.get("architectures") or [data.get("model_type", "?")])[0]
    layers = data.get("num_hidden_layers", data.get("n_layer"))
    hidden = data.get("hidden_size", data.get("n_embd"))
    return f"{arch}, {layers} layers, hidden {hidden}"


def read_config(source: str) -> tuple[str, dict[str, Any]]:
    """A config's name and fields: a shipped key (gpt2-small) or a JSON file's path. Bad files raise TracingError."""
    shipped = dict(shipped_configs())
    if source in shipped:
        text = resources.files(MODELS_PACKAGE).joinpath(MODELS_FOLDER, f"{source}.json").read_text(encoding="utf-8")
        name = source
    else:
        from workbench.files import FileReadError, read_bounded

        try:
            raw = read_bounded(source, MAX_CONFIG_BYTES, "model config")
        except FileReadError as exc:
            known = ", ".join(shipped)
            raise TracingError(f"cannot read model config {source}: {exc} (shipped configs: {known})") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise TracingError(f"{source}: not UTF-8 text") from None
        name = os.path.basename(source)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise TracingError(f"{name}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        raise TracingError(f"{name}: a model config is a JSON object with a model_type (as Hugging Face writes config.json)")
    return name, data


def _check_sizes(batch: int, sequence: int) -> None:
    if not (isinstance(batch, int) and 1 <= batch <= MAX_BATCH):
        raise TracingError(f"batch must be a whole number from 1 to {MAX_BATCH:,}; got {batch}")
    if not (isinstance(sequence, int) and 1 <= sequence <= MAX_SEQUENCE):
        raise TracingError(f"sequence length must be a whole number from 1 to {MAX_SEQUENCE:,}; got {sequence}")


def model_from_config(source: str, batch: int, sequence: int, backward: bool = False, dtype: str | None = None) -> tuple[Any, tuple[Any, ...], dict[str, Any], str]:
    """(model, args, kwargs, description) for a config: the model built on the meta device, token ids as input."""
    _check_sizes(batch, sequence)
    torch = require_torch()
    try:
        import transformers
    except ImportError:
        raise TracingError(MODELS_EXTRA) from None
    name, data = read_config(source)
    fields = dict(data)
    model_type = fields.pop("model_type")
    for key in ("architectures", "transformers_version", "_name_or_path"):
        fields.pop(key, None)
    config_dtype = fields.pop("torch_dtype", None) or fields.pop("dtype", None)
    wanted = dtype or {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}.get(str(config_dtype), "fp32")
    if wanted not in _TORCH_DTYPES:
        raise TracingError(f"dtype must be one of {', '.join(_TORCH_DTYPES)}; got {wanted}")
    with _quiet_transformers():
        return _build_from_config(torch, transformers, name, data, fields, model_type, config_dtype, wanted, batch, sequence, backward)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """transformers' notes on a config's fields and its loss (printed while building and running the model) are
    not the user's errors: kept out of the output while the workbench builds and traces a config's model."""
    transformers = sys.modules.get("transformers")
    if transformers is None:
        yield
        return
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers.logging.set_verbosity(verbosity)


def _build_from_config(torch: Any, transformers: Any, name: str, data: dict[str, Any], fields: dict[str, Any], model_type: str,
                       config_dtype: Any, wanted: str, batch: int, sequence: int, backward: bool) -> tuple[Any, tuple[Any, ...], dict[str, Any], str]:
    try:
        config = transformers.AutoConfig.for_model(model_type, **fields)
    except (ValueError, KeyError, TypeError) as exc:
        raise TracingError(f"{name}: transformers cannot make a config of it: {exc}") from None
    limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if limit and sequence > limit:
        raise TracingError(f"{name}: sequence {sequence} is longer than the model's {limit} positions")
    config._attn_implementation = "sdpa"
    torch_dtype = getattr(torch, _TORCH_DTYPES[wanted])
    try:
        with torch.device("meta"), _default_dtype(torch, torch_dtype):
            model = transformers.AutoModelForCausalLM.from_config(config)
    except Exception as exc:  # transformers' own checks of a config: one line
        raise TracingError(f"{name}: transformers cannot build a causal language model from it: {type(exc).__name__}: {exc}") from None
    model.train(backward)
    vocab = int(getattr(config, "vocab_size", 0) or 0)
    if vocab < 1:
        raise TracingError(f"{name}: the config has no vocab_size")
    ids = torch.randint(0, vocab, (batch, sequence), device="meta")
    kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": False}
    if backward:
        kwargs["labels"] = ids
    description = f"{name} ({_describe(data)}), batch {batch}, sequence {sequence}, {wanted}"
    return model, (), kwargs, description


class _default_dtype:
    """torch's default dtype for the duration (transformers builds parameters in it)."""

    def __init__(self, torch: Any, dtype: Any) -> None:
        self.torch, self.dtype = torch, dtype

    def __enter__(self) -> None:
        self.before = self.torch.get_default_dtype()
        self.torch.set_default_dtype(self.dtype)

    def __exit__(self, *_: object) -> None:
        self.torch.set_default_dtype(self.before)


def model_from_python(path: str, function: str) -> tuple[Any, tuple[Any, ...], dict[str, Any], str]:
    """(model, args, kwargs, description) from `function()` in the Python file at `path`, run on the meta device."""
    torch = require_torch()
    if not function or not function.isidentifier():
        raise TracingError(f"the function must be a Python name, e.g. build; got {function!r}")
    if not os.path.isfile(path):
        raise TracingError(f"no Python file at {path}")
    spec = importlib.util.spec_from_file_location(f"_workbench_traced_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise TracingError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        with torch.device("meta"):
            spec.loader.exec_module(module)
            builder = getattr(module, function, None)
            if not callable(builder):
                names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_") and getattr(v, "__module__", "") == module.__name__)
                raise TracingError(f"{os.path.basename(path)} has no function {function}; it has {', '.join(names) or 'none'}")
            made = builder()
    except WorkbenchError:
        raise
    except Exception as exc:  # the user's file: any failure is one line, never a traceback
        raise TracingError(f"{os.path.basename(path)}: {function}() failed: {type(exc).__name__}: {_line(exc)}") from None
    finally:
        sys.modules.pop(spec.name, None)
    if not (isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], torch.nn.Module)):
        raise TracingError(f"{function}() must return (model, inputs): a torch.nn.Module and its example inputs")
    model, inputs = made
    if isinstance(inputs, dict):
        args, kwargs = (), dict(inputs)
    elif isinstance(inputs, (tuple, list)):
        args, kwargs = tuple(inputs), {}
    else:
        args, kwargs = (inputs,), {}
    return model, args, kwargs, f"{os.path.basename(path)}:{function}()"


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else "")[:300]


@dataclass(frozen=True)
class TraceRequest:
    """What to trace, as the CLI and the import dialog ask for it."""

    source: str  # a shipped config key, a config JSON path, or a Python file
    function: str | None = None  # for a Python file
    batch: int = 1
    sequence: int = 1024
    backward: bool = False
    optimizer: str | None = None
    data_parallel: int = 1
    bucket_mib: float = DEFAULT_BUCKET_MIB
    dtype: str | None = None

    @property
    def is_python(self) -> bool:
        return self.source.endswith(".py")


def trace_request(request: TraceRequest) -> TracedStep:
    """Build the model the request names and trace it (the one function the CLI and the window call)."""
    if request.is_python:
        if not request.function:
            raise TracingError("a Python file needs the function that builds the model: --function NAME (or FILE.py:NAME)")
        model, args, kwargs, description = model_from_python(request.source, request.function)
    else:
        model, args, kwargs, description = model_from_config(request.source, request.batch, request.sequence,
                                                             request.backward, request.dtype)
    what = ["forward"]
    if request.backward:
        what.append("backward")
    if request.optimizer:
        what.append(request.optimizer)
    if request.data_parallel > 1:
        what.append(f"data-parallel on {request.data_parallel} ranks ({request.bucket_mib:g} MiB buckets)")
    full = f"Traced from {description}: {' + '.join(what)}"
    with _quiet_transformers():
        return trace_model(model, args, kwargs, backward=request.backward, optimizer=request.optimizer,
                           data_parallel=request.data_parallel, bucket_mib=request.bucket_mib, description=full)

