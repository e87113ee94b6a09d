"""Do hard negatives help? The demo's fine-tuning plus the hand-written FAQ set under four arms, N seeds.

Arms (the FAQ set, data/demo_sk/train/faq.jsonl, added to the demo recipe's finetune section as a
``pairs`` dataset; everything else as the recipe has it: dev sets, best checkpoint, WiSE-FT, anchor):

- ``plain``: MNRL with in-batch negatives only;
- ``mined``: MNRL with one negative mined by the starting model (``hard_negatives: {}``: relative
  margin 0.05, top-ranked eligible candidate);
- ``gist``: GISTEmbedLoss with the starting model as the frozen guide;
- ``random``: one random same-domain negative per pair (SkMTEB's construction).

Each arm is trained from the same starting model (default: the demo run's trimmed model) with seeds
``42, 43, ...``, then every model and the starting model are evaluated on the demo suite
(data/demo_sk/suite). Printed: per arm the mean over seeds of "All" (mean over tasks), "Type" (mean of
task-type means) and each type, with 95% t-intervals over seeds (none with one seed), training time
(mining included) and the WiSE-FT coefficients chosen. A finished run is not trained again (its model
directory is reused), so a second invocation only evaluates what is missing.

    nice -n 19 python benchmark/hard_negatives.py [--model DIR] [--seeds 3] [--arms plain mined gist random]
        [--out benchmark/results/hard_negatives] [--max-steps N] [--no-wise-ft]
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
DEMO_RECIPE = ROOT / "recipes" / "demo_sk.yaml"
SUITE = ROOT / "data" / "demo_sk" / "suite" / "suite.yaml"
FAQ = {
    "name": "faq",
    "kind": "pairs",
    "source": "data/demo_sk/train/faq.jsonl",
    "columns": {"anchor": "question", "positive": "answer"},
}
ARMS: dict[str, dict[str, Any]] = {
    "plain": {},
    "mined": {"hard_negatives": {}},
    "gist": {"loss": "gist"},
    "random": {"hard_negatives": {"strategy": "random_same_domain"}},
}
DEFAULT_MODEL = ROOT / "runs" / "demo_sk" / "trim"
FIRST_SEED = 42


def arm_recipe(arm: str, seed: int, model: str, run_dir: Path, args: argparse.Namespace) -> Any:
    """The demo recipe's finetune section with the FAQ set as the arm trains it, for one seed."""
    import yaml

    from skadapt import validate_recipe

    demo = yaml.safe_load(DEMO_RECIPE.read_text(encoding="utf-8"))
    finetune = demo["finetune"]
    finetune["datasets"].append({**FAQ, **ARMS[arm]})
    if args.max_steps:
        finetune["max_steps"] = args.max_steps
        finetune["dev"]["steps"] = finetune["save_steps"] = max(1, args.max_steps // 2)
    if args.no_wise_ft:
        finetune.pop("interpolation", None)
    data = {
        "name": f"hard-negatives-{arm}-{seed}",
        "language": demo["language"],
        "base_model": model,
        "output_dir": str(run_dir),
        "seed": seed,
        "finetune": finetune,
        "evaluate": {"tasks": [str(SUITE)], "prompt_policy": demo["evaluate"]["prompt_policy"]},
    }
    return validate_recipe(data, f"{DEMO_RECIPE} + faq ({arm})")


def train(arm: str, seed: int, model: str, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Fine-tune one arm and seed into ``out/runs/ARM-SEED/model`` unless it is there; its report."""
    from skadapt import TrainingReport
    from skadapt.api import finetune

    run = out / "runs" / f"{arm}-{seed}"
    target = run / "model"
    report_path = target / TrainingReport.FILE
    if not report_path.is_file():
        recipe = arm_recipe(arm, seed, model, run, args)
        target.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        finetune(recipe.context("finetune", model, target, run / "work"))
        (run / "wall_s.json").write_text(json.dumps(round(time.perf_counter() - started, 1)))
    report = json.loads(report_path.read_text(encoding="utf-8"))
    report["wall_s"] = json.loads((run / "wall_s.json").read_text())
    return report


def evaluate(models: dict[str, str], out: Path, policy: dict[str, str]) -> Any:
    """Scores of every model on the demo suite (the evaluate stage, its report kept in memory: no bootstrap,
    batch 32), as the Table-1 table."""
    from skadapt.api import EvaluateConfig, run_evaluation

    config = EvaluateConfig(tasks=[str(SUITE)], prompt_policy=policy, batch_size=32, bootstrap=0)
    scores = run_evaluation(config, models, None, language="slk", cache_dir=out / "mteb", seed=FIRST_SEED)
    return scores[0]


def interval(values: list[float]) -> tuple[float, float | None]:
    """Mean and the half-width of its 95% t-interval over seeds (None for one value)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    from scipy import stats

    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, float(half)


def cell(values: list[float]) -> str:
    mean, half = interval(values)
    return f"{mean:.2f}" if half is None else f"{mean:.2f} ± {half:.2f}"


def summarize(table: Any, reports: dict[str, list[dict[str, Any]]], start: str) -> dict[str, Any]:
    """Per arm: All, Type and each type over seeds (main scores x100, as the evaluation reports them),
    training time, chosen WiSE-FT coefficients; the starting model's scores under ``start``."""
    rows = {row.model: row for row in table.rows}
    first = rows[start]
    summary: dict[str, Any] = {"start": {"All": first.All, "Type": first.Type, **first.types}}
    for arm, runs in reports.items():
        labels = [f"{arm}-{r['seed']}" for r in runs]
        scores = {
            "All": [rows[label].All for label in labels],
            "Type": [rows[label].Type for label in labels],
            **{t: [rows[label].types[t] for label in labels] for t in table.types},
        }
        summary[arm] = {
            "scores": scores,
            "wall_s": [r["wall_s"] for r in runs],
            "wise_ft": [(r.get("interpolation") or {}).get("chosen") for r in runs],
            "negatives": [_negatives(r) for r in runs],
        }
    return summary


def _negatives(report: dict[str, Any]) -> dict[str, Any] | None:
    faq = next((d for d in report["datasets"] if d["name"] == FAQ["name"]), None)
    hard = (faq or {}).get("stats", {}).get("hard_negatives")
    if hard is None:
        return None
    return {k: hard[k] for k in ("removed", "eligible", "pairs_with_negatives", "pairs", "cached")}


def markdown(summary: dict[str, Any], types: list[str]) -> str:
    """The seed table as Markdown."""
    head = ["arm", "All", "Type", *types, "train s", "WiSE-FT a"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    start = summary["start"]
    fixed = [f"{start[key]:.2f}" for key in ("All", "Type", *types)]
    lines.append("| start | " + " | ".join(fixed) + " | | |")
    for arm, entry in summary.items():
        if arm == "start":
            continue
        scores = entry["scores"]
        cells = [cell(scores["All"]), cell(scores["Type"]), *(cell(scores[t]) for t in types)]
        wall = f"{statistics.fmean(entry['wall_s']):.0f}"
        chosen = ", ".join(str(a) for a in entry["wise_ft"])
        lines.append(f"| {arm} | " + " | ".join(cells) + f" | {wall} | {chosen} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="Starting model (the demo's trim)")
    parser.add_argument("--seeds", type=int, default=3, help="Seeds per arm (42, 43, ...)")
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmark" / "results" / "hard_negatives")
    parser.add_argument("--max-steps", type=int, default=None, help="Cap training steps (smoke runs)")
    parser.add_argument("--no-wise-ft", action="store_true", help="Drop the recipe's WiSE-FT interpolation")
    args = parser.parse_args()
    if not Path(args.model).is_dir():
        parser.error(f"--model {args.model}: no such model directory; run `make demo` (runs/demo_sk/trim)")
    os.chdir(ROOT)  # the demo recipe's data paths are relative to the repository
    import yaml

    policy = yaml.safe_load(DEMO_RECIPE.read_text(encoding="utf-8"))["evaluate"]["prompt_policy"]
    reports: dict[str, list[dict[str, Any]]] = {}
    models = {"start": args.model}
    for seed in range(FIRST_SEED, FIRST_SEED + args.seeds):
        for arm in args.arms:
            print(f"training {arm}, seed {seed}", flush=True)
            report = train(arm, seed, args.model, args.out, args)
            reports.setdefault(arm, []).append(report)
            models[f"{arm}-{seed}"] = str(args.out / "runs" / f"{arm}-{seed}" / "model")
    table = evaluate(models, args.out, policy)
    summary = summarize(table, reports, "start")
    text = markdown(summary, table.types)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(
        json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "summary": summary}, indent=2)
    )
    (args.out / "table.md").write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
