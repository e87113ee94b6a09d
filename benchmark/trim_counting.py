"""Token-counting speed and memory of ``skadapt trim`` against raw ``tokenizers`` and vocabtrimmer.

Measured side by side in one run, on the real multilingual-e5-small tokenizer and a synthetic Slovak
corpus (sentences of words drawn from wordfreq:sk by frequency, with capitals, punctuation and numbers):

1. raw ``Tokenizer.encode_batch`` over the corpus on all cores (Rust threads) - the upper bound;
2. ``skadapt.trim.counting.count_texts`` with 1..all worker processes (one core each);
3. vocabtrimmer 0.0.2 ``vocab_miner`` (the counting step of vocabtrimmer's trimming) on the same file.

Prints MB/s for each and the ratios skadapt / raw and skadapt / vocabtrimmer, plus peak RSS.

    OMP_NUM_THREADS=1 .venv/bin/python benchmark/trim_counting.py [--mb 5] [--model DIR] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import types
from collections.abc import Callable
from importlib import util
from pathlib import Path

import numpy as np

DEFAULT_MODEL = Path.home() / ".cache/skadapt-offline/multilingual-e5-small"


def slovak_corpus(target_mb: float, seed: int = 0) -> list[str]:
    """Documents of 3-8 sentences of wordfreq:sk words sampled by frequency (deterministic)."""
    import wordfreq

    words = list(wordfreq.iter_wordlist("sk", "best"))[:50_000]
    freqs = np.array([wordfreq.word_frequency(w, "sk") for w in words])
    probs = freqs / freqs.sum()
    rng = np.random.default_rng(seed)
    documents: list[str] = []
    size = 0
    while size < target_mb * 1e6:
        sentences = []
        for _ in range(rng.integers(3, 9)):
            picked = [words[i] for i in rng.choice(len(words), size=rng.integers(6, 26), p=probs)]
            for position in range(len(picked)):
                roll = rng.random()
                if roll < 0.03:
                    picked[position] = str(rng.integers(1, 2025))
                elif roll < 0.10 and position < len(picked) - 1:
                    picked[position] += ","
                elif roll < 0.13:
                    picked[position] = picked[position].capitalize()
            sentence = " ".join(picked)
            sentences.append(sentence[:1].upper() + sentence[1:] + rng.choice([".", ".", ".", "?", "!"]))
        document = " ".join(sentences)
        documents.append(document)
        size += len(document.encode("utf-8"))
    return documents


def timed(function: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``repeats`` calls."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def raw_encode(tokenizer_json: str, texts: list[str], batch_size: int) -> None:
    """Upper bound: encode_batch on all cores, nothing else."""
    from tokenizers import Tokenizer

    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    tokenizer = Tokenizer.from_str(tokenizer_json)
    for start in range(0, len(texts), batch_size):
        tokenizer.encode_batch(texts[start : start + batch_size], add_special_tokens=False)


def skadapt_count(tokenizer_json: str, texts: list[str], batch_size: int, workers: int) -> np.ndarray:
    """skadapt's counter with ``workers`` single-threaded processes."""
    from skadapt.trim.counting import count_texts

    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    counts, _, _ = count_texts(tokenizer_json, texts, batch_size=batch_size, workers=workers)
    return counts


def load_vocab_miner() -> Callable[..., dict] | str:
    """vocabtrimmer's ``vocab_miner``, imported without the package ``__init__``.

    ``vocabtrimmer/__init__.py`` imports ``base_trimmer``, which needs ``huggingface_hub.Repository``
    (removed in huggingface_hub 1.0); the counting code in ``vocab_miner.py`` does not, so the package is
    registered as a bare namespace and only that module is imported. Returns a reason string on failure.
    """
    spec = util.find_spec("vocabtrimmer")
    if spec is None or not spec.submodule_search_locations:
        return "vocabtrimmer is not installed (pip install --no-deps vocabtrimmer==0.0.2)"
    package = types.ModuleType("vocabtrimmer")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["vocabtrimmer"] = package
    try:
        from vocabtrimmer.vocab_miner import vocab_miner
    except Exception as error:
        return f"vocabtrimmer.vocab_miner cannot be imported: {type(error).__name__}: {error}"
    return vocab_miner


