"""Options of the task layer that several stages share: dev sets and the contamination check."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from skadapt.config import Fraction, Section


class DevSetConfig(Section):
    """One dev set: ``sts`` (sentence1, sentence2, score), ``retrieval`` (query, positive), ``triplets``
    (anchor, positive, negative), ``nli`` (premise, hypothesis, label: grouped into triplets on the
    premise), ``rte`` (premise, hypothesis, label: entailment vs the rest) or ``bitext`` (sentence1,
    sentence2: a sentence and its translation, scored as mteb's BitextMining F1)."""

    kind: Literal["sts", "retrieval", "triplets", "nli", "rte", "bitext"]
    source: str
    columns: dict[str, str] = Field(default_factory=dict)
    score_range: tuple[float, float] = (0.0, 5.0)
    label_map: dict[str, str] = Field(
        default_factory=dict, description="nli/rte: source label -> entailment/neutral/contradiction/..."
    )


DEV_SET_FIELDS = tuple(DevSetConfig.model_fields)


class DevSets(Section):
    """Dev sets: either one set written inline (``{kind, source, ...}``) or several under ``sets``; with
    several, the dev score is the mean of their main scores."""

    sets: list[DevSetConfig] = Field(min_length=1)
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

    threshold: Fraction = 0.01
    allow: bool = False
    action: Literal["stop", "drop"] = Field(
        "stop",
        description="stop: over the threshold the stage stops; drop: every training row any of whose "
        "texts is an evaluation test text is removed first (counted per dataset and task)",
    )
