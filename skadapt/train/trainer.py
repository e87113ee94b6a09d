"""Training through ``SentenceTransformerTrainer``: arguments, checkpoint resume, prompts, the report.

Checkpoints go to ``<work_dir>/checkpoints`` every ``save_steps``, each closed by its completion marker
(:mod:`skadapt.train.checkpoints`); when that directory already holds a complete checkpoint (a killed
earlier attempt of the same stage), training resumes from the newest one and ends with the same number of
optimizer steps as an uninterrupted run; a newer checkpoint that is not complete is set aside. Under
torchrun only rank 0 writes a checkpoint's model files and its marker (see :func:`trainer_class`).
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import math
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skadapt.console import training_console
from skadapt.devices import training_levers
from skadapt.errors import SkadaptError
from skadapt.modeldir import finalize_model_dir
from skadapt.train.anchor import ANCHOR_LOSS, make_anchor_loss
from skadapt.train.checkpoints import mark_complete, resume_point
from skadapt.train.losses import check_loss, make_loss, needs_no_duplicates
from skadapt.train.matryoshka import wrap

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from transformers import TrainerCallback

    from skadapt.tasks.dev import DevSet
    from skadapt.train.config import FinetuneConfig
    from skadapt.train.datasets import TaskDataset

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
LOSS_CURVE_POINTS = 50


class FinetuneSetupError(SkadaptError):
    """Training settings that cannot work together (e.g. save_steps not a multiple of dev.steps)."""


@dataclass
class TrainingResult:
    """What a finished training run reports.

    Attributes:
        model: The trained model (best checkpoint when a dev set selects it).
        global_step: Optimizer steps done in total (across resumed attempts).
        planned_steps: Steps the run was planned for.
        resumed_from: The checkpoint directory name training resumed from, if any.
        loss_curve: ``[{step, loss, epoch}]`` logged training losses.
        dev_history: ``[{step, score, seconds}]`` dev scores during training and how long each took;
            with several dev sets, ``sets`` holds each one's score (set name -> score).
        best_checkpoint: Name of the checkpoint selected by the dev metric, if any.
        metrics: Trainer metrics of this attempt (runtime, samples/s, ...).
        seconds: Wall time of this attempt's ``train()`` call.
        world_size: Processes the trainer trained with (DDP ranks; 1 for a single process).
    """

    model: SentenceTransformer
    global_step: int
    planned_steps: int
    resumed_from: str | None
    loss_curve: list[dict[str, float]] = field(default_factory=list)
    dev_history: list[dict[str, Any]] = field(default_factory=list)
    best_checkpoint: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    world_size: int = 1


def estimate_steps(datasets: list[TaskDataset], config: FinetuneConfig, world_size: int = 1) -> int:
    """Optimizer steps the run is planned for (``max_steps`` or epochs over all batches)."""
    if config.max_steps:
        return config.max_steps
    per_device = config.batch_size
    batches = sum(math.ceil(len(d) / (per_device * world_size)) for d in datasets)
    if config.sampling == "round_robin":
        batches = len(datasets) * min(math.ceil(len(d) / (per_device * world_size)) for d in datasets)
    return max(1, math.ceil(config.epochs * batches / config.gradient_accumulation_steps))


def prompt_name(prompt: str) -> str:
    """A model prompt name for a prompt text: ``"query: "`` -> ``query``."""
    name = re.sub(r"[^0-9a-z]+", "_", prompt.strip().casefold()).strip("_")
    return name or "prompt"


def saved_prompts(existing: dict[str, str], datasets: list[TaskDataset]) -> dict[str, str]:
    """The model's prompts after training: its own, plus every non-empty prompt used in training."""
    prompts = dict(existing)
    known = {text: name for name, text in prompts.items()}
    for dataset in datasets:
        for text in dataset.prompts.values():
            if text and text not in known:
                name = prompt_name(text)
                while name in prompts:
                    name += "_"
                prompts[name] = known[text] = text
    return prompts


FULL_RATIO = 1 - 1e-9
"""Warmup over the whole run: transformers 5 reads a float < 1 as a ratio of the total steps (rounded up)
and a value >= 1 as a step count, so 1.0 would mean one step; ceil(n * (1 - 1e-9)) = n below 1e9 steps."""


def warmup_as_ratio(ratio: float) -> float:
    """The recipe's warmup ratio in [0, 1] as transformers' ``warmup_steps`` ratio (see FULL_RATIO)."""
    return FULL_RATIO if ratio >= 1 else ratio


def logging_steps(planned: int) -> int:
    """Steps between two logged losses: at most :data:`LOSS_CURVE_POINTS` points per run. Logging reads the
    loss (and the gradient norm) back from the device, a wait for the GPU: a run of 99 steps used to log
    every one of them."""
    return max(1, math.ceil(planned / LOSS_CURVE_POINTS))


