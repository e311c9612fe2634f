"""PyTorch profiler traces (workbench/profilers/torch_trace.py), their matching to a step by ATen op
(workbench/steps/trace_match.py: match_torch_trace) and the where-the-time-goes table (workbench/documents/breakdown.py).

The real traces are read in place from ../shared/real-profiles (see its SOURCES.md) and the tests skip
where it is absent; a CPU-only trace is recorded here when PyTorch is installed.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from workbench.documents.breakdown import KIND, MODULE, operation_module, where_time_goes
from workbench.cli import main
from workbench.model.devices.catalogue import find_device
from workbench.profilers import torch_trace
from workbench.profilers.trace import TraceError
from workbench.profilers.trace_reader import read_trace
from workbench.profilers.torch_trace import TorchTrace, read_torch_trace, read_torch_trace_bytes
from workbench.steps import StepError, parse_step, step_timeline

from test_real_profiles import real  # the real files read in place; skips where ../shared is absent

DATA = Path(__file__).resolve().parent / "data"
MLP = "torch-trace-train-mlp-gp100.json.gz"


# ---------------------------------------------------------------- the real traces


def test_the_mlp_training_trace_every_gpu_activity_launched_by_an_op() -> None:
    trace = read_trace(real(MLP))  # the dispatch tells the JSON from an nsys export
    assert isinstance(trace, TorchTrace) and trace.format == "torch"
    summary = trace.summary()
    # SOURCES.md: 130 kernel, 10 gpu_memcpy, 643 cpu_op; no ProfilerStep annotation
    assert (summary["kernels"], summary["copies"], summary["cpu_ops"]) == (130, 10, 643)
    assert summary["launched_by_an_op"] == 140 and summary["profiler_steps"] == []
    assert [gpu.name for gpu in trace.gpus][:1] == ["Quadro GP100"] and trace.gpus[0].compute_capability == "6.0"
    launched_by = {trace.ops.op_name(trace.row_op[row]) for row in range(len(trace)) if "gemv2T" in trace.names[trace.name[row]]}
    assert launched_by == {"aten::mm"}  # the launch sits inside aten::mm, itself inside aten::matmul and aten::linear


def test_the_mlp_training_trace_matched_to_its_step_by_aten_op_and_order(capsys: pytest.CaptureFixture[str]) -> None:
    trace = read_trace(real(MLP))
    plan = parse_step((DATA / "torch-mlp-gp100.step").read_text())
    timeline = step_timeline(plan, find_device("v100-pcie"), trace=trace)
    measured = timeline.measured
    assert measured is not None and measured.unmatched_operations == ()
    assert set(measured.matches) == set(plan.names())
    # five SGD steps: each operation one occurrence per step
    assert {match.iterations for match in measured.matches.values()} == {5}
    kernel = {name: trace.names[trace.name[int(match.intervals[0])]] for name, match in measured.matches.items()}
    assert "gemv2T" in kernel["fc1.mm"] and "gemv2N" in kernel["fc2.mm"]  # forward: x·W1ᵀ then h·W2ᵀ
    assert all("gemmk1" in kernel[name] for name in ("fc2.mm_grad_input", "fc2.mm_grad_weight", "fc1.mm_grad_weight"))
    assert "sigmoid_kernel" in kernel["act.sigmoid"] and "sigmoid_backward" in kernel["act.sigmoid_backward"]
    mse = measured.matches["loss.mse_loss"]
    assert {part.kernel.split("<")[0] for part in mse.parts} == {"void at::native::vectorized_elementwise_kernel",
                                                                "void at::native::reduce_kernel"}
    # what no operation took: zero_grad's four fills and the mse backward's zeros_like per step, and the copies
    left = {item.name.split("(")[0]: item.count for item in measured.unmatched}
    assert sorted(left.values()) == [10, 20]
    for name in plan.names():
        time = timeline.times[name]
        assert time.source == "trace" and time.bound_s and time.seconds > time.bound_s

    assert main(["step", str(DATA / "torch-mlp-gp100.step"), "--device", "v100-pcie", "--trace", str(real(MLP)), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["trace"]["format"] == "torch" and data["trace"]["cpu_ops"] == 643
    assert {op["source"] for op in data["operations"]} == {"trace"}
    kinds = {group["name"]: group for group in data["where_time_goes"]["by_kind"]}
    assert set(kinds) == {"GEMM", "pointwise"} and kinds["GEMM"]["count"] == 5 and kinds["pointwise"]["count"] == 15
    assert sum(group["share"] for group in data["where_time_goes"]["by_module"]) == pytest.approx(1.0)


@pytest.mark.parametrize("name, kernels, cpu_ops, steps", [
    ("torch-trace-infer-alexnet-a100.json.gz", 79, 359, 0),
    ("torch-trace-dist128-rank0-sm80.json.gz", 1154, 2329, 2),
    ("torch-trace-dist128-rank1-sm80.json.gz", 1104, 2302, 2),
])
def test_the_other_real_traces_read_with_the_counts_sources_md_gives(name: str, kernels: int, cpu_ops: int, steps: int) -> None:
    trace = read_torch_trace(real(name))
    summary = trace.summary()
    assert (summary["kernels"], summary["cpu_ops"], len(summary["profiler_steps"])) == (kernels, cpu_ops, steps)
    assert summary["launched_by_an_op"] > 0.9 * len(trace)
    if steps:  # the NCCL job: its SendRecv kernels are communication
        nccl = [row for row in range(len(trace)) if trace.names[trace.name[row]].startswith("ncclKernel_SendRecv")]
        assert len(nccl) == 10 and all(trace.interval(row).communication for row in nccl)


# ---------------------------------------------------------------- matching rules, on small traces written here


def _event(cat: str, name: str, ts: float, dur: float, tid: int = 1, **args: object) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": 10, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _kernel(name: str, ts: float, dur: float, correlation: int) -> dict:
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": correlation}}


def _two_step_trace() -> bytes:
    """Two ProfilerSteps of linear → relu, an addmm launching two kernels in the first, one in the second; a
    stray launch on another thread inside the op's time does not belong to it."""
    events = [
        _event("user_annotation", "ProfilerStep#1", 0, 100),
        _event("cpu_op", "aten::linear", 1, 40),
        _event("cpu_op", "aten::addmm", 2, 30),
        _event("cuda_runtime", "cudaLaunchKernel", 3, 2, correlation=1),
        _event("cuda_runtime", "cudaLaunchKernel", 6, 2, correlation=2),
        _event("cpu_op", "aten::copy_", 5, 4, tid=2),  # another thread, in the addmm's time
        _event("cuda_runtime", "cudaLaunchKernel", 7, 1, tid=2, correlation=3),  # inside the copy_, not the addmm
        _event("cpu_op", "aten::empty", 12, 1),  # a child of the addmm, started after the copy_
        _event("cpu_op", "aten::relu", 50, 10),
        _event("cuda_runtime", "cudaLaunchKernel", 52, 2, correlation=4),
        _kernel("gemm_a", 10, 5, 1), _kernel("gemm_b", 16, 3, 2), _kernel("other", 20, 1, 3),
        _kernel("relu_kernel", 60, 2, 4),
        _event("user_annotation", "ProfilerStep#2", 200, 100),
        _event("cpu_op", "aten::linear", 201, 40),
        _event("cpu_op", "aten::addmm", 202, 30),
        _event("cuda_runtime", "cudaLaunchKernel", 203, 2, correlation=5),
        _event("cpu_op", "aten::relu", 250, 10),
        _event("cuda_runtime", "cudaLaunchKernel", 252, 2, correlation=6),
        _kernel("gemm_a", 210, 7, 5), _kernel("relu_kernel", 260, 4, 6),
    ]
    return json.dumps({"traceEvents": events}).encode()


