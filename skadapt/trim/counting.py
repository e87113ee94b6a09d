"""Token frequencies of a corpus under a model's fast tokenizer.

Texts are encoded in batches by worker processes (``multiprocessing``); each worker sends
back only the distinct ids of its batch with their counts, and the parent adds them into one count vector
of vocabulary size. Memory is therefore bounded by the vocabulary size and the number of batches in
flight, never by the corpus. Special tokens are not counted (texts are encoded without them).

Counts are cached on disk (see :mod:`skadapt.trim.cache`) under a key made of the tokenizer fingerprint,
the source spec (with a fingerprint of local files), the column and the limits, so a second run with the
same inputs does not recount.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import string
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts
from skadapt.sources import iter_texts, iter_wordfreq, parse_source, resolve_files
from skadapt.trim import cache

log = logging.getLogger("skadapt.trim")

COUNTS_VERSION = 1
"""Bump when the meaning of cached counts changes."""

HOLDOUT_EVERY = 10
"""Every 10th text read is held out from counting for the parity check (until ``parity_documents``)."""

COVERAGE_CHARACTERS = string.digits + string.punctuation + "„“”‚‘’«»–—…€§°"
"""Digits and punctuation counted for word lists (which have none) so trimming keeps them."""

ProgressHook = Callable[[int, int], None]
"""Called with (documents, bytes) done so far."""


@dataclass
class TokenCounts:
    """Token frequencies of one source.

    Attributes:
        counts: Occurrences per token id (int64, length = tokenizer vocabulary incl. added tokens).
        source: The source spec that was counted.
        key: Cache key (the counts fingerprint).
        documents: Texts (or word-list entries) counted.
        bytes: UTF-8 bytes counted.
        seconds: Counting time (0 when read from the cache).
        cached: Whether the counts came from the cache.
    """

    counts: np.ndarray
    source: str
    key: str
    documents: int = 0
    bytes: int = 0
    seconds: float = 0.0
    cached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        """Total token occurrences."""
        return int(self.counts.sum())

    @property
    def distinct(self) -> int:
        """Distinct tokens seen at least once."""
        return int(np.count_nonzero(self.counts))

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description (for reports and manifests)."""
        return {
            "source": self.source,
            "fingerprint": self.key,
            "documents": self.documents,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "distinct_tokens": self.distinct,
            "cached": self.cached,
            "seconds": round(self.seconds, 3),
            **self.extra,
        }


def tokenizer_fingerprint(tokenizer_json: str) -> str:
    """sha256 of a serialized ``tokenizer.json``."""
    return hashlib.sha256(tokenizer_json.encode("utf-8")).hexdigest()


def load_tokenizer(tokenizer_json: str) -> Any:
    """A ``tokenizers.Tokenizer`` from JSON, with padding and truncation off (counting sees whole texts)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _special_ids(tokenizer: Any) -> np.ndarray:
    return np.array(
        sorted(i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special),
        dtype=np.int64,
    )


BatchCounts = tuple[np.ndarray, np.ndarray, int, int]
"""Distinct token ids of a batch, their counts, the batch's texts and UTF-8 bytes."""


def _batch_counts(tokenizer: Any, texts: list[str]) -> BatchCounts:
    """Distinct non-special token ids of a batch with their counts, and the batch size in texts and bytes.

    Bytes are measured here, in the worker, so the parent process only moves batches.
    """
    encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encodings), dtype=np.int64)
    unique, counts = np.unique(ids, return_counts=True)
    return unique, counts, len(texts), sum(len(t.encode("utf-8")) for t in texts)


_WORKER_TOKENIZER: Any = None


def _init_worker(tokenizer_json: str) -> None:
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core per worker process
    global _WORKER_TOKENIZER
    if _WORKER_TOKENIZER is None:  # spawned; a forked worker inherits the parent's parsed tokenizer
        _WORKER_TOKENIZER = load_tokenizer(tokenizer_json)


def _worker_count(texts: list[str]) -> BatchCounts:
    return _batch_counts(_WORKER_TOKENIZER, texts)


def batched(texts: Iterable[str], batch_size: int) -> Iterator[list[str]]:
    """Lists of up to ``batch_size`` texts."""
    iterator = iter(texts)
    while batch := list(itertools.islice(iterator, batch_size)):
        yield batch


