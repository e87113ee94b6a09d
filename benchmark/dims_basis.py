"""The dims tiers' basis chosen on dev (issue 39): corpus vs corpus + parallel text vs truncation, per d.

One run: the export stage's dims bases and their choice on the recipe's dev sets (``fit_bases`` and
``choose_bases`` on the texts the stage fits on, ``export.dims_basis: auto``; with ``--export`` the whole
stage is also run and timed) on a finished model; then every candidate basis' tier at every d scored in one
evaluation on the recipe's suite beside the model. Prints, per d, each basis'
dev score (mean main score of the dev sets, and the bitext dev set's F1), the basis the export chose, and
each tier's suite score (All and BitextMining).

    nice -n 19 env OMP_NUM_THREADS=2 .venv/bin/python benchmark/dims_basis.py \
        --model runs/demo_sk/finetune --out runs/basis_check
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from skadapt import load_recipe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="the final model (e.g. a run's finetune/)")
    parser.add_argument("--recipe", default="recipes/demo_sk.yaml", help="its export/evaluate sections")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_dims_basis"))
    parser.add_argument("--bases", nargs="+", default=["corpus", "parallel", "first"], help="tiers scored")
    parser.add_argument("--export", action="store_true", help="also run and time the whole export stage")
    args = parser.parse_args()

    from skadapt import EvaluationReport, run_stage
    from skadapt.api import run_evaluation
    from skadapt.blocks import dims_bases

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    recipe = load_recipe(args.recipe)
    assert recipe.export is not None and recipe.evaluate is not None, f"{args.recipe}: export and evaluate"
    model = str(args.model)
    export_seconds = None
    if args.export:  # the whole stage, timed (its speed rounds and int8 variants dominate)
        started = time.perf_counter()
        run_stage(
            "export", {"base": model, "final": model, "finetune": model}, recipe.export,
            language=recipe.language, out=args.out / "export", recipe=recipe,
        )  # fmt: skip
        export_seconds = time.perf_counter() - started
    # the stage's dims bases and their choice on the recipe's dev sets, as the stage makes them
    bases = dims_bases(model, recipe)
    choice, choice_seconds = bases.choice, bases.seconds
    models = {"final": model}
    for d in bases.dims:
        for name in args.bases:
            tier = args.out / "tiers" / f"{name}-dims-{d}"
            bases.write_tier(name, d, tier)
            models[f"{name}-dims-{d}"] = str(tier)
    evaluation = args.out / "evaluate"
    run_evaluation(models, recipe.evaluate, language=recipe.language, out=evaluation, seed=recipe.seed)
    scored = EvaluationReport.read(evaluation)
    assert scored is not None, f"{evaluation}: the evaluation wrote no report"
    rows = scored.rows()
    bitext = next((t for t in rows["final"].types if t == "BitextMining"), None)

    if export_seconds is not None:
        print(f"export stage: {export_seconds:.1f} s")
    fitting = sum(b.get("seconds", 0) for b in choice.bases.values())
    print(f"dims bases: fitted and chosen in {choice_seconds:.1f} s (encoding the fit texts {fitting:.1f} s, "
          f"the dev sets encoded once and every basis and d scored {choice.seconds or 0:.1f} s)")  # fmt: skip
    print(f"final model: suite All {rows['final'].All:.2f}" + (
        f", BitextMining {rows['final'].types[bitext]:.2f}" if bitext else ""))  # fmt: skip
    print(
        "| d | basis | dev mean | dev bitext F1 | Δ dev vs corpus [interval] | chosen | suite All "
        "| suite Bitext |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for c in choice.choices:
        for candidate in c.candidates:
            bitext_dev = next((v for k, v in candidate.scores.items() if k.startswith("bitext")), None)
            delta = (
                f"{100 * candidate.difference:+.2f} [{100 * candidate.interval[0]:+.2f}, "
                f"{100 * candidate.interval[1]:+.2f}]"
                if candidate.interval and candidate.difference is not None
                else "—"
            )
            row = rows.get(f"{candidate.name}-dims-{c.dimension}")
            suite_all = f"{row.All:.2f}" if row else "—"
            suite_bitext = f"{row.types[bitext]:.2f}" if row and bitext else "—"
            print(
                f"| {c.dimension} | {candidate.name} | {100 * candidate.mean:.2f} | "
                f"{'—' if bitext_dev is None else f'{100 * bitext_dev:.2f}'} | {delta} | "
                f"{'**yes**' if candidate.name == c.chosen else ''} | {suite_all} | {suite_bitext} |"
            )
    print(json.dumps({c.dimension: c.reason for c in choice.choices}, indent=1))
    print(f"report: {evaluation / 'report.md'}")


if __name__ == "__main__":
    main()
