"""The GPU proving ground: the whole product on one GPU machine, one JSON with every figure.

``benchmark/gpu_check.sh`` prepares what travels and starts this on the GPU machine (no network there; at
most 64 MiB travel with a copy of the repository). In about eight minutes on one H100/H200 it runs:

1. **levers** — the real sentence-transformers trainer at the recipes' settings (MNRL, batch 32, max length
   256) on e5-small/e5-large-shaped models (random weights, the real tokenizer), each host-side lever of
   :func:`skadapt.blocks.training_levers` alone and all together ("after") against none ("before"), fp32
   and bf16; encoding at the CPU's batch 32 against the GPU's (:func:`skadapt.blocks.encode_batch_size`
   there),
   fp32, TF32 and bf16; one traced step range (``torch.profiler``) before and after: wall vs kernel time;
2. **slice** — a real-size slice of the flagship: ``skadapt finetune`` with ``recipes/e5_sk_small.yaml``'s
   settings on skLEP-sized data (``benchmark/rehearsal_data.py``: 71,999 QA and 392,702 NLI training
   rows, the 9,583-row QA validation split as the dev set) for ``--slice-steps`` steps with one dev
   evaluation at the real dev size, then encoding at the evaluation's sizes;
3. **demo** — ``skadapt train recipes/demo_sk.yaml`` end to end on CUDA (base: multilingual-e5-small's
   architecture with random weights and the real tokenizer), each stage's seconds beside the plan's
   (``--plan`` of the same recipe), while
4. **tests** — the suite's fast tier plus the ``gpu`` tests (``-m "not slow and not real_model"``) runs
   with CUDA visible on the other half of the CPU cores, failures by name (a JUnit file).

GPU utilisation is sampled every 0.5 s throughout (``nvidia-smi``) and summarised per phase. Phases 3 and 4
share the GPU and the host, so their timings are those of a busy machine; phases 1 and 2 run alone.
``--smoke`` runs the same phases on this CPU in about 85 CPU seconds: tiny models (a 20,000-piece
vocabulary), a few steps, every stage of the demo on little data (``SMOKE_DEMO``), one test file.

    benchmark/gpu_check.sh                 # on the GPU machine, from the repository root
    benchmark/gpu_check.sh --smoke         # here (the test suite runs this)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmark")]

import gpu_check  # noqa: E402

STAGES = ("trim", "finetune", "renorm", "export", "evaluate")
SMOKE_DEMO = [  # the demo recipe, small enough for a CPU minute: every stage, on little data
    "trim.vocab_size=2000",
    "trim.extra_vocab_size=500",
    "trim.corpus.max_documents=3000",  # the first 3,000 words of each wordfreq list
    "trim.extra_corpus.max_documents=3000",
    "trim.parity_documents=20",
    "finetune.max_steps=4",
    "finetune.save_steps=2",
    "finetune.dev.steps=2",
    "finetune.interpolation.grid=[0.0,1.0]",
    "export.tiers=[onnx]",
    "export.pca_dims=16",
    "export.dims=[16]",
    "export.speed_texts=32",
    "export.speed_repeats=1",
    "evaluate.models=[base,finetune]",  # and the export's tiers beside finetune
    "evaluate.bootstrap=20",
]
SMOKE_TESTS = ["tests/test_devices.py"]
SMOKE_VOCAB = 20_000
"""Pieces of the smoke run's tokenizer: multilingual-e5-small's first ones (a demo-sized trim still cuts)."""


class Utilisation:
    """``nvidia-smi`` sampled every 0.5 s in the background; per named phase: mean, peak and the share of
    samples at 0%."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.process: subprocess.Popen[bytes] | None = None
        self.phases: dict[str, tuple[float, float]] = {}
        if shutil.which("nvidia-smi"):
            query = "timestamp,utilization.gpu,memory.used"
            self.process = subprocess.Popen(
                ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-lms", "500"],
                stdout=path.open("wb"),
                stderr=subprocess.DEVNULL,
            )

    @contextmanager
    def phase(self, name: str) -> Any:
        began = time.time()
        try:
            yield
        finally:
            self.phases[name] = (began, time.time())

    def stop(self) -> dict[str, Any]:
        if self.process is None:
            return {"sampled": False, "why": "no nvidia-smi (no GPU)"}
        self.process.terminate()
        self.process.wait(timeout=10)
        samples: list[tuple[float, float, float]] = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = [p.strip() for p in line.split(",")]
            try:
                stamp = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S"))
                stamp += float("0." + parts[0].split(".")[1]) if "." in parts[0] else 0.0
                samples.append((stamp, float(parts[1]), float(parts[2])))
            except (IndexError, ValueError):
                continue
        out: dict[str, Any] = {"sampled": True, "interval_s": 0.5, "samples": len(samples), "phases": {}}
        for name, (began, ended) in self.phases.items():
            inside = [s for s in samples if began <= s[0] <= ended]
            if not inside:
                continue
            util = [s[1] for s in inside]
            out["phases"][name] = {
                "seconds": round(ended - began, 1),
                "mean_pct": round(statistics.fmean(util), 1),
                "peak_pct": max(util),
                "zero_share": round(sum(u == 0 for u in util) / len(util), 3),
                "peak_memory_mib": max(s[2] for s in inside),
            }
        return out


