"""Field edits rewrite one field of the user's line and keep the rest as typed (no Qt needed)."""

from __future__ import annotations

from workbench.model.declaration_text import split_call, with_field, with_positional, without_field

LINE = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"


def test_split_call_keeps_each_field_as_written() -> None:
    call = split_call('einsum("bmk,bkn->bmn", b=8, m=2**10, dtype=fp16)')
    assert call is not None
    assert call.op == "einsum"
    assert call.positional == ('"bmk,bkn->bmn"',)
    assert call.fields == {"b": "8", "m": "2**10", "dtype": "fp16"}
    assert split_call("gemm(M=4096, N=") is None


def test_with_field_replaces_or_appends() -> None:
    assert with_field(LINE, "M", "-5") == "gemm(M=-5, N=4096, K=4096, dtype=fp16)"
    assert with_field(LINE, "batch", "8") == "gemm(M=4096, N=4096, K=4096, dtype=fp16, batch=8)"
    assert with_field("gemm()", "M", "3") == "gemm(M=3)"
    assert with_field("gemm(M=", "M", "3") is None


def test_without_field_removes_first_middle_last_and_only() -> None:
    assert without_field(LINE, "M") == "gemm(N=4096, K=4096, dtype=fp16)"
    assert without_field(LINE, "K") == "gemm(M=4096, N=4096, dtype=fp16)"
    assert without_field(LINE, "dtype") == "gemm(M=4096, N=4096, K=4096)"
    assert without_field("gemm(M=1)", "M") == "gemm()"
    assert without_field(LINE, "batch") == LINE


def test_with_positional_replaces_or_inserts_the_spec() -> None:
    assert with_positional('einsum("ab,bc->ac", a=2)', 0, '"xy"') == 'einsum("xy", a=2)'
    assert with_positional("einsum(a=2)", 0, '"xy"') == 'einsum("xy", a=2)'


def test_non_ascii_text_keeps_its_place() -> None:
    line = 'einsum("αβ,βγ->αγ", dtype=fp16)'
    assert with_field(line, "dtype", "bf16") == 'einsum("αβ,βγ->αγ", dtype=bf16)'
