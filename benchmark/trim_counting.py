"""Token-counting speed and memory of ``skadapt trim`` against the fastest ``tokenizers`` and vocabtrimmer.

Measured side by side in one run, on the real multilingual-e5-small tokenizer and a synthetic Slovak
corpus (sentences of words drawn from wordfreq:sk by frequency, with capitals, punctuation and numbers).
Rows come in two groups; each says what it measures:

in memory (the ``tokenizer.json`` text and a list of texts -> token counts; parsing the 250k-token
tokenizer, ~1 s, is part of every row):
1. reference: ``Tokenizer.encode_batch_fast`` on all cores (Rust threads) + ``np.bincount`` of the ids -
   the fastest way ``tokenizers`` offers to count (no offsets computed); ``encode_batch_fast`` alone and
   ``encode_batch`` (which also computes offsets; the reference of earlier runs) are shown for context;
2. ``skadapt.trim.parallel.count_texts`` on one thread and on all cores (the tokenizer's own threads);

end to end (a corpus file on disk -> token counts of the whole corpus):
3. ``skadapt.trim.counting.count_source``: reading the file, counting every text on all cores, drawing the
   1,000-text parity sample (no cache);
4. vocabtrimmer 0.0.2 ``vocab_miner`` (the counting step of vocabtrimmer's trimming): ``datasets`` text
   loading (a fresh copy of the file each repeat, so no Arrow cache is reused), ``AutoTokenizer`` on
   1,000-text chunks, a Python dict of counts, JSON output.

Prints seconds and MB/s per row, the ratios skadapt / reference (in memory) and skadapt / vocabtrimmer
(end to end), checks that skadapt's counts equal the reference's, and peak RSS.

    OMP_NUM_THREADS=1 .venv/bin/python benchmark/trim_counting.py [--mb 5] [--model DIR] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import types
from collections.abc import Callable
from importlib import util
from pathlib import Path

import numpy as np

DEFAULT_MODEL = Path(
    os.environ.get("SKADAPT_TEST_MODEL", Path.home() / ".cache/skadapt-offline/multilingual-e5-small")
)
REFERENCE = "reference: encode_batch_fast + bincount"
VOCABTRIMMER = "vocabtrimmer 0.0.2 vocab_miner"
PARITY_DOCUMENTS = 1000


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


def rust_tokenizer(tokenizer_json: str) -> object:
    """A ``tokenizers.Tokenizer`` using all cores (Rust threads), padding and truncation off."""
    from tokenizers import Tokenizer

    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    tokenizer = Tokenizer.from_str(tokenizer_json)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def reference_encode(tokenizer_json: str, method: str, texts: list[str], batch_size: int) -> None:
    """Parse the tokenizer, then ``method`` (``encode_batch_fast`` or ``encode_batch``) over the texts."""
    tokenizer = rust_tokenizer(tokenizer_json)
    encode = getattr(tokenizer, method)
    for start in range(0, len(texts), batch_size):
        encode(texts[start : start + batch_size], add_special_tokens=False)


def reference_count(tokenizer_json: str, texts: list[str], batch_size: int) -> np.ndarray:
    """The fastest counting ``tokenizers`` allows: parse, then ``encode_batch_fast`` + ``np.bincount``.

    Parsing is included, as in skadapt's counting (both start from the ``tokenizer.json`` text).
    """
    tokenizer = rust_tokenizer(tokenizer_json)
    size = tokenizer.get_vocab_size(with_added_tokens=True)  # type: ignore[attr-defined]
    counts = np.zeros(size, dtype=np.int64)
    for start in range(0, len(texts), batch_size):
        encodings = tokenizer.encode_batch_fast(  # type: ignore[attr-defined]
            texts[start : start + batch_size], add_special_tokens=False
        )
        ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encodings])
        counts += np.bincount(ids, minlength=size)
    return counts


def skadapt_count(tokenizer_json: str, texts: list[str], batch_size: int, workers: int) -> np.ndarray:
    """skadapt's in-memory counter (``workers=1``: one thread; otherwise the tokenizer's thread pool)."""
    from skadapt.blocks import count_texts

    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    counts, _, _ = count_texts(tokenizer_json, texts, batch_size=batch_size, workers=workers)
    return counts


def skadapt_count_source(tokenizer_json: str, corpus: Path, batch_size: int, workers: int) -> np.ndarray:
    """skadapt end to end: read the file, count every text, draw the parity sample (cache off)."""
    from skadapt.blocks import count_source

    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    result = count_source(
        tokenizer_json,
        str(corpus),
        parity_documents=PARITY_DOCUMENTS,
        seed=42,
        batch_size=batch_size,
        workers=workers,
        use_cache=False,
    )
    assert len(result.sample) == min(PARITY_DOCUMENTS, result.documents)
    return result.counts


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


def vocabtrimmer_count(miner: Callable[..., dict], model: Path, corpus: Path, work: Path) -> None:
    """vocabtrimmer's counting on a fresh copy of the corpus (so ``datasets`` reuses no Arrow cache)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    run = work / f"vt-{time.perf_counter_ns()}"
    corpus_dir = run / "corpus"
    corpus_dir.mkdir(parents=True)
    shutil.copy(corpus, corpus_dir / "train.txt")
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


