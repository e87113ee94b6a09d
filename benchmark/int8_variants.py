"""The int8 ONNX variants of a model side by side (issue 39): quality on an evaluation suite (All-mean and
its Δ to the PyTorch parent with the 90% paired bootstrap interval: the evaluate stage's tier verdict), dev
score and agreement with the parent (what the export stage chooses on), texts/s against the parent on
this machine (one process per model that loads once; the models take turns, fastest of the rounds) and
file size; then the variant the export stage would keep and why.

    OMP_NUM_THREADS=2 .venv/bin/python benchmark/int8_variants.py runs/demo_sk/finetune \
        --recipe recipes/demo_sk.yaml --out /tmp/bench_int8

The recipe gives the dev sets (``renorm.dev``, else ``finetune.dev``), the evaluation suite and its
prompt policy; the export corpus (the fine-tuning texts, never an evaluation text) calibrates the static
variant. The machine's load (1-minute load average) is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path


def size_mb(path: Path) -> float:
    """A file's size in MiB."""
    return path.stat().st_size / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="sentence-transformers model directory (the demo's final model)")
    parser.add_argument("--recipe", default="recipes/demo_sk.yaml")
    parser.add_argument("--finetune-dir", default=None, help="its fine-tuning directory (training report)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_int8"))
    parser.add_argument("--texts", type=int, default=1000, help="speed texts (the suite's, seeded)")
    parser.add_argument("--repeats", type=int, default=3, help="speed rounds")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from skadapt import EvaluationReport, load_recipe
    from skadapt.api import EvaluateConfig, ExportConfig, run_evaluation
    from skadapt.blocks import choose_int8, measure_speed, quantize_int8, speed_texts

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    recipe = load_recipe(args.recipe)
    assert recipe.evaluate is not None
    suites = list(recipe.evaluate.tasks)
    config = ExportConfig()
    made = quantize_int8(
        args.model,
        args.out,
        language="slk",
        dev=recipe.run_facts().dev,
        finetune_dir=args.finetune_dir or str(Path(args.model).parent / "finetune"),
        eval_tasks=suites,
        batch_size=config.batch_size,
    )
    model_dir, fp32, machine_info = made.model_dir, made.fp32, made.machine
    prepared = time.perf_counter() - started

    texts = speed_texts(ExportConfig(speed_texts=args.texts), suites, None, 42)
    (args.out / "speed_texts.json").write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    refs = {"pytorch": str(model_dir), **{item.name: str(item.path) for item in made.variants}}
    start = time.perf_counter()
    speed = measure_speed(
        refs, texts, batch_size=config.batch_size, repeats=args.repeats, threads=args.threads
    )
    speed_seconds = time.perf_counter() - start

    start = time.perf_counter()
    evaluation = EvaluateConfig(tasks=suites, prompt_policy=dict(recipe.evaluate.prompt_policy))
    models = {"final": str(model_dir), **{item.name: str(item.path) for item in made.variants}}
    run_evaluation(
        models,
        evaluation,
        language="slk",
        out=args.out / "evaluate",
        recompute=True,
        tiers={item.name: "final" for item in made.variants},
    )
    report = EvaluationReport.read(args.out / "evaluate")
    assert report is not None, "the evaluate stage wrote no report"
    eval_seconds = time.perf_counter() - start
    means = {row.model: row for row in report.models}
    by_tier = {v.b: v for v in report.verdicts}
    base = speed["pytorch"]["texts_per_s"]
    speedups = {item.name: round(speed[item.name]["texts_per_s"] / base, 2) for item in made.variants}
    choice = choose_int8(made, speedups)
    load_after = os.getloadavg()[0]

    print(
        f"machine: {machine_info['cpu']}, {machine_info['cores']} cores, family {machine_info['family']}; "
        f"{args.threads} threads; load average {load_before:.2f} before, {load_after:.2f} after"
    )
    print(
        f"speed: {len(texts)} suite texts, batch {config.batch_size}, fastest of {args.repeats} rounds; "
        f"dev agreement on {made.agreement_texts}; PyTorch dev {made.parent_dev}"
    )
    header = (
        f"{'model':32} {'All':>6} {'Δ [90% CI]':>22} {'worst task Δ':>26} {'dev':>6} {'agree':>7} "
        f"{'texts/s':>8} {'×':>5} {'MB':>6}"
    )
    print(header)
    fp32_mb = fp32.stat().st_size / 2**20
    torch_mb = (model_dir / "model.safetensors").stat().st_size / 2**20
    print(
        f"{'final (PyTorch)':32} {means['final'].All:6.2f} {'':>22} {'':>26} "
        f"{made.parent_dev if made.parent_dev is not None else float('nan'):6.2f} {'':>7} "
        f"{base:8.1f} {1.0:5.2f} {torch_mb:6.1f}"
    )
    for item in made.variants:
        name = item.name
        verdict = by_tier[name]
        worst = min(verdict.tasks.items(), key=lambda kv: kv[1]["delta"])
        worst_text = f"{worst[0][:14]} {worst[1]['delta']:+.2f}"
        interval = f"{verdict.mean_diff:+.2f} [{verdict.ci_low:+.2f}, {verdict.ci_high:+.2f}]"
        print(
            f"{name + (' *' if name == choice.kept else ''):32} {means[name].All:6.2f} {interval:>22} "
            f"{worst_text:>26} {item.dev if item.dev is not None else float('nan'):6.2f} "
            f"{item.agreement if item.agreement is not None else float('nan'):7.4f} "
            f"{speed[name]['texts_per_s']:8.1f} {speedups[name]:5.2f} {size_mb(item.path):6.1f}"
        )
    print(f"kept by the export rule (*): {choice.kept}: {choice.reason} (worth deploying: {choice.worth})")
    print(
        f"seconds: quantization + dev scoring {prepared:.0f}, speed {speed_seconds:.0f}, "
        f"evaluation {eval_seconds:.0f}, total {time.perf_counter() - started:.0f}"
    )
    summary = {
        "machine": machine_info,
        "threads": args.threads,
        "load": [load_before, load_after],
        "speed": speed,
        "choice": choice.model_dump(),
        "quality": {
            name: {"All": means[name].All, "delta": v.mean_diff, "low": v.ci_low, "high": v.ci_high}
            for name, v in by_tier.items()
        },
        "final_All": means["final"].All,
        "sizes_mb": {item.name: round(size_mb(item.path), 2) for item in made.variants},
        "fp32_mb": round(fp32_mb, 2),
    }
    (args.out / "int8_variants.json").write_text(
        json.dumps(summary, indent=1, default=float), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
