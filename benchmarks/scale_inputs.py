"""Sessions and steps the size of a model, for benchmarks/bench_scale.py (and anyone profiling the same cases).

A traced model's operations: GEMMs, adds, softmaxes and RMSNorms, named after the layer they are in, on an
H100 SXM. A model repeats its layers, so its operations repeat their shapes: with `distinct` = D, operation i
has the shape of operation i mod D (a layer of D operations, repeated), each under its own name; without it,
every operation has a shape of its own (the worst case for the roofline's labels and for analysis). The same
arguments always give the same session.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

KINDS = ("gemm", "add", "softmax", "rmsnorm")


def declaration(index: int, rng: random.Random) -> tuple[str, str]:
    """The name and declaration of operation `index`: a layer's GEMM, add, softmax or RMSNorm."""
    layer = index // 8
    kind = KINDS[index % 4] if index % 8 < 4 else KINDS[(index * 7 + layer) % 4]
    tokens = 256 * rng.randint(1, 32)
    hidden = 128 * rng.randint(4, 64)
    if kind == "gemm":
        return f"layers_{layer}_mlp_{index}_addmm", f"gemm(M={tokens}, N={hidden}, K={128 * rng.randint(4, 64)}, dtype=bf16)"
    if kind == "add":
        return f"layers_{layer}_residual_{index}_add", f"add(n={tokens * hidden}, dtype=bf16)"
    if kind == "softmax":
        return f"layers_{layer}_attn_{index}_softmax", f"softmax(rows={tokens}, cols={hidden}, dtype=bf16)"
    return f"layers_{layer}_norm_{index}_rmsnorm", f"rmsnorm(rows={tokens}, cols={hidden}, dtype=bf16)"


def session_data(count: int, distinct: int | None = None, seed: int = 34) -> dict[str, object]:
    """A session file's data with `count` operations on an H100 SXM, `distinct` shapes repeated (None: all)."""
    rng = random.Random(seed)
    shapes = [declaration(index, rng) for index in range(min(count, distinct or count))]
    operations = []
    for index in range(count):
        name, text = shapes[index % len(shapes)]
        if len(shapes) < count:  # the repeat's number: every name is the session's only one
            name = f"{name}_{index // len(shapes)}"
        operations.append({"name": name, "declaration": text, "notes": ""})
    return {
        "format": "perf-workbench-session",
        "version": 1,
        "title": f"{count} operations",
        "device": {"key": "h100-sxm", "overrides": {}, "detected": None},
        "settings": {"convention": "fma2", "overlap": 1.0, "binary": False},
        "operations": operations,
    }


def write_session(path: Path, count: int, distinct: int | None = None) -> Path:
    path.write_text(json.dumps(session_data(count, distinct), indent=1))
    return path


def step_text(count: int, seed: int = 34) -> str:
    """A step of `count` lines: a forward chain on `compute`, every eighth line's gradient all-reduced on `comm`
    after it, each line after the one before it and, every sixteenth, after one a few lines back too."""
    rng = random.Random(seed + count)
    lines = []
    for index in range(count):
        name, text = declaration(index, rng)
        if index % 8 == 7:
            text, stream = f"allreduce(n={2 ** rng.randint(16, 26)}, dtype=bf16, ranks=8)", " on comm"
        else:
            stream = ""
        after = []
        if index:
            after.append(f"op{index - 1}")
        if index % 16 == 15 and index >= 5:
            after.append(f"op{index - 5}")
        lines.append(f"op{index} = {text}{stream}" + (f" after {', '.join(after)}" if after else "") + f"   # {name}")
    return "\n".join(lines) + "\n"
