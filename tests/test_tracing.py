"""PyTorch models traced on the meta device into steps (workbench/tracing/): declarations, dependencies, data
parallelism, FLOP against PyTorch's FlopCounterMode, bytes by hand, and the CLI's `import-torch`."""

from __future__ import annotations

import json
import os
import sys
from fractions import Fraction

import pytest

from needs_torch import TORCH_MISSING, TRANSFORMERS_MISSING  # noqa: E402

torch = pytest.importorskip("torch", reason=TORCH_MISSING)
transformers = pytest.importorskip("transformers", reason=TRANSFORMERS_MISSING)

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from workbench.cli import main  # noqa: E402
from workbench.model.devices.catalogue import find_device  # noqa: E402
from workbench.steps import parse_step, step_timeline  # noqa: E402
from workbench.tracing import analyze, compare, step_from_torch  # noqa: E402
from workbench.tracing.sources import TraceRequest, model_from_config, model_from_python, trace_request  # noqa: E402
from workbench.tracing.trace import TracingError, trace_model  # noqa: E402

MODELS = os.path.join(os.path.dirname(__file__), "data", "torch_models.py")
GPT2_SMALL_CONFIG = {"model_type": "gpt2", "vocab_size": 512, "n_positions": 128, "n_embd": 64, "n_layer": 2, "n_head": 4, "bos_token_id": 0, "eos_token_id": 0,
                     "torch_dtype": "float32"}


def _product_flop(line) -> int:
    """2 × the multiply-adds of a matrix product's product terms (the GEMM's A·B; attention's Q·Kᵀ and P·V)."""
    terms = line.declaration.workload().terms
    return sum(2 * t.count for t in terms if t.kind == "fma" and "epilogue" not in t.name)


def _attention_full(line) -> int:
    """What FlopCounterMode counts for a forward attention: every score, masked or not (2·B·H·Sq·Skv·(D + Dv))."""
    p = line.declaration.params
    return 2 * p["B"] * p["H"] * p["Sq"] * p["Skv"] * (p["D"] + p["Dv"])


def _tiny_config(tmp_path, **changes) -> str:
    path = tmp_path / "tiny-gpt2.json"
    path.write_text(json.dumps({**GPT2_SMALL_CONFIG, **changes}))
    return str(path)


# -- what each op becomes ----------------------------------------------------------------


def test_mlp_lines_names_dependencies_and_views():
    model, x = model_from_python(MODELS, "mlp")[:2]
    step = trace_model(model, x)
    names = [line.name for line in step.lines]
    # One line per op that does work, named by module path; the views (t, view) are not lines.
    assert names == ["up.addmm", "act.gelu", "down.addmm", "add", "norm.native_layer_norm"]
    by_name = {line.name: line for line in step.lines}
    assert str(by_name["up.addmm"].declaration) == "gemm(M=32, N=256, K=64, dtype=fp32)"
    assert by_name["act.gelu"].after == ("up.addmm",)
    assert by_name["down.addmm"].after == ("act.gelu",)  # through the transposed weight (a view) and the bias
    assert by_name["add"].after == ("down.addmm",)  # x itself came from outside the trace: no writer
    assert step.lines[0].comment.startswith("aten::addmm")
    plan = parse_step(step.text())  # an ordinary step: the Timeline and `workbench step` read it
    assert plan.names() == names
    assert step.free > 0