def levers_phase(args: argparse.Namespace, base_args: argparse.Namespace, report: dict[str, Any]) -> None:
    """Fine-tuning step time and encoding throughput before and after the levers, one lever at a time."""
    from skadapt.blocks import encode_batch_size, training_levers

    after = training_levers(use_cpu=base_args.device == "cpu")
    gpu_batch = encode_batch_size()  # the device's default encoding batch (a GPU's: GPU_ENCODE_BATCH)
    singles = {
        "fused_adamw": {"optim": "adamw_torch_fused"},
        "tf32": {"tf32": True},
        "loader_workers": {k: v for k, v in after.items() if k.startswith("dataloader")},
    }
    if base_args.device == "cpu":  # nothing to switch on a CPU: the smoke run checks the machinery only
        singles = {"loader_workers": {"dataloader_num_workers": 1}}
        after = singles["loader_workers"]
    pool = gpu_check.words()
    out = report.setdefault("levers", {"finetune": {}, "encode": {}})
    jobs: list[tuple[str, str, str, str, dict[str, Any], int]] = []
    for name in args.lever_models:
        precisions = ["fp32", "bf16"] if name == "e5-small" else ["bf16"]
        if args.smoke:  # the machinery only: one pair
            jobs += [
                (name, "pairs_long", "fp32", label, levers, args.profile_steps)
                for label, levers in (("before", {}), ("after", after))
            ]
            continue
        for precision in precisions:
            jobs.append((name, "pairs_long", precision, "before", {}, args.profile_steps))
            jobs.append((name, "pairs_long", precision, "after", after, args.profile_steps))
            if name == "e5-small" and precision == "fp32":
                jobs += [(name, "pairs_long", precision, k, v, 0) for k, v in singles.items()]
                jobs.append((name, "triplets_short", precision, "before", {}, 0))
                jobs.append((name, "triplets_short", precision, "after", after, 0))
    built = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, shape, precision, label, levers, profile in jobs:
            key = f"{name}-trimmed {shape} {precision} {label}"
            try:
                if name not in built:
                    built[name] = gpu_check.build_model(name, True, args.tokenizer, Path(scratch), args.smoke)
                result = gpu_check.finetune_rate(
                    built[name],
                    shape,
                    "bf16" if precision == "bf16" else "fp32",
                    base_args,
                    pool,
                    levers,
                    profile=profile,
                )
                out["finetune"][key] = result
                print(f"finetune {key}: {result['s_per_step'] * 1000:.1f} ms/step", flush=True)
            except Exception as error:  # one failed measurement must not lose the others
                report["errors"].append(f"levers finetune {key}: {error!r}")
            args.save()
        small = built.get("e5-small") or gpu_check.build_model(
            "e5-small", True, args.tokenizer, Path(scratch), args.smoke
        )
        batches = sorted({gpu_check.ENCODE_BATCH, gpu_batch})  # one batch on a CPU (the smoke run)
        for kind in gpu_check.ENCODE_TEXTS:
            runs = [("fp32", b) for b in batches] + [("tf32", gpu_batch), ("bf16", gpu_batch)]
            for precision, batch in runs:
                key = f"e5-small-trimmed {kind} {precision} batch {batch}"
                try:
                    result = gpu_check.encode_rate(small, kind, precision, base_args, pool, batch)
                    out["encode"][key] = result
                    print(f"encode {key}: {result['texts_per_s']} texts/s", flush=True)
                except Exception as error:
                    report["errors"].append(f"levers encode {key}: {error!r}")
                args.save()


