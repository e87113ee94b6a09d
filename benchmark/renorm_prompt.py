"""Which prompt should the renorm mean be estimated with? base vs R1/R2 x (none, query, passage).

Estimates mu on tests/data/sk_corpus.txt (disjoint from the suite) with each prompt, builds R1 and R2
models, and evaluates all of them on the Slovak suite tests/data/suite_sk with the E5 prompt policy.

    OMP_NUM_THREADS=2 python benchmark/renorm_prompt.py [MODEL] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests/data/suite_sk/suite.yaml"
CORPUS = ROOT / "tests/data/sk_corpus.txt"
E5_POLICY = {
    t: "query: " for t in ("STS", "PairClassification", "Classification", "Clustering", "BitextMining")
}


def main() -> None:
    """Run the comparison and print the markdown report."""
    from skadapt.evaluate.report import report_markdown
    from skadapt.evaluate.selection import evaluation_texts
    from skadapt.evaluate.stage import run_evaluation
    from skadapt.recipe import RenormConfig
    from skadapt.renorm import renormalize

    parser = argparse.ArgumentParser()
    parser.add_argument(
        "model", nargs="?", default=str(Path.home() / ".cache/skadapt-offline/multilingual-e5-small")
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--prompts", default="none,query,passage")
    args = parser.parse_args()
    work = Path(args.out or tempfile.mkdtemp(prefix="renorm-prompt-"))
    work.mkdir(parents=True, exist_ok=True)
    exclude = evaluation_texts([str(SUITE)])
    models = {"base": args.model}
    norms = {}
    for prompt in args.prompts.split(","):
        for method in ("r1", "r2"):
            target = work / f"{method}-{prompt}"
            if not (target / "renorm_report.json").exists():
                config = RenormConfig(corpus=str(CORPUS), method=method, samples=100_000, prompt=prompt)
                result = renormalize(args.model, target, config, exclude=exclude)
                norms[f"{method}-{prompt}"] = result.mu_norm
            models[f"{method}-{prompt}"] = str(target)
    start = time.perf_counter()
    table, items, _ = run_evaluation(
        models, [str(SUITE)], work / "eval", language="slk", cache_dir=work / "cache", prompt_policy=E5_POLICY
    )
    print(report_markdown(table, items))
    print(f"\n||mu||: {json.dumps(norms)}; evaluation {time.perf_counter() - start:.0f}s; outputs in {work}")


if __name__ == "__main__":
    main()
