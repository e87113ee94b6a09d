"""``report.json``: the ``evaluate`` stage's scores, averages, verdicts and human baseline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field

from skadapt.results.base import Part, StageReport, StageResult

HUMAN_SCORES = "human_scores.json"
"""The scored human sheets in a human baseline directory (``skadapt human score`` writes it, the
evaluation reads it)."""


class ModelRow(Part):
    """One model's row of the table (:func:`skadapt.evaluate.aggregate.aggregate` builds it; points).

    Attributes:
        model: The model's label.
        tasks: Task -> its main score.
        types: Task type -> the mean of its tasks.
        All: The mean over tasks.
        Type: The mean of the type means.
    """

    model: str
    tasks: dict[str, float]
    types: dict[str, float]
    All: float
    Type: float


class TaskScore(Part):
    """The main score of one model on one task (in points, 0-100; :func:`skadapt.tasks.runner.task_score`
    builds it).

    ``experiments``: the main score of each of mteb's repeated experiments where mteb keeps them
    (classification: one per undersampled train set; clustering: one per bootstrap clustering), averaged
    over the task's subsets and splits, else None. They are paired across models: every model gets a
    fresh copy of the task and so the same samples.
    """

    model: str
    task: str
    type: str
    metric: str
    score: float
    experiments: list[float] | None = None


class Verdict(Part):
    """The do-no-harm verdict on model ``b`` against its input ``a`` (:func:`skadapt.evaluate.verdicts.
    stage_verdicts` builds it).

    Attributes:
        a: Input model.
        b: Output model.
        verdict: improves, non-inferior, harms, or tier (a deployment tier against its parent).
        mean_diff: Mean over tasks of b - a (points).
        ci_low: Lower end of the (1 - 2 alpha) interval of the mean difference (NaN with one task).
        ci_high: Upper end of it.
        wilcoxon_p: Two-sided paired Wilcoxon p-value over tasks (NaN with one task: never None).
        margin: Non-inferiority margin (points).
        tasks: Per task: ``{delta, low, high, basis}``: ``delta`` is the point of the interval where one
            exists (``basis`` ``items``, ``half-samples`` or ``experiments``: the statistic it is about,
            which can differ from the main score), else the difference of the main scores and None.
        harmed_tasks: Tasks whose whole interval lies below ``-margin``.
        no_interval: Tasks without a per-task interval (a single-task harm cannot be seen there).
    """

    a: str
    b: str
    verdict: str
    mean_diff: float
    ci_low: float
    ci_high: float
    wilcoxon_p: float
    margin: float
    tasks: dict[str, dict[str, Any]]
    harmed_tasks: list[str]
    no_interval: list[str]


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
    verdicts: list[Verdict]
    settings: Settings
    human: list[HumanRow] | None = None

    def rows(self) -> dict[str, ModelRow]:
        """Model label -> its row."""
        return {row.model: row for row in self.models}

    def of_model(self, candidates: list[str]) -> ModelEvaluation | None:
        """The evaluation of the first of ``candidates`` (row labels, best first) the report has a row of;
        None when it has none of them."""
        rows = self.rows()
        label = next((c for c in candidates if c in rows), None)
        if label is None:
            return None
        return ModelEvaluation(
            label=label,
            base_label="base" if "base" in rows and label != "base" else None,
            task_types=dict(self.task_types),
            metrics={s.task: s.metric or "main_score" for s in self.scores if s.model == label},
            scores={name: dict(row.tasks) for name, row in rows.items()},
            averages={name: {"All": row.All, "Type": row.Type} for name, row in rows.items()},
            human=list(self.human or []),
            settings=self.settings,
            verdicts=list(self.verdicts),
        )


@dataclass(frozen=True)
class ModelEvaluation:
    """One model's evaluation, read from an :class:`EvaluationReport` beside the base model's (what a model
    card shows: :meth:`EvaluationReport.of_model`).

    Attributes:
        label: The model's row label in the report (``renorm``, ``final``, ...).
        base_label: The base model's label, when the base model was evaluated.
        task_types: Task -> task type.
        metrics: Task -> main metric name.
        scores: Label -> task -> main score (x100).
        averages: Label -> {"All": ..., "Type": ...}.
        human: Human-baseline rows (task, type, human mean/SD, annotators, the models' scores on the same
            items, Human's rank), when the report carries them (``skadapt evaluate --human``).
        settings: The report's settings (tasks, prompt policy, margin, alpha).
        verdicts: The do-no-harm verdicts (each stage against its input).
    """

    label: str
    base_label: str | None
    task_types: dict[str, str]
    metrics: dict[str, str]
    scores: dict[str, dict[str, float | None]]
    averages: dict[str, dict[str, float | None]]
    human: list[HumanRow]
    settings: Settings
    verdicts: list[Verdict]


class EvaluationSummary(StageResult):
    """The ``evaluate`` stage's result (its manifest's ``result``): the verdicts, the averages, the
    comparisons."""

    verdicts: dict[str, str] = Field(default_factory=dict)
    """``a->b`` -> the verdict on ``b`` against its input ``a``."""
    harms: list[str] = Field(default_factory=list)
    """The ``a->b`` pairs whose verdict is ``harms``."""
    harmed_tasks: dict[str, list[str]] = Field(default_factory=dict)
    """``a->b`` -> the tasks below the margin."""
    comparisons: list[dict[str, Any]] = Field(default_factory=list)
    """Each model pair's paired comparison (:meth:`skadapt.evaluate.stats.Comparison.to_dict`)."""
