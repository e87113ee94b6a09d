"""GPU figures for the cost plan: fine-tuning and encoding throughput of e5-small and e5-large, peak memory.

Runs on a GPU machine with no network from a copy of the repository (``benchmark/gpu_check.sh`` prepares and
starts it). The models are built from the published configurations of multilingual-e5-small (BERT, 12 x 384)
and multilingual-e5-large (XLM-R, 24 x 1024) with random weights: throughput and memory do not depend on the
weights' values, and the real weights cannot travel to a machine without network. ``-trimmed`` variants have
the recipes' 60,000-token vocabulary (60,002 embedding rows), which is what the Slovak recipes fine-tune; the
tokenizer is the models' own XLM-R sentencepiece tokenizer, cut to its first 60,002 pieces for them.

Texts have the shapes of the recipes' data (lengths in characters, drawn from the demo corpus's words):
``pairs_long`` is a skLEP QA row (query ~60, passage ~1,200 characters: the passage fills the 256-token
limit), ``triplets_short`` an NLI triplet (premise ~110, hypotheses ~55). Fine-tuning runs the real
sentence-transformers trainer (MNRL, batch 32, max length 256, AdamW lr 2e-5, NO_DUPLICATES batches) for
``--steps`` steps; the time per step is the median of the steps after the first ``--warmup``. Encoding runs
``SentenceTransformer.encode`` at the evaluation's batch size (32) on ~100- and ~1,200-character texts.

    python benchmark/gpu_check.py --tokenizer .gpu/tokenizer.json --out $OUT/gpu_check.json
    python benchmark/gpu_check.py --tokenizer .gpu/tokenizer.json --smoke    # tiny models on the CPU
    python benchmark/gpu_check.py --tokenizer TOKENIZER --cpu --machine cpu-2core \
        --out skadapt/plan/rates/cpu-2core.json                                # this machine's CPU rates

``--cpu`` measures the real architectures on the CPU in fp32, with few steps and texts (4 steps, the first
left out; 256 short and 64 long texts; e5-small at the recipes' batch 32, e5-large at 2: s/step is
recorded with the batch it was measured at; the plan scales it) and adds the data-path rates of
``benchmark/data_rates.py`` (counting, sentence sampling, reading, NLI grouping, contamination). The plan
reads wall-clock times: run it on a quiet machine (the load average before and after is recorded; CPU
seconds are recorded too, for comparison). Every measurement records the process's peak RSS.

The JSON it writes is the shape ``skadapt/plan/rates/*.json`` holds (see ``skadapt/plan``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from data_rates import PeakRSS
from data_rates import measure as measure_data_paths

ROOT = Path(__file__).resolve().parent.parent
WORDS_FROM = ROOT / "data" / "demo_sk" / "suite" / "corpus.jsonl"
TRIMMED_ROWS = 60_002
BATCH = 32
MAX_LENGTH = 256
ENCODE_BATCH = 32

ARCHITECTURES: dict[str, dict[str, Any]] = {
    "e5-small": {
        "model_type": "bert",
        "vocab_size": 250_037,
        "hidden_size": 384,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 1536,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
    },
    "e5-large": {
        "model_type": "xlm-roberta",
        "vocab_size": 250_002,
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "intermediate_size": 4096,
        "max_position_embeddings": 514,
        "type_vocab_size": 1,
        "layer_norm_eps": 1e-5,
        "pad_token_id": 1,
    },
}
CPU_BATCH = {"e5-small": 32, "e5-large": 2}
"""Fine-tuning batch of the ``--cpu`` run: e5-small at the recipes' 32 (seconds per step); e5-large at 2 (at
32 a step takes minutes on 2 cores: the plan scales the time and the activations' memory to the batch)."""
SMOKE = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}

# (column name, characters, prefix) per text of a training row; the prefixes are the recipes' E5 prompts.
SHAPES: dict[str, list[tuple[str, int, str]]] = {
    "pairs_long": [("anchor", 60, "query: "), ("positive", 1200, "passage: ")],
    "triplets_short": [("anchor", 110, "query: "), ("positive", 55, "query: "), ("negative", 55, "query: ")],
}
ENCODE_TEXTS = {"short": 100, "long": 1200}


