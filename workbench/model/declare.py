"""The declaration language: one line declares an operation, and round-trips.

    gemm(M=4096, N=4096, K=4096, dtype=fp16)
    add(n=2**24, dtype=fp32)
    einsum("bmk,bkn->bmn", b=8, m=1024, k=4096, n=1024, dtype=fp16)

Lines are parsed with `ast` and walked against a whitelist — integer
literals, + - * // ** and parentheses, dtype names, true/false, one string for
einsum — and never evaluated. `format_declaration(parse(s))` is canonical:
fields in the operation's order, defaults left out, large powers of two
written as 2**k.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from workbench.model.dtypes import dtype
from workbench.errors import DeclarationError
from workbench.model.ops import REGISTRY, OpSpec, Param, Workload, spec_for

MAX_DIMENSION = 2**62
MAX_LINE = 2000
_MAX_INTERMEDIATE = 2**126
_MAX_EXPONENT = 128
MAX_EXPRESSION_DEPTH = 64  # nested operators in one field's value; deeper is refused before Python's stack runs out

# The implementation keywords every operation's declaration may carry (workbench/model/implementations/ has
# the models). `impl` names a model the operation registers in `OpSpec.implementations`; the tile keywords
# belong to impl=tiled. They follow the operation's own fields in the canonical text.
COMPULSORY = "compulsory"
TILED = "tiled"
IMPL_PARAMS: tuple[Param, ...] = (
    Param("impl", "name", COMPULSORY, doc="implementation model: compulsory (ideal reuse), naive or tiled"),
    Param("tile_m", "dim", 128, doc="rows of C per tile (CTA)", maximum=2**16),
    Param("tile_n", "dim", 128, doc="columns of C per tile (CTA)", maximum=2**16),
    Param("tile_k", "dim", 32, doc="depth of one k step of a tile", maximum=2**16),
    Param("ctas_per_sm", "dim", 1, doc="tiles (CTAs) resident on one SM at once", maximum=64),
    # Your own kernel's launch (analysis/mlp.py, Little's law): any of the three adds the memory-level-parallelism term.
    Param("threads_per_block", "dim", 256, doc="threads in one block of your kernel", maximum=1024),
    Param("bytes_per_load", "dim", 4, doc="bytes one load of a thread brings (1, 2, 4, 8 or 16)", maximum=16),
    Param("loads_in_flight", "dim", 1, doc="independent loads a thread issues before it waits", maximum=64),
    # Where the tensors live (analysis/terms.py): host adds a host ↔ device term over the device's host link.
    Param("resident", "name", "device", doc="where the tensors live: device (default) or host"),
)
TILE_FIELDS: tuple[str, ...] = ("tile_m", "tile_n", "tile_k", "ctas_per_sm")
LAUNCH_FIELDS: tuple[str, ...] = ("threads_per_block", "bytes_per_load", "loads_in_flight")
_IMPL_BY_NAME = {param.name: param for param in IMPL_PARAMS}

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")  # a "name" field: a link key such as nvlink4 or ib_ndr
_TRUE = {"true", "True"}
_FALSE = {"false", "False"}


@dataclass(frozen=True)
class Declaration:
    """A parsed, canonical declaration: the operation and every field's value."""

    op: str
    fields: tuple[tuple[str, Any], ...]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.fields)

    @property
    def spec(self) -> OpSpec:
        return spec_for(self.op)

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def __str__(self) -> str:
        return format_declaration(self)

    @property
    def implementation(self) -> str:
        """The implementation model the declaration names (`impl=`); compulsory when it names none."""
        return str(self.params.get("impl") or COMPULSORY)

    def workload(self) -> Workload:
        """The tensors and FLOP terms of this operation (exact integers): built once per declaration (`_built`)."""
        return _built(self, self.spec.build)

    def replace(self, **changes: Any) -> "Declaration":
        """A new declaration with some fields changed, validated like a parsed one."""
        params = self.params
        params.update(changes)
        return build_declaration(self.op, params)