def without_specials(tokenizer: object, counts: np.ndarray) -> np.ndarray:
    """Reference counts with the special tokens (the tokenizer's special added tokens) zeroed, as skadapt
    counts them."""
    counts = counts.copy()
    counts[[i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special]] = 0  # type: ignore[attr-defined]
    return counts


class Table:
    """Benchmark rows: (method, what it measures, best seconds)."""

    def __init__(self, repeats: int) -> None:
        self.repeats = repeats
        self.rows: list[tuple[str, str, float]] = []

    def measure(self, name: str, what: str, function: Callable[[], object]) -> None:
        """Time ``function`` (best of the repeats) as one row."""
        self.rows.append((name, what, timed(function, self.repeats)))

    def seconds(self, name: str) -> float | None:
        """Seconds of a row, or None when it did not run."""
        return next((seconds for row, _, seconds in self.rows if row == name), None)

    def print(self, megabytes: float) -> None:
        """Print the rows with MB/s."""
        print(f"\n{'method':<40} {'measures':<52} {'seconds':>8} {'MB/s':>8}")
        for name, what, seconds in self.rows:
            print(f"{name:<40} {what:<52} {seconds:8.2f} {megabytes / seconds:8.2f}")


def in_memory_rows(table: Table, tokenizer_json: str, texts: list[str], batch_size: int) -> tuple[str, bool]:
    """The in-memory rows; returns the reference's row name and whether skadapt's counts equal it."""
    import tokenizers

    cores = os.cpu_count() or 1
    rust = rust_tokenizer(tokenizer_json)
    threads = f"in memory, {cores} Rust threads"
    fast = hasattr(rust, "encode_batch_fast")
    if fast:
        table.measure(
            REFERENCE,
            f"{threads}: json + texts -> counts",
            lambda: reference_count(tokenizer_json, texts, batch_size),
        )
        table.measure(
            "encode_batch_fast alone",
            f"{threads}: json + texts -> ids",
            lambda: reference_encode(tokenizer_json, "encode_batch_fast", texts, batch_size),
        )
    else:
        print(f"tokenizers {tokenizers.__version__} has no encode_batch_fast: the reference is encode_batch")
    slow = "encode_batch alone (with offsets)"
    table.measure(
        slow,
        f"{threads}: json + texts -> ids",
        lambda: reference_encode(tokenizer_json, "encode_batch", texts, batch_size),
    )
    for workers in sorted({1, cores}):
        table.measure(
            f"skadapt count_texts, {workers} worker(s)",
            f"in memory, {workers} thread(s): json + texts -> counts",
            lambda w=workers: skadapt_count(tokenizer_json, texts, batch_size, w),
        )
    if not fast:
        return slow, False
    expected = without_specials(rust, reference_count(tokenizer_json, texts, batch_size))
    return REFERENCE, bool(np.array_equal(skadapt_count(tokenizer_json, texts, batch_size, cores), expected))


