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
from skadapt.sources import column_text, column_value, corpus_texts, is_blank, read_rows
from skadapt.textsample import normalize_text, sample_sentences
from skadapt.train.config import ANCHOR_DATASET, PARALLEL_ANCHOR_DATASET
from skadapt.train.datasets import TaskDataset

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.sources.config import ParallelSource
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


def build_anchor_datasets(
    config: AnchorConfig,
    model: SentenceTransformer,
    *,
    seed: int,
    language: str,
    exclude: set[str],
    batch_size: int = 64,
) -> list[TaskDataset]:
    """The anchor's distillation datasets: the corpus sample's and the parallel text's (each when configured).

    Args: as :func:`build_anchor_dataset`.

    Raises:
        AnchorError: No usable corpus sentence or parallel pair.
    """
    built = []
    if config.corpus is not None:
        built.append(
            build_anchor_dataset(
                config, model, seed=seed, language=language, exclude=exclude, batch_size=batch_size
            )
        )
    if config.parallel:
        built.append(build_parallel_anchor(config, model, exclude=exclude, batch_size=batch_size))
    return built


def build_parallel_anchor(
    config: AnchorConfig, model: SentenceTransformer, *, exclude: set[str], batch_size: int = 64
) -> TaskDataset:
    """Every side of each parallel pair with the starting model's embedding of the pair's last side as its
    target (query prompt: e5's reading of symmetric tasks such as bitext mining).

    Args:
        config: The recipe's ``finetune.anchor`` (its ``parallel`` sources).
        model: The starting model; its embeddings become the targets.
        exclude: Normalized evaluation texts: a pair holding one is left out.
        batch_size: Encoding batch size.

    Raises:
        AnchorError: A source cannot be read, lacks a column, or leaves no pair.
    """
    texts: list[str] = []
    pivots: list[str] = []
    kept = dropped = blank = 0
    for source in config.parallel or []:
        for sides in _parallel_rows(source):
            if sides is None:
                blank += 1
            elif any(normalize_text(side) in exclude for side in sides):
                dropped += 1
            else:
                kept += 1
                texts.extend(sides)
                pivots.extend([sides[-1]] * len(sides))
    if not texts:
        raise AnchorError(
            "finetune.anchor.parallel: no pair left (after dropping blank ones and those holding an "
            "evaluation text)"
        )
    prompt = role_prompt(dict(model.prompts or {}), "query")
    unique = list(dict.fromkeys(pivots))
    encoded = encode_texts(
        model,
        unique,
        "finetune: parallel anchor targets",
        prompt=prompt,
        batch_size=batch_size,
        convert_to_numpy=True,
    )
    target = {text: row.tolist() for text, row in zip(unique, encoded, strict=True)}
    return TaskDataset(
        name=PARALLEL_ANCHOR_DATASET,
        kind="anchor",
        loss=ANCHOR_LOSS,
        columns=[TEXT, LABEL],
        data={TEXT: texts, LABEL: [target[p] for p in pivots]},
        prompts={TEXT: prompt},
        stats={
            "pairs": kept,
            "texts": len(texts),
            "dropped_eval_overlap": dropped,
            "blank": blank,
            "weight": config.weight,
        },
    )


def _parallel_rows(source: ParallelSource) -> list[list[str] | None]:
    """Each row's sides (None for a row with a blank side), at most ``max_documents`` rows.

    Raises:
        AnchorError: The source cannot be read or a row lacks a column.
    """
    out: list[list[str] | None] = []
    try:
        for where, row in read_rows(source.source).rows:
            if source.max_documents is not None and len(out) >= source.max_documents:
                break
            if any(is_blank(column_value(row, c, where, error=AnchorError)) for c in source.columns):
                out.append(None)
            else:
                out.append([column_text(row, c, where, error=AnchorError) for c in source.columns])
    except AnchorError:
        raise
    except SkadaptError as error:
        raise AnchorError(f"finetune.anchor.parallel: {error}") from error
    return out


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
    assert config.corpus is not None
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