def no_duplicates_sampler() -> Any:
    """The batch sampler that keeps a text out of a batch holding it already (in-batch negatives): the one
    comparing precomputed hashes of the rows where sentence-transformers has it (the same batches, without
    reading each candidate row back from the dataset on every step), else the plain one. The hashes are
    computed in this process (``num_proc`` 0): with a pool, ``datasets`` forks the training process and
    leaves ``os.environ`` replaced by a copy."""
    from sentence_transformers.base.sampler import NoDuplicatesBatchSampler
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    if "precompute_hashes" not in inspect.signature(NoDuplicatesBatchSampler).parameters:
        return BatchSamplers.NO_DUPLICATES
    return functools.partial(NoDuplicatesBatchSampler, precompute_hashes=True, precompute_num_proc=0)


def cpu_launch(world_size: int) -> bool:
    """Whether this is one rank of a multi-process launch (torchrun) on a machine without CUDA.

    transformers sets up DDP on CPU (gloo) only when told ``use_cpu``; without it every rank of a CPU launch
    trains alone on all the data, believing it is process zero.
    """
    import torch

    return world_size > 1 and not torch.cuda.is_available()


def training_arguments(
    config: FinetuneConfig,
    seed: int,
    work_dir: Path,
    datasets: list[TaskDataset],
    dev: DevSet | None,
    planned_steps: int,
    world_size: int = 1,
) -> Any:
    """``SentenceTransformerTrainingArguments`` for the recipe's finetune section (``world_size``: the
    launch's processes).

    Raises:
        FinetuneSetupError: ``save_steps`` is not a multiple of ``dev.steps`` (best-checkpoint selection
            needs a checkpoint at every evaluation).
    """
    from sentence_transformers.sentence_transformer.training_args import (
        BatchSamplers,
        MultiDatasetBatchSamplers,
        SentenceTransformerTrainingArguments,
    )

    dev_args: dict[str, Any] = {"eval_strategy": "no"}
    if dev is not None and config.dev is not None and config.dev.select_best:
        if config.save_steps % config.dev.steps:
            raise FinetuneSetupError(
                f"finetune.save_steps ({config.save_steps}) must be a multiple of finetune.dev.steps "
                f"({config.dev.steps}) so that every evaluated step has a checkpoint to select"
            )
        dev_args = {
            "eval_strategy": "steps",
            "eval_steps": config.dev.steps,
            "load_best_model_at_end": config.dev.select_best,
            "metric_for_best_model": f"eval_{dev.metric}",
            "greater_is_better": True,
        }
    return SentenceTransformerTrainingArguments(
        output_dir=str(work_dir / CHECKPOINTS),
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        learning_rate=config.learning_rate,
        warmup_steps=warmup_as_ratio(config.warmup_ratio),
        lr_scheduler_type="linear",
        weight_decay=config.weight_decay,
        num_train_epochs=config.epochs,
        max_steps=config.max_steps or -1,
        bf16=config.bf16,
        seed=seed,
        data_seed=seed,
        batch_sampler=no_duplicates_sampler()
        if needs_no_duplicates(datasets)
        else BatchSamplers.BATCH_SAMPLER,
        multi_dataset_batch_sampler=MultiDatasetBatchSamplers(config.sampling),
        prompts={d.name: {c: p for c, p in d.prompts.items() if p} for d in datasets},
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=config.save_total_limit,
        logging_steps=logging_steps(planned_steps),
        logging_first_step=True,
        logging_nan_inf_filter=False,  # its NaN check waits for the GPU every step; the weights never see it
        report_to=[] if config.report_to == "none" else [config.report_to],
        use_cpu=cpu_launch(world_size),
        **training_levers(cpu_launch(world_size)),
        **dev_args,
    )


@functools.cache
def trainer_class() -> type:
    """``SentenceTransformerTrainer`` whose checkpoint model files are written by the saving rank only, and
    whose checkpoints end with their completion marker (:func:`~skadapt.train.checkpoints.mark_complete`).

    transformers 5 calls ``Trainer._save`` on every rank and checks ``args.should_save`` inside it, while
    sentence-transformers' ``_save`` override assumes it only runs on process zero; unguarded, every DDP
    rank writes the same checkpoint files at once. Weights are identical across DDP ranks, so skipping the
    other ranks loses nothing (tensor-parallel gathers, which need every rank, are not used here). The
    marker is written once every rank has written its files (each its RNG state); the trainer has already
    removed the checkpoints beyond ``save_total_limit`` by then, never the newest complete one unless the
    limit is 1.
    """
    from sentence_transformers import SentenceTransformerTrainer

    class RankZeroSaveTrainer(SentenceTransformerTrainer):
        def _save(self, output_dir: str | None = None, state_dict: Any = None) -> None:
            if self.args.should_save:
                super()._save(output_dir, state_dict)

        def _save_checkpoint(self, model: Any, trial: Any) -> None:
            super()._save_checkpoint(model, trial)
            self.accelerator.wait_for_everyone()
            if self.args.should_save:
                run_dir = Path(self._get_output_dir(trial=trial))
                mark_complete(run_dir / f"checkpoint-{self.state.global_step}")

    return RankZeroSaveTrainer


