"""Token frequencies of a whole source under a model's fast tokenizer, with its parity sample, cached.

Every text of the source (up to ``max_documents`` / ``max_bytes``) is counted - none is held out - and
the parity sample is a seeded uniform sample of those counted texts (:mod:`skadapt.trim.sampling`), drawn
while counting. Text sources are counted in checkpointed segments (:mod:`skadapt.trim.checkpoint`) by
the tokenizer's own threads (:mod:`skadapt.trim.parallel`); word lists by :mod:`skadapt.trim.wordlist`.

Counts are cached on disk (:mod:`skadapt.trim.cache`) under a key made of the tokenizer fingerprint, the
source spec (with a fingerprint of local files, and for a ``hub:`` spec that does not pin a commit the
commit its revision is at when the count starts), the column and the limits, so a second run with the same
inputs does not recount, and a count of a branch that has moved since is made again (the log says from
which commit to which); the parity sample is cached next to them per (seed, size). A cached count without
the sample asked for re-reads the source (without tokenizing) to draw it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts
from skadapt.results.trim import CorpusCounts
from skadapt.sources import iter_texts, parse_source, reading, resolve_commit, resolve_files
from skadapt.trim import cache, checkpoint, wordlist
from skadapt.trim.encoder import tokenizer_fingerprint
from skadapt.trim.parallel import ProgressHook
from skadapt.trim.sampling import ParitySampler, sample_stream

log = logging.getLogger("skadapt.trim")

COUNTS_VERSION = 2
"""Bump when the meaning of cached counts changes (2: the whole source is counted, nothing held out)."""


@dataclass
class TokenCounts:
    """Token frequencies of one source.

    Attributes:
        counts: Occurrences per token id (int64, length = tokenizer vocabulary incl. added tokens).
        source: The source spec that was counted.
        key: Cache key (the counts fingerprint).
        commit: The commit a ``hub:`` source was counted at (None: not a Hub source, or unknown).
        documents: Texts (or word-list entries) counted.
        bytes: UTF-8 bytes counted.
        seconds: Counting time (0 when read from the cache).
        cached: Whether the counts came from the cache.
        sample: The parity sample: counted texts (word forms for a word list) drawn with ``seed``.
        seed: The seed the sample was drawn with.
    """

    counts: np.ndarray
    source: str
    key: str
    documents: int = 0
    bytes: int = 0
    seconds: float = 0.0
    cached: bool = False
    sample: list[str] = field(default_factory=list)
    seed: int = 0
    commit: str | None = None

    @property
    def tokens(self) -> int:
        """Total token occurrences."""
        return int(self.counts.sum())

    @property
    def distinct(self) -> int:
        """Distinct tokens seen at least once."""
        return int(np.count_nonzero(self.counts))

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description (for reports and manifests): the report's ``CorpusCounts``."""
        return CorpusCounts(
            source=self.source,
            **({"commit": self.commit} if self.commit else {}),
            fingerprint=self.key,
            documents=self.documents,
            bytes=self.bytes,
            tokens=self.tokens,
            distinct_tokens=self.distinct,
            cached=self.cached,
            seconds=round(self.seconds, 3),
            parity_sample={"texts": len(self.sample), "seed": self.seed, "drawn_from": "counted texts"},
        ).as_json()


def source_fingerprint(spec: str) -> dict[str, Any]:
    """What identifies the data of a source spec: the spec, plus file fingerprints for local files and,
    for a ``hub:`` spec that does not pin a commit, the commit its revision is at now (None when that
    cannot be told: then no earlier count matches)."""
    parsed = parse_source(spec)
    data: dict[str, Any] = {"spec": str(parsed)}
    if parsed.kind == "hub" and not (commit := resolve_commit(spec)).pinned:
        data["commit"] = commit.commit
    if parsed.kind == "files":
        data["files"] = [[str(p), artifacts.path_fingerprint(Path(p))] for p in resolve_files(parsed.name)]
    if parsed.kind == "wordfreq":
        from importlib import metadata

        data["wordfreq"] = metadata.version("wordfreq")
    return data


def draw_sample(
    spec: str,
    column: str,
    size: int,
    seed: int,
    *,
    max_documents: int | None = None,
    max_bytes: int | None = None,
) -> list[str]:
    """The parity sample of a source, by re-reading it (no tokenizing): the one counting draws.

    For a ``wordfreq:`` source the sample is drawn from the counted word forms (see
    :func:`skadapt.trim.wordlist.iter_word_forms`).
    """
    if size <= 0:
        return []
    parsed = parse_source(spec)
    if parsed.kind == "wordfreq":
        return sample_stream(wordlist.iter_word_forms(parsed.name, max_documents), size, seed)
    texts = iter_texts(spec, column, max_documents=max_documents, max_bytes=max_bytes)
    return sample_stream(texts, size, seed)


