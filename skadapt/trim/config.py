"""The trim stage's options (recipe section ``trim``; ``skadapt trim`` derives its options from it)."""

from __future__ import annotations

from pydantic import Field

from skadapt.config import PositiveInt, Section


class TrimConfig(Section):
    """Vocabulary trimming to the tokens a corpus uses."""

    corpus: str | None = Field(
        None,
        description="Corpus: file/glob (.txt .jsonl .json .csv .parquet), hub:DATASET[:CONFIG[:SPLIT]] or "
        "wordfreq:LANG (recipe default: the language's FineWeb2 config)",
    )
    text_column: str = Field("text", description="Text column of tabular/Hub corpora")
    vocab_size: PositiveInt = Field(
        60_000,
        description="Tokens that can appear in encoded text (corpus tokens + <s> </s> <unk>); padding/mask "
        "tokens are kept on top (mE5: 60000 -> 60002 rows)",
    )
    min_frequency: PositiveInt = Field(1, description="Drop corpus tokens seen fewer times")
    max_documents: PositiveInt | None = Field(None, description="Read at most this many texts")
    max_bytes: PositiveInt | None = Field(None, description="Read at most this many bytes of text")
    keep: list[str] = Field(default_factory=list, description="Word or token always kept")
    extra_corpus: str | None = Field(None, description="Second source, e.g. wordfreq:eng")
    extra_vocab_size: int = Field(0, ge=0, description="Top tokens of the extra corpus added on top")
    workers: PositiveInt | None = Field(
        None, description="1: count on one thread; default: all cores (tokenizers' threads)"
    )
    batch_size: PositiveInt = Field(1000, description="Texts per counting batch")
    parity_documents: int = Field(
        1000, ge=0, description="Counted corpus texts sampled (run seed) for the parity check (0 = skip)"
    )