STEP = "fc.addmm = gemm(M=8, N=32, K=16, dtype=fp32)  # aten::addmm\nact.relu = elementwise(n=256, inputs=1, outputs=1, flop_per_element=1, dtype=fp32)\n"


def test_kernels_are_those_launched_inside_the_op_on_its_thread_and_each_profiler_step_an_iteration() -> None:
    trace = read_torch_trace_bytes(_two_step_trace())
    assert [step.label for step in trace.steps] == ["ProfilerStep#1", "ProfilerStep#2"]
    timeline = step_timeline(STEP, find_device("h100-sxm"), trace=trace)
    fc = timeline.measured.matches["fc.addmm"]
    assert fc.iterations == 2
    # step 1: gemm_a 10–15 and gemm_b 16–19: span 9 µs; step 2: one kernel of 7 µs; median 8 µs
    assert fc.median_s == pytest.approx(8e-6) and fc.median_busy_s == pytest.approx(7.5e-6)
    assert sorted(trace.names[trace.name[int(row)]] for row in fc.intervals) == ["gemm_a", "gemm_a", "gemm_b"]
    relu = timeline.measured.matches["act.relu"]  # no comment: 'aten::' and the name's last part
    assert relu.median_s == pytest.approx(3e-6)
    assert [item.name for item in timeline.measured.unmatched] == ["other"]


