"""Steps: operations on streams with dependencies, laid out in time (workbench/steps.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from step_fixtures import DP_STEP, A, G, X
from workbench.cli import main
from workbench.model.devices.catalogue import find_device
from workbench.documents.examples import load_example
from workbench.documents.session import Session, SessionError, StepEntry, dumps, loads
from workbench.steps import BOUND, MEASURED, StepError, format_step, parse_step, step_timeline

# The hand calculation on an H100 SXM (G, A, X, the timeline, the critical path) is in tests/step_fixtures.py.
EXAMPLE = "# one data-parallel step on 8 GPUs: gradient all-reduce overlaps backward\n" + DP_STEP


@pytest.fixture(scope="module")
def h100():
    return find_device("h100-sxm")


def test_example_step_on_h100_must_show(h100) -> None:
    timeline = step_timeline(EXAMPLE, h100)
    assert timeline.step_time == pytest.approx(3 * G + A + X)
    assert f"{timeline.step_time * 1e3:.3f}" == "5.341"
    assert timeline.critical_path == ("fwd", "bwd1", "bwd2", "ar2", "opt")
    assert timeline.exposed_communication == pytest.approx(A)
    assert timeline.hidden_communication == pytest.approx(A)
    assert timeline.interval("ar1").start == pytest.approx(2 * G)
    assert timeline.interval("ar2").start == pytest.approx(3 * G)
    assert timeline.interval("opt").start == pytest.approx(3 * G + A)
    assert all(t.source == BOUND for t in timeline.times.values())


def test_collectives_on_the_compute_stream_sum(h100) -> None:
    # One stream runs everything in line order: the step time is the plain sum 3G + 2A + X, and all
    # communication is exposed (nothing computes while it runs).
    serial = step_timeline(parse_step(EXAMPLE).with_stream(["ar1", "ar2"], "compute"), h100)
    assert serial.step_time == pytest.approx(3 * G + 2 * A + X)
    assert serial.step_time == pytest.approx(sum(t.seconds for t in serial.times.values()))
    assert serial.exposed_communication == pytest.approx(2 * A)
    assert serial.hidden_communication == pytest.approx(0)


def test_amdahl_what_ifs(h100) -> None:
    timeline = step_timeline(EXAMPLE, h100)
    # ar1 is hidden: neither halving nor removing it changes the step.
    assert timeline.what_if["ar1"].if_free == pytest.approx(timeline.step_time)
    # ar2 free: opt starts at max(2G+A, 3G) = 3G → 3G + X.
    assert timeline.what_if["ar2"].if_free == pytest.approx(3 * G + X)
    assert timeline.what_if["ar2"].if_2x_faster == pytest.approx(3 * G + A / 2 + X)
    # bwd2 free: ar2 waits for the comm stream (ar1 ends 2G+A) → 2G + 2A + X.
    assert timeline.what_if["bwd2"].if_free == pytest.approx(2 * G + 2 * A + X)
    # A speed-up factor per operation (the timeline view's what-if) divides its time.
    faster = step_timeline(EXAMPLE, h100, speedups={"opt": 4})
    assert faster.step_time == pytest.approx(3 * G + A + X / 4)
    with pytest.raises(StepError, match="must be positive"):
        step_timeline(EXAMPLE, h100, speedups={"opt": 0})


def test_measured_median_replaces_the_bound(h100) -> None:
    run = {"id": "r7", "declaration": "axpy(n=2**28, dtype=fp32)", "samples_s": [0.0012, 0.0011, 0.0013], "valid": True}
    session = Session(runs=[run])
    timeline = step_timeline(EXAMPLE, h100, session.runs, session.figure_context(h100))
    assert timeline.times["opt"].source == MEASURED
    assert timeline.times["opt"].seconds == pytest.approx(0.0012)
    assert "run r7" in timeline.times["opt"].detail
    assert timeline.step_time == pytest.approx(3 * G + A + 0.0012)
    # An invalid run is not used.
    session = Session(runs=[{**run, "valid": False}])
    assert step_timeline(EXAMPLE, h100, session.runs, session.figure_context(h100)).times["opt"].source == BOUND


def test_step_text_round_trips() -> None:
    plan = parse_step(EXAMPLE)
    text = format_step(plan)
    assert parse_step(text) == plan
    assert format_step(parse_step(text)) == text
    assert text.startswith("# one data-parallel step")
    assert parse_step("a = add(n=8)   # a trailing note\n").operations[0].comment == "a trailing note"
    assert format_step(parse_step("a = add(n=8)   # a trailing note\n")) == "a = add(n=8, dtype=fp32)   # a trailing note\n"
    assert [op.stream for op in plan.operations] == ["compute", "compute", "comm", "compute", "comm", "compute"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a = add(n=8)\nb = add(n=8) after c\nc = add(n=8) after b\n", r"^line 2: cycle: b → c → b$"),
        ("a = add(n=8) after a\n", r"^line 1: a depends on itself"),
        ("a = add(n=8)\nb = add(n=8) after zz\n", r"^line 2: b depends on 'zz', which no line defines$"),
        ("a = add(n=8) after b\nb = add(n=8)\n", r"^line 1: a depends on 'b', defined later on line 2"),
        ("# c\na = add(n=8)\nb = add(n=8)\nc = add(m=8)\n", r"^line 4: c: add has no field 'm'"),
        ("a = add(n=8)\na = add(n=9)\n", r"^line 2: 'a' is already defined on line 1$"),
        ("a add(n=8)\n", r"^line 1: expected name = declaration"),
        ("a = add(n=8\n", r"^line 1: the declaration's parentheses do not close"),
        ("a = add(n=8) on\n", r"^line 1: after the declaration expected 'on STREAM'"),
        ("a = add(n=8) after b, b\nb = add(n=1)\n", r"^line 1: a names a dependency twice"),
        ("# only a comment\n", r"at least one operation"),
    ],
)
def test_bad_steps_name_the_line(text: str, message: str) -> None:
    with pytest.raises(StepError, match=message):
        parse_step(text)


def test_step_without_device_or_runs_says_so() -> None:
    with pytest.raises(StepError, match="line 1: a has no time: choose a device"):
        step_timeline("a = add(n=8)\n", None)


def test_session_keeps_steps_and_validates_them() -> None:
    session = Session(steps=[StepEntry("dp", EXAMPLE)])
    again = loads(dumps(session))
    assert again.steps == [StepEntry("dp", EXAMPLE)]
    data = json.loads(dumps(session))
    data["steps"][0]["text"] = "a = add(n=8)\nb = add(n=8) after a\nc = add(n=8)\nd = nope(n=1)\n"
    with pytest.raises(SessionError, match=r"steps\[0\]\.text.*line 4: d: unknown operation 'nope'"):
        loads(json.dumps(data))
    data["steps"] = [{"name": "x"}]
    with pytest.raises(SessionError, match="a step needs its text"):
        loads(json.dumps(data))
    data["steps"] = "not a list"
    with pytest.raises(SessionError, match="expected an array"):
        loads(json.dumps(data))
    # A session without steps writes no steps key: older files stay as they were.
    assert "steps" not in json.loads(dumps(Session()))


def test_example_session_holds_the_step() -> None:
    session = load_example("data-parallel-step")
    assert [step.name for step in session.steps] == ["data-parallel step"]
    assert parse_step(session.steps[0].text) == parse_step(EXAMPLE)


def test_cli_step_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dp.step"
    path.write_text(EXAMPLE, encoding="utf-8")
    assert main(["step", str(path), "--device", "h100-sxm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["step_time_s"] == pytest.approx(3 * G + A + X)
    assert data["critical_path"] == ["fwd", "bwd1", "bwd2", "ar2", "opt"]
    assert data["exposed_communication_s"] == pytest.approx(A)
    assert data["hidden_communication_s"] == pytest.approx(A)
    first = data["operations"][0]
    for key in ("name", "start_s", "end_s", "stream", "time_s", "source", "if_2x_faster_s", "if_free_s"):
        assert key in first
    assert first["source"] == "bound"


def test_cli_step_from_a_session_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(dumps(load_example("data-parallel-step")), encoding="utf-8")
    assert main(["step", str(path)]) == 0  # the session's device (H100 SXM)
    out = capsys.readouterr().out
    assert out.startswith("step time 5.341 ms; critical path fwd → bwd1 → bwd2 → ar2 → opt")
    assert main(["step", str(path), "--name", "nope"]) == 2
    assert "no step named 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a = add(n=8)\nb = add(n=8) after c\nc = add(n=8) after b\n", "line 2: cycle: b → c → b"),
        ("a = add(n=8)\nb = add(n=8) after zz\n", "line 2: b depends on 'zz'"),
        ("# c\na = add(n=8)\nb = add(n=8)\nc = add(m=8)\n", "line 4: c: add has no field 'm'"),
    ],
)
def test_cli_bad_step_file_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, fragment: str) -> None:
    path = tmp_path / "bad.step"
    path.write_text(text, encoding="utf-8")
    assert main(["step", str(path), "--device", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err


def test_cli_step_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["step", str(tmp_path / "none.step")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_readme_step_example_runs_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's step text, saved as train.step and run with the command the README gives."""
    import re
    import shlex

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("A **step** is several named operations")
    block = re.search(r"```\n(.*?)```", readme[start:], re.DOTALL)
    command = re.search(r"`(workbench step train\.step[^`]*)`", readme[start:])
    assert block is not None and command is not None
    (tmp_path / "train.step").write_text(block.group(1), encoding="utf-8")
    args = shlex.split(command.group(1))[1:]
    args[1] = str(tmp_path / "train.step")
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["step_time_s"] > 0 and len(data["operations"]) == 6


