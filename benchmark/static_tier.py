"""The static tier distilled vs trained on its parent, from the same parent in one run: quality on an
evaluation suite (skadapt's evaluation, each static model's verdict against the parent: mean Δ with its
90% interval), agreement with the parent on held-out texts, and texts/s (the export stage's measurement:
fresh processes, the models taking turns, the fastest of the rounds).

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

    import torch

    from skadapt import EvaluateConfig, ExportConfig
    from skadapt.evaluate.stage import run_evaluation
    from skadapt.export.config import StaticTraining
    from skadapt.export.speed import measure
    from skadapt.export.stage import speed_texts, training_corpus
    from skadapt.export.static import distill_static
    from skadapt.export.static_train import train_static
    from skadapt.tasks.backends import load_sentence_model

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    config = ExportConfig(tiers=["static"], speed_texts=args.texts, speed_repeats=args.repeats)
    parent = load_sentence_model(args.parent)
    corpus = training_corpus(
        config,
        args.parent,
        finetune_dir=None,
        eval_tasks=[args.suite],
        test_texts=None,
        language="sk",
        seed=42,
    )
    assert corpus is not None
    models = {"parent": args.parent}
    built: dict[str, dict[str, Any]] = {}
    start = time.perf_counter()
    built["distilled"] = distill_static(
        parent, args.out / "distilled", pca_dims=config.pca_dims, sif_coefficient=config.sif_coefficient
    )
    built["distilled"]["seconds"] = {"distill": round(time.perf_counter() - start, 1)}
    models["distilled"] = str(args.out / "distilled")
    for epochs in args.epochs:
        label = f"trained-{epochs:g}ep"
        training = StaticTraining(epochs=epochs)
        built[label] = train_static(
            parent, args.out / label, training, corpus, pca_dims=config.pca_dims, seed=42
        )
        models[label] = str(args.out / label)
    for label, report in built.items():
        print(f"{label}: {json.dumps(report, ensure_ascii=False)}")

    heldout = heldout_texts(args.heldout)
    parent_vectors = parent.encode(
        heldout, prompt="query: ", convert_to_numpy=True, normalize_embeddings=True
    )
    agree = {
        label: agreement(load_sentence_model(ref), parent_vectors, heldout)
        for label, ref in models.items()
        if label != "parent"
    }

    texts = speed_texts(config, [args.suite], None, 42)
    texts_file = args.out / "speed_texts.json"
    texts_file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    threads = torch.get_num_threads()
    runs: dict[str, list[float]] = {label: [] for label in models}
    for _ in range(args.repeats):
        for label, ref in models.items():
            runs[label].append(measure(ref, texts_file, config.batch_size, 1, threads)["texts_per_s"])
    speed = {label: max(values) for label, values in runs.items()}

    table, _, verdicts = run_evaluation(
        EvaluateConfig(tasks=[args.suite], prompt_policy=DEMO_POLICY),
        models,
        args.out / "evaluate",
        language="slk",
        cache_dir=None,
        parents={label: "parent" for label in models if label != "parent"},
    )
    rows = {row.model: row for row in table.rows}
    loss = {v.b: v for v in verdicts}
    tasks = list(rows["parent"].tasks)
    print(f"\nheld-out texts: {len(heldout)}; corpus texts: {len(corpus.texts)}; {threads} threads")
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
        cells = [label, *(f"{row.tasks[t]:.2f}" for t in tasks), f"{row.all:.2f}", delta]
        cells += [
            f"{speed[label]:,.0f}",
            f"{speed[label] / speed['parent']:.0f}",
            f"{agree.get(label, 1.0):.3f}",
        ]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
