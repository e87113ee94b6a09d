"""The plain arm: what a user writes by hand with sentence-transformers, trained on the same data.

The standing reference the stage's own choices must beat (``finetune.plain_arm``). From the same starting
model and on the same datasets (as built: the contamination drop applied, the prompts resolved), it is
the script of sentence-transformers' documentation and nothing more: ``SentenceTransformerTrainer``,
MNRL on every dataset of text pairs or triplets, CoSENT on scored pairs, the section's batch size,
learning rate, epochs (or ``max_steps``), warmup and training length, the no-duplicates batch sampler,
proportional multi-dataset sampling and the library's other defaults; no anchor, hard negatives, dev
selection, WiSE-FT or Matryoshka; the last weights. :func:`benchmark/plain_arm.py` trains the same script
over seeds, from the untrimmed base model and on the data files as written.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skadapt.console import training_console
from skadapt.modeldir import PLAIN_ARM_DIR, finalize_model_dir

if TYPE_CHECKING:
    from skadapt.train.config import FinetuneConfig
    from skadapt.train.datasets import TaskDataset

log = logging.getLogger(__name__)

__all__ = ["PLAIN_ARM_DIR", "train_plain_arm"]


def train_plain_arm(
    start: str,
    datasets: list[TaskDataset],
    config: FinetuneConfig,
    seed: int,
    out: Path,
    work_dir: Path,
    *,
    save: bool = True,
) -> dict[str, Any]:
    """Train the plain arm from ``start`` on ``datasets`` into ``out``; what it did (steps, seconds).

    Args:
        start: The starting model (the stage's input model).
        datasets: The built task datasets (the anchor's is left out).
        config: The finetune section (its hyperparameters).
        seed: The run's seed.
        out: The model directory to write.
        work_dir: Scratch for the trainer.
        save: Write the model (every rank of a launch trains; the main one saves).
    """
    from datasets import DatasetDict
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, losses
    from sentence_transformers.sentence_transformer.training_args import (
        BatchSamplers,
        MultiDatasetBatchSamplers,
        SentenceTransformerTrainingArguments,
    )

    started = time.perf_counter()
    model = SentenceTransformer(start)
    inference_length = model.max_seq_length
    model.max_seq_length = config.max_seq_length
    tasks = [d for d in datasets if d.kind != "anchor"]
    args = SentenceTransformerTrainingArguments(
        output_dir=str(work_dir),
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        warmup_steps=config.warmup_ratio,  # a float below 1 is a ratio of the steps (transformers 5)
        num_train_epochs=config.epochs,
        max_steps=config.max_steps or -1,
        seed=seed,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        multi_dataset_batch_sampler=MultiDatasetBatchSamplers.PROPORTIONAL,
        prompts={d.name: {c: p for c, p in d.prompts.items() if p} for d in tasks},
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
    )
    loss = {
        d.name: losses.CoSENTLoss(model) if d.kind == "sts" else losses.MultipleNegativesRankingLoss(model)
        for d in tasks
    }
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=DatasetDict({d.name: d.to_hf() for d in tasks}), loss=loss
    )
    with training_console(trainer, "finetune: plain arm"):
        trainer.train()
    model.max_seq_length = inference_length
    if save:
        model.save(str(out))
        finalize_model_dir(out)
    seconds = round(time.perf_counter() - started, 3)
    log.info("finetune: plain arm: %d steps in %.1fs, saved in %s", trainer.state.global_step, seconds, out)
    return {
        "dir": PLAIN_ARM_DIR,
        "steps": trainer.state.global_step,
        "losses": {name: type(value).__name__ for name, value in loss.items()},
        "seconds": seconds,
    }
