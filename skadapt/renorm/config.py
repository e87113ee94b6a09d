"""The renorm stage's options (recipe section ``renorm``; ``skadapt renorm`` derives its options from it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from skadapt.config import PositiveInt, Section
from skadapt.errors import SkadaptError
from skadapt.sources.config import CorpusSource
from skadapt.tasks.config import DevSets

MAX_DOCUMENTS = 200_000
"""Texts renorm reads from its corpus (per column) when ``corpus.max_documents`` is not given."""


class RenormConfig(Section):
    """Corpus-mean removal (R1: e - mu, R2: remove the projection on mu-hat), then re-normalization.

    A stage that can make the model worse earns its place on dev data: with ``select: dev`` (the default
    whenever dev sets exist) none, R1, R2 and the corpus-basis projections (alone and after R1/R2) are
    scored on the dev sets, and a candidate replaces none only when it beats none beyond the noise (a
    paired bootstrap over the dev examples).
    """

    method: Literal["r1", "r2"] = Field(
        "r2", description="r1: e - mu; r2: remove the mu-hat projection (applied with select: method)"
    )
    select: Literal["auto", "dev", "method"] = Field(
        "auto",
        description="dev: keep the best of none/r1/r2/projections that beats none beyond the noise on the "
        "dev sets; method: apply `method`; "
        "auto: dev when dev sets exist (renorm.dev, else finetune.dev), else method",
    )
    dev: DevSets | None = Field(None, description="Dev sets of the choice; default: finetune.dev's sets")
    corpus: CorpusSource | None = Field(
        None,
        description="Corpus the mean is estimated on: file/glob (.txt .jsonl .json .csv .parquet) or "
        "hub:DATASET[:CONFIG[:SPLIT]], or {source, columns, max_documents} (default: the language's "
        f"corpus); the sample is a reservoir sample of all texts read, at most {MAX_DOCUMENTS:,} per "
        "column unless corpus.max_documents says otherwise (null: all)",
    )
    samples: PositiveInt = Field(100_000, description="Sentences in the mean estimate")
    prompt: Literal["none", "query", "passage"] = Field(
        "none", description="Prompt the sentences are encoded with for the mean"
    )
    projection_dims: list[PositiveInt] | None = Field(
        None,
        description="Dimensions of the corpus-basis projection candidates of select: dev (below the "
        "model's); default: 2/3 and 1/3 of it rounded to multiples of 32 (of 8 below 192), e.g. 256 and "
        "128 for 384; []: none",
    )
    min_chars: PositiveInt = Field(64, description="Shortest sampled sentence, in characters")
    max_chars: PositiveInt = Field(512, description="Longest sampled sentence, in characters")

    @field_validator("corpus")
    @classmethod
    def _read_limit(cls, corpus: CorpusSource | None) -> CorpusSource | None:
        if corpus is None or "max_documents" in corpus.model_fields_set:
            return corpus
        return CorpusSource(source=corpus.source, columns=corpus.columns, max_documents=MAX_DOCUMENTS)

    @field_validator("projection_dims")
    @classmethod
    def _dims(cls, dims: list[int] | None) -> list[int] | None:
        if dims is not None and len(set(dims)) != len(dims):
            raise ValueError(f"a dimension is named twice: {dims}")
        return dims

    @model_validator(mode="after")
    def _char_window(self) -> RenormConfig:
        if self.min_chars > self.max_chars:
            raise ValueError(f"min_chars ({self.min_chars}) must not exceed max_chars ({self.max_chars})")
        return self


class RenormError(SkadaptError, ValueError):
    """Renormalization cannot run: too few usable sentences, a model without the asked prompt, ..."""


def default_projection_dims(dimension: int) -> list[int]:
    """Two thirds and one third of ``dimension``, rounded to multiples of 32 (of 8 below 192), below it."""
    step = 32 if dimension >= 192 else 8
    dims = {round(dimension * share / step) * step for share in (2 / 3, 1 / 3)}
    return sorted((d for d in dims if 0 < d < dimension), reverse=True)


def projection_dims(config: RenormConfig, dimension: int) -> list[int]:
    """The projection candidates' dimensions, descending.

    Raises:
        RenormError: An asked dimension not below the model's.
    """
    if config.projection_dims is None:
        return default_projection_dims(dimension)
    too_large = [d for d in config.projection_dims if d >= dimension]
    if too_large:
        raise RenormError(
            f"renorm.projection_dims {config.projection_dims}: {', '.join(map(str, too_large))} is not below "
            f"the model's dimension {dimension}; use dimensions below {dimension}"
        )
    return sorted(config.projection_dims, reverse=True)