def count_texts(
    tokenizer_json: str,
    texts: Iterable[str],
    *,
    batch_size: int = 1000,
    workers: int | None = None,
    on_progress: ProgressHook | None = None,
) -> tuple[np.ndarray, int, int]:
    """Count non-special tokens of ``texts``.

    Args:
        tokenizer_json: The serialized fast tokenizer.
        texts: Texts to count (streamed; never held in memory all at once).
        batch_size: Texts per batch sent to a worker.
        workers: Worker processes; ``None`` = all cores, 1 = count in this process.
        on_progress: Called after each batch with (documents, bytes) so far.

    Returns:
        (counts per token id, documents, UTF-8 bytes).
    """
    tokenizer = load_tokenizer(tokenizer_json)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    counts = np.zeros(size, dtype=np.int64)
    documents = size_bytes = 0

    def add(result: BatchCounts) -> None:
        nonlocal documents, size_bytes
        ids, id_counts, batch_documents, batch_bytes = result
        counts[ids] += id_counts
        documents += batch_documents
        size_bytes += batch_bytes
        if on_progress:
            on_progress(documents, size_bytes)

    workers = workers or os.cpu_count() or 1
    batches = batched(texts, batch_size)
    if workers == 1:
        for batch in batches:
            add(_batch_counts(tokenizer, batch))
    else:
        _count_parallel(tokenizer, tokenizer_json, batches, workers, add)
    counts[_special_ids(tokenizer)] = 0
    return counts, documents, size_bytes


def _count_parallel(
    tokenizer: Any,
    tokenizer_json: str,
    batches: Iterator[list[str]],
    workers: int,
    add: Callable[[BatchCounts], None],
) -> None:
    """Feed batches to a process pool with at most ``2 * workers`` batches in flight.

    Workers are forked where the platform allows (fast start, no re-import of the caller's ``__main__``,
    which a spawned worker would re-run in a script without a main guard); they only run ``tokenizers``
    and numpy, never torch.
    """
    import multiprocessing

    global _WORKER_TOKENIZER
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    if "fork" in methods:
        _WORKER_TOKENIZER = tokenizer  # parsed once, inherited by the forked workers
    try:
        _run_pool(context, tokenizer_json, batches, workers, add)
    finally:
        _WORKER_TOKENIZER = None


def _run_pool(
    context: Any,
    tokenizer_json: str,
    batches: Iterator[list[str]],
    workers: int,
    add: Callable[[BatchCounts], None],
) -> None:
    with ProcessPoolExecutor(workers, context, initializer=_init_worker, initargs=(tokenizer_json,)) as pool:
        pending: set[Future[BatchCounts]] = set()
        for batch in batches:
            pending.add(pool.submit(_worker_count, batch))
            if len(pending) >= 2 * workers:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    add(future.result())
        for future in pending:
            add(future.result())


def word_forms(word: str) -> list[str]:
    """The forms of a (lowercased) word-list entry that are counted: itself and its capitalised form."""
    capitalised = word[:1].upper() + word[1:]
    return [word, capitalised] if capitalised != word else [word]


CAPITALISED_SHARE = 0.1
"""Share of a word's count given to its capitalised form (sentence starts, names)."""


def count_wordfreq(
    tokenizer_json: str, lang: str, *, max_words: int | None = None, batch_size: int = 1000
) -> tuple[np.ndarray, int, int]:
    """Weighted token counts of a wordfreq list (counts = occurrences per billion words).

    wordfreq lists are lowercased and have no digits or punctuation, so each word is also counted
    capitalised (with ``CAPITALISED_SHARE`` of its count), and every character of ``COVERAGE_CHARACTERS``
    is counted alone and attached to a word, as are the numbers 0-2099 and decimals (see
    :func:`coverage_texts`), with the count of the most frequent word.

    Returns:
        (counts per token id, words, UTF-8 bytes of the words).
    """
    tokenizer = load_tokenizer(tokenizer_json)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    totals = np.zeros(size, dtype=np.float64)
    words = size_bytes = 0
    top = 0
    for chunk in batched((f"{w}\t{c}" for w, c in iter_wordfreq(lang, max_words)), batch_size):
        texts: list[str] = []
        weights: list[float] = []
        for line in chunk:
            word, count = line.rsplit("\t", 1)
            top = max(top, int(count))
            for position, form in enumerate(word_forms(word)):
                texts.append(form)
                weights.append(int(count) * (1.0 if position == 0 else CAPITALISED_SHARE))
            words += 1
            size_bytes += len(word.encode("utf-8"))
        _add_weighted(tokenizer, texts, weights, totals)
    coverage = coverage_texts()
    _add_weighted(tokenizer, coverage, [float(max(top, 1))] * len(coverage), totals)
    counts = np.ceil(totals).astype(np.int64)
    counts[_special_ids(tokenizer)] = 0
    return counts, words, size_bytes


