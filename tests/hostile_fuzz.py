"""Hostile-input fuzzing of the declaration parser, session files, the scratchpad and the CLI.

Each surface is a hypothesis property over structure-aware inputs (valid
declarations and session files with one part made hostile) and over garbage.
The property is the project's rule for bad input: the project's own error
type with a one-line message, or a valid result that survives a round trip,
and never any other exception, within a time budget per input.

Run as a script, one surface per process, under a memory limit
(RLIMIT_AS), so that a memory bomb fails the run instead of the machine:

    python tests/hostile_fuzz.py declarations 2000

It prints one JSON line: {"surface": ..., "inputs": N, "failures": 0}.
tests/test_hostile_fuzz.py runs every surface this way within `make test`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import WorkbenchError

MEMORY_LIMIT_BYTES = 1536 * 2**20
SECONDS_PER_INPUT = 5.0  # generous: the two shared cores of CI can be slow; a hang or a bomb takes far longer
DATA = Path(__file__).parent / "data"

# ---------------------------------------------------------------- shared hostile values

HOSTILE_INTEGERS = st.sampled_from(
    [0, -1, 1, 2**62, 2**62 + 1, 2**63, 2**64, 2**1024, 10**308, 10**400, -(10**400), 2**40]
)
HOSTILE_TEXT = st.sampled_from(
    [
        "",
        "\udcff",
        "\ud800x",
        "\x00",
        "\r",
        "\r\n=1+1",
        "@SUM(1+1)",
        "<script>alert(1)</script>",
        "![x](https://tracker.example/t.png)",
        "```",
        "~~~",
        "|",
        "\\",
        "é" * 200,
        "x" * 5000,
        "NaN",
        "Infinity",
        "1e999",
    ]
)


def _deep(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


HOSTILE_JSON = st.one_of(
    HOSTILE_INTEGERS,
    HOSTILE_TEXT,
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([None, True, False, [], {}, 1e308, -1e308, 5e-324, -0.0]),
    st.integers(min_value=1, max_value=1000).map(_deep),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
        max_leaves=8,
    ),
)

# ---------------------------------------------------------------- declarations


def _expressions() -> st.SearchStrategy[str]:
    """Values a field might hold: numbers, arithmetic, deep nesting, names, strings, junk."""
    atoms = st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        HOSTILE_INTEGERS.map(str),
        st.sampled_from(["2**24", "2**62", "2**63", "2**128", "2**129", "(2**64)**2", "10**400", "4096//0", "1/2",
                         "0.5", "1e999", "fp16", "bf16", "true", "false", "None", "'fp32'", '"x"', "[1]", "{}",
                         "f(1)", "a.b", "1 if 1 else 2", "lambda: 1", "__import__('os')", "...", "-0", "+-+-1",
                         "2**-1", "2**0.5", "(-2)**129"]),
    )

    def nest(depth: int, mark: str) -> str:
        if mark == "(":
            return "(" * depth + "1" + ")" * depth
        if mark == "+":
            return "1+" * depth + "1"
        return mark * depth + "1"

    deep = st.builds(nest, st.integers(min_value=1, max_value=1200), st.sampled_from(["-", "+", "~", "(", "+"]))
    combined = st.builds(lambda a, op, b: f"{a}{op}{b}", atoms, st.sampled_from(["+", "-", "*", "//", "**", "/", "%", "<<"]), atoms)
    return st.one_of(atoms, deep, combined)


EXPRESSIONS = _expressions()  # built once: making strategies is what costs time, not drawing from them
DIMENSIONS = st.one_of(st.integers(min_value=1, max_value=4096).map(str), EXPRESSIONS)
EXTENTS = st.one_of(st.integers(min_value=1, max_value=512).map(str), EXPRESSIONS)
EINSUM_SPECS = st.one_of(
    st.sampled_from(["mk,kn->mn", "bmk,bkn->bmn", "ii->i", "ij->", "a,a->a"]), st.text(alphabet="abcijk,->. 1", max_size=20)
).map(repr)
DTYPES = st.sampled_from(["fp16", "bf16", "fp32", "fp64", "fp8_e4m3", "int4", "fp128", "'fp16'", "1"])
BOOLEANS = st.sampled_from(["true", "false", "True", "1", "yes"])
ONE_IN_TEN = st.integers(min_value=0, max_value=9)
EINSUM_LETTERS = st.lists(st.sampled_from("abcijkmnz"), max_size=6, unique=True)
EXTRA_FIELDS = st.sampled_from(["bogus=1", "**{}", "1", "x=", "inputs=2**40", "outputs=65"])
TAILS = st.sampled_from(["", "", "", "  # a comment", ")", "\n", "; 1"])


@st.composite
def declaration_text(draw: st.DrawFn) -> str:
    """A declaration of a registered operation with its fields drawn, some of them hostile."""
    from workbench.model.ops import REGISTRY

    op = draw(st.sampled_from(sorted(REGISTRY)))
    spec = REGISTRY[op]
    parts: list[str] = []
    for param in spec.params:
        if param.kind == "spec":
            parts.append(draw(EINSUM_SPECS))
            continue
        if draw(ONE_IN_TEN) == 0:
            continue  # leave a field out
        kind = {"dim": DIMENSIONS, "dtype": DTYPES, "bool": BOOLEANS}.get(param.kind, EXPRESSIONS)
        parts.append(f"{param.name}={draw(kind)}")
    if spec.extra_dims:
        for letter in draw(EINSUM_LETTERS):
            parts.append(f"{letter}={draw(EXTENTS)}")
    if draw(st.booleans()) and parts:
        parts.append(draw(st.sampled_from(parts)))  # a field twice
    if draw(ONE_IN_TEN) < 2:
        parts.append(draw(EXTRA_FIELDS))
    tail = draw(TAILS)
    return f"{op}({', '.join(parts)}){tail}"


DECLARATIONS = st.one_of(
    declaration_text(),
    st.text(max_size=60),
    st.text(alphabet="add(n=2*4,-+)", max_size=200),
    st.sampled_from(["elementwise(n=1, inputs=2**40)", "add(n=" + "-" * 1000 + "1)", "add(n=" + "(" * 300 + "1" + ")" * 300 + ")"]),
)


def check_declaration(text: str) -> None:
    from workbench.model.analysis import analyze
    from workbench.model.declare import parse

    try:
        declaration = parse(text)
    except WorkbenchError as exc:
        _one_line(exc)
        return
    assert parse(str(declaration)) == declaration, "the canonical form must parse to the same declaration"
    workload = declaration.workload()
    assert workload.flop() >= 0 and workload.bytes >= 0
    for device in ("h100-sxm", "cpu-generic"):
        try:
            analysis = analyze(text, device=device)
        except WorkbenchError as exc:
            _one_line(exc)
            continue
        analysis.derivation_text()
        json.dumps(analysis.to_dict(), allow_nan=False)


# ---------------------------------------------------------------- session files


def _base_sessions() -> list[dict[str, Any]]:
    from workbench.documents.examples import list_examples, load_example
    from workbench.documents.session import session_to_dict

    bases = [json.loads((DATA / name).read_text(encoding="utf-8")) for name in ("session_v1.json", "session_v1_minimal.json")]
    bases += [session_to_dict(load_example(key)) for key, _ in list_examples()[:3]]
    return bases


def _locations(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append(prefix + (key,))
            found += _locations(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            found.append(prefix + (index,))
            found += _locations(item, prefix + (index,))
    return found


HOSTILE_DECLARATIONS = st.sampled_from(
    ["elementwise(n=1, inputs=2**40)", "add(n=" + "-" * 1000 + "1)", "add(n=2**63)", "add(n=1) # ```<img onerror=x>", "x"]
)


@st.composite
def session_bytes(draw: st.DrawFn) -> bytes:
    """A valid session file with one place made hostile (replaced, removed, or given an extra key)."""
    bases = _SESSION_BASES
    data = json.loads(json.dumps(draw(st.sampled_from(bases))))
    places = _locations(data)
    place = draw(st.sampled_from(places))
    container = data
    for step in place[:-1]:
        container = container[step]
    action = draw(st.sampled_from(["replace", "replace", "replace", "remove", "add-key"]))
    key = place[-1]
    if action == "remove":
        del container[key]
    elif action == "add-key" and isinstance(container, dict):
        container[draw(HOSTILE_TEXT)] = draw(HOSTILE_JSON)
    else:
        last = key if isinstance(key, str) else ""
        value = draw(HOSTILE_DECLARATIONS) if last == "declaration" and draw(st.booleans()) else draw(HOSTILE_JSON)
        container[key] = value
    return json.dumps(data, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


GARBAGE_SESSIONS = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.sampled_from(
        [b"[" * 100_000, b'{"format": "perf-workbench-session", "version": 1, "title": "\\udcff"}',
         b'{"format": "perf-workbench-session", "version": 1e999}', b"\xef\xbb\xbf{}", b'{"a": 1, "a": 2}',
         b'{"format": "perf-workbench-session", "version": 1, "runs": [{"median_s": NaN}]}']
    ),
)

_SESSION_BASES: list[dict[str, Any]] = []


def check_session(content: bytes) -> None:
    from workbench.documents.report import render_csv, render_html, render_markdown, render_samples_csv
    from workbench.documents.session import dumps, loads

    try:
        session = loads(content)
    except WorkbenchError as exc:
        _one_line(exc)
        return
    markdown = render_markdown(session)
    outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", re.sub(r"^(`{3,})text\n.*?\n\1$", "", markdown, flags=re.S | re.M))
    assert "<" not in outside, "raw HTML in the Markdown report"
    render_html(session)
    render_csv(session)
    render_samples_csv(session)
    text = dumps(session)
    again = loads(text)
    assert dumps(again) == text, "a session that opens must save and open to the same file"


# ---------------------------------------------------------------- scratchpad


UNITS = ["B", "kB", "MB", "GiB", "TB/s", "GB/s", "FLOP", "TFLOP", "TFLOP/s", "s", "ms", "µs", "ns", "bit", "cycle",
         "Hz", "GHz", "W", "parsec", "FLOPS", "Gbps", "%", "OP", "FLOP/B"]


@st.composite
def scratch_expression(draw: st.DrawFn) -> str:
    numbers = st.one_of(
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.integers(min_value=-(10**20), max_value=10**20).map(str),
        st.sampled_from(["1e999", "1e308", "9" * 310, "1..2", "0", "0.0", "1_000", ".5", "1e-400", "2**64", "10**64"]),
    )
    terms = st.builds(lambda number, unit: f"{number} {unit}".strip(), numbers, st.sampled_from(UNITS + [""] * 4))
    operators = st.sampled_from([" + ", " - ", " * ", " / ", " ** ", "^", "×", " ", ""])
    count = draw(st.integers(min_value=1, max_value=5))
    text = draw(terms)
    for _ in range(count - 1):
        text += draw(operators) + draw(terms)
    if draw(st.booleans()):
        text = "(" * draw(st.integers(min_value=1, max_value=3)) + text + ")"
    return text


SCRATCH = st.one_of(
    scratch_expression(),
    st.text(max_size=60),
    st.sampled_from(["-" * 499 + "1", "(" * 250 + "1" + ")" * 250, "2**2**2**2**2", "(-1)**0.5", "0**-1", "1/0", "TFLOP/s"]),
)


def check_scratch(expression: str, to: str | None) -> None:
    import math

    from workbench.model.scratchpad import evaluate, format_result

    try:
        value = evaluate(expression, to=to)
    except WorkbenchError as exc:
        _one_line(exc)
        return
    assert math.isfinite(float(value.magnitude)), f"{expression!r} gave {value!r}"
    format_result(value, keep_unit=to is not None)


# ---------------------------------------------------------------- the CLI


def cli_arguments() -> st.SearchStrategy[list[str]]:
    rates = st.one_of(st.none(), scratch_expression(), st.sampled_from(["TFLOP/s", "100 TFLOP/s", "-1 TB/s", "9" * 400 + " FLOP/s"]))
    calc = st.builds(
        lambda decl, rate, bandwidth, overlap: ["calc", decl]
        + (["--rate", rate] if rate is not None else [])
        + (["--bandwidth", bandwidth] if bandwidth is not None else [])
        + (["--overlap", overlap] if overlap is not None else []),
        DECLARATIONS,
        rates,
        rates,
        st.one_of(st.none(), st.sampled_from(["full", "none", "0.5", "2", "nan", "-0", "1e999"])),
    )
    units = st.builds(lambda expression, to: ["units", expression] + (["--to", to] if to else []),
                      SCRATCH, st.one_of(st.none(), st.sampled_from(UNITS + ["2 s", "", "ms ms"])))
    measure = st.builds(
        lambda decl, warmup, iterations: ["measure", decl, "--backend", "numpy", "--warmup", warmup, "--iterations", iterations],
        DECLARATIONS,
        st.sampled_from(["0", "-1", "1000000000", "10001", "1e3", "x"]),
        st.sampled_from(["0", "29", "10000000", "-5", "x"]),
    )
    return st.one_of(calc, units, measure)


def check_cli(arguments: list[str]) -> None:
    from workbench.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(arguments)
        except SystemExit as exit_:  # argparse refusing an option value
            code = exit_.code
    message = err.getvalue()
    assert code in (0, 2), f"exit {code}: {message[-500:]}"
    if code == 2:
        assert message.count("\n") == 1 and "Traceback" not in message, message[-500:]


# ---------------------------------------------------------------- running


def _one_line(exc: BaseException) -> None:
    message = str(exc)
    assert message and "\n" not in message, f"an error message must be one line: {message!r}"


def _timed(check: Callable[..., None], *args: Any) -> None:
    start = time.perf_counter()
    check(*args)
    elapsed = time.perf_counter() - start
    assert elapsed < SECONDS_PER_INPUT, f"{elapsed:.1f} s for one input: {args!r:.200}"


def run_surface(surface: str, examples: int) -> int:
    """Run one surface's property for `examples` inputs; returns how many inputs were tried."""
    tried = 0
    common = settings(
        max_examples=examples,
        deadline=None,  # time is checked per input by _timed, with a budget that tolerates a loaded machine
        database=None,
        derandomize=os.environ.get("HOSTILE_FUZZ_RANDOM") != "1",
        suppress_health_check=list(HealthCheck),
    )

    if surface == "declarations":

        @common
        @given(DECLARATIONS)
        def prop(text: str) -> None:
            nonlocal tried
            tried += 1
            _timed(check_declaration, text)

    elif surface == "sessions":
        _SESSION_BASES.extend(_base_sessions())

        @common
        @given(st.one_of(session_bytes(), session_bytes(), session_bytes(), GARBAGE_SESSIONS))
        def prop(content: bytes) -> None:
            nonlocal tried
            tried += 1
            _timed(check_session, content)

    elif surface == "scratchpad":

        @common
        @given(SCRATCH, st.one_of(st.none(), st.sampled_from(UNITS)))
        def prop(expression: str, to: str | None) -> None:
            nonlocal tried
            tried += 1
            _timed(check_scratch, expression, to)

    elif surface == "cli":

        @common
        @given(cli_arguments())
        def prop(arguments: list[str]) -> None:
            nonlocal tried
            tried += 1
            _timed(check_cli, arguments)

    else:
        raise SystemExit(f"unknown surface {surface!r}")
    prop()
    return tried


def limit_memory(limit: int = MEMORY_LIMIT_BYTES) -> None:
    """Cap this process's address space, so a memory bomb ends in MemoryError here, not in the machine's swap."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: list[str], run: Callable[[str, int], int] | None = None) -> int:
    """Run one surface (`run`: this file's run_surface, or another harness's) and print its JSON line."""
    run = run or run_surface
    surface, examples = argv[0], int(argv[1])
    if sys.platform.startswith("linux"):
        limit_memory(int(os.environ.get("HOSTILE_FUZZ_MEMORY_MB", MEMORY_LIMIT_BYTES >> 20)) << 20)
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("PERF_WORKBENCH_DATA_DIR", folder)  # nothing the CLI does lands in the user's folders
        start = time.perf_counter()
        try:
            tried = run(surface, examples)
        except BaseException as exc:  # the end of stderr is what a failing test shows: say it briefly there
            import traceback

            traceback.print_exc(limit=-6)
            print(f"\nFAILED {surface}: {type(exc).__name__}: {str(exc)[:2000]}", file=sys.stderr)
            return 1
        elapsed = time.perf_counter() - start
    print(json.dumps({"surface": surface, "inputs": tried, "failures": 0, "seconds": round(elapsed, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
