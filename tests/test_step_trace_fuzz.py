"""The step, trace and match-rule fuzzers (tests/step_trace_fuzz.py), each surface in its own process under a
memory limit, as tests/test_hostile_fuzz.py runs the others. Fixed (derandomized) counts keep `make test`
quick; for a long random run:

    HOSTILE_FUZZ_SCALE=20 HOSTILE_FUZZ_RANDOM=1 make test PYTEST_ARGS="tests/test_step_trace_fuzz.py -s"
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "step_trace_fuzz.py"
SCALE = max(1, int(os.environ.get("HOSTILE_FUZZ_SCALE", "1")))
EXAMPLES = {"steps": 50, "traces": 50, "match-rules": 150}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory limit uses RLIMIT_AS")
@pytest.mark.parametrize("surface", list(EXAMPLES))
def test_hostile_steps_traces_and_rules_give_the_project_s_error_or_a_valid_result(surface: str) -> None:
    examples = EXAMPLES[surface] * SCALE
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, str(HARNESS), surface, str(examples)],
        capture_output=True, text=True, timeout=300 * SCALE, env=env,
    )
    assert done.returncode == 0, f"{surface}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"\nhostile fuzz {surface}: {result['inputs']} inputs, {result['failures']} failures, {result['seconds']} s")
    assert result == {**result, "surface": surface, "failures": 0}
    assert result["inputs"] >= examples * 0.9
