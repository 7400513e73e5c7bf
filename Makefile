# Everything a fresh machine needs: `make demo` and `make test` set up .venv themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_WORKERS ?= 2

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# the CPU build first: unpinned, sentence-transformers would pull torch with GBs of CUDA
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/lore demo

test: setup
	# two workers, each test file whole in one of them (docs/testing.md); TEST_WORKERS=0: one process
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/mypy

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
