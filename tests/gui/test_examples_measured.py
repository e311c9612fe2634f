"""Smoke: every built-in example opens in the window, analyses, and is measured on the CPU (NumPy backend)."""

from __future__ import annotations

import pytest

from workbench.model.declare import Declaration, iter_fields, parse
from workbench.documents.examples import list_examples
from workbench.measure import OK, measure
from workbench.model.ops.collectives import COLLECTIVES
from workbench.model.units import format_flop

# Per call, on two shared CPU cores. NumPy multiplies fp16 matrices without BLAS, at about
# 0.5 GFLOP/s here (a 256³ fp16 GEMM takes 66 ms), so the examples' full sizes (a 4096³ GEMM is
# 137 GFLOP; the knowledge check streams 80 GB) would take minutes to hours per call.
FLOP_BUDGET = 2**22  # about 10 ms per fp16 GEMM call, so the whole smoke test takes seconds
FOOTPRINT_BUDGET = 2**28  # 256 MiB of tensors per call
ITERATIONS = 30  # the protocol's minimum


def cpu_sized(declaration: Declaration) -> Declaration:
    """The declaration as NumPy can measure it here in well under a second.

    bf16 becomes fp16 (NumPy has no bfloat16 arrays). Then, while one call's work is over
    FLOP_BUDGET or its tensors over FOOTPRINT_BUDGET, the largest dimension is halved with
    `Declaration.replace`, which keeps the operation's kind and validates every step.
    """
    bf16 = {param.name: "fp16" for param, value in iter_fields(declaration) if param.kind == "dtype" and value == "bf16"}
    if bf16:
        declaration = declaration.replace(**bf16)
    while True:
        workload = declaration.workload()
        if workload.flop("fma2") <= FLOP_BUDGET and workload.footprint_bytes <= FOOTPRINT_BUDGET:
            return declaration
        value, name = max((value, param.name) for param, value in iter_fields(declaration) if param.kind == "dim")
        assert value > 1, f"{declaration} cannot be made smaller"
        declaration = declaration.replace(**{name: value // 2})


def test_cpu_sizing_halves_the_largest_dimension_and_leaves_small_work_alone() -> None:
    # 2 × 4096³ = 137 GFLOP: M, N, K are halved in turn until 2·M·N·K ≤ 2²²: 2 × 128 × 128 × 128 = 4,194,304
    assert str(cpu_sized(parse("gemm(M=4096, N=4096, K=4096, dtype=fp16)"))) == "gemm(M=128, N=128, K=128, dtype=fp16)"
    # one FLOP per element: 2²⁴ = 16,777,216 FLOP is over 2²², so n is halved twice
    assert str(cpu_sized(parse("add(n=2**24, dtype=fp32)"))) == str(parse("add(n=2**22, dtype=fp32)"))
    tiny = parse("copy(n=2**20, dtype=fp32)")  # no FLOP, 8 MiB: measured as declared
    assert cpu_sized(tiny) == tiny
    assert "bf16" not in str(cpu_sized(parse("softmax(rows=64, cols=64, dtype=bf16)")))


@pytest.mark.slow
@pytest.mark.parametrize("key", [key for key, _ in list_examples()])
def test_every_example_opens_analyses_and_is_measured_on_the_cpu(window, key: str) -> None:
    """Each operation of the example is measured with NumPy at `cpu_sized` sizes.

    Every example is scaled down, since its full size is far too slow for NumPy on two cores:
    the worked example's 4096³ GEMM runs as 128³, the 2²⁴-element add as 2²², the knowledge
    check's 10¹⁰-element pass (80 GB) as 152,587 elements, attention at Sq = Skv = 16 and
    D = 32, the convolutions at N = 8–16 on 14–28 pixel images, and every batched GEMM of the
    sweep as 16 × 64×32×64; the bf16 examples run in fp16. This checks that each kind of
    operation in the examples has a working, checked kernel; the figures themselves are
    checked by the window's analysis, at the declared size.
    """
    window.open_example(key)
    doc = window.document
    assert doc.operations and doc.path is None and not window.isWindowModified()
    for index, entry in enumerate(doc.operations):
        state = doc.state(entry)
        assert state.error is None, f"{entry.declaration}: {state.error}"
        assert state.analysis is not None
        doc.select(index)
        assert window.panel.values["work"].text() == format_flop(state.analysis.flop)

        if parse(entry.declaration).op in COLLECTIVES:
            continue  # several GPUs and NCCL: not measurable here (tests/test_collectives.py: refused in one line)
        if parse(entry.declaration).implementation != "compulsory":
            continue  # a CUDA RawKernel (impl=naive/tiled): refused on NumPy (tests/gui/test_impl_in_window.py)
        sized = cpu_sized(parse(entry.declaration))
        record = measure(sized, backend="numpy", iterations=ITERATIONS)
        assert record.status == OK, f"{sized}: {record.message}"
        assert record.check is not None and record.check.passed, f"{sized}: {record.check}"
        assert len(record.samples_s) == ITERATIONS
        assert record.median_s is not None and record.median_s > 0
        assert record.declaration == str(sized)
