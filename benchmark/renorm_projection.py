"""Renorm's dev choice with the projection candidates, on a model and a recipe's renorm config and dev sets.

One run, side by side:

- **the stage** (the public ``renormalize``, a one-stage run: its time includes the run's directory
  handling): the corpus sample, mu, the basis encodes, the
  dev texts encoded once and every candidate (none, R1, R2, ``proj-<d>``, ``R1/R2+proj-<d>``) scored from
  the embeddings with the paired bootstrap; its table of candidates, the choice and why;
- **the evaluators** (what the stage did before): none, R1 and R2 appended to the model in turn and each
  dev set's sentence-transformers evaluator run on it; their seconds, and the largest difference between
  their scores and the stage's (the scores from the embeddings must equal the evaluators').

Also prints each candidate's lower bound at one-sided 90% / 95% and at the stage's level, so a reader sees
what a looser rule would have kept.

    OMP_NUM_THREADS=2 python benchmark/renorm_projection.py runs/demo_sk/finetune \
        --recipe recipes/demo_sk.yaml --out runs/bench_renorm_projection
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="sentence-transformers directory (e.g. runs/demo_sk/finetune)")
    parser.add_argument("--recipe", default="recipes/demo_sk.yaml")
    parser.add_argument("--out", default="runs/bench_renorm_projection")
    args = parser.parse_args()

    import numpy as np
    from sentence_transformers import SentenceTransformer

    from skadapt import RenormReport, get_language, load_recipe
    from skadapt.api import renormalize
    from skadapt.blocks import build_dev_sets, renorm_modules, task_test_texts

    recipe = load_recipe(args.recipe)
    assert recipe.renorm is not None and recipe.evaluate is not None
    tasks = list(recipe.evaluate.tasks)
    dev = recipe.run_facts().dev
    assert dev is not None, "the recipe has no dev sets (renorm.dev or finetune.dev)"
    language = get_language(recipe.language)
    test_texts = task_test_texts(tasks, language=language)
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    started = time.perf_counter()
    renormalize(  # the stage alone (a one-stage run), chosen on the recipe's renorm dev sets
        args.model,
        recipe.renorm.model_copy(update={"dev": dev}),
        language=language,
        out=out / "renorm",
        seed=recipe.seed,
        eval_tasks=tasks,
    )
    stage_seconds = time.perf_counter() - started
    result = RenormReport.read(out / "renorm")
    assert result is not None, "the renorm stage wrote no report"
    selection = result.selection
    assert selection is not None

    model = SentenceTransformer(args.model)
    sets = build_dev_sets(dev, 32, dict(model.prompts or {}), test_texts)
    mu = np.load(out / "renorm" / "renorm_mu.npy")
    old: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for name in ("none", "r1", "r2"):
        modules = renorm_modules(mu, name)
        for module in modules:
            model.append(module)
        old[name] = {s.evaluator.name: float(s.evaluator(model)[s.metric]) for s in sets}
        for _ in modules:
            del model[-1]
    evaluator_seconds = time.perf_counter() - started

    assert selection.confidence is not None
    alpha = (1 - selection.confidence) / (len(selection.candidates) - 1)
    sets_named = list(selection.metrics)
    print(f"\nmodel {args.model}; dev sets {', '.join(sets_named)}")
    print(f"the stage: {stage_seconds:.1f} s {result.seconds}")
    levels = f"90% / 95% / {1 - alpha:.3%} low"
    print(f"| candidate | d | {' | '.join(sets_named)} | mean | vs none (points) | {levels} |")
    print("|---|---|" + "---|" * len(sets_named) + "---|---|---|")
    for candidate in selection.candidates:
        scores = " | ".join(f"{candidate.scores[s]:.4f}" for s in sets_named)
        if candidate.interval is None or candidate.lower_bounds is None:
            versus, lows = "—", "—"
        else:
            low, high = candidate.interval
            versus = f"{100 * candidate.difference:+.2f} [{100 * low:+.2f}, {100 * high:+.2f}]"
            bounds = [*candidate.lower_bounds.values(), low]
            lows = " / ".join(f"{100 * bound:+.2f}" for bound in bounds)
        row = [candidate.name, str(candidate.dimension), scores, f"{candidate.mean:.4f}", versus, lows]
        print(f"| {' | '.join(row)} |")
    print(f"\nchoice: {selection.choice}: {selection.reason}")
    mine = {c.name: c.scores for c in selection.candidates}
    gap = max(abs(mine[n][s] - old[n][s]) for n in old for s in old[n])
    print(
        f"the evaluators on none/R1/R2 appended: {evaluator_seconds:.1f} s (the stage's dev choice of all "
        f"{len(selection.candidates)} candidates: {result.seconds.get('select', 0):.1f} s); largest score "
        f"difference to the stage's {gap:.2e}"
    )


if __name__ == "__main__":
    main()