def test_bytes_by_hand_for_one_op_of_each_kind(tmp_path):
    """Compulsory bytes of a traced GEMM, attention, layer norm, pointwise op, softmax, reduction, copy and
    all-reduce, each counted by hand from the shapes."""
    model, args, kwargs, _ = model_from_config(_tiny_config(tmp_path), batch=2, sequence=16, backward=True)
    step = trace_model(model, args, kwargs, backward=True, optimizer="adamw", data_parallel=4)
    first = {}
    for line in step.lines:
        first.setdefault(line.declaration.op, line)
    tokens, hidden, vocab = 2 * 16, 64, 512
    # c_attn: [32, 64] · [64, 192] → [32, 192], fp32; the bias row is added in the epilogue, not counted
    gemm = next(line for line in step.lines if line.name == "transformer.h.0.attn.c_attn.addmm")
    assert gemm.declaration.workload().bytes == 4 * (tokens * hidden + hidden * 3 * hidden + tokens * 3 * hidden)
    # fused attention: Q, K, V read and O written, [2, 4, 16, 16] each in fp32
    attention = first["attention"]
    assert attention.declaration.workload().bytes == 4 * 4 * (2 * 4 * 16 * 16)
    # layer norm: x read and y written ([32, 64]), weight and bias read once (64 each)
    assert first["layernorm"].declaration.workload().bytes == 4 * (2 * tokens * hidden + 2 * hidden)
    # the residual add: two [2, 16, 64] inputs, one output
    add = next(line for line in step.lines if line.name == "transformer.h.0.add")
    assert add.declaration.workload().bytes == 4 * 3 * tokens * hidden
    # the loss's log-softmax over the logits ([32, 512]): read once, written once
    softmax = first["softmax"]
    assert softmax.declaration.workload().bytes == 4 * 2 * tokens * vocab
    # token embedding: the 32 rows gathered and written (the indices not counted)
    embedding = first["copy"]
    assert embedding.op == "aten::embedding"
    assert embedding.declaration.workload().bytes == 4 * 2 * tokens * hidden
    # a reduction (the first in fp32, a bias gradient): its input read once and its sums written once
    reduce = next(line for line in step.lines if line.declaration.op == "reduce" and line.declaration.params["dtype"] == "fp32")
    p = reduce.declaration.params
    assert reduce.declaration.workload().bytes == 4 * (p["rows"] * p["n"] + p["rows"])
    # the all-reduce's bytes cross the link: 2·(ranks − 1)/ranks of the bucket per rank
    allreduce = first["allreduce"]
    message = 4 * allreduce.declaration.params["n"]
    assert allreduce.declaration.workload().link_traffic.bytes == message * Fraction(2 * 3, 4)


def test_unmapped_ops_are_listed_never_dropped_and_data_flows_through_them():
    model, x = model_from_python(MODELS, "with_sort")[:2]
    step = trace_model(model, x)
    assert [op.op for op in step.unmapped] == ["aten::sort"]
    assert step.unmapped[0].count == 1 and step.unmapped[0].shapes == ("[8, 16]",)
    assert "# unmapped: aten::sort ×1 ([8, 16])" in step.text()
    second = next(line for line in step.lines if line.name == "second.addmm")
    assert second.after == ("first.addmm",)  # sort has no line: its output's writer is what sort read


def test_data_parallel_buckets_follow_their_last_gradient_and_feed_the_optimizer():
    model, x = model_from_python(MODELS, "mlp")[:2]
    bucket_mib = 0.05  # the 256×64 weights (64 KiB each) fill a bucket each
    step = trace_model(model, x, backward=True, optimizer="adamw", data_parallel=8, bucket_mib=bucket_mib)
    index = {line.name: number for number, line in enumerate(step.lines)}
    reduces = [line for line in step.lines if line.declaration.op == "allreduce"]
    assert len(reduces) >= 3
    assert all(line.stream == "comm" and line.declaration.params["ranks"] == 8 for line in reduces)
    parameters = sum(p.numel() for p in model.parameters())
    assert sum(line.declaration.params["n"] for line in reduces) == parameters  # every gradient reduced once
    for line in reduces:
        (waits_for,) = line.after
        assert index[waits_for] == index[line.name] - 1  # placed right after the backward op it waits for
        assert step.lines[index[waits_for]].phase == "backward"
    # the optimizer's update of the parameters reads the reduced gradients
    optimizer = [line for line in step.lines if line.phase == "optimizer"]
    assert set(optimizer[0].after) >= {r.name for r in reduces}  # DDP's backward waits for every bucket
    assert any(set(line.after) >= {r.name for r in reduces} for line in optimizer[1:])  # the update reads them
    timeline = step_timeline(step.plan(), find_device("h100-sxm"))
    assert timeline.step_time > 0 and timeline.hidden_communication + timeline.exposed_communication > 0


def test_refusals_are_one_line_errors():
    model, x = model_from_python(MODELS, "mlp")[:2]
    with pytest.raises(TracingError, match="needs the gradients"):
        trace_model(model, x, optimizer="adamw")
    with pytest.raises(TracingError, match="add backward"):
        trace_model(model, x, data_parallel=8)
    real = torch.nn.Linear(4, 4)  # weights on the CPU: refused, not moved (that would throw the user's weights away)
    with pytest.raises(TracingError, match="not the meta device"):
        trace_model(real, torch.randn(2, 4, device="meta"))
    with pytest.raises(TracingError, match="fails on purpose"):
        model_from_python(MODELS, "broken")
    with pytest.raises(TracingError, match="has no function nope"):
        model_from_python(MODELS, "nope")
    with pytest.raises(TracingError, match="must return"):
        model_from_python(MODELS, "not_a_pair")


# -- FLOP against PyTorch's FlopCounterMode ---------------------------------------------------------


