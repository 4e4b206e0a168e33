# All set-up is done by these targets: each creates .venv if missing and installs into it the
# library (kpm, with its test tools) and the reproduction beside it (kpm-reproduce: the `kpm`
# command, the experiment drivers and the data loaders, in reproduction/).
# Tests run in 2 pytest workers with one BLAS thread each (2 cores; oversubscribed OpenBLAS
# was measured up to 24x slower here).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kpm-installed
DOCS_STAMP := $(VENV)/.kpm-docs-installed
THREADS := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# make docs FAST=1: no gallery execution (the pages and the API reference only)
SPHINXOPTS := -W --keep-going -q $(if $(FAST),-D plot_gallery=0,)

.PHONY: demo test bench docs docs-check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml reproduction/pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]" -e ./reproduction
	touch $(STAMP)

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,docs]" -e ./reproduction
	touch $(DOCS_STAMP)

demo: $(STAMP)
	$(BIN)/kpm demo

test: $(STAMP)
	$(THREADS) $(BIN)/python -m pytest -n 2 --dist loadfile -q tests reproduction/tests

# writes under ./kpm-results; refresh the committed numbers with `--out docs/results`
bench: $(STAMP)
	$(THREADS) $(BIN)/python benchmarks/bench_projection.py

# the documentation site in docs/_build/html (warnings are errors; the gallery is executed)
docs: $(DOCS_STAMP)
	MPLBACKEND=Agg $(THREADS) $(BIN)/python -m sphinx -b html $(SPHINXOPTS) docs docs/_build/html

# the built site in headless Chromium (Debian: apt-get install chromium): every page's files
# load from the site itself, the maths is typeset by MathJax; screenshots in docs/_build/screens
# (run `make docs` or `make docs FAST=1` first; docs/check_site.py says what it checks)
docs-check:
	$(PYTHON) docs/check_site.py

clean:
	rm -rf $(VENV) build src/*.egg-info reproduction/src/*.egg-info .pytest_cache docs/_build docs/auto_examples docs/generated