def test_the_ith_op_of_a_name_goes_to_the_ith_operation_naming_it_then_round_again() -> None:
    events = []
    for i in range(6):  # six addmm, kernels of 1..6 µs, no ProfilerStep: three per iteration of a step of three
        events += [_event("cpu_op", "aten::addmm", 100 * i, 50), _event("cuda_runtime", "cudaLaunchKernel", 100 * i + 1, 1, correlation=i),
                   _kernel(f"k{i}", 100 * i + 10, i + 1, i)]
    trace = read_torch_trace_bytes(json.dumps({"traceEvents": events}).encode())
    step = "".join(f"l{j}.addmm = gemm(M=8, N=8, K=8, dtype=fp32)  # aten::addmm.default\n" for j in range(3))
    matches = step_timeline(step, find_device("h100-sxm"), trace=trace).measured.matches
    assert {name: sorted(trace.names[trace.name[int(r)]] for r in m.intervals) for name, m in matches.items()} == {
        "l0.addmm": ["k0", "k3"], "l1.addmm": ["k1", "k4"], "l2.addmm": ["k2", "k5"]}
    assert matches["l1.addmm"].median_s == pytest.approx(3.5e-6) and matches["l1.addmm"].rule == "aten::addmm #2 of 3 per iteration"


def test_match_rules_are_refused_for_a_pytorch_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = read_torch_trace_bytes(_two_step_trace())
    with pytest.raises(StepError, match="matched by ATen op"):
        step_timeline(STEP, find_device("h100-sxm"), trace=trace, rules=[object()])  # type: ignore[list-item]


# ---------------------------------------------------------------- hostile files


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b"{\"traceEvents\": [", "not JSON"),
    (b"[1, 2]", "no 'traceEvents'"),
    (b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": NaN, \"dur\": 1}]}", "NaN"),
    (b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": -5, \"dur\": 1}]}", "negative"),
    (b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 5, \"dur\": \"long\"}]}", "not a number"),
    (b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 5, \"dur\": 1e300}]}", "past any clock"),
    (b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 5, \"dur\": 1e11}]}", "longer than a day"),
    (b"{\"traceEvents\": []}", "no CPU op and no GPU activity"),
    (b"{\"traceEvents\": " + b"[" * 100_000 + b"]" * 100_000 + b"}", "nests too deeply"),
    (b"{\"traceEvents\": [], \"x\": 1" + b"0" * 5000 + b"}", "not JSON the workbench reads"),
    (b"\xff\xfe{", "not"),
])
def test_a_hostile_trace_is_one_trace_error(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    with pytest.raises(TraceError, match=message):
        read_trace(path)


def test_a_gzip_bomb_stops_at_the_limit_and_a_truncated_gzip_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_trace, "MAX_TORCH_TRACE_BYTES", 2**20)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"{\"traceEvents\": [" + b" " * (64 * 2**20) + b"]}"))
    assert bomb.stat().st_size < 2**20 // 4
    with pytest.raises(TraceError, match="larger than 1 MiB of JSON once decompressed"):
        read_trace(bomb)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(_two_step_trace())[:-20])
    with pytest.raises(TraceError, match="gzip"):
        read_trace(cut)


