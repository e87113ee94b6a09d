"""``skadapt finetune MODEL --config RECIPE --out DIR``: the finetune stage as a standalone command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, fail, handle_errors, out, usage_error
from skadapt.train.config import FinetuneConfig


@handle_errors
@config_command
def command(
    model: Annotated[str, typer.Argument(help="Model to start from: sentence-transformers dir or Hub id.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output model directory.")],
    config: Annotated[FinetuneConfig, Options("finetune")],
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="A recipe with a finetune section (its language, seed and evaluation tasks are used too), "
            "or the finetune section alone as YAML; the datasets are given here.",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Set any field, e.g. --set finetune.epochs=1 (YAML value, repeatable)."),
    ] = None,
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 or 639-1 code of the evaluation tasks' language (default: the recipe's, with "
            "--config)."
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Training seed (default: the recipe's, else 42).")] = None,
    eval_tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--eval-tasks",
            help="Evaluation task specs the contamination check and the anchor sample keep apart "
            "(repeatable; default: the recipe's evaluate.tasks).",
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --out.")] = False,
) -> None:
    """Fine-tune MODEL on the finetune section's datasets; resumes from checkpoints after an interruption.

    Multi-GPU: run the same command under ``torchrun --nproc_per_node N $(which skadapt) finetune ...`` or
    ``accelerate launch``; batch_size is per device.
    """
    from skadapt.api import finetune
    from skadapt.recipe import load_recipe, load_recipe_data
    from skadapt.tasks.contamination import UnreachableTestDataError
    from skadapt.train.stage import REPORT

    recipe = None
    if config_file is not None and {"name", "language"} <= set(load_recipe_data(config_file)):
        recipe = load_recipe(config_file, set_ or [])  # its language, seed and evaluation tasks
    elif language is None:
        usage_error(
            "--language is required without a recipe (--config RECIPE): the evaluation tasks' language"
        )
    try:
        summary = finetune(
            model,
            config,
            language=language,
            out=out_dir,
            seed=seed,
            eval_tasks=eval_tasks or None,
            recipe=recipe,
            overwrite=overwrite,
        )
    except UnreachableTestDataError as error:
        if recipe is not None and eval_tasks is None:  # the tasks came from the recipe: its fields apply
            raise
        fail(error.for_command("--eval-tasks", allow="--set contamination.allow=true"))
    if summary is None:  # another rank of a distributed launch: rank 0 writes and reports
        return
    steps, dev = summary.steps, summary.dev
    dev_text = f", dev {dev['metric']} {dev['before']:.4f} -> {dev['final']:.4f}" if dev else ""
    console.print(f"[green]fine-tuned[/] {model}: {steps['done']} steps{dev_text}")
    for name, line in summary.dropped_rows.items():
        out.print(f"finetune data {name}: {line}", markup=False)
    for name, line in summary.hard_negatives.items():
        out.print(f"finetune negatives {name}: {line}", markup=False)
    out.print(f"{out_dir} ({REPORT} inside)")