def _against_flop_counter(model, args, kwargs):
    """The traced step and FlopCounterMode's total for the very same run (the counter sees the ops the tracer records)."""
    with FlopCounterMode(display=False) as counter:
        step = trace_model(model, args, kwargs)
    return step, counter.get_total_flops()


def _check_matmul_family(step, counted):
    gemm = sum(_product_flop(line) for line in step.lines if line.declaration.op == "gemm")
    attention = [line for line in step.lines if line.declaration.op == "attention"]
    # Convention: FlopCounterMode counts every score of a causal attention; the workbench counts the unmasked ones.
    assert gemm + sum(_attention_full(line) for line in attention) == counted
    for line in attention:
        p = line.declaration.params
        causal_scores = p["Sq"] * (p["Sq"] + 1) // 2 if p["causal"] else p["Sq"] * p["Skv"]
        assert _product_flop(line) == 2 * p["B"] * p["H"] * causal_scores * (p["D"] + p["Dv"])
    return gemm


def test_tiny_gpt2_matmul_flop_equals_flop_counter(tmp_path):
    model, args, kwargs, _ = model_from_config(_tiny_config(tmp_path), batch=2, sequence=32)
    step, counted = _against_flop_counter(model, args, kwargs)
    assert sum(1 for line in step.lines if line.declaration.op == "attention") == 2
    _check_matmul_family(step, counted)


@pytest.mark.slow
def test_gpt2_small_forward_batch_8_sequence_1024_matmul_flop_equals_flop_counter():
    model, args, kwargs, _ = model_from_config("gpt2-small", batch=8, sequence=1024)
    step, counted = _against_flop_counter(model, args, kwargs)
    gemm = _check_matmul_family(step, counted)
    # by hand: 12 layers × (QKV 3·768² + proj 768² + MLP 2·4·768²) + the LM head 768·50257, times 2·8192 tokens
    assert gemm == 2 * 8192 * (12 * 12 * 768 * 768 + 768 * 50257)


def test_llama_style_decoder_layer_flop_equals_flop_counter():
    """One decoder layer of the shipped Llama-style 1B config (GQA: 8 K/V heads for 32), per module."""
    model, args, kwargs, _ = model_from_config("llama-1b", batch=1, sequence=256)
    # one layer is enough: the config's own dimensions, the layers after it are the same
    model.model.layers = model.model.layers[:1]
    with FlopCounterMode(display=False) as counter:
        step = trace_model(model, args, kwargs)
    layer = [line for line in step.lines if line.module.startswith("model.layers.0.") or line.module == "model.layers.0"]
    counted = next(flops for module, flops in counter.get_flop_counts().items() if module.endswith("model.layers.0"))
    ours = sum(_product_flop(line) for line in layer if line.declaration.op == "gemm")
    ours += sum(_attention_full(line) for line in layer if line.declaration.op == "attention")
    assert ours == sum(counted.values())
    attention = next(line for line in layer if line.declaration.op == "attention")
    assert attention.declaration.params["H"] == 32 and "8 K/V heads for 32" in attention.note


def test_resnet50_style_convolutions_traced_and_their_flop_equal_flop_counter():
    model, args, kwargs, _ = model_from_python(MODELS, "resnet50")
    step, counted = _against_flop_counter(model, args, kwargs)
    counts = step.counts()
    assert counts["conv2d"] == 53 and counts["gemm"] == 1  # 49 + 4 downsampling convolutions, the classifier
    conv_and_fc = sum(_product_flop(line) for line in step.lines if line.declaration.op in ("conv2d", "gemm"))
    assert conv_and_fc == counted
    assert not step.unmapped
    first = step.lines[0]
    assert str(first.declaration) == "conv2d(N=2, C=3, H=224, W=224, K=64, R=7, S=7, stride=2, pad=3, dtype=fp32)"
    # bytes by hand: x [2, 3, 224, 224], w [64, 3, 7, 7], y [2, 64, 112, 112], fp32
    assert first.declaration.workload().bytes == 4 * (2 * 3 * 224 * 224 + 64 * 3 * 7 * 7 + 2 * 64 * 112 * 112)


def test_convolution_backward_gives_input_and_weight_gradients():
    model, args, kwargs, _ = model_from_python(MODELS, "resnet50")
    model.train()
    step = trace_model(model, args, kwargs, backward=True)
    names = [line.name for line in step.lines]
    assert "layer1.0.conv2.convolution_backward_input" in names
    assert "layer1.0.conv2.convolution_backward_weight" in names
    assert "conv1.convolution_backward_input" not in names  # the image needs no gradient


# -- the Python API and the CLI --------------------------------------------------------------------


