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
import shutil
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

    from skadapt import EvaluateConfig, ExportConfig, load_recipe
    from skadapt.evaluate.stage import run_evaluation
    from skadapt.export.int8 import choose, machine, make_variants
    from skadapt.export.onnx import copy_model_dir, export_fp32
    from skadapt.export.speed import measure_models
    from skadapt.export.stage import speed_texts, training_corpus
    from skadapt.modeldir import finalize_model_dir
    from skadapt.results.export import Int8Candidate
    from skadapt.tasks.backends import load_sentence_model
    from skadapt.tasks.contamination import gather_test_texts

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    recipe = load_recipe(args.recipe)
    assert recipe.evaluate is not None
    suites = list(recipe.evaluate.tasks)
    shutil.rmtree(args.out, ignore_errors=True)
    model_dir = args.out / "model"
    copy_model_dir(Path(args.model), model_dir)
    finalize_model_dir(model_dir)
    model = load_sentence_model(str(model_dir))
    fp32 = model_dir / "onnx" / "model.onnx"
    inputs = export_fp32(model, fp32)
    config = ExportConfig()
    finetune_dir = args.finetune_dir or str(Path(args.model).parent / "finetune")
    test_texts, _ = gather_test_texts(suites, False, language="slk")
    corpus = training_corpus(
        config,
        args.model,
        finetune_dir=finetune_dir,
        eval_tasks=suites,
        test_texts=test_texts,
        language="sk",
        seed=42,
    )
    machine_info = machine()
    made = make_variants(
        model,
        fp32,
        inputs,
        machine_info["family"],
        corpus_texts=corpus.texts if corpus is not None else None,
        dev=recipe.renorm_dev(),
        test_texts=test_texts,
        batch_size=config.batch_size,
    )
    del model
    prepared = time.perf_counter() - started

    texts = speed_texts(ExportConfig(speed_texts=args.texts), suites, None, 42)
    texts_file = args.out / "speed_texts.json"
    texts_file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    refs = {"pytorch": str(model_dir), **{item.variant.name: str(item.path) for item in made.made}}
    start = time.perf_counter()
    speed = measure_models(refs, texts_file, config.batch_size, args.repeats, args.threads)
    speed_seconds = time.perf_counter() - start

    start = time.perf_counter()
    evaluation = EvaluateConfig(tasks=suites, prompt_policy=dict(recipe.evaluate.prompt_policy))
    models = {"final": str(model_dir), **{item.variant.name: str(item.path) for item in made.made}}
    table, _, verdicts = run_evaluation(
        evaluation,
        models,
        args.out / "evaluate",
        language="slk",
        cache_dir=None,
        parents={item.variant.name: "final" for item in made.made},
    )
    eval_seconds = time.perf_counter() - start
    means = {row.model: row for row in table.rows}
    by_tier = {v.b: v for v in verdicts}
    base = speed["pytorch"]["texts_per_s"]
    candidates = [
        Int8Candidate(
            name=item.variant.name,
            settings=item.variant.settings(),
            speedup=round(speed[item.variant.name]["texts_per_s"] / base, 2),
            dev=item.dev,
            agreement=item.agreement,
        )
        for item in made.made
    ]
    choice = choose(candidates, made.parent_dev, made.family, made.agreement_texts)
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
    for item, candidate in zip(made.made, candidates, strict=True):
        name = item.variant.name
        verdict = by_tier[name]
        worst = min(verdict.tasks.items(), key=lambda kv: kv[1]["delta"])
        worst_text = f"{worst[0][:14]} {worst[1]['delta']:+.2f}"
        interval = f"{verdict.mean_diff:+.2f} [{verdict.ci_low:+.2f}, {verdict.ci_high:+.2f}]"
        print(
            f"{name + (' *' if name == choice.kept else ''):32} {means[name].All:6.2f} {interval:>22} "
            f"{worst_text:>26} {item.dev if item.dev is not None else float('nan'):6.2f} "
            f"{item.agreement if item.agreement is not None else float('nan'):7.4f} "
            f"{speed[name]['texts_per_s']:8.1f} {candidate.speedup:5.2f} {size_mb(item.path):6.1f}"
        )
    print(f"kept by the export rule (*): {choice.kept}: {choice.reason} (worth deploying: {choice.worth})")
    print(
        f"seconds: quantization + dev scoring {prepared:.0f}, speed {speed_seconds:.0f}, "
        f"evaluation {eval_seconds:.0f}, total {time.perf_counter() - started:.0f}"
    )
    report = {
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
        "sizes_mb": {item.variant.name: round(size_mb(item.path), 2) for item in made.made},
        "fp32_mb": round(fp32_mb, 2),
    }
    (args.out / "int8_variants.json").write_text(
        json.dumps(report, indent=1, default=float), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