def words() -> list[str]:
    """Slovak words to fill texts of a given length with (the demo corpus's, in their order)."""
    out: list[str] = []
    for line in WORDS_FROM.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.extend(str(row.get("text", "")).split())
    return out


def texts(pool: list[str], n: int, chars: int, prefix: str, rng: random.Random) -> list[str]:
    """``n`` distinct texts of about ``chars`` characters: runs of the pool's words from random offsets."""
    out = []
    for i in range(n):
        start = rng.randrange(len(pool))
        text: list[str] = [str(i)]
        size = len(text[0])
        while size < chars:
            word = pool[(start + len(text)) % len(pool)]
            text.append(word)
            size += len(word) + 1
        out.append(prefix + " ".join(text))
    return out


def build_model(name: str, trimmed: bool, tokenizer_json: Path, root: Path, smoke: bool) -> Path:
    """A sentence-transformers-loadable directory: the architecture with random weights and the tokenizer."""
    from transformers import AutoConfig, AutoModel, PreTrainedTokenizerFast

    spec = dict(ARCHITECTURES[name])
    model_type = spec.pop("model_type")
    if smoke:
        spec.update(SMOKE)
    tokenizer_data = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    if trimmed:
        spec["vocab_size"] = TRIMMED_ROWS
        tokenizer_data["model"]["vocab"] = tokenizer_data["model"]["vocab"][:TRIMMED_ROWS]
        tokenizer_data["added_tokens"] = [t for t in tokenizer_data["added_tokens"] if t["id"] < TRIMMED_ROWS]
    out = root / f"{name}{'-trimmed' if trimmed else ''}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(tokenizer_data), encoding="utf-8")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(out / "tokenizer.json"),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=512,
    )
    tokenizer.save_pretrained(out)
    config = AutoConfig.for_model(model_type, **spec)
    AutoModel.from_config(config).save_pretrained(out)
    return out


def parameters(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())


def peak_gb(torch: Any, device: str) -> float | None:
    if device != "cuda":
        return None
    return round(torch.cuda.max_memory_allocated() / 2**30, 3)