def end_to_end_rows(table: Table, args: argparse.Namespace, tokenizer_json: str, texts: list[str]) -> str:
    """The end-to-end rows (file -> counts); returns what happened to vocabtrimmer."""
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = work / "corpus.txt"
        corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
        table.measure(
            "skadapt count_source",
            f"end to end, {cores} threads: file -> counts + sample",
            lambda: skadapt_count_source(tokenizer_json, corpus, args.batch_size, cores),
        )
        if args.skip_vocabtrimmer:
            return "skipped"
        miner = load_vocab_miner()
        if isinstance(miner, str):
            return miner
        try:
            table.measure(
                VOCABTRIMMER,
                f"end to end, {cores} Rust threads: file -> counts",
                lambda: vocabtrimmer_count(miner, args.model, corpus, work),
            )
        except Exception as error:
            return f"failed: {type(error).__name__}: {error}"
    return "ran (datasets text loading of a fresh file copy + AutoTokenizer counting + JSON)"


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

    import tokenizers

    cores = os.cpu_count() or 1
    tokenizer_json = (args.model / "tokenizer.json").read_text(encoding="utf-8")
    texts = slovak_corpus(args.mb)
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"corpus: {len(texts):,} synthetic Slovak documents, {megabytes:.2f} MB; cores: {cores}")
    print(f"tokenizers {tokenizers.__version__}")
    baseline_rss = peak_rss_mb(resource.RUSAGE_SELF)
    table = Table(args.repeats)
    reference_name, same = in_memory_rows(table, tokenizer_json, texts, args.batch_size)
    main_rss = peak_rss_mb(resource.RUSAGE_SELF)
    vt_note = end_to_end_rows(table, args, tokenizer_json, texts)
    worker_rss = peak_rss_mb(resource.RUSAGE_CHILDREN)
    table.print(megabytes)

    ours = table.seconds(f"skadapt count_texts, {cores} worker(s)") or float("nan")
    single = table.seconds("skadapt count_texts, 1 worker(s)") or float("nan")
    reference = table.seconds(reference_name) or float("nan")
    summary: dict[str, object] = {
        "corpus_mb": round(megabytes, 2),
        "cores": cores,
        "tokenizers": tokenizers.__version__,
        "reference": reference_name,
        "throughput_ratio_vs_reference": round(reference / ours, 3),
        "counts_equal_reference": same,
        "scaling_1_to_all_cores": round(single / ours, 3),
        "peak_rss_main_mb": round(main_rss, 1),
        "peak_rss_main_before_counting_mb": round(baseline_rss, 1),
        "peak_rss_worker_mb": round(worker_rss, 1),
        "vocabtrimmer": vt_note,
    }
    ratio = summary["throughput_ratio_vs_reference"]
    print(f"\nskadapt count_texts / {reference_name} ({cores} cores): {ratio}")
    print(f"skadapt counts equal the reference's: {same}")
    print(f"scaling 1 -> {cores} workers: {summary['scaling_1_to_all_cores']}x")
    vt, end_to_end = table.seconds(VOCABTRIMMER), table.seconds("skadapt count_source")
    if vt is not None and end_to_end is not None:
        summary["end_to_end_ratio_vs_vocabtrimmer"] = round(vt / end_to_end, 3)
        print(
            f"end to end, skadapt count_source / vocabtrimmer: {summary['end_to_end_ratio_vs_vocabtrimmer']}"
        )
    print(f"vocabtrimmer: {vt_note}")
    print(f"peak RSS: main {main_rss:.0f} MB (corpus in memory), largest child process {worker_rss:.0f} MB")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
