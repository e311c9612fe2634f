"""The hostile-input fuzzers (tests/hostile_fuzz.py), each surface in its own process under a memory limit.

Every input must give the project's own one-line error or a valid result,
never another exception, within a time budget per input; a memory bomb ends
in the child's MemoryError (the limit is RLIMIT_AS) instead of in the
machine's swap. The counts are fixed (derandomized) so `make test` stays
stable and quick; for a long random run:

    HOSTILE_FUZZ_SCALE=20 HOSTILE_FUZZ_RANDOM=1 make test PYTEST_ARGS="tests/test_hostile_fuzz.py -s"
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "hostile_fuzz.py"
STEP_TRACE_HARNESS = Path(__file__).parent / "step_trace_fuzz.py"  # the step, trace and match-rule surfaces
SCALE = max(1, int(os.environ.get("HOSTILE_FUZZ_SCALE", "1")))
EXAMPLES = {"declarations": 1000, "sessions": 300, "scratchpad": 500, "cli": 300, "steps": 50, "traces": 50, "match-rules": 150}
HARNESS_OF = {"steps": STEP_TRACE_HARNESS, "traces": STEP_TRACE_HARNESS, "match-rules": STEP_TRACE_HARNESS}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory limit uses RLIMIT_AS")
@pytest.mark.parametrize("surface", list(EXAMPLES))
def test_hostile_inputs_give_the_project_s_error_or_a_valid_result(surface: str) -> None:
    examples = EXAMPLES[surface] * SCALE
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, str(HARNESS_OF.get(surface, HARNESS)), surface, str(examples)],
        capture_output=True, text=True, timeout=300 * SCALE, env=env,
    )
    assert done.returncode == 0, f"{surface}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"\nhostile fuzz {surface}: {result['inputs']} inputs, {result['failures']} failures, {result['seconds']} s")
    assert result == {**result, "surface": surface, "failures": 0}
    assert result["inputs"] >= examples * 0.9  # hypothesis ran (nearly) every input asked for
