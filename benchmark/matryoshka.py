"""Matryoshka fine-tuning vs plain fine-tuning, at the full dimension and truncated: two models fine-tuned
from the same start with and without ``finetune.matryoshka_dims``, each with its ``dims-<d>`` tiers (the
export stage's truncate + renormalize directories: ``export_tiers`` with ``dims_basis: first``), scored in
one evaluation (``run_evaluation``) (the pipeline's table and
verdicts: plain → Matryoshka at the full dimension is a do-no-harm verdict, each tier against its model).

    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python -m skadapt finetune /work/baseline_demo/trim \
        --config recipes/demo_sk.yaml --out /tmp/mrl/finetune-plain
    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python -m skadapt finetune /work/baseline_demo/trim \
        --config recipes/demo_sk.yaml --set 'finetune.matryoshka_dims=[384,256,128,64]' \
        --out /tmp/mrl/finetune-mrl
    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python benchmark/matryoshka.py \
        --plain /tmp/mrl/finetune-plain --mrl /tmp/mrl/finetune-mrl --out /tmp/mrl/bench

Goals (issue 31): at 128 dimensions within 1.0 point of the full model; the full-dimension model no worse
than without Matryoshka.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from skadapt import load_recipe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plain", type=Path, required=True, help="model fine-tuned without matryoshka_dims")
    parser.add_argument("--mrl", type=Path, required=True, help="model fine-tuned with matryoshka_dims")
    parser.add_argument("--recipe", default="recipes/demo_sk.yaml", help="its evaluate section is used")
    parser.add_argument("--dims", type=int, nargs="+", default=[256, 128, 64])
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_matryoshka"))
    args = parser.parse_args()

    from skadapt import EvaluationReport
    from skadapt.api import ExportConfig, export_tiers, run_evaluation

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    recipe = load_recipe(args.recipe)
    assert recipe.evaluate is not None, f"{args.recipe} has no evaluate section"
    dims = sorted(args.dims, reverse=True)
    # the export stage's dims tiers by truncation (the fp32 ONNX file it always writes comes along; its
    # speed is measured on few texts: only the tiers' quality is read here)
    export = ExportConfig(tiers=["onnx"], dims=dims, dims_basis="first", speed_texts=64, speed_repeats=1)
    models: dict[str, str] = {}
    for label, model_dir in (("plain", args.plain), ("mrl", args.mrl)):
        export_tiers(
            model_dir, export, language=recipe.language, out=args.out / label,
            seed=recipe.seed, eval_tasks=recipe.evaluate.tasks,
        )  # fmt: skip
        models[label] = str(model_dir)
        models |= {f"{label}-dims-{d}": str(args.out / label / f"dims-{d}") for d in dims}
    # one evaluation; each dims tier is compared with its model (found by its export report)
    evaluation = args.out / "evaluate"
    run_evaluation(models, recipe.evaluate, language=recipe.language, out=evaluation, seed=recipe.seed)
    report = EvaluationReport.read(evaluation)
    assert report is not None, f"{evaluation}: the evaluation wrote no report"
    means = {label: row.All for label, row in report.rows().items()}
    by_pair = {(v.a, v.b): v for v in report.verdicts}
    print(f"mean over {len(report.task_types)} tasks ({args.recipe}); Δ to the same model at full dimension")
    print(f"{'dimension':>9}  {'plain':>7}  {'Δ [90% CI]':>22}  {'matryoshka':>10}  {'Δ [90% CI]':>22}")
    for dim in ["full", *dims]:
        cells = []
        for label in ("plain", "mrl"):
            name = label if dim == "full" else f"{label}-dims-{dim}"
            verdict = by_pair.get((label, name))
            delta = (
                f"{verdict.mean_diff:+.2f} [{verdict.ci_low:+.2f}, {verdict.ci_high:+.2f}]" if verdict else ""
            )
            cells.append(f"{means[name]:7.2f}  {delta:>22}")
        print(f"{dim!s:>9}  {cells[0]}  {cells[1]:>35}")
    full = by_pair[("plain", "mrl")]
    print(
        f"plain → matryoshka at full dimension: {full.mean_diff:+.2f} "
        f"[{full.ci_low:+.2f}, {full.ci_high:+.2f}], verdict {full.verdict}"
    )
    for label, model_dir in (("plain", args.plain), ("mrl", args.mrl)):
        dev = json.loads((model_dir / "training_report.json").read_text(encoding="utf-8")).get("dev") or {}
        metric = dev.get("metric")
        if metric:
            print(f"{label}: dev {metric} {dev['before'].get(metric):.4f} -> {dev['final'].get(metric):.4f}")
    print(f"report: {args.out / 'evaluate' / 'report.md'}")


if __name__ == "__main__":
    main()
