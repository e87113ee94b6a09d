"""Short vectors by truncation vs by a rotation fitted on corpus text: each model's ``dims-<d>`` tier
(truncate + renormalize, as the export stage makes it) beside a tier that projects the embedding on its top
``d`` right singular vectors — of the model's embeddings of a training-corpus sample (the ``query:`` and
``passage:`` encodings of the same sentences; no evaluation text), uncentered ("svd") or centered ("pca")
— as a ``Dense`` + ``Normalize`` after its last module. One evaluation, the pipeline's table and verdicts
(each tier against its model).

    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python benchmark/dims_rotation.py \
        plain=/tmp/mrl/finetune-plain-nowise mrl=/tmp/mrl/finetune-mrl-nowise --out /tmp/bench_rotation

A diagnostic for issue 31's goal (128 dimensions within 1.0 point of the full model): skadapt's dims
tiers truncate; this measures what a fitted rotation would add.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import numpy as np

from skadapt import export_dims, load_recipe


def rotation_tier(model_dir: str, texts: list[str], dim: int, centered: bool, out: Path) -> None:
    """Save ``model_dir`` + Dense(top-``dim`` singular vectors of its corpus embeddings) + Normalize."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    model = SentenceTransformer(model_dir, device="cpu")
    prompts = [model.prompts.get("query", ""), model.prompts.get("passage", "")]
    embeddings = np.concatenate([model.encode(texts, prompt=p) for p in prompts]).astype(np.float64)
    mean = embeddings.mean(axis=0) if centered else np.zeros(embeddings.shape[1])
    weight = np.linalg.svd(embeddings - mean, full_matrices=False)[2][:dim]
    dense = Dense(
        embeddings.shape[1],
        dim,
        bias=True,
        activation_function=torch.nn.Identity(),
        init_weight=torch.tensor(weight, dtype=torch.float32),
        init_bias=torch.tensor(-(weight @ mean), dtype=torch.float32),
    )
    tier = SentenceTransformer(modules=[*list(model), dense, Normalize()], device="cpu")
    tier.prompts = model.prompts
    tier.save(str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="LABEL=DIR of each model")
    parser.add_argument("--corpus", default="data/demo_sk/train/qa.jsonl", help="training-corpus source")
    parser.add_argument("--text-column", default="passage")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--recipe", default="recipes/demo_sk.yaml", help="its evaluate section is used")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_rotation"))
    args = parser.parse_args()

    from sentence_transformers import SentenceTransformer

    from skadapt import iter_texts, sample_sentences
    from skadapt.evaluate.stage import run_evaluation

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    recipe = load_recipe(args.recipe)
    assert recipe.evaluate is not None, f"{args.recipe} has no evaluate section"
    language = recipe.run_facts().text_language
    sample = sample_sentences(
        iter_texts(args.corpus, args.text_column), args.samples, min_chars=40, max_chars=512,
        seed=recipe.seed, language=language, exclude=set(),
    )  # fmt: skip
    print(f"{len(sample.sentences)} corpus sentences from {args.corpus}")
    models: dict[str, str] = {}
    parents: dict[str, str] = {}
    for spec in args.models:
        label, _, model_dir = spec.partition("=")
        models[label] = model_dir
        dimension = SentenceTransformer(model_dir, device="cpu").get_embedding_dimension()
        export_dims(Path(model_dir), args.out / label, [args.dim], dimension)
        tiers = {f"{label}-dims-{args.dim}": args.out / label / f"dims-{args.dim}"}
        for kind in ("svd", "pca"):
            tiers[f"{label}-{kind}-{args.dim}"] = args.out / label / f"{kind}-{args.dim}"
            rotation_tier(
                model_dir, sample.sentences, args.dim, kind == "pca", tiers[f"{label}-{kind}-{args.dim}"]
            )
        models |= {name: str(path) for name, path in tiers.items()}
        parents |= dict.fromkeys(tiers, label)
    table, _, verdicts = run_evaluation(
        recipe.evaluate, models, args.out / "evaluate", language=recipe.language, cache_dir=None,
        seed=recipe.seed, parents=parents,
    )  # fmt: skip
    means = {row.model: row.all for row in table.rows}
    loss = {v.b: v for v in verdicts}
    for label in models:
        verdict = loss.get(label)
        delta = f"{verdict.mean_diff:+.2f} [{verdict.ci_low:+.2f}, {verdict.ci_high:+.2f}]" if verdict else ""
        print(f"{label:22} {means[label]:7.2f}  {delta}")
    print(f"report: {args.out / 'evaluate' / 'report.md'}")


if __name__ == "__main__":
    main()
