"""Source sentences for synthetic STS: single sentences in the target language, deduplicated, seeded."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from skadapt.languages import Language
from skadapt.llm.language_check import check_language
from skadapt.sources import CorpusSource, corpus_texts
from skadapt.textsample import PYSBD_FALLBACK, sample_sentences

OVERSAMPLE = 3
"""Candidates drawn per wanted sentence, so that enough pass the language check."""


@dataclass(frozen=True)
class SourceSentence:
    """One source sentence and its stable id (a hash of the text)."""

    id: str
    text: str


@dataclass
class SourceSelection:
    """The chosen sentences and what was left out."""

    sentences: list[SourceSentence]
    documents: int
    eligible: int
    wrong_language: int


def sentence_id(text: str) -> str:
    """A stable id of a source sentence."""
    return "s" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def select_sources(
    corpus: CorpusSource | str,
    language: Language,
    count: int,
    *,
    seed: int,
    min_chars: int = 60,
    max_chars: int = 200,
) -> SourceSelection:
    """``count`` unique sentences of ``min_chars``-``max_chars`` characters in ``language`` from a corpus
    (a spec string is the corpus ``{source: <spec>}``).

    The sentences are a seeded uniform sample of the corpus's unique sentences in the length window
    (pysbd splitting); those failing the language check are replaced by further sampled ones.
    """
    texts = corpus_texts(CorpusSource.model_validate(corpus))
    sample = sample_sentences(
        texts,
        count * OVERSAMPLE,
        min_chars=min_chars,
        max_chars=max_chars,
        seed=seed,
        language=language.iso639_1 or PYSBD_FALLBACK,
    )
    chosen: list[SourceSentence] = []
    wrong = 0
    for text in sample.sentences:
        if len(chosen) == count:
            break
        if check_language(text, language).ok:
            chosen.append(SourceSentence(sentence_id(text), text))
        else:
            wrong += 1
    return SourceSelection(chosen, sample.documents, sample.eligible, wrong)
