"""Does skadapt's fine-tuning beat the obvious script? The plain sentence-transformers arm beside skadapt's.

The **plain arm** is what a user writes by hand in 30 lines (:func:`plain_script`): the base model (not
trimmed), ``SentenceTransformerTrainer`` with MNRL on the recipe's triplets and pairs, CoSENT on its STS
pairs, the recipe's hyperparameters (batch size, learning rate, epochs, warmup, training length),
``query: ``/``passage: `` prompts, the no-duplicates batch sampler, proportional multi-dataset sampling, no
anchor, no WiSE-FT, the last weights. The **skadapt arms** fine-tune the recipe's trimmed model with the
recipe's ``finetune`` section, as ``skadapt train`` does, optionally with overrides (``--arms``):

- ``recipe``: the section as written;
- any ``NAME=KEY=VALUE[,KEY=VALUE]`` spec: the section with those fields set (dotted keys, list items by
  index; ``null`` drops one: e.g. ``bare=anchor=null,interpolation=null,dev.select_best=false``,
  ``cosent=datasets.2.loss=cosent``).

Every arm is trained for each seed (42, 43, ...) (with ``--renorm``, a skadapt arm's model then goes through
the recipe's renorm section, and its final model is the renormalized one when renorm kept it), then all
models and the base are scored on the demo suite
with mteb through skadapt's evaluation (every task type), read two ways: with the recipe's prompt policy
(``query: `` on the symmetric tasks, as skadapt's evaluation reads them) and without one (mteb's default
reading of the models' own prompts). Printed per reading: each arm's mean over seeds of every type and the
mean over tasks (All) and over types (Type) with 95% t-intervals over seeds, then each skadapt arm minus the
plain arm, per seed and over seeds (per-task paired intervals: the evaluation report of `plain_arm: true`).
Finished trainings are reused (their model directory), so a second invocation only evaluates.

    nice python benchmark/plain_arm.py [--recipe recipes/demo_sk.yaml] [--seeds 3] [--arms recipe ...]
        [--trimmed runs/demo_sk/trim] [--out benchmark/results/plain_arm]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
FIRST_SEED = 42
PLAIN = "plain"


def plain_script(base: str, finetune: dict[str, Any], seed: int, out: Path) -> None:
    """The plain arm: the script a user writes from sentence-transformers' documentation."""
    from datasets import load_dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        losses,
    )
    from sentence_transformers.sentence_transformer.training_args import (
        BatchSamplers,
        MultiDatasetBatchSamplers,
    )

    model = SentenceTransformer(base)
    model.max_seq_length = finetune.get("max_seq_length", 256)
    train, loss, prompts = {}, {}, {}
    for entry in finetune["datasets"]:
        name, kind = entry["name"], entry["kind"]
        data = load_dataset("json", data_files=entry["source"], split="train")
        if kind == "sts":
            low, high = entry.get("score_range", [0, 5])
            data = data.map(lambda r, low=low, high=high: {"score": (float(r["score"]) - low) / (high - low)})
            data = data.select_columns(["sentence1", "sentence2", "score"])
            loss[name] = losses.CoSENTLoss(model)
            prompts[name] = {"sentence1": "query: ", "sentence2": "query: "}
        else:
            columns = entry["columns"]  # role -> column, roles in order: anchor, positive[, negative]
            data = data.select_columns(list(columns.values()))
            loss[name] = losses.MultipleNegativesRankingLoss(model)
            symmetric = kind in ("triplets", "nli")  # NLI texts are symmetric: query prompt on all
            prompts[name] = {
                col: "query: " if role == "anchor" or symmetric else "passage: "
                for role, col in columns.items()
            }
        train[name] = data
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"),
        num_train_epochs=finetune.get("epochs", 3),
        per_device_train_batch_size=finetune.get("batch_size", 32),
        learning_rate=finetune.get("learning_rate", 2e-5),
        warmup_ratio=finetune.get("warmup_ratio", 0.1),
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        multi_dataset_batch_sampler=MultiDatasetBatchSamplers.PROPORTIONAL,
        prompts=prompts,
        seed=seed,
        save_strategy="no",
        report_to="none",
        logging_steps=10,
    )
    SentenceTransformerTrainer(model=model, args=args, train_dataset=train, loss=loss).train()
    model.save(str(out / "model"))


