"""Overhead of ``skadapt evaluate`` over plain ``mteb.evaluate``, and length-sorted batching throughput.

1. Wall time of the Slovak local suite through skadapt (task selection, prompt wiring, report) vs the same
   task objects through ``mteb.evaluate`` directly, both without a result cache; ratio = mteb / skadapt
   (goal >= 0.95). Best of ``--repeats`` runs each, alternating.
2. Encode throughput with length-sorted batching (sentence-transformers sorts each ``encode`` call by
   length) vs the same batches in corpus order; ratio = sorted / unsorted.

    OMP_NUM_THREADS=2 python benchmark/evaluate_overhead.py [--model DIR] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests/data/suite_sk/suite.yaml"
CORPUS = ROOT / "tests/data/sk_corpus.txt"
DEFAULT_MODEL = Path.home() / ".cache/skadapt-offline/multilingual-e5-small"


def time_skadapt(model: str) -> float:
    """Seconds for run_evaluation (no cache) on the suite, report included."""
    from skadapt.evaluate.stage import run_evaluation

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_evaluation({"m": model}, [str(SUITE)], Path(tmp), language="slk", cache_dir=None)
    return time.perf_counter() - start


def time_mteb(model: str) -> float:
    """Seconds for mteb.evaluate on the same task objects and the same prompts (query/passage)."""
    import mteb
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    from skadapt.evaluate.runner import role_prompts
    from skadapt.evaluate.selection import select_tasks

    start = time.perf_counter()
    tasks = select_tasks([str(SUITE)], language="slk")
    st_model = SentenceTransformer(model, device="cpu")
    encoder = SentenceTransformerEncoderWrapper(st_model, model_prompts=role_prompts(st_model.prompts))
    mteb.evaluate(
        encoder,
        tasks,
        cache=None,
        encode_kwargs={"batch_size": 32},
        show_progress_bar=False,
        co2_tracker=False,
    )
    return time.perf_counter() - start


def throughput(model: str, batch_size: int = 32, repeats: int = 2) -> tuple[float, float]:
    """Texts/second with sentence-transformers' length sorting vs fixed batches in corpus order."""
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(model, device="cpu")
    texts = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts += [t[: random.Random(i).randint(10, len(t))] for i, t in enumerate(texts)]  # varied lengths
    random.Random(0).shuffle(texts)
    best_sorted = best_plain = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        encoder.encode(texts, batch_size=batch_size)
        best_sorted = min(best_sorted, time.perf_counter() - start)
        start = time.perf_counter()
        for i in range(0, len(texts), batch_size):
            encoder.encode(texts[i : i + batch_size], batch_size=batch_size)
        best_plain = min(best_plain, time.perf_counter() - start)
    return len(texts) / best_sorted, len(texts) / best_plain


def main() -> None:
    """Run both measurements and print a markdown table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    skadapt_s, mteb_s = float("inf"), float("inf")
    time_mteb(args.model)  # warm-up: imports, file cache
    for index in range(args.repeats):  # alternate the order: the machine may be shared
        first, second = (time_skadapt, time_mteb) if index % 2 == 0 else (time_mteb, time_skadapt)
        a, b = first(args.model), second(args.model)
        s_time, m_time = (a, b) if first is time_skadapt else (b, a)
        skadapt_s, mteb_s = min(skadapt_s, s_time), min(mteb_s, m_time)
    sorted_tps, plain_tps = throughput(args.model)
    print("| measurement | value |")
    print("|---|---|")
    print(f"| suite via skadapt (s) | {skadapt_s:.2f} |")
    print(f"| suite via mteb.evaluate (s) | {mteb_s:.2f} |")
    print(f"| ratio mteb / skadapt (goal >= 0.95) | {mteb_s / skadapt_s:.3f} |")
    print(f"| encode, length-sorted (texts/s) | {sorted_tps:.1f} |")
    print(f"| encode, corpus order (texts/s) | {plain_tps:.1f} |")
    print(f"| ratio sorted / unsorted | {sorted_tps / plain_tps:.2f} |")
    print(
        f"\nmodel {args.model}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, best of {args.repeats}"
    )


if __name__ == "__main__":
    main()