@reading()  # one commit per source for the key, the read and the parity sample
def count_source(
    tokenizer_json: str,
    spec: str,
    *,
    column: str = "text",
    max_documents: int | None = None,
    max_bytes: int | None = None,
    parity_documents: int = 0,
    seed: int = 0,
    batch_size: int = 1000,
    workers: int | None = None,
    use_cache: bool = True,
    on_progress: ProgressHook | None = None,
) -> TokenCounts:
    """Count the tokens of every text of a source spec (or read the counts from the cache).

    Args:
        tokenizer_json: The serialized fast tokenizer.
        spec: file/glob, ``hub:DATASET[:CONFIG[:SPLIT]]`` or ``wordfreq:LANG``.
        column: Text column of tabular/Hub sources.
        max_documents: Read at most this many texts (words for wordfreq).
        max_bytes: Read at most this many UTF-8 bytes of text.
        parity_documents: Size of the parity sample drawn from the counted texts (0 = none).
        seed: Seed of the parity sample.
        batch_size: Texts per batch.
        workers: 1 = one thread; otherwise the tokenizer's thread pool (all cores).
        use_cache: Read and write the count cache.
        on_progress: Progress hook (documents, bytes); called once with the totals for cached counts and
            word lists.

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
    }
    key = cache.cache_key(key_parts)
    commit = resolve_commit(spec).commit if parsed.kind == "hub" else None
    if use_cache and "commit" in key_parts["source"]:
        use_cache = _note_branch_commit(spec, key_parts, key)
    limits = {"max_documents": max_documents, "max_bytes": max_bytes}
    if use_cache and (hit := cache.load_counts(key)) is not None:
        counts, meta = hit
        log.info("counts of %s read from the cache (%s)", spec, key[:12])
        sample = cache.load_sample(key, seed, parity_documents) if parity_documents > 0 else []
        if sample is None:
            log.info("drawing the parity sample of %s (seed %d) by re-reading it", spec, seed)
            sample = draw_sample(spec, column, parity_documents, seed, **limits)
            cache.save_sample(key, seed, parity_documents, sample)
        documents, size = meta["documents"], meta["bytes"]
        if on_progress is not None:  # the bar shows what the cached counts cover
            on_progress(documents, size)
        return TokenCounts(counts, spec, key, documents, size, 0.0, True, sample, seed, commit)
    start = time.perf_counter()
    fresh = ParitySampler(parity_documents, seed)
    sampler: ParitySampler | None = fresh
    if parsed.kind == "wordfreq":
        counts, documents, size = wordlist.count_wordfreq(
            tokenizer_json,
            parsed.name,
            max_words=max_documents,
            batch_size=batch_size,
            on_batch=fresh.observe,
        )
        if on_progress is not None:  # a word list is counted at once: the bar shows its words
            on_progress(documents, size)
    else:
        counts, documents, size, sampler = checkpoint.count_resumable(
            tokenizer_json,
            iter_texts(spec, column, **limits),
            key,
            fresh,
            use_cache=use_cache,
            on_progress=on_progress,
            batch_size=batch_size,
            workers=workers,
        )
    seconds = time.perf_counter() - start
    if sampler is not None:
        sample = sampler.sample()
    else:  # a resumed count whose interrupted run drew a sample of another seed or size
        sample = draw_sample(spec, column, parity_documents, seed, **limits)
    result = TokenCounts(counts, spec, key, documents, size, seconds, False, sample, seed, commit)
    if use_cache:
        cache.save_counts(key, counts, {**key_parts, "documents": documents, "bytes": size})
        if parity_documents > 0:
            cache.save_sample(key, seed, parity_documents, sample)
    log.info(
        "counted %s: %d documents, %.1f MB, %d distinct tokens in %.1fs",
        spec,
        documents,
        size / 1e6,
        result.distinct,
        seconds,
    )
    return result


def _note_branch_commit(spec: str, key_parts: dict[str, Any], key: str) -> bool:
    """Remember which commit a branch spec is counted at, saying so when it has moved since it was last
    counted; whether the cache may serve the count (not when the commit cannot be told)."""
    commit = key_parts["source"]["commit"]
    branch = cache.cache_key({**key_parts, "source": {**key_parts["source"], "commit": None}})
    last = cache.load_branch_commit(branch)
    if commit is None:
        log.warning(
            "%s: the commit it is at cannot be told now, so no cached count is used or saved%s",
            spec,
            f" (it was last counted at commit {last['commit']})" if last else "",
        )
        return False
    if last and last.get("commit") != commit:
        revision = parse_source(spec).revision or "main"
        counted = cache.load_counts(key) is not None
        log.warning(
            "%s: %s has moved from commit %s to %s since it was last counted; %s",
            spec,
            revision,
            last["commit"],
            commit,
            "the cached counts of that commit are used" if counted else "counting it again",
        )
    cache.save_branch_commit(branch, commit, key)
    return True
