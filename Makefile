# make demo : create .venv, install rdpjax, print lower bounds for paper 000's Gaussian and Laplace
# make test : same set-up, then the test suite
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test lint clean calibrate

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/rdpjax demo

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check rdpjax tests benchmarks

calibrate: $(STAMP)
	$(VENV)/bin/python benchmarks/calibrate.py --reps 200 --mechanisms gaussian laplace --out benchmarks/results/calibrate.json

clean:
	rm -rf $(VENV) .pytest_cache
