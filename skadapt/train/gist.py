"""The guided losses ``gist`` / ``cached_gist`` (sentence-transformers' GISTEmbedLoss and
CachedGISTEmbedLoss) and their guide model.

The guide scores every in-batch candidate; one it scores above the positive (less the margin) is masked
as a false negative instead of being pushed away. The default guide is the starting model, loaded a second
time (the model being trained changes; its guide must not) and frozen: evaluation mode, no gradients, not
among the trainer's parameters (the loss holds it; the trainer moves the loss, guide included, to the
model's device). It encodes at the training length, so the guide reads exactly the tokens the model reads.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skadapt.tasks.rows import TrainingDataError
from skadapt.train.loading import load_model

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.train.datasets import TaskDataset
    from skadapt.train.negatives_config import GistConfig

log = logging.getLogger(__name__)

GUIDED_LOSSES = frozenset({"gist", "cached_gist"})
MAX_GIST_TEXTS = 3
"""GISTEmbedLoss takes (anchor, positive[, negative]); more negatives need cached_gist (or mnrl)."""


def needs_guide(datasets: list[TaskDataset]) -> bool:
    """Whether any dataset trains with a guided loss."""
    return any(dataset.loss in GUIDED_LOSSES for dataset in datasets)


def check_guided(dataset: TaskDataset) -> None:
    """Check that a dataset fits its guided loss.

    Raises:
        TrainingDataError: ``gist`` on more than one negative per anchor.
    """
    if dataset.loss == "gist" and len(dataset.text_columns) > MAX_GIST_TEXTS:
        raise TrainingDataError(
            f"dataset {dataset.name!r}: loss 'gist' takes (anchor, positive[, negative]) and the dataset has "
            f"{len(dataset.text_columns) - 2} negatives per anchor; use loss cached_gist, or "
            "hard_negatives.num_negatives: 1"
        )


def load_guide(config: GistConfig, starting_model: str, max_seq_length: int) -> SentenceTransformer:
    """The frozen guide: ``config.guide`` or a second copy of the starting model, at the training length.

    Raises:
        SkadaptError: The model cannot be loaded.
    """
    from skadapt.model_sources import resolve_model

    reference = resolve_model(config.guide) if config.guide is not None else starting_model
    guide = load_model(reference)
    guide.max_seq_length = max_seq_length
    guide.eval()
    guide.requires_grad_(False)
    log.info(
        "finetune: guide model %s (frozen), margin %s %g", reference, config.margin_strategy, config.margin
    )
    return guide


def make_guided_loss(
    name: str,
    model: SentenceTransformer,
    guide: SentenceTransformer,
    config: GistConfig,
    mini_batch_size: int,
) -> Any:
    """``GISTEmbedLoss`` (``gist``) or ``CachedGISTEmbedLoss`` (``cached_gist``) with ``config``'s margin."""
    from sentence_transformers.sentence_transformer import losses

    options = {
        "temperature": config.temperature,
        "margin_strategy": config.margin_strategy,
        "margin": config.margin,
    }
    if name == "gist":
        return losses.GISTEmbedLoss(model, guide, **options)
    if name == "cached_gist":
        return losses.CachedGISTEmbedLoss(model, guide, mini_batch_size=mini_batch_size, **options)
    raise ValueError(f"not a guided loss: {name!r}")
