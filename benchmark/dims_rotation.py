"""Short vectors by truncation vs by a rotation fitted on corpus text: each model's ``dims-<d>`` tier
(truncate + renormalize, as the export stage makes it) beside a tier that projects the embedding on its top
``d`` right singular vectors — of the model's embeddings of a training-corpus sample (the ``query:`` and
``passage:`` encodings of the same sentences; no evaluation text), uncentered ("svd") or centered ("pca")
— as a ``Dense`` + ``Normalize`` after its last module. Each tier scored beside its model by the public
``run_evaluation`` (one evaluation per tier; its verdict: the tier against the model).

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

from skadapt import load_recipe
from skadapt.blocks import export_dims


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

    from skadapt import EvaluationReport
    from skadapt.api import run_evaluation
    from skadapt.blocks import iter_texts, sample_sentences

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
    rows: list[tuple[str, float, str]] = []
    for spec in args.models:
        label, _, model_dir = spec.partition("=")
        dimension = SentenceTransformer(model_dir, device="cpu").get_embedding_dimension()
        export_dims(Path(model_dir), args.out / label, [args.dim], dimension)
        tiers = {f"{label}-dims-{args.dim}": args.out / label / f"dims-{args.dim}"}
        for kind in ("svd", "pca"):
            tiers[f"{label}-{kind}-{args.dim}"] = args.out / label / f"{kind}-{args.dim}"
            rotation_tier(
                model_dir, sample.sentences, args.dim, kind == "pca", tiers[f"{label}-{kind}-{args.dim}"]
            )
        # one evaluation per tier, the model before it (its verdict: the tier against the model); the
        # model's mteb scores come from the evaluations' shared result cache after the first
        for index, (name, path) in enumerate(tiers.items()):
            out = args.out / "evaluate" / name
            run_evaluation(
                {label: model_dir, name: str(path)}, recipe.evaluate, language=recipe.language, out=out,
                seed=recipe.seed,
            )  # fmt: skip
            report = EvaluationReport.read(out)
            assert report is not None, f"{out}: the evaluation wrote no report"
            means = {model: row.All for model, row in report.rows().items()}
            if index == 0:
                rows.append((label, means[label], ""))
            v = report.verdicts[0]
            rows.append((name, means[name], f"{v.mean_diff:+.2f} [{v.ci_low:+.2f}, {v.ci_high:+.2f}]"))
    for name, mean, delta in rows:
        print(f"{name:22} {mean:7.2f}  {delta}")
    print(f"reports: {args.out / 'evaluate'}/<tier>/report.md")


if __name__ == "__main__":
    main()
