"""Hostile-input fuzzing of the step, trace and match-rule surfaces (the third round, issue 29).

The same property as tests/hostile_fuzz.py, run the same way (one surface per
process, under its memory limit, a time budget per input): the project's own
error in one line, or a valid result, never another exception, never a hang.
A valid result here also means every figure is finite and the JSON the CLI
would print is strict JSON (no NaN, no Infinity).

- steps: step texts of up to a thousand lines with dependencies drawn at
  random (forward, self, cycles, long chains, duplicates), streams, hostile
  declarations and characters; laid out on a device.
- traces: cuda_gpu_trace CSV texts in ns, µs or ms with hostile cells (inf,
  1e400, '1_000', full-width digits, quotes left open, escape sequences in
  names, thousands of streams), read, matched to a step and laid out.
- match-rules: glob and regex patterns (catastrophic ones among them:
  '(a+)+b', '(a|a)*c', nested stars), against names up to thousands of
  characters long; a glob must select exactly what fnmatch selects.

    python tests/step_trace_fuzz.py traces 200

prints one JSON line: {"surface": ..., "inputs": N, "failures": 0}; tests/test_hostile_fuzz.py
runs each surface this way within `make test`.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

from hostile_fuzz import HOSTILE_TEXT, _one_line, _timed, main  # noqa: E402

from workbench.errors import WorkbenchError  # noqa: E402

# ---------------------------------------------------------------- steps

DECLARATIONS = st.sampled_from([
    "add(n=4, dtype=fp32)",
    "gemm(M=64, N=64, K=64, dtype=bf16)",
    "allreduce(n=2**20, dtype=fp32, ranks=8)",
    "allreduce(n=2, dtype=fp32, ranks=2**20)",
    "allreduce(n=2**20, dtype=fp32, ranks=2**40)",
    "sendrecv(n=16, dtype=fp32, ranks=8)",
    "sendrecv(n=16, dtype=fp32)",
    "add(n=2**62, dtype=fp32)",
    "add(n=0, dtype=fp32)",
    "add(n=4, dtype=fp33)",
    "add(n=4, dtype=fp32",
    'add(n=4, dtype="fp32)',
    "nonsense()",
])
NAMES = [f"op{i}" for i in range(12)]
STREAMS = st.sampled_from(["", " on comm", " on compute", " on s1", " on 1bad", " on"])


@st.composite
def step_text(draw: st.DrawFn) -> str:
    """A step of drawn lines (some hostile), or one long chain that depends forward or backward."""
    shape = draw(st.sampled_from(["lines", "lines", "chain", "garbage"]))
    if shape == "chain":
        count = draw(st.integers(min_value=2, max_value=1001))
        forward = draw(st.booleans())
        ring = draw(st.booleans())
        lines = []
        for i in range(count):
            target = (i + 1 if forward else i - 1)
            if ring and i == count - 1:
                target = 0
            after = f" after a{target}" if 0 <= target < count else ""
            lines.append(f"a{i} = add(n=4, dtype=fp32){after}")
        return "\n".join(lines)
    if shape == "garbage":
        return draw(st.one_of(HOSTILE_TEXT, st.text(max_size=200)))
    lines = []
    for index in range(draw(st.integers(min_value=1, max_value=12))):
        name = NAMES[index] if draw(st.integers(0, 9)) else draw(st.sampled_from(NAMES + ["9x", "a b", "é"]))
        deps = draw(st.lists(st.sampled_from(NAMES + ["nope"]), max_size=4))
        after = f" after {', '.join(deps)}" if deps else ""
        comment = draw(st.sampled_from(["", "  # note", ' # "quoted #', "\x1b]0;title\x07"]))
        lines.append(f"{name} = {draw(DECLARATIONS)}{draw(STREAMS)}{after}{comment}")
        if draw(st.integers(0, 7)) == 0:
            lines.append(draw(st.sampled_from(["", "# c", "   ", "\t"])))
    return "\n".join(lines)


def _check_timeline(timeline: Any) -> None:
    """Every figure finite and non-negative, the JSON strict, the text one string."""
    data = timeline.to_dict()
    json.dumps(data, allow_nan=False)  # ValueError (a failure) for NaN or Infinity
    for value in (timeline.step_time, timeline.exposed_communication, timeline.hidden_communication):
        assert math.isfinite(value) and value >= 0, value
    for what in timeline.what_if.values():
        assert math.isfinite(what.if_2x_faster) and math.isfinite(what.if_free)
        assert what.if_free <= what.if_2x_faster + 1e-12 <= timeline.step_time + 2e-12
    assert isinstance(timeline.summary_text(), str)


def check_step(text: str) -> None:
    from workbench.model.devices.catalogue import find_device
    from workbench.steps import StepError, format_step, parse_step, step_timeline

    try:
        plan = parse_step(text)
    except StepError as exc:
        _one_line(exc)
        return
    assert parse_step(format_step(plan)).names() == plan.names()  # the canonical text reads back
    try:
        timeline = step_timeline(plan, find_device("h100-sxm"))
    except WorkbenchError as exc:
        _one_line(exc)
        return
    _check_timeline(timeline)


# ---------------------------------------------------------------- traces

HEADERS = [
    "Start (ns),Duration (ns),CorrId,Device,Strm,Name",
    "Start (us),Duration (us),CorrId,Device,Strm,Name",
    "Start (ms),Duration (ms),Bytes (MB),Device,Strm,Name",
    "Name,Strm,Start (ns),Duration (ns)",
]
TIMES = st.one_of(
    st.integers(min_value=0, max_value=10**7).map(str),
    st.sampled_from(["inf", "-inf", "nan", "1e400", "1e308", "5e-324", "1_000", "１０００", "٣", "+5", " 7", "-3",
                     "0x10", "1.5", "1e3", "", "9" * 30, "4611686018427387904"]),
)
KERNEL_NAMES = st.one_of(
    st.sampled_from([
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_kernel__5x_cublas",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, T2, T3)",
        "[CUDA memcpy Host-to-Device]",
        "[CUDA memset]",
        "evil\x1b[2J\x1b]0;pwned\x07",
        "a" * 40,
        "k<<<((((",
    ]),
    st.text(max_size=30),
)


def _cell(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


@st.composite
def trace_csv(draw: st.DrawFn) -> str:
    """A cuda_gpu_trace CSV with hostile cells, stray quotes, or thousands of streams."""
    header = draw(st.sampled_from(HEADERS))
    titles = header.split(",")
    rows = []
    many_streams = draw(st.integers(0, 9)) == 0
    count = draw(st.integers(min_value=0, max_value=3000 if many_streams else 30))
    for index in range(count):
        cells = []
        for title in titles:
            if title.startswith("Start"):
                cells.append(str(1000 * index) if many_streams else draw(TIMES))
            elif title.startswith("Duration"):
                cells.append("500" if many_streams else draw(TIMES))
            elif title == "Strm":
                cells.append(str(index) if many_streams else draw(st.sampled_from(["7", "13", "", "x"])))
            elif title == "Name":
                name = "sm90_xmma_gemm_kernel" if many_streams else draw(KERNEL_NAMES)
                cells.append(_cell(name) if draw(st.integers(0, 15)) else '"' + name)  # now and then left open
            else:
                cells.append(draw(st.sampled_from(["1", "GPU 0", "", "1.5", '"q"'])))
        rows.append(",".join(cells))
    preamble = draw(st.sampled_from(["", "Generating SQLite file x.sqlite\n", "\ufeff"]))
    return preamble + header + "\n" + "\n".join(rows) + draw(st.sampled_from(["", "\n", "\r\n"]))


TRACE_STEP = "fwd = gemm(M=64, N=64, K=64, dtype=bf16)\nar = allreduce(n=2**20, dtype=fp32, ranks=8) on comm after fwd\n" \
             "upd = add(n=4, dtype=fp32) after ar\n"


def check_trace(text: str, rules: list[str]) -> None:
    from workbench.model.devices.catalogue import find_device
    from workbench.profilers.trace import TraceError, read_trace_text
    from workbench.steps import StepError, parse_step, parse_trace_match, step_timeline

    try:
        trace = read_trace_text(text, "t.csv")
    except TraceError as exc:
        _one_line(exc)
        return
    assert len(trace) and all(0 <= s <= e for s, e in zip(trace.start, trace.end))
    assert len(trace.stream_labels()) == len(trace.streams)
    plan = parse_step(TRACE_STEP)
    try:
        matched = [parse_trace_match(rule, plan) for rule in rules]
        timeline = step_timeline(plan, find_device("h100-sxm"), trace=trace, rules=matched)
    except StepError as exc:
        _one_line(exc)
        return
    _check_timeline(timeline)
    from workbench.errors import shown

    for line in timeline.summary_text().split("\n"):
        assert "\x1b" not in shown(line)  # the CLI's _echo writes each line through shown()


# ---------------------------------------------------------------- match rules

GLOB_ALPHABET = "ab*?[]!-^\\.( \n"
NAME_ALPHABET = "ab-]![\\^.( \n"
REGEX_PARTS = st.sampled_from([
    "a", "b", "(a+)+", "(a|a)*", "(a*)*", "(.*a){12}", "a{1000}{1000}", "(a)\\1", "(?=a)", "(?<=a)b", "[", "(",
    "\\", "x*", "^", "$", ".*", "(?i)", "\\d+", "[^a]", "a{2,}", "(?P<n>a)", "\\x{10FFFF}", "\udcff",
])


@st.composite
def match_case(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["glob", "glob", "regex", "text", "long"]))
    if kind == "glob":
        pattern = draw(st.text(alphabet=GLOB_ALPHABET, min_size=1, max_size=10))
        if not any(mark in pattern for mark in "*?["):
            pattern += "*"
        return pattern, draw(st.text(alphabet=NAME_ALPHABET, max_size=12))
    if kind == "regex":
        pattern = "regex:" + "".join(draw(st.lists(REGEX_PARTS, min_size=1, max_size=6)))
        return pattern, draw(st.sampled_from(["a" * 34, "a" * 5000 + "!", "ab", "", "\x00" * 100]))
    if kind == "long":
        return draw(st.sampled_from(["*a" * 600, "regex:" + "(a+)+" * 300, "*" * 2000])), "a" * 3000
    return draw(st.one_of(HOSTILE_TEXT, st.text(max_size=20))), draw(st.text(max_size=20))


def check_match(pattern: str, name: str) -> None:
    import fnmatch

    from workbench.profilers.matching import MatchError, MatchRule, kernel_base_name

    try:
        rule = MatchRule(pattern, "add(n=4, dtype=fp32)")
    except MatchError as exc:
        _one_line(exc)
        return
    selected = rule.matches(name)
    assert isinstance(selected, bool)
    if not pattern.startswith("regex:") and any(mark in pattern for mark in "*?[") and len(name) <= 20:
        base = kernel_base_name(name)
        expected = fnmatch.fnmatchcase(base, pattern) or fnmatch.fnmatchcase(name, pattern)
        assert selected == expected, f"glob {pattern!r} on {name!r}: {selected}, fnmatch says {expected}"


# ---------------------------------------------------------------- running

SURFACES = ("steps", "traces", "match-rules")


def _warm_up() -> None:
    """Import and compile what every input uses once, before inputs are timed (the first import of NumPy,
    pint or RE2 on a loaded machine can take seconds by itself)."""
    check_match("x*", "x")
    check_step("a = add(n=4, dtype=fp32)")
    check_trace(HEADERS[0] + "\n1,2,3,GPU,7,k\n", ["*=upd"])


def run_surface(surface: str, examples: int) -> int:
    _warm_up()
    tried = 0
    common = settings(max_examples=examples, deadline=None, database=None,
                      derandomize=os.environ.get("HOSTILE_FUZZ_RANDOM") != "1", suppress_health_check=list(HealthCheck))
    if surface == "steps":

        @common
        @given(step_text())
        def prop(text: str) -> None:
            nonlocal tried
            tried += 1
            _timed(check_step, text)

    elif surface == "traces":

        @common
        @given(trace_csv(), st.lists(st.sampled_from(["*gemm*=fwd", "regex:(a+)+b=upd", "nccl*=ar", "*=upd", "x=nope",
                                                      "[=fwd", "regex:(=fwd"]), max_size=2))
        def prop(text: str, rules: list[str]) -> None:
            nonlocal tried
            tried += 1
            _timed(check_trace, text, rules)

    elif surface == "match-rules":

        @common
        @given(match_case())
        def prop(case: tuple[str, str]) -> None:
            nonlocal tried
            tried += 1
            _timed(check_match, *case)

    else:
        raise SystemExit(f"unknown surface {surface!r}; one of {', '.join(SURFACES)}")
    prop()
    return tried


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], run_surface))
