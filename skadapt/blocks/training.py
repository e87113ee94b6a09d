"""The fine-tuning stage's pieces outside a run: its datasets as it builds them, their texts as the dev sets'
overlap check sees them, and WiSE-FT's choice on the dev sets."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.results.finetune import Interpolation
    from skadapt.tasks.config import DevSets
    from skadapt.tasks.heldout import TrainingTexts
    from skadapt.train.config import FinetuneConfig, FinetuneDataset
    from skadapt.train.datasets import TaskDataset


def training_datasets(config: FinetuneConfig | FinetuneDataset) -> list[TaskDataset]:
    """The training datasets of ``config`` (a finetune section, or one of its datasets), read from their
    sources and built as fine-tuning builds them (an nli entry gives triplets and ``<name>_pairs``);
    each one's loss is checked against its columns.

    Raises:
        TrainingDataError: Bad data, naming the dataset, row and field.
    """
    from skadapt.train.config import FinetuneConfig
    from skadapt.train.stage import build_datasets

    if not isinstance(config, FinetuneConfig):
        config = FinetuneConfig(datasets=[config])
    return build_datasets(config)


def training_texts(source: FinetuneConfig | list[TaskDataset]) -> TrainingTexts:
    """The distinct training texts (as digests of their folded words, per recipe dataset) that the dev
    sets are checked against (``build_dev_sets(..., training=...)``): of datasets already built
    (:func:`training_datasets`: what fine-tuning adds to its work), or of a finetune section, read and
    built first (what a later stage does when fine-tuning did not hand them over)."""
    from skadapt.train.stage import dataset_texts
    from skadapt.train.stage import training_texts as of_config

    return dataset_texts(source) if isinstance(source, list) else of_config(source)


def wise_ft(
    model: SentenceTransformer,
    start: SentenceTransformer,
    dev: DevSets,
    grid: list[float],
    *,
    batch_size: int = 32,
    seed: int = 42,
) -> Interpolation:
    """WiSE-FT as fine-tuning chooses it: every ``a`` of ``grid`` (and ``a = 1``) scored on the dev sets,
    a mixture kept only when it beats the fine-tuned ``model`` beyond the noise; ``model`` is left holding
    the kept weights (:mod:`skadapt.train.interpolation`)."""
    from skadapt.tasks.dev import build_dev_sets
    from skadapt.train.interpolation import choose_interpolation, snapshot

    sets = build_dev_sets(dev, batch_size, dict(model.prompts or {}))
    return choose_interpolation(model, snapshot(start), grid, sets, batch_size=batch_size, seed=seed)


def mix_weights(model: SentenceTransformer, start: SentenceTransformer, alpha: float) -> None:
    """Give ``model`` the weights ``(1 - alpha) * start + alpha * model`` (WiSE-FT's mixture)."""
    from skadapt.train.interpolation import mix, snapshot

    model.load_state_dict(mix(snapshot(start), snapshot(model), alpha))
