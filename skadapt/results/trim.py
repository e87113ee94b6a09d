"""``trim_report.json``: what the ``trim`` stage trimmed, from what, and how exact the result is."""

from __future__ import annotations

from typing import Any

from skadapt.results.base import Part, StageReport


class CorpusCounts(Part):
    """A counted corpus (:meth:`skadapt.trim.counting.TokenCounts.summary` builds it): its source spec, the
    commit a Hub source was read at, its fingerprint, texts, bytes, tokens, whether the count came from the
    cache, the counting's seconds and the parity sample drawn from it."""

    source: str
    commit: str | None = None
    fingerprint: str | None = None
    documents: int | None = None
    bytes: int | None = None
    tokens: int | None = None
    distinct_tokens: int | None = None
    cached: bool | None = None
    seconds: float | None = None
    parity_sample: dict[str, Any] | None = None


class TrimReport(StageReport):
    """What was trimmed (:func:`skadapt.trim.report.build_report` writes it).

    Attributes:
        model: The model trimmed (a Hub id, or a path: a Hub-cache path names its id).
        tokenizer: The tokenizer kind.
        config: The trim settings it ran with (``corpus``, ``vocab_size``, ...).
        counts: The corpus counted.
        extra_counts: The extra corpus counted, if any.
        selection, vocab, parameters, coverage, parity: What was kept and how well it matches.
        exact: Whether the trimmed model is exact on its corpus; ``verdict`` says it in words.
        evaluation_tokenization: How the evaluation suites' texts tokenize after trimming (pipeline only).
        corpus_language: Whether the corpus is in the run's language (checked texts, those in another
            language, the warning or None); absent without a language.
    """

    FILE = "trim_report.json"

    model: str
    tokenizer: str
    config: dict[str, Any]
    counts: CorpusCounts
    extra_counts: CorpusCounts | None = None
    selection: dict[str, Any]
    vocab: dict[str, int]
    parameters: dict[str, Any]
    exact: bool
    verdict: str
    coverage: dict[str, Any]
    parity: dict[str, Any]
    evaluation_tokenization: dict[str, Any] | None = None
    corpus_language: dict[str, Any] | None = None

    @property
    def corpus(self) -> str | None:
        """The corpus spec the vocabulary was counted on (``corpus.source``; a report written before the
        corpus was a section holds the spec itself)."""
        corpus = self.config.get("corpus")
        return corpus.get("source") if isinstance(corpus, dict) else corpus