def test_python_api_results_show_themselves_as_tables():
    model, args = model_from_python(MODELS, "mlp")[:2]
    step = step_from_torch(model, *args, backward=True)
    assert "<table>" in step._repr_html_() and "gemm" in step._repr_html_()
    analysis = analyze(step, "h100-sxm")
    assert analysis.step_time == pytest.approx(step_timeline(step.plan(), find_device("h100-sxm")).step_time)
    assert "<table>" in analysis._repr_html_() and "up.addmm" in analysis._repr_html_()
    both = compare(step, "h100-sxm,a100-sxm-80gb")
    h100, a100 = both.analyses
    assert a100.step_time > h100.step_time
    assert "NVIDIA A100" in both._repr_html_()


def test_cli_import_torch_writes_a_step_that_workbench_step_reads(tmp_path, capsys):
    out = tmp_path / "tiny.step"
    code = main(["import-torch", _tiny_config(tmp_path), "--batch", "2", "--seq", "16", "--backward", "--optimizer", "adamw",
                 "--data-parallel", "8", "-o", str(out), "--device", "h100-sxm"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "step time" in printed and f"wrote {out}" in printed
    text = out.read_text()
    assert "allreduce(" in text and "on comm" in text
    assert main(["step", str(out), "--device", "h100-sxm", "--json"]) == 0
    laid_out = json.loads(capsys.readouterr().out)
    assert laid_out["step_time_s"] > 0


def test_cli_python_file_source_prints_the_step(capsys):
    assert main(["import-torch", f"{MODELS}:mlp"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Traced from torch_models.py:mlp()")
    assert "up.addmm = gemm(M=32, N=256, K=64, dtype=fp32)   # aten::addmm" in text


@pytest.mark.parametrize(
    "argv, message",
    [
        (["import-torch", "no-such-config"], "cannot read model config no-such-config"),
        (["import-torch", MODELS], "needs the function"),
        (["import-torch", f"{MODELS}:broken"], "fails on purpose"),
        (["import-torch", "gpt2-small", "--optimizer", "adamw"], "add backward"),
        (["import-torch", "gpt2-small", "--batch", "0"], "batch must be"),
        (["import-torch", "gpt2-small", "--seq", "4096"], "longer than the model's 1024 positions"),
        (["import-torch", "gpt2-small", "--device", "h100-sxm"], "give both"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_bad_config_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"model_type": "no-such-architecture"}')
    assert main(["import-torch", str(bad)]) == 2
    assert "bad.json" in capsys.readouterr().err
    bad.write_text("[1, 2")
    assert main(["import-torch", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_without_pytorch_the_cli_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert main(["import-torch", f"{MODELS}:mlp"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'perf-workbench[torch]'" in err and err.count("\n") == 1


def test_without_transformers_a_config_names_the_models_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "transformers", None)
    assert main(["import-torch", "gpt2-small"]) == 2
    assert "perf-workbench[models]" in capsys.readouterr().err


def test_trace_request_names_what_was_traced(tmp_path):
    step = trace_request(TraceRequest(_tiny_config(tmp_path), batch=1, sequence=8, backward=True, optimizer="sgd",
                                      data_parallel=2, bucket_mib=1))
    assert step.description.startswith("Traced from tiny-gpt2.json")
    assert "forward + backward + sgd + data-parallel on 2 ranks (1 MiB buckets)" in step.description


@pytest.mark.parametrize("builder, causal", [("attention", False), ("causal_attention", True)])
def test_attention_runs_as_the_fused_kernel_forward_and_backward(builder, causal):
    model, args = model_from_python(MODELS, builder)[:2]
    step = trace_model(model, args, backward=True)
    forward, backward = [line for line in step.lines if line.declaration.op == "attention"]
    expected = f"attention(B=2, H=4, Sq=32, Skv=32, D=16, causal={str(causal).lower()}, fused=true, dtype=fp32"
    assert str(forward.declaration) == expected + ")"
    assert str(backward.declaration) == expected + ", backward=true)"
    assert forward.op == "aten::_scaled_dot_product_flash_attention" and backward.phase == "backward"
    # the backward's five products against FlopCounterMode's (which counts every score, masked or not)
    scores = 32 * 33 // 2 if causal else 32 * 32
    assert _product_flop(backward) == 5 * 2 * 2 * 4 * scores * 16


def test_tensors_the_forward_makes_are_on_the_meta_device_too():
    model, args = model_from_python(MODELS, "makes_tensors")[:2]
    step = trace_model(model, args)
    assert [line.op for line in step.lines] == ["aten::embedding", "aten::add"]
    assert [op.op for op in step.unmapped] == ["aten::arange"]