def coverage_texts() -> list[str]:
    """Texts that cover what word lists lack: digits, punctuation, numbers (wordfreq maps 2024 to 0000)."""
    texts = [text for char in COVERAGE_CHARACTERS for text in (char, f"a{char}")]
    texts += [str(n) for n in range(2100)]
    texts += [f"0,{n:02d}" for n in range(100)] + [f"0.{n:02d}" for n in range(100)]
    return texts


def _add_weighted(tokenizer: Any, texts: list[str], weights: list[float], totals: np.ndarray) -> None:
    encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
    ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encodings), dtype=np.int64)
    totals += np.bincount(ids, weights=np.repeat(np.asarray(weights), lengths), minlength=len(totals))


def holdout_filter(texts: Iterable[str], parity_documents: int, start: int = 0) -> Iterator[str]:
    """``texts`` without the held-out parity sample (every ``HOLDOUT_EVERY``-th text, up to the limit).

    Args:
        texts: The source's texts, from position ``start`` of the whole stream on.
        parity_documents: Size of the held-out sample.
        start: Position of the first text in the whole stream (when counting resumes mid-stream).
    """
    held = min(parity_documents, start // HOLDOUT_EVERY)
    for index, text in enumerate(texts, start):
        if held < parity_documents and index % HOLDOUT_EVERY == HOLDOUT_EVERY - 1:
            held += 1
            continue
        yield text


CHECKPOINT_TEXTS = 200_000
"""Texts of a source counted between two checkpoints of the partial counts (resume after a kill)."""


class _Consumed:
    """An iterator that counts how many items were taken from it."""

    def __init__(self, items: Iterator[str]) -> None:
        self.items = items
        self.taken = 0

    def __iter__(self) -> Iterator[str]:
        for item in self.items:
            self.taken += 1
            yield item


def _count_resumable(
    tokenizer_json: str,
    texts: Iterator[str],
    key: str,
    *,
    parity_documents: int,
    use_cache: bool,
    on_progress: ProgressHook | None,
    **count_options: Any,
) -> tuple[np.ndarray, int, int]:
    """Count ``texts`` in segments of ``CHECKPOINT_TEXTS``, saving partial counts after each segment.

    A run killed mid-way resumes from the last saved segment: the texts already counted are skipped
    (read again, not tokenized again), the held-out parity positions stay the same.
    """
    partial = cache.load_partial(key) if use_cache else None
    counts, position, documents, size = (
        (partial[0], partial[1]["position"], partial[1]["documents"], partial[1]["bytes"])
        if partial is not None
        else (None, 0, 0, 0)
    )
    if position:
        log.info("resuming the count at text %d (%d counted before the interruption)", position, documents)
        texts = itertools.islice(texts, position, None)

    def progress(segment_documents: int, segment_bytes: int) -> None:
        if on_progress:
            on_progress(documents + segment_documents, size + segment_bytes)

    while True:
        segment = _Consumed(itertools.islice(texts, CHECKPOINT_TEXTS))
        segment_counts, segment_documents, segment_bytes = count_texts(
            tokenizer_json,
            holdout_filter(segment, parity_documents, position),
            on_progress=progress,
            **count_options,
        )
        if segment.taken == 0:
            break
        counts = segment_counts if counts is None else counts + segment_counts
        position, documents, size = (
            position + segment.taken,
            documents + segment_documents,
            size + segment_bytes,
        )
        if use_cache and segment.taken == CHECKPOINT_TEXTS:
            cache.save_partial(key, counts, {"position": position, "documents": documents, "bytes": size})
        if segment.taken < CHECKPOINT_TEXTS:
            break
    if counts is None:
        counts = segment_counts
    cache.drop_partial(key)
    return counts, documents, size


def parity_sample(
    spec: str,
    column: str,
    parity_documents: int,
    *,
    max_documents: int | None = None,
    max_bytes: int | None = None,
) -> list[str]:
    """The held-out texts of a source (those :func:`holdout_filter` leaves out of counting).

    For a ``wordfreq:`` source the sample is made of pseudo-sentences of consecutive list words (they are
    part of the counted list, so this sample is not held out).
    """
    if parity_documents <= 0:
        return []
    parsed = parse_source(spec)
    if parsed.kind == "wordfreq":
        words = [w for w, _ in iter_wordfreq(parsed.name, parity_documents * 8)]
        sentences = [" ".join(words[i : i + 8]) for i in range(0, len(words), 8)]
        return [s[:1].upper() + s[1:] + "." for s in sentences if s]
    sample: list[str] = []
    texts = iter_texts(spec, column, max_documents=max_documents, max_bytes=max_bytes)
    for index, text in enumerate(texts):
        if index % HOLDOUT_EVERY == HOLDOUT_EVERY - 1:
            sample.append(text)
            if len(sample) >= parity_documents:
                break
    return sample


def source_fingerprint(spec: str) -> dict[str, Any]:
    """What identifies the data of a source spec: the spec, plus file fingerprints for local files."""
    parsed = parse_source(spec)
    data: dict[str, Any] = {"spec": str(parsed)}
    if parsed.kind == "files":
        data["files"] = [[str(p), artifacts.path_fingerprint(Path(p))] for p in resolve_files(parsed.name)]
    if parsed.kind == "wordfreq":
        from importlib import metadata

        data["wordfreq"] = metadata.version("wordfreq")
    return data


def count_source(
    tokenizer_json: str,
    spec: str,
    *,
    column: str = "text",
    max_documents: int | None = None,
    max_bytes: int | None = None,
    parity_documents: int = 0,
    batch_size: int = 1000,
    workers: int | None = None,
    use_cache: bool = True,
    on_progress: ProgressHook | None = None,
) -> TokenCounts:
    """Count the tokens of a source spec, or read the counts from the cache.

    Args:
        tokenizer_json: The serialized fast tokenizer.
        spec: file/glob, ``hub:DATASET[:CONFIG[:SPLIT]]`` or ``wordfreq:LANG``.
        column: Text column of tabular/Hub sources.
        max_documents: Read at most this many texts (words for wordfreq).
        max_bytes: Read at most this many UTF-8 bytes of text.
        parity_documents: Size of the held-out parity sample left out of counting.
        batch_size: Texts per batch.
        workers: Worker processes (``None`` = all cores).
        use_cache: Read and write the count cache.
        on_progress: Progress hook (documents, bytes).

    Raises:
        SourceError: The source is missing, empty, unreadable or lacks the column.
    """
    parsed = parse_source(spec)
    key_parts = {
        "version": COUNTS_VERSION,
        "tokenizer": tokenizer_fingerprint(tokenizer_json),
        "source": source_fingerprint(spec),
        "column": column if parsed.kind != "wordfreq" else None,
        "max_documents": max_documents,
        "max_bytes": max_bytes if parsed.kind != "wordfreq" else None,
        "parity_documents": parity_documents if parsed.kind != "wordfreq" else 0,
    }
    key = cache.cache_key(key_parts)
    if use_cache and (hit := cache.load_counts(key)) is not None:
        counts, meta = hit
        log.info("counts of %s read from the cache (%s)", spec, key[:12])
        return TokenCounts(counts, spec, key, meta["documents"], meta["bytes"], 0.0, True)
    start = time.perf_counter()
    if parsed.kind == "wordfreq":
        counts, documents, size = count_wordfreq(
            tokenizer_json, parsed.name, max_words=max_documents, batch_size=batch_size
        )
    else:
        counts, documents, size = _count_resumable(
            tokenizer_json,
            iter_texts(spec, column, max_documents=max_documents, max_bytes=max_bytes),
            key,
            parity_documents=parity_documents,
            use_cache=use_cache,
            on_progress=on_progress,
            batch_size=batch_size,
            workers=workers,
        )
    seconds = time.perf_counter() - start
    result = TokenCounts(counts, spec, key, documents, size, seconds, False)
    if use_cache:
        cache.save_counts(key, counts, {**key_parts, "documents": documents, "bytes": size})
    log.info(
        "counted %s: %d documents, %.1f MB, %d distinct tokens in %.1fs",
        spec,
        documents,
        size / 1e6,
        result.distinct,
        seconds,
    )
    return result
