"""Options of the task layer that several stages share: dev sets and the contamination check."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from skadapt.config import Fraction, Section
from skadapt.sources.config import CorpusSource


class DevSetConfig(Section):
    """One dev set: ``sts`` (sentence1, sentence2, score), ``retrieval`` (query, positive; optionally a
    ``corpus`` of distractor passages), ``triplets`` (anchor, positive, negative), ``nli`` (premise,
    hypothesis, label: grouped into triplets on the premise), ``rte`` (premise, hypothesis, label:
    entailment vs the rest), ``bitext`` (sentence1, sentence2: a sentence and its translation, scored as
    mteb's BitextMining F1), ``clustering`` (text, label: mteb's clustering V-measure of k-means with a
    cluster per label) or ``classification`` (text, label: accuracy of mteb's logistic regression,
    cross-validated over the set)."""

    kind: Literal["sts", "retrieval", "triplets", "nli", "rte", "bitext", "clustering", "classification"] = (
        Field(description="What the set holds and how it is scored (the class docstring lists the roles)")
    )
    source: str = Field(
        description="A source spec: a file or glob, a saved dataset, hub:DATASET[:CONFIG[:SPLIT]]"
    )
    columns: dict[str, str] = Field(default_factory=dict, description="role -> column name in the source")
    score_range: tuple[float, float] = Field((0.0, 5.0), description="sts: the range of the source's scores")
    label_map: dict[str, str] = Field(
        default_factory=dict,
        description="nli/rte: source label -> entailment/neutral/contradiction/...; clustering/"
        "classification: source label -> the label it counts as (two mapped alike are merged)",
    )
    corpus: CorpusSource | None = Field(
        None,
        description="retrieval only: distractor passages no query is relevant to (same-topic text), added "
        "to the corpus the queries are ranked over; evaluation test texts among them are dropped and counted",
    )
    seed: int = Field(
        42,
        description="clustering: seed of the k-means runs and of their draws; classification: of the "
        "cross-validation folds and the classifier (mteb's task seed by default)",
    )

    @model_validator(mode="after")
    def _corpus_is_retrieval_only(self) -> DevSetConfig:
        if self.corpus is not None and self.kind != "retrieval":
            raise ValueError(
                f"corpus (distractor passages) belongs to a retrieval dev set; dev set {self.source} is of "
                f"kind {self.kind}: remove corpus, or make it a retrieval set"
            )
        return self


DEV_SET_FIELDS = tuple(DevSetConfig.model_fields)


class DevSets(Section):
    """Dev sets: either one set written inline (``{kind, source, ...}``) or several under ``sets``; with
    several, the dev score is the mean of their main scores."""

    sets: list[DevSetConfig] = Field(min_length=1, description="The dev sets (one may be written inline)")
    training_overlap: Literal["drop", "keep"] = Field(
        "drop",
        description="drop: dev rows any of whose texts is a fine-tuning training text (folded as the "
        "contamination check folds) are left out of every choice made on the dev sets; keep: they are "
        "scored too. Both count them per dev set and training dataset in the report and the preflight",
    )

    @model_validator(mode="before")
    @classmethod
    def _inline_set(cls, data: Any) -> Any:
        if isinstance(data, dict) and "sets" not in data and any(k in data for k in DEV_SET_FIELDS):
            inline = {k: v for k, v in data.items() if k in DEV_SET_FIELDS}
            return {**{k: v for k, v in data.items() if k not in DEV_SET_FIELDS}, "sets": [inline]}
        return data


class ContaminationConfig(Section):
    """Overlap check between training texts and evaluation test texts."""

    threshold: Fraction = Field(
        0.01, description="Share of training rows holding an evaluation test text above which action applies"
    )
    allow: bool = Field(
        False,
        description="Leave a task whose data cannot be reached unchecked (a warning, listed as unreachable) "
        "instead of stopping: the check fails closed by default",
    )
    action: Literal["stop", "drop"] = Field(
        "stop",
        description="stop: over the threshold the stage stops; drop: every training row any of whose "
        "texts is an evaluation test text is removed first (counted per dataset and task)",
    )