def vocabtrimmer_count(miner: Callable[..., dict], model: Path, corpus_dir: Path, work: Path) -> None:
    """vocabtrimmer's counting (AutoTokenizer on 1000-text chunks of a datasets ``text`` folder)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    run = work / f"vt-{time.perf_counter_ns()}"
    miner(
        model=str(model),
        language="sk",
        dataset=str(corpus_dir),
        dataset_column="text",
        dataset_split="train",
        target_vocab_size=None,
        min_frequency=1,
        chunk=1000,
        cache_file_vocab=str(run / "vocab.json"),
        cache_file_frequency=str(run / "frequency.json"),
    )


def peak_rss_mb(who: int) -> float:
    """Peak resident set size in MB (``RUSAGE_SELF`` or the largest of ``RUSAGE_CHILDREN``)."""
    return resource.getrusage(who).ru_maxrss / 1024


def main() -> None:
    """Run the benchmark and print a table and a JSON line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=5.0, help="corpus size in MB")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--skip-vocabtrimmer", action="store_true")
    args = parser.parse_args()

    cores = os.cpu_count() or 1
    tokenizer_json = (args.model / "tokenizer.json").read_text(encoding="utf-8")
    texts = slovak_corpus(args.mb)
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"corpus: {len(texts):,} synthetic Slovak documents, {megabytes:.2f} MB; cores: {cores}")
    baseline_rss = peak_rss_mb(resource.RUSAGE_SELF)

    results: dict[str, float] = {}
    results["raw tokenizers encode_batch (all cores)"] = timed(
        lambda: raw_encode(tokenizer_json, texts, args.batch_size), args.repeats
    )
    for workers in sorted({1, cores}):
        results[f"skadapt count_texts, {workers} worker(s)"] = timed(
            lambda w=workers: skadapt_count(tokenizer_json, texts, args.batch_size, w), args.repeats
        )
    main_rss = peak_rss_mb(resource.RUSAGE_SELF)
    worker_rss = peak_rss_mb(resource.RUSAGE_CHILDREN)

    vt_note = "skipped"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus_dir = work / "corpus"
        corpus_dir.mkdir()
        (corpus_dir / "train.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
        if not args.skip_vocabtrimmer:
            miner = load_vocab_miner()
            if isinstance(miner, str):
                vt_note = miner
            else:
                try:
                    results["vocabtrimmer 0.0.2 vocab_miner (all cores)"] = timed(
                        lambda: vocabtrimmer_count(miner, args.model, corpus_dir, work), args.repeats
                    )
                    vt_note = "ran (end to end: datasets text loading + AutoTokenizer counting + JSON)"
                except Exception as error:
                    vt_note = f"failed: {type(error).__name__}: {error}"

    print(f"\n{'method':<46} {'seconds':>8} {'MB/s':>8}")
    for name, seconds in results.items():
        print(f"{name:<46} {seconds:8.2f} {megabytes / seconds:8.2f}")
    raw = results["raw tokenizers encode_batch (all cores)"]
    ours = results[f"skadapt count_texts, {cores} worker(s)"]
    single = results["skadapt count_texts, 1 worker(s)"]
    summary = {
        "corpus_mb": round(megabytes, 2),
        "cores": cores,
        "throughput_ratio_vs_raw_encode_batch": round(raw / ours, 3),
        "scaling_1_to_all_cores": round(single / ours, 3),
        "peak_rss_main_mb": round(main_rss, 1),
        "peak_rss_main_before_counting_mb": round(baseline_rss, 1),
        "peak_rss_worker_mb": round(worker_rss, 1),
        "vocabtrimmer": vt_note,
    }
    vt = results.get("vocabtrimmer 0.0.2 vocab_miner (all cores)")
    if vt is not None:
        summary["throughput_ratio_vs_vocabtrimmer"] = round(vt / ours, 3)
    ratio = summary["throughput_ratio_vs_raw_encode_batch"]
    print(f"\nskadapt / raw encode_batch throughput ({cores} cores): {ratio}")
    print(f"scaling 1 -> {cores} workers: {summary['scaling_1_to_all_cores']}x")
    if vt is not None:
        print(f"skadapt / vocabtrimmer throughput: {summary['throughput_ratio_vs_vocabtrimmer']}")
    print(f"vocabtrimmer: {vt_note}")
    print(f"peak RSS: main {main_rss:.0f} MB (corpus in memory), largest worker {worker_rss:.0f} MB")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
