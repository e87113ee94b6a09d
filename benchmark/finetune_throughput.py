"""Training throughput of ``skadapt finetune`` vs a plain sentence-transformers script, same settings/data.

Each variant runs in its own subprocess (so peak memory is its own), alternating, ``--repeats`` times;
the median samples/s is reported with the ratio skadapt / plain (goal >= 0.95). Both variants train the
same model on the same two datasets (Slovak NLI triplets with MNRL, Slovak STS pairs with cosine loss,
``tests/data/finetune``) with the same arguments: NO_DUPLICATES batches, proportional sampling, prompts,
AdamW lr 2e-5, linear warm-up 10%, ``--steps`` optimizer steps.

    OMP_NUM_THREADS=2 python benchmark/finetune_throughput.py                     # tiny model, CPU
    python benchmark/finetune_throughput.py --model /path/to/multilingual-e5-small --bf16 --steps 200
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "finetune"
sys.path.insert(0, str(ROOT))


def finetune_section(args: argparse.Namespace) -> dict[str, Any]:
    """The recipe finetune section both variants implement."""
    return {
        "datasets": [
            {"name": "nli", "kind": "nli", "source": str(DATA / "sk_train_nli.jsonl")},
            {"name": "sts", "kind": "sts", "source": str(DATA / "sk_train_sts.jsonl")},
        ],
        "batch_size": args.batch_size,
        "max_steps": args.steps,
        "max_seq_length": args.seq_len,
        "bf16": args.bf16,
        "save_steps": 10**9,
    }


def peak_memory() -> dict[str, float]:
    """Peak RSS of this process (MiB) and, on CUDA, peak allocated GPU memory (MiB)."""
    memory = {"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    import torch

    if torch.cuda.is_available():
        memory["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return memory


def run_skadapt(args: argparse.Namespace) -> dict[str, Any]:
    """Train through skadapt's finetune stage function."""
    from skadapt.recipe import validate_recipe
    from skadapt.train.stage import finetune

    recipe = validate_recipe(
        {"name": "bench", "language": "slk", "base_model": args.model, "finetune": finetune_section(args)}
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        start = time.perf_counter()
        finetune(args.model, recipe, out, Path(tmp) / "work")
        wall = time.perf_counter() - start
        report = json.loads((out / "training_report.json").read_text(encoding="utf-8"))
    metrics = report["train_metrics"]
    return {
        "samples_per_s": metrics["train_samples_per_second"],
        "train_s": metrics["train_runtime"],
        "wall_s": wall,
    }


def run_plain(args: argparse.Namespace) -> dict[str, Any]:
    """The same training written directly against sentence-transformers (what a user would write)."""
    from datasets import load_dataset
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

    start = time.perf_counter()
    nli = load_dataset("json", data_files=str(DATA / "sk_train_nli.jsonl"), split="train")
    groups: dict[str, dict[str, list[str]]] = {}
    for row in nli:
        groups.setdefault(row["premise"], {}).setdefault(row["label"], []).append(row["hypothesis"])
    triplets: dict[str, list[str]] = {"anchor": [], "positive": [], "negative": []}
    for premise, by_label in groups.items():
        for i, positive in enumerate(by_label.get("entailment", [])):
            negatives = by_label.get("contradiction", [])
            if negatives:
                triplets["anchor"].append(premise)
                triplets["positive"].append(positive)
                triplets["negative"].append(negatives[i % len(negatives)])
    from datasets import Dataset, DatasetDict

    sts = load_dataset("json", data_files=str(DATA / "sk_train_sts.jsonl"), split="train")
    sts = sts.map(lambda row: {"score": row["score"] / 5.0})
    train = DatasetDict({"nli": Dataset.from_dict(triplets), "sts": sts})
    model = SentenceTransformer(args.model)
    model.max_seq_length = args.seq_len
    training_args = SentenceTransformerTrainingArguments(
        output_dir=tempfile.mkdtemp(),
        per_device_train_batch_size=args.batch_size,
        learning_rate=2e-5,
        warmup_steps=0.1,
        lr_scheduler_type="linear",
        weight_decay=0.01,
        max_steps=args.steps,
        bf16=args.bf16,
        seed=42,
        data_seed=42,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        multi_dataset_batch_sampler=MultiDatasetBatchSamplers.PROPORTIONAL,
        prompts={
            "nli": {"anchor": "query: ", "positive": "query: ", "negative": "query: "},
            "sts": {"sentence1": "query: ", "sentence2": "query: "},
        },
        save_strategy="no",
        logging_steps=max(1, args.steps // 50),
        report_to=[],
    )
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_args,
        train_dataset=train,
        loss={"nli": MultipleNegativesRankingLoss(model), "sts": CosineSimilarityLoss(model)},
    )
    output = trainer.train()
    with tempfile.TemporaryDirectory() as tmp:
        model.save(tmp)
    wall = time.perf_counter() - start
    metrics = output.metrics
    return {
        "samples_per_s": metrics["train_samples_per_second"],
        "train_s": metrics["train_runtime"],
        "wall_s": wall,
    }


def child(args: argparse.Namespace) -> None:
    """Run one variant and print its result as JSON on the last line."""
    result = (run_skadapt if args.variant == "skadapt" else run_plain)(args)
    result.update(peak_memory())
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", help="sentence-transformers model dir or Hub id (default: a tiny test model)"
    )
    parser.add_argument("--bf16", action="store_true", help="train in bfloat16 mixed precision")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--variant", choices=["skadapt", "plain"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        child(args)
        return
    if args.model is None:
        from tests.tiny_models import build_tiny_model

        args.model = str(build_tiny_model(Path(tempfile.mkdtemp()) / "tiny", "unigram"))
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "skadapt": []}
    for _ in range(args.repeats):
        for variant in ("plain", "skadapt"):
            command = [sys.executable, __file__, "--variant", variant, "--model", args.model]
            command += [
                "--steps",
                str(args.steps),
                "--batch-size",
                str(args.batch_size),
                "--seq-len",
                str(args.seq_len),
            ]
            command += ["--bf16"] if args.bf16 else []
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode:
                sys.exit(f"{variant} failed:\n{done.stderr[-3000:]}")
            runs[variant].append(json.loads(done.stdout.strip().splitlines()[-1]))
            speed = runs[variant][-1]["samples_per_s"]
            print(f"  run {len(runs[variant])} {variant}: {speed:.1f} samples/s", flush=True)
    summary: dict[str, Any] = {
        "model": args.model,
        "bf16": args.bf16,
        "steps": args.steps,
        "batch_size": args.batch_size,
    }
    for variant, results in runs.items():
        summary[variant] = {key: statistics.median(r[key] for r in results) for key in results[0]}
    summary["ratio"] = summary["skadapt"]["samples_per_s"] / summary["plain"]["samples_per_s"]
    header = ("variant", "samples/s", "train s", "wall s", "peak RSS MiB", "peak GPU MiB")
    print(f"{header[0]:<8} {header[1]:>10} {header[2]:>8} {header[3]:>8} {header[4]:>13} {header[5]:>13}")
    for variant in ("plain", "skadapt"):
        r = summary[variant]
        gpu = f"{r['peak_gpu_mib']:.0f}" if "peak_gpu_mib" in r else "-"
        print(
            f"{variant:<8} {r['samples_per_s']:>10.1f} {r['train_s']:>8.2f} {r['wall_s']:>8.2f} "
            f"{r['peak_rss_mib']:>13.0f} {gpu:>13}"
        )
    print(f"ratio skadapt/plain samples/s: {summary['ratio']:.3f} (goal >= 0.95)")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