def reset_peak(torch: Any, device: str) -> None:
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def sync(torch: Any, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def finetune_rate(
    model_dir: Path,
    shape: str,
    precision: str,
    args: argparse.Namespace,
    pool: list[str],
    levers: dict[str, Any] | None = None,
    profile: int = 0,
) -> dict:
    """Seconds per optimizer step of the real trainer on rows of one shape; ``levers``: extra training
    arguments (:func:`skadapt.devices.training_levers`); ``profile``: steps after the warm-up traced by
    ``torch.profiler`` (the result then holds where the host and the GPU spent a step)."""
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    from sentence_transformers.training_args import BatchSamplers
    from transformers import TrainerCallback

    rss = PeakRSS()
    rng = random.Random(42)
    batch = args.batch.get(model_dir.name.removesuffix("-trimmed"), BATCH)
    rows = batch * (args.steps + 2)
    data = {col: texts(pool, rows, chars, prefix, rng) for col, chars, prefix in SHAPES[shape]}
    model = SentenceTransformer(str(model_dir), device=args.device)
    model.max_seq_length = MAX_LENGTH
    stamps: list[float] = []
    cpu_stamps: list[float] = []

    tracer = Tracer(torch, args.warmup, profile) if profile else None

    class Stamp(TrainerCallback):
        def on_step_end(self, *_: Any, **__: Any) -> None:
            sync(torch, args.device)
            stamps.append(time.perf_counter())
            cpu_stamps.append(time.process_time())
            if tracer is not None:
                tracer.step(len(stamps))

    reset_peak(torch, args.device)
    with tempfile.TemporaryDirectory() as out:
        training = SentenceTransformerTrainingArguments(
            output_dir=out,
            per_device_train_batch_size=batch,
            max_steps=args.steps,
            learning_rate=2e-5,
            warmup_steps=max(1, args.steps // 10),
            weight_decay=0.01,
            bf16=precision == "bf16",
            batch_sampler=BatchSamplers.NO_DUPLICATES,
            save_strategy="no",
            report_to="none",
            logging_steps=10_000,
            disable_tqdm=True,
            seed=42,
            use_cpu=args.device == "cpu",
            **(levers or {}),
        )
        trainer = SentenceTransformerTrainer(
            model=model,
            args=training,
            train_dataset=Dataset.from_dict(data),
            loss=MultipleNegativesRankingLoss(model),
            callbacks=[Stamp()],
        )
        with rss.watch():
            trainer.train()
    steps = [b - a for a, b in zip(stamps[args.warmup :], stamps[args.warmup + 1 :], strict=False)]
    cpu_steps = [
        b - a for a, b in zip(cpu_stamps[args.warmup :], cpu_stamps[args.warmup + 1 :], strict=False)
    ]
    tokens = sum(
        min(len(model.tokenizer(row)["input_ids"]), MAX_LENGTH) for col in data for row in data[col][:batch]
    )
    seconds = statistics.median(steps)
    result = {
        "s_per_step": round(seconds, 5),
        "s_per_step_range": [round(min(steps), 5), round(max(steps), 5)],
        "rows_per_s": round(batch / seconds, 2),
        "cpu_s_per_step": round(statistics.median(cpu_steps), 5),
        "batch": batch,
        "tokens_per_batch": tokens,
        "timed_steps": len(steps),
        "peak_gb": peak_gb(torch, args.device),
        "peak_rss_gb": rss.gb,
        "parameters": parameters(model),
    }
    if levers:
        result["levers"] = dict(levers)
    if tracer is not None:
        result["profile"] = tracer.summary(args.device)
    reset_float32(torch)
    del trainer, model
    return result


def encode_rate(
    model_dir: Path,
    kind: str,
    precision: str,
    args: argparse.Namespace,
    pool: list[str],
    batch: int = ENCODE_BATCH,
) -> dict:
    """Texts per second of ``SentenceTransformer.encode`` at ``batch`` (default: the evaluation's CPU
    batch); ``precision`` ``tf32`` is float32 weights with TF32 matrix products."""
    import torch
    from sentence_transformers import SentenceTransformer

    n = args.encode_texts if kind == "short" else max(args.encode_texts // 4, 16)
    data = texts(pool, n, ENCODE_TEXTS[kind], "query: ", random.Random(7))
    model = SentenceTransformer(str(model_dir), device=args.device)
    model.max_seq_length = 512
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    if precision == "tf32":
        torch.set_float32_matmul_precision("high")
    model.encode(data[: batch * 2], batch_size=batch)  # warm-up
    reset_peak(torch, args.device)
    sync(torch, args.device)
    rss = PeakRSS()
    with rss.watch():
        start, cpu = time.perf_counter(), time.process_time()
        model.encode(data, batch_size=batch)
        sync(torch, args.device)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    result = {
        "texts_per_s": round(n / seconds, 1),
        "texts_per_cpu_s": round(n / cpu, 1),
        "texts": n,
        "chars": ENCODE_TEXTS[kind],
        "batch": batch,
        "peak_gb": peak_gb(torch, args.device),
        "peak_rss_gb": rss.gb,
    }
    reset_float32(torch)
    del model
    return result


def reset_float32(torch: Any) -> None:
    """Back to exact float32 matrix products (a measurement with TF32 sets it for the whole process)."""
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False


ACCOUNTING = "each kernel once (torch's own table total)"
"""How ``gpu_kernel_ms_per_step`` counts, recorded with it: results before 2026-11-29 summed every event's
self device time, which counts a kernel twice (on the kernel and on the operator that launched it)."""


def self_time_us(events: Any, device: str) -> float:
    """Microseconds ``device`` (``"cpu"`` or ``"cuda"``) spent in profiled ``events`` (a ``key_averages()``),
    each counted once, as torch's own table totals them ("Self CPU/CUDA time total"): on the CPU every
    event's self CPU time; on a GPU the self time of the device's own events (kernels, copies) only. An
    operator's self device time repeats its kernels', and a user annotation's spans the kernels inside it:
    summing every event's counted each kernel twice."""
    if device == "cpu":
        return float(sum(e.self_cpu_time_total for e in events))
    return float(
        sum(
            e.self_device_time_total
            for e in events
            if str(e.device_type).rsplit(".", 1)[-1].lower() == device and not e.is_user_annotation
        )
    )


class Tracer:
    """``torch.profiler`` over ``steps`` optimizer steps after ``warmup``: per step, the wall time, the
    time the GPU ran kernels, and the host operations that took the most time."""

    def __init__(self, torch: Any, warmup: int, steps: int) -> None:
        self.torch, self.start, self.stop = torch, warmup, warmup + steps
        self.profiler: Any = None
        self.began = 0.0
        self.wall = 0.0

    def step(self, done: int) -> None:
        profiler = self.torch.profiler
        if done == self.start:
            activities = [profiler.ProfilerActivity.CPU]
            if self.torch.cuda.is_available():
                activities.append(profiler.ProfilerActivity.CUDA)
            self.profiler = profiler.profile(activities=activities)
            self.profiler.__enter__()
            self.began = time.perf_counter()
        elif done == self.stop and self.profiler is not None:
            self.wall = time.perf_counter() - self.began
            self.profiler.__exit__(None, None, None)

    def summary(self, device: str, top: int = 12) -> dict[str, Any]:
        if self.profiler is None or not self.wall:
            return {"error": "the traced steps did not complete"}
        steps = self.stop - self.start
        events = self.profiler.key_averages()
        gpu_us = self_time_us(events, device) if device == "cuda" else 0
        rows = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:top]
        return {
            "steps": steps,
            "wall_ms_per_step": round(1000 * self.wall / steps, 2),
            "gpu_kernel_ms_per_step": round(gpu_us / 1000 / steps, 2),
            "gpu_busy_share": round(gpu_us / 1e6 / self.wall, 3) if self.wall else None,
            "accounting": ACCOUNTING,
            "host_ops_ms_per_step": {e.key: round(e.self_cpu_time_total / 1000 / steps, 3) for e in rows},
        }


PROCESS_START = "import torch, transformers, sentence_transformers, onnxruntime\n"
"""What a fresh speed-round process imports before it loads its model (skadapt/export/speed.py)."""


def measure_host(tokenizer_json: Path, smoke: bool) -> dict[str, Any]:
    """The GPU machine's host, for the plan's host work (``host`` of the rates file): one core's speed at
    single-threaded Python work (counting the Slovak wordfreq list, as trim does) against the 2-core CPU
    file's (``benchmark/plan_fixed_costs.py``, the same two lists), and a fresh process's start with the
    imports of a speed-round process (wall seconds; its model's load comes on top)."""
    from skadapt.blocks import count_wordfreq

    tokenizer = tokenizer_json.read_text(encoding="utf-8")
    start, words = time.process_time(), 0
    for lang in ("sk", "en"):  # as benchmark/plan_fixed_costs.py measured the CPU file's figure
        words += count_wordfreq(tokenizer, lang, max_words=2000 if smoke else None)[1]
    forms_per_s = 2 * words / max(time.process_time() - start, 1e-6)  # a word counts as itself + capitalised
    wall = time.perf_counter()
    subprocess.run([sys.executable, "-c", PROCESS_START], check=True, capture_output=True)
    host: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "wordfreq_forms_per_s": round(forms_per_s),
        "process_start_s": round(time.perf_counter() - wall, 2),
    }
    here = cpu_file_figure("wordfreq_forms_per_s")
    if here:
        host["core_speed"] = round(forms_per_s / here, 2)
    return host


def cpu_file_figure(name: str) -> float | None:
    """A fixed cost of the CPU rates file nearest this machine (same core count, else the first CPU file;
    the planner's choice), read from the repository's ``skadapt/plan/rates``: None without one."""
    files = []
    for path in sorted((ROOT / "skadapt" / "plan" / "rates").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("environment", {}).get("device", "cpu") == "cpu":
            files.append(data)
    same = [d for d in files if d.get("environment", {}).get("cpu_count") == os.cpu_count()]
    value = next(iter(same or files), {}).get("fixed", {}).get(name)
    return float(value) if value is not None else None


def cpu_name() -> str:
    """The CPU's model name (Linux), else the platform's processor string."""
    info = Path("/proc/cpuinfo")
    if info.is_file():
        for line in info.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def environment(device: str) -> dict[str, Any]:
    import psutil
    import sentence_transformers
    import torch
    import transformers

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "cpu_count": os.cpu_count(),
        "cpu": cpu_name(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "torch_threads": torch.get_num_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "device": device,
    }
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env["gpu"] = props.name
        env["gpu_memory_gb"] = round(props.total_memory / 2**30, 1)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", type=Path, required=True, help="the XLM-R tokenizer.json of mE5")
    parser.add_argument("--out", type=Path, default=Path("gpu_check.json"))
    parser.add_argument("--steps", type=int, default=30, help="optimizer steps per fine-tuning measurement")
    parser.add_argument("--warmup", type=int, default=8, help="steps left out of the timing")
    parser.add_argument("--encode-texts", type=int, default=4096, help="short texts per encoding measurement")
    parser.add_argument("--models", default="e5-small,e5-large", help="comma-separated architectures")
    parser.add_argument("--smoke", action="store_true", help="tiny models on the CPU: checks the script runs")
    parser.add_argument(
        "--cpu", action="store_true", help="the real models on the CPU, fp32, few steps, + data-path rates"
    )
    parser.add_argument("--machine", default=None, help="a name for the machine measured (e.g. cpu-2core)")
    args = parser.parse_args()
    import torch

    args.device = "cuda" if torch.cuda.is_available() and not (args.smoke or args.cpu) else "cpu"
    args.batch = dict(CPU_BATCH) if args.cpu else {}
    if args.smoke:
        args.steps, args.warmup, args.encode_texts = 4, 1, 64
    if args.cpu:
        args.steps, args.warmup, args.encode_texts = 4, 0, 256
    precisions = ["fp32"] if args.cpu else ["fp32", "bf16"]
    pool = words()
    report: dict[str, Any] = {
        "source": "benchmark/gpu_check.py" + (" --cpu" if args.cpu else ""),
        "machine": args.machine,
        "date": time.strftime("%Y-%m-%d"),
        "environment": environment(args.device),
        "settings": {
            "batch": BATCH,
            "max_length": MAX_LENGTH,
            "encode_batch": ENCODE_BATCH,
            "steps": args.steps,
            "warmup": args.warmup,
            "finetune_batch": args.batch or BATCH,
        },
        "finetune": {},
        "encode": {},
        "errors": [],
    }
    began = time.perf_counter()

    def save() -> None:
        report["wall_s"] = round(time.perf_counter() - began, 1)
        report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    plan = []
    for name in args.models.split(","):
        plan += [(name, True, "finetune", shape, p) for shape in SHAPES for p in precisions]
        plan += [(name, True, "encode", kind, p) for kind in ENCODE_TEXTS for p in precisions]
    plan += [("e5-small", False, "finetune", "pairs_long", p) for p in precisions]  # the untrimmed vocabulary
    if args.device == "cuda" or args.smoke:
        try:
            report["host"] = measure_host(args.tokenizer, args.smoke)
            print(f"host {json.dumps(report['host'])}", flush=True)
        except Exception as error:
            report["errors"].append(f"host: {error!r}")
            traceback.print_exc()
    if args.cpu or args.smoke:
        try:
            report["data"] = measure_data_paths(args.tokenizer, 0.05 if args.smoke else 0.5)
            print(f"data paths {json.dumps(report['data'])}", flush=True)
        except Exception as error:
            report["errors"].append(f"data paths: {error!r}")
            traceback.print_exc()
        save()
    with tempfile.TemporaryDirectory() as scratch:
        built: dict[tuple[str, bool], Path] = {}
        for name, trimmed, job, shape, precision in plan:
            label = f"{name}{'-trimmed' if trimmed else ''}"
            try:
                if (name, trimmed) not in built:
                    built[(name, trimmed)] = build_model(
                        name, trimmed, args.tokenizer, Path(scratch), args.smoke
                    )
                measure = finetune_rate if job == "finetune" else encode_rate
                result = measure(built[(name, trimmed)], shape, precision, args, pool)
                report[job].setdefault(label, {}).setdefault(precision, {})[shape] = result
                print(f"{job:8} {label:16} {precision:4} {shape:15} {json.dumps(result)}", flush=True)
            except Exception as error:  # one failed measurement must not lose the others
                report["errors"].append(f"{job} {label} {precision} {shape}: {error!r}")
                traceback.print_exc()
            finally:
                if args.device == "cuda":
                    torch.cuda.empty_cache()
            save()
    print(f"wrote {args.out} in {report['wall_s']} s; {len(report['errors'])} error(s)")


if __name__ == "__main__":
    main()