def arm_section(finetune: dict[str, Any], spec: str) -> dict[str, Any]:
    """The recipe's finetune section with an arm's ``KEY=VALUE`` overrides (dotted keys; ``null`` drops)."""
    import copy

    import yaml

    section = copy.deepcopy(finetune)
    for assignment in filter(None, spec.split(",")):
        key, value = assignment.split("=", 1)
        *parents, leaf = key.split(".")
        node: Any = section
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        parsed = yaml.safe_load(value)
        if parsed is None:
            node.pop(leaf, None)
        else:
            node[leaf] = parsed
    return section


def train_arm(arm: str, spec: str, seed: int, recipe: dict[str, Any], args: argparse.Namespace) -> Path:
    """Train one arm and seed into ``out/runs/ARM-SEED/model`` unless it is there; the model directory."""
    from skadapt.blocks import resolve_model

    run = args.out / "runs" / f"{arm}-{seed}"
    target = run / "model"
    if (target / "config.json").is_file():
        return target
    run.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if arm == PLAIN:
        plain_script(resolve_model(recipe["base_model"]), recipe["finetune"], seed, run)
    else:
        from skadapt.api import FinetuneConfig, finetune

        config = FinetuneConfig.model_validate(arm_section(recipe["finetune"], spec))
        finetune(
            str(args.trimmed), config, language=recipe["language"], out=target, seed=seed,
            eval_tasks=recipe["evaluate"]["tasks"],
        )  # fmt: skip
    (run / "wall_s.json").write_text(json.dumps(round(time.perf_counter() - started, 1)))
    return target


def final_model(tuned: Path, seed: int, recipe: dict[str, Any]) -> Path:
    """The run's final model after the recipe's renorm section (``renorm/`` beside ``tuned``): the
    renormalized model when renorm kept it, else ``tuned``."""
    from skadapt import RenormReport
    from skadapt.api import RenormConfig, renormalize

    out = tuned.parent / "renorm"
    if RenormReport.read(out) is None:
        renormalize(
            str(tuned), RenormConfig.model_validate(recipe["renorm"]), language=recipe["language"], out=out,
            seed=seed, eval_tasks=recipe["evaluate"]["tasks"],
        )  # fmt: skip
    report = RenormReport.read(out)
    return out if report is not None and report.kept else tuned


