"""``trim_report.json``: what the ``trim`` stage trimmed, from what, and how exact the result is."""

from __future__ import annotations

from typing import Any

from skadapt.results.base import Part, StageReport


class CorpusCounts(Part):
    """A counted corpus: its source spec (and the commit a Hub source was read at), texts, tokens."""

    source: str
    documents: int | None = None
    tokens: int | None = None
    distinct_tokens: int | None = None
    commit: str | None = None


class TrimReport(StageReport):
    """What was trimmed (:func:`skadapt.trim.report.build_report` writes it).

    Attributes:
        model: The model trimmed (a Hub id, or a path: a Hub-cache path names its id).
        tokenizer: The tokenizer kind.
        config: The trim settings it ran with (``corpus``, ``text_column``, ``vocab_size``, ...).
        counts: The corpus counted.
        extra_counts: The extra corpus counted, if any.
        selection, vocab, parameters, coverage, parity: What was kept and how well it matches.
        exact: Whether the trimmed model is exact on its corpus; ``verdict`` says it in words.
        evaluation_tokenization: How the evaluation suites' texts tokenize after trimming (pipeline only).
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

    @property
    def corpus(self) -> str | None:
        """The corpus spec the vocabulary was counted on."""
        return self.config.get("corpus")
