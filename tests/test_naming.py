"""Automatic operation names: made from the operation family and the shape, read back from older files."""

from __future__ import annotations

import dataclasses
import json

import pytest

from workbench.model.declare import parse
from workbench.model.naming import automatic_name, is_legacy_default
from workbench.model.ops import REGISTRY
from workbench.model.ops.names import count_text
from workbench.documents.session import OperationEntry, Session, dumps, loads


@pytest.mark.parametrize(
    ("declaration", "name"),
    [
        ("add(n=2**24, dtype=fp32)", "Vector add, 2^24 fp32"),
        ("gemm(M=4096, N=4096, K=4096, dtype=fp16)", "GEMM 4096³ fp16"),
        ("gemm(M=8192, N=4096, K=1024)", "GEMM 8192×4096×1024 fp16"),
        ("gemm(M=2048, N=2048, K=2048, batch=16, dtype=bf16)", "GEMM 16 × 2048³ bf16"),
        ("triad(n=10**8)", "Triad, 10^8 fp32"),
        ("copy(n=1000)", "Copy, 1000 fp32"),
        ("reduce(n=2**20, rows=8)", "Sum reduction, 8 × 2^20 fp32"),
        ("softmax(rows=4096, cols=1024)", "Softmax 4096×1024 fp32"),
        ("conv2d(N=32, C=64, H=56, W=56, K=128, R=3, S=3, pad=1)", "Conv2d 3², 64→128 ch, 56², N=32 fp16"),
        ("attention(B=8, H=16, Sq=2048, Skv=2048, D=128, fused=false)", "Unfused attention 8×16 heads, S=2048 D=128 bf16"),
        ('einsum("bmk,bkn->bmn", b=8, m=1024, k=4096, n=1024)', "Einsum bmk,bkn->bmn fp16"),
    ],
)
def test_names_say_the_family_and_the_shape(declaration: str, name: str) -> None:
    assert automatic_name(declaration) == name


def test_every_registered_operation_names_itself() -> None:
    """A family registered without a namer would be named by its raw declaration: catch it here."""
    for spec in REGISTRY.values():
        assert spec.namer is not None, f"{spec.name} has no namer on its OpSpec"
        for example in spec.examples:
            name = automatic_name(example)
            assert name and name != str(parse(example)), example


def test_an_operation_without_a_namer_is_named_by_its_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTRY, "add", dataclasses.replace(REGISTRY["add"], namer=None))
    assert automatic_name("add(n=2**24, dtype=fp32)") == "add(n=2**24, dtype=fp32)"


def test_a_declaration_that_does_not_parse_has_no_name() -> None:
    assert automatic_name("gemm(M=") is None
    assert automatic_name("") is None


def test_counts_read_as_a_person_says_them() -> None:
    assert count_text(2**24) == "2^24"
    assert count_text(1024) == "2^10"
    assert count_text(512) == "512"
    assert count_text(10**9) == "10^9"
    assert count_text(123456) == "123 456"


def test_the_automatic_name_follows_the_declaration_until_renamed() -> None:
    entry = OperationEntry.automatic("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
    assert entry.name == "GEMM 4096³ fp16"
    entry.declaration = "add(n=2**24, dtype=fp32)"
    assert entry.follow_declaration() and entry.name == "Vector add, 2^24 fp32"
    entry.declaration = "add(n=2**"  # mid-typing: the last good name stays
    assert not entry.follow_declaration() and entry.name == "Vector add, 2^24 fp32"
    entry.name, entry.name_automatic = "my add", False
    entry.declaration = "add(n=2**20, dtype=fp32)"
    assert not entry.follow_declaration() and entry.name == "my add"


def test_the_flag_round_trips_and_the_name_is_made_again_on_load() -> None:
    session = Session(
        operations=[
            OperationEntry.automatic("add(n=2**24, dtype=fp32)"),
            OperationEntry("mine", "add(n=2**20, dtype=fp32)"),
        ]
    )
    data = json.loads(dumps(session))
    assert [op["name_automatic"] for op in data["operations"]] == [True, False]
    data["operations"][0]["declaration"] = "add(n=2**26, dtype=fp32)"  # edited by hand: the name follows
    back = loads(json.dumps(data))
    assert [(e.name, e.name_automatic) for e in back.operations] == [("Vector add, 2^26 fp32", True), ("mine", False)]


@pytest.mark.parametrize(
    ("name", "automatic"),
    [
        ("new operation", True),
        ("new operation 3", True),
        ("gemm 4096³ fp16", True),
        ("new operation (copy)", True),
        ("", True),
        ("Vector add, 2^24 FP32", True),  # the automatic name up to letter case
        ("Vector add", False),
        ("new operation for the lab", False),
    ],
)
def test_older_files_migrate_names_the_app_gave(name: str, automatic: bool) -> None:
    assert is_legacy_default(name) == (name in ("new operation", "new operation 3", "gemm 4096³ fp16", "new operation (copy)"))
    data = {"format": "perf-workbench-session", "version": 1, "operations": [{"name": name, "declaration": "add(n=2**24, dtype=fp32)"}]}
    entry = loads(json.dumps(data)).operations[0]
    assert entry.name_automatic is automatic
    assert entry.name == ("Vector add, 2^24 fp32" if automatic else name)


def test_a_flag_that_is_not_a_boolean_is_refused() -> None:
    from workbench.documents.session import SessionError

    data = {"format": "perf-workbench-session", "version": 1, "operations": [{"declaration": "add(n=4096)", "name_automatic": "yes"}]}
    with pytest.raises(SessionError, match=r"operations\[0\]\.name_automatic"):
        loads(json.dumps(data))


def test_a_long_path_is_named_by_its_ends_and_how_many_between() -> None:
    from workbench.model.naming import abbreviated_path

    names = [f"op{i}" for i in range(500)]
    assert abbreviated_path(names) == "op0 → op1 → op2 → … 494 more … → op497 → op498 → op499"
    assert abbreviated_path(names[:7]) == " → ".join(names[:7])  # one name fewer than the shortening saves
    assert abbreviated_path(names[:8]) == "op0 → op1 → op2 → … 2 more … → op5 → op6 → op7"
    assert abbreviated_path([]) == ""
