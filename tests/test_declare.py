"""The declaration language: parse, canonical format, round trip, and clear errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.declare import build_declaration, format_declaration, parse
from workbench.errors import DeclarationError, WorkbenchError
from workbench.model.ops import REGISTRY

DESIGN_EXAMPLES = [
    "gemm(M=4096, N=4096, K=4096, dtype=fp16)",
    "gemm(M=4096, N=4096, K=4096, batch=8, a=bf16, b=bf16, c=bf16, acc=fp32, beta=1)",
    "add(n=2**24, dtype=fp32)",
    "copy(n=2**28, dtype=fp32)",
    "scale(n=2**20, dtype=fp64)",
    "triad(n=2**26, dtype=fp32)",
    "axpy(n=2**26, dtype=fp32)",
    "elementwise(n=2**20, inputs=3, outputs=1, flop_per_element=4, dtype=fp16)",
    "reduce(n=2**26, dtype=fp32)",
    "softmax(rows=8192, cols=8192, dtype=bf16)",
    "conv2d(N=32, C=64, H=56, W=56, K=128, R=3, S=3, stride=1, pad=1, groups=1, dtype=fp16)",
    "attention(B=8, H=16, Sq=2048, Skv=2048, D=128, causal=false, fused=true, dtype=bf16)",
    'einsum("bmk,bkn->bmn", b=8, m=1024, k=4096, n=1024, dtype=fp16)',
]


@pytest.mark.parametrize("text", DESIGN_EXAMPLES)
def test_design_examples_round_trip(text: str) -> None:
    decl = parse(text)
    canonical = format_declaration(decl)
    assert parse(canonical) == decl
    assert format_declaration(parse(canonical)) == canonical


def test_canonical_form_keeps_dtype_and_drops_other_defaults() -> None:
    assert str(parse("add(n=16777216)")) == "add(n=2**24, dtype=fp32)"
    assert str(parse("gemm(K=4096, N=4096, M=4096)")) == "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
    # all three operands agree, so `dtype` names them; acc=fp32 is the default for bf16
    assert (
        str(parse("gemm(M=4096, N=4096, K=4096, batch=8, a=bf16, b=bf16, c=bf16, acc=fp32, beta=1)"))
        == "gemm(M=4096, N=4096, K=4096, batch=8, dtype=bf16, beta=1)"
    )
    assert str(parse("gemm(M=8, N=8, K=8, a=fp8_e4m3, b=fp8_e5m2, c=bf16)")) == (
        "gemm(M=8, N=8, K=8, a=fp8_e4m3, b=fp8_e5m2, c=bf16)"
    )
    assert str(parse('einsum("ij,jk", k=2, j=3, i=4)')) == 'einsum("ij,jk->ik", i=4, j=3, k=2, dtype=fp16)'


def test_expressions_are_integer_arithmetic() -> None:
    assert parse("add(n=4096*2)")["n"] == 8192
    assert parse("add(n=(2**10 + 2**10) // 2)")["n"] == 1024
    assert parse("add(n=2**24, dtype=float32)")["dtype"] == "fp32"  # alias


@pytest.mark.parametrize(
    ("text", "field", "fragment"),
    [
        ("gemm(M=0, N=1, K=1)", "M", "positive integer"),
        ("gemm(M=-4, N=1, K=1)", "M", "positive integer"),
        ("gemm(M=1.5, N=1, K=1)", "M", "whole number"),
        ("gemm(M=1, N=1, K=1, dtype=fp17)", "dtype", "unknown dtype 'fp17'"),
        ("gemm(M=1, N=1)", "K", "needs K"),
        ("gemm(M=1, N=1, K=1, Z=3)", "Z", "no field 'Z'"),
        ("add(n=2**24, n=3)", "n", "given twice"),
        ("add(n=10/2)", "n", "//"),
        ("add(n=2**2**2**20)", "n", "exponent"),
        ("add(n=x)", "n", "is a name"),
        ("conv2d(N=1, C=6, H=8, W=8, K=4, R=3, S=3, groups=4)", "groups", "divisible"),
        ("conv2d(N=1, C=3, H=2, W=2, K=1, R=5, S=5)", "R", "no output positions"),
        ('einsum("ij,jk->ik", i=2, j=3)', "k", "index 'k' has no extent"),
        ('einsum("ij,jk->iz", i=2, j=3, k=4)', "spec", "appears in no input"),
        ('einsum("i1,jk->ik", i=2, j=3, k=4)', "spec", "not an index"),
        ("attention(B=1, H=1, Sq=4, Skv=4, D=8, causal=1)", "causal", "true or false"),
        ("add(n=2**62 + 1)", "n", "larger than any device"),
        ("add(n=2**61, dtype=fp64)", None, "over 1 EiB"),
    ],
)
def test_bad_input_names_the_field(text: str, field: str | None, fragment: str) -> None:
    with pytest.raises(DeclarationError) as caught:
        parse(text)
    assert fragment in str(caught.value)
    if field is not None:
        assert caught.value.field == field
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "gemm", "gemm(", "1+1", "__import__('os').system('true')", "gemm(**{'M': 1})", "foo(n=1)", "add(2)"],
)
def test_not_a_declaration(text: str) -> None:
    with pytest.raises(DeclarationError):
        parse(text)


# --- property tests --------------------------------------------------------

dims = st.integers(min_value=1, max_value=2**20)
dtypes = st.sampled_from(["fp64", "fp32", "bf16", "fp16", "fp8_e4m3", "int8", "int4"])


@st.composite
def declarations(draw: st.DrawFn) -> str:
    op = draw(st.sampled_from(sorted(REGISTRY)))
    spec = REGISTRY[op]
    if op == "einsum":
        spec_text = draw(st.sampled_from(["mk,kn->mn", "bmk,bkn->bmn", "ij->i", "i,i->", "ij,jk,kl->il"]))
        letters = sorted(set(spec_text) - set(",->"))
        extents = ", ".join(f"{x}={draw(st.integers(1, 512))}" for x in letters)
        return f'einsum("{spec_text}", {extents}, dtype={draw(dtypes)})'
    values = {}
    for param in spec.params:
        if param.kind == "dim" and (param.required or draw(st.booleans())):
            values[param.name] = draw(st.integers(min_value=max(param.minimum, 1), max_value=64))
        elif param.kind == "dtype" and draw(st.booleans()):
            values[param.name] = draw(dtypes)
        elif param.kind == "bool" and draw(st.booleans()):
            values[param.name] = draw(st.booleans())
    if op == "attention" and values.get("backward"):
        values.pop("fused", None)  # the backward is the fused one: fused=false with it is refused
    if op == "conv2d":
        values["groups"] = 1
        values["dilation"] = 1
        values["H"] = values["H"] + values["R"]
        values["W"] = values["W"] + values["S"]
    fields = ", ".join(
        f"{k}={'true' if v is True else 'false' if v is False else v}" for k, v in values.items()
    )
    return f"{op}({fields})"


@settings(max_examples=300, deadline=None)
@given(declarations())
def test_random_declarations_round_trip(text: str) -> None:
    decl = parse(text)
    again = parse(str(decl))
    assert again == decl
    assert str(again) == str(decl)


@settings(max_examples=200, deadline=None)
@given(n=dims, dt=st.sampled_from(["fp32", "fp16", "fp64"]), op=st.sampled_from(["copy", "scale", "add", "triad", "axpy"]))
def test_stream_work_and_bytes_scale_linearly_with_n(n: int, dt: str, op: str) -> None:
    one = parse(f"{op}(n={n}, dtype={dt})").workload()
    two = parse(f"{op}(n={2 * n}, dtype={dt})").workload()
    assert two.flop() == 2 * one.flop()
    assert two.bytes == 2 * one.bytes


@settings(max_examples=200, deadline=None)
@given(m=dims, n=dims, k=dims, batch=st.integers(1, 64))
def test_gemm_scales_as_its_formula(m: int, n: int, k: int, batch: int) -> None:
    w = parse(f"gemm(M={m}, N={n}, K={k}, batch={batch}, dtype=bf16)").workload()
    assert w.flop("fma2") == 2 * batch * m * n * k
    assert w.flop("mac") == batch * m * n * k
    assert w.bytes == 2 * batch * (m * k + k * n + m * n)
    doubled = parse(f"gemm(M={2 * m}, N={n}, K={k}, batch={batch}, dtype=bf16)").workload()
    assert doubled.flop() == 2 * w.flop()


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
def test_random_text_raises_only_the_projects_error(text: str) -> None:
    try:
        parse(text)
    except WorkbenchError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"(gemm|add|conv2d|einsum|attention)\([A-Za-z=0-9*+\-/(), \"'.]{0,60}\)", fullmatch=True))
def test_declaration_shaped_noise_raises_only_the_projects_error(text: str) -> None:
    try:
        parse(text)
    except WorkbenchError:
        pass


def test_build_declaration_validates_like_parse() -> None:
    assert build_declaration("add", {"n": 1024}) == parse("add(n=1024)")
    with pytest.raises(DeclarationError, match="positive"):
        build_declaration("add", {"n": 0})
    assert parse("add(n=1024)").replace(n=2048) == parse("add(n=2048)")


def test_a_line_parsed_again_is_remembered_and_a_fault_raises_each_time() -> None:
    """A keystroke's line is parsed for its name and for its analysis: the second parse is the first's result
    (Declaration is frozen, so sharing it is safe); a faulty line raises every time it is parsed."""
    from workbench.model.declare import parse
    from workbench.errors import DeclarationError

    first = parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    assert parse("  gemm(M=4096, N=4096, K=4096, dtype=fp16)  ") is first
    for _ in range(2):
        with pytest.raises(DeclarationError, match="positive"):
            parse("gemm(M=0, N=8, K=8)")


@pytest.mark.parametrize(
    ("text", "exponent"),
    [("12", 12), ("2^12", 12), ("2**12", 12), ("4096", 12), ("2**(3*4)", 12), ("0", 0), ("2^0", 0), ("62", 62), ("2^62", 62)],
)
def test_a_sweep_size_field_reads_powers_as_the_declaration_language_does(text: str, exponent: int) -> None:
    from workbench.model.declare import power_of_two_exponent

    assert power_of_two_exponent(text, "from", 62) == exponent


@pytest.mark.parametrize("text", ["2^63", "4095", "-1", "3^2", "abc", "2^", "1.5"])
def test_a_sweep_size_field_refuses_what_is_not_a_power_in_range(text: str) -> None:
    from workbench.model.declare import power_of_two_exponent

    with pytest.raises(DeclarationError, match=r"is not 2\^0 … 2\^62"):
        power_of_two_exponent(text, "from", 62)