def slice_data(root: Path, scale: float, tokenizer: Path) -> dict[str, Path]:
    """skLEP-sized QA/NLI training rows and the QA validation split as JSONL (``rehearsal_data``'s text)."""
    import rehearsal_data as rd

    rd.TOKENIZER_JSON = tokenizer

    gen = rd.Generator(seed=7, chars=200_000 if scale < 0.01 else 12_000_000)
    files = {}
    for config, split in [
        ("question-answering", "train"),
        ("nli", "train"),
        ("question-answering", "validation"),
    ]:
        count = rd.SKLEP_SIZES[config][0 if split == "train" else 1]
        path = root / f"{config}-{split}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for row in rd.sklep_rows(gen, config, split, max(40, round(count * scale))):
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        files[f"{config}-{split}"] = path
    return files


def slice_phase(args: argparse.Namespace, base: Path, report: dict[str, Any], work: Path) -> None:
    """The flagship's fine-tuning at the real data and dev sizes for a few hundred steps, then encoding."""
    import yaml

    began = time.perf_counter()
    files = slice_data(work, args.slice_scale, args.tokenizer)
    generated = time.perf_counter() - began
    flagship = yaml.safe_load((ROOT / "recipes" / "e5_sk_small.yaml").read_text(encoding="utf-8"))
    section = {k: v for k, v in flagship["finetune"].items() if k not in ("datasets", "dev")}
    section.update(
        datasets=[
            {
                "name": "skquad",
                "kind": "pairs",
                "source": str(files["question-answering-train"]),
                "columns": {"anchor": "question", "positive": "context"},
            },
            {
                "name": "nli",
                "kind": "nli",
                "source": str(files["nli-train"]),
                "columns": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"},
                "label_map": {"0": "entailment", "1": "neutral", "2": "contradiction"},
            },
        ],
        dev={
            "steps": args.slice_steps,
            "sets": [
                {
                    "kind": "retrieval",
                    "source": str(files["question-answering-validation"]),
                    "columns": {"query": "question", "positive": "context"},
                }
            ],
        },
        max_steps=args.slice_steps,
        save_steps=args.slice_steps,
    )
    section.pop("contamination", None)
    recipe = work / "slice.yaml"
    recipe.write_text(yaml.safe_dump(section), encoding="utf-8")
    out = work / "slice-model"
    command = [
        sys.executable,
        "-m",
        "skadapt",
        "finetune",
        str(base),
        "--out",
        str(out),
        "--config",
        str(recipe),
        "--language",
        "slk",
        "--eval-tasks",
        "data/demo_sk/suite/suite.yaml",
    ]
    measured = run(command, work / "slice.log", args.slice_timeout, cores=getattr(args, "slice_cores", None))
    result: dict[str, Any] = {
        "generate_s": round(generated, 1),
        "rows": {k: sum(1 for _ in p.open(encoding="utf-8")) for k, p in files.items()},
        **measured,
    }
    training = out / "training_report.json"
    if training.is_file():
        data = json.loads(training.read_text(encoding="utf-8"))
        result["training_report"] = {
            k: data.get(k) for k in ("steps", "seconds", "dev", "timings") if k in data
        }
    result["log_tail"] = tail(work / "slice.log", 15) if measured["returncode"] else None
    report["slice"] = result
    args.save()
    # encoding at the evaluation's sizes: a retrieval corpus of long passages, short queries
    pool = gpu_check.words()
    from skadapt.blocks import encode_batch_size

    enc = argparse.Namespace(**vars(args.base_args))
    enc.encode_texts = args.slice_encode
    report["slice"]["encode"] = {}
    for kind in gpu_check.ENCODE_TEXTS:
        try:
            report["slice"]["encode"][kind] = gpu_check.encode_rate(
                base, kind, "fp32", enc, pool, encode_batch_size()
            )
        except Exception as error:
            report["errors"].append(f"slice encode {kind}: {error!r}")
    args.save()


