# Performance Workbench: `make run` opens the app, `make test` runs the tests.
# Both create .venv on first use and reinstall only when pyproject.toml changes.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q

# The CuPy wheel must match the CUDA major version of the NVIDIA driver.
CUDA_MAJOR := $(shell nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
CUDA_EXTRA := $(if $(CUDA_MAJOR),$(if $(filter 12,$(CUDA_MAJOR)),cuda12,$(if $(filter 11 10 9,$(CUDA_MAJOR)),,cuda13)),)
RUN_EXTRAS := $(if $(CUDA_EXTRA),[$(CUDA_EXTRA)],)
# On a GPU machine the tests get CuPy too, so `make test` / `make test-gpu` run the gpu-marked tests.
comma := ,
# TORCH=1 (as CI runs it): PyTorch and transformers too, so the model-tracing tests run instead of skipping
# (pyproject.toml's test-torch extra). The public package index's default Linux PyTorch wheel is its CUDA build, several GB; the
# tests need only the CPU build: see the README's "Tests and PyTorch".
TORCH ?=
TEST_EXTRAS := [test$(if $(TORCH),$(comma)test-torch,)$(if $(CUDA_EXTRA),$(comma)$(CUDA_EXTRA),)]
TEST_STAMP := $(VENV)/.stamp-test$(if $(TORCH),-torch,)

.PHONY: run test test-gpu bench screenshots bundle bundle-test clean help

help:
	@echo "make run          set up .venv and open the workbench"
	@echo "make test         set up .venv, check the import layers (lint-imports) and run the tests (offscreen)"
	@echo "make test TORCH=1 the same with PyTorch and transformers installed: the model-tracing tests run too"
	@echo "make test-gpu     run only the gpu-marked tests (needs an NVIDIA GPU; CuPy comes with the driver's CUDA extra)"
	@echo "make bench        run the benchmarks under benchmarks/"
	@echo "make screenshots  write PNGs of the window under docs/screenshots/ (needs xvfb-run)"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.stamp-run: pyproject.toml | $(PY)
	$(PIP) install -e ".$(RUN_EXTRAS)"
	@touch $@

$(TEST_STAMP): pyproject.toml | $(PY)
	$(PIP) install -e ".$(TEST_EXTRAS)"
	@touch $@

run: $(VENV)/.stamp-run
	$(VENV)/bin/workbench $(ARGS)

# The import contracts (pyproject.toml, [tool.importlinter]) first: a layer violation fails at once.
test: $(TEST_STAMP)
	$(VENV)/bin/lint-imports --no-cache
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

test-gpu: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -m gpu $(PYTEST_ARGS)

bench: $(TEST_STAMP)
	@for script in benchmarks/bench_*.py; do echo "== $$script"; QT_QPA_PLATFORM=offscreen $(PY) $$script || exit 1; done

# PNGs of the window at 1600×1000 under a virtual X display (needs xvfb-run), then the window on a projector's,
# a laptop's, a 1920×1080 and a HiDPI (pixel ratio 2) screen.
screenshots: $(TEST_STAMP)
	xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) scripts/screenshots.py
	for screen in 1280x720 1366x768 1920x1080; do \
	  xvfb-run -a -s "-screen 0 $${screen}x24" $(PY) scripts/screenshots.py --only screen || exit 1; done
	QT_SCALE_FACTOR=2 xvfb-run -a -s "-screen 0 2560x1440x24" $(PY) scripts/screenshots.py --only screen

$(VENV)/.stamp-bundle: pyproject.toml | $(PY)
	$(PIP) install -e ".[test,bundle]"
	@touch $@

# A one-folder PyInstaller bundle in dist/perf-workbench/ (see packaging/README.md).
bundle: $(VENV)/.stamp-bundle
	$(VENV)/bin/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller packaging/perf-workbench.spec

# Builds the bundle and starts it offscreen (not part of `make test`).
bundle-test: $(VENV)/.stamp-bundle
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -m bundle tests/test_bundle.py $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info