def _loss(
    dataset: TaskDataset,
    model: SentenceTransformer,
    config: FinetuneConfig,
    dims: list[int],
    guide: SentenceTransformer | None,
) -> Any:
    """The loss of one dataset; with Matryoshka ``dims`` a task loss trains at each of them (the anchor
    stays at the full dimension: see :mod:`skadapt.train.matryoshka`)."""
    if dataset.loss == ANCHOR_LOSS and config.anchor is not None:
        return make_anchor_loss(model, config.anchor.weight)
    loss = make_loss(dataset.loss, model, config.mini_batch_size, guide=guide, gist=config.gist)
    return wrap(loss, model, dims) if dims else loss


def train(
    model: SentenceTransformer,
    datasets: list[TaskDataset],
    config: FinetuneConfig,
    seed: int,
    work_dir: Path,
    dev: DevSet | None = None,
    callbacks: list[TrainerCallback] | None = None,
    *,
    world_size: int = 1,
    guide: SentenceTransformer | None = None,
    matryoshka_dims: list[int] | None = None,
) -> TrainingResult:
    """Fine-tune ``model`` on the task datasets with their losses; resume from a checkpoint if one exists.

    Args:
        model: The model to train (modified in place).
        datasets: Built task datasets, one loss each.
        config: The recipe's finetune section.
        seed: The recipe seed (weights init of new heads, shuffling, sampling).
        work_dir: Persistent scratch; checkpoints live in ``work_dir/checkpoints``.
        dev: Optional dev evaluator for best-checkpoint selection.
        callbacks: Extra ``transformers`` trainer callbacks.
        world_size: Processes of the launch (torchrun/accelerate; see :func:`cpu_launch`).
        guide: The frozen guide model of the ``gist`` / ``cached_gist`` losses.
        matryoshka_dims: The Matryoshka dimensions every task loss trains at, as
            :func:`skadapt.train.matryoshka.resolve_dims` gives them (none: the full dimension only).
    """
    from datasets import DatasetDict

    for dataset in datasets:
        check_loss(dataset)
    planned = estimate_steps(datasets, config)
    args = training_arguments(config, seed, work_dir, datasets, dev, planned, world_size)
    losses = {d.name: _loss(d, model, config, matryoshka_dims or [], guide) for d in datasets}
    trainer = trainer_class()(
        model=model,
        args=args,
        train_dataset=DatasetDict({d.name: d.to_hf() for d in datasets}),
        loss=losses,
        evaluator=dev.evaluator if dev is not None else None,
        callbacks=callbacks,
    )
    checkpoint = resume_point(work_dir / CHECKPOINTS, work_dir if args.should_save else None)
    if checkpoint is not None:
        log.info("finetune: resuming from %s", checkpoint)
    start = time.perf_counter()
    with training_console(trainer, "finetune"):
        output = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    seconds = time.perf_counter() - start
    state = trainer.state
    history = state.log_history
    loss_curve = [
        {"step": e["step"], "loss": round(float(e["loss"]), 6), "epoch": round(float(e.get("epoch", 0)), 4)}
        for e in history
        if "loss" in e
    ]
    dev_history: list[dict[str, Any]] = []
    if dev is not None:
        key = f"eval_{dev.metric}"
        parts = {part.evaluator.name: f"eval_{part.metric}" for part in dev.parts}
        for e in history:
            if key not in e:
                continue
            seconds = round(float(e.get("eval_runtime", 0)), 1)
            dev_history.append({"step": e["step"], "score": float(e[key]), "seconds": seconds})
            if parts:
                dev_history[-1]["sets"] = {name: float(e[k]) for name, k in parts.items() if k in e}
    selected = args.load_best_model_at_end and state.best_model_checkpoint
    best = Path(state.best_model_checkpoint).name if selected else None
    return TrainingResult(
        model=trainer.model,
        global_step=state.global_step,
        planned_steps=state.max_steps,
        resumed_from=checkpoint.name if checkpoint else None,
        loss_curve=loss_curve,
        dev_history=dev_history,
        best_checkpoint=best,
        metrics={k: float(v) for k, v in output.metrics.items() if isinstance(v, int | float)},
        seconds=seconds,
        world_size=args.world_size,
    )


def save_model(model: SentenceTransformer, datasets: list[TaskDataset], out_dir: Path) -> dict[str, str]:
    """Save the trained model with the training prompts as its prompts; return those prompts."""
    model.prompts = saved_prompts(dict(model.prompts or {}), datasets)
    model.save(str(out_dir))
    finalize_model_dir(out_dir)
    return json.loads((out_dir / "config_sentence_transformers.json").read_text(encoding="utf-8"))["prompts"]


def copy_logs(work_dir: Path, out_dir: Path) -> None:
    """Keep the tensorboard logs of the run in the model directory (``logs/``)."""
    logs = work_dir / CHECKPOINTS / "runs"  # transformers' default tensorboard directory
    if logs.is_dir() and any(logs.iterdir()):
        shutil.copytree(logs, out_dir / "logs", dirs_exist_ok=True)