def t_interval(values: list[float]) -> tuple[float, float | None]:
    """Mean and the half-width of its 95% t-interval over seeds (None for one value)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    from scipy import stats

    return mean, float(
        stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    )


def cell(values: list[float]) -> str:
    mean, half = t_interval(values)
    return f"{mean:.2f}" if half is None else f"{mean:.2f} ± {half:.2f}"


def score(
    models: dict[str, str], tasks: list[str], policy: dict[str, str] | None, seed: int, cache: Path
) -> Any:
    """Every model on the suite through mteb (the spread that matters here is the seeds')."""
    from skadapt.blocks import score_models

    return score_models(models, tasks, language="slk", prompt_policy=policy, seed=seed, cache_dir=cache)


def summarize(result: Any, arms: list[str], seeds: list[int], extras: list[str]) -> dict[str, Any]:
    """Per arm its scores over seeds; per skadapt arm its difference from the plain arm; each extra model's
    scores (one row, as the base's)."""
    table = result.table
    rows = {row.model: row for row in table.rows}
    types = list(table.types)
    summary: dict[str, Any] = {
        "types": types,
        "fixed": {
            label: {"All": rows[label].All, "Type": rows[label].Type, **rows[label].types}
            for label in ["base", *extras]
        },
    }
    for arm in arms:
        labels = [f"{arm}-{s}" for s in seeds]
        summary[arm] = {
            "All": [rows[label].All for label in labels],
            "Type": [rows[label].Type for label in labels],
            **{t: [rows[label].types.get(t) for label in labels] for t in types},
        }
    deltas: dict[str, Any] = {}
    for arm in arms:
        if arm == PLAIN:
            continue
        per_seed = []
        for s in seeds:
            entry: dict[str, Any] = {"seed": s, "All": rows[f"{arm}-{s}"].All - rows[f"{PLAIN}-{s}"].All}
            entry["types"] = {t: rows[f"{arm}-{s}"].types[t] - rows[f"{PLAIN}-{s}"].types[t] for t in types}
            per_seed.append(entry)
        deltas[arm] = per_seed
    summary["minus_plain"] = deltas
    return summary


def markdown(summary: dict[str, Any], arms: list[str]) -> str:
    """The seed table and the differences from the plain arm, as Markdown."""
    types = summary["types"]
    head = ["arm", "All", "Type", *types]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, row in summary["fixed"].items():
        lines.append(f"| {label} | " + " | ".join(f"{row[k]:.2f}" for k in ("All", "Type", *types)) + " |")
    for arm in arms:
        lines.append(
            f"| {arm} | " + " | ".join(cell(summary[arm][k]) for k in ("All", "Type", *types)) + " |"
        )
    lines += [
        "",
        "| arm - plain | All (mean over seeds) | per seed | " + " | ".join(types) + " |",
        "|" + "---|" * (3 + len(types)),
    ]
    for arm, per_seed in summary["minus_plain"].items():
        seeds = "; ".join(f"{e['All']:+.2f}" for e in per_seed)
        by_type = " | ".join(cell([e["types"][t] for e in per_seed]) for t in types)
        lines.append(f"| {arm} | {cell([e['All'] for e in per_seed])} | {seeds} | {by_type} |")
    return "\n".join(lines)


def dev_reading(models: dict[str, str], recipe: dict[str, Any], arms: list[str], seeds: list[int]) -> dict:
    """Every model scored on the recipe's dev sets (x100; the evaluation tasks' test texts dropped, as the
    finetune stage drops them): per set and their mean, each arm's mean over seeds and its difference to
    the plain arm per seed."""
    from sentence_transformers import SentenceTransformer

    from skadapt.blocks import DevSets, build_dev_sets, task_test_texts

    config = DevSets.model_validate(recipe["finetune"]["dev"])
    test_texts = task_test_texts(list(recipe["evaluate"]["tasks"]), language=recipe["language"])
    scores: dict[str, dict[str, float]] = {}
    for label, path in models.items():
        model = SentenceTransformer(path, device="cpu")
        sets = build_dev_sets(config, 32, dict(model.prompts or {}), test_texts)
        per_set = {d.report[0]["name"]: 100 * float(d.evaluator(model)[d.metric]) for d in sets}
        scores[label] = per_set | {"mean": statistics.fmean(per_set.values())}
        print(f"dev {label}: " + ", ".join(f"{k} {v:.2f}" for k, v in scores[label].items()), flush=True)
    names = list(next(iter(scores.values())))
    arms_summary = {arm: {n: [scores[f"{arm}-{s}"][n] for s in seeds] for n in names} for arm in arms}
    minus = {
        arm: {
            n: [a - p for a, p in zip(arms_summary[arm][n], arms_summary[PLAIN][n], strict=True)]
            for n in names
        }
        for arm in arms
        if arm != PLAIN
    }
    return {"models": scores, "arms": arms_summary, "minus_plain": minus, "base": scores.get("base")}


def dev_markdown(dev: dict[str, Any]) -> str:
    """The dev reading as two tables: arms (mean ± 95% t over seeds) and arm − plain."""
    names = list(next(iter(dev["arms"].values())))
    head = "| arm | " + " | ".join(names) + " |\n|---|" + "---|" * len(names)
    rows = [head]
    if dev["base"]:
        rows.append("| base | " + " | ".join(f"{dev['base'][n]:.2f}" for n in names) + " |")
    rows += [f"| {arm} | " + " | ".join(cell(v[n]) for n in names) + " |" for arm, v in dev["arms"].items()]
    rows += ["", head.replace("| arm |", "| arm − plain |")]
    rows += [
        f"| {arm} | " + " | ".join(cell(v[n]) for n in names) + " |" for arm, v in dev["minus_plain"].items()
    ]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", type=Path, default=ROOT / "recipes" / "demo_sk.yaml")
    parser.add_argument(
        "--trimmed",
        type=Path,
        default=ROOT / "runs" / "demo_sk" / "trim",
        help="The recipe's trimmed model (skadapt train RECIPE --only trim)",
    )
    parser.add_argument("--seeds", type=int, default=3, help="Seeds per arm (42, 43, ...)")
    parser.add_argument(
        "--arms", nargs="+", default=["recipe"], help="skadapt arms: recipe or NAME=KEY=VALUE,..."
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmark" / "results" / "plain_arm")
    parser.add_argument(
        "--readings",
        nargs="+",
        choices=["dev", "policy", "vanilla"],
        default=["dev", "policy", "vanilla"],
        help="dev: the recipe's finetune.dev sets (what chooses the defaults); policy/vanilla: the suite",
    )
    parser.add_argument("--train-only", action="store_true", help="Train the arms, score nothing")
    parser.add_argument(
        "--extra", nargs="*", default=[], help="LABEL=DIR: more models to score, one row each"
    )
    parser.add_argument(
        "--renorm",
        action="store_true",
        help="Score each skadapt arm's final model: after the recipe's renorm section (when kept)",
    )
    args = parser.parse_args()
    import yaml

    os.chdir(ROOT)  # the recipes' data paths are relative to the repository
    recipe = yaml.safe_load(args.recipe.read_text(encoding="utf-8"))
    if not args.trimmed.is_dir():
        parser.error(
            f"--trimmed {args.trimmed}: no such model; run `skadapt train {args.recipe} --only trim`"
        )
    specs = {PLAIN: ""}
    for arm in args.arms:
        name, _, spec = arm.partition("=")
        specs[name] = spec
    seeds = list(range(FIRST_SEED, FIRST_SEED + args.seeds))
    from skadapt.blocks import resolve_model

    models = {"base": resolve_model(recipe["base_model"])}
    for seed in seeds:
        for arm, spec in specs.items():
            print(f"training {arm}, seed {seed}", flush=True)
            model = train_arm(arm, spec, seed, recipe, args)
            if args.renorm and arm != PLAIN and "renorm" in recipe:
                model = final_model(model, seed, recipe)
            models[f"{arm}-{seed}"] = str(model)
    if args.train_only:
        return
    extras = dict(extra.split("=", 1) for extra in args.extra)
    models.update(extras)
    tasks = list(recipe["evaluate"]["tasks"])
    readings = {"policy": recipe["evaluate"].get("prompt_policy"), "vanilla": None}
    report: dict[str, Any] = {"recipe": str(args.recipe), "arms": specs, "seeds": seeds}
    for reading in args.readings:
        if reading == "dev":
            report["dev"] = dev_reading(models, recipe, list(specs), seeds)
            print(
                f"\n## dev reading (the recipe's finetune.dev sets)\n\n{dev_markdown(report['dev'])}",
                flush=True,
            )
            continue
        result = score(models, tasks, readings[reading], FIRST_SEED, args.out / "mteb")
        summary = summarize(result, list(specs), seeds, list(extras))
        report[reading] = summary
        print(f"\n## {reading} reading\n\n{markdown(summary, list(specs))}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
