#!/usr/bin/env bash
# GPU check of the measurement engine, for a machine with an NVIDIA GPU: at most 6 min on one H200
# (the limits below add up to 5 min 50 s; the first H200 run took 65 s before the Little's-law rows).
#
# Runs the gpu-marked tests, benchmarks/bench_measure.py (its lab-demo rows say which assumption each lab GEMM
# misses) and benchmarks/bench_little.py (latency, Little's law beside the measured stream kernels and the
# library's row sums, the vectorized add against the device copy, wave steps) from this tree (PYTHONPATH points here;
# the project need not be installed, CuPy must be: see the resources link below), prints the ratio
# table, and writes benchmarks/results/gpu-check-<date>.json (the table's rows, the test summary,
# the GPU before and after). Reads clocks and temperatures; changes no GPU setting. Without a usable
# GPU it prints one line saying why and exits 2.
#
#   scripts/gpu_check.sh                      # PYTHON=/path/to/python scripts/gpu_check.sh to pick one
#   OUT=/some/dir scripts/gpu_check.sh        # also copies the JSON and the pytest log there
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export QT_QPA_PLATFORM=offscreen
export PYTHONUNBUFFERED=1
if [ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; fi
PY="${PYTHON:-python3}"
TESTS_LIMIT_S=${GPU_CHECK_TESTS_S:-170}   # the gpu tests, bench smoke test included
BENCH_LIMIT_S=${GPU_CHECK_BENCH_S:-90}    # the full benchmark (its lab rows name what each lab kernel misses)
LINKS_LIMIT_S=${GPU_CHECK_LINKS_S:-20}    # measured links and L2 (benchmarks/bench_links.py --quick)
LITTLE_LIMIT_S=${GPU_CHECK_LITTLE_S:-70}  # latency, Little's law vs measured (stream kernels, row sums), vectorized add, waves
LINKS_RESULT="benchmarks/results/gpu-check-$(date -u +%Y-%m-%d)-links.json"
LITTLE_RESULT="benchmarks/results/gpu-check-$(date -u +%Y-%m-%d)-little.json"
RESULT="benchmarks/results/gpu-check-$(date -u +%Y-%m-%d).json"
LOG_DIR="${OUT:-${TMPDIR:-/tmp}}"

# The data files live in the top-level resources/ folder, which an install maps to the package
# `workbench.resources` (pyproject.toml's package-dir). An uninstalled tree has no such package, and the
# device catalogue, units and examples cannot load. For this run only, a link workbench/resources ->
# ../resources makes the tree importable as it stands; it is removed on exit (also on Ctrl+C or a kill
# by TERM/HUP). A link left by a run that was killed outright (KILL) is recognised and removed too.
RESOURCES_LINK=workbench/resources
remove_resources_link() {
  if [ -L "$RESOURCES_LINK" ] && [ "$(readlink "$RESOURCES_LINK")" = "../resources" ]; then rm -f "$RESOURCES_LINK"; fi
}
if ! "$PY" -c "import workbench.resources" >/dev/null 2>&1 || [ -L "$RESOURCES_LINK" ]; then
  if [ -e "$RESOURCES_LINK" ] && ! [ -L "$RESOURCES_LINK" ]; then
    echo "gpu_check: cannot run: $RESOURCES_LINK exists and is not this script's link to ../resources; move it away"
    exit 2
  fi
  trap remove_resources_link EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP
  [ -L "$RESOURCES_LINK" ] || ln -s ../resources "$RESOURCES_LINK"
  if ! "$PY" -c "import workbench.resources" >/dev/null 2>&1; then
    echo "gpu_check: cannot run: workbench.resources does not import even with $RESOURCES_LINK -> ../resources (install the project: pip install -e .)"
    exit 2
  fi
fi

# One line and exit 2 when this machine cannot run the check (the measurement engine's own probe).
"$PY" - <<'EOF' || exit 2
import importlib, sys
missing = []
for module in ("numpy", "pint", "pynvml", "pytest"):  # what the measurement engine, its bounds and its tests import
    try:
        importlib.import_module(module)
    except Exception:
        missing.append(module)
if missing:
    print(f"gpu_check: cannot run: {', '.join(missing)} not importable by {sys.executable} (pip install -e \".[test,cuda12]\" or [test,cuda13])")
    sys.exit(2)
try:
    import workbench.resources  # noqa: F401 - the data files (device catalogue, units) the checks read
    from workbench.measure.backends import backend_status
except Exception as exc:  # the project's own dependencies are missing
    print(f"gpu_check: cannot run: the workbench does not import here ({type(exc).__name__}: {exc})")
    sys.exit(2)
cupy = next(status for status in backend_status() if status.name == "cupy")
if not cupy.available:
    print(f"gpu_check: no usable GPU here: {cupy.message}")
    sys.exit(2)
EOF

mkdir -p "$LOG_DIR" benchmarks/results
started=$(date +%s)
echo "== machine"
before=$(nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv,noheader 2>/dev/null || echo "nvidia-smi not available")
echo "$before"
"$PY" - <<'EOF'
import importlib, sys
print(f"python {sys.version.split()[0]}")
for name in ("numpy", "cupy", "ml_dtypes", "pynvml", "pytest", "torch", "triton"):
    try:
        module = importlib.import_module(name)
        print(f"  {name:9s} {getattr(module, '__version__', 'present')}")
    except Exception as exc:  # absent modules are reported, not fatal
        print(f"  {name:9s} missing ({type(exc).__name__})")
EOF

echo
echo "== gpu-marked tests (at most ${TESTS_LIMIT_S} s)"
tests_result="not run (pytest missing)"
if "$PY" -c "import pytest" 2>/dev/null; then
  timeout "$TESTS_LIMIT_S" "$PY" -m pytest -m gpu -q -rs -p no:cacheprovider -o addopts="" \
    tests/test_measure.py tests/test_measure_gpu.py tests/test_measure_bf16.py tests/test_measure_cli.py \
    tests/test_measure_raw_gemm.py \
    tests/test_measured_links.py \
    tests/test_measure_stream_raw.py tests/test_latency.py \
    2>&1 | tee "$LOG_DIR/gpu_tests.txt"
  status=${PIPESTATUS[0]}
  summary=$(grep -E "passed|failed|error" "$LOG_DIR/gpu_tests.txt" | tail -n 1)
  case "$status" in
    0) tests_result="PASS: $summary" ;;
    124) tests_result="TIMED OUT after ${TESTS_LIMIT_S} s: $summary" ;;
    *) tests_result="FAIL (exit $status): $summary" ;;
  esac