def run(
    command: list[str], log: Path, timeout: float, env: dict[str, str] | None = None, cores: str | None = None
) -> dict[str, Any]:
    """Run ``command`` (on ``cores`` with taskset where given), output to ``log``; seconds and exit code."""
    if cores and shutil.which("taskset"):
        command = ["taskset", "-c", cores, *command]
    began = time.perf_counter()
    with log.open("wb") as handle:
        process = subprocess.Popen(
            command,
            stdout=handle,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        try:
            code: int | str = process.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 15)
            process.wait(timeout=30)
            code = "timeout"
    return {"returncode": code, "seconds": round(time.perf_counter() - began, 1)}


def expand(cores: str) -> list[int]:
    """``"0-6"`` -> ``[0, ..., 6]``."""
    first, _, last = cores.partition("-")
    return list(range(int(first), int(last or first) + 1))


def tail(path: Path, lines: int) -> list[str]:
    if not path.is_file():
        return []
    return path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]


def plan_seconds(sets: list[str]) -> dict[str, Any]:
    """The plan's GPU estimate per stage of the demo (``skadapt train --plan``, its JSON)."""
    from skadapt import load_recipe, plan_recipe

    try:
        recipe = load_recipe(ROOT / "recipes" / "demo_sk.yaml", overrides=sets)
        plan = plan_recipe(recipe)
        return {
            stage.stage: {"gpu_s": stage.seconds_gpu, "cpu_s": stage.seconds_cpu} for stage in plan.stages
        } | {"gpu": plan.gpu, "cpu": plan.cpu}
    except Exception as error:  # the plan's figures are a comparison, not a condition of the run
        return {"error": repr(error)}


def stage_seconds(run_dir: Path) -> dict[str, Any]:
    """Each finished stage's seconds, from its manifest."""
    out: dict[str, Any] = {}
    for stage in STAGES:
        manifest = run_dir / stage / "manifest.json"
        if manifest.is_file():
            data = json.loads(manifest.read_text(encoding="utf-8"))
            out[stage] = data.get("duration_s")
    return out


def core_sets(cores: int) -> tuple[str, str, str]:
    """CPU cores (taskset lists) of the demo, the tests and the slice: 7/16, 6/16 and 3/16 of them."""
    if cores < 4:
        return "0", "0", "0"
    demo, tests = cores * 7 // 16, cores * 6 // 16
    return f"0-{demo - 1}", f"{demo}-{demo + tests - 1}", f"{demo + tests}-{cores - 1}"


