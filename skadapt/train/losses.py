"""Loss per training dataset, and the batch sampler the chosen losses need.

=============  ==============================================  =====================  ================
name           sentence-transformers loss                        needs                  in-batch negatives
=============  ==============================================  =====================  ================
mnrl           MultipleNegativesRankingLoss                      (anchor, positive[, negative])  yes
cached_mnrl    CachedMultipleNegativesRankingLoss (GradCache)    (anchor, positive[, negative])  yes
cosine         CosineSimilarityLoss                              (sentence1, sentence2, score)   no
cosent         CoSENTLoss                                        (sentence1, sentence2, score)   no
gist           GISTEmbedLoss (guide masks false negatives)       (anchor, positive[, negative])  yes
cached_gist    CachedGISTEmbedLoss (GradCache + guide)           (anchor, positive[, negatives]) yes
=============  ==============================================  =====================  ================

The guided losses take the frozen guide model and ``finetune.gist`` (see :mod:`skadapt.train.gist`).

When any dataset uses an in-batch-negative loss the trainer uses ``BatchSamplers.NO_DUPLICATES`` so that
a batch never holds the same text twice (a duplicate would be a false negative).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skadapt.tasks.rows import TrainingDataError
from skadapt.train.gist import GUIDED_LOSSES, check_guided, make_guided_loss
from skadapt.train.negatives_config import GistConfig

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.train.datasets import TaskDataset

IN_BATCH_NEGATIVE_LOSSES = frozenset({"mnrl", "cached_mnrl", "gist", "cached_gist"})
SCORED_LOSSES = frozenset({"cosine", "cosent"})


def check_loss(dataset: TaskDataset) -> None:
    """Check that a dataset's loss fits its columns.

    Raises:
        TrainingDataError: A scored loss on unscored pairs, or a ranking loss on scored pairs.
    """
    if dataset.kind == "anchor":
        return
    scored = "score" in dataset.columns
    if dataset.loss in SCORED_LOSSES and not scored:
        raise TrainingDataError(
            f"dataset {dataset.name!r}: loss {dataset.loss!r} needs scored pairs (kind sts); kind "
            f"{dataset.kind!r} gives {', '.join(dataset.columns)}: use loss mnrl or cached_mnrl"
        )
    if dataset.loss in IN_BATCH_NEGATIVE_LOSSES and scored:
        raise TrainingDataError(
            f"dataset {dataset.name!r}: loss {dataset.loss!r} needs (anchor, positive) pairs; kind "
            f"{dataset.kind!r} gives scored pairs: use loss cosine or cosent"
        )
    check_guided(dataset)


def make_loss(
    name: str,
    model: SentenceTransformer,
    mini_batch_size: int = 32,
    *,
    guide: SentenceTransformer | None = None,
    gist: GistConfig | None = None,
) -> Any:
    """Instantiate a loss by recipe name.

    Args:
        name: mnrl, cached_mnrl, cosine, cosent, gist or cached_gist.
        model: The model being trained.
        mini_batch_size: GradCache mini-batch size of ``cached_mnrl`` and ``cached_gist``.
        guide: The frozen guide of ``gist`` / ``cached_gist``.
        gist: Their options (default: :class:`GistConfig` defaults).
    """
    from sentence_transformers.sentence_transformer import losses

    if name in GUIDED_LOSSES:
        if guide is None:
            raise ValueError(f"loss {name!r} needs a guide model")
        return make_guided_loss(name, model, guide, gist or GistConfig(), mini_batch_size)

    if name == "mnrl":
        return losses.MultipleNegativesRankingLoss(model)
    if name == "cached_mnrl":
        return losses.CachedMultipleNegativesRankingLoss(model, mini_batch_size=mini_batch_size)
    if name == "cosine":
        return losses.CosineSimilarityLoss(model)
    if name == "cosent":
        return losses.CoSENTLoss(model)
    raise ValueError(f"unknown loss {name!r}")


def needs_no_duplicates(datasets: list[TaskDataset]) -> bool:
    """Whether any dataset trains with in-batch negatives."""
    return any(dataset.loss in IN_BATCH_NEGATIVE_LOSSES for dataset in datasets)
