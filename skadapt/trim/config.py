"""The trim stage's options (recipe section ``trim``; ``skadapt trim`` derives its options from it)."""

from __future__ import annotations

from pydantic import Field, field_validator

from skadapt.config import PositiveInt, Section
from skadapt.sources.config import CorpusSource


class TrimConfig(Section):
    """Vocabulary trimming to the tokens a corpus uses."""

    corpus: CorpusSource | None = Field(
        None,
        description="Corpus counted: file/glob (.txt .jsonl .json .csv .parquet), "
        "hub:DATASET[:CONFIG[:SPLIT]] or wordfreq:LANG, or {source, columns, max_documents} (recipe default: "
        "the language's FineWeb2 config)",
    )
    vocab_size: PositiveInt = Field(
        60_000,
        description="Tokens that can appear in encoded text (corpus tokens + <s> </s> <unk>); padding/mask "
        "tokens are kept on top (mE5: 60000 -> 60002 rows)",
    )
    min_frequency: PositiveInt = Field(1, description="Drop corpus tokens seen fewer times")
    max_bytes: PositiveInt | None = Field(None, description="Read at most this many bytes of text")
    keep: list[str] = Field(default_factory=list, description="Word or token always kept")
    extra_corpus: CorpusSource | None = Field(None, description="Second corpus, e.g. wordfreq:eng")
    extra_vocab_size: int = Field(0, ge=0, description="Top tokens of the extra corpus added on top")
    workers: PositiveInt | None = Field(
        None, description="1: count on one thread; default: all cores (tokenizers' threads)"
    )
    batch_size: PositiveInt = Field(1000, description="Texts per counting batch")
    parity_documents: int = Field(
        1000, ge=0, description="Counted corpus texts sampled (run seed) for the parity check (0 = skip)"
    )

    @field_validator("corpus", "extra_corpus")
    @classmethod
    def _one_column(cls, corpus: CorpusSource | None) -> CorpusSource | None:
        if corpus is not None and len(corpus.columns) > 1:
            raise ValueError(f"the trim counts one column of its corpus (resumably), not {corpus.columns}")
        return corpus
