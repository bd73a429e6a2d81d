# make demo : create .venv, install rdpjax, reproduce paper 000 §V at small sizes (rdpjax reproduce --quick)
# make test : same set-up, then the test suite (make test-fast: without the slow tests)
# make docs : same set-up, then the documentation site into site/ (mkdocs build --strict)
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint typecheck clean calibrate coverage bench docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test,bench,libraries,docs]'
	touch $(STAMP)

# Compiled XLA programs are kept in .venv/jax-cache, so a second `make demo` skips the compilation
# that dominates the first (measured with the machine shared, load 3-6: 42 s, then 11.6-11.9 s).
demo: $(STAMP)
	RDPJAX_CACHE_DIR=$(CURDIR)/$(VENV)/jax-cache $(VENV)/bin/rdpjax reproduce --quick

# Two tiers of tests, on two worker processes, one test file each at a time (pytest-xdist).
# `make test`: the whole suite, every test (1,614 tests: 16.7 min on 2 cores on 2026-12-06, the machine
# quiet; 20.1-21.2 min before that day's trims and the run's shared compilation cache, tests/conftest.py;
# 24.7 min beside a helper's benchmarks, 29-35 min beside other studies; 1,630 tests: 28.0 min beside
# three benchmark processes, later that day).
# `make test-fast`: the same without the tests marked `slow` (pyproject.toml: subprocesses,
# notebooks, the type check, multi-device runs, studies): 1.5 min on 2 cores, under 3 with the
# machine shared (load 5-6); for the loop of editing and testing, `make test` before a commit.
test: $(STAMP)
	$(VENV)/bin/python -m pytest -q -n 2 --dist loadfile

test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -q -n 2 --dist loadfile -m "not slow"

# `make test` runs these too (tests/test_lint.py); .pre-commit-config.yaml runs them on commit.
lint: $(STAMP)
	$(VENV)/bin/ruff check rdpjax tests benchmarks
	$(VENV)/bin/ruff format --check rdpjax tests benchmarks

# `make test` runs this too (tests/test_types.py): pyproject.toml's [tool.basedpyright] scope.
typecheck: $(STAMP)
	$(VENV)/bin/basedpyright -p $(CURDIR) --pythonpath $(VENV)/bin/python

calibrate: $(STAMP)
	$(VENV)/bin/python benchmarks/calibration/calibrate.py --reps 200 --mechanisms gaussian laplace --out benchmarks/results/calibration/calibrate.json

# The full coverage study (7 experiments × n = 1e4, 1e5, 1e6, R = 200): about 0.5-1 h on 2 cores;
# rerunning resumes where it stopped.
coverage: $(STAMP)
	$(VENV)/bin/python benchmarks/papers/coverage.py

# Throughput side by side (KDE vs KDEpy/statsmodels/scipy, audit and 1e8 streamed vs RNG alone,
# vmapped vs looped replications, memory-bandwidth floor): a few minutes on 2 cores. Full sizes
# (1e9 per side, R = 1000): $(VENV)/bin/python benchmarks/performance/throughput.py
bench: $(STAMP)
	$(VENV)/bin/python benchmarks/performance/throughput.py --quick

# The documentation site (mkdocs.yml) into site/, in strict mode: a warning fails it, as in
# tests/test_docs.py. `$(VENV)/bin/mkdocs serve` to browse it while editing.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) .pytest_cache site .cache
