"""Deployment tiers vs the PyTorch model they come from: texts/s, peak memory and size (side by side in one
run, each model in its own process on the same texts and threads) and quality on an evaluation suite
(the same table and verdicts as the pipeline: each tier's mean Δ with its 90% interval).

    OMP_NUM_THREADS=2 .venv/bin/python benchmark/export_tiers.py runs/demo_sk/finetune \
        --suite data/demo_sk/suite/suite.yaml --out /tmp/bench_export

Goals (issue 22): int8 ONNX ≥ 2× the PyTorch model's texts/s at ≤ 1 point mean loss; static ≥ 100×.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from skadapt import ExportConfig
from skadapt.export.stage import (
    export_tiers,
    speed_texts,
    training_corpus,
)

DEMO_POLICY = dict.fromkeys(
    ("STS", "PairClassification", "Classification", "Clustering", "BitextMining"), "query: "
)
"""recipes/demo_sk.yaml's evaluate.prompt_policy."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="sentence-transformers model directory (the final model)")
    parser.add_argument("--suite", default="data/demo_sk/suite/suite.yaml")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_export"))
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from skadapt import EvaluateConfig
    from skadapt.evaluate.stage import run_evaluation

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    config = ExportConfig(speed_texts=args.texts, speed_repeats=args.repeats)
    texts = speed_texts(config, [args.suite], None, 42)
    start = time.perf_counter()
    corpus = training_corpus(  # the static tier's (export.static_training's default corpus)
        config,
        args.model,
        finetune_dir=None,
        eval_tasks=[args.suite],
        test_texts=None,
        language="sk",
        seed=42,
    )
    report = export_tiers(args.model, args.out, config, texts, corpus, 42)
    print(f"export: {time.perf_counter() - start:.1f} s (incl. the speed runs)")
    models = {"final": args.model, **{t: str(args.out / rel) for t, rel in report["tiers"].items()}}
    table, _, verdicts = run_evaluation(
        EvaluateConfig(tasks=[args.suite], prompt_policy=DEMO_POLICY),
        models,
        args.out / "evaluate",
        language="slk",
        cache_dir=None,
        parents=dict.fromkeys(report["tiers"], "final"),
    )
    means = {row.model: row.All for row in table.rows}
    loss = {v.b: v for v in verdicts}
    speed = report["speed"]
    parity = report["parity"]
    print(
        f"fp32 ONNX max |Δ| {parity['fp32_max_abs_delta']:.2e}; int8 mean cosine "
        f"{parity.get('int8_mean_cosine', float('nan')):.4f}"
    )
    print(
        f"{'model':10} {'texts/s':>9} {'×':>7} {'× min/median/max':>18} {'peak MB':>8} {'MB':>7} "
        f"{'mean':>7}  Δ [90% CI]"
    )
    for label, row in speed.items():
        name = "final" if label == "pytorch" else label
        verdict = loss.get(name)
        delta = f"{verdict.mean_diff:+.2f} [{verdict.ci_low:+.2f}, {verdict.ci_high:+.2f}]" if verdict else ""
        rounds = row["speedup_rounds"]
        spread = f"{rounds['min']:.2f}/{rounds['median']:.2f}/{rounds['max']:.2f}"
        print(
            f"{label:10} {row['texts_per_s']:9.1f} {row['speedup']:7.2f} {spread:>18} "
            f"{row['peak_rss_mb']:8.0f} {row['size_mb']:7.1f} {means[name]:7.2f}  {delta}"
        )


if __name__ == "__main__":
    main()