def concurrent_phase(args: argparse.Namespace, base: Path, report: dict[str, Any], work: Path) -> None:
    """The demo recipe on CUDA, the fast tests with CUDA visible and the real-size slice at once, each on
    its own CPU cores (the GPU is shared: their timings are those of a busy machine)."""
    demo_cores, test_cores, args.slice_cores = core_sets(os.cpu_count() or 2)
    run_dir = work / "demo"
    sets = [f"base_model={base}", f"output_dir={run_dir}"] + (SMOKE_DEMO if args.smoke else [])
    demo = [sys.executable, "-m", "skadapt", "train", "recipes/demo_sk.yaml"] + [
        x for s in sets for x in ("--set", s)
    ]
    junit = work / "tests.xml"
    tests = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
    tests += ["-m", "not slow and not real_model", "-rf"]
    if args.test_workers:
        tests += ["-n", str(args.test_workers), "--dist", "loadfile"]
    tests += SMOKE_TESTS if args.smoke else []
    report["demo"] = {"sets": sets, "plan": plan_seconds(sets)}
    args.save()
    budget = args.deadline - (time.perf_counter() - args.began) - 20
    results: dict[str, Any] = {}
    test_env = {"OMP_NUM_THREADS": "1", "SKADAPT_TEST_MODEL": ""}
    demo_env = {"OMP_NUM_THREADS": str(max(1, len(expand(demo_cores))))}

    def launch(name: str, command: list[str], env: dict[str, str], cores: str) -> threading.Thread:
        def body() -> None:
            results[name] = run(command, work / f"{name}.log", budget, env, cores)

        thread = threading.Thread(target=body)
        thread.start()
        return thread

    threads = [launch("demo", demo, demo_env, demo_cores)]
    if not args.no_tests:
        threads.append(launch("tests", tests, test_env, test_cores))
    if "slice" in args.phases:
        try:
            slice_phase(args, base, report, work)
        except Exception as error:
            report["errors"].append(f"slice: {error!r}")
    for thread in threads:
        thread.join()
    stages = stage_seconds(run_dir)
    report["demo"].update(
        results.get("demo", {}), stages=stages, cores=demo_cores, log_tail=tail(work / "demo.log", 25)
    )
    report["demo"]["plan_ratio"] = {
        stage: round(seconds / planned["gpu_s"], 2)
        for stage, seconds in stages.items()
        if isinstance(seconds, (int, float))
        and (planned := report["demo"]["plan"].get(stage))
        and isinstance(planned, dict)
        and planned.get("gpu_s")
    }
    for name in ("evaluate/report.md", "export/export.md"):
        path = run_dir / name
        if path.is_file():
            report["demo"][name] = path.read_text(encoding="utf-8")[:6000]
    if not args.no_tests:
        report["tests"] = {
            **results.get("tests", {}),
            "cores": test_cores,
            **junit_summary(junit),
            "log_tail": tail(work / "tests.log", 30),
        }
    args.save()