# -- model-sized steps -----------------------------------------------------------


def _lay_out_again(plan, times, name: str, speedup: float) -> float:  # type: ignore[no-untyped-def]
    from workbench.steps import lay_out

    return lay_out(plan, times, {name: speedup}).step_time


@pytest.mark.parametrize("seed", range(6))
def test_each_what_if_is_the_step_laid_out_again_with_that_operation_changed(seed: int) -> None:
    """The what-ifs come from the longest chains through and around each operation (n log n), not from laying
    the step out again per operation: on steps of every shape (chains, fans, streams, long jumps) each equals a
    fresh layout with the operation 2× faster and free, to rounding."""
    import math
    import random

    from workbench.steps import OperationTime, lay_out

    rng = random.Random(seed)
    count = rng.randint(1, 60)
    lines = []
    for index in range(count):
        deps = rng.sample(range(index), min(index, rng.choice([0, 0, 1, 1, 2, 5])))
        stream = rng.choice(["", "", " on comm", " on s2"])
        after = f" after {', '.join(f'o{d}' for d in deps)}" if deps else ""
        lines.append(f"o{index} = add(n={rng.randint(1, 2**24)}, dtype=fp32){stream}{after}")
    plan = parse_step("\n".join(lines))
    times = {op.name: OperationTime(rng.choice([0.0, rng.uniform(1e-6, 1e-3)]), BOUND, "") for op in plan.operations}
    timeline = lay_out(plan, times)
    for op in plan.operations:
        assert timeline.what_if[op.name].if_2x_faster == pytest.approx(_lay_out_again(plan, times, op.name, 2.0), rel=1e-12, abs=1e-18)
        assert timeline.what_if[op.name].if_free == pytest.approx(_lay_out_again(plan, times, op.name, math.inf), rel=1e-12, abs=1e-18)


def test_a_step_of_a_traced_models_size_is_accepted_and_a_larger_one_refused() -> None:
    from workbench.steps import MAX_STEP_CHARS, MAX_STEP_LINES

    assert (MAX_STEP_LINES, MAX_STEP_CHARS) == (100_000, 20_000_000)
    text = "".join(f"op{i} = add(n={1 + i % 1000}, dtype=bf16)" + (f" after op{i - 1}" if i else "") + "\n" for i in range(12_000))
    plan = parse_step(text)
    assert len(plan.operations) == 12_000 and plan["op11999"].after == ("op11998",)
    with pytest.raises(StepError, match="limited to 100,000 lines; this one has 100,001"):
        parse_step("\n" * 100_000 + "a = add(n=1, dtype=fp32)")
    with pytest.raises(StepError, match="limited to 20,000,000 characters"):
        parse_step("a = add(n=1, dtype=fp32)  #" + "x" * MAX_STEP_CHARS)