def test_the_cli_says_one_line_and_exits_2_on_a_bad_pytorch_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    step = tmp_path / "s.step"
    step.write_text(STEP)
    bad = tmp_path / "t.json"
    bad.write_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"<b>x</b>\", \"ts\": -1, \"dur\": 1}]}")
    assert main(["step", str(step), "--device", "h100-sxm", "--trace", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "t.json" in err[0] and "negative" in err[0]


# ---------------------------------------------------------------- where the time goes


def test_where_the_time_goes_groups_by_module_and_kind_with_shares_that_add_up() -> None:
    text = ("layers.0.attn.q.mm = gemm(M=1024, N=1024, K=1024, dtype=bf16)\n"
            "layers.0.attn.sdpa = attention(B=1, H=8, Sq=1024, Skv=1024, D=128, dtype=bf16)\n"
            "layers.0.norm.rms = rmsnorm(rows=1024, cols=1024, dtype=bf16)\n"
            "layers.0.mlp.up.mm = gemm(M=1024, N=4096, K=1024, dtype=bf16)\n"
            "grads.allreduce = allreduce(n=2**24, dtype=bf16, ranks=8) on comm\n"
            "loss = elementwise(n=1024, inputs=2, outputs=1, flop_per_element=3, dtype=fp32)\n")
    device = find_device("h100-sxm")
    timeline = step_timeline(text, device)
    breakdown = where_time_goes(timeline, device)
    kinds = {group.name: group for group in breakdown.by_kind}
    assert set(kinds) == {"GEMM", "attention", "norm", "communication", "pointwise"}
    assert kinds["GEMM"].count == 2 and kinds["GEMM"].flop == 2 * 1024 * 1024 * (1024 + 4096) * 1
    assert kinds["GEMM"].bound_s == pytest.approx(timeline.times["layers.0.attn.q.mm"].bound_s + timeline.times["layers.0.mlp.up.mm"].bound_s)
    modules = [group.name for group in breakdown.by_module]
    assert set(modules) == {"layers.0.attn.q", "layers.0.attn", "layers.0.norm", "layers.0.mlp.up", "grads", "(step)"}
    assert sum(group.share for group in breakdown.by_module) == pytest.approx(1.0)
    assert [group.time_s for group in breakdown.by_kind] == sorted((group.time_s for group in breakdown.by_kind), reverse=True)
    assert kinds["communication"].measured == 0 and "link" in kinds["communication"].limiter
    assert operation_module("fwd") == "(step)" and operation_module("a.b.c") == "a.b"
    assert breakdown.text_lines(KIND)[0].startswith("where the time goes, by kind")
    assert len(breakdown.text_lines(MODULE)) == 1 + len(modules)


# ---------------------------------------------------------------- a trace recorded here, on the CPU


def test_a_cpu_trace_recorded_here_matches_the_same_models_step(tmp_path: Path) -> None:
    from needs_torch import TORCH_MISSING

    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    from torch.profiler import ProfilerActivity, profile

    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(4):
            model(x)
    path = tmp_path / "cpu.pt.trace.json"
    prof.export_chrome_trace(str(path))

    trace = read_trace(path)
    assert isinstance(trace, TorchTrace) and trace.cpu_only and len(trace) == len(trace.ops) > 0
    assert trace.summary()["kernels"] == 0 and any("no GPU activity" in note for note in trace.notes)
    step = ("0.addmm = gemm(M=8, N=32, K=16, dtype=fp32, beta=1)  # aten::addmm\n"
            "1.relu = elementwise(n=256, inputs=1, outputs=1, flop_per_element=1, dtype=fp32)  # aten::relu\n"
            "2.addmm = gemm(M=8, N=4, K=32, dtype=fp32, beta=1)  # aten::addmm\n").replace("0.", "m0.").replace("1.r", "m1.r").replace("2.", "m2.")
    timeline = step_timeline(step, find_device("cpu-generic"), trace=trace)
    measured = timeline.measured
    assert measured.unmatched_operations == ()
    assert {match.iterations for match in measured.matches.values()} == {4}
    for name, match in measured.matches.items():
        rows = [int(row) for row in match.intervals]
        assert {trace.names[trace.name[row]] for row in rows} == {"aten::relu" if "relu" in name else "aten::addmm"}
        assert timeline.times[name].source == "trace" and timeline.times[name].seconds > 0
    # the first addmm of each forward pass is the first layer's: it is the one launched inside the first linear
    first = [trace.start[int(row)] for row in measured.matches["m0.addmm"].intervals]
    second = [trace.start[int(row)] for row in measured.matches["m2.addmm"].intervals]
    assert all(a < b for a, b in zip(first, second))


def test_the_reports_carry_each_steps_table_as_the_cli_computes_it() -> None:
    from workbench.documents.examples import load_example
    from workbench.documents.report import render_html, render_markdown

    session = load_example("data-parallel-step")
    markdown = render_markdown(session)
    assert "where the time goes" in markdown and "**By kind**" in markdown and "**By module**" in markdown
    device = session.device.resolve()
    breakdown = where_time_goes(step_timeline(session.steps[0].text, device), device)
    gemm = next(group for group in breakdown.by_kind if group.name == "GEMM")
    assert f"| GEMM | {gemm.count} |" in markdown and f"{gemm.share * 100:.1f} %" in markdown
    assert "<h3>By module</h3>" in render_html(session)