def parse(text: str) -> Declaration:
    """Parse one declaration line; any fault raises DeclarationError naming the field."""
    if not isinstance(text, str):
        raise DeclarationError("a declaration must be text")
    line = text.strip()
    if not line:
        raise DeclarationError("empty declaration; write e.g. gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    if len(line) > MAX_LINE:
        raise DeclarationError(f"declaration longer than {MAX_LINE} characters")
    return _parse_line(line)


# Lines remembered by `_parse_line`: a session of thousands of operations (a traced model's) has its lines parsed
# when it is read and again for their analyses; a cache smaller than the session parsed every line twice.
PARSED_LINES_KEPT = 16384


@functools.lru_cache(maxsize=PARSED_LINES_KEPT)
def _parse_line(line: str) -> Declaration:
    """`parse` of a stripped line of at most MAX_LINE characters. Remembered: a keystroke's line is parsed for its
    name and for its analysis, an undo brings an earlier line back, and an opened session's lines are parsed when
    read and when analysed (a Declaration is frozen; faults are not remembered, they raise each time)."""
    try:
        tree = ast.parse(line, mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        reason = (exc.msg or "syntax error").split(" (")[0]
        raise DeclarationError(f"not a declaration ({reason}{where}); expected name(field=value, ...)") from None
    except (ValueError, MemoryError, RecursionError):
        raise DeclarationError("not a declaration; expected name(field=value, ...)") from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise DeclarationError("a declaration is one call: name(field=value, ...), e.g. add(n=2**24)")
    spec = spec_for(call.func.id)
    values: dict[str, Any] = {}
    positional = [p for p in spec.params if p.kind == "spec"]
    if len(call.args) > len(positional):
        raise DeclarationError(
            f"{spec.name} takes fields by name (field=value)"
            + ("" if not positional else f", after one quoted {positional[0].name}")
        )
    for param, node in zip(positional, call.args):
        values[param.name] = _literal_string(node, param.name)
    for keyword in call.keywords:
        if keyword.arg is None:
            raise DeclarationError("'**' is not allowed in a declaration")
        name = keyword.arg
        found = spec.param(name) or _IMPL_BY_NAME.get(name)
        if found is None:
            if spec.extra_dims and len(name) == 1:
                found = Param(name, "dim")
            else:
                raise DeclarationError(_unknown_field(spec, name), field=name)
        if name in values:
            raise DeclarationError(f"field '{name}' given twice", field=name)
        values[name] = _value(keyword.value, found)
    return build_declaration(spec.name, values)


def build_declaration(op: str, values: Mapping[str, Any]) -> Declaration:
    """Validate field values (already Python values) and make the canonical Declaration."""
    spec = spec_for(op)
    implementation = _implementation_fields(spec, values)
    values = {name: value for name, value in values.items() if name not in _IMPL_BY_NAME}
    params: dict[str, Any] = {}
    for param in spec.params:
        if param.name in values and values[param.name] is not None:
            params[param.name] = _check_value(values[param.name], param)
        elif param.required:
            example = '"mk,kn->mn"' if param.kind == "spec" else "..."
            raise DeclarationError(
                f"{spec.name} needs {param.name} ({param.doc}); add {param.name}={example}"
                if param.kind != "spec"
                else f"{spec.name} needs its spec first, e.g. {spec.name}({example}, ...)",
                field=param.name,
            )
        else:
            params[param.name] = param.default
    for name, value in values.items():
        if spec.param(name) is None:
            if spec.extra_dims and len(name) == 1 and name.isalpha():
                params[name] = _check_value(value, Param(name, "dim"))
            else:
                raise DeclarationError(_unknown_field(spec, name), field=name)
    if spec.canonical is not None:
        params = spec.canonical(params)
    if spec.check is not None:
        spec.check(params)
    ordered = tuple((name, params[name]) for name in _field_order(spec, params)) + implementation
    declaration = Declaration(spec.name, ordered)
    _check_sizes(declaration.workload())  # the workload its analysis then takes (`_built`), not one built again
    return declaration


@functools.lru_cache(maxsize=PARSED_LINES_KEPT)
def _built(declaration: Declaration, build: Any) -> Workload:
    """`Declaration.workload` by its operation's `build`, remembered as `_parse_line` remembers lines: a
    declaration's workload is built when it is parsed (its sizes checked) and read again by each analysis of it
    (Declarations and Workloads are frozen)."""
    return build(declaration.params)


def format_declaration(decl: Declaration) -> str:
    """The canonical one-line text of a declaration."""
    spec = decl.spec
    params = decl.params
    if spec.format_fields is not None:
        fields = spec.format_fields(params)
    else:
        # Types are always written out: a count means little without its dtype.
        fields = [
            (p.name, params[p.name])
            for p in spec.params
            if p.kind != "spec" and (p.required or p.kind == "dtype" or params[p.name] != p.default)
        ]
    parts = []
    for param in spec.params:
        if param.kind == "spec":
            parts.append(f'"{params[param.name]}"')
    fields += [(name, value) for name, value in decl.fields if name in _IMPL_BY_NAME]
    parts += [f"{name}={format_value(value)}" for name, value in fields]
    return f"{spec.name}({', '.join(parts)})"


def format_value(value: Any) -> str:
    """One field value as the language writes it: 2**24, 4096, true, fp16, 0.5."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if value >= 2**20 and value & (value - 1) == 0:
            return f"2**{value.bit_length() - 1}"
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def iter_fields(decl: Declaration) -> Iterator[tuple[Param, Any]]:
    """Each declared field with its Param (einsum extents get a synthetic 'dim' Param)."""
    spec = decl.spec
    for name, value in decl.fields:
        yield spec.param(name) or _IMPL_BY_NAME.get(name) or Param(name, "dim"), value


def implementation_param(name: str) -> Param | None:
    """The Param of an implementation keyword (impl, tile_m, ...), None for any other name."""
    return _IMPL_BY_NAME.get(name)


# ----------------------------------------------------------------------------


def _field_order(spec: OpSpec, params: Mapping[str, Any]) -> list[str]:
    names = [p.name for p in spec.params]
    extras = [name for name in params if name not in names]
    if spec.extra_dims and "spec" in params:
        from workbench.model.ops.einsum import indices_in_order

        rank = {index: i for i, index in enumerate(indices_in_order(params["spec"]))}
        extras.sort(key=lambda name: rank.get(name, len(rank)))
    return names + extras


def _implementation_fields(spec: OpSpec, values: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Validate the implementation keywords; the canonical (name, value) pairs to append to the fields.

    `impl=compulsory` is the default and is left out; the tile sizes are
    written whenever impl=tiled (they are the point of it), `ctas_per_sm` only
    when it is not 1. Every fault is one line naming the keyword.
    """
    given = {name: value for name, value in values.items() if name in _IMPL_BY_NAME and value is not None}
    impl = _check_value(given.get("impl", COMPULSORY), _IMPL_BY_NAME["impl"]) or COMPULSORY
    if impl not in spec.implementations:
        known = sorted({name for other in REGISTRY.values() for name in other.implementations})
        if impl not in known:
            raise DeclarationError(f"unknown implementation impl={impl}; known: {', '.join(known)}", field="impl")
        if spec.implementations == (COMPULSORY,):
            having = [other.name for other in REGISTRY.values() if impl in other.implementations]
            raise DeclarationError(
                f"{spec.name} has no implementation models, only impl={COMPULSORY} "
                f"(impl={impl} is modelled for {', '.join(having)})",
                field="impl",
            )
        raise DeclarationError(
            f"{spec.name} has impl={', '.join(spec.implementations)}; not impl={impl}", field="impl"
        )
    stray = [name for name in TILE_FIELDS if name in given]
    if stray and impl != TILED:
        raise DeclarationError(
            f"{stray[0]} belongs to impl=tiled; add impl=tiled or remove {stray[0]}", field=stray[0]
        )
    resident = _resident_field(given)
    launch = _launch_fields(given, impl)
    if impl == COMPULSORY:
        return launch + resident
    fields: list[tuple[str, Any]] = [("impl", impl)]
    if impl == TILED:
        for name in TILE_FIELDS:
            param = _IMPL_BY_NAME[name]
            value = _check_value(given[name], param) if name in given else param.default
            if name != "ctas_per_sm" or value != param.default:
                fields.append((name, value))
    return tuple(fields) + resident


def _launch_fields(given: Mapping[str, Any], impl: str) -> tuple[tuple[str, Any], ...]:
    """threads_per_block, bytes_per_load, loads_in_flight: all three written once any is given (defaults filled in)."""
    stray = [name for name in LAUNCH_FIELDS if name in given]
    if not stray:
        return ()
    if impl != COMPULSORY:
        raise DeclarationError(
            f"{stray[0]} describes your own kernel's launch; impl={impl} has its own: remove impl= or {stray[0]}",
            field=stray[0],
        )
    fields = []
    for name in LAUNCH_FIELDS:
        param = _IMPL_BY_NAME[name]
        value = _check_value(given[name], param) if name in given else param.default
        fields.append((name, value))
    width = dict(fields)["bytes_per_load"]
    if width not in (1, 2, 4, 8, 16):
        raise DeclarationError(f"bytes_per_load must be 1, 2, 4, 8 or 16 (a load's width); got {width}", field="bytes_per_load")
    return tuple(fields)


def _resident_field(given: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """`resident=host` kept (tensors in host memory); `resident=device`, the default, left out."""
    if "resident" not in given:
        return ()
    where = _check_value(given["resident"], _IMPL_BY_NAME["resident"])
    if where not in ("device", "host"):
        raise DeclarationError(f"resident must be device or host; got {where}", field="resident")
    return (("resident", where),) if where == "host" else ()


def _name_example(field: str) -> str:
    return "tiled" if field == "impl" else "nvlink4"


def _unknown_field(spec: OpSpec, name: str) -> str:
    allowed = ", ".join(p.name for p in spec.params if p.kind != "spec")
    if spec.extra_dims:
        allowed += ", and one-letter index extents"
    if len(spec.implementations) > 1:
        allowed += ", impl" + (", " + ", ".join(TILE_FIELDS) if TILED in spec.implementations else "")
    allowed += ", " + ", ".join(LAUNCH_FIELDS)
    return f"{spec.name} has no field '{name}'; allowed: {allowed}"


def _check_value(value: Any, param: Param) -> Any:
    name = param.name
    if param.kind == "dim":
        if isinstance(value, bool) or not isinstance(value, int):
            kind = type(value).__name__
            raise DeclarationError(f"{name} must be a whole number; got {value!r} ({kind})", field=name)
        if value < param.minimum:
            least = "a positive integer" if param.minimum == 1 else f"an integer ≥ {param.minimum}"
            raise DeclarationError(f"{name} must be {least}; got {value}", field=name)
        if value > MAX_DIMENSION:
            raise DeclarationError(f"{name}={value} is larger than any device can hold (max 2**62)", field=name)
        if param.maximum is not None and value > param.maximum:
            what = f" ({param.doc})" if param.doc else ""
            raise DeclarationError(f"{name}{what} must be at most {param.maximum}; got {value:,}", field=name)
        return value
    if param.kind == "dtype":
        if not isinstance(value, str):
            raise DeclarationError(f"{name} must be a dtype name such as fp16; got {value!r}", field=name)
        try:
            return dtype(value).name
        except DeclarationError as exc:
            raise DeclarationError(f"{name}: {exc}", field=name) from None
    if param.kind == "bool":
        if not isinstance(value, bool):
            raise DeclarationError(f"{name} must be true or false; got {value!r}", field=name)
        return value
    if param.kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DeclarationError(f"{name} must be a number; got {value!r}", field=name)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return value
    if param.kind == "spec":
        if not isinstance(value, str):
            raise DeclarationError(f"{name} must be a quoted string", field=name)
        return value
    if param.kind == "name":
        if value == "" and not param.required:
            return value  # the default: the operation chooses (a collective: the device's link)
        if not isinstance(value, str) or not _NAME.fullmatch(value):
            raise DeclarationError(f"{name} must be a name such as {_name_example(name)}; got {value!r}", field=name)
        return value.lower()
    raise AssertionError(f"unknown parameter kind {param.kind}")  # pragma: no cover


def _check_sizes(workload: Workload) -> None:
    """Refuse tensors no machine could hold (device memory is checked in analyze)."""
    for tensor in workload.tensors:
        if tensor.bytes_each > 2**60:
            raise DeclarationError(
                f"tensor {tensor.name} would need {tensor.bytes_each:,} bytes (over 1 EiB); check the sizes"
            )


def _literal_string(node: ast.AST, name: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise DeclarationError(f"{name} must be a quoted string such as \"mk,kn->mn\"", field=name)


def _value(node: ast.AST, param: Param) -> Any:
    name = param.name
    if param.kind == "dtype":
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        raise DeclarationError(f"{name} must be a dtype name such as fp16", field=name)
    if param.kind == "bool":
        if isinstance(node, ast.Name) and node.id in _TRUE | _FALSE:
            return node.id in _TRUE
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        raise DeclarationError(f"{name} must be true or false", field=name)
    if param.kind == "spec":
        return _literal_string(node, name)
    if param.kind == "name":
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        raise DeclarationError(f"{name} must be a name such as {_name_example(name)}", field=name)
    allow_float = param.kind == "number"
    return _integer_expression(node, name, allow_float)


def _integer_expression(node: ast.AST, name: str, allow_float: bool, depth: int = 0) -> Any:
    """Walk an arithmetic expression over literals: + - * // ** and parentheses only.

    `depth` counts the operators above `node`; a value nested deeper than
    MAX_EXPRESSION_DEPTH (1,000 minus signs in a row) is refused by name, not
    left to exhaust the interpreter's stack.
    """
    if depth > MAX_EXPRESSION_DEPTH:
        raise DeclarationError(
            f"{name}: the value is nested too deeply (more than {MAX_EXPRESSION_DEPTH} operators inside each other)",
            field=name,
        )
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DeclarationError(f"{name} must be a number; got {value!r}", field=name)
        if isinstance(value, float) and not allow_float:
            raise DeclarationError(f"{name} must be a whole number; got {value!r}", field=name)
        return value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _integer_expression(node.operand, name, allow_float, depth + 1)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left = _integer_expression(node.left, name, allow_float, depth + 1)
        right = _integer_expression(node.right, name, allow_float, depth + 1)
        try:
            result = _apply(node.op, left, right, name)
        except OverflowError:
            raise DeclarationError(f"{name}: value too large", field=name) from None
        if isinstance(result, float) and not math.isfinite(result):
            raise DeclarationError(f"{name}: value too large", field=name)
        if abs(result) > _MAX_INTERMEDIATE:
            raise DeclarationError(f"{name}: value too large", field=name)
        return result
    if isinstance(node, ast.Name):
        raise DeclarationError(f"{name} must be a number; '{node.id}' is a name", field=name)
    raise DeclarationError(f"{name}: only numbers with + - * // ** and parentheses are allowed", field=name)


def _apply(op: ast.operator, left: Any, right: Any, name: str) -> Any:
    """One whitelisted arithmetic step; anything else is refused with the field's name."""
    if isinstance(op, ast.Pow):
        if not isinstance(right, int) or right < 0 or right > _MAX_EXPONENT:
            raise DeclarationError(f"{name}: exponent must be a whole number 0–{_MAX_EXPONENT}", field=name)
        if abs(left) > 2**64:
            raise DeclarationError(f"{name}: value too large", field=name)
        return left**right
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.Mult):
        return left * right
    if isinstance(op, ast.FloorDiv):
        if right == 0:
            raise DeclarationError(f"{name}: division by zero", field=name)
        return left // right
    if isinstance(op, ast.Div):
        raise DeclarationError(f"{name}: use // for whole-number division", field=name)
    raise DeclarationError(f"{name}: only + - * // ** are allowed", field=name)


def integer_value(text: str, name: str) -> int:
    """A whole number written as a declaration's field is (`4096`, `2**12`, `(1 << 0) + 4095` is refused:
    + - * // ** and parentheses only), or one clear DeclarationError naming `name`."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        raise DeclarationError(f"{name}: {text.strip()!r} is not a whole number", field=name) from None
    value = _integer_expression(tree.body, name, allow_float=False)
    assert isinstance(value, int)
    return value


def power_of_two_exponent(text: str, name: str, largest: int) -> int:
    """The exponent a sweep's size field means, at most `largest`: `12`, `2^12`, `2**12` and `4096` all mean 2^12.

    The field shows 2^N, so a whole number up to `largest` is N itself and a larger one must be a power of two;
    `^` is read as `**`, and the rest as the declaration language reads a value.
    """
    refusal = DeclarationError(f"{name}: {text.strip()!r} is not 2^0 … 2^{largest} (write 12, 2^12 or 4096)", field=name)
    try:
        value = integer_value(text.replace("^", "**"), name)
    except DeclarationError:
        raise refusal from None
    if "^" in text or "**" in text or value > largest:  # the size itself: a power of two
        if value > 0 and value & (value - 1) == 0 and value.bit_length() - 1 <= largest:
            return value.bit_length() - 1
    elif value >= 0:
        return value
    raise refusal


def known_operations() -> list[str]:
    """Names of every registered operation, in registration order."""
    return list(REGISTRY)
