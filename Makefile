# One-command set-up: `make demo` runs the offline demo recipe, `make test` runs the tests.
# Each target installs the project into .venv first (idempotent).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export OMP_NUM_THREADS ?= 2
export HF_HUB_OFFLINE ?= 1

.PHONY: install test demo lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	# torch first: the local CPU wheel (an unpinned torch would pull GBs of CUDA packages).
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

test: install
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check skadapt tests benchmark
	$(BIN)/ruff format --check skadapt tests benchmark

clean:
	rm -rf $(VENV) .pytest_cache
