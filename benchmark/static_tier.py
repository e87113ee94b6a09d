"""The static tier distilled vs trained on its parent, from the same parent in one run: quality on an
evaluation suite (skadapt's evaluation, each static model's verdict against the parent: mean Δ with its
90% interval), agreement with the parent on held-out texts, and texts/s (the export stage's measurement:
fresh processes, the static model and the parent taking turns, the fastest of the rounds). Each variant
is made by the public ``export_tiers`` (``export.static_training`` null: distilled; else trained for
``--epochs``), one export per variant; × is against the parent of the same export's rounds.

    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python benchmark/static_tier.py /work/baseline_demo/finetune \
        --suite data/demo_sk/suite/suite.yaml --out /tmp/bench_static

The trained model's corpus is the export's default: the texts of the datasets the parent was fine-tuned on
(its training_report.json), less the suite's texts. Held-out agreement: the Pearson correlation of the
pairwise cosines of a static model with the parent's on the dev sets' texts (``--heldout``, never trained
on), whatever the space each model's vectors live in.

Goal (issue 31): the static tier within 12 points of its parent on the demo suite, ≥ 100× its texts/s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

DEMO_POLICY = dict.fromkeys(
    ("STS", "PairClassification", "Classification", "Clustering", "BitextMining"), "query: "
)
"""recipes/demo_sk.yaml's evaluate.prompt_policy."""
DEMO_DEV = (
    "data/demo_sk/train/sts_dev.jsonl",
    "data/demo_sk/train/qa_dev.jsonl",
    "data/demo_sk/train/nli_dev.jsonl",
)
"""The demo's dev sets (recipes/demo_sk.yaml's finetune.dev): held-out texts, never trained on."""


def heldout_texts(files: list[str]) -> list[str]:
    """Every string value of the rows of the JSONL ``files``, unique, sorted."""
    texts: set[str] = set()
    for file in files:
        for line in Path(file).read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.update(v.strip() for v in json.loads(line).values() if isinstance(v, str) and v.strip())
    return sorted(texts)


def agreement(model: Any, parent_vectors: np.ndarray, texts: list[str]) -> float:
    """Pearson correlation of the pairwise cosines of ``model``'s embeddings of ``texts`` with the
    parent's."""
    ours = model.encode(texts, prompt="query: ", convert_to_numpy=True, normalize_embeddings=True)
    upper = np.triu_indices(len(texts), 1)
    return float(np.corrcoef((ours @ ours.T)[upper], (parent_vectors @ parent_vectors.T)[upper])[0, 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parent", help="sentence-transformers model directory (the final model)")
    parser.add_argument("--suite", default="data/demo_sk/suite/suite.yaml")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_static"))
    parser.add_argument("--heldout", nargs="*", default=list(DEMO_DEV), help="JSONL files of held-out texts")
    parser.add_argument("--texts", type=int, default=1000, help="texts per speed pass")
    parser.add_argument("--repeats", type=int, default=3, help="speed rounds (the fastest counts)")
    parser.add_argument(
        "--epochs", type=float, nargs="*", default=[0.0, 1.0], help="trained variants: epochs of each"
    )
    args = parser.parse_args()

    from sentence_transformers import SentenceTransformer

    from skadapt import EvaluationReport, ExportReport
    from skadapt.api import EvaluateConfig, ExportConfig, export_tiers, run_evaluation

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    # each variant is the export stage's static tier (a one-stage run: its fp32 ONNX file comes along), its
    # texts/s measured against the parent in that export's rounds; the trained ones on the export's default
    # corpus (the parent's fine-tuning texts less the suite's)
    variants: dict[str, dict[str, Any] | None] = {"distilled": None}
    variants |= {f"trained-{epochs:g}ep": {"epochs": epochs} for epochs in args.epochs}
    models = {"parent": args.parent}
    speed: dict[str, float] = {}
    ratio = {"parent": 1.0}
    for label, training in variants.items():
        config = ExportConfig(
            tiers=["static"], static_training=training, speed_texts=args.texts, speed_repeats=args.repeats
        )
        start = time.perf_counter()
        export_tiers(args.parent, config, language="slk", out=args.out / label, eval_tasks=[args.suite])
        report = ExportReport.read(args.out / label)
        assert report is not None and report.static is not None, f"{label}: the export made no static tier"
        models[label] = str(args.out / label / report.tiers["static"])
        speed[label] = report.speed["static"]["texts_per_s"]
        ratio[label] = report.speed["static"]["speedup"]
        speed.setdefault("parent", report.speed["pytorch"]["texts_per_s"])  # the first export's parent
        made = report.static.as_json()
        print(f"{label} ({time.perf_counter() - start:.0f} s export): {json.dumps(made, ensure_ascii=False)}")

    heldout = heldout_texts(args.heldout)
    parent_vectors = SentenceTransformer(args.parent, device="cpu").encode(
        heldout, prompt="query: ", convert_to_numpy=True, normalize_embeddings=True
    )
    agree = {
        label: agreement(SentenceTransformer(ref, device="cpu"), parent_vectors, heldout)
        for label, ref in models.items()
        if label != "parent"
    }

    # one evaluation; each static model is compared with the parent its export report names
    evaluation = args.out / "evaluate"
    run_evaluation(
        models, EvaluateConfig(tasks=[args.suite], prompt_policy=DEMO_POLICY), language="slk", out=evaluation
    )
    scores = EvaluationReport.read(evaluation)
    assert scores is not None, "the evaluation wrote no report"
    rows = scores.rows()
    loss = {v.b: v for v in scores.verdicts}
    tasks = list(rows["parent"].tasks)
    print(f"\nheld-out texts: {len(heldout)}")
    header = [
        "model",
        *(t.removeprefix("DemoSk") for t in tasks),
        "mean",
        "Δ [90% CI]",
        "texts/s",
        "×",
        "agree",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label in models:
        row, verdict = rows[label], loss.get(label)
        delta = f"{verdict.mean_diff:+.2f} [{verdict.ci_low:+.2f}, {verdict.ci_high:+.2f}]" if verdict else ""
        cells = [label, *(f"{row.tasks[t]:.2f}" for t in tasks), f"{row.All:.2f}", delta]
        cells += [
            f"{speed[label]:,.0f}",
            f"{ratio[label]:.0f}",
            f"{agree.get(label, 1.0):.3f}",
        ]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
