"""``robustness.json``: the ``robustness`` stage's score changes under LLM rewrites of the evaluated texts."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from skadapt.results.base import Part, StageReport


class ModelProfile(Part):
    """One model's mean score change per axis and over all transformations."""

    axes: dict[str, float | None] = Field(default_factory=dict)
    total: float | None


class Statistics(Part):
    """The profiles of every model."""

    models: dict[str, ModelProfile]


class RobustnessReport(StageReport):
    """The robustness run (:func:`skadapt.robustness.run.run_robustness` writes it).

    Attributes:
        transforms: The transformations applied.
        seeds: The generation seeds.
        llm: The LLM that rewrote the texts (``backend``, ``model``, ``revision``).
        statistics: Per model: the mean change per axis and in total.
    """

    FILE = "robustness.json"
    MARKDOWN: ClassVar[str] = "robustness.md"
    """Its readable companion in the same directory."""

    transforms: list[str]
    seeds: list[int]
    llm: dict[str, Any]
    statistics: Statistics
