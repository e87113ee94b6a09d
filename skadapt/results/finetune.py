"""``training_report.json``: what the ``finetune`` stage trained on, how long, and what it chose."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import Part, StageReport, StageResult
from skadapt.results.dev import DevSetPower


class TrainedDataset(Part):
    """One recipe dataset (or the anchor) as trained on."""

    name: str
    kind: str
    source: str
    examples: int
    loss: str | None = None


class Steps(Part):
    """Optimizer steps done and planned."""

    done: int
    planned: int | None


class SeqLengths(Part):
    """The maximum sequence length in training and the one the saved model keeps for inference."""

    training: int
    inference: int | None


class Interpolation(Part):
    """The weight interpolation with the input model chosen on the dev set
    (:func:`skadapt.train.interpolation.choose_interpolation` builds it).

    Attributes:
        chosen: The coefficient kept (weight of the fine-tuned model).
        metric: The dev metric the choice was made on.
        scores: ``[{alpha, score, sets, difference, interval}]`` in grid order: the mean dev score, each
            set's, and (but for a = 1) the difference from a = 1 with its paired bootstrap interval.
        reason: Why the kept coefficient won.
        confidence: Family-wise one-sided confidence a mixture needs to replace the fine-tuned model.
        replicates: Paired bootstrap resamples of the dev examples.
    """

    chosen: float
    metric: str
    scores: list[dict[str, Any]] = Field(default_factory=list)
    reason: str = ""
    confidence: float | None = None
    replicates: int | None = None


class DevSection(Part):
    """The dev sets fine-tuning chose on (its other keys are kept as written).

    Attributes:
        metric: The key of the dev score the choices are made on.
        size: Examples over all sets.
        sets: Per set: name, kind, source, rows read, examples, drops and overlaps.
        before: The evaluator's results for the starting model; ``final`` for the model kept.
        history: ``[{step, score, seconds}]`` over training (several sets: with ``sets``, each one's score).
        best_checkpoint: The checkpoint kept, if any.
        power: Per set, its power for the starting model and ``saturated_for_all`` (at the top for the
            starting model, every checkpoint scored and the final model).
    """

    metric: str
    size: int
    sets: list[dict[str, Any]] = Field(default_factory=list)
    before: dict[str, float] = Field(default_factory=dict)
    final: dict[str, float] = Field(default_factory=dict)
    history: list[dict[str, Any]] = Field(default_factory=list)
    best_checkpoint: str | None = None
    power: list[DevSetPower] = Field(default_factory=list)


class TrainingReport(StageReport):
    """What fine-tuning did (:func:`skadapt.train.stage.finetune` builds and writes it).

    Attributes:
        model: The input model (relative to the run when inside it).
        seed: The training seed.
        datasets: Every dataset trained on, with its size and loss.
        losses: Training dataset -> its loss.
        matryoshka: The Matryoshka dimensions and the losses wrapped, None without.
        sampling: How batches were drawn from the datasets.
        world_size: DDP processes trained with.
        steps: Steps done and planned.
        max_seq_length: Training and inference lengths.
        resumed_from: The checkpoint training resumed from, if any.
        time_s: Seconds of training and of the whole stage.
        train_metrics: The trainer's metrics (``train_loss``, ...).
        loss_curve: ``[{step, loss}]`` at most 50 points.
        dev: The dev sets, their scores before/after and over training, the best checkpoint and each set's
            power; None without.
        interpolation: The interpolation chosen on the dev set, or None.
        plain_arm: The plain sentence-transformers arm trained beside the model (``finetune.plain_arm``):
            its directory (relative to the model's), steps, losses and seconds; None without.
        contamination: The overlap check against the evaluation test texts.
        versions: Python and the libraries that shape the artifacts.
        model_prompts: The prompts saved with the model (written by the main process only).
    """

    FILE = "training_report.json"

    model: str
    seed: int
    datasets: list[TrainedDataset]
    losses: dict[str, str | None] = Field(default_factory=dict)
    matryoshka: dict[str, Any] | None = None
    sampling: str
    world_size: int
    steps: Steps
    max_seq_length: SeqLengths
    resumed_from: str | None = None
    time_s: dict[str, float] = Field(default_factory=dict)
    train_metrics: dict[str, Any]
    loss_curve: list[dict[str, Any]] = Field(default_factory=list)
    dev: DevSection | None = None
    interpolation: Interpolation | None
    plain_arm: dict[str, Any] | None = None
    contamination: dict[str, Any] | None = None
    versions: dict[str, Any] = Field(default_factory=dict)
    model_prompts: dict[str, str] | None = None


class FinetuneSummary(StageResult):
    """The part of the ``finetune`` stage's manifest ``result`` the run's summary prints."""

    dropped_rows: dict[str, str] = Field(default_factory=dict)
    """Recipe dataset -> the line on its rows not trained on."""
    hard_negatives: dict[str, str] = Field(default_factory=dict)
    """Recipe dataset -> the line on its hard negatives (what was mined, what the rules removed)."""
    dev_overlap: dict[str, str] = Field(default_factory=dict)
    """Dev set -> the line on its examples that share a text with the training data (dropped or kept)."""
    steps: dict[str, Any] = Field(default_factory=dict)
    """``done`` and ``planned`` optimizer steps."""
    dev: dict[str, Any] | None = None
    """The dev metric, its score before and after (None without dev sets)."""
    plain_arm: str | None = None
    """The plain arm's directory inside the model's (``finetune.plain_arm``), None without."""

    def side_models(self) -> dict[str, str]:
        """The plain arm, as ``plain``, when it was trained."""
        return {"plain": self.plain_arm} if self.plain_arm else {}
