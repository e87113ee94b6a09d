"""The anchor: distillation towards the frozen starting model on corpus text, mixed into the task round.

Small fine-tuning sets pull a model towards their own texts; the anchor keeps it close to where it
started on ordinary text of the language. Corpus sentences (a seeded reservoir sample, evaluation texts
excluded) are encoded once by the starting model; during training their embeddings are the targets of
sentence-transformers' ``MSELoss``, scaled so that ``weight`` reads as "weight x squared Euclidean
distance" (``2 (1 - cos)`` for normalized embeddings) and compares with the task losses.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skadapt.console import encode_texts
from skadapt.errors import SkadaptError
from skadapt.prompts import role_prompt
from skadapt.sources import corpus_texts
from skadapt.textsample import sample_sentences
from skadapt.train.config import ANCHOR_DATASET
from skadapt.train.datasets import TaskDataset

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.train.config import AnchorConfig

log = logging.getLogger(__name__)

ANCHOR_LOSS = "anchor_mse"
TEXT, LABEL = "text", "label"


class AnchorError(SkadaptError, ValueError):
    """The anchor cannot be built (no usable sentence, a prompt the model lacks)."""


def anchor_prompt(model: SentenceTransformer, name: str | None) -> str:
    """The prompt the anchor texts are encoded with: the named model prompt, else document/passage, else none.

    Raises:
        AnchorError: ``name`` is not one of the model's prompts.
    """
    prompts = dict(model.prompts or {})
    if name is not None:
        if name not in prompts:
            raise AnchorError(
                f"finetune.anchor.prompt {name!r} is not a prompt of the model (its prompts: "
                f"{', '.join(sorted(prompts)) or 'none'})"
            )
        return prompts[name]
    return role_prompt(prompts, "document")


def build_anchor_dataset(
    config: AnchorConfig,
    model: SentenceTransformer,
    *,
    seed: int,
    language: str,
    exclude: set[str],
    batch_size: int = 64,
) -> TaskDataset:
    """Sample anchor sentences and encode them with the (starting) ``model`` as distillation targets.

    Args:
        config: The recipe's ``finetune.anchor``.
        model: The starting model; its embeddings become the targets.
        seed: Seed of the sentence sample.
        language: ISO 639-1 code for sentence splitting.
        exclude: Normalized evaluation texts that must not be sampled.
        batch_size: Encoding batch size.

    Raises:
        AnchorError: No sentence in the length window.
    """
    sample = sample_sentences(
        corpus_texts(config.corpus),
        config.samples,
        min_chars=config.min_chars,
        max_chars=config.max_chars,
        seed=seed,
        language=language,
        exclude=exclude,
    )
    if not sample.sentences:
        raise AnchorError(
            f"finetune.anchor: {config.corpus.source} has no sentence of {config.min_chars}-"
            f"{config.max_chars} characters (after dropping evaluation texts)"
        )
    if len(sample.sentences) < config.samples:
        log.warning(
            "finetune.anchor: %d sentences available (asked for %d)", len(sample.sentences), config.samples
        )
    prompt = anchor_prompt(model, config.prompt)
    targets = encode_texts(
        model,
        sample.sentences,
        "finetune: anchor targets",
        prompt=prompt,
        batch_size=batch_size,
        convert_to_numpy=True,
    )
    return TaskDataset(
        name=ANCHOR_DATASET,
        kind="anchor",
        loss=ANCHOR_LOSS,
        columns=[TEXT, LABEL],
        data={TEXT: sample.sentences, LABEL: [row.tolist() for row in targets]},
        prompts={TEXT: prompt},
        stats={
            "sentences": len(sample.sentences),
            "eligible": sample.eligible,
            "dropped_eval_overlap": sample.dropped,
            "documents": sample.documents,
            "weight": config.weight,
        },
    )


def make_anchor_loss(model: SentenceTransformer, weight: float) -> Any:
    """``MSELoss`` scaled to ``weight`` x the mean squared Euclidean distance to the targets."""
    from sentence_transformers.sentence_transformer.losses import MSELoss

    dimension = model.get_embedding_dimension() or 1

    class AnchorMSELoss(MSELoss):
        """MSELoss x (weight x embedding dimension): weight x squared distance per text."""

        def compute_loss_from_embeddings(self, embeddings: list[Any], teacher_embeddings: list[Any]) -> Any:
            return weight * dimension * super().compute_loss_from_embeddings(embeddings, teacher_embeddings)

    return AnchorMSELoss(model)
