"""``report.json``: the ``evaluate`` stage's scores, averages, verdicts and human baseline."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from skadapt.results.base import Part, StageReport

HUMAN_SCORES = "human_scores.json"
"""The scored human sheets in a human baseline directory (``skadapt human score`` writes it, the
evaluation reads it)."""


class ModelRow(Part):
    """One model's main scores per task (x100) and its averages."""

    model: str
    tasks: dict[str, float | None]
    All: float | None
    Type: float | None


class TaskScore(Part):
    """One model's main score on one task, with the metric it is."""

    model: str
    task: str
    metric: str | None = None


class VerdictRow(Part):
    """The do-no-harm verdict on ``b`` against its input ``a``."""

    a: str
    b: str
    verdict: str
    mean_diff: float
    ci_low: float
    ci_high: float
    wilcoxon_p: float | None
    harmed_tasks: list[str]


class HumanRow(Part):
    """Human annotators beside the models on the same items of one task."""

    task: str
    type: str = ""
    human: float | None
    human_sd: float | None = None
    annotators: int | None = None
    models: dict[str, float | None] = Field(default_factory=dict)
    rank: int | None = None
    of: int | None = None


class Settings(Part):
    """What the evaluation ran with."""

    tost_margin: float
    alpha: float
    models: dict[str, str] = Field(default_factory=dict)
    tasks: list[str] = Field(default_factory=list)
    prompt_policy: dict[str, str] = Field(default_factory=dict)
    language: str | None = None


class EvaluationReport(StageReport):
    """The evaluation (:func:`skadapt.evaluate.report.write_report` writes it; ``human`` is added by
    ``--human``).

    Attributes:
        task_types: Task -> its type.
        models: One row per model scored.
        scores: One entry per model and task, naming the metric.
        verdicts: Every stage against its input model.
        settings: Margin, alpha, the models' paths, tasks, prompt policy, language.
        human: The human baseline rows, when the evaluation has one.
    """

    FILE = "report.json"
    MARKDOWN: ClassVar[str] = "report.md"
    """Its readable companion in the same directory."""

    task_types: dict[str, str]
    models: list[ModelRow]
    scores: list[TaskScore]
    verdicts: list[VerdictRow]
    settings: Settings
    human: list[HumanRow] | None = None

    def rows(self) -> dict[str, ModelRow]:
        """Model label -> its row."""
        return {row.model: row for row in self.models}


class EvaluationSummary(Part):
    """The part of the ``evaluate`` stage's manifest ``result`` the run's summary prints."""

    verdicts: dict[str, str] = Field(default_factory=dict)
    """``a->b`` -> the verdict on ``b`` against its input ``a``."""
    harms: list[str] = Field(default_factory=list)
    """The ``a->b`` pairs whose verdict is ``harms``."""
    harmed_tasks: dict[str, list[str]] = Field(default_factory=dict)
    """``a->b`` -> the tasks below the margin."""
