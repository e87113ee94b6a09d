"""Matryoshka training (``finetune.matryoshka_dims``) and the dimensions a model records.

Every task loss (MNRL, cached MNRL, cosine, CoSENT) is wrapped in sentence-transformers'
``MatryoshkaLoss``: each batch is scored at every dimension on the first ``d`` components, renormalized,
and the losses are summed (weight 1 each). ``MatryoshkaLoss`` works on the embeddings the model returns,
so it fits every loss that compares embeddings; the GradCache loss is wrapped through its own hook.

The anchor (``finetune.anchor``) stays at the full dimension: its targets are the starting model's
embeddings, whose truncations are what Matryoshka training improves on (``MatryoshkaLoss`` would also
truncate the targets without renormalizing them). The anchor keeps the full embedding close to the
starting model; the task losses shape the shorter prefixes.

The trained model records its dimensions as ``matryoshka_dims`` in ``config_sentence_transformers.json``
(sentence-transformers ignores the key; ``SentenceTransformer(dir, truncate_dim=d)`` uses them), and the
stages that derive a model from it keep the record (:func:`skadapt.modeldir.keep_matryoshka_dims`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skadapt.errors import SkadaptError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


class MatryoshkaError(SkadaptError, ValueError):
    """Matryoshka dimensions that do not fit the model."""


def resolve_dims(dims: list[int], dimension: int | None) -> list[int]:
    """The dimensions to train: ``dims`` (descending) with the model's ``dimension`` first.

    Raises:
        MatryoshkaError: A dimension above the model's, no dimension below it, or a model that does not
            say its dimension.
    """
    if not dimension:
        raise MatryoshkaError(
            "finetune.matryoshka_dims: the model does not say its embedding dimension; drop matryoshka_dims"
        )
    larger = [d for d in dims if d > dimension]
    if larger:
        raise MatryoshkaError(
            f"finetune.matryoshka_dims {dims}: {', '.join(map(str, larger))} is larger than the model's "
            f"dimension {dimension}; use dimensions up to {dimension}, e.g. [{dimension}, "
            f"{dimension // 2}, {dimension // 4}]"
        )
    if dims[0] != dimension:
        log.info("finetune: matryoshka_dims %s: the model's dimension %d is added first", dims, dimension)
        dims = [dimension, *dims]
    if len(dims) == 1:
        raise MatryoshkaError(
            f"finetune.matryoshka_dims {dims} names only the model's own dimension: add smaller ones "
            f"(e.g. [{dimension}, {dimension // 2}, {dimension // 4}]) or drop matryoshka_dims"
        )
    return dims


def wrap(loss: Any, model: SentenceTransformer, dims: list[int]) -> Any:
    """``loss`` trained at every dimension of ``dims`` (``MatryoshkaLoss``, weight 1 each)."""
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    return MatryoshkaLoss(model, loss, list(dims))