def junit_summary(path: Path) -> dict[str, Any]:
    """Passed/failed/skipped counts and the failing tests by name (with the first line of each failure)."""
    if not path.is_file():
        return {"junit": "missing (the run did not finish)"}
    root = ET.parse(path).getroot()
    cases = list(root.iter("testcase"))
    failed, skipped = {}, 0
    for case in cases:
        name = f"{case.get('classname')}::{case.get('name')}"
        for tag in ("failure", "error"):
            node = case.find(tag)
            if node is not None:
                failed[name] = ((node.get("message") or "") + " " + (node.text or "")[-600:]).strip()[:900]
        skipped += case.find("skipped") is not None
    return {
        "cases": len(cases),
        "failed": len(failed),
        "skipped": skipped,
        "passed": len(cases) - len(failed) - skipped,
        "failures": failed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model-dir",
        type=Path,
        required=True,
        help="multilingual-e5-small's files without weights (config, tokenizer, modules)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the JSON written (after every step)")
    parser.add_argument("--smoke", action="store_true", help="tiny models on the CPU, a minute")
    parser.add_argument("--deadline", type=float, default=480.0, help="seconds the whole check may take")
    parser.add_argument("--phases", default="levers,slice,demo", help="comma-separated phases to run")
    parser.add_argument("--lever-models", default="e5-small,e5-large")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=8)
    parser.add_argument("--profile-steps", type=int, default=5)
    parser.add_argument("--slice-steps", type=int, default=300)
    parser.add_argument("--slice-scale", type=float, default=1.0)
    parser.add_argument("--slice-encode", type=int, default=20_000)
    parser.add_argument("--slice-timeout", type=float, default=240.0)
    parser.add_argument("--test-workers", type=int, default=5)
    parser.add_argument("--no-tests", action="store_true")
    args = parser.parse_args(argv)
    args.began = time.perf_counter()
    if args.smoke:
        args.lever_models, args.steps, args.warmup, args.profile_steps = "e5-small", 4, 1, 2
        args.slice_steps, args.slice_scale, args.slice_encode, args.slice_timeout = 4, 0.0005, 64, 120
        args.test_workers = 0
    args.lever_models = args.lever_models.split(",")
    import torch

    device = "cuda" if torch.cuda.is_available() and not args.smoke else "cpu"
    args.tokenizer = args.model_dir / "tokenizer.json"
    args.base_args = argparse.Namespace(
        device=device,
        batch={},
        steps=args.steps,
        warmup=args.warmup,
        encode_texts=4096 if not args.smoke else 64,
    )
    report: dict[str, Any] = {
        "source": "benchmark/gpu_run.py" + (" --smoke" if args.smoke else ""),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "environment": gpu_check.environment(device),
        "errors": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        report["wall_s"] = round(time.perf_counter() - args.began, 1)
        args.out.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")

    args.save = save
    work = Path(tempfile.mkdtemp(prefix="gpu_run-"))
    sampler = Utilisation(work / "utilisation.csv")
    phases = args.phases.split(",")
    try:
        base = build_base(args.model_dir, work / "e5-small", args.smoke)
        for name, body in (
            ("levers", lambda: levers_phase(args, args.base_args, report)),
            ("demo+tests+slice", lambda: concurrent_phase(args, base, report, work)),
        ):
            if not set(name.split("+")) & set(phases):
                continue
            with sampler.phase(name):
                try:
                    body()
                except Exception as error:
                    report["errors"].append(f"{name}: {error!r}")
            save()
    finally:
        report["utilisation"] = sampler.stop()
        save()
        for log in ("slice.log", "demo.log", "tests.log", "utilisation.csv"):
            if (work / log).is_file():
                shutil.copy(work / log, args.out.parent / log)
    print(f"wrote {args.out} in {report['wall_s']} s; {len(report['errors'])} error(s)")
    return 0


def build_base(model_dir: Path, out: Path, smoke: bool) -> Path:
    """multilingual-e5-small as a sentence-transformers directory: its files from ``model_dir`` and random
    weights of its architecture (tiny with ``smoke``, its vocabulary cut to ``SMOKE_VOCAB`` pieces), saved
    as the model's safetensors."""
    from transformers import AutoConfig, AutoModel

    shutil.copytree(model_dir, out, ignore=shutil.ignore_patterns("*.safetensors", "*.bin", "README.md"))
    config = AutoConfig.from_pretrained(out)
    if smoke:
        for key, value in gpu_check.SMOKE.items():
            setattr(config, key, value)
        config.vocab_size = cut_vocabulary(out / "tokenizer.json", SMOKE_VOCAB)
        config.save_pretrained(out)
        pooling = out / "1_Pooling" / "config.json"
        data = json.loads(pooling.read_text(encoding="utf-8"))
        data["word_embedding_dimension"] = config.hidden_size
        pooling.write_text(json.dumps(data, indent=2), encoding="utf-8")
    AutoModel.from_config(config).save_pretrained(out)
    return out


def cut_vocabulary(tokenizer_json: Path, rows: int) -> int:
    """Keep the first ``rows - 1`` pieces of a Unigram ``tokenizer.json`` (sentencepiece orders them by
    score) and its ``<mask>`` as the last; the new vocabulary size. Every stage reads, rewrites and loads
    the tokenizer several times: 250,002 pieces make most of a smoke run's time."""
    data = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    mask = next(token for token in data["added_tokens"] if token["content"] == "<mask>")
    data["model"]["vocab"] = [*vocab[: rows - 1], [mask["content"], 0.0]]
    mask["id"] = rows - 1
    tokenizer_json.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return rows


if __name__ == "__main__":
    sys.exit(main())
