#!/usr/bin/env bash
# GPU check of the measurement engine, for a machine with an NVIDIA GPU and CuPy.
#
# Runs the gpu-marked measurement tests and benchmarks/bench_measure.py from this
# tree (the project need not be installed: PYTHONPATH points here) and prints a
# short table. Reads clocks and temperatures; changes no GPU setting.
#
#   scripts/gpu_check.sh            # PYTHON=python3.11 scripts/gpu_check.sh to pick an interpreter
#   OUT=/some/dir scripts/gpu_check.sh   # also writes gpu_check.json and pytest output there
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export QT_QPA_PLATFORM=offscreen
PY="${PYTHON:-python3}"
OUT_DIR="${OUT:-${TMPDIR:-/tmp}}"
mkdir -p "$OUT_DIR"

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>/dev/null || echo "nvidia-smi not available"
"$PY" - <<'EOF'
import importlib, sys
print(f"python {sys.version.split()[0]}")
for name in ("numpy", "cupy", "pynvml", "pint", "pytest", "torch", "triton"):
    try:
        module = importlib.import_module(name)
        print(f"  {name:8s} {getattr(module, '__version__', 'present')}")
    except Exception as exc:  # absent modules are reported, not fatal
        print(f"  {name:8s} missing ({type(exc).__name__})")
EOF

echo
echo "== gpu-marked measurement tests"
tests_result="skipped (pytest missing)"
if "$PY" -c "import pytest" 2>/dev/null; then
  "$PY" -m pytest -m gpu -q -p no:cacheprovider -o addopts="" \
    tests/test_measure.py tests/test_measure_gemm_plan.py tests/test_measure_cli.py 2>&1 | tee "$OUT_DIR/gpu_tests.txt"
  status=${PIPESTATUS[0]}
  summary=$(tail -n 1 "$OUT_DIR/gpu_tests.txt")
  if [ "$status" -eq 0 ]; then tests_result="PASS: $summary"; else tests_result="FAIL (exit $status): $summary"; fi
fi

echo
echo "== harness benchmark"
"$PY" benchmarks/bench_measure.py --rounds 4 --json "$OUT_DIR/gpu_check.json"
bench_status=$?

echo
echo "== summary"
echo "gpu tests:  $tests_result"
if [ "$bench_status" -eq 0 ]; then
  echo "benchmark:  completed (table above; rows also in $OUT_DIR/gpu_check.json)"
else
  echo "benchmark:  FAILED to run (exit $bench_status)"
fi
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null \
  | sed 's/^/after:      /'
