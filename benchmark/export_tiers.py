"""Deployment tiers vs the PyTorch model they come from: texts/s, peak memory and size (side by side in one
run, each model in its own process on the same texts and threads) and quality on an evaluation suite
(the same table and verdicts as the pipeline: each tier's mean Δ with its 90% interval). The public
``export_tiers`` and ``run_evaluation``, each a one-stage run: the export's time includes its directory
handling.

    OMP_NUM_THREADS=2 .venv/bin/python benchmark/export_tiers.py runs/demo_sk/finetune \
        --suite data/demo_sk/suite/suite.yaml --out /tmp/bench_export

Goals (issue 22): int8 ONNX ≥ 2× the PyTorch model's texts/s at ≤ 1 point mean loss; static ≥ 100×.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from skadapt import EvaluationReport, ExportReport
from skadapt.api import EvaluateConfig, ExportConfig

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

    from skadapt.api import export_tiers, run_evaluation

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    config = ExportConfig(speed_texts=args.texts, speed_repeats=args.repeats)
    start = time.perf_counter()
    # the export stage as a one-stage run: speed texts from the suite, the static tier's corpus
    # (export.static_training's default), the tiers and their speed runs
    summary = export_tiers(
        args.model, config, language="slk", out=args.out / "export", eval_tasks=[args.suite]
    )
    print(f"export: {time.perf_counter() - start:.1f} s (incl. the speed runs)")
    report = ExportReport.read(args.out / "export")
    assert report is not None, "the export wrote no report"
    models = {"final": args.model, **{t: str(args.out / "export" / rel) for t, rel in report.tiers.items()}}
    # the tiers are compared with "final", the model their export report names
    evaluation = args.out / "evaluate"
    run_evaluation(
        models, EvaluateConfig(tasks=[args.suite], prompt_policy=DEMO_POLICY), language="slk", out=evaluation
    )
    scores = EvaluationReport.read(evaluation)
    assert scores is not None, "the evaluation wrote no report"
    means = {label: row.All for label, row in scores.rows().items()}
    loss = {v.b: v for v in scores.verdicts}
    speed = report.speed
    parity = summary.parity
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
