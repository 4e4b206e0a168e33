# All set-up is done by these targets: each creates .venv if missing and installs kpm into it.
# Tests run in 2 pytest workers with one BLAS thread each (2 cores; oversubscribed OpenBLAS
# was measured up to 24x slower here).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kpm-installed

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kpm demo

test: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadfile -q tests

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_projection.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