fi

echo
echo "== harness benchmark (at most ${BENCH_LIMIT_S} s; rows are written to $RESULT as they complete)"
timeout "$BENCH_LIMIT_S" "$PY" benchmarks/bench_measure.py --gpu-only --json "$RESULT" \
  --note "gpu tests: $tests_result" --note "before: $before"
bench_status=$?

echo
echo "== measured links and L2 (at most ${LINKS_LIMIT_S} s; rows in $LINKS_RESULT)"
# L2 read kernel vs the HBM datasheet; pinned/pageable host <-> device copies vs the host link; with 2+ GPUs,
# peer copies and NCCL all-reduce / all-gather busbw vs the NVLink per direction.
timeout "$LINKS_LIMIT_S" "$PY" benchmarks/bench_links.py --gpu-only --quick --json "$LINKS_RESULT"
links_status=$?
[ -n "${OUT:-}" ] && cp "$LINKS_RESULT" "$OUT/" 2>/dev/null

echo
echo "== latency, Little's law, vectorized add, waves (at most ${LITTLE_LIMIT_S} s; rows in $LITTLE_RESULT)"
# idle (pointer chase) and loaded HBM latency; vectorized add >= 90 % of this run's device copy (library add
# beside it); the memory-level-parallelism prediction vs measured for the library and vectorized copy and add
# (within 15 %), and for the library's fp32 and fp16 row sums (within 15 %; the CUB kernels compile once, a few
# seconds on a fresh machine); a tiled GEMM swept across a wave boundary, predicted vs measured.
timeout "$LITTLE_LIMIT_S" "$PY" benchmarks/bench_little.py --json "$LITTLE_RESULT"
little_status=$?
[ -n "${OUT:-}" ] && cp "$LITTLE_RESULT" "$OUT/" 2>/dev/null

after=$(nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null || true)
"$PY" - "$RESULT" "$after" "$(( $(date +%s) - started ))" <<'EOF'
import json, sys
path, after, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
except (OSError, ValueError):
    sys.exit(0)  # the benchmark wrote nothing: the summary below says so
data["notes"] = data.get("notes", []) + [f"after: {after}", f"gpu_check.sh took {seconds} s"]
with open(path, "w", encoding="utf-8") as handle:
    json.dump(data, handle, indent=2, ensure_ascii=False)
    handle.write("\n")
EOF
[ -n "${OUT:-}" ] && cp "$RESULT" "$OUT/" 2>/dev/null

echo
echo "== summary ($(( $(date +%s) - started )) s)"
echo "gpu tests:  $tests_result"
case "$bench_status" in
  0) echo "benchmark:  completed (table above; rows in $RESULT)" ;;
  124) echo "benchmark:  TIMED OUT after ${BENCH_LIMIT_S} s (the rows measured so far are in $RESULT)" ;;
  *) echo "benchmark:  FAILED (exit $bench_status; the rows measured so far are in $RESULT)" ;;
esac
case "$links_status" in
  0) echo "links:      completed (rows in $LINKS_RESULT)" ;;
  124) echo "links:      TIMED OUT after ${LINKS_LIMIT_S} s (the rows measured so far are in $LINKS_RESULT)" ;;
  *) echo "links:      FAILED (exit $links_status; the rows measured so far are in $LINKS_RESULT)" ;;
esac
case "$little_status" in
  0) echo "little:     completed (rows in $LITTLE_RESULT)" ;;
  124) echo "little:     TIMED OUT after ${LITTLE_LIMIT_S} s (the rows measured so far are in $LITTLE_RESULT)" ;;
  *) echo "little:     FAILED (exit $little_status; the rows measured so far are in $LITTLE_RESULT)" ;;
esac
echo "after:      $after"
